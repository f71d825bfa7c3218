"""The run page: every suite's plots present, nothing from a result rendered as markup, links relative."""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.report.page import (
    FigureSpec,
    find_plots,
    rate_series,
    write_run_page,
)
from pytest_mobilebench.report.summary import build_summary
from pytest_mobilebench.suites.base import Column

EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2"></td></tr>'

IR_PLOTS = (
    "passed_by_model",
    "outcomes_by_model",
    "by_repository",
    "by_framework",
    "by_difficulty",
    "by_category",
    "by_gold_file_count",
    "by_gold_changed_lines",
    "by_artifact_combination",
)
AG_PLOTS = (
    "passed_by_model",
    "outcomes_by_model",
    "nav_by_category",
    "failure_classes",
    "axes_by_model",
    "efficiency_by_model",
)


def issue_results(reports: Path) -> list[dict[str, Any]]:
    out = []
    for i, (model, reason) in enumerate(
        [("m1", "resolved"), ("m1", "unresolved"), ("m2", "resolved"), ("m2", "infra_error"), ("m1", "empty_patch")]
    ):
        evidence = reports / "run-1" / model / f"acme__app-{i}"
        evidence.mkdir(parents=True, exist_ok=True)
        out.append(
            {
                "instance_id": f"acme__app-{i}",
                "suite": "issue_resolution",
                "model_name_or_path": model,
                "reason": reason,
                "passed": reason == "resolved",
                "retryable": reason == "infra_error",
                "detail": EVIL,
                "evidence_dir": str(evidence),
                "cached": i == 0,
                "elapsed_s": 41.5,
                "properties": {
                    "repo": "acme/app",
                    "framework": "android",
                    "difficulty": ["easy", "hard"][i % 2],
                    "category": "bug_fix",
                    "gold_files": i + 1,
                    "gold_lines": 10 * i + 1,
                    "gold_artifacts": "code+test" if i % 2 else "code",
                    "f2p_total": 2,
                    "f2p_passed": i % 3,
                    "verdict": reason,
                },
            }
        )
    return out


def app_results() -> list[dict[str, Any]]:
    return [
        {
            "instance_id": "tabs_demo",
            "suite": "app_generation",
            "model_name_or_path": m,
            "reason": reason,
            "passed": reason == "ok",
            "retryable": False,
            "detail": "",
            "evidence_dir": "/elsewhere/not/linked",
            "properties": {
                "build_ok": True,
                "nav_pass_rate": rate,
                "reuse_rate": 0.4,
                "color_consistency": 0.9,
                "input_tokens": 1000,
                "output_tokens": 500,
            },
            "nav": [
                {"spec_id": "exists-home", "category": "page_existence", "passed": True, "failure_class": None},
                {
                    "spec_id": "tab-x",
                    "category": "tab_navigation",
                    "passed": rate == 1.0,
                    "failure_class": None if rate == 1.0 else "C4",
                },
            ],
        }
        for m, reason, rate in (("m1", "nav_failed", 0.5), ("m2", "ok", 1.0))
    ]


def make_page(tmp_path: Path, suites: dict[str, Any] | None = None) -> tuple[Path, dict[str, Any]]:
    from pytest_mobilebench.suites import builtin_registry

    registry = builtin_registry() if suites is None else suites
    reports = tmp_path / "reports"
    results = issue_results(reports) + app_results()
    tables = {}
    for name in ("issue_resolution", "app_generation"):
        if name in registry:
            tables[name] = registry[name].summarize([r for r in results if r["suite"] == name], options={})
    summary = build_summary(
        results,
        run_id="run-1",
        suite_tables=tables,
        selected={"issue_resolution": 6, "app_generation": 2},
        invalid={"issue_resolution": 1},
        manifest_errors=[f"a.yaml:3: instance 'x': field 'framwork': {EVIL}"],
        unmatched_predictions=["acme_app-1"],
        instance_ids=["acme__app-1"],
    )
    page = write_run_page(summary, results, registry, reports, summary_path=reports / "summary.json")
    return page, summary


def figure_ids(text: str) -> set[str]:
    return set(re.findall(r'<figure class="plot" id="([^"]+)"', text))


@pytest.mark.e2e
def test_every_suite_gets_its_plots_and_headline(tmp_path: Path) -> None:
    page, _ = make_page(tmp_path)
    text = page.read_text()
    expected = {f"plot-issue_resolution-{k}" for k in IR_PLOTS} | {f"plot-app_generation-{k}" for k in AG_PLOTS}
    assert figure_ids(text) == expected
    assert text.count("<svg") == len(expected)
    assert "NavPassRate" in text and "apps built" in text and "Resolution rate" in text
    assert page == tmp_path / "reports" / "run-1" / "index.html"
    by_repo = text.split('id="plot-issue_resolution-by_repository"')[1].split("</figure>")[0]
    assert ">m1<" in by_repo and ">m2<" in by_repo  # models side by side, named in the legend
    assert stat.S_IMODE(os.stat(page).st_mode) == 0o644


