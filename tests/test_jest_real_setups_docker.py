"""Two real jest set-ups, self-made, installed from the npm registry in Docker (issue 30, items 1, 2 and 6).

``fixtures/repos/make_jest_setups.py`` writes them: ``proxy`` (``node_modules/.bin/jest`` runs the real jest in
a child process: the harness's old channel code read its key from a descriptor that was one of node's own
pipes there, and blocked until the instance's time limit: gold graded ``timeout``) and ``babel`` (jest 29 with
a project-wide babel configuration needing ``@babel/runtime`` helpers: the project's transform compiled the
harness's own runner file, which then could not load: gold graded ``unresolved``). On each, the reference fix
must resolve, an empty patch is ``empty_patch`` and a comment-only patch (the bug stays) ``unresolved``: never
infrastructure, never a timeout, never a policy violation. A third, ``matchers``, asserts with a matcher of the
repository's own and a snapshot (issue 31): with the oracle on, the reference resolves, the snapshot assertion is
decided out of realm against the ``.snap`` file the harness read itself (kept in the evidence), and the
repository's matcher keeps its in-realm outcome; a candidate whose production code pushes an ``afterEach``
hook onto jest-circus's state to clear the graded tests' errors is ``policy_violation``. Marked ``docker`` and
``e2e`` (a whole pytest run in a subprocess; the image builds reach the npm registry).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers"),
]


def _setups() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_jest_setups", ROOT / "fixtures" / "repos" / "make_jest_setups.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gold_resolves_and_the_rest_grade_as_the_candidates_own_on_each_setup(tmp_path: Path) -> None:
    setups = _setups()
    built = setups.build(tmp_path, timeout_s=600)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(setups.predictions(built))
    reports = tmp_path / "reports"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        *(str(m) for m, _ in built.values()),
        "-p",
        "no:cacheprovider",
        "-q",
        "-p",
        "no:randomly",
        "--mb-runtime=docker",
        f"--mb-reports-dir={reports}",
        f"--predictions={preds}",
        "-n",
        "2",
        "--mb-cache-level=instance",
    ]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=3000, env=dict(os.environ))
    results: dict[tuple[str, str], tuple[dict[str, Any], Path]] = {}
    for path in reports.glob("*/*/*/result.json"):
        result = json.loads(path.read_text())
        results[(result["instance_id"], result["model_name_or_path"])] = (result, path.parent)
    # every model gets an item per instance (a model without a prediction there: missing_prediction)
    models = {m for _, patches in built.values() for m in patches}
    expected = {(setups.instance_id(s), m) for s in built for m in models}
    assert set(results) == expected, proc.stdout[-3000:]
    for shape in built:
        reference, evidence = results[(setups.instance_id(shape), "reference")]
        assert reference["reason"] == "resolved", (shape, reference.get("detail"))
        # the harness ran: its launcher started jest's own program, the channel verified (else runner_compromised)
        assert "launch.js" in (evidence / "commands.txt").read_text()
        assert json.loads((evidence / "harness_status.json").read_text())["ok"] is True
        # the known answers ran inside the graded file (its module instances), no file of their own (issue 35)
        ran = [
            t["fullName"]
            for r in json.loads(next((evidence / "results").rglob("jest-results.json")).read_text())["testResults"]
            for t in r["assertionResults"]
        ]
        assert sum("mobilebench canary" in name for name in ran) == 2, ran
        assert "mbcanary" not in (evidence / "commands.txt").read_text()
        assert results[(setups.instance_id(shape), "empty")][0]["reason"] == "empty_patch"
        noop = results[(setups.instance_id(shape), "noop")][0]
        assert noop["reason"] == "unresolved", (shape, noop["reason"], noop.get("detail"))
    _oracle_evidence(results[(setups.instance_id("matchers"), "reference")][1])
    # the circus-hook attack (found resolved on nmf-app #418): the failed snapshot it cleared cannot pass
    hooked, evidence = results[(setups.instance_id("matchers"), "hook-clear")]
    assert hooked["reason"] == "policy_violation" and not hooked["retryable"], (hooked["reason"], evidence)
    assert "that matcher never throws" in hooked["detail"], hooked["detail"]


def _oracle_evidence(evidence: Path) -> None:
    """The reference run's assertion records (``docs/oracle.md``): the repository's ``toBeCount`` and the
    snapshot, whose serialised value the harness compares with the ``.snap`` file it kept."""
    records = []
    for line in (evidence / "channel.jsonl").read_bytes().splitlines():
        body = json.loads(line.split(b" ", 1)[1])
        if body.get("type") == "assertion":
            records.append(body["record"])
    matchers = {r["matcher"]: r for r in records}
    assert {"toBeCount", "toMatchSnapshot"} <= set(matchers), sorted(matchers)
    snapshot = matchers["toMatchSnapshot"]["snapshot"]
    assert snapshot["key"] == "Counter increments by a step 1" and '"count": 15' in snapshot["serialized"], snapshot
    kept = evidence / "snapshots" / "__tests__" / "__snapshots__" / "counter.test.js.snap"
    assert '"count": 15' in kept.read_text(), kept
