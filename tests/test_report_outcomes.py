"""Id lists per outcome for each model (issue 33, item 6): summary.json's ``by_model`` and models/<model>.json."""

from __future__ import annotations

from pytest_mobilebench.report.outcomes import not_run_by_model, outcome_ids
from pytest_mobilebench.report.summary import build_summary, model_report


def _r(iid: str, model: str, reason: str, passed: bool = False, **extra: object) -> dict:
    return {
        "instance_id": iid,
        "suite": "issue_resolution",
        "model_name_or_path": model,
        "reason": reason,
        "passed": passed,
        "properties": {},
        **extra,
    }


RESULTS = [
    _r("a-1", "m", "resolved", True),
    _r("a-2", "m", "unresolved"),
    _r("a-3", "m", "patch_apply_failed"),
    _r("a-4", "m", "empty_patch"),
    _r("a-5", "m", "missing_prediction"),
    _r("a-6", "m", "infra_error", retryable=True),
    _r("a-1", "n", "unresolved"),
    _r("a-2", "n", "resolved", True),
]


def test_every_result_is_in_exactly_one_list_and_under_its_reason() -> None:
    ids = outcome_ids([r for r in RESULTS if r["model_name_or_path"] == "m"], ["a-7"])
    assert ids["resolved_ids"] == ["a-1"]
    assert ids["unresolved_ids"] == ["a-2", "a-3"]  # every counted failure but an empty or missing candidate
    assert (ids["error_ids"], ids["empty_patch_ids"], ids["missing_prediction_ids"]) == (["a-6"], ["a-4"], ["a-5"])
    assert ids["not_run_ids"] == ["a-7"]
    assert ids["ids_by_reason"] == {
        "empty_patch": ["a-4"],
        "infra_error": ["a-6"],
        "missing_prediction": ["a-5"],
        "patch_apply_failed": ["a-3"],
        "resolved": ["a-1"],
        "unresolved": ["a-2"],
    }


def test_trials_are_labelled_and_not_run_items_found_per_model() -> None:
    results = [_r("a-1", "m", "resolved", True, trial=1), _r("a-1", "m", "unresolved", trial=2)]
    assert outcome_ids(results)["unresolved_ids"] == ["a-1[t2]"]
    collected = {
        "c.yaml::a-1[m-t1]": ("issue_resolution", "a-1"),
        "c.yaml::a-1[m-t2]": ("issue_resolution", "a-1"),
        "c.yaml::a-1[n-t1]": ("issue_resolution", "a-1"),
        "c.yaml::a-2[m-t1]": ("issue_resolution", "a-2"),
        "c.yaml::bad": ("issue_resolution", "bad"),
    }
    assert not_run_by_model(collected, ["m", "n"], results, ["c.yaml::bad"]) == {"m": ["a-2[t1]"], "n": ["a-1[t1]"]}
    one = {"c.yaml::a-1": ("issue_resolution", "a-1"), "c.yaml::a-2": ("issue_resolution", "a-2")}
    assert not_run_by_model(one, ["m"], [_r("a-1", "m", "resolved", True)]) == {"m": ["a-2"]}


def test_the_summary_and_the_model_report_carry_the_lists() -> None:
    summary = build_summary(RESULTS, run_id="r", suite_tables={}, not_run_ids={"n": ["a-3"]})
    assert summary["by_model"]["m"]["resolved_ids"] == ["a-1"] and summary["by_model"]["n"]["resolved_ids"] == ["a-2"]
    assert summary["by_model"]["n"]["not_run_ids"] == ["a-3"] and summary["by_model"]["m"]["not_run_ids"] == []
    report = model_report(summary, "m")
    assert report["resolved_ids"] == ["a-1"] and report["empty_patch_ids"] == ["a-4"] and report["error_ids"] == ["a-6"]
    assert "resolved_ids" not in report["totals"] and report["totals"]["resolved"] == 1  # one place in the file
