"""A user's own agent program in the sandbox (``--mb-agent-command CMD``; docs/live-agents.md).

``CMD`` runs with ``bash -c`` in the sandbox's work tree as the unprivileged test user, under
``--mb-agent-wall-time`` (default one hour), with these variables:

* ``MOBILEBENCH_WORKDIR`` (``/testbed``), ``MOBILEBENCH_MODEL``, ``MOBILEBENCH_PROMPT_FILE`` (the rendered prompt,
  ``--mb-agent-prompt``'s template), ``MOBILEBENCH_PROBLEM_FILE`` (the problem statement alone);
* with ``--mb-agent-base-url``: ``OPENAI_BASE_URL`` / ``OPENAI_API_BASE`` / ``MOBILEBENCH_AGENT_BASE_URL``
  (``http://127.0.0.1:18080/<the endpoint's path>``, the relay to the harness's forwarder: the sandbox's only
  network peer) and a dummy ``OPENAI_API_KEY`` (the forwarder adds the real key).

``--mb-agent-dir DIR`` copies a host folder (the program and its files) to ``/opt/mobilebench-agent`` first (its
path is ``MOBILEBENCH_AGENT_DIR``). The program's output is kept (bounded) as the item's transcript; its exit
status and what it prints are never read as a verdict: the patch is taken from the work tree it leaves.
Usage is the forwarder's count (calls, the endpoint's token counts, model seconds), priced with
``--mb-agent-prices``; ``--mb-agent-max-tokens`` / ``--mb-agent-max-cost`` are enforced by the forwarder
(further requests answered 429; the end is ``agent_token_limit`` / ``agent_cost_limit``).
"""

from __future__ import annotations

import io
import json
import os
import shlex
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.files import atomic_write_text
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.egress import ModelForwarder
from pytest_mobilebench.runtime.agent_sandbox import MAX_PATCH_BYTES, TakenPatch
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.agents.records import TRAJECTORY_FILE
from pytest_mobilebench.suites.issue_resolution.prompt import COMMAND_MODEL, render_prompt

if TYPE_CHECKING:
    from pytest_mobilebench.runtime.agent_sandbox import AgentSandbox, AgentSandboxRuntime
    from pytest_mobilebench.records import EvalContext
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

__all__ = ["AGENT_DIR", "run_command_agent"]

#: where --mb-agent-dir lands in the sandbox
AGENT_DIR: Final = "/opt/mobilebench-agent"
_DEFAULT_WALL_S: Final = 3600.0
#: the most bytes of an --mb-agent-dir folder copied in
_MAX_AGENT_DIR_BYTES: Final = 256 << 20


