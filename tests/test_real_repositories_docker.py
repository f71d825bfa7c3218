"""Real fixes of real repositories, read from local mirrors (issue 30, item 6; ``docs/real-repositories.md``).

Each manifest below names only upstream commits and the test ids ``--mb-validate`` proposed for them (our
own data, no third-party file): the instance is validated with its gold patch in Docker, then graded with
gold (``resolved``) and with an empty patch (``empty_patch``), through the harness (its launcher started
jest, the channel verified). Mirrors are read from ``$MOBILEBENCH_MIRRORS/<owner>+<name>/repo`` (opt-in:
no default folder, as a cold run takes about 15 minutes); an instance whose mirror is absent is skipped. Marked
``docker`` and ``e2e`` (whole pytest runs in a subprocess; the installs reach the package registries and take minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
MIRRORS = Path(os.environ.get("MOBILEBENCH_MIRRORS") or "/nonexistent")  # opt-in: cold installs take many minutes

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers"),
]

#: repo -> (instance id, base commit, fix commit, FAIL_TO_PASS, PASS_TO_PASS), as validated on this machine
VALIDATED: dict[str, tuple[str, str, str, list[str], list[str]]] = {
    "jellyfin/jellyfin-expo": (
        "jellyfin__jellyfin-expo-668",
        "c90a49b62e570acddc0f17dd8d0de4f1d84d96b6",
        "56f158f737e09a52c086b3fe316f567aafae2427",
        ["constants/__tests__/Links.test.js::Links > should return the right url"],
        [],
    ),
    "NMF-earth/nmf-app": (  # mined with no hand-written environment (yarn classic, a preinstall script, jest-expo)
        "NMF-earth__nmf-app-418",
        "16bbf3297c7aa9cd52f1488588b92c638e509e84",
        "c15f0b0aaa86768de8f3215f5fb46c3ec6b8ddce",
        ["app/screens/InfoModal/__test__/InfoModalScreen.test.tsx::InfoModalScreen renders correctly"],
        [],
    ),
}


def _manifest(repo: str, dest: Path) -> Path:
    iid, base, fix, f2p, p2p = VALIDATED[repo]
    path = dest / f"{iid}.yaml"
    lists = "".join(f"  {key}:\n" + "".join(f"  - {json.dumps(t)}\n" for t in ids) if ids else f"  {key}: []\n"
                    for key, ids in (("FAIL_TO_PASS", f2p), ("PASS_TO_PASS", p2p)))  # fmt: skip
    path.write_text(
        f"suite: issue_resolution\nrepo: {repo}\nframework: react-native\ninstances:\n- instance_id: {iid}\n"
        f"  problem_statement: The upstream fix {fix[:10]}.\n  base_commit: {base}\n  fix_commit: {fix}\n{lists}"
    )
    return path


def _run(manifest: Path, reports: Path, *extra: str) -> dict[str, tuple[dict[str, Any], Path]]:
    template = f"file://{MIRRORS}/{{owner}}+{{name}}/repo"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        str(manifest),
        "-p",
        "no:cacheprovider",
        "-q",
        "-p",
        "no:randomly",
        "--mb-runtime=docker",
        "--mb-cache-level=instance",
        f"--mb-reports-dir={reports}",
        f"--mb-repo-url-template={template}",
        *extra,
    ]
    proc = subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=5400, env=dict(os.environ), check=False
    )
    found = {}
    for path in reports.glob("*/*/*/result.json"):
        result = json.loads(path.read_text())
        found[result["model_name_or_path"]] = (result, path.parent)
    assert found, proc.stdout[-3000:]
    return found


@pytest.mark.parametrize("repo", sorted(VALIDATED))
def test_a_real_fix_validates_then_gold_resolves_and_empty_does_not(repo: str, tmp_path: Path) -> None:
    if not (MIRRORS / repo.replace("/", "+") / "repo" / "HEAD").is_file():
        pytest.skip(f"no mirror of {repo} under {MIRRORS}")
    iid, _, _, f2p, p2p = VALIDATED[repo]
    manifest = _manifest(repo, tmp_path)
    validated = _run(manifest, tmp_path / "validate", "--predictions=gold", "--mb-validate", "--mb-validate-runs=1")
    validation = json.loads((validated["gold"][1] / "validation.json").read_text())
    assert (validation["FAIL_TO_PASS"], validation["PASS_TO_PASS"]) == (f2p, p2p), validation.get("problems")
    gold, evidence = _run(manifest, tmp_path / "gold", "--predictions=gold")["gold"]
    assert gold["reason"] == "resolved", gold.get("detail")
    assert "launch.js" in (evidence / "commands.txt").read_text()
    assert json.loads((evidence / "harness_status.json").read_text())["ok"] is True
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"instance_id": iid, "model_name_or_path": "empty", "model_patch": ""}) + "\n")
    assert _run(manifest, tmp_path / "empty", f"--predictions={empty}")["empty"][0]["reason"] == "empty_patch"
