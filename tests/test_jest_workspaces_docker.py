"""Five more real jest set-ups, self-made, installed from the npm registry in Docker (issue 30, items 1 and 6).

``fixtures/repos/make_jest_workspaces.py`` writes them: a yarn classic, a yarn berry (``node_modules`` linker) and
a pnpm workspace (the app in ``packages/app`` importing a workspace package; the manager pinned by
``packageManager``), a TypeScript jest
configuration (``jest.config.ts`` read through ts-node, ts-jest transforming a module the code under test
imports) and a configuration with ``projects``. On each, the reference fix must resolve with the harness in
place (its launcher started jest, the channel verified, the known answers ran in the graded file), an empty
patch is ``empty_patch`` and a comment-only patch (the bug stays) ``unresolved``: never infrastructure, never
a timeout, never a policy violation. The pnpm workspace too: pnpm links jest's packages through
``node_modules/.pnpm``, and the harness's probe, launcher and runner modules find them as node does, from each
package's real folder (``harness_js/resolve.py``). Marked ``docker`` and ``e2e`` (a whole pytest run in a
subprocess; the image builds reach the npm registry).
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


def _shapes() -> Any:
    path = ROOT / "fixtures" / "repos" / "make_jest_workspaces.py"
    spec = importlib.util.spec_from_file_location("make_jest_workspaces", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SHAPES = _shapes()

Results = dict[tuple[str, str], tuple[dict[str, Any], Path]]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Results:
    """Every shape's three candidates, graded by one pytest run in Docker: ``{(instance, candidate): (result,
    evidence folder)}``."""
    tmp_path = tmp_path_factory.mktemp("jest-workspaces")
    built = SHAPES.build(tmp_path, timeout_s=900)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(SHAPES.predictions(built))
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
    proc = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=5400, env=dict(os.environ), check=False
    )
    results: Results = {}
    for path in reports.glob("*/*/*/result.json"):
        result = json.loads(path.read_text())
        results[(result["instance_id"], result["model_name_or_path"])] = (result, path.parent)
    expected = {(SHAPES.instance_id(s), m) for s, (_, patches) in built.items() for m in patches}
    assert set(results) == expected, proc.stdout[-3000:]
    return results


@pytest.mark.parametrize("shape", list(SHAPES.SHAPES))
def test_gold_resolves_empty_and_a_comment_do_not(graded: Results, shape: str) -> None:
    reference = graded[(SHAPES.instance_id(shape), "reference")][0]
    assert reference["reason"] == "resolved", (shape, reference.get("detail"))
    assert graded[(SHAPES.instance_id(shape), "empty")][0]["reason"] == "empty_patch"
    noop = graded[(SHAPES.instance_id(shape), "noop")][0]
    assert noop["reason"] == "unresolved", (shape, noop["reason"], noop.get("detail"))


@pytest.mark.parametrize("shape", list(SHAPES.SHAPES))
def test_the_harness_ran_and_its_known_answers_ran_in_the_graded_file(graded: Results, shape: str) -> None:
    evidence = graded[(SHAPES.instance_id(shape), "reference")][1]
    assert "launch.js" in (evidence / "commands.txt").read_text()
    assert json.loads((evidence / "harness_status.json").read_text())["ok"] is True
    report = json.loads(next((evidence / "results").rglob("jest-results.json")).read_text())
    ran = [t["fullName"] for r in report["testResults"] for t in r["assertionResults"]]
    assert sum("mobilebench canary" in name for name in ran) == 2, (shape, ran)
