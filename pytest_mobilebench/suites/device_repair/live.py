"""Live device repair (``--predictions=live``): an agent edits the record's repository in a container sandbox,
the harness takes its patch and grades it by the normal device-repair path (docs/live-agents.md).

Per item:

1. a sandbox of the record's repository at its base commit (:mod:`pytest_mobilebench.runtime.agent_sandbox`,
   through the ``mb_runtime`` fixture's runtime, untrusted): no network, no device, no adb, no host path. A
   ``gradle`` record's sandbox is its own instance image (the Android recipe the grading build uses); a
   ``jvm`` record (built on the host when graded) gets the harness's base image with the repository
   (:func:`sandbox_spec`), built through the same provider;
2. the built-in shell agent (:func:`pytest_mobilebench.agents.loop.run_shell_agent`): its loop runs in this
   process, each command in the sandbox; the prompt is ``--mb-agent-prompt`` or
   ``agents/prompts/device_repair.md`` with the record's issue, its target method and the base tree's layout
   (``git ls-files`` read by the harness before the agent's first command);
3. the patch is taken (``git diff`` of the work tree against the base commit, root with the harness's own git
   directory); the sandbox is removed: the device is never the agent's;
4. the prediction is appended to ``reports/<run_id>/predictions.jsonl`` (``instance_id``,
   ``model_name_or_path``, ``model_patch``; a diff over the sandbox's bound: ``model_patch`` ``""`` with
   ``patch_too_large``, an empty patch either way), so ``--predictions`` of that file re-grades the run offline;
5. grading: the suite's own path for a file prediction (fresh work tree, test-file edits restored and
   flagged, p_t applied privately, the leased device).

Outcomes as in live issue resolution: a limit end (``agent_step_limit`` ...) is the candidate's and the patch
taken at that moment is graded; the endpoint failing after the retries is infrastructure. A user's own agent
program (``--mb-agent-command``) is not offered here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.files import atomic_write_json
from pytest_mobilebench.runtime.agent_sandbox import (
    MAX_PATCH_BYTES,
    AgentSandbox,
    AgentSandboxRuntime,
    TakenPatch,
)
from pytest_mobilebench.runtime.base import InfraError, WorkspaceSpec
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import Prediction
    from pytest_mobilebench.records import EvalContext
    from pytest_mobilebench.suites.device_repair.records import DeviceRecord

__all__ = ["DEVICE_FIELDS", "DEVICE_PROMPT", "LiveRun", "live_model", "material", "run_agent", "sandbox_spec"]

#: the suite's default prompt template
DEVICE_PROMPT: Final = Path(__file__).resolve().parents[2] / "agents" / "prompts" / "device_repair.md"
#: the fields a device-repair template may use: the shared ones, the target method and the base tree's layout
DEVICE_FIELDS: Final = frozenset(
    {"problem_statement", "repo", "base_commit", "framework", "workdir", "target", "layout"}
)
#: the environment of a ``jvm`` record's sandbox: the harness's base image (git, patch, python3, a C toolchain)
_JVM_SANDBOX: Final = {"recipe": "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n", "install": "true"}
#: tracked files listed in the prompt's layout, and the seconds the listing may take
_LAYOUT_FILES: Final = 300
_LAYOUT_TIMEOUT_S: Final = 60.0


def live_model(options: Mapping[str, Any]) -> str:
    """The model ``--predictions=live`` drives (``--mb-agent-model`` with ``--mb-agent-base-url``), every agent
    option and the device-repair prompt template checked once.

    Raises:
        ValueError: no endpoint or model, ``--mb-agent-command`` (not offered here), an unusable limit, price
            table or prompt template (the message names the option or the file).
    """
    from pytest_mobilebench.agents import options as agent_options

    if options.get("mb_agent_command"):
        raise ValueError("--mb-agent-command: device repair runs the built-in agent only (give --mb-agent-base-url)")
    model = agent_options.live_model(options)
    template(options)
    return model


def template(options: Mapping[str, Any]) -> Any:
    """The checked prompt template (``--mb-agent-prompt``, else :data:`DEVICE_PROMPT`).

    Raises:
        PromptError: unreadable, misplaced markers, a field not in :data:`DEVICE_FIELDS`.
    """
    from pytest_mobilebench.agents.prompt import load_template

    return load_template(options.get("mb_agent_prompt"), default=DEVICE_PROMPT, fields=DEVICE_FIELDS)


def material(options: Mapping[str, Any]) -> dict[str, str]:
    """The prompt template's and the price table's digests, for the cache key of live items."""
    from pytest_mobilebench.agents.options import agent_material

    return agent_material(options, prompt=DEVICE_PROMPT)


def sandbox_spec(record: DeviceRecord, options: Mapping[str, Any], run_id: str) -> WorkspaceSpec:
    """The agent sandbox's view of ``record``: the grading build's spec (:func:`.flow.workspace_spec`), with the
    base-image environment for plans the grading builds on the host (``jvm``)."""
    from pytest_mobilebench.suites.device_repair.flow import workspace_spec

    spec = workspace_spec(record, options, run_id)
    if record.plan.kind == "gradle":
        return spec
    return dataclasses.replace(spec, environment={**spec.environment, **_JVM_SANDBOX})


@dataclasses.dataclass(frozen=True)
class LiveRun:
    """One agent's run: the ``prediction`` graded (exactly a predictions file's row), the ``agent`` record
    (mode, model, end, usage, limits) and the ``taken`` patch."""

    prediction: Prediction
    agent: dict[str, Any]
    taken: TakenPatch

    def attach(self, result: dict[str, Any], evidence: Path) -> dict[str, Any]:
        """``result`` with the agent's record, its per-item properties and a bounded transcript."""
        from pytest_mobilebench.agents.records import with_agent

        out = with_agent(result, self.agent, self.taken, evidence)
        if self.taken.error:  # (a patch withheld as too large says so in the graded row's own detail)
            out["detail"] = "; ".join(
                [f"the patch could not be taken: {self.taken.error}", *([out["detail"]] if out.get("detail") else [])]
            )
        return out


