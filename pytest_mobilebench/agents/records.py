"""What every live suite records of an agent's run, whatever the suite: the ``mb_agent`` fixture's endpoint and
limits, the shell over an agent sandbox, the run's written predictions file, the agent's per-item record and
properties, the bounded transcript the run page shows, and the summary's ``agent`` table.

Shapes: a result's ``agent`` record is ``{"end", "usage": {"calls", "steps", "tokens_in", "tokens_out",
"model_seconds", "cost_usd"}, "limits", "taken", "transcript": [{"step", "role", "text", "exit_code"?}], "diff",
"diff_cut"}``; the properties are ``agent_end``, ``agent_steps``, ``agent_calls``, ``agent_tokens_in``,
``agent_tokens_out``, ``agent_model_s`` (seconds), ``agent_cost_usd`` (USD, empty when unpriced) and
``agent_patch_bytes`` and ``agent_integrity_flags`` (the trajectory's integrity flags,
:mod:`pytest_mobilebench.agents.integrity`: the record's ``integrity``; the table's per-model totals). Nothing
here names a suite.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.files import atomic_write_text
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    from pytest_mobilebench.agents.limits import Limits
    from pytest_mobilebench.runtime.agent_sandbox import AgentSandbox, TakenPatch
    from pytest_mobilebench.records import EvalContext

__all__ = [
    "PREDICTIONS_FILE",
    "PREDICTION_FILE",
    "RUN_ROW_FILE",
    "TRAJECTORY_FILE",
    "SandboxShell",
    "agent_of",
    "agent_table",
    "append_prediction",
    "integrity_of",
    "limits_json",
    "patch_row",
    "record_prediction",
    "run_folder",
    "taken_json",
    "transcript",
    "with_agent",
]

#: the run's written predictions, in ``reports/<run_id>/``
PREDICTIONS_FILE: Final = "predictions.jsonl"
#: the trajectory in the item's evidence folder
TRAJECTORY_FILE: Final = "trajectory.jsonl"
#: the item's own row of the predictions file, in its evidence folder (what a cache hit carries to a later run)
PREDICTION_FILE: Final = "prediction.json"
#: the row exactly as the run's predictions file holds it, when it differs from :data:`PREDICTION_FILE` (app
#: generation's project path, relative to the run's folder); the item keys its candidate's verdict by it
RUN_ROW_FILE: Final = "prediction.run.json"
#: what the run page shows of a transcript: steps, characters per text, characters of the diff
_SHOWN_STEPS: Final = 200
_SHOWN_CHARS: Final = 2_000
_SHOWN_DIFF: Final = 50_000


def agent_of(ctx: EvalContext) -> tuple[Any, Limits]:
    """The ``mb_agent`` fixture's ``(Endpoint, Limits)`` (a ``conftest.py`` may override it).

    Raises:
        InfraError("agent_not_configured"): the fixture gave none.
    """
    agent = ctx.fixture("mb_agent")
    if agent is None:
        raise InfraError(
            InfraKind.AGENT_NOT_CONFIGURED,
            "--predictions=live but the mb_agent fixture gave no endpoint (--mb-agent-base-url)",
        )
    return agent  # type: ignore[no-any-return]


class SandboxShell:
    """The agent's :class:`~pytest_mobilebench.agents.shell.Shell` over an :class:`AgentSandbox` (output bounded
    to ``output_chars``, head and tail kept)."""

    def __init__(self, sandbox: AgentSandbox, output_chars: int) -> None:
        self.sandbox = sandbox
        self.output_chars = output_chars

    def run(self, command: str, timeout_s: float) -> Any:
        from pytest_mobilebench.agents.shell import ShellResult, bound_output

        run = self.sandbox.run(command, timeout_s)
        return ShellResult(
            exit_code=run.exit_code,
            output=bound_output(run.output, self.output_chars),
            timed_out=run.timed_out,
            seconds=run.duration_s,
        )


def run_folder(ctx: EvalContext) -> Path:
    """``reports/<run_id>/`` (the evidence folder is ``reports/<run_id>/<model>/<instance>``).

    Raises:
        InfraError("harness_error"): the evidence folder is not laid out that way.
    """
    folder = ctx.evidence_dir.parent.parent
    if folder.name != ctx.run_id:
        raise InfraError(
            InfraKind.HARNESS_ERROR, f"the evidence folder {ctx.evidence_dir} is not under the run's folder"
        )
    return folder


def append_prediction(run_folder: Path, row: Mapping[str, Any]) -> Path:
    """Add ``row`` to ``run_folder/predictions.jsonl``, replacing the line of the same instance, model and
    trial (``trial`` absent for a single attempt); the file is rewritten atomically under a file lock (xdist
    workers append to the same file)."""
    from filelock import FileLock

    path = run_folder / PREDICTIONS_FILE
    key = (row["instance_id"], row["model_name_or_path"], row.get("trial"))
    with FileLock(str(run_folder / f".{PREDICTIONS_FILE}.lock")):  # hidden: filelock leaves it on disk
        kept = []
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                old = json.loads(line) if line.strip() else None
                if old is not None and (old.get("instance_id"), old.get("model_name_or_path"), old.get("trial")) != key:
                    kept.append(line)
        kept.append(json.dumps(dict(row), ensure_ascii=False, sort_keys=True))
        atomic_write_text(path, "\n".join(kept) + "\n")
    return path


def record_prediction(ctx: EvalContext, row: Mapping[str, Any], *, carried: Mapping[str, Any] | None = None) -> Path:
    """Write the item's prediction ``row``: appended to the run's predictions file (:func:`append_prediction`)
    and kept as :data:`PREDICTION_FILE` in its evidence folder, which the result cache keeps beside a cached
    verdict, so a later run served from the cache writes the very row that was graded
    (:func:`pytest_mobilebench.items.carry_prediction`). ``carried``: that row as another run's file must say
    it, when ``row`` names a path relative to this run's folder (the same row with the path absolute).
    Returns the predictions file.

    Raises:
        InfraError("harness_error"): the evidence folder is not under the run's folder.
    """
    folder = run_folder(ctx)
    if carried is not None:
        atomic_write_text(ctx.evidence_dir / RUN_ROW_FILE, json.dumps(dict(row), ensure_ascii=False, sort_keys=True))
    atomic_write_text(
        ctx.evidence_dir / PREDICTION_FILE,
        json.dumps(dict(row if carried is None else carried), ensure_ascii=False, sort_keys=True),
    )
    return append_prediction(folder, row)


def patch_row(instance_id: str, model: str, taken: TakenPatch, trial: int | None = None) -> dict[str, Any]:
    """The SWE-bench predictions row of a taken patch: ``instance_id``, ``model_name_or_path``, ``model_patch``,
    ``trial`` for one of K trials, and for a patch withheld as too large ``model_patch`` ``""`` with
    ``patch_too_large`` (:class:`~pytest_mobilebench.predictions.OversizedPatch`), so a re-grade of the file
    refuses it as the live run did."""
    from pytest_mobilebench.predictions import WITHHELD_FIELD, OversizedPatch

    row: dict[str, Any] = {"instance_id": instance_id, "model_name_or_path": model, "model_patch": taken.patch}
    if taken.too_large:
        row[WITHHELD_FIELD] = OversizedPatch(taken.size_bytes, taken.max_bytes).to_field()
    return row if trial is None else {**row, "trial": trial}


def limits_json(limits: Limits) -> dict[str, Any]:
    out = dataclasses.asdict(limits)
    out.pop("price", None)
    out["priced"] = limits.price is not None
    return out


def taken_json(taken: TakenPatch) -> dict[str, Any]:
    return {
        "base_commit": taken.base_commit,
        "bytes": taken.size_bytes,
        "too_large": taken.too_large,
        "error": taken.error,
    }


def with_agent(result: dict[str, Any], agent: Mapping[str, Any], taken: TakenPatch, evidence: Path) -> dict[str, Any]:
    """The graded result with the agent's record, its per-item properties and a bounded transcript."""
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
        "agent_patch_bytes": taken.size_bytes,
    }
    integrity = integrity_of(evidence / TRAJECTORY_FILE, framework=result.get("framework"), diff=taken.patch)
    if integrity is not None:
        props["agent_integrity_flags"] = sum(integrity["counts"].values())
    props = {k: ("" if v is None else v) for k, v in props.items()}
    shown = {
        **agent,
        "transcript": transcript(evidence / TRAJECTORY_FILE),
        "diff": taken.patch[:_SHOWN_DIFF],
        "diff_cut": len(taken.patch) > _SHOWN_DIFF,
        **({"integrity": integrity} if integrity is not None else {}),
    }
    return {**result, "agent": shown, "properties": {**result.get("properties", {}), **props}}


