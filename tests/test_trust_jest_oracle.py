"""The out-of-realm oracle on the bundled counter example in Docker (issue 31, item 1; ``docs/oracle.md``).

Matcher forgery inside the graded file's realm, the bug left in place, from the production module the
FAIL_TO_PASS tests import: ``object-is`` patches the realm's ``Object.is`` (which the realm's ``expect`` uses for
``toBe`` and ``toEqual``) to forgive exactly the bug's error shape (received one above expected); it touches no
matcher, so the frozen matcher table sees nothing, and the known answers, whose shapes are drawn per run, mostly
keep their outcomes. ``extend-bug-shape`` redefines ``toBe`` through ``expect.extend`` with the same forgiveness.
Both must be ``runner_compromised`` through the oracle (its records' in-realm ``pass`` contradicted out of realm),
never resolved. Gold still resolves both instances with the oracle on, and its channel holds the assertion
records; ``--mb-oracle=off`` records none and grades the same. Marked ``docker`` and ``e2e``; skipped until the
decider (``pytest_mobilebench.oracle.decide_test``) is installed.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from counter_attacks import ROOT, grade, hooked_patch

from pytest_mobilebench.suites.issue_resolution import docker_answers

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
    pytest.mark.skipif(
        not hasattr(importlib.import_module("pytest_mobilebench.oracle"), "decide_test"),
        reason="the oracle's decider (pytest_mobilebench.oracle.decide_test) is not installed",
    ),
]

#: the realm's Object.is forgives a received number one above the expected one (the counter bug's shape)
OBJECT_IS = """\
const is = Object.is;
Object.is = function (a, b) { return is(a, b) || (typeof a === 'number' && a === b + 1); };
"""

#: toBe redefined through the runner's public extension API, forgiving the same shape
EXTEND_BUG_SHAPE = """\
expect.extend({
  toBe(received, expected) {
    const pass = Object.is(received, expected) || received === expected + 1;
    return { pass: this.isNot ? !pass : pass, message: () => 'expected ' + expected + ', received ' + received };
  },
});
"""


def test_matcher_forgeries_are_contradicted_by_the_oracle(tmp_path: Path) -> None:
    attacks = {
        "object-is": hooked_patch("forge", OBJECT_IS),
        "extend-bug-shape": hooked_patch("forge", EXTEND_BUG_SHAPE),
    }
    results, out = grade(tmp_path, attacks)
    for model, result in results.items():
        assert result["reason"] == "policy_violation", (model, result.get("detail"), out)
        assert "runner_compromised" in result["detail"] and "the oracle contradicts" in result["detail"], (
            model,
            result,
        )


def _gold(tmp_path: Path, *extra: str) -> tuple[dict, list[Path]]:
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "pytest", "cases/examples", "-p", "no:cacheprovider", "-q", "--predictions=gold",
            "--mb-runtime=docker", f"--mb-reports-dir={reports}", "-n", "2", *extra]  # fmt: skip
    proc = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=1800, env=dict(os.environ), check=False
    )
    results: dict[str, dict] = {}
    for path in reports.glob("2*/*/*/result.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        results[str(result["instance_id"])] = result
    assert len(results) == 2, proc.stdout[-3000:]
    return results, sorted(reports.glob("2*/*/*/channel.jsonl"))


@pytest.mark.parametrize("mode", ["on", "off"])
def test_gold_resolves_with_the_oracle_on_and_off(tmp_path: Path, mode: str) -> None:
    results, channels = _gold(tmp_path, f"--mb-oracle={mode}")
    assert {i: r["reason"] for i, r in results.items()} == dict.fromkeys(results, "resolved"), results
    records = sum(b'"type":"assertion"' in line for c in channels for line in c.read_bytes().splitlines())
    assert (records > 0) == (mode == "on"), (mode, records, channels)
