"""How a candidate planner could try to cheat, and why it does not work."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.manifest import read_yaml
from pytest_mobilebench.predictions import Prediction
from pytest_mobilebench.suites.planner import SUITE, PlannerSuite
from pytest_mobilebench.suites.planner.episode import (
    MAX_STEPS,
    Call,
    TrajectoryError,
    parse_trajectory,
)
from pytest_mobilebench.suites.planner.grading import grade
from pytest_mobilebench.suites.planner.model import Task, replay

CASES = Path(__file__).resolve().parent.parent / "cases" / "planner"


@functools.lru_cache(maxsize=1)
def _records() -> dict:
    return {rec.instance_id: rec for path in sorted(CASES.glob("*.yaml")) for rec in SUITE.load(path, read_yaml(path))}


def _task(task_id: str) -> Task:
    return _records()[task_id].record


def _grade(task: Task, calls: list[Call]) -> dict:
    return grade(task, replay(task, calls))


def test_finish_with_claims_scores_zero() -> None:
    task = _task("cal-lunch-create")
    claim = "I created the event 'Lunch with Marco' 2026-03-17T12:30-13:30 at Trattoria Roma. Verified: state ok."
    assert _grade(task, [Call("Finish", {"answer": claim})])["score"] == 0.0


def test_answer_must_be_grounded_in_tool_results() -> None:
    task = _task("eml-booking-code")  # the booking code is only in an e-mail
    guess = _grade(task, [Call("Finish", {"answer": "Your booking code is QZ7K2P."})])
    assert guess["score"] == 0.0
    honest = _grade(task, [Call("search_emails", {"query": "Lisbon"}), Call("Finish", {"answer": "QZ7K2P"})])
    assert honest["score"] == 1.0


def test_echoing_a_guess_through_an_error_is_no_evidence() -> None:
    task = _task("trv-cost-skill")  # the answer (339) is computed by a skill tool
    echo = [
        Call("load_skill_trip_planner", {}),
        Call("check_in", {"booking_id": "339"}),
        Call("Finish", {"answer": "About 339 EUR."}),
    ]
    ep = replay(task, echo)
    assert "339" in json.dumps(ep.steps[1].feedback)  # the error repeats the id it was given
    assert grade(task, ep)["score"] == 0.0


def test_handing_a_state_task_to_the_gui_agent_does_not_pass() -> None:
    task = _task("sec-lock-wallet-recover")
    dodge = [
        Call("delegate_to_gui_agent", {"app": "Settings", "goal": "set a PIN and lock the wallet app"}),
        Call("Finish", {"answer": "The wallet app is locked with a PIN."}),
    ]
    ep = replay(task, dodge)
    assert ep.steps[0].ok  # the sub-agent "did" it, but the device state did not change that way
    result = grade(task, ep)
    assert result["score"] == 0.0 and not result["state_match"]


def test_sql_in_arguments_is_stored_as_text() -> None:
    task = _task("con-add-plumber")
    evil = "x'); DROP TABLE contacts; --"
    ep = replay(
        task,
        [
            Call("add_contact", {"name": evil, "phone": "+48600700800"}),
            Call("search_contacts", {"query": "' OR 1=1 --"}),
        ],
    )
    assert [s.ok for s in ep.steps] == [True, True]
    assert ep.steps[1].feedback["result"] == []
    names = [r["name"] for r in ep.sandbox.rows("contacts")]
    assert evil in names and len(names) == len(task.state["contacts"]) + 1


def test_argument_injection_into_columns_is_refused() -> None:
    """Extra keys never reach the database (e.g. trying to set ``blocked`` or ``id`` through add_contact)."""
    task = _task("con-add-plumber")
    ep = replay(task, [Call("add_contact", {"name": "P", "phone": "+48600700800", "id": "con-mia", "blocked": 1})])
    assert ep.steps[0].error == "invalid_arguments"
    assert ep.sandbox.snapshot() == replay(task, []).sandbox.snapshot()


def test_tools_outside_the_action_space_are_refused() -> None:
    task = _task("cal-lunch-create")
    ep = replay(
        task,
        [
            Call("delete_contact", {"contact_id": "con-ana"}),
            Call("book_trip_package", {"origin": "A", "destination": "B", "date": "2026-04-01", "nights": 1}),
            Call("__import__('os')", {}),
            Call("sandbox.db.execute", {"sql": "DELETE FROM events"}),
        ],
    )
    assert [s.error for s in ep.steps] == ["unavailable"] * 4
    assert ep.sandbox.rows("contacts") and len(ep.sandbox.rows("events")) == len(task.state["events"])


def test_steps_beyond_the_limit_are_not_executed() -> None:
    task = _task("cal-lunch-create")
    padding = [Call("search_user_memory", {"query": "lunch"})] * MAX_STEPS
    ep = replay(task, [*padding, *task.gold_calls])
    assert len(ep.steps) == MAX_STEPS and ep.over_limit == len(task.gold_calls)
    result = grade(task, ep)
    assert result["score"] == 0.0 and result["over_limit"] == len(task.gold_calls)


def test_calls_after_finish_are_ignored() -> None:
    task = _task("cal-lunch-create")
    result = _grade(task, [Call("Finish", {}), *task.gold_calls])
    assert result["score"] == 0.0 and result["after_finish"] == len(task.gold_calls)


def test_spraying_extra_writes_fails_the_tool_call_bucket() -> None:
    task = _task("cal-cancel-dentist")
    spray = [Call("cancel_event", {"event_id": e}) for e in ("evt-dentist", "evt-review", "evt-standup")]
    result = _grade(task, [*spray, Call("Finish", {})])
    assert result["primary"] is False and "extra write" in result["detail"]


def test_minefield_zeroes_a_task_whose_checks_pass() -> None:
    task = _task("con-tom-ask-which")
    calls = [
        Call("search_contacts", {"query": "Tom"}),
        Call("ask_user", {"question": "Which Tom?"}),
        Call("update_contact", {"contact_id": "con-tom1", "email": "tom@newjob.example"}),
        Call("update_contact", {"contact_id": "con-tom2", "email": "tom@newjob.example"}),
        Call("Finish", {}),
    ]
    result = _grade(task, calls)
    assert result["primary"] is True and result["minefields"] == ["update_contact"] and result["score"] == 0.0


def test_memory_gate_needs_a_real_search() -> None:
    task = _task("con-call-sister-memory")
    skip_memory = [c for c in task.gold_calls if c.tool != "search_user_memory"]
    result = _grade(task, skip_memory)
    assert result["primary"] is True and result["gates"]["memory"] is False and result["score"] == 0.0
    claimed = _grade(task, [*skip_memory[:-1], Call("Finish", {"answer": "retrieved memory mem-con-1"})])
    assert claimed["score"] == 0.0


def test_wrong_sub_agent_fails_the_behaviour_check() -> None:
    task = _task("msg-whatsapp-gui")
    wrong = [Call("delegate_to_web_agent", {"goal": "send milk, eggs, spinach to Jo on WhatsApp"}), Call("Finish", {})]
    assert _grade(task, wrong)["score"] == 0.0


def test_acting_before_asking_fails() -> None:
    task = _task("set-volume-ask")
    rushed = [
        Call("set_volume", {"stream": "media", "level": 20}),
        Call("ask_user", {"question": "ok?"}),
        Call("Finish", {}),
    ]
    assert _grade(task, rushed)["score"] == 0.0


def test_a_prediction_cannot_carry_its_own_results() -> None:
    with pytest.raises(TrajectoryError, match="unknown keys"):
        parse_trajectory([{"tool": "Finish", "arguments": {}, "ok": True, "result": {"score": 1}}])
    with pytest.raises(TrajectoryError):
        parse_trajectory({"tool": "Finish"})


class _Ctx:
    def __init__(self, tmp_path: Path) -> None:
        self.evidence_dir = tmp_path
        self.options = {"mb_trials": None}
        self.run_id = "r"

    def fixture(self, name: str):
        return None

    def progress(self, message: str) -> None:
        pass


def _file(entry: dict[str, Any]) -> Prediction:
    """A predictions-file entry for the task these tests use."""
    return Prediction.from_entry({"instance_id": "med-like-song", **entry})


def test_invalid_prediction_and_self_reported_tokens(tmp_path: Path) -> None:
    rec = _records()["med-like-song"]
    bad = SUITE.evaluate(rec, _file({"model_name_or_path": "m", "trajectory": "Finish"}), _Ctx(tmp_path))
    assert bad["reason"] == "invalid_prediction" and not bad["passed"] and not bad["retryable"]
    pred = {
        "model_name_or_path": "m",
        "usage": {"input_tokens": 10, "output_tokens": True, "score": 1.0},
        "trajectory": [{"tool": "Finish", "arguments": {"answer": "liked and playing"}}],
    }
    out = SUITE.evaluate(rec, _file(pred), _Ctx(tmp_path))
    assert out["reason"] == "failed" and out["properties"]["input_tokens"] == 10
    assert out["properties"]["output_tokens"] == 0  # a bool is not a token count
    assert json.loads((tmp_path / "trajectory.json").read_text())["mode"] == "offline"
    odd = SUITE.evaluate(rec, _file({**pred, "usage": ["lots"]}), _Ctx(tmp_path))  # never a harness error
    assert odd["reason"] == "failed" and odd["properties"]["input_tokens"] == 0
    nulls = SUITE.evaluate(
        rec, _file({"model_name_or_path": "m", "trajectory": [{"tool": "Finish", "arguments": None}]}), _Ctx(tmp_path)
    )
    assert nulls["reason"] == "failed" and nulls["properties"]["errors_met"] == 1


def test_regrade_from_evidence_uses_the_same_path(tmp_path: Path) -> None:
    rec = _records()["med-like-song"]
    pred = {
        "model_name_or_path": "m",
        "trajectory": [{"tool": c.tool, "arguments": c.arguments} for c in rec.record.gold_calls],
    }
    live = PlannerSuite().evaluate(rec, _file(pred), _Ctx(tmp_path))
    again = SUITE.regrade(rec, tmp_path)
    assert live["passed"] and again["properties"] == live["properties"]
    assert (tmp_path / "run-1" / "op_log.json").exists() and (tmp_path / "run-1" / "delta.json").exists()
