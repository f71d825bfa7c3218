"""Integrity on the real jellyfin-expo instance 649 in Docker (the mirror under MOBILEBENCH_MIRRORS;
skipped without it or without a daemon: opt-in, as its cold install takes minutes).

Two candidates written here from the real repository at its base commit: the issue's project ``.npmrc``
(``node-options=--require ./hook.js``) with no fix, and the gold fix plus a ``jest`` section change in
``package.json`` that would hide the failing test. Neither may be ``resolved``; both are
``policy_violation``; the hook never runs; ``regrade()`` of each evidence folder says the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git

from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.suites.issue_resolution import docker_answers, regrade

ROOT = Path(__file__).resolve().parents[1]
MIRRORS = Path(os.environ.get("MOBILEBENCH_MIRRORS") or "/nonexistent")  # opt-in: a cold npm ci takes minutes
MIRROR = MIRRORS / "jellyfin+jellyfin-expo" / "repo"
MANIFEST = ROOT / "cases" / "issue_resolution" / "jellyfin__jellyfin-expo.yaml"
BASE, FIX = "9c18cd1631de25074d487d5b8905a83fadbe6fa7", "c0e7f3bb4b423cde7f7236eb0791633c7be53008"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not (MIRROR / "HEAD").is_file(), reason=f"no jellyfin-expo mirror at {MIRROR}"),
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers"),
]


def _candidates(tmp: Path) -> dict[str, str]:
    tree = tmp / "jf"
    git(tmp, "clone", "-q", "--no-checkout", str(MIRROR), str(tree))
    git(tree, "checkout", "-q", BASE)
    gold = git(tree, "diff", BASE, FIX, "--", ".", ":!**/__tests__/**", strip=False)
    (tree / ".npmrc").write_text("node-options=--require ./hook.js\n")
    (tree / "hook.js").write_text("process.on('exit', () => { console.log('HOOKED-BY-CANDIDATE'); });\n")
    git(tree, "add", "-N", ".npmrc", "hook.js")
    npmrc = git(tree, "diff", strip=False)
    git(tree, "reset", "-q")
    (tree / ".npmrc").unlink()
    (tree / "hook.js").unlink()
    package = json.loads((tree / "package.json").read_text())
    package["jest"]["testPathIgnorePatterns"] = ["/node_modules/", "DownloadModel"]
    (tree / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    jest = git(tree, "diff", "--", "package.json", strip=False)
    return {"npmrc-hook": npmrc, "gold-plus-jest-config": gold + jest}


@pytest.mark.e2e
def test_jellyfin_candidates_cannot_reach_their_verdict(tmp_path: Path) -> None:
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(
        json.dumps({"instance_id": "jellyfin__jellyfin-expo-649", "model_name_or_path": m, "model_patch": p}) + "\n"
        for m, p in _candidates(tmp_path).items()
    ))  # fmt: skip
    reports = tmp_path / "reports"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", str(MANIFEST), "-k", "649", f"--predictions={preds}", "-p", "no:cacheprovider",
         f"--mb-repo-url-template=file://{MIRRORS}/{{owner}}+{{name}}/repo", f"--mb-reports-dir={reports}",
         f"--mb-summary={reports / 'summary.json'}", "--mb-cache-level=none"],
        cwd=ROOT, capture_output=True, text=True, timeout=3000,
    ).stdout  # fmt: skip
    (instance,) = [r.record for r in load_manifest(read_yaml(MANIFEST)) if r.instance_id.endswith("-649")]
    results = {
        json.loads(p.read_text())["model_name_or_path"]: (json.loads(p.read_text()), p.parent)
        for p in reports.glob("*/*/*/result.json")
    }
    assert set(results) == {"npmrc-hook", "gold-plus-jest-config"}, out[-3000:]
    for model, (result, evidence) in results.items():
        assert result["reason"] == "policy_violation", (model, result.get("detail"), out[-3000:])
        assert "HOOKED-BY-CANDIDATE" not in (evidence / "test_output.log").read_text()
        assert regrade(instance, evidence)["reason"] == "policy_violation"
    assert ".npmrc" in (results["npmrc-hook"][1] / "dropped_sections.diff").read_text()
    assert "runner_config_touched" in results["gold-plus-jest-config"][0]["flags"]
    as_run = (results["gold-plus-jest-config"][1] / "candidate_as_run.diff").read_text()
    assert "DownloadModel" in as_run and "testPathIgnorePatterns" not in as_run  # restored to base, fix kept
