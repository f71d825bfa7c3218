"""``mine`` on a mirror of the real jellyfin/jellyfin-expo repository (React Native, jest-expo), read from
``$MOBILEBENCH_MIRRORS/jellyfin+jellyfin-expo/repo``; skipped without it. The shipped manifest
``cases/issue_resolution/jellyfin__jellyfin-expo.yaml`` is the held-back ground truth: the miner must find
its two upstream fixes, from the pull-request merges on the first-parent history, with the same base
commits and the same gold / test files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_mobilebench.__main__ import main
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.patch import parse_patch
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.suites.issue_resolution import docker_answers, resolve_patches
from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "cases" / "issue_resolution" / "jellyfin__jellyfin-expo.yaml"
MIRRORS = os.environ.get("MOBILEBENCH_MIRRORS")
MIRROR = Path(MIRRORS or "/nonexistent") / "jellyfin+jellyfin-expo" / "repo"
#: the pull-request merges of the shipped instances on the first-parent history
MERGES = {"jellyfin__jellyfin-expo-546": "5d57d69730f321b404b8a863d7040f3156bbbf67",
          "jellyfin__jellyfin-expo-649": "f1f2c66991d8b22e511f5679cc9e993b4fd2389a"}  # fmt: skip

pytestmark = pytest.mark.skipif(
    not (MIRROR / "HEAD").is_file(), reason="no jellyfin-expo mirror under $MOBILEBENCH_MIRRORS"
)


def _records(path: Path) -> dict:
    return {r.record.instance_id: r.record for r in load_manifest(read_yaml(path))}


def _files(text: str) -> list[str]:
    return sorted(parse_patch(text).paths)


def test_known_fixes_are_mined_with_the_shipped_patches(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["mine", str(MIRROR), "--out", str(out), "--no-validate", "--commits", ",".join(MERGES.values())]) == 0
    mined, shipped = _records(out / "candidates" / "jellyfin__jellyfin-expo.yaml"), _records(SHIPPED)
    assert sorted(mined) == sorted(MERGES)
    repos = RepoCache(
        root=tmp_path / "repos", url_template=f"file://{MIRROR.parent.parent}/{{owner}}+{{name}}/repo", run_id="t"
    )
    for iid, inst in mined.items():
        assert inst.base_commit == shipped[iid].base_commit and inst.fix_commit == MERGES[iid]
        assert inst.environment.node and inst.environment.package_manager == "npm"
        got, want = resolve_patches(inst, repos), resolve_patches(shipped[iid], repos)
        assert [_files(t) for t in got] == [_files(t) for t in want]


def test_a_scan_gives_every_rejection_a_reason(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        main(["mine", str(MIRROR), "--out", str(out), "--no-validate", "--since", "2024-11-01", "--limit", "12"]) == 0
    )
    report = json.loads((out / "report.json").read_text())
    assert report["scanned"] == report["candidates"] + sum(report["rejected"].values())
    assert all(r["reason"] for r in report["rejections"]) and report["rejected"].get("no_tests_touched")
    assert set(MERGES) <= set(report["instances"])


@pytest.mark.docker
@pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)")
def test_mined_649_validates_with_the_shipped_gold_lists(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["mine", str(MIRROR), "--out", str(out), "--commits", MERGES["jellyfin__jellyfin-expo-649"],
                 "--validate-runs", "1", "--runtime", "docker", "--no-audit"]) == 0  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    assert report["validation"]["valid"] == 1, report
    mined, shipped = _records(out / "jellyfin__jellyfin-expo.yaml"), _records(SHIPPED)
    iid = "jellyfin__jellyfin-expo-649"
    assert set(mined[iid].FAIL_TO_PASS) == set(shipped[iid].FAIL_TO_PASS)
    assert set(mined[iid].PASS_TO_PASS) == set(shipped[iid].PASS_TO_PASS)
