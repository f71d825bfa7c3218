"""``mine`` with validation (no hand-written environment) on small bounded sets of real commits of three of the
MobileDev-Bench paper's repositories, read from ``$MOBILEBENCH_MIRRORS/<owner>+<name>/repo`` (issue 30, "Done
when"; ``docs/real-repositories.md`` has the figures). Each test checks the outcome classes, never a harness
failure graded as a candidate's: no ``infra_error``, every candidate ``valid``, ``invalid`` with the
validation's reason, or ``environment_unavailable`` naming what is missing; every other commit a named rejection.

Opt-in (no default folder): skipped without the mirror under ``$MOBILEBENCH_MIRRORS``. Marked ``docker`` and
``e2e``: validation is a whole pytest run in Docker (nmf-app: two installs of about 1,200 packages, about 8
minutes here). The Rocket.Chat and io-app mirrors lack some large blobs in every tree of their recent history
(iOS framework binaries, gifs, snapshots), so no checkout of those commits can be made: the miner names each
one ``unreadable_object`` with the files it lacks, and no validation starts. Their older complete commits reach the
install, which needs what this machine cannot fetch: ``environment_unavailable``, naming it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.__main__ import main
from pytest_mobilebench.suites.issue_resolution import docker_answers

MIRRORS = Path(os.environ.get("MOBILEBENCH_MIRRORS") or "/nonexistent")  # opt-in: installs take minutes

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers"),
]

#: NMF-earth/nmf-app #418 (a snapshot the fix changes: its test file runs); #421 (the fix adds `@native-html/render`:
#: installed from the fix's lockfile, one of its alpha dependencies is missing from the registry here); #415 (its fix
#: also changes `babel.config.js` and `tsconfig.json`'s `paths`: the policy restores them for every candidate, so a
#: grade of its gold would be `policy_violation`)
NMF_418, NMF_421 = "c15f0b0aaa86768de8f3215f5fb46c3ec6b8ddce", "47d489a3da2e23930c3462a692e4fa5500b80336"
NMF_415 = "c450cd88009f6eecd0fe92321deb9aef7341b4f3"
NMF_418_F2P = ["app/screens/InfoModal/__test__/InfoModalScreen.test.tsx::InfoModalScreen renders correctly"]


def _mine(repo: str, out: Path, *args: str) -> tuple[int, dict[str, Any]]:
    mirror = MIRRORS / repo.replace("/", "+") / "repo"
    if not (mirror / "HEAD").is_file():
        pytest.skip(f"no {repo} mirror under $MOBILEBENCH_MIRRORS")
    argv = ["mine", str(mirror), "--out", str(out), "--validate-runs", "1", "--runtime", "docker", "--no-audit"]
    code = main([*argv, *args])
    return code, json.loads((out / "report.json").read_text())


def test_nmf_app_recent_fixes_validate_from_the_registries(tmp_path: Path) -> None:
    code, report = _mine("NMF-earth/nmf-app", tmp_path, "--commits", f"{NMF_418},{NMF_421},{NMF_415}")
    assert code == 0 and report["validation"]["infra_errors"] == 0, report["validation"]
    by_fix = {inst["fix_commit"]: inst for inst in report["instances"].values()}
    valid, missing, refused = by_fix[NMF_418], by_fix[NMF_421], by_fix[NMF_415]
    assert valid["status"] == "valid" and valid["FAIL_TO_PASS"] == NMF_418_F2P, valid
    assert missing["status"] == "environment_unavailable", missing
    assert missing["detail"].startswith("package_missing: @native-html/"), missing["detail"][:300]
    assert refused["status"] == "gold_refused" and "babel.config.js" in refused["detail"], refused
    manifest = (tmp_path / "NMF-earth__nmf-app.yaml").read_text()
    assert "NMF-earth__nmf-app-418" in manifest
    assert "NMF-earth__nmf-app-421" not in manifest and "NMF-earth__nmf-app-415" not in manifest


@pytest.mark.parametrize(
    ("repo", "fix", "missing"),
    [
        # #130 of 2017: a dependency fetched from a git host outside the registries
        ("RocketChat/Rocket.Chat.ReactNative", "5435c797003dfa6c8cc9585c8ebea3282e3f278b", "host_unreachable: "),
        # 2017-08: package-lock.json lags package.json (npm ci refuses it); unfrozen, realm's prebuilt binary
        ("RocketChat/Rocket.Chat.ReactNative", "2eee28797ae5c682aece9c9dca39c9aee0058d41", "binary_download: "),
        # #33 of 2017-08: yarn.lock lags package.json; unfrozen, a git dependency on a code host
        ("RocketChat/Rocket.Chat.ReactNative", "ce869a9511db6e66efd6ab08976ebfde5d811f96", "host_unreachable: "),
        # #5736 of 2024-05: a version of the project's design system the registry here does not serve
        ("pagopa/io-app", "63144e744968c5e33a02d9af08216058ff1e648c", "package_missing: @pagopa/io-app-design-system@"),
    ],
)
def test_a_fix_whose_dependencies_this_machine_cannot_fetch_is_named_unavailable(
    repo: str, fix: str, missing: str, tmp_path: Path
) -> None:
    """A complete commit of a partial mirror reaches the install; what the registries lack is named, never infra."""
    code, report = _mine(repo, tmp_path, "--commits", fix)
    assert code == 1 and report["validation"]["infra_errors"] == 0, report["validation"]
    (inst,) = report["instances"].values()
    assert inst["status"] == "environment_unavailable" and inst["detail"].startswith(missing), inst["detail"][:300]


@pytest.mark.parametrize(
    ("repo", "since", "lacking"),
    [
        ("RocketChat/Rocket.Chat.ReactNative", "2026-04-01", "ios/Fabric.framework/Fabric"),
        ("pagopa/io-app", "2026-08-01", "itw_cie_nfc.gif"),
    ],
)
def test_a_mirror_lacking_blobs_gives_named_rejections_and_no_validation(
    repo: str, since: str, lacking: str, tmp_path: Path
) -> None:
    code, report = _mine(repo, tmp_path, "--since", since, "--limit", "2")
    assert code == 1 and report["candidates"] == 0 and report["validation"] is None
    assert report["scanned"] == sum(report["rejected"].values()) and report["rejected"]["unreadable_object"] >= 2
    named = [r["detail"] for r in report["rejections"] if r["reason"] == "unreadable_object"]
    assert any(lacking in detail for detail in named), named[:2]
    assert not (tmp_path / "reports").exists()  # no validation run was started