@pytest.mark.e2e
def test_nothing_from_a_result_becomes_markup(tmp_path: Path) -> None:
    text = make_page(tmp_path)[0].read_text()
    assert "<script" not in text and "onerror=" not in text.replace("onerror=&quot;", "")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text
    assert "script-src" not in text and "default-src 'none'" in text  # the CSP forbids every script


def test_evidence_links_are_relative_and_only_inside_the_reports_folder(tmp_path: Path) -> None:
    text = make_page(tmp_path)[0].read_text()
    hrefs = re.findall(r'href="([^"]+)"', text)
    assert "m1/acme__app-0/" in hrefs and "../summary.json" in hrefs
    assert not [h for h in hrefs if h.startswith(("file:", "/")) or "elsewhere" in h]


def test_cached_items_show_a_badge_with_the_original_duration(tmp_path: Path) -> None:
    text = make_page(tmp_path)[0].read_text()
    assert '<span class="badge">cached</span> originally 41.5 s' in text


def test_columns_come_from_the_suite(tmp_path: Path) -> None:
    text = make_page(tmp_path)[0].read_text()
    assert "<th>F2P</th>" in text and "<td>1/2</td>" in text


@dataclasses.dataclass
class FakeSuite:
    """A later suite: its own table and plots through the seam."""

    name: str = "planner"
    columns: tuple = (Column("Overall", "overall"),)
    fail: bool = False

    def summarize(self, results: Any, *, options: Any = None) -> dict[str, Any]:
        return {"by_app": {"mail": [2, 3], "maps": [0, 1]}}

    def plots(self, table: dict[str, Any]) -> list[FigureSpec]:
        if self.fail:
            raise RuntimeError("broken plot")
        cats = tuple(table["by_app"])
        return [
            FigureSpec("by_app", "Overall by app", cats, (rate_series("m", [tuple(table["by_app"][c]) for c in cats]),))
        ]


def test_the_plots_seam_takes_a_suites_own_function_and_contains_its_failure(tmp_path: Path) -> None:
    from pytest_mobilebench.suites import builtin_registry

    registry = builtin_registry()
    planner = FakeSuite()
    result = {
        "instance_id": "p-1",
        "suite": "planner",
        "model_name_or_path": "m",
        "reason": "ok",
        "passed": True,
        "properties": {"overall": 1.0},
    }
    summary = build_summary([result], run_id="r2", suite_tables={"planner": planner.summarize([])})
    page = write_run_page(summary, [result], {**registry, "planner": planner}, tmp_path)
    assert "plot-planner-by_app" in figure_ids(page.read_text())
    broken = FakeSuite(fail=True)
    page = write_run_page(summary, [result], {"planner": broken}, tmp_path)
    text = page.read_text()
    assert "plots of planner failed: RuntimeError: broken plot" in text
    assert "plot-planner-passed_by_model" in figure_ids(text)  # the generic plots stay


def test_find_plots_reads_the_plots_entry_each_suite_declares() -> None:
    from pytest_mobilebench.suites import builtin_registry
    from pytest_mobilebench.suites.issue_resolution import plots as ir_plots

    registry = builtin_registry()
    found = find_plots(registry["issue_resolution"])
    assert (found.__module__, found.__qualname__) == (ir_plots.__name__, "plots")  # identity: pytester reloads modules
    for name in ("app_generation", "device_repair", "planner"):
        assert find_plots(registry[name]).__module__ == f"pytest_mobilebench.suites.{name}.plots"
    assert find_plots(None) is None


def test_find_plots_guesses_no_module_from_a_suites_name_or_folder() -> None:
    class Undeclared:  # lives beside a plots module, declares none
        name = "issue_resolution"
        _module = "pytest_mobilebench.suites.issue_resolution"

    assert find_plots(Undeclared()) is None


@pytest.mark.parametrize("n", [0, 1])
def test_a_suite_without_results_still_gets_its_headline(tmp_path: Path, n: int) -> None:
    summary = build_summary(
        [],
        run_id="r3",
        suite_tables={},
        selected={"issue_resolution": n + 1},
        invalid={"issue_resolution": n + 1},
        manifest_errors=["x"] * (n + 1),
    )
    text = write_run_page(summary, [], {}, tmp_path).read_text()
    assert 'id="suite-issue_resolution"' in text and "Invalid instances" in text


