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
   ``model_name_or_path``, ``model_patch``, ``trial`` for one of K trials; a diff over the sandbox's bound is
   written without its text, as ``patch_too_large``: :func:`~pytest_mobilebench.agents.records.patch_row`; one
   line per instance, model and trial, replaced atomically under a file lock, so xdist workers never tear it)
   before it is graded: ``--predictions`` of that file re-grades the run (a cached item's row is written again
   to a later run's file);
5. grading, by the item once this module returned (:class:`~pytest_mobilebench.suites.base.LiveCandidate`): the
   row, read as a file prediction, through the suite's own path for one (fresh container, policy,
   test patch, plan, parser; a withheld patch is the policy's ``patch_too_large``).

Outcomes. The agent's limit ends (``agent_step_limit``, ``agent_token_limit``, ``agent_cost_limit``,
``agent_timeout``) are the candidate's: the item is counted, and the patch taken at that moment is graded like
any other (SWE-bench grades whatever the diff is; SWE-agent's auto-submission does the same), so a limit end
with a resolving work tree is resolved; ``agent_end`` says how the agent ended. The endpoint failing after
the retries is infrastructure (``agent_unreachable`` ...): not counted, retried by the next run. A user's
program composes its own requests, so only the forwarder's failures to connect are infrastructure there.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.agents.records import (
    PREDICTIONS_FILE,
    TRAJECTORY_FILE,
    SandboxShell,
    agent_of,
    agent_table,
    append_prediction,
    limits_json,
    patch_row,
    record_prediction,
    taken_json,
    with_agent,
)
from pytest_mobilebench.predictions import Prediction
from pytest_mobilebench.files import atomic_write_json
from pytest_mobilebench.runtime.agent_sandbox import (
    MAX_PATCH_BYTES,
    AgentSandboxRuntime,
    TakenPatch,
)
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.suites.base import LiveCandidate
from pytest_mobilebench.suites.issue_resolution.prompt import COMMAND_MODEL, render_prompt
from pytest_mobilebench.suites.issue_resolution.live_command import run_command_agent
from pytest_mobilebench.suites.issue_resolution.workspaces import runtime_for, workspace_spec

if TYPE_CHECKING:
    from pytest_mobilebench.records import EvalContext
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

__all__ = ["PREDICTIONS_FILE", "agent_table", "append_prediction", "live_model", "produce_live"]

#: characters of the agent's submission note kept in its record
_SHOWN_SUBMISSION: Final = 2_000
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


def produce_live(instance: IssueInstance, ctx: EvalContext, model: str, *, trial: int | None = None) -> LiveCandidate:
    """One live item's candidate: the agent in a sandbox, its patch taken and its row written to the run's
    predictions file; the item then evaluates that row as a file prediction (steps 1-4 of the module docstring).
    ``model``: the live model (``--mb-agent-model``, or the command's); ``trial``: which of K trials this item
    is (its own sandbox, evidence folder, written row and grading container).

    Raises:
        InfraError: the sandbox could not be made, the endpoint failed after the retries (``AgentInfraError``),
            or the runtime hosts no agents (``platform_unavailable``).
    """
    runtime = runtime_for(ctx, trusted=False)
    if not isinstance(runtime, AgentSandboxRuntime):
        raise InfraError(
            InfraKind.PLATFORM_UNAVAILABLE,
            f"--mb-runtime={runtime.name} hosts no agent sandboxes (live issue resolution needs --mb-runtime=docker)",
        )
    model = model or str(live_model(ctx.options))
    ctx.progress(f"{instance.instance_id}: agent sandbox ({runtime.name})")
    if ctx.options.get("mb_agent_command"):
        agent, taken = run_command_agent(runtime, workspace_spec(instance, ctx), instance, ctx)
    else:
        agent, taken = _run_builtin(runtime, workspace_spec(instance, ctx), instance, ctx)
    atomic_write_json(ctx.evidence_dir / "agent.json", {**agent, "taken": taken_json(taken)})
    row = patch_row(instance.instance_id, model, taken, trial)
    record_prediction(ctx, row)
    attach = functools.partial(_attach, agent=agent, taken=taken, evidence=ctx.evidence_dir)
    return LiveCandidate(Prediction.from_entry(row), attach)


def _run_builtin(
    runtime: AgentSandboxRuntime, spec: Any, instance: IssueInstance, ctx: EvalContext
) -> tuple[dict[str, Any], TakenPatch]:
    """The built-in agent in a sandbox without network; ``(agent record, taken patch)``."""
    from pytest_mobilebench.agents.loop import run_shell_agent

    endpoint, limits = agent_of(ctx)
    prompt = render_prompt(ctx.options, instance)
    sandbox = runtime.agent_sandbox(spec, log_dir=ctx.evidence_dir)
    try:
        outcome = run_shell_agent(
            endpoint, limits, prompt, SandboxShell(sandbox, limits.output_chars), ctx.evidence_dir / TRAJECTORY_FILE
        )
        taken = sandbox.take_patch(MAX_PATCH_BYTES)
    finally:
        sandbox.close()
    usage = dataclasses.asdict(outcome.usage)
    return {
        "mode": "builtin",
        "model": endpoint.model,
        "end": outcome.end.value,
        "usage": usage,
        "submission": (outcome.submission or "")[:_SHOWN_SUBMISSION] or None,
        "limits": limits_json(limits),
    }, taken


def _attach(result: dict[str, Any], *, agent: dict[str, Any], taken: TakenPatch, evidence: Path) -> dict[str, Any]:
    """The graded ``result`` of the row written for ``taken`` (a patch withheld as too large was the policy's
    refusal there, live and on a re-grade alike) with the agent's record; a patch that could not be taken says
    so first in the detail."""
    if taken.error:
        result["detail"] = "; ".join(
            x for x in (f"the patch could not be taken: {taken.error}", result.get("detail")) if x
        )
    return with_agent(result, agent, taken, evidence)
