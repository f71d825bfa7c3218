"""Terminal headlines and progress lines: the facts, and nothing a candidate can forge on the terminal."""

from __future__ import annotations

from pytest_mobilebench.report.progress import (
    Board,
    finished_line,
    fmt_seconds,
    item_seconds,
    status_line,
)
from pytest_mobilebench.report.summary import build_summary, selected_by_model
from pytest_mobilebench.report.terminal import headline_lines, printable


def _summary() -> dict:
    results = [
        {
            "instance_id": "a-1",
            "suite": "issue_resolution",
            "model_name_or_path": "m",
            "reason": "resolved",
            "passed": True,
            "properties": {},
        },
        {
            "instance_id": "a-2",
            "suite": "issue_resolution",
            "model_name_or_path": "m",
            "reason": "infra_error",
            "passed": False,
            "retryable": True,
            "properties": {},
        },
    ]
    return build_summary(
        results,
        run_id="r1",
        suite_tables={},
        selected={"issue_resolution": 4},
        invalid={"issue_resolution": 1},
        manifest_errors=["a.yaml:9: instance 'a-3': field 'framwork'"],
    )


def test_headline_lines_name_every_count_and_both_rates() -> None:
    text = "\n".join(headline_lines(_summary(), summary_path="reports/summary.json", page_path="reports/r1/index.html"))
    assert "issue_resolution (m): resolution rate 1/1 = 1.000 [95% CI 0.207, 1.000]" in text
    assert "passed 1/4 = 0.250" in text and "over all selected" in text
    assert (
        "selected 4 | evaluated 2 | invalid 1 | missing predictions 0 | infra errors 1 | cached 0 | not run 1" in text
    )
    assert "invalid instances: 1 (the run fails until they are fixed)" in text
    assert "run page: reports/r1/index.html" in text


def _r(iid: str, model: str, passed: bool, suite: str = "issue_resolution", **extra: object) -> dict:
    return {
        "instance_id": iid,
        "suite": suite,
        "model_name_or_path": model,
        "reason": "resolved" if passed else "unresolved",
        "passed": passed,
        "properties": {},
        **extra,
    }


def test_two_models_each_lead_with_their_own_headline_then_the_pooled_one() -> None:
    results = [
        _r("a-1", "model-a", True),
        _r("a-2", "model-a", True),
        _r("a-1", "model-b", True),
        _r("a-2", "model-b", False),
    ]
    collected = {f"c.yaml::{i}[{m}]": ("issue_resolution", i) for i in ("a-1", "a-2") for m in ("model-a", "model-b")}
    summary = build_summary(
        results,
        run_id="r",
        suite_tables={},
        selected={"issue_resolution": 4},
        selected_models=selected_by_model(collected, ["model-a", "model-b"]),
    )
    lines = headline_lines(summary)
    heads = [line for line in lines if line.startswith("  ") and not line.startswith("    ")]
    assert heads == [
        "  model-a: resolution rate 2/2 = 1.000 [95% CI 0.342, 1.000]",
        "  model-b: resolution rate 1/2 = 0.500 [95% CI 0.095, 0.905]",
        "  pooled (2 models): resolution rate 3/4 = 0.750 [95% CI 0.301, 0.954]",
    ]
    assert lines.index(heads[0]) < lines.index(heads[2])  # per model first, pooled last
    assert "    selected 2 | evaluated 2 | invalid 0" in "\n".join(lines)
    block = summary["headlines"]["issue_resolution"]
    assert block["pooled"] and block["models"]["model-b"]["over_all"]["denominator"] == 2
    assert summary["by_model"]["model-b"]["headlines"]["issue_resolution"]["numerator"] == 1


def _planner_table(dims: dict[str, tuple[int, int]]) -> dict:
    from pytest_mobilebench.suites.planner.report import overall

    success = {d: (p / t if t else None) for d, (p, t) in dims.items()}
    passed, tasks = sum(p for p, _ in dims.values()), sum(t for _, t in dims.values())
    return {
        "headline": {
            "label": "Overall",
            "numerator": passed,
            "denominator": tasks,
            "value": overall(success),
            "ci95": None,
            "kind": "score",
            "unavailable": "needs a task of all four dimensions",
        }
    }


def test_a_weighted_headline_keeps_one_short_format_on_any_subset() -> None:
    """The planner's Overall on a subset once read 'Overall 6/7 = n/a [95% CI 0.487, 0.974]'."""
    full = {"basic_tool_use": (3, 4), "subagent_collaboration": (1, 1), "memory_usage": (1, 1), "skill_usage": (1, 1)}
    subset = {"basic_tool_use": (6, 7), "subagent_collaboration": (0, 0), "memory_usage": (0, 0), "skill_usage": (0, 0)}
    texts = []
    for dims in (full, subset):
        n = sum(t for _, t in dims.values())
        k = sum(p for p, _ in dims.values())
        results = [_r(f"t{i}", "m", i < k, suite="planner") for i in range(n)]
        summary = build_summary(results, run_id="r", suite_tables={"planner": _planner_table(dims)})
        texts.append(headline_lines(summary)[1])
    assert texts[0] == "planner (m): Overall 0.875 | passed 6/7 = 0.857 [95% CI 0.487, 0.974]"
    assert (
        texts[1]
        == "planner (m): Overall n/a (needs a task of all four dimensions) | passed 6/7 = 0.857 [95% CI 0.487, 0.974]"
    )
    assert all(len(t) < 120 and "= n/a [" not in t for t in texts)


