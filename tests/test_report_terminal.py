"""Terminal headlines and progress lines: the facts, and nothing a candidate can forge on the terminal."""

from __future__ import annotations

from pytest_mobilebench.report.progress import (
    Board,
    finished_line,
    fmt_seconds,
    item_seconds,
    status_line,
)
from pytest_mobilebench.report.summary import build_summary
from pytest_mobilebench.report.terminal import headline_lines, printable


def _summary() -> dict:
    results = [
        {"instance_id": "a-1", "suite": "issue_resolution", "model_name_or_path": "m", "reason": "resolved",
         "passed": True, "properties": {}},
        {"instance_id": "a-2", "suite": "issue_resolution", "model_name_or_path": "m", "reason": "infra_error",
         "passed": False, "retryable": True, "properties": {}},
    ]
    return build_summary(results, run_id="r1", suite_tables={}, selected={"issue_resolution": 4},
                         invalid={"issue_resolution": 1}, manifest_errors=["a.yaml:9: instance 'a-3': field 'framwork'"])


def test_headline_lines_name_every_count_and_both_rates() -> None:
    text = "\n".join(headline_lines(_summary(), summary_path="reports/summary.json", page_path="reports/r1/index.html"))
    assert "issue_resolution: Resolution rate 1/1 = 1.000 [95% CI 0.207, 1.000]" in text
    assert "passed 1/4 = 0.250" in text and "over all selected" in text
    assert "selected 4 | evaluated 2 | invalid 1 | missing predictions 0 | infra errors 1 | cached 0 | not run 1" in text
    assert "invalid instances: 1 (the run fails until they are fixed)" in text
    assert "run page: reports/r1/index.html" in text


def test_control_characters_from_results_are_shown_not_obeyed() -> None:
    forged = "x\r\x1b[2Kissue_resolution: Resolution rate 9/9 = 1.000"
    assert "\r" not in printable(forged) and "\x1b" not in printable(forged)
    assert printable(forged).startswith("x\\x0d\\x1b[2K")
    line = finished_line(forged, "resolved\n", 1.0)
    assert "\n" not in line and "\r" not in line


def test_status_line_counts_workers_elapsed_and_eta() -> None:
    board = Board(started=0.0, total=10, done=4, passed=3, infra=1, cached=2,
                  workers={"gw0": "counter-2: building image", "gw1": "counter-3"})
    line = status_line(board, now=40.0, width=500)
    assert line.startswith("mobilebench 4/10 | passed 3 | infra 1 | cached 2 | gw0: counter-2: building image")
    assert line.endswith("40s | ETA 1m00s")  # 6 left x 40 s / 4 done
    assert len(status_line(board, now=40.0, width=30)) == 30


def test_eta_is_unknown_before_the_first_item_finishes() -> None:
    assert status_line(Board(started=0.0, total=3), now=5.0).endswith("ETA ?")


def test_cached_items_report_their_original_duration() -> None:
    assert finished_line("a-1", "resolved", 0.01, cached_from=41.2) == "finished a-1: resolved (cached, originally 41.2 s)"
    assert item_seconds({"elapsed_s": 41.2, "properties": {"duration_s": 3.0}}, 0.0) == 41.2
    assert item_seconds({"properties": {"eval_seconds": 7}}, 0.0) == 7.0
    assert item_seconds({"elapsed_s": True}, 2.5) == 2.5
    assert (fmt_seconds(59.6), fmt_seconds(185), fmt_seconds(3720)) == ("1m00s", "3m05s", "1h02m")


def test_two_planner_models_give_one_overall_each_and_no_pooled_na() -> None:
    """Issue 24: under two models the planner headline read ``Overall 116/174 = n/a``."""
    from pytest_mobilebench.report.headline import suite_headline
    from pytest_mobilebench.report.terminal import headline_lines
    from pytest_mobilebench.suites.planner.report import summarize_results

    rows = [{"model_name_or_path": m, "passed": p, "reason": "passed" if p else "failed", "planner": {"model": m, "dimension": "basic_tool_use", "category": "clock", "domain": "clock", "bucket": "x", "runs": [], "recovery_task": False, "usage": {}}}
            for m, p in (("a", True), ("a", True), ("b", False), ("b", True))]
    block = suite_headline("planner", rows, table=summarize_results(rows))
    lines = headline_lines({"run_id": "r", "models": ["a", "b"], "headlines": {"planner": block}})
    assert "n/a" not in lines[1] and lines[1].startswith("planner: Overall (2 models")
    assert any(line.strip().startswith("Overall a ") for line in lines) and any(line.strip().startswith("Overall b ") for line in lines)
