"""``--mb-run-budget`` (issue 33, item 6): no item starts after the deadline; the rest are ``not run`` (named
per model), the run exits 2, and a re-run resumes them with the finished ones from the result cache."""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET

import pytest

from test_reports import MANIFEST

from pytest_mobilebench.options import parse_duration

#: after each process's first benchmark item, the deadline is moved into the past (as if the item had taken the
#: whole budget): deterministic under load, and on every xdist worker
PASS_THE_DEADLINE = """
import time

def pytest_runtest_teardown(item):
    budget = item.config.pluginmanager.get_plugin("mobilebench-run-budget")
    if budget is not None:
        budget.deadline = time.monotonic() - 1
"""


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90), ("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400), ("1.5h", 5400), (" 2M ", 120)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "0", "0s", "-5", "5d", "m", "1h-3m"])
def test_what_is_not_a_duration_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_duration(text)


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_budget_stops_starting_items_and_a_rerun_resumes_them(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.makeconftest(PASS_THE_DEADLINE)
    first = pytester.runpytest(
        *workers,
        "--predictions=empty",
        "--mb-run-budget=1h",
        "--mb-run-id=b1",
        "--junitxml=junit.xml",
        "-p",
        "no:cacheprovider",
        "-rs",
    )
    ran = 1 if not workers else 2  # each process ran its first item only
    assert first.ret == pytest.ExitCode.INTERRUPTED
    first.assert_outcomes(failed=ran, skipped=4 - ran)
    first.stdout.fnmatch_lines(
        [
            f"*| not run {4 - ran}",
            f"the run budget (1h) ran out: {4 - ran} item(s) not started, counted in 'not run'*",
            "SKIPPED*not run: the run budget (--mb-run-budget 1h) ran out before this item started*",
        ]
    )
    summary = json.loads((pytester.path / "reports" / "b1" / "summary.json").read_text())
    assert summary["run_budget"] == {"seconds": 3600.0, "ran_out": True, "not_started": 4 - ran}
    assert summary["exitstatus"] == 2 and summary["interrupted"] is False
    assert len(summary["not_run_instances"]) == len(summary["by_model"]["empty"]["not_run_ids"]) == 4 - ran
    assert summary["headlines"]["issue_resolution"]["over_all"]["denominator"] == 4
    page = (pytester.path / "reports" / "b1" / "index.html").read_text()
    assert f"The run budget ran out: {4 - ran} item(s) not started" in page
    cases = {c.get("name"): c for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")}
    assert sum(c.find("skipped") is not None for c in cases.values()) == 4 - ran  # CI sees which did not start
    second = pytester.runpytest(*workers, "--predictions=empty", "--mb-run-id=b2", "-p", "no:cacheprovider")
    assert second.ret == pytest.ExitCode.TESTS_FAILED  # every item ran: empty patches fail, as they should
    second.stdout.fnmatch_lines([f"*selected 4 | evaluated 4 | * | cached {ran} | not run 0"])
    again = json.loads((pytester.path / "reports" / "b2" / "summary.json").read_text())
    assert "run_budget" not in again and again["by_model"]["empty"]["not_run_ids"] == []


@pytest.mark.e2e
def test_a_budget_that_does_not_run_out_changes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest("--predictions=empty", "--mb-run-budget=2h", "--mb-run-id=b", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=4)
    summary = json.loads((pytester.path / "reports" / "b" / "summary.json").read_text())
    assert summary["run_budget"] == {"seconds": 7200.0, "ran_out": False, "not_started": 0}


def test_a_bad_duration_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--predictions=empty", "--mb-run-budget=soon")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mb-run-budget*'soon' is not a duration*"])
