"""What a user sees on the bundled cases (``cases/examples``): every headline figure printed on the terminal,
shown on the run page and in the pytest-html report is the one in ``summary.json``.

Runs the README's first command (gold, ``-n 2``), then ``--predictions=empty``, then gold again (all from the
result cache), with the local runtime (needs ``node`` / ``npm`` and the npm registry for ``npm ci``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401
import pytest

from pytest_mobilebench.report.terminal import fmt_rate

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")), reason="needs node and npm")

COUNTS = ("selected", "evaluated", "invalid", "missing_predictions", "infra_errors", "cached", "not_run")


def _trust(pytester: pytest.Pytester) -> list[str]:
    """``--mb-trust-candidates`` when this version has it (the local runtime runs candidates on the host)."""
    helptext = pytester.runpytest("--help", "-p", "no:cacheprovider").stdout.str()
    return ["--mb-trust-candidates"] if "--mb-trust-candidates" in helptext else []


def _run(pytester: pytest.Pytester, predictions: str, run_id: str, *args: str) -> tuple[pytest.RunResult, dict]:
    reports = pytester.path / "reports"
    result = pytester.runpytest(
        str(ROOT / "cases" / "examples"),
        f"--predictions={predictions}",
        "--mb-runtime=local",
        *_trust(pytester),
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / 'summary.json'}",
        f"--mb-run-id={run_id}",
        f"--html={reports / 'report.html'}",
        "-p",
        "no:cacheprovider",
        *args,
    )
    return result, json.loads((reports / "summary.json").read_text())


def _check_headlines(pytester: pytest.Pytester, result: pytest.RunResult, summary: dict) -> dict:
    """Each figure of the summary's headline block is on the terminal, the run page and the html report."""
    block = summary["headlines"]["issue_resolution"]
    out = result.stdout.str()
    own = block["headline"]
    assert f"issue_resolution ({summary['models'][0]}): {own['label']} {fmt_rate(own)}" in out
    assert f"passed {fmt_rate(block['over_all'])} over all selected" in out
    counts = " | ".join(f"{k.replace('_', ' ')} {block[k]}" for k in COUNTS)
    assert f"  {counts}" in out
    page = (pytester.path / "reports" / summary["run_id"] / "index.html").read_text()
    html = (pytester.path / "reports" / "report.html").read_text()
    for text in (page, html):
        cells = dict(re.findall(r'<tr data-figure="([^"]+)"><th>[^<]*</th><td>(.*?)</td></tr>', text))
        for key in COUNTS:
            assert cells[key.replace("_", " ")] == str(block[key]), key
        assert cells[own["label"]].startswith(f"{own['numerator']}/{own['denominator']} = ")
    return block


@pytest.mark.e2e
def test_bundled_examples_headlines_gold_empty_and_cached(pytester: pytest.Pytester) -> None:
    result, summary = _run(pytester, "gold", "gold-1", "-n", "2")
    result.assert_outcomes(passed=2)
    block = _check_headlines(pytester, result, summary)
    assert (block["selected"], block["evaluated"], block["passed"], block["cached"]) == (2, 2, 2, 0)
    assert block["headline"]["value"] == 1.0 and summary["resolution_rate"] == 1.0
    log = (pytester.path / "reports" / "gold-1" / "progress.log").read_text()
    assert len(re.findall(r"\] finished mobilebench__counter-\d: resolved \(\d+\.\d s\)", log)) == 2

    result, summary = _run(pytester, "empty", "empty-1")
    result.assert_outcomes(failed=2)
    block = _check_headlines(pytester, result, summary)
    assert block["by_reason"] == {"empty_patch": 2} and block["headline"]["value"] == 0.0

    result, summary = _run(pytester, "gold", "gold-2")
    result.assert_outcomes(passed=2)
    block = _check_headlines(pytester, result, summary)
    assert block["cached"] == 2 and block["passed"] == 2
    page = (pytester.path / "reports" / "gold-2" / "index.html").read_text()
    assert page.count('<span class="badge">cached</span> originally') == 2
    assert 'href="../gold-1/gold/mobilebench__counter-1/"' in page  # evidence of the run that made the result