def integrity_of(
    path: Path, *, framework: Any = None, diff: str = "", workdir: str | None = None
) -> dict[str, Any] | None:
    """The integrity report (:func:`pytest_mobilebench.agents.integrity.integrity_report`) of the trajectory at
    ``path``, test files by ``framework``'s default rule, the work tree the agent sandbox's (``/testbed``); None
    when there is no readable trajectory (a command agent's run keeps none)."""
    from pytest_mobilebench.agents.integrity import integrity_report
    from pytest_mobilebench.agents.trajectory import read_trajectory

    if not path.is_file():
        return None
    try:
        lines = read_trajectory(path)
    except ValueError:
        return None
    if workdir is None:
        from pytest_mobilebench.runtime.agent_sandbox import AgentSandbox

        workdir = AgentSandbox.workdir
    rule = _test_rule(framework)
    return integrity_report(lines, workdir=workdir, is_test=rule, diff=diff)


def _test_rule(framework: Any) -> Any:
    """The framework's default test-file rule, or one that matches nothing for an unknown framework."""
    from pytest_mobilebench import frameworks

    try:
        return frameworks.default_test_rule(str(framework))
    except frameworks.FrameworkError:
        return lambda path: False


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
        shown.append(
            {
                "step": line.get("step"),
                "role": line.get("role"),
                "text": _cut(text),
                **({"exit_code": line["exit_code"]} if "exit_code" in line else {}),
            }
        )
    if len(lines) > _SHOWN_STEPS * 3:
        shown.append(
            {
                "step": None,
                "role": "harness",
                "text": f"... {len(lines) - _SHOWN_STEPS * 3} more lines in {TRAJECTORY_FILE}",
            }
        )
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
    from pytest_mobilebench.agents.integrity import integrity_totals

    integrity = integrity_totals(live)
    return {
        **({"integrity": integrity} if integrity else {}),
        "items": n,
        "ends": dict(sorted(ends.items())),
        **{f"total_{k}": round(v, 3) for k, v in totals.items()},
        **{f"mean_{k}": round(v / n, 3) for k, v in totals.items()},
        "total_cost_usd": round(cost, 6) if priced else None,
        "priced_items": priced,
    }
