"""Live issue resolution (``--predictions=live``): an agent works in the instance's own sandbox, the harness
takes its patch and grades it by the normal path in a fresh container (docs/live-agents.md).

Per item:

1. a sandbox from the instance image at the base commit (:mod:`pytest_mobilebench.runtime.agent_sandbox`, through the
   ``mb_runtime`` fixture's runtime): no network, the unprivileged test user, no test patch;
2. the agent: the built-in shell agent (:func:`pytest_mobilebench.agents.loop.run_shell_agent`; its loop runs in
   this process, each command runs in the sandbox) or the user's program (``--mb-agent-command``, run in the
   sandbox under ``--mb-agent-wall-time``; with ``--mb-agent-base-url`` its only network peer is the harness's
   forwarder to that endpoint, :mod:`pytest_mobilebench.runtime.egress`);
3. the patch is taken (``git diff`` of the work tree against the base commit, by root with the harness's own git
   directory); the sandbox is removed;
4. the prediction is appended to ``reports/<run_id>/predictions.jsonl`` (SWE-bench rows: ``instance_id``,
   ``model_name_or_path``, ``model_patch``, ``trial`` for one of K trials; one line per instance, model and
   trial, replaced atomically under a file lock, so xdist workers never tear it) before it is graded:
   ``--predictions`` of that file re-grades the run;
5. grading: the suite's own path for a file prediction (fresh container, policy, test patch, plan, parser).

Outcomes. The agent's limit ends (``agent_step_limit``, ``agent_token_limit``, ``agent_cost_limit``,
``agent_timeout``) are the candidate's: the item is counted, and the patch taken at that moment is graded like
any other (SWE-bench grades whatever the diff is; SWE-agent's auto-submission does the same), so a limit end
with a resolving work tree is resolved; ``agent_end`` says how the agent ended. The endpoint failing after
the retries is infrastructure (``agent_unreachable`` ...): not counted, retried by the next run. A user's
program composes its own requests, so only the forwarder's failures to connect are infrastructure there.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.report.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.agent_sandbox import (
    MAX_PATCH_BYTES,
    AgentSandbox,
    AgentSandboxRuntime,
    TakenPatch,
)
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    from pytest_mobilebench.agents.limits import Limits
    from pytest_mobilebench.suites.base import EvalContext
    from pytest_mobilebench.suites.issue_resolution import IssueResolutionSuite
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

__all__ = ["PREDICTIONS_FILE", "agent_table", "append_prediction", "evaluate_live", "live_model"]

#: the run's written predictions, in ``reports/<run_id>/``
PREDICTIONS_FILE: Final = "predictions.jsonl"
#: the trajectory in the item's evidence folder
TRAJECTORY_FILE: Final = "trajectory.jsonl"
#: the model name of a user's program given no ``--mb-agent-model``
COMMAND_MODEL: Final = "agent-command"
#: what the run page shows of a transcript: steps, characters per text, characters of the diff
_SHOWN_STEPS: Final = 200
_SHOWN_CHARS: Final = 2_000
_SHOWN_DIFF: Final = 50_000
#: seconds a user's program may run without --mb-agent-wall-time
_DEFAULT_WALL_S: Final = 3600.0


def live_model(options: Mapping[str, Any]) -> str | None:
    """The model ``--predictions=live`` drives: ``--mb-agent-model`` (with ``--mb-agent-base-url``; every agent
    option and the prompt template checked once: :func:`pytest_mobilebench.agents.options.live_model`), or for
    a user's program (``--mb-agent-command``) the model when given, else ``agent-command``.

    Raises:
        ValueError: a built-in agent without the endpoint or the model, an unusable limit, price table or prompt
            template (the message names the option or the file).
    """
    from pytest_mobilebench.agents import options as agent_options

    if options.get("mb_agent_command"):
        if options.get("mb_agent_base_url"):
            return agent_options.live_model(options, prompt=True)
        return str(options.get("mb_agent_model") or COMMAND_MODEL)
    return agent_options.live_model(options, prompt=True)


def evaluate_live(suite: IssueResolutionSuite, instance: IssueInstance, ctx: EvalContext,
                  base: dict[str, Any], *, trial: int | None = None) -> dict[str, Any]:
    """One live item: agent in a sandbox, patch taken and written, then graded by the normal path. ``trial``:
    which of K trials this item is (its own sandbox, evidence folder, written row and grading container).

    Raises:
        InfraError: the sandbox could not be made, the endpoint failed after the retries (``AgentInfraError``),
            or the runtime hosts no agents (``platform_unavailable``).
    """
    from pytest_mobilebench.suites.issue_resolution import runtime_for, workspace_spec

    runtime = runtime_for(ctx, trusted=False)
    if not isinstance(runtime, AgentSandboxRuntime):
        raise InfraError(InfraKind.PLATFORM_UNAVAILABLE, f"--mb-runtime={runtime.name} hosts no agent sandboxes "
                         "(live issue resolution needs --mb-runtime=docker)")
    model = str(base.get("model_name_or_path") or live_model(ctx.options))
    ctx.progress(f"{instance.instance_id}: agent sandbox ({runtime.name})")
    if ctx.options.get("mb_agent_command"):
        from pytest_mobilebench.suites.issue_resolution.live_command import (
            run_command_agent,
        )

        agent, taken = run_command_agent(runtime, workspace_spec(instance, ctx), instance, ctx)
    else:
        agent, taken = _run_builtin(runtime, workspace_spec(instance, ctx), instance, ctx)
    atomic_write_json(ctx.evidence_dir / "agent.json", {**agent, "taken": _taken_json(taken)})
    row = {"instance_id": instance.instance_id, "model_name_or_path": model, "model_patch": taken.patch}
    append_prediction(_run_folder(ctx), row if trial is None else {**row, "trial": trial})
    result = _grade(suite, instance, ctx, base, model, taken)
    return _with_agent(result, agent, taken, ctx.evidence_dir)


def _run_builtin(runtime: AgentSandboxRuntime, spec: Any, instance: IssueInstance,
                 ctx: EvalContext) -> tuple[dict[str, Any], TakenPatch]:
    """The built-in agent in a sandbox without network; ``(agent record, taken patch)``."""
    from pytest_mobilebench.agents.loop import run_shell_agent

    endpoint, limits = agent_of(ctx)
    prompt = render_prompt(ctx.options, instance)
    sandbox = runtime.agent_sandbox(spec, log_dir=ctx.evidence_dir)
    try:
        outcome = run_shell_agent(endpoint, limits, prompt, SandboxShell(sandbox, limits.output_chars),
                                  ctx.evidence_dir / TRAJECTORY_FILE)
        taken = sandbox.take_patch(MAX_PATCH_BYTES)
    finally:
        sandbox.close()
    usage = dataclasses.asdict(outcome.usage)
    return {"mode": "builtin", "model": endpoint.model, "end": outcome.end.value, "usage": usage,
            "submission": (outcome.submission or "")[:_SHOWN_CHARS] or None, "limits": _limits_json(limits)}, taken


def agent_of(ctx: EvalContext) -> tuple[Any, Limits]:
    """The ``mb_agent`` fixture's ``(Endpoint, Limits)`` (a ``conftest.py`` may override it).

    Raises:
        InfraError("agent_not_configured"): the fixture gave none.
    """
    agent = ctx.fixture("mb_agent")
    if agent is None:
        raise InfraError(InfraKind.AGENT_NOT_CONFIGURED, "--predictions=live but the mb_agent fixture gave no "
                         "endpoint (--mb-agent-base-url)")
    return agent  # type: ignore[no-any-return]


def render_prompt(options: Mapping[str, Any], instance: IssueInstance) -> Any:
    """The prompt of ``--mb-agent-prompt`` (default: the package's template) for ``instance``."""
    from pytest_mobilebench.agents.prompt import load_template

    return load_template(options.get("mb_agent_prompt")).render({
        "problem_statement": instance.problem_statement, "repo": instance.repo, "base_commit": instance.base_commit,
        "framework": instance.framework, "workdir": AgentSandbox.workdir})


class SandboxShell:
    """The agent's :class:`~pytest_mobilebench.agents.shell.Shell` over an :class:`AgentSandbox` (output bounded
    to ``output_chars``, head and tail kept)."""

    def __init__(self, sandbox: AgentSandbox, output_chars: int) -> None:
        self.sandbox = sandbox
        self.output_chars = output_chars

    def run(self, command: str, timeout_s: float) -> Any:
        from pytest_mobilebench.agents.shell import ShellResult, bound_output

        run = self.sandbox.run(command, timeout_s)
        return ShellResult(exit_code=run.exit_code, output=bound_output(run.output, self.output_chars),
                           timed_out=run.timed_out, seconds=run.duration_s)


def _limits_json(limits: Limits) -> dict[str, Any]:
    out = dataclasses.asdict(limits)
    out.pop("price", None)
    out["priced"] = limits.price is not None
    return out


def _taken_json(taken: TakenPatch) -> dict[str, Any]:
    return {"base_commit": taken.base_commit, "bytes": taken.size_bytes, "too_large": taken.too_large,
            "error": taken.error}


def _run_folder(ctx: EvalContext) -> Path:
    """``reports/<run_id>/`` (the evidence folder is ``reports/<run_id>/<model>/<instance>``).

    Raises:
        InfraError("harness_error"): the evidence folder is not laid out that way.
    """
    folder = ctx.evidence_dir.parent.parent
    if folder.name != ctx.run_id:
        raise InfraError(InfraKind.HARNESS_ERROR, f"the evidence folder {ctx.evidence_dir} is not under the run's folder")
    return folder


def append_prediction(run_folder: Path, row: Mapping[str, Any]) -> Path:
    """Add ``row`` to ``run_folder/predictions.jsonl``, replacing the line of the same instance, model and
    trial (``trial`` absent for a single attempt); the file is rewritten atomically under a file lock (xdist
    workers append to the same file)."""
    from filelock import FileLock

    path = run_folder / PREDICTIONS_FILE
    key = (row["instance_id"], row["model_name_or_path"], row.get("trial"))
    with FileLock(str(path) + ".lock"):
        kept = []
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                old = json.loads(line) if line.strip() else None
                if old is not None and (old.get("instance_id"), old.get("model_name_or_path"), old.get("trial")) != key:
                    kept.append(line)
        kept.append(json.dumps(dict(row), ensure_ascii=False, sort_keys=True))
        atomic_write_text(path, "\n".join(kept) + "\n")
    return path


def _grade(suite: IssueResolutionSuite, instance: IssueInstance, ctx: EvalContext, base: dict[str, Any], model: str,
           taken: TakenPatch) -> dict[str, Any]:
    """The taken patch through the suite's file-prediction path; a patch too large is the policy's refusal."""
    from pytest_mobilebench.suites.issue_resolution import grading

    if taken.too_large:
        outcome = grading.RunOutcome(applied=True, built=False, tests={},
                                     policy_violation=f"patch_too_large: the taken patch has over {MAX_PATCH_BYTES} bytes")
        return suite._finish(instance, {**base, "policy_violations": [outcome.policy_violation]}, outcome, None, None)
    from pytest_mobilebench.predictions import Prediction

    prediction = Prediction.from_entry({"instance_id": instance.instance_id, "model_name_or_path": model,
                                        "model_patch": taken.patch})  # exactly a file's prediction
    result = suite._grade_candidate(instance, prediction, ctx, base)
    if taken.error:
        result["detail"] = "; ".join(x for x in (f"the patch could not be taken: {taken.error}", result.get("detail")) if x)
    return result


def _with_agent(result: dict[str, Any], agent: Mapping[str, Any], taken: TakenPatch, evidence: Path) -> dict[str, Any]:
    """The graded result with the agent's record, its per-item properties and a bounded transcript."""
    usage = agent.get("usage") or {}
    cost = usage.get("cost_usd")
    props = {
        "agent_end": agent.get("end"), "agent_steps": usage.get("steps"), "agent_calls": usage.get("calls"),
        "agent_tokens_in": usage.get("tokens_in"), "agent_tokens_out": usage.get("tokens_out"),
        "agent_model_s": round(float(usage.get("model_seconds") or 0.0), 3),
        "agent_cost_usd": "" if cost is None else round(float(cost), 6),
        "agent_patch_bytes": taken.size_bytes,
    }
    props = {k: ("" if v is None else v) for k, v in props.items()}
    shown = {**agent, "transcript": transcript(evidence / TRAJECTORY_FILE), "diff": taken.patch[:_SHOWN_DIFF],
             "diff_cut": len(taken.patch) > _SHOWN_DIFF}
    return {**result, "agent": shown, "properties": {**result.get("properties", {}), **props}}


def transcript(path: Path) -> list[dict[str, Any]]:
    """What the run page shows of a trajectory file: per line its step, role and short texts (bounded)."""
    if not path.is_file():
        return []
    from pytest_mobilebench.agents.trajectory import read_trajectory

    try:
        lines = read_trajectory(path)
    except ValueError as exc:
        return [{"step": 0, "role": "harness", "text": f"unreadable trajectory: {exc}"}]
    shown = []
    for line in lines[: _SHOWN_STEPS * 3]:
        text = _line_text(line)
        shown.append({"step": line.get("step"), "role": line.get("role"), "text": _cut(text),
                      **({"exit_code": line["exit_code"]} if "exit_code" in line else {})})
    if len(lines) > _SHOWN_STEPS * 3:
        shown.append({"step": None, "role": "harness", "text": f"... {len(lines) - _SHOWN_STEPS * 3} more lines in "
                      f"{TRAJECTORY_FILE}"})
    return shown


def _line_text(line: Mapping[str, Any]) -> str:
    role = line.get("role")
    if role == "tool" and "command" in line:
        return f"$ {line.get('command')}\n{line.get('output') or ''}"
    if role == "assistant":
        calls = "".join(f"\n-> {c.get('name')}({c.get('arguments')})" for c in line.get("tool_calls") or [])
        return f"{line.get('message') or ''}{calls}"
    if role == "harness":
        return json.dumps({k: v for k, v in line.items() if k not in ("step", "role", "t")}, default=str)
    return str(line.get("message") or line.get("note") or line.get("error") or "")


def _cut(text: str) -> str:
    if len(text) <= _SHOWN_CHARS:
        return text
    half = _SHOWN_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters ...]\n{text[-half:]}"


