"""Infrastructure laundering through the evidence writers, on the bundled jest example in Docker.

A candidate's code can put a lone UTF-16 surrogate (``'\\ud800'``) into what jest reports: a test title it
registers from the production module the FAIL_TO_PASS tests import, or a value its (wrong) code returns, which
jest quotes in the failure message (``'😀'.slice(0, 1)`` is one). jest's JSON report escapes it
(``"\\ud800"``), Python decodes it to a ``str`` UTF-8 cannot encode, and writing that string as evidence
(``parsed.json``) raised: the item became ``infra_error`` / ``harness_error``, retried by every run, out of the
resolution rate's denominator. Both candidates leave ``Counter.increment``'s bug in place and must be counted,
never infra, the same on a re-grade: the wrong value is ``unresolved``; the title, registered by production code
calling the runner's ``test``, is the tripwires' ``policy_violation`` (``runner_compromised``), its test still
in the evidence under its exact id. Marked ``docker``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from counter_attacks import INSTANCE, ROOT, grade

from pytest_mobilebench.suites.issue_resolution import docker_answers

pytestmark = [pytest.mark.docker, pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers")]

#: src/counter.js registers a passing test titled with lone surrogates (not in the canary file)
TITLE = r"""if (typeof test === 'function' && !/mbcanary/.test(String(expect.getState().testPath))) {
  describe('lone \ud800 suite', () => { test('lone \udc00 title', () => { expect(1).toBe(1); }); });
}
"""

#: a new counter's value is half of a surrogate pair; the console gets lone surrogates too (no runner global read)
VALUE = r"""console.log('title \ud800');
console.error(new Error('boom \udfff'));
"""


def _patch(prefix: str, value: str = "start") -> str:
    """A patch adding ``prefix`` at the top of ``src/counter.js`` and setting ``this.value = <value>``."""
    lines = prefix.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        "diff --git a/src/counter.js b/src/counter.js\n--- a/src/counter.js\n+++ b/src/counter.js\n"
        f"@@ -1,3 +1,{3 + len(lines)} @@\n{body} class Counter {{\n   constructor(start = 0) {{\n"
        f"-    this.value = start;\n+    this.value = {value};\n"
    )


MODELS = {
    "surrogate-title": _patch(TITLE),
    "surrogate-value": _patch(VALUE, "start === 0 ? '\\ud83d' : start"),
}
#: the counted verdict each candidate must get, live and on a re-grade
EXPECTED = {"surrogate-title": "policy_violation", "surrogate-value": "unresolved"}


@pytest.mark.e2e
def test_a_lone_surrogate_in_the_report_is_the_candidates_unresolved_never_infra(tmp_path: Path) -> None:
    results, _out = grade(tmp_path, MODELS)
    for model, result in results.items():
        assert result["reason"] == EXPECTED[model], (model, result.get("detail"))
        assert not result["retryable"], (model, result.get("detail"))
        assert not (Path(result["evidence_dir"]) / "harness_error.log").exists(), model
    # the candidate's own test is in the evidence under its exact id (the surrogates escaped, read back as written)
    parsed = json.loads((Path(results["surrogate-title"]["evidence_dir"]) / "parsed.json").read_text(encoding="utf-8"))
    assert parsed["tests"].get("__tests__/counter.test.js::lone \ud800 suite > lone \udc00 title") == "PASS", parsed[
        "tests"
    ]
    assert "production code touched the runner global test" in results["surrogate-title"]["detail"]
    run_dir = next(p.parent.parent.parent for p in (tmp_path / "reports").glob("2*/*/*/result.json"))
    regraded = tmp_path / "regraded.json"
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "cases/examples",
            "-p",
            "no:cacheprovider",
            "-q",
            "-k",
            INSTANCE,
            f"--mb-reports-dir={tmp_path / 'regraded'}",
            f"--predictions={tmp_path / 'preds.jsonl'}",
            f"--mb-regrade={run_dir}",
            f"--mb-summary={regraded}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    summary = json.loads(regraded.read_text(encoding="utf-8"))
    assert summary["regrade"]["regraded"] == len(MODELS), again.stdout[-3000:]
    assert {k: (v["reason"], v["regraded"]) for k, v in summary["instances"].items()} == {
        f"{INSTANCE}@{m}": (EXPECTED[m], True) for m in MODELS
    }, again.stdout[-3000:]
