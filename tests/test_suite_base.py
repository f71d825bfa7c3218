"""``SuiteBase`` (issue 32, item 4): a suite writes only what varies (name, reasons, load, evaluate); the rest
has no-op defaults, and the result is a whole suite the registry accepts and a run uses."""

from __future__ import annotations

import enum
import json
from pathlib import Path

import pytest

from pytest_mobilebench.records import LoadedRecord
from pytest_mobilebench.suites.base import SuiteBase, check_suite
from test_suite_seam import ECHO_MANIFEST, _preds


class Said(str, enum.Enum):
    SAME = "same"
    OTHER = "other"
    DOWN = "down"

    @property
    def is_infra(self) -> bool:
        return self is Said.DOWN


class Minimal(SuiteBase):
    name = "echo"
    reasons = Said

    def load(self, path: Path, document: object) -> list[LoadedRecord]:
        return []

    def evaluate(self, record: LoadedRecord, prediction: object, ctx: object) -> dict[str, object]:
        return {"reason": "same", "passed": True, "properties": {}}


def test_a_suite_that_writes_only_what_varies_is_a_whole_suite(tmp_path: Path) -> None:
    suite = Minimal()
    check_suite(suite, "echo")
    assert (suite.options, dict(suite.markers), suite.columns, suite.fixtures, suite.fixture_module) == (
        (),
        {},
        (),
        (),
        None,
    )
    assert suite.load_dataset(tmp_path / "d.jsonl", {}) is None and suite.live_model({}) is None
    assert suite.cache_material(None, None, {}) is None  # type: ignore[arg-type]
    assert suite.finish_run({}, "r", []) is None
    results = [{"reason": "same", "passed": True}, {"reason": "other", "passed": False}, {"reason": "down"}]
    head = suite.summarize(results)["headline"]
    assert (head["label"], head["numerator"], head["denominator"], head["value"]) == ("pass rate", 1, 2, 0.5)
    assert head["ci95"][0] < 0.5 < head["ci95"][1]
    assert suite.summarize([])["headline"]["value"] is None
    with pytest.raises(NotImplementedError, match="echo"):
        suite.regrade(None, tmp_path)  # type: ignore[arg-type]


CONFTEST = """
import enum
from pytest_mobilebench.records import LoadedRecord
from pytest_mobilebench.suites.base import SuiteBase


class Said(str, enum.Enum):
    SAME = "same"
    OTHER = "other"

    @property
    def is_infra(self):
        return False


class Echo(SuiteBase):
    name = "echo"
    reasons = Said

    def load(self, path, document):
        return [LoadedRecord(suite="echo", instance_id=e["id"], source=path, line=None, record=dict(e), group="echo")
                for e in document.data["instances"]]

    def evaluate(self, record, prediction, ctx):
        same = prediction.get("model_patch") == record.record["answer"]
        return {"reason": "same" if same else "other", "passed": same, "properties": {}}


def pytest_mobilebench_register_suites(registry):
    registry.register(Echo())
"""


def test_a_suite_base_subclass_runs(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makefile(".yaml", echo=ECHO_MANIFEST)
    _preds(pytester.path / "p.jsonl", {"echo-1": "yes", "echo-2": "yes", "echo-3": "maybe"})
    result = pytester.runpytest("--predictions=p.jsonl", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1)
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    head = summary["suite_tables"]["echo"]["headline"]
    assert (head["label"], head["numerator"], head["denominator"]) == ("pass rate", 2, 3)


def test_a_suite_that_cannot_regrade_keeps_the_live_result_in_a_regrade_run(tmp_path: Path) -> None:
    """The default ``regrade`` raises :class:`RegradeUnsupported`; ``--mb-regrade`` keeps the item's live result and
    says why (it had escaped ``regrade_one``, which caught only unreadable evidence)."""
    from pytest_mobilebench.regrade_run import regrade_one
    from pytest_mobilebench.suites.base import RegradeUnsupported

    live = {"instance_id": "echo-1", "reason": "same", "passed": True, "evidence_dir": str(tmp_path)}
    result, problem = regrade_one(Minimal(), None, (tmp_path, live))  # type: ignore[arg-type]
    assert result == {**live, "regraded": False}
    assert problem is not None and "cannot re-grade: RegradeUnsupported" in problem and "kept as it was" in problem
    assert issubclass(RegradeUnsupported, NotImplementedError)
