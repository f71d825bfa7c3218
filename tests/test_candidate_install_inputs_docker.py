"""A candidate's change to the install inputs is the candidate's doing (issue 30, item 3): never infra-like.

``environment_unavailable`` leaves an item out of every denominator, so a candidate able to make its own item
unavailable would escape grading. It cannot: the environment and dependency layers are built from the
instance's base commit alone (the candidate's patch is applied later, in the container, offline) and nothing
installs again after it. Two candidates on the bundled counter example add to ``package.json`` (and the
lockfile) a dependency from a host outside the registries, which this machine cannot fetch:

* with the fix, never requiring it: ``resolved`` (the added dependency is inert: nothing installs it);
* without the fix, requiring it from the code under test: ``no_tests_ran`` (the test file cannot load the code
  under test: the module is missing), graded against the candidate (counted in the denominator): never
  ``environment_unavailable``, never ``infra_error``.

Marked ``docker`` and ``e2e`` (a whole pytest run in a subprocess, on the counter example's images).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mobilebench.states import Reason
from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"
BUNDLE = ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"
BASE = "b89b12d8fb1e45fedad0506f553737d0d01cd34f"
OUTSIDE = "https://archives.example.invalid/left-pad-x-1.0.0.tgz"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers"),
]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def _patch(tmp: Path, name: str, *, fix: bool, require: bool) -> str:
    """The candidate's diff against the base: the unreachable dependency in package.json and the lockfile,
    plus the fix and / or a ``require`` of the dependency in the code under test."""
    repo = tmp / name
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(repo)], check=True)
    _git(repo, "checkout", "-q", BASE)
    package = json.loads((repo / "package.json").read_text())
    package.setdefault("dependencies", {})["left-pad-x"] = OUTSIDE
    (repo / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    lock = json.loads((repo / "package-lock.json").read_text())
    lock.setdefault("packages", {}).setdefault("", {}).setdefault("dependencies", {})["left-pad-x"] = OUTSIDE
    lock["packages"]["node_modules/left-pad-x"] = {"version": "1.0.0", "resolved": OUTSIDE}
    (repo / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    counter = repo / "src" / "counter.js"
    text = counter.read_text()
    if fix:
        text = text.replace("this.value += step + 1;", "this.value += step;")
    if require:
        text = "const leftPad = require('left-pad-x');\n" + text
    counter.write_text(text)
    return _git(repo, "diff")


def test_a_candidate_adding_an_unfetchable_dependency_is_graded_never_unavailable(tmp_path: Path) -> None:
    patches = {
        "inert-dependency": _patch(tmp_path, "a", fix=True, require=False),
        "needs-dependency": _patch(tmp_path, "b", fix=False, require=True),
    }
    assert all(OUTSIDE in p and "package.json" in p for p in patches.values())
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"instance_id": "mobilebench__counter-1", "model_name_or_path": m, "model_patch": p}) + "\n"
            for m, p in patches.items()
        )
    )
    reports = tmp_path / "reports"
    argv = [sys.executable, "-m", "pytest", str(MANIFEST), "-k", "counter-1", "-p", "no:cacheprovider", "-q",
            "-p", "no:randomly", "--mb-runtime=docker", f"--mb-reports-dir={reports}", f"--predictions={preds}",
            "--mb-cache-level=instance"]  # fmt: skip
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1800, env=dict(os.environ))
    results = {}
    for path in reports.glob("*/*/*/result.json"):
        result = json.loads(path.read_text())
        results[result["model_name_or_path"]] = result
    assert set(results) == set(patches), proc.stdout[-3000:]
    assert results["inert-dependency"]["reason"] == "resolved", results["inert-dependency"].get("detail")
    needs = results["needs-dependency"]
    # its one test file cannot load the code under test: no test ran, the candidate's own failure (counted)
    assert needs["reason"] == "no_tests_ran" and needs["retryable"] is False, (needs["reason"], needs.get("detail"))
    evidence = next(p.parent for p in reports.glob("*/needs-dependency/*/result.json"))
    assert "Cannot find module 'left-pad-x'" in (evidence / "test_output.log").read_text()
    for result in results.values():
        reason = Reason(result["reason"])
        assert not reason.is_infra and not reason.is_unavailable, result
