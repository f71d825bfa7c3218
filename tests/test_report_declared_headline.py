"""A suite's headline label and kind are declared once, on its surface, and read by its ``summarize()`` and by
the reports alike: a suite or a model with no result (Ctrl-C before anything finished, a model that finished
nothing) shows the suite's own label and format in the terminal section, summary.json and the run page, never
a generic "Pass rate 0/0"."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from pytest_mobilebench.report.headline import declared_headline, suite_headline
from pytest_mobilebench.report.page import write_run_page
from pytest_mobilebench.report.summary import build_summary
from pytest_mobilebench.report.terminal import figure_text, headline_lines
from pytest_mobilebench.states import Reason
from pytest_mobilebench.suites import (
    BUILTIN_SUITES,
    SuiteRegistry,
    builtin_registry,
    builtin_surface,
    headline_of,
)
from pytest_mobilebench.suites.base import (
    GENERIC_HEADLINE,
    Headline,
    SuiteContractError,
    check_suite,
)

#: what a user reads for each suite: (label, kind) as the suite's documentation gives them
EXPECTED = {
    "issue_resolution": ("resolution rate", "rate"),
    "app_generation": ("NavPassRate", "rate"),
    "planner": ("Overall", "score"),
    "device_repair": ("Pass@1", "rate"),
}


def test_every_builtin_suite_declares_its_headline_on_its_surface() -> None:
    assert set(EXPECTED) == set(BUILTIN_SUITES)
    for name, (label, kind) in EXPECTED.items():
        surface = builtin_surface(name)
        assert surface is not None and (surface.headline.label, surface.headline.kind) == (label, kind)
    assert builtin_registry().headlines() == {n: builtin_surface(n).headline for n in BUILTIN_SUITES}


@pytest.mark.parametrize("name", BUILTIN_SUITES)
def test_the_suites_own_table_and_the_no_result_fallback_read_one_declaration(name: str) -> None:
    """summarize([]) labels its headline with the surface's label and kind, and the report's no-table figure is
    the same text: one format whatever the selection."""
    declared = builtin_surface(name).headline
    own = builtin_registry()[name].summarize([], options={})["headline"]
    assert (own["label"], own.get("kind")) == (declared.label, declared.kind)
    with_table = suite_headline(name, [], selected=2, table={"headline": own})
    without = suite_headline(name, [], selected=2)
    assert without["headline"]["label"] == declared.label and without["headline"]["kind"] == declared.kind
    assert figure_text(without) == figure_text(with_table)


def _empty_run(name: str) -> dict[str, Any]:
    """The summary of a run interrupted before any item of ``name`` finished, two models selected."""
    return build_summary(
        [], run_id="r", suite_tables={}, selected={name: 4}, selected_models={name: {"m-a": 2, "m-b": 2}}
    )


@pytest.mark.parametrize("name", BUILTIN_SUITES)
def test_an_empty_selection_shows_the_suites_label_in_terminal_summary_and_page(name: str, tmp_path: Path) -> None:
    label, kind = EXPECTED[name]
    summary = _empty_run(name)
    document = json.loads(json.dumps(summary))  # what summary.json holds
    block = document["headlines"][name]
    for one in (block, *block["models"].values()):
        head = one["headline"]
        assert (head["label"], head["kind"]) == (label, kind)
        assert head["value"] is None and (head["numerator"], head["denominator"]) == (0, 0)
        assert set(head) >= {"label", "numerator", "denominator", "value", "ci95", "note", "source", "kind"}
    assert document["by_model"]["m-a"]["headlines"][name]["label"] == label
    lines = headline_lines(summary)
    for who in ("  m-a: ", "  m-b: ", "  pooled (2 models): "):
        line = next(line for line in lines if line.startswith(who))
        assert line.startswith(f"{who}{label} "), line
        assert "Pass rate" not in line and "pass rate" not in line
        if kind == "score":  # no Wilson interval on the score itself, and the why of its n/a
            score = line.split(" | passed ")[0]
            assert score == f"{who}{label} n/a (no result)" and "CI" not in score
            assert block["headline"]["ci95"] is None
        else:
            assert line == f"{who}{label} 0/0 = n/a"  # no interval around a missing estimate (issue 33)
    text = write_run_page(summary, [], builtin_registry(), tmp_path).read_text()
    overview = text.split('<table class="overview">')[1].split("</table>")[0]
    assert overview.count(f"<td>{label} ") == 3 and "Pass rate" not in overview and "pass rate" not in overview


def _result(suite: str, model: str, passed: bool, **extra: Any) -> dict[str, Any]:
    return {
        "instance_id": f"{suite}-1",
        "suite": suite,
        "model_name_or_path": model,
        "reason": "resolved" if passed else "unresolved",
        "passed": passed,
        "properties": {},
        **extra,
    }


@pytest.mark.parametrize("name", BUILTIN_SUITES)
def test_a_model_without_results_beside_one_with_results_keeps_the_suites_label(name: str) -> None:
    label, _ = EXPECTED[name]
    rows = [_result(name, "m-a", True)]
    summary = build_summary(
        rows,
        run_id="r",
        suite_tables={name: {"headline": {"label": label, "numerator": 1, "denominator": 1, "value": 1.0}}},
        selected={name: 2},
        selected_models={name: {"m-a": 1, "m-b": 1}},
        model_tables={name: {"m-a": {"headline": {"label": label, "numerator": 1, "denominator": 1, "value": 1.0}}}},
    )
    lone = summary["headlines"][name]["models"]["m-b"]
    assert lone["evaluated"] == 0 and lone["headline"]["label"] == label
    line = next(line for line in headline_lines(summary) if line.startswith("  m-b: "))
    assert line.startswith(f"  m-b: {label} ")


def test_results_without_a_table_compute_an_item_rate_and_never_relabel_another_figure() -> None:
    """With results but a summarize() that failed, resolution rate (items passed / eligible) is computed from
    the results; NavPassRate (navigation specs, not items) is not faked from item counts: n/a, and why."""
    rows = [_result("issue_resolution", "m", True), _result("issue_resolution", "m", False)]
    ir = suite_headline("issue_resolution", rows, table={"error": "ValueError: boom"})["headline"]
    assert (ir["label"], ir["numerator"], ir["denominator"], ir["source"]) == ("resolution rate", 1, 2, "generic")
    ag = suite_headline("app_generation", [_result("app_generation", "m", True)], table={"error": "ValueError: boom"})
    assert ag["headline"]["label"] == "NavPassRate" and ag["headline"]["value"] is None
    assert figure_text(ag) == "NavPassRate n/a (the suite's summary failed: ValueError: boom)"
    lines = headline_lines({"run_id": "r", "models": ["m"], "headlines": {"app_generation": {**ag, "models": {}}}})
    assert any("passed 1/1 = 1.000" in line and "over eligible" in line for line in lines)  # the item figure, named
    planner = suite_headline("planner", [_result("planner", "m", True)], table=None)
    assert figure_text(planner).startswith("Overall n/a (the suite's summary gave no headline) | passed 1/1")


class _ThirdParty:
    """A suite registered as an object, declaring its headline as the optional ``headline`` member."""

    name = "third_party"
    options: tuple = ()
    markers: Mapping[str, str] = MappingProxyType({})
    columns: tuple = ()
    fixtures: tuple = ()
    fixture_module = None
    headline = Headline("solved share", kind="rate")

    reasons = Reason

    def load(self, path: Any, document: Any) -> list:
        return []

    def load_dataset(self, path: Any, options: Any) -> None:
        return None

    def evaluate(self, record: Any, prediction: Any, ctx: Any) -> dict:
        return {}

    def summarize(self, results: Any, *, options: Any = None) -> dict:
        return {}

    def cache_material(self, record: Any, prediction: Any, options: Any) -> None:
        return None

    def finish_run(self, options: Any, run_id: str, results: Any) -> None:
        return None

    def regrade(self, record: Any, evidence_dir: Any) -> dict:
        return {}

    def live_model(self, options: Any) -> None:
        return None


def test_a_third_party_suite_declares_its_headline_or_gets_the_generic_one() -> None:
    registry = SuiteRegistry()
    registry.register(_ThirdParty())
    assert headline_of(object()) == GENERIC_HEADLINE and declared_headline("no_such_suite") == GENERIC_HEADLINE
    summary = build_summary(
        [], run_id="r", suite_tables={}, selected={"third_party": 1, "other": 1}, declared=registry.headlines()
    )
    assert summary["headlines"]["third_party"]["headline"]["label"] == "solved share"
    assert summary["headlines"]["other"]["headline"]["label"] == GENERIC_HEADLINE.label
    bad = _ThirdParty()
    bad.headline = "solved share"  # type: ignore[assignment]
    with pytest.raises(SuiteContractError, match="'headline' must be"):
        check_suite(bad, "third_party")
    with pytest.raises(ValueError, match="kind"):
        Headline("x", kind="ratio")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="over items"):
        Headline("x", kind="score", over_items=True)