def run_command_agent(
    runtime: AgentSandboxRuntime, spec: Any, instance: IssueInstance, ctx: EvalContext
) -> tuple[dict[str, Any], TakenPatch]:
    """Run ``--mb-agent-command`` in a sandbox (routed to the forwarder when an endpoint is given).

    Returns:
        ``(agent record, taken patch)``; the record's ``usage`` is the forwarder's.

    Raises:
        InfraError: the sandbox failed; ``agent_unreachable`` / ``agent_endpoint_timeout`` when the forwarder
            could not get an answer from the endpoint through its retries (nothing in the sandbox can cause
            that), or the program's wall time ran out after the endpoint lost it time (:func:`_endpoint_failed`).
    """
    options = ctx.options
    model = str(options.get("mb_agent_model") or COMMAND_MODEL)
    wall = float(options.get("mb_agent_wall_time") or _DEFAULT_WALL_S)
    limits = ctx.fixture("mb_agent")[1] if ctx.fixture("mb_agent") is not None else None
    forwarder = _forwarder(options, model, limits) if options.get("mb_agent_base_url") else None
    try:
        sandbox = runtime.agent_sandbox(spec, log_dir=ctx.evidence_dir, forwarder=forwarder)
        try:
            started = time.monotonic()
            run = sandbox.run(_script(sandbox, instance, options, model), wall)
            seconds = time.monotonic() - started
            taken = sandbox.take_patch(MAX_PATCH_BYTES)
        finally:
            sandbox.close()
    finally:
        if forwarder is not None:
            forwarder.close()
    atomic_write_text(ctx.evidence_dir / "agent_command.log", run.output)
    usage = forwarder.usage.to_dict() if forwarder is not None else {}
    _write_transcript(ctx.evidence_dir / TRAJECTORY_FILE, str(options["mb_agent_command"]), run, usage)
    _endpoint_failed(forwarder, run, str(options.get("mb_agent_base_url")))
    price = getattr(limits, "price", None) if limits is not None else None
    tokens_in, tokens_out = int(usage.get("tokens_in") or 0), int(usage.get("tokens_out") or 0)
    end = "agent_timeout" if run.timed_out else (usage.get("limit") or "submitted")
    return {
        "mode": "command",
        "model": model,
        "end": end,
        "exit_code": run.exit_code,
        "seconds": round(seconds, 3),
        "usage": {
            "calls": int(usage.get("calls") or 0),
            "steps": None,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "model_seconds": round(float(usage.get("model_seconds") or 0.0), 3),
            "cost_usd": price.cost(tokens_in, tokens_out) if price is not None else None,
            "refused": int(usage.get("refused") or 0),
            "endpoint_failed_attempts": int(usage.get("failed_attempts") or 0),
            "endpoint_lost_seconds": round(float(usage.get("lost_seconds") or 0.0), 3),
        },
        "submission": None,
        "endpoint_failures": [list(f) for f in (forwarder.failures if forwarder else [])],
    }, taken


def _endpoint_failed(forwarder: ModelForwarder | None, run: Any, url: str) -> None:
    """Infrastructure the program's outcome must not carry: the forwarder never reached the endpoint or the
    endpoint missed its deadlines through the retries; or the program ran out of wall time after the endpoint
    lost it time (failed attempts and the waits before their retries), which its outcome cannot tell apart.

    Raises:
        InfraError: ``agent_unreachable`` / ``agent_endpoint_timeout``, or the kind of the last failed attempt.
    """
    if forwarder is None:
        return
    late = {InfraKind.AGENT_UNREACHABLE.value, InfraKind.AGENT_ENDPOINT_TIMEOUT.value}
    failed = [f for f in forwarder.failures if f[0] in late]
    if failed:
        raise InfraError(
            InfraKind(failed[-1][0]),
            f"the forwarder could not get an answer from {url} through its retries: {failed[-1][1]}",
        )
    usage = forwarder.usage
    if run.timed_out and usage.lost_seconds > 0 and usage.lost_kind is not None:
        raise InfraError(
            InfraKind(usage.lost_kind),
            f"the program ran out of its wall time after the endpoint {url} "
            f"lost {usage.lost_seconds:.1f} s to {usage.failed_attempts} failed attempt(s) and their "
            "retries: not the program's outcome",
        )


def _forwarder(options: Mapping[str, Any], model: str, limits: Any) -> ModelForwarder:
    """A started forwarder to ``--mb-agent-base-url``, enforcing the token and cost limits."""
    price = getattr(limits, "price", None)
    max_tokens = getattr(limits, "max_tokens", None)
    max_cost = getattr(limits, "max_cost_usd", None)

    def budget(tokens_in: int, tokens_out: int) -> str | None:
        if max_tokens is not None and tokens_in + tokens_out >= max_tokens:
            return "agent_token_limit"
        if max_cost is not None and price is not None and price.cost(tokens_in, tokens_out) >= max_cost:
            return "agent_cost_limit"
        return None

    forwarder = ModelForwarder(
        str(options["mb_agent_base_url"]),
        api_key(),
        timeout_s=float(options.get("mb_agent_timeout") or 120.0),
        connect_timeout_s=float(options.get("mb_agent_connect_timeout") or 10.0),
        retries=int(options.get("mb_agent_retries") if options.get("mb_agent_retries") is not None else 3),
        budget=budget,
    )
    forwarder.start()
    return forwarder


