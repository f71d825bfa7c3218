"""``mine --no-validate`` on local mirrors of three of the MobileDev-Bench paper's repositories (NMF-earth/nmf-app,
RocketChat/Rocket.Chat.ReactNative, pagopa/io-app), read from ``$MOBILEBENCH_MIRRORS/<owner>+<name>/repo``;
each test is skipped without its mirror. Such mirrors lack some large blobs: the scan must name those commits
``unreadable_object`` with git's message and go on, never end with a traceback (issue 30 item 5). The whole-window
scans take about a minute each (``e2e``); one pair of commits checks the rule quickly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_mobilebench.__main__ import main

MIRRORS = Path(os.environ.get("MOBILEBENCH_MIRRORS") or "/nonexistent")
#: repository -> the --since window scanned (the newest few hundred first-parent commits)
WINDOWS = {"NMF-earth/nmf-app": None, "RocketChat/Rocket.Chat.ReactNative": "2025-06-01", "pagopa/io-app": "2026-06-01"}


def _mirror(repo: str) -> Path:
    path = MIRRORS / repo.replace("/", "+") / "repo"
    if not (path / "HEAD").is_file():
        pytest.skip(f"no {repo} mirror under $MOBILEBENCH_MIRRORS")
    return path


def _scan(repo: str, out: Path, *args: str, status: int = 0) -> dict:
    assert main(["mine", str(_mirror(repo)), "--out", str(out), "--no-validate", *args]) == status
    report = json.loads((out / "report.json").read_text())
    assert report["scanned"] == report["candidates"] + sum(report["rejected"].values())
    assert all(r["reason"] for r in report["rejections"])
    return report


def test_an_unreadable_commit_and_a_fix_whose_tree_lacks_blobs_are_named_rejections(tmp_path: Path) -> None:
    """The fix's own diff reads fine, but its tree holds blobs the mirror lacks (two iOS framework binaries and a
    snapshot): no checkout of it can be made, so it is rejected naming those files, not left to fail a clone."""
    unreadable, fix = "2c4dd8dd560c12c8f22c203a8c53e0e15746fed3", "2346df0969"
    report = _scan("RocketChat/Rocket.Chat.ReactNative", tmp_path, "--commits", f"{unreadable},{fix}", status=1)
    first, second = report["rejections"]
    assert first["commit"] == unreadable and first["reason"] == "unreadable_object"
    assert second["commit"].startswith(fix) and second["reason"] == "unreadable_object"
    assert "lacks 3 object(s)" in second["detail"] and "ios/Fabric.framework/Fabric (290ee1ca997d)" in second["detail"]


#: the mirrors of these two lack blobs in every tree of the window (iOS binaries, gifs, snapshots): no candidate
NO_CHECKOUT = {"RocketChat/Rocket.Chat.ReactNative", "pagopa/io-app"}


@pytest.mark.e2e
@pytest.mark.parametrize("repo", sorted(WINDOWS))
def test_a_window_of_history_scans_to_the_end_with_named_rejections(repo: str, tmp_path: Path) -> None:
    since = WINDOWS[repo]
    report = _scan(repo, tmp_path, *(["--since", since] if since else []), status=1 if repo in NO_CHECKOUT else 0)
    assert "no_tests_touched" in report["rejected"]
    if repo in NO_CHECKOUT:  # every would-be candidate is named, with the files its checkout would lack
        assert report["candidates"] == 0 and report["rejected"]["unreadable_object"] > 10
        assert all("lacks" in r["detail"] or "fatal:" in r["detail"] for r in report["rejections"]
                   if r["reason"] == "unreadable_object")  # fmt: skip
    else:
        assert report["candidates"] > 10 and not report["rejected"].get("unreadable_object")
        ranked = sorted(report["instances"].values(), key=lambda inst: inst["rank"])
        scores = [inst["bug_fix_evidence"]["score"] for inst in ranked]
        assert scores == sorted(scores, reverse=True)
    if repo == "pagopa/io-app":  # `chore(release): 3.38.0-rc.18` ...
        assert report["rejected"].get("release_or_version_bump", 0) > 20
