"""App generation's NavPassRate never leaves an app out: an app that did not build counts all its specs as
failed (it used to give ``NavPassRate 0/0 = n/a``), and the headline line says how many apps built."""

from __future__ import annotations

from pytest_mobilebench.report.headline import suite_headline
from pytest_mobilebench.report.terminal import figure_text
from pytest_mobilebench.suites.app_generation.rates import headline


def _app(app: str, built: bool, nav: list[bool], specs: int, retryable: bool = False) -> dict:
    return {
        "instance_id": app,
        "suite": "app_generation",
        "model_name_or_path": "m",
        "retryable": retryable,
        "reason": "ok" if built and all(nav) else ("nav_failed" if built else "build_failed"),
        "passed": built and bool(nav) and all(nav),
        "properties": {"build_ok": built},
        "nav_specs": specs,
        "nav": [{"spec_id": f"s{i}", "passed": p} for i, p in enumerate(nav)],
    }


def test_an_unbuilt_app_counts_its_specs_as_failed() -> None:
    only = headline([_app("tabs_demo", False, [], 11)])
    assert (only["numerator"], only["denominator"], only["value"]) == (0, 11, 0.0)
    assert only["build_pass"]["numerator"] == 0 and only["aside"] == "0/1 apps built"
    mixed = headline(
        [_app("a", True, [True, True, False], 3), _app("b", False, [], 11), _app("c", False, [], 5, retryable=True)]
    )  # infrastructure: out of both figures
    assert (mixed["numerator"], mixed["denominator"]) == (2, 14) and mixed["aside"] == "1/2 apps built"
    assert mixed["infra"] == 1 and "an app that did not build counts all its specs as failed" in mixed["note"]


def test_the_headline_line_says_how_many_apps_built() -> None:
    results = [_app("tabs_demo", False, [], 11)]
    block = suite_headline("app_generation", results, selected=1, table={"headline": headline(results)})
    line = figure_text(block)
    assert line.startswith("NavPassRate 0/11 = 0.000 [95% CI 0.000, ") and line.endswith("(0/1 apps built)")


def test_a_cached_result_without_the_spec_count_reads_the_build_property() -> None:
    old = _app("tabs_demo", False, [], 0)
    del old["nav_specs"]
    old["properties"]["nav_total"] = 11
    assert headline([old])["denominator"] == 11