def agent_table(results: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The summary's ``agent`` table of the live items: how they ended, totals and means of the usage."""
    live = [r for r in results if isinstance(r.get("agent"), Mapping)]
    if not live:
        return None
    ends: dict[str, int] = {}
    totals = {"calls": 0, "steps": 0, "tokens_in": 0, "tokens_out": 0, "model_seconds": 0.0}
    cost, priced = 0.0, 0
    for r in live:
        end = str(r["agent"].get("end"))
        ends[end] = ends.get(end, 0) + 1
        usage = r["agent"].get("usage") or {}
        for key in totals:
            totals[key] += usage.get(key) or 0
        if usage.get("cost_usd") is not None:
            cost, priced = cost + float(usage["cost_usd"]), priced + 1
    n = len(live)
    return {"items": n, "ends": dict(sorted(ends.items())), **{f"total_{k}": round(v, 3) for k, v in totals.items()},
            **{f"mean_{k}": round(v / n, 3) for k, v in totals.items()},
            "total_cost_usd": round(cost, 6) if priced else None, "priced_items": priced}


def command_env(sandbox: AgentSandbox, model: str, files: Mapping[str, str]) -> str:
    """``export`` lines for a user's program: the work tree, the prompt files, and with a model route the
    OpenAI-style variables pointing at the relay (the key is the forwarder's to add: a dummy one here)."""
    env = {"MOBILEBENCH_WORKDIR": sandbox.workdir, "MOBILEBENCH_MODEL": model, **files}
    if sandbox.model_url:
        env |= {"OPENAI_BASE_URL": sandbox.model_url, "OPENAI_API_BASE": sandbox.model_url,
                "OPENAI_API_KEY": "sk-mobilebench-forwarder", "MOBILEBENCH_AGENT_BASE_URL": sandbox.model_url}
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in sorted(env.items()))


def api_key() -> str:
    """The endpoint's key (``MOBILEBENCH_AGENT_API_KEY``), given to the forwarder only."""
    return os.environ.get("MOBILEBENCH_AGENT_API_KEY", "")
