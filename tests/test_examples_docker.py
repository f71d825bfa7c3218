"""The README's main job: ``cases/examples`` under the Docker runtime, gold -> resolved, empty -> empty_patch,
and an unchanged re-run answered from the result cache."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]


def _run(pytester: pytest.Pytester, predictions: str, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest(
        str(ROOT / "cases" / "examples"),
        f"--predictions={predictions}",
        "--mb-runtime=docker",
        f"--mb-reports-dir={pytester.path / 'reports'}",
        f"--mb-summary={pytester.path / 'reports' / 'summary.json'}",
        "-p",
        "no:cacheprovider",
        *args,
    )
    return result, json.loads((pytester.path / "reports" / "summary.json").read_text())


def test_examples_resolve_with_gold_in_docker_and_rerun_is_cached(pytester: pytest.Pytester) -> None:
    result, summary = _run(pytester, "gold", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2)
    assert summary["resolution_rate"] == 1.0
    first = summary["instances"]["mobilebench__counter-2"]
    assert first["runtime"] == "docker"
    assert (first["n2p_passed"], first["f2p_passed"], first["p2p_passed"]) == (2, 1, 2)
    started = time.monotonic()
    result, again = _run(pytester, "gold")
    assert time.monotonic() - started < 60
    assert all(entry["cached"] for entry in again["instances"].values())


def test_examples_with_empty_predictions(pytester: pytest.Pytester) -> None:
    result, summary = _run(pytester, "empty")
    result.assert_outcomes(failed=2)
    assert summary["resolution_rate"] == 0.0 and summary["by_reason"] == {"empty_patch": 2}
