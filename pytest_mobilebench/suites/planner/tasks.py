"""Planner task manifests: ``cases/planner/*.yaml`` -> typed :class:`Task` records, each validated by replaying its
gold trajectory (a gold that errors, misses its target, or does not score 1.0 is a loud ManifestError).

File layout::

    suite: planner
    domain: calendar                 # default domain of the file's tasks
    now: "2026-03-16T09:00"          # the frozen clock
    state: {table: [rows], settings: {key: value}}   # initial device state shared by the file's tasks
    memory: [{id: m1, text: ..., category: ...}]     # the user-memory profile
    tasks:
      - id: cal-dentist-move
        dimension: basic_tool_use | subagent_collaboration | memory_usage | skill_usage
        bucket: tool_call | state_change | behaviour
        query: "..."
        history: ["user: ...", "assistant: ..."]    # optional dialogue history
        state / memory: per-task rows (replace file rows with the same id, add the others)
        skills: [trip_planner]       # skill loaders in the action space
        gold: [{tool: ..., arguments: {...}, expect_error: permission_denied}]   # ends with Finish
        expected_calls: [...]        # tool_call bucket (default: the gold's successful write calls)
        checks: [...]                # behaviour bucket
        target: [...]                # row assertions the gold's final state must satisfy (state_change)
        alternate: [...]             # optional: another route that must reach the gold's final state
        gold_memory_ids: [m1]        # memory gate
        gold_skill: trip_planner     # skill gate
        minefields: [{tool: ..., arguments: {...}}]
        harmless: [{table: alarms, columns: [time], where: {label: Swim}}]   # widens the allowed delta
        user_replies: [...]; subagent_replies: {gui_agent: {...}}; ignore_columns: [messages.body]
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic

from pytest_mobilebench.manifest.yamlfile import charge_file_problem, unknown_top_keys, validation_problem
from pytest_mobilebench.records import ManifestError
from pytest_mobilebench.suites.planner.episode import (
    MAX_STEPS,
    Call,
    parse_trajectory,
)
from pytest_mobilebench.suites.planner.grading import grade, row_assertion_holds
from pytest_mobilebench.suites.planner.model import Task, replay
from pytest_mobilebench.suites.planner.sandbox import TABLES, Sandbox

__all__ = ["load_tasks", "validate_gold"]


def _rows(table: str, value: Any) -> list[dict[str, Any]]:
    if table == "settings" and isinstance(value, Mapping):
        return [{"id": k, "value": v} for k, v in value.items()]
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise ValueError(f"state.{table}: a list of rows (mappings) is required")
    return [dict(r) for r in value]


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    merged: dict[str, list[dict[str, Any]]] = {}
    for table in {**base, **over}:
        if table not in TABLES:
            raise ValueError(f"state: unknown table {table!r}")
        by_id = {r.get("id"): r for r in _rows(table, base.get(table, []))}
        by_id.update({r.get("id"): r for r in _rows(table, over.get(table, []))})
        merged[table] = list(by_id.values())
    return merged


def _merge_memory(base: list[Any], over: list[Any]) -> list[dict[str, Any]]:
    by_id = {m["id"]: m for m in [*base, *over]}
    return list(by_id.values())


_FILE_KEYS = {"suite", "domain", "now", "state", "memory", "tasks"}


def load_tasks(path: Path, data: Mapping[str, Any], line_of: Any = None) -> list[Task | ManifestError]:
    """Every task of one manifest, validated; a broken task becomes a ManifestError naming file, line, task and field.

    Args:
        path: the manifest (for messages).
        data: the parsed mapping.
        line_of: ``YamlDocument.line_of`` for line numbers, or None.
    """
    line = (lambda i=None, f=None: line_of("tasks", i, f)) if line_of else (lambda i=None, f=None: None)
    file_problem, suggested = unknown_top_keys((path, data, line_of), _FILE_KEYS, Task.model_fields)
    if not isinstance(data.get("tasks"), list):
        return charge_file_problem([ManifestError(path, "'tasks' must be a list", field="tasks")], file_problem)
    out: list[Task | ManifestError] = []
    for i, raw in enumerate(data["tasks"]):
        tid = raw.get("id") if isinstance(raw, Mapping) else None
        try:
            if not isinstance(raw, Mapping):
                raise TypeError("a task must be a mapping")
            fields = {"domain": data.get("domain"), "now": data.get("now"), **raw}
            fields["state"] = _merge(data.get("state") or {}, raw.get("state") or {})
            fields["memory"] = _merge_memory(data.get("memory") or [], raw.get("memory") or [])
            task = Task.model_validate(fields)
        except pydantic.ValidationError as exc:
            found = validation_problem(exc, known=Task.model_fields, skip_missing=suggested)
            if found is None:  # only what the file's unknown key explains
                out.append(
                    ManifestError(
                        path,
                        file_problem.message if file_problem else str(exc),
                        line=file_problem.line if file_problem else line(i),
                        instance_id=tid,
                    )
                )
                continue
            field, message = found
            out.append(
                ManifestError(
                    path, message, line=line(i, field.split(".")[0] if field else None), instance_id=tid, field=field
                )
            )
            continue
        except (ValueError, KeyError, TypeError) as exc:
            out.append(ManifestError(path, str(exc), line=line(i), instance_id=tid, field="state"))
            continue
        problem = validate_gold(task)
        if problem:
            fld, msg = problem
            out.append(
                ManifestError(path, f"gold validation failed: {msg}", line=line(i, fld), instance_id=tid, field=fld)
            )
            continue
        out.append(task)
    return charge_file_problem(out, file_problem, id_attr="id")


def validate_gold(task: Task) -> tuple[str, str] | None:
    """Replay the gold and check it: returns ``(field, problem)`` or None when the task is sound.

    The gold must: end with ``Finish`` within the step limit; fail exactly at the steps marked ``expect_error``
    (with that code) and nowhere else; satisfy its ``target``; score 1.0 under its own checkers and gates; a
    ``Finish``-only trajectory must score 0; and the ``alternate`` route, when given, must reach the same state.
    """
    try:
        sb = Sandbox(task.id, task.now)
        sb.seed(task.state)
        sb.seed({"memory": [{"updated_at": task.now, **m} for m in task.memory]})
        calls = task.gold_calls
    except ValueError as exc:
        return "state", str(exc)
    if not calls or calls[-1].tool != "Finish" or len(calls) > MAX_STEPS:
        return "gold", f"the gold must end with Finish within {MAX_STEPS} steps"
    episode = replay(task, calls)
    for i, (raw, step) in enumerate(zip(task.gold, episode.steps, strict=True)):
        want = raw.get("expect_error", "")
        if step.error != want:
            got = step.feedback.get("error", {}).get("message", "succeeded") if step.error else "succeeded"
            return (
                "gold",
                f"step {i + 1} ({step.tool}): expected {want or 'success'}, got {step.error or 'success'}: {got}",
            )
    final = episode.sandbox.snapshot()
    for k, assertion in enumerate(task.target):
        if not row_assertion_holds(final, assertion):
            return "target", f"target[{k}] does not hold after the gold: {assertion.model_dump()}"
    gold_result = grade(task, episode)
    if gold_result["score"] != 1.0:
        return "gold", f"the gold scores {gold_result['score']}: {gold_result['detail']}"
    empty = grade(task, replay(task, [Call("Finish", {})]))
    if empty["score"] != 0.0:
        return "gold", "a Finish-only trajectory passes this task: its checks are too weak"
    if task.alternate is not None:
        alt = grade(task, replay(task, parse_trajectory(task.alternate, "alternate")))
        if not alt["state_match"]:
            return "alternate", f"the alternate route does not reach the gold's final state: {alt['detail']}"
    return None
