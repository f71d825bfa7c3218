"""Pure grading of one episode (MobilePA-Bench, seed 004, Section 3 "verification" and Fig. 5).

A task's primary checker is fixed by its bucket:

* ``tool_call``: the episode's successful WRITE calls, in order, match the expected calls one to one (tool name
  and arguments; reads, failed calls and recoveries in between are allowed; an extra write is a mismatch);
* ``state_change``: the terminal database delta (:func:`.sandbox.state_delta`, generated ids / timestamps and the
  task's ``ignore_columns`` left out, values canonicalised) equals the gold trajectory's delta replayed on a
  fresh sandbox;
* ``behaviour``: every explicit check holds (:class:`.tasks.Check`).

In every bucket the task's ``target`` row assertions hold in the final state (they constrain ignored free-text
columns, e.g. a message body must contain the time), and no write falls outside the allowed delta (the gold's,
widened only by the task's ``harmless`` declarations: :mod:`.collateral`; the result names each such write).

Then the gates: memory retrieval (every ``gold_memory_ids`` record was returned by a successful
``search_user_memory``) and skill loading (``gold_skill`` was loaded and no other skill loader was called; the
extra loads are reported). A successful call matching a minefield zeroes the task. Score = 1.0 when the primary
checker, the targets, the collateral check, every applicable gate and no minefield hold, else 0.0.

Canonical values (:func:`canon`): strings case-folded, whitespace collapsed, surrounding quotes and final ``.!?``
dropped, numeric strings read as numbers (``"1,000.50"`` as 1000.5), currency symbols and names read as ISO codes (``€``
/ ``euro`` -> ``eur``); numbers as floats rounded to 6 places; lists sorted; booleans kept.
Argument specs: a value (canonical equality), ``{any_of: [...]}``, ``{contains: [...]}`` (every fragment occurs
in the canonical string) or ``{any: true}``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from pytest_mobilebench.suites.planner import collateral
from pytest_mobilebench.suites.planner.catalog import catalog
from pytest_mobilebench.suites.planner.episode import Episode, Step
from pytest_mobilebench.suites.planner.model import CallSpec, Task, new_episode, replay
from pytest_mobilebench.suites.planner.sandbox import (
    GENERATED_COLUMNS,
    Snapshot,
    delta_equal,
    state_delta,
)

__all__ = ["canon", "collateral_writes", "expected_calls", "gold_delta", "grade", "row_assertion_holds", "spec_matches"]

#: what a numeric string looks like ("nan", "inf" and "1_000" stay strings, though float() reads them).
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?")

#: currency symbols and names -> ISO 4217 codes (case-folded), for argument and answer comparisons.
_CURRENCIES = {
    "€": "eur",
    "euro": "eur",
    "euros": "eur",
    "$": "usd",
    "us$": "usd",
    "us dollar": "usd",
    "us dollars": "usd",
    "£": "gbp",
    "pound sterling": "gbp",
    "pounds sterling": "gbp",
}


def canon(value: Any) -> Any:
    """The canonical form used by every comparison (see the module docstring)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return round(float(value), 6)
    if isinstance(value, str):
        text = re.sub(r"\s+", " ", value.casefold()).strip().strip("\"'").rstrip(".!?").strip()
        text = _CURRENCIES.get(text, text)
        if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", text):  # "1,000.50": thousands separators
            text = text.replace(",", "")
        return round(float(text), 6) if _NUMBER.fullmatch(text) else text
    if isinstance(value, (list, tuple)):
        return sorted((canon(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if isinstance(value, Mapping):
        return {str(k): canon(v) for k, v in value.items()}
    return value


def _text(value: Any) -> str:
    """Case-folded, whitespace-collapsed text of a value (numbers as written: "20" stays "20")."""
    return re.sub(r"\s+", " ", str(value).casefold()).strip()


def spec_matches(spec: Any, value: Any) -> bool:
    """Does ``value`` satisfy the argument spec (value / any_of / contains / any)?"""
    if isinstance(spec, Mapping) and set(spec) == {"any"}:
        return bool(spec["any"])
    if isinstance(spec, Mapping) and set(spec) == {"any_of"}:
        return any(spec_matches(s, value) for s in spec["any_of"])
    if isinstance(spec, Mapping) and set(spec) == {"contains"}:
        text = _text(value)
        return all(_text(f) in text for f in spec["contains"])
    return canon(spec) == canon(value)


def _arg(arguments: Mapping[str, Any], path: str) -> Any:
    node: Any = arguments
    for part in path.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def call_matches(spec: Any, step: Step, *, strict: bool = True) -> bool:
    """A successful step matches a :class:`.tasks.CallSpec`. ``strict`` (expected calls): an argument neither
    specified nor optional must be at its schema default, and an optional one is at its default (left out) or
    matches its spec (``optional`` as a mapping: :func:`expected_calls` resolves a list of names to the gold's
    values); not ``strict`` (minefields, ``called`` checks): unspecified arguments are free."""
    if not step.ok or step.tool != spec.tool or not isinstance(step.arguments, Mapping):
        return False
    if not all(spec_matches(v, _arg(step.arguments, k)) for k, v in spec.arguments.items()):
        return False
    if not strict:
        return True
    fields = catalog()[spec.tool].model.model_fields
    optional = spec.optional if isinstance(spec.optional, Mapping) else dict.fromkeys(spec.optional, {"any": True})
    for name, value in step.arguments.items():
        if name in spec.arguments:
            continue
        at_default = not fields[name].is_required() and canon(value) == canon(fields[name].default)
        if not at_default and not (name in optional and spec_matches(optional[name], value)):
            return False
    return True


def _writes(episode: Episode) -> list[Step]:
    tools = catalog()
    return [s for s in episode.steps if s.ok and tools[s.tool].write]


def expected_calls(task: Any) -> list[Any]:
    """The task's expected write calls: explicit, or the gold's successful writes with their exact arguments.

    An explicit call whose ``optional`` is a list of names is paired with the gold's first write call of the same
    tool that matches its ``arguments``: each optional argument, when given, must match the gold's value for it
    (so "950 USD" fails where the gold paid 950 EUR and ``currency`` is optional); with no such gold call, an
    optional argument may only be left out."""
    gold = _writes(_gold_episode(task))
    if task.expected_calls is None:
        return [CallSpec(tool=s.tool, arguments=dict(s.arguments)) for s in gold]
    out = []
    for spec in task.expected_calls:
        if isinstance(spec.optional, list) and spec.optional:
            twin = next((g for g in gold if call_matches(spec, g, strict=False)), None)
            ref = twin.arguments if twin is not None else {}
            spec = spec.model_copy(
                update={"optional": {n: ref[n] if n in ref else {"any": False} for n in spec.optional}}
            )
        out.append(spec)
    return out


@functools.lru_cache(maxsize=512)
def _gold_episode_cached(task_json: str) -> Episode:
    task = Task.model_validate_json(task_json)
    return replay(task, task.gold_calls)


def _gold_episode(task: Any) -> Episode:
    return _gold_episode_cached(task.model_dump_json())


def _ignored(task: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for col in task.ignore_columns:
        table, _, name = col.partition(".")
        out.setdefault(table, set()).add(name)
    return out


def _delta(task: Any, before: Snapshot, after: Snapshot) -> Any:
    ignored = _ignored(task)
    trimmed = [
        {
            t: {i: {c: v for c, v in row.items() if c not in ignored.get(t, ())} for i, row in rows.items()}
            for t, rows in snap.items()
        }
        for snap in (before, after)
    ]
    return canon(json.loads(json.dumps(state_delta(*trimmed, ignore=GENERATED_COLUMNS), default=str)))


@functools.lru_cache(maxsize=512)
def _initial_snapshot(task_json: str) -> Snapshot:
    return new_episode(Task.model_validate_json(task_json)).sandbox.snapshot()


@functools.lru_cache(maxsize=512)
def _gold_delta_cached(task_json: str) -> str:
    task = Task.model_validate_json(task_json)
    return json.dumps(_delta(task, _initial_snapshot(task_json), _gold_episode_cached(task_json).sandbox.snapshot()))


def gold_delta(task: Any) -> Any:
    """The canonical delta of the task's gold trajectory on a fresh sandbox (computed once per task)."""
    return json.loads(_gold_delta_cached(task.model_dump_json()))


def episode_delta(task: Any, episode: Episode) -> Any:
    """The canonical delta of an episode against the task's initial state."""
    return _delta(task, _initial_snapshot(task.model_dump_json()), episode.sandbox.snapshot())


def row_assertion_holds(snapshot: Snapshot, assertion: Any) -> bool:
    """A :class:`.tasks.RowAssertion` against a snapshot."""
    rows = [
        r
        for r in snapshot.get(assertion.table, {}).values()
        if all(spec_matches(v, _decoded(r.get(k))) for k, v in assertion.where.items())
    ]
    if assertion.absent:
        return not rows
    return any(all(spec_matches(v, _decoded(r.get(k))) for k, v in assertion.expect.items()) for r in rows)


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _check_tool_calls(task: Any, episode: Episode) -> tuple[bool, str]:
    want, got = expected_calls(task), _writes(episode)
    for i, spec in enumerate(want):
        if i >= len(got):
            return False, f"expected write call {i + 1} {spec.tool} is missing"
        if not call_matches(spec, got[i]):
            return (
                False,
                f"write call {i + 1}: expected {spec.tool} {spec.arguments}, got {got[i].tool} {got[i].arguments}",
            )
    if len(got) > len(want):
        return False, f"unexpected extra write call {got[len(want)].tool}"
    return True, "tool calls match"


def _check_state(task: Any, episode: Episode) -> tuple[bool, str]:
    if not delta_equal(episode_delta(task, episode), gold_delta(task)):
        return False, "terminal state delta differs from the gold's"
    return True, "terminal state delta equals the gold's"


def _missed_targets(task: Any, episode: Episode) -> list[int]:
    final = episode.sandbox.snapshot()
    return [i for i, a in enumerate(task.target) if not row_assertion_holds(final, a)]


@functools.lru_cache(maxsize=512)
def _gold_changes_cached(task_json: str) -> tuple[collateral.Change, ...]:
    gold = _gold_episode_cached(task_json).sandbox
    return tuple(collateral.changes(_initial_snapshot(task_json), gold.snapshot(), gold.erased))


def collateral_writes(task: Any, episode: Episode) -> list[str]:
    """The episode's writes outside the task's allowed delta, described (:mod:`.collateral`); [] when none."""
    task_json = task.model_dump_json()
    got = collateral.changes(_initial_snapshot(task_json), episode.sandbox.snapshot(), episode.sandbox.erased)
    bad = collateral.outside(
        got,
        _gold_changes_cached(task_json),
        task.harmless,
        task.ignore_columns,
        canon,
        lambda spec, value: spec_matches(spec, _decoded(value)),
    )
    return [c.describe() for c in bad]


def _first(steps: list[Step], pred: Any) -> int | None:
    return next((i for i, s in enumerate(steps) if pred(s)), None)


def _check_one(check: Any, episode: Episode) -> bool:
    steps, tools = episode.steps, catalog()
    if check.delegated:
        return any(
            s.ok
            and s.tool == f"delegate_to_{check.delegated}"
            and all(spec_matches(v, _arg(s.arguments, k)) for k, v in check.fields.items())
            for s in steps
        )
    if check.asked_user:
        asked = _first(steps, lambda s: s.ok and s.tool == "ask_user")
        wrote = _first(steps, lambda s: s.ok and tools[s.tool].write)
        return asked is not None and (wrote is None or asked < wrote)
    if check.called:
        return any(call_matches(check.called, s, strict=False) for s in steps)
    fin = _first(steps, lambda s: s.ok and s.tool == "Finish")
    if fin is None:
        return False
    answer = str(steps[fin].arguments.get("answer", "")).casefold()
    if any(_has_phrase(answer, d) for d in check.distractors):
        return False  # an answer naming the other candidates too is a hedge, not an answer
    return any(_has_phrase(answer, v) and _grounded(steps[:fin], v) for v in check.answer_contains)


def _grounded(steps: list[Step], phrase: str) -> bool:
    """Some step's feedback holds the phrase while its own arguments do not: an error that merely echoes the
    agent's input ("no flight with id '339'") is no evidence."""
    return any(
        _has_phrase(json.dumps(s.feedback).casefold(), phrase)
        and not _has_phrase(json.dumps(s.arguments, default=str).casefold(), phrase)
        for s in steps
    )


def _has_phrase(text: str, phrase: str) -> bool:
    """``phrase`` (case-folded) occurs in ``text`` as whole words: "8" is not found in "18" or "0.8"."""
    needle = re.escape(re.sub(r"\s+", " ", phrase.casefold()).strip())
    return re.search(rf"(?<![a-z0-9.]){needle}(?![a-z0-9]|\.\d)", text) is not None


def _check_behaviour(task: Any, episode: Episode) -> tuple[bool, str]:
    failed = [i for i, c in enumerate(task.checks) if not _check_one(c, episode)]
    if failed:
        return False, "behaviour checks failed: " + ", ".join(
            json.dumps(task.checks[i].model_dump(exclude_defaults=True)) for i in failed
        )
    return True, "behaviour checks hold"


_PRIMARY = {"tool_call": _check_tool_calls, "state_change": _check_state, "behaviour": _check_behaviour}


def gates(task: Any, episode: Episode) -> dict[str, bool | None]:
    """``{"memory": bool | None, "skill": bool | None}`` (None: the gate does not apply to this task).

    The skill gate applies when the task has a ``gold_skill``: it was loaded, and no other ``load_skill_*`` was
    called (refused calls included: trying every loader is shotgun loading, not choosing a skill)."""
    retrieved = {
        m["id"] for s in episode.steps if s.ok and s.tool == "search_user_memory" for m in s.feedback["result"]
    }
    return {
        "memory": set(task.gold_memory_ids) <= retrieved if task.gold_memory_ids else None,
        "skill": (task.gold_skill in episode.loaded_skills and not extra_skill_loads(task, episode))
        if task.gold_skill
        else None,
    }


def extra_skill_loads(task: Any, episode: Episode) -> list[str]:
    """Skill loaders called (successfully or not) other than the task's ``gold_skill``, in call order."""
    gold = f"load_skill_{task.gold_skill}" if task.gold_skill else None
    return list(dict.fromkeys(s.tool for s in episode.steps if s.tool.startswith("load_skill_") and s.tool != gold))


def grade(task: Any, episode: Episode) -> dict[str, Any]:
    """Grade one finished episode; plain builtins only.

    Returns:
        ``{"score": 0.0|1.0, "primary": bool, "state_match": bool, "targets_missed": [indices],
        "collateral": [described writes outside the allowed delta], "gates": {...}, "extra_skill_loads": [...],
        "minefields": [tool names hit], "steps", "errors_met", "errors_recovered", "finished", "over_limit",
        "after_finish", "detail"}``.
    """
    primary, detail = _PRIMARY[task.bucket](task, episode)
    missed = _missed_targets(task, episode)
    damage = collateral_writes(task, episode)
    gate = gates(task, episode)
    extra = extra_skill_loads(task, episode)
    mines = [m.tool for m in task.minefields if any(call_matches(m, s, strict=False) for s in episode.steps)]
    passed = primary and not missed and not damage and all(v is not False for v in gate.values()) and not mines
    notes = [detail] + [f"{name} gate failed" for name, v in gate.items() if v is False]
    notes += [f"terminal state misses target rows {missed} (free-text columns are checked there)"] if missed else []
    notes += [f"write outside the allowed delta: {d}" for d in damage]
    notes += [f"extra skill loaded: {e}" for e in extra]
    notes += [f"minefield hit: {m}" for m in mines]
    failed = [i for i, s in enumerate(episode.steps) if not s.ok]
    recovered = [i for i in failed if any(s.ok and s.tool == episode.steps[i].tool for s in episode.steps[i + 1 :])]
    return {
        "score": 1.0 if passed else 0.0,
        "primary": primary,
        "state_match": _check_state(task, episode)[0] and not missed,
        "targets_missed": missed,
        "collateral": damage,
        "gates": gate,
        "extra_skill_loads": extra,
        "minefields": mines,
        "steps": len(episode.steps),
        "errors_met": len(failed),
        "errors_recovered": len(recovered),
        "error_codes": [episode.steps[i].error for i in failed],
        "finished": episode.finished,
        "over_limit": episode.over_limit,
        "after_finish": episode.after_finish,
        "loaded_skills": list(episode.loaded_skills),
        "detail": "; ".join(notes),
    }
