"""Manifest and prediction parsing of the app-generation suite (pure)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.suites.app_generation import SUITE, AppGenReason
from pytest_mobilebench.suites.app_generation.manifest import (
    NavCategory,
    parse_manifest,
    parse_prediction,
)
from pytest_mobilebench.records import LoadedRecord, ManifestError

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "cases" / "app_generation" / "tabs_demo.yaml"


def _doc() -> dict[str, Any]:
    return yaml.safe_load(CASE.read_text(encoding="utf-8"))


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    for screen in doc["screens"].values():
        screen.pop("screenshot", None)
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_bundled_manifest_loads_with_absolute_screenshots() -> None:
    records = SUITE.load(CASE, _doc())
    assert len(records) == 1
    rec = records[0]
    assert isinstance(rec, LoadedRecord)
    assert (rec.instance_id, rec.suite, rec.group) == ("tabs_demo", "app_generation", "app_generation:tabs_demo")
    m = rec.record
    assert m.expected_routes == ["/", "/search", "/profile", "/profile/settings"]
    assert Path(m.screens["home"].screenshot).is_file()
    cats = [s.category for s in m.nav_tests]
    assert cats.count(NavCategory.PAGE_EXISTENCE) == 4
    assert cats.count(NavCategory.TAB_NAVIGATION) == 4
    assert cats.count(NavCategory.PARENT_CHILD) == 3
    assert m.nav_tests[0].source_screen == "home"  # page existence: source defaults to target
    assert [h.strategy for h in m.nav_tests[4].action] == ["role", "tab_index"]


@pytest.mark.parametrize(
    ("mutate", "field", "needle"),
    [
        (lambda d: d["nav_tests"][4].update(target="nowhere"), None, "unknown screen 'nowhere'"),
        (lambda d: d["nav_tests"][5].update(id="tab-home-to-search"), None, "duplicate spec id"),
        (lambda d: d["nav_tests"][4].update(category="swipe"), "nav_tests.4.category", "page_existence"),
        (lambda d: d["nav_tests"][0].update(action=[{"text": "x"}]), "nav_tests.0", "take no action"),
        (lambda d: d["nav_tests"][4]["action"][0].update(text="Search"), "nav_tests.4.action.0", "exactly one"),
        (lambda d: d["screens"]["home"].update(route="home"), "screens.home.route", "starting with '/'"),
        (lambda d: d["screens"]["home"].update(route="/u/:id"), "screens.home.route", "concrete"),
        (lambda d: d.update(suite="planner"), "suite", "app_generation"),
        (lambda d: d["nav_tests"][6].pop("action"), "nav_tests.6", "at least one action hint"),
    ],
)
def test_invalid_manifest_names_file_app_field_and_line(
    tmp_path: Path, mutate: Any, field: str | None, needle: str
) -> None:
    doc = _doc()
    mutate(doc)
    path = _write(tmp_path, doc)
    out = SUITE.load(path, yaml.safe_load(path.read_text(encoding="utf-8")))
    assert len(out) >= 1 and all(isinstance(e, ManifestError) for e in out)
    err = out[0]
    assert err.path == str(path)
    assert err.instance_id == "tabs_demo"
    assert needle in str(err)
    if field is not None:
        assert err.field == field
        assert err.line is not None and (err.line > 1 or field == "suite")


def test_missing_screenshot_is_a_manifest_error(tmp_path: Path) -> None:
    doc = _doc()
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")  # screenshots relative to tmp_path: absent
    with pytest.raises(ManifestError) as info:
        parse_manifest(path, doc)
    assert info.value.field == "screens.home.screenshot"
    assert "not found" in str(info.value)


def test_prediction_paths_resolve_against_predictions_dir(tmp_path: Path) -> None:
    pred = parse_prediction(
        {
            "instance_id": "a",
            "model_name_or_path": "m",
            "project_path": "runs/a",
            "prebuilt_dist": "/abs/dist",
            "input_tokens": 5,
        },
        tmp_path,
    )
    assert pred.project_path == str(tmp_path / "runs" / "a")
    assert pred.prebuilt_dist == "/abs/dist"
    assert (pred.input_tokens, pred.output_tokens, pred.llm_calls, pred.llm_seconds) == (5, 0, 0, 0.0)


@pytest.mark.parametrize(
    ("pred", "needle"),
    [
        ({"instance_id": "a", "model_name_or_path": "m"}, "project_path"),
        ({"instance_id": "a", "model_name_or_path": "m", "project_path": "x", "input_tokens": -1}, "input_tokens"),
        ({"instance_id": "a", "project_path": "x"}, "model_name_or_path"),
    ],
)
def test_bad_prediction_names_the_field(pred: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        parse_prediction(pred)


class _Ctx:
    def __init__(self, evidence: Path) -> None:
        self.run_id = "t"
        self.evidence_dir = evidence
        self.options: dict[str, Any] = {}

    def resource(self, key: str, factory: Any, close: Any = None) -> Any:
        raise AssertionError("no browser needed for these outcomes")

    def progress(self, message: str) -> None:
        pass


def test_missing_and_invalid_predictions_are_results_not_exceptions(tmp_path: Path) -> None:
    rec = SUITE.load(CASE, _doc())[0]
    assert isinstance(rec, LoadedRecord)
    r = SUITE.evaluate(rec, None, _Ctx(tmp_path))
    assert (r["reason"], r["passed"]) == (AppGenReason.MISSING_PREDICTION.value, False)
    for kind in (PredictionKind.GOLD, PredictionKind.EMPTY):
        r = SUITE.evaluate(rec, Prediction("tabs_demo", kind.value, kind), _Ctx(tmp_path))
        assert r["reason"] == "missing_prediction" and f"the {kind.value} pseudo-prediction" in r["detail"]
    bad = {"instance_id": "tabs_demo", "model_name_or_path": "m", "project_path": str(tmp_path / "nope")}
    r = SUITE.evaluate(rec, Prediction.from_entry(bad), _Ctx(tmp_path))
    assert r["reason"] == "invalid_prediction" and "does not exist" in r["detail"]
    not_archive = tmp_path / "project.txt"
    not_archive.write_text("x", encoding="utf-8")
    r = SUITE.evaluate(rec, Prediction.from_entry({**bad, "project_path": str(not_archive)}), _Ctx(tmp_path))
    assert r["reason"] == "invalid_prediction" and ".zip/.tar.gz" in r["detail"]
    assert (tmp_path / "app_generation.json").is_file()


def test_reason_vocabulary_is_closed() -> None:
    assert {r.value for r in AppGenReason} == {
        "ok",
        "nav_failed",
        "build_failed",
        "missing_prediction",
        "invalid_prediction",
        "infra_error",
    }
    assert [r for r in AppGenReason if r.is_infra] == [AppGenReason.INFRA_ERROR]
    assert copy.copy(SUITE).name == "app_generation"


def test_load_accepts_the_plugins_yaml_document() -> None:
    from pytest_mobilebench.manifest.yamlfile import read_yaml

    records = SUITE.load(CASE, read_yaml(CASE))
    assert [r.instance_id for r in records if isinstance(r, LoadedRecord)] == ["tabs_demo"]