def _script(sandbox: AgentSandbox, instance: IssueInstance, options: Mapping[str, Any], model: str) -> str:
    """The shell text run in the sandbox: the variables, ``cd`` to the work tree, then the user's command."""
    prompt = render_prompt(options, instance)
    files = {
        "MOBILEBENCH_PROMPT_FILE": sandbox.put_file(
            "prompt.md", (prompt.system + "\n\n" + prompt.task).strip().encode()
        ),
        "MOBILEBENCH_PROBLEM_FILE": sandbox.put_file("problem.md", instance.problem_statement.encode()),
    }
    if options.get("mb_agent_dir"):
        _copy_agent_dir(sandbox, Path(str(options["mb_agent_dir"])))
        files["MOBILEBENCH_AGENT_DIR"] = AGENT_DIR
    return command_env(sandbox, model, files) + f"cd {sandbox.workdir}\n" + str(options["mb_agent_command"])


def _copy_agent_dir(sandbox: AgentSandbox, folder: Path) -> None:
    """Copy ``folder`` to :data:`AGENT_DIR` (root-owned, readable; links are not followed).

    Raises:
        InfraError("harness_error"): not a folder, or over the size bound (the message names it).
    """
    if not folder.is_dir():
        raise InfraError(InfraKind.HARNESS_ERROR, f"--mb-agent-dir {folder}: not a folder")
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        tar.add(str(folder), arcname=AGENT_DIR.lstrip("/"), filter=_readable)
    if archive.tell() > _MAX_AGENT_DIR_BYTES:
        raise InfraError(InfraKind.HARNESS_ERROR, f"--mb-agent-dir {folder}: over {_MAX_AGENT_DIR_BYTES} bytes")
    sandbox.put_tree(archive.getvalue())


def _readable(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mode = (info.mode | 0o444 | (0o111 if info.isdir() or info.mode & 0o100 else 0)) & 0o755
    return info


def _write_transcript(path: Path, command: str, run: Any, usage: Mapping[str, Any]) -> None:
    """The program's run as trajectory lines (the same file name and roles as the built-in agent's)."""
    lines = [
        {"step": 0, "role": "harness", "t": 0.0, "event": "start", "mode": "command"},
        {
            "step": 1,
            "role": "tool",
            "t": 0.0,
            "tool": "bash",
            "command": command,
            "exit_code": run.exit_code,
            "output": run.output[-200_000:],
            "timed_out": run.timed_out,
            "seconds": run.duration_s,
        },
        {"step": 1, "role": "harness", "t": run.duration_s, "event": "end", "usage": dict(usage)},
    ]
    atomic_write_text(path, "".join(json.dumps(line, ensure_ascii=False, default=str) + "\n" for line in lines))


def command_env(sandbox: AgentSandbox, model: str, files: Mapping[str, str]) -> str:
    """``export`` lines for a user's program: the work tree, the prompt files, and with a model route the
    OpenAI-style variables pointing at the relay (the key is the forwarder's to add: a dummy one here)."""
    env = {"MOBILEBENCH_WORKDIR": sandbox.workdir, "MOBILEBENCH_MODEL": model, **files}
    if sandbox.model_url:
        env |= {
            "OPENAI_BASE_URL": sandbox.model_url,
            "OPENAI_API_BASE": sandbox.model_url,
            "OPENAI_API_KEY": "sk-mobilebench-forwarder",
            "MOBILEBENCH_AGENT_BASE_URL": sandbox.model_url,
        }
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in sorted(env.items()))


def api_key() -> str:
    """The endpoint's key (``MOBILEBENCH_AGENT_API_KEY``), given to the forwarder only."""
    return os.environ.get("MOBILEBENCH_AGENT_API_KEY", "")
