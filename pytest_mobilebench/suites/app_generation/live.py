"""Live app generation (``--predictions=live``): the agent builds the app in a sandbox of the pinned scaffold;
the project it leaves is taken, written as the run's prediction and graded by the normal path (docs/live-agents.md).

Per item:

1. a sandbox of the scaffold's image (:meth:`.container.ContainedBuilder.spec`, opened through the ``mb_runtime``
   fixture's :class:`~pytest_mobilebench.runtime.sandbox.SandboxRuntime`): ``/testbed`` holds the scaffold with
   its dependencies installed (``node_modules`` root's, read-only) and the starter ``src/`` (:data:`STARTER_DIR`:
   the entry point ``index.html`` loads, a router, a placeholder ``App``, Tailwind's CSS; the agent's to edit),
   no network but loopback, commands as the unprivileged user 10001 under the build limits (:data:`.container.LIMITS`);
2. the built-in shell agent (:func:`pytest_mobilebench.agents.loop.run_shell_agent`): its loop runs in this
   process, each command in the sandbox (``timeout -k 5``; processes it leaves are stopped after it); the prompt
   is ``--mb-agent-prompt`` or :data:`DEFAULT_PROMPT`, rendered with the manifest's spec (:data:`FIELDS`);
3. the candidate is taken through the one-way channel (:meth:`~pytest_mobilebench.runtime.sandbox.Sandbox.read_files`
   of :data:`PROJECT_GLOBS`: names checked, links refused, sizes bounded), never from what the agent prints, and
   the sandbox is removed;
4. the files are written to ``<evidence>/project`` and the prediction (``project_path`` relative to the run's
   folder, the agent's tokens / calls / model seconds as the efficiency record) appended to
   ``reports/<run_id>/predictions.jsonl``, so ``--predictions`` of that file re-grades the run offline (a later
   run served from the result cache writes the same row with the project's absolute path);
5. grading: the suite's own path for that prediction (build in a FRESH sandbox from a clean scaffold, navigation
   in Chromium, C1-C4), the agent's record and usage added to the result.

Outcomes as in issue resolution: a limit end is the candidate's (counted, the project taken at that moment
graded); the endpoint failing after its retries, or the sandbox failing, is infrastructure (``infra_error``).
A user's program (``--mb-agent-command``) is not offered here: the suite then has no live mode.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.files import atomic_write_json
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.sandbox import Sandbox, SandboxRuntime
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.suites.base import LiveCandidate

if TYPE_CHECKING:
    from pytest_mobilebench.agents.shell import ShellResult
    from pytest_mobilebench.suites.app_generation.manifest import AppManifest
    from pytest_mobilebench.records import EvalContext, LoadedRecord

__all__ = [
    "DEFAULT_PROMPT",
    "FIELDS",
    "PROJECT_GLOBS",
    "STARTER_DIR",
    "SandboxAgentShell",
    "produce_live",
    "live_material",
    "live_model",
    "prompt_fields",
    "starter_files",
]

#: the built-in template of this suite (``--mb-agent-prompt`` replaces it)
DEFAULT_PROMPT: Final = Path(__file__).resolve().parents[2] / "agents" / "prompts" / "app_generation.md"
#: the template's fields: the manifest's spec, the work tree and the scaffold's pinned packages
FIELDS: Final = frozenset({"app", "title", "screens", "tabs", "parent_child", "workdir", "scaffold"})
#: what is taken of the agent's project: exactly the build's inputs (:func:`.container.build_inputs`)
PROJECT_GLOBS: Final = ("src/**", "public/**", "index.html")
#: the project an agent's sandbox starts from, over the scaffold (its ``src/``: written by the harness, the agent's)
STARTER_DIR: Final = Path(__file__).resolve().parent / "starter"
#: the taken project's folder in the item's evidence folder; the trajectory's file there
PROJECT_DIR: Final = "project"
TRAJECTORY_FILE: Final = "trajectory.jsonl"
#: seconds past a command's own limit before the harness kills the whole sandbox; ``timeout``'s exit statuses
_BACKSTOP_S: Final = 20.0
_TIMEOUT_CODES: Final = (124, 137)
#: characters of the taken files the run page shows
_SHOWN: Final = 50_000


def live_model(options: Mapping[str, Any]) -> str:
    """The model ``--predictions=live`` drives here: ``--mb-agent-model`` once the endpoint, the limits, the
    price table and this suite's prompt template are checked.

    Raises:
        ValueError: ``--mb-agent-command`` (no user's program here), a missing endpoint or model, an unusable
            limit, price table or template (the message names the option or the file).
    """
    from pytest_mobilebench.agents import options as agent_options
    from pytest_mobilebench.agents.prompt import load_template

    if options.get("mb_agent_command"):
        raise ValueError("--mb-agent-command: app generation runs only the built-in agent live")
    model = agent_options.live_model(options)
    load_template(options.get("mb_agent_prompt"), default=DEFAULT_PROMPT, fields=FIELDS)
    return model


def live_material(options: Mapping[str, Any]) -> dict[str, str]:
    """Result-cache material of a live item: the digests of the template in effect, the price table and the
    starter project."""
    from pytest_mobilebench.agents.options import agent_material

    out = agent_material(options)
    if not options.get("mb_agent_prompt"):
        out["mb_agent_prompt"] = hashlib.sha256(DEFAULT_PROMPT.read_bytes()).hexdigest()
    starter = hashlib.sha256()
    for name, data in sorted(starter_files().items()):
        starter.update(name.encode() + b"\0" + data + b"\0")
    return {**out, "starter": starter.hexdigest()}


def starter_files() -> dict[str, bytes]:
    """The starter project (:data:`STARTER_DIR`) as ``{relative name: bytes}``: ``src/main.tsx``, ``src/App.tsx``,
    ``src/index.css``."""
    return {
        p.relative_to(STARTER_DIR).as_posix(): p.read_bytes() for p in sorted(STARTER_DIR.rglob("*")) if p.is_file()
    }


def prompt_fields(manifest: AppManifest, workdir: str, scaffold: Mapping[str, str]) -> dict[str, str]:
    """The template's values for one app: screens, tab order and parent-child statements as text."""
    screens = "\n".join(
        f"- {sid}: `{s.route}`"
        + (" (a bottom-tab root)" if s.tab_root else "")
        + (" (an overlay drawn over the page at that path)" if s.overlay else "")
        for sid, s in manifest.screens.items()
    )
    rel = manifest.relationships
    children = (
        "\n".join(
            f"- {pc.child} is a sub-page of {pc.parent}" + (f" ({pc.trigger})" if pc.trigger else "")
            for pc in rel.parent_child
        )
        or "- (none)"
    )
    return {
        "app": manifest.app,
        "title": manifest.title or manifest.app,
        "screens": screens,
        "tabs": ", ".join(rel.tabs) or "(no tab bar)",
        "parent_child": children,
        "workdir": workdir,
        "scaffold": ", ".join(f"{name} {version}" for name, version in sorted(scaffold.items())),
    }


def _scaffold_packages() -> dict[str, str]:
    from pytest_mobilebench.suites.app_generation.build import SCAFFOLD_DIR

    pkg = json.loads((SCAFFOLD_DIR / "package.json").read_text(encoding="utf-8"))
    return {**pkg.get("dependencies", {}), **pkg.get("devDependencies", {})}


class SandboxAgentShell:
    """The agent's :class:`~pytest_mobilebench.agents.shell.Shell` over a build :class:`Sandbox`: each command in
    ``timeout -k 5`` (the sandbox lives on), leftovers stopped after it, output bounded to ``output_chars``;
    the sandbox's memory, disk or processes running out is the command's outcome, told to the agent."""

    def __init__(self, sandbox: Sandbox, output_chars: int) -> None:
        self.sandbox = sandbox
        self.output_chars = output_chars

    def run(self, command: str, timeout_s: float) -> ShellResult:
        from pytest_mobilebench.agents.shell import ShellResult, bound_output

        limit = max(1, int(timeout_s + 0.999))
        wrapped = f"timeout -k 5 {limit} /bin/bash -c {shlex.quote(command)}"
        try:
            run = self.sandbox.run(wrapped, timeout_s=limit + _BACKSTOP_S)
            self.sandbox.stop_leftovers()
        except InfraError as exc:
            notes = {
                InfraKind.OOM_KILLED.value: "memory",
                InfraKind.DISK_FULL.value: "disk",
                InfraKind.PIDS_LIMIT.value: "process",
            }
            if exc.kind not in notes:
                raise
            note = f"{notes[exc.kind]} limit was reached"
            return ShellResult(
                None, bound_output(f"{exc.log}\n[harness: the sandbox's {note}]", self.output_chars), False, 0.0
            )
        return ShellResult(
            exit_code=None if run.timed_out else run.exit_code,
            output=bound_output(run.output, self.output_chars),
            timed_out=run.timed_out or run.exit_code in _TIMEOUT_CODES,
            seconds=run.duration_s,
        )


def produce_live(record: LoadedRecord, model: str, ctx: EvalContext, *, trial: int | None = None) -> LiveCandidate:
    """One live item's candidate (see the module docstring): the agent builds the project in a scaffold sandbox,
    its files are staged in the evidence folder and its row written to the run's predictions file; the item then
    evaluates that row as a file prediction and attaches the agent (mode, model, end, usage, limits, transcript,
    taken files) and the ``agent_*`` properties. ``trial``: which of K trials it is (``--mb-trials``: its row
    carries it).

    Raises:
        InfraError: no sandbox runtime, the images or the sandbox failed, the endpoint failed after its retries,
            no agent configured.
    """
    from pytest_mobilebench.predictions import Prediction
    from pytest_mobilebench.suites.app_generation.serve import stage_files
    from pytest_mobilebench.agents.records import record_prediction, run_folder

    manifest: AppManifest = record.record
    folder = run_folder(ctx)
    agent, files, rejected = _run_agent(manifest, ctx)
    project = ctx.evidence_dir / PROJECT_DIR
    if project.exists():
        import shutil

        shutil.rmtree(project)
    stage_files(files, project)
    usage = agent["usage"]
    row = {
        "instance_id": manifest.app,
        "model_name_or_path": model,
        "project_path": project.relative_to(folder).as_posix(),
        "input_tokens": usage["tokens_in"],
        "output_tokens": usage["tokens_out"],
        "llm_calls": usage["calls"],
        "llm_seconds": round(float(usage["model_seconds"]), 3),
        **({} if trial is None else {"trial": trial}),
    }
    agent["taken"] = {"files": len(files), "bytes": sum(len(d) for d in files.values()), "refused": list(rejected)}
    atomic_write_json(ctx.evidence_dir / "agent.json", agent)
    record_prediction(ctx, row, carried={**row, "project_path": str(project.resolve())})  # a later run's: absolute
    evidence = ctx.evidence_dir

    def attach(graded: dict[str, Any]) -> dict[str, Any]:
        out = with_agent(graded, agent, files, evidence)
        atomic_write_json(evidence / "app_generation.json", out)
        return out

    return LiveCandidate(Prediction.from_entry(row, source_dir=folder), attach)


def _run_agent(manifest: AppManifest, ctx: EvalContext) -> tuple[dict[str, Any], dict[str, bytes], tuple[str, ...]]:
    """The built-in agent in a scaffold sandbox; ``(agent record, taken files, names the channel refused)``.

    Raises:
        InfraError: no sandbox runtime (``environment_unsupported``), the images or the sandbox failed, the
            endpoint failed after its retries (``AgentInfraError``), no agent configured.
    """
    from pytest_mobilebench.agents.loop import run_shell_agent
    from pytest_mobilebench.agents.prompt import load_template
    from pytest_mobilebench.suites.app_generation import container
    from pytest_mobilebench.suites.app_generation.build import SCAFFOLD_DIR
    from pytest_mobilebench.agents.records import agent_of, limits_json

    runtime = ctx.fixture("mb_runtime").get(trusted=False)
    if not isinstance(runtime, SandboxRuntime):
        raise InfraError(
            InfraKind.ENVIRONMENT_UNSUPPORTED,
            f"the {runtime.name!r} runtime opens no sandbox for the "
            "agent (live app generation needs --mb-runtime=docker)",
        )
    endpoint, limits = agent_of(ctx)
    builder = ctx.resource(
        f"app_generation:container:{runtime.name}:False",
        lambda: container.ContainedBuilder(runtime, scaffold_dir=SCAFFOLD_DIR),
    )
    ctx.progress(f"{manifest.app}: agent sandbox ({runtime.name})")
    sandbox = runtime.sandbox(builder.spec(), f"{manifest.app}-agent", log_dir=ctx.evidence_dir / "agent")
    try:
        sandbox.put_files(starter_files())
        template = load_template(ctx.options.get("mb_agent_prompt"), default=DEFAULT_PROMPT, fields=FIELDS)
        prompt = template.render(prompt_fields(manifest, sandbox.root, _scaffold_packages()))
        outcome = run_shell_agent(
            endpoint,
            limits,
            prompt,
            SandboxAgentShell(sandbox, limits.output_chars),
            ctx.evidence_dir / TRAJECTORY_FILE,
        )
        files = sandbox.read_files(list(PROJECT_GLOBS))
        rejected = sandbox.rejected
    finally:
        sandbox.close()
    agent = {
        "mode": "builtin",
        "model": endpoint.model,
        "end": outcome.end.value,
        "usage": dataclasses.asdict(outcome.usage),
        "submission": (outcome.submission or "")[:2000] or None,
        "limits": limits_json(limits),
    }
    return agent, files, rejected


def _shown_files(files: Mapping[str, bytes]) -> str:
    """The taken files as the run page shows them (in the transcript's "diff" slot): each file's name and text."""
    text = "".join(
        f"+++ {name} ({len(data)} bytes)\n{data.decode('utf-8', 'replace')}\n" for name, data in sorted(files.items())
    )
    return text[:_SHOWN]


def with_agent(
    result: dict[str, Any], agent: Mapping[str, Any], files: Mapping[str, bytes], evidence: Path
) -> dict[str, Any]:
    """The graded result with the agent's record, its ``agent_*`` properties and a bounded transcript."""
    from pytest_mobilebench.agents.records import transcript

    usage = agent.get("usage") or {}
    cost = usage.get("cost_usd")
    props = {
        "agent_end": agent.get("end"),
        "agent_steps": usage.get("steps"),
        "agent_calls": usage.get("calls"),
        "agent_tokens_in": usage.get("tokens_in"),
        "agent_tokens_out": usage.get("tokens_out"),
        "agent_model_s": round(float(usage.get("model_seconds") or 0.0), 3),
        "agent_cost_usd": "" if cost is None else round(float(cost), 6),
        "agent_project_files": len(files),
        "agent_project_bytes": sum(len(d) for d in files.values()),
    }
    shown = _shown_files(files)
    return {
        **result,
        "agent": {
            **agent,
            "transcript": transcript(evidence / TRAJECTORY_FILE),
            "diff": shown,
            "diff_cut": len(shown) >= _SHOWN,
        },
        "properties": {**result.get("properties", {}), **{k: ("" if v is None else v) for k, v in props.items()}},
    }