def run_agent(record: DeviceRecord, ctx: EvalContext, model: str, trial: int | None = None) -> LiveRun:
    """The agent in a sandbox of ``record``; its taken patch written to the run's predictions file (its row
    carrying ``trial`` for one of K trials, ``--mb-trials``).

    Raises:
        InfraError: the runtime hosts no agent sandboxes (``platform_unavailable``), the sandbox could not be
            made, the endpoint failed after the retries (``AgentInfraError``), no ``mb_agent`` endpoint.
    """
    from pytest_mobilebench.agents.loop import run_shell_agent
    from pytest_mobilebench.predictions import Prediction
    from pytest_mobilebench.agents.records import (
        TRAJECTORY_FILE,
        agent_of,
        limits_json,
        patch_row,
        record_prediction,
        SandboxShell,
        taken_json,
    )

    runtime = ctx.fixture("mb_runtime").get(trusted=False)
    if not isinstance(runtime, AgentSandboxRuntime):
        raise InfraError(
            InfraKind.PLATFORM_UNAVAILABLE,
            f"--mb-runtime={getattr(runtime, 'name', runtime)} hosts no "
            "agent sandboxes (live device repair needs --mb-runtime=docker)",
        )
    endpoint, limits = agent_of(ctx)
    ctx.progress(f"{record.instance_id}: agent sandbox ({runtime.name})")
    sandbox = runtime.agent_sandbox(sandbox_spec(record, ctx.options, ctx.run_id), log_dir=ctx.evidence_dir)
    try:
        prompt = template(ctx.options).render(_fields(record, _layout(sandbox, record)))
        outcome = run_shell_agent(
            endpoint, limits, prompt, SandboxShell(sandbox, limits.output_chars), ctx.evidence_dir / TRAJECTORY_FILE
        )
        taken = sandbox.take_patch(MAX_PATCH_BYTES)
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
    atomic_write_json(ctx.evidence_dir / "agent.json", {**agent, "taken": taken_json(taken)})
    row = patch_row(record.instance_id, model, taken, trial)
    record_prediction(ctx, row)
    return LiveRun(Prediction.from_entry(row), agent, taken)


def _layout(sandbox: AgentSandbox, record: DeviceRecord) -> str:
    """The base tree's tracked files (at most :data:`_LAYOUT_FILES`) and the record's test roots, read before
    the agent's first command.

    Raises:
        InfraError("workspace_error"): the listing failed in the untouched sandbox.
    """
    run = sandbox.run(f"git ls-files | head -n {_LAYOUT_FILES + 1}", _LAYOUT_TIMEOUT_S)
    if run.exit_code != 0:
        raise InfraError(
            InfraKind.WORKSPACE_ERROR,
            f"{record.instance_id}: cannot list the sandbox's base tree: {run.output[-2000:]}",
        )
    files = run.output.splitlines()
    shown = "\n".join(files[:_LAYOUT_FILES]) + ("\n... more files (git ls-files)" if len(files) > _LAYOUT_FILES else "")
    return f"test roots: {', '.join(record.test_roots)}\n{shown}"


def _fields(record: DeviceRecord, layout: str) -> dict[str, str]:
    return {
        "problem_statement": record.issue,
        "repo": record.repo,
        "base_commit": record.base_commit,
        "framework": record.platform,
        "workdir": AgentSandbox.workdir,
        "target": record.target,
        "layout": layout,
    }
