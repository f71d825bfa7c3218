"""Headlines: the denominators are honest, infrastructure is set apart, every rate has its Wilson interval."""

from __future__ import annotations

import pytest

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.report.headline import headlines, rate_block, suite_headline
from pytest_mobilebench.report.summary import build_summary
from pytest_mobilebench.suggest import closest, did_you_mean


def _r(iid: str, reason: str, passed: bool = False, **extra: object) -> dict:
    return {
        "instance_id": iid,
        "suite": "issue_resolution",
        "model_name_or_path": "m",
        "reason": reason,
        "passed": passed,
        "properties": {},
        **extra,
    }


def test_infra_errors_leave_the_eligible_denominator_but_not_the_over_all_one() -> None:
    results = [
        _r("a", "resolved", True),
        _r("b", "infra_error", retryable=True),
        _r("c", "infra_error", retryable=True),
    ]
    block = suite_headline("issue_resolution", results, selected=3)
    assert (block["passed"], block["eligible"], block["infra_errors"]) == (1, 1, 2)
    assert block["over_eligible"]["numerator"] == 1 and block["over_eligible"]["denominator"] == 1
    assert block["over_all"]["numerator"] == 1 and block["over_all"]["denominator"] == 3
    assert block["headline"]["label"] == "resolution rate" and block["headline"]["source"] == "generic"


def test_an_invalid_instance_stays_in_selected_and_in_the_over_all_denominator() -> None:
    block = suite_headline("issue_resolution", [_r("a", "resolved", True)], selected=2, invalid=1)
    assert (block["selected"], block["invalid"], block["evaluated"], block["not_run"]) == (2, 1, 1, 0)
    assert block["over_all"]["value"] == 0.5


def test_items_that_never_ran_are_not_run_and_count_against_over_all() -> None:
    block = suite_headline("issue_resolution", [_r("a", "resolved", True)], selected=5)
    assert block["not_run"] == 4 and block["over_all"]["denominator"] == 5


def test_a_passed_infra_result_is_not_counted_as_passed() -> None:
    """A suite (or a tampered cache entry) claiming passed on an infrastructure result gains nothing."""
    block = suite_headline("x", [_r("a", "infra_error", True, retryable=True)], selected=1)
    assert block["passed"] == 0 and block["infra_errors"] == 1


def test_cached_and_missing_predictions_are_counted() -> None:
    results = [_r("a", "resolved", True, cached=True), _r("b", "missing_prediction")]
    block = suite_headline("issue_resolution", results)
    assert (block["cached"], block["missing_predictions"], block["selected"]) == (1, 1, 2)


def test_the_suites_own_headline_is_used_with_its_secondary_rates() -> None:
    table = {
        "headline": {
            "label": "NavPassRate",
            "numerator": 5,
            "denominator": 8,
            "value": 0.625,
            "ci95": None,
            "note": "specs",
            "build_pass": {"label": "build pass", "numerator": 1, "denominator": 2},
        }
    }
    block = suite_headline("app_generation", [_r("a", "ok", True)], table=table)
    own = block["headline"]
    assert own["label"] == "NavPassRate" and own["source"] == "suite"
    assert own["ci95"] == [round(x, 6) for x in wilson_interval(5, 8)]
    assert own["secondary"][0]["label"] == "build pass"


def test_rate_block_over_nothing_is_none_with_the_whole_interval() -> None:
    assert rate_block(0, 0) == {"numerator": 0, "denominator": 0, "value": None, "ci95": [0.0, 1.0]}
    with pytest.raises(ValueError):
        rate_block(3, 2)


def test_headlines_cover_suites_with_only_invalid_instances() -> None:
    blocks = headlines([], selected={"planner": 2}, invalid={"planner": 2})
    assert blocks["planner"]["selected"] == 2 and blocks["planner"]["evaluated"] == 0


def test_summary_top_level_rate_is_over_eligible_and_suggests_instance_ids() -> None:
    results = [_r("acme__app-1", "resolved", True), _r("acme__app-2", "infra_error", retryable=True)]
    summary = build_summary(
        results,
        run_id="r",
        suite_tables={},
        unmatched_predictions=["acme_app-1"],
        instance_ids=["acme__app-1", "acme__app-2"],
        selected={"issue_resolution": 3},
    )
    assert summary["resolution_rate"] == 1.0 and summary["infra_errors"] == 1
    assert summary["resolution_rate_over_all"] == round(1 / 3, 6) and summary["not_run"] == 1
    assert summary["unmatched_suggestions"] == {"acme_app-1": "acme__app-1"}


@pytest.mark.parametrize(
    ("word", "choices", "expected"),
    [
        ("gld", ["gold", "empty"], "gold"),
        ("framwork", ["framework", "repo"], "framework"),
        ("FAIL_TO_PAS", ["FAIL_TO_PASS", "PASS_TO_PASS"], "FAIL_TO_PASS"),
        ("zzz", ["gold", "empty"], None),
    ],
)
def test_did_you_mean(word: str, choices: list[str], expected: str | None) -> None:
    assert closest(word, choices) == expected
    assert (did_you_mean(word, choices) == "") == (expected is None)


def test_a_weighted_score_is_never_shown_as_its_pass_ratio() -> None:
    """The planner's Overall (0.5/0.1/0.2/0.2 weights) is not passed/graded: shown as "0.388 (29/87 passed)",
    with no Wilson interval of the pass ratio attached to it; a plain ratio keeps its form and interval."""
    from pytest_mobilebench.report.page import _rate_cell
    from pytest_mobilebench.report.terminal import fmt_rate

    weighted = suite_headline(
        "planner",
        [],
        table={"headline": {"label": "Overall", "numerator": 29, "denominator": 87, "value": 0.388, "ci95": None}},
    )
    own = weighted["headline"]
    assert own["ci95"] is None
    assert fmt_rate(own) == "0.388 (29/87 passed)" and "29/87 passed" in _rate_cell(own)
    plain = {"numerator": 2, "denominator": 3, "value": 2 / 3, "ci95": rate_block(2, 3)["ci95"]}
    assert fmt_rate(plain).startswith("2/3 = 0.667 [95% CI ")


def test_issue_resolution_headline_names_infra_and_calls_out_infra_heavy_candidates() -> None:
    """Issue 17, item 5: persistent infra stays visible; a candidate infra far more often than gold is named."""
    from pytest_mobilebench.suites.issue_resolution import headline

    def row(model: str, i: int, infra: bool, passed: bool = False) -> dict:
        return {"model_name_or_path": model, "instance_id": f"x-{i}", "retryable": infra, "passed": passed}

    results = [row("gold", i, i == 0, passed=i != 0) for i in range(6)]
    results += [row("m", i, i < 4) for i in range(6)] + [row("fair", i, i == 0) for i in range(6)]
    block = headline(results)
    assert block["infra"] == 6 and "gold: x-0" in block["infra_left_out"] and "m: x-3" in block["infra_left_out"]
    assert "infrastructure left 6 item(s) out" in block["note"]
    assert block["infra_callouts"] == [{"model": "m", "items": 6, "infra": 4, "reference_infra": 1}]
    assert "m: infra on 4/6 items, the reference on 1" in block["note"]
    assert headline([row("m", i, True) for i in range(3)])["infra_callouts"] == []  # no reference: nothing to compare
