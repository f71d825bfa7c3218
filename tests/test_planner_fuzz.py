"""Property tests: whatever a candidate sends, the sandbox answers with feedback (never a harness exception, which
would turn into a retried infra error a candidate could trigger at will), and a refused call changes nothing."""

from __future__ import annotations

import functools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_mobilebench.manifest import read_yaml
from pytest_mobilebench.suites.planner import SUITE
from pytest_mobilebench.suites.planner.catalog import catalog
from pytest_mobilebench.suites.planner.grading import canon
from pytest_mobilebench.suites.planner.model import new_episode

CASES = Path(__file__).resolve().parent.parent / "cases" / "planner"
TOOLS = catalog()


@functools.lru_cache(maxsize=1)
def _tasks() -> list:
    return [r.record for p in sorted(CASES.glob("*.yaml")) for r in SUITE.load(p, read_yaml(p))]


def _ids(task) -> list[str]:
    return sorted({str(row["id"]) for rows in task.state.values() for row in rows} | {m["id"] for m in task.memory})


SCALARS = st.one_of(
    st.text(max_size=12),
    st.integers(-5, 200),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            "2026-03-17T10:00",
            "2026-02-30T10:00",
            "07:30",
            "2026-04-10",
            "+447700900222",
            "wifi",
            "notes",
            "location",
            "a@b.example",
            "Porto",
            "Berlin",
            "' OR 1=1 --",
        ]
    ),
)


def _value(task, prop: dict):
    if "enum" in prop:
        return st.one_of(st.sampled_from(prop["enum"]), SCALARS)
    if prop.get("type") == "array" or "anyOf" in prop:
        return st.one_of(
            st.lists(st.sampled_from(_ids(task)) | SCALARS, max_size=3), SCALARS, st.sampled_from(_ids(task))
        )
    if prop.get("type") == "object":
        return st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2) | SCALARS
    return st.one_of(st.sampled_from(_ids(task)), SCALARS)


@st.composite
def calls(draw):
    task = draw(st.sampled_from(_tasks()))
    seq = []
    for _ in range(draw(st.integers(1, 6))):
        name = draw(st.sampled_from(sorted(TOOLS)))
        props = TOOLS[name].schema["function"]["parameters"].get("properties", {})
        args = {k: draw(_value(task, p)) for k, p in props.items() if draw(st.booleans())}
        if draw(st.integers(0, 9)) == 0:
            args["unexpected"] = 1
        seq.append((name, args))
    return task, seq


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_any_call_gets_feedback_and_refusals_change_nothing(example) -> None:
    task, seq = example
    ep = new_episode(task)
    ep.action_space[:] = sorted(TOOLS)  # reach every tool, not only the recalled ones
    for name, args in seq:
        before = ep.sandbox.snapshot()
        feedback = ep.call(name, args)
        if feedback is None:
            break
        assert set(feedback) in ({"ok", "result"}, {"ok", "error"})
        if not feedback["ok"]:
            assert ep.sandbox.snapshot() == before, (name, args, feedback)


@given(
    st.recursive(
        st.one_of(st.text(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=8,
    )
)
def test_canon_is_idempotent(value) -> None:
    assert canon(canon(value)) == canon(value)