def test_each_model_leads_with_its_own_headline_then_the_pooled_one(tmp_path: Path) -> None:
    text = make_page(tmp_path)[0].read_text()
    overview = text.split('<table class="overview">')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td><a [^>]*>([^<]+)</a></td><td>([^<]+)</td><td>([^<]+)</td></tr>", overview)
    assert [(s, m) for s, m, _ in rows if s == "issue_resolution"] == [
        ("issue_resolution", "m1"),
        ("issue_resolution", "m2"),
        ("issue_resolution", "pooled (2 models)"),
    ]
    m1 = next(h for s, m, h in rows if (s, m) == ("issue_resolution", "m1"))
    assert m1.startswith("resolution rate 1/3 = 0.333 [95% CI ")  # m1's own: 1 resolved of 3 eligible
    section = text.split('id="suite-issue_resolution"')[1]
    assert section.index('class="models"') < section.index('class="pooled"')


def test_every_item_row_has_a_verdict(tmp_path: Path) -> None:
    """The suites' Verdict column (key 'reason', a top-level result field) was empty for two suites, then
    repeated the row's reason cell; the reason cell is the verdict, once, in every row."""
    text = make_page(tmp_path)[0].read_text()
    for suite in ("issue_resolution", "app_generation"):
        table = text.split(f'id="suite-{suite}"')[1].split('<table class="instances">')[1].split("</table>")[0]
        headers = re.findall(r"<th>([^<]*)</th>", table.split("</thead>")[0])
        assert headers[2] == "reason" and "Verdict" not in headers, headers
        for row in re.findall(r"<tr class=[^>]*>(.*?)</tr>", table.split("<tbody>")[1]):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
            assert cells[2] != "" and cells[2] not in cells[3:], (suite, row[:200])


def test_an_axis_fits_its_values_and_the_legend_stands_aside() -> None:
    from pytest_mobilebench.report.page import Series, render_svg, y_top
    from pytest_mobilebench.suites.app_generation.plots import plots

    table = {
        "models": {
            m: {"build_rate": 1.0, "nav_pass_rate": 0.5, "borda": 0.5, "reuse_rate": reuse, "color_consistency": 0.9}
            for m, reuse in (("m1", 2.5), ("m2", 0.4))
        }
    }
    axes = next(f for f in plots(table) if f.key == "axes_by_model")
    assert y_top(axes) == 2.5  # ReuseRate 2.5 is not cut off a 0-1.1 axis
    assert y_top(FigureSpec("k", "t", ("a",), (Series("s", (0.3,), ((0.1, 0.7),)),))) == 1.0
    svg = render_svg(axes, "plot-x")
    assert ">m1<" in svg and ">m2<" in svg


def test_planner_and_device_repair_draw_their_own_breakdowns() -> None:
    from pytest_mobilebench.suites.device_repair.plots import plots as device_plots
    from pytest_mobilebench.suites.planner.plots import plots as planner_plots

    dims = {d: {"passed": 1, "total": 2} for d in ("basic_tool_use", "memory_usage")}
    planner = planner_plots(
        {
            "by_model": {
                "m1": {"dimensions": dims, "by_bucket": {"easy": {"passed": 1, "total": 1}}},
                "m2": {"dimensions": {}, "by_bucket": {}},
            }
        }
    )
    assert [f.key for f in planner] == ["success_by_dimension", "success_by_bucket"]
    assert planner[0].categories == ("basic", "sub-agent", "memory", "skill")
    assert planner[0].series[0].values == (0.5, None, 0.5, None)  # no task of a dimension: no bar, not 0
    device = device_plots(
        {
            "headline": {"numerator": 2, "denominator": 4, "value": 0.5, "ci95": [0.15, 0.85]},
            "pass_at_1_macro": 0.75,
            "by_model": {"m": {"total": 4, "resolved": 2, "rate": 0.5}},
            "by_repository": {"a/b": {"total": 4, "resolved": 2, "rate": 0.5}},
            "infra_by_kind": {"device_offline": 1},
            "failure_causes": {"no_production_edit": 2},
        }
    )
    assert [f.key for f in device] == ["pass_at_1", "by_model", "by_repository", "infra_by_kind", "failure_causes"]
    assert device[0].series[0].values == (0.5, 0.75)


def test_the_passed_per_model_plot_says_whether_it_is_the_headline() -> None:
    """Newcomers read 'Passed per model (NavPassRate items)' as NavPassRate; the note now says which it is."""
    from pytest_mobilebench.report.page import generic_figures

    rows = [
        {"model_name_or_path": m, "passed": p, "reason": "ok" if p else "nav_failed"}
        for m, p in (("a", True), ("b", False))
    ]
    resolution = generic_figures(rows, "resolution rate", (1, 2))[0]
    nav = generic_figures(rows, "NavPassRate", (19, 22))[0]
    overall = generic_figures(rows, "Overall", None)[0]
    assert resolution.title == nav.title == "Items passed per model"
    assert "errors): the resolution rate;" in resolution.note
    assert "errors), not the NavPassRate;" in nav.note and "errors), not the Overall;" in overall.note