def test_a_long_or_hostile_model_name_keeps_the_headline_short() -> None:
    name = "org/" + "x" * 200 + "\x1b[31m"
    results = [_r("a-1", name, True), _r("a-1", "b", False)]
    summary = build_summary(results, run_id="r", suite_tables={})
    heads = [line for line in headline_lines(summary) if ": resolution rate" in line]
    assert len(heads) == 3 and all(len(line) < 120 and "\x1b" not in line for line in heads)


def test_control_characters_from_results_are_shown_not_obeyed() -> None:
    forged = "x\r\x1b[2Kissue_resolution: resolution rate 9/9 = 1.000"
    assert "\r" not in printable(forged) and "\x1b" not in printable(forged)
    assert printable(forged).startswith("x\\x0d\\x1b[2K")
    line = finished_line(forged, "resolved\n", 1.0)
    assert "\n" not in line and "\r" not in line


def test_status_line_counts_workers_elapsed_and_eta() -> None:
    board = Board(started=0.0, total=10, done=4, passed=3, infra=1, cached=2)
    board.running.start("gw0", "counter-2")
    board.running.note("gw0", "counter-2: building image")
    board.running.start("gw1", "counter-3")
    line = status_line(board, now=40.0, width=500)
    assert line.startswith("mobilebench 4/10 | passed 3 | infra 1 | cached 2 | gw0: counter-2: building image")
    assert line.endswith("40s | ETA 1m00s")  # 6 left x 40 s / 4 done
    assert len(status_line(board, now=40.0, width=30)) == 30


def test_eta_is_unknown_before_the_first_item_finishes() -> None:
    assert status_line(Board(started=0.0, total=3), now=5.0).endswith("ETA ?")


def test_cached_items_report_their_original_duration() -> None:
    assert (
        finished_line("a-1", "resolved", 0.01, cached_from=41.2) == "finished a-1: resolved (cached, originally 41.2 s)"
    )
    assert item_seconds({"elapsed_s": 41.2, "properties": {"duration_s": 3.0}}, 0.0) == 41.2
    assert item_seconds({"properties": {"eval_seconds": 7}}, 0.0) == 7.0
    assert item_seconds({"elapsed_s": True}, 2.5) == 2.5
    assert (fmt_seconds(59.6), fmt_seconds(185), fmt_seconds(3720)) == ("1m00s", "3m05s", "1h02m")


def test_two_planner_models_give_one_overall_each_and_no_pooled_na() -> None:
    """Issue 24: under two models the planner headline read ``Overall 116/174 = n/a``."""
    from pytest_mobilebench.report.headline import suite_headline
    from pytest_mobilebench.report.terminal import headline_lines
    from pytest_mobilebench.suites.planner.report import summarize_results

    rows = [
        {
            "model_name_or_path": m,
            "passed": p,
            "reason": "passed" if p else "failed",
            "planner": {
                "model": m,
                "dimension": "basic_tool_use",
                "category": "clock",
                "domain": "clock",
                "bucket": "x",
                "runs": [],
                "recovery_task": False,
                "usage": {},
            },
        }
        for m, p in (("a", True), ("a", True), ("b", False), ("b", True))
    ]
    block = suite_headline("planner", rows, table=summarize_results(rows))
    lines = headline_lines({"run_id": "r", "models": ["a", "b"], "headlines": {"planner": block}})
    # no pooled figure that reads as a ratio with no value: the pooled block says the Overall is per model only
    # (each model's own Overall leads the terminal from the summary's per-model headlines: test_report_headline)
    assert "= n/a" not in lines[1] and "3/4 = n/a" not in " ".join(lines), lines
    assert lines[1].startswith("planner: Overall n/a (per model only)"), lines


def test_an_interrupted_run_names_the_models_it_selected() -> None:
    """Ctrl-C before any item finished printed 'run r: models -' above one block per selected model."""
    from pytest_mobilebench.report.summary import build_summary
    from pytest_mobilebench.report.terminal import headline_lines

    summary = build_summary(
        [],
        run_id="r",
        suite_tables={},
        selected={"app_generation": 2},
        selected_models={"app_generation": {"m-a": 1, "m-b": 1}},
    )
    assert summary["models"] == ["m-a", "m-b"] and summary["suites"] == ["app_generation"]
    assert headline_lines(summary)[0] == "run r: models m-a, m-b"


def test_n_a_is_printed_without_an_interval() -> None:
    """Issue 33: ``0/0 = n/a [95% CI 0.000, 1.000]`` bounded an estimate that does not exist."""
    from pytest_mobilebench.report.page import _rate_cell
    from pytest_mobilebench.report.sections import _ci
    from pytest_mobilebench.report.terminal import fmt_rate

    empty = {"numerator": 0, "denominator": 0, "value": None, "ci95": [0.0, 1.0]}
    assert fmt_rate(empty) == "0/0 = n/a"
    assert _rate_cell(empty) == "0/0 = <b>n/a</b>" and _ci(empty) == "n/a"
    some = {"numerator": 1, "denominator": 2, "value": 0.5, "ci95": [0.095, 0.905]}
    assert fmt_rate(some) == "1/2 = 0.500 [95% CI 0.095, 0.905]" and _ci(some) == "0.500 [95% CI 0.095, 0.905]"
    lines = headline_lines(build_summary([], run_id="r", suite_tables={}, selected={"issue_resolution": 1}))
    assert "issue_resolution: resolution rate 0/0 = n/a" in lines and not any("n/a [" in line for line in lines), lines
