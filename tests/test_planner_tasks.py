"""Every bundled planner task: gold scores 1.0, Finish-only 0, other routes to the same state pass the state
checker; the task set covers every domain, dimension and bucket; broken tasks fail validation loudly."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from pytest_mobilebench.manifest import read_yaml
from pytest_mobilebench.records import ManifestError
from pytest_mobilebench.suites.planner import SUITE
from pytest_mobilebench.suites.planner.catalog import DOMAINS
from pytest_mobilebench.suites.planner.episode import Call, parse_trajectory
from pytest_mobilebench.suites.planner.grading import grade
from pytest_mobilebench.suites.planner.tasks import load_tasks
from pytest_mobilebench.suites.planner.model import BUCKETS, DIMENSIONS, Task, replay

CASES = Path(__file__).resolve().parent.parent / "cases" / "planner"


def _load_all() -> list[Task]:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        for rec in SUITE.load(path, read_yaml(path)):
            assert not isinstance(rec, ManifestError), str(rec)
            out.append(rec.record)
    return out


TASKS = _load_all()


def test_task_set_covers_domains_dimensions_buckets() -> None:
    assert len(TASKS) >= 65
    assert {t.domain for t in TASKS} == set(DOMAINS)
    pairs = Counter((t.dimension, t.bucket) for t in TASKS)
    for dim in DIMENSIONS:
        for bucket in BUCKETS:
            assert pairs[(dim, bucket)] >= 1, (dim, bucket)
    recovery = [t for t in TASKS if any("expect_error" in s for s in t.gold)]
    assert len(recovery) >= len(TASKS) // 4
    assert len({t.id for t in TASKS}) == len(TASKS)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_gold_scores_one(task: Task) -> None:
    result = grade(task, replay(task, task.gold_calls))
    assert result["score"] == 1.0, result["detail"]
    assert result["state_match"]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_finish_only_scores_zero(task: Task) -> None:
    result = grade(task, replay(task, [Call("Finish", {"answer": "Done, everything is taken care of."})]))
    assert result["score"] == 0.0


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_detour_route_reaches_the_same_state(task: Task) -> None:
    """A different route: a refused call (bad arguments), an unrelated memory lookup, then the gold. Refused
    calls and reads change nothing, so the state checker (and here the whole task) still passes."""
    first_write = next(c.tool for c in task.gold_calls if c.tool != "Finish")
    detour = [Call(first_write, {"no_such_argument": 1}), Call("search_user_memory", {"query": "zebra crossing"})]
    result = grade(task, replay(task, [*detour, *task.gold_calls]))
    assert result["state_match"], result["detail"]
    assert result["score"] == 1.0, result["detail"]
    assert result["errors_met"] >= 1


ALTERNATES = [t for t in TASKS if t.alternate is not None]


def test_enough_hand_written_alternate_routes() -> None:
    assert len(ALTERNATES) >= 10


@pytest.mark.parametrize("task", ALTERNATES, ids=lambda t: t.id)
def test_alternate_route_passes_state_bucket(task: Task) -> None:
    alt = parse_trajectory(task.alternate)
    assert [c.tool for c in alt] != [c.tool for c in task.gold_calls]
    result = grade(task, replay(task, alt))
    assert result["state_match"], result["detail"]
    if task.bucket == "state_change" and not task.gold_memory_ids and not task.gold_skill:
        assert result["score"] == 1.0, result["detail"]


def test_alternate_without_the_skill_fails_only_the_skill_gate() -> None:
    task = next(t for t in TASKS if t.id == "set-bedtime-skill-off")
    result = grade(task, replay(task, parse_trajectory(task.alternate)))
    assert result["state_match"] and result["primary"]
    assert result["gates"]["skill"] is False and result["score"] == 0.0


def test_replay_is_deterministic() -> None:
    task = next(t for t in TASKS if t.id == "trv-porto-package-skill")
    a, b = replay(task, task.gold_calls), replay(task, task.gold_calls)
    assert a.sandbox.snapshot() == b.sandbox.snapshot()
    assert a.sandbox.op_log() == b.sandbox.op_log()


# ------------------------------------------------------------------------------- loud validation


def _one_task_file(tmp_path: Path, **changes) -> tuple[Path, dict]:
    doc = yaml.safe_load((CASES / "calendar.yaml").read_text())
    task = next(t for t in doc["tasks"] if t["id"] == "cal-lunch-create")
    task.update(changes)
    doc["tasks"] = [task]
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path, doc


def _errors(path: Path) -> list[ManifestError]:
    return [e for e in SUITE.load(path, read_yaml(path)) if isinstance(e, ManifestError)]


def test_gold_that_errors_fails_validation(tmp_path: Path) -> None:
    gold = [
        {
            "tool": "create_event",
            "arguments": {"title": "Lunch", "start": "2026-03-16T10:00", "end": "2026-03-16T11:00"},
        },
        {"tool": "Finish", "arguments": {}},
    ]
    path, _ = _one_task_file(tmp_path, gold=gold)
    [err] = _errors(path)
    assert "cal-lunch-create" in str(err) and "conflict" in str(err) and err.field == "gold"
    assert err.line is not None and str(path) in str(err)


def test_gold_missing_its_target_fails_validation(tmp_path: Path) -> None:
    path, _ = _one_task_file(
        tmp_path,
        target=[{"table": "events", "where": {"title": "Lunch with Marco"}, "expect": {"location": "Somewhere else"}}],
    )
    [err] = _errors(path)
    assert err.field == "target" and "does not hold" in str(err)


def test_checks_a_finish_only_run_passes_are_rejected(tmp_path: Path) -> None:
    path, _ = _one_task_file(tmp_path, bucket="behaviour", target=[], checks=[{"called": {"tool": "Finish"}}])
    [err] = _errors(path)
    assert "Finish-only" in str(err)


def test_unknown_state_column_and_bad_clock_are_named(tmp_path: Path) -> None:
    path, _ = _one_task_file(tmp_path, state={"events": [{"id": "e9", "colour": "red"}]})
    [err] = _errors(path)
    assert err.field == "state" and "colour" in str(err)
    path, _ = _one_task_file(tmp_path, state={"gadgets": [{"id": "g"}]})
    [err] = _errors(path)
    assert "gadgets" in str(err)
    path, _ = _one_task_file(tmp_path, now="yesterday")
    [err] = _errors(path)
    assert "yesterday" in str(err)


def test_unknown_field_and_tool_are_named(tmp_path: Path) -> None:
    path, _ = _one_task_file(tmp_path, colour="blue")
    [err] = _errors(path)
    assert err.field == "colour"
    path, _ = _one_task_file(tmp_path, minefields=[{"tool": "format_phone"}])
    [err] = _errors(path)
    assert "format_phone" in str(err)


def test_one_bad_task_does_not_stop_the_others(tmp_path: Path) -> None:
    doc = yaml.safe_load((CASES / "calendar.yaml").read_text())
    doc["tasks"][0]["dimension"] = "telepathy"
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = SUITE.load(path, read_yaml(path))
    errors = [e for e in out if isinstance(e, ManifestError)]
    assert len(errors) == 1 and errors[0].field == "dimension"
    assert len(out) - 1 == len(doc["tasks"]) - 1


def test_load_tasks_without_line_numbers() -> None:
    data = yaml.safe_load((CASES / "media.yaml").read_text())
    assert all(isinstance(t, Task) for t in load_tasks(CASES / "media.yaml", data))


def test_an_answer_check_without_distractors_is_rejected(tmp_path: Path) -> None:
    path, _ = _one_task_file(tmp_path, bucket="behaviour", target=[], checks=[{"answer_contains": ["lunch"]}])
    [err] = _errors(path)
    assert "distractors" in str(err) and err.field.startswith("checks")
    path, _ = _one_task_file(
        tmp_path, bucket="behaviour", target=[], checks=[{"called": {"tool": "create_event"}, "distractors": ["x"]}]
    )
    [err] = _errors(path)
    assert "distractors belong" in str(err)


def test_harmless_and_optional_names_are_checked(tmp_path: Path) -> None:
    path, _ = _one_task_file(tmp_path, harmless=[{"table": "events", "columns": ["colour"]}])
    [err] = _errors(path)
    assert "harmless" in str(err) and "colour" in str(err)
    path, _ = _one_task_file(tmp_path, expected_calls=[{"tool": "create_event", "optional": ["colour"]}])
    [err] = _errors(path)
    assert "colour" in str(err)


def test_canonical_values_read_currencies_and_thousands() -> None:
    from pytest_mobilebench.suites.planner.grading import canon, spec_matches

    assert canon("€") == canon("EUR") == canon(" euros ") == "eur" and canon("$") == "usd"
    assert canon("1,000.50") == 1000.5 and canon("950") == canon(950.0)
    assert canon("NAN") == "nan" == canon(canon("NaN")) and canon("1_000") == "1_000"  # float() would read them
    assert not spec_matches("EUR", "USD") and spec_matches("Henrik  DAHL", "henrik dahl")
