"""``dataset check --repo``: commits an instance names that its repository's local copy (a bundle, a mirror)
lacks are findings naming the instance, the field and the commit; a release without a framework is pointed at
``--framework``; a file that is not there is a finding of the file, never counted as an instance."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from pytest_mobilebench.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"
BUNDLE = ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"
JELLYFIN = Path(os.environ.get("MOBILEBENCH_MIRRORS", "/work/.mirror")) / "jellyfin+jellyfin-expo" / "repo"
MISSING = "0123456789abcdef0123456789abcdef01234567"


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["dataset", "check", *args])
    return code, capsys.readouterr().out.splitlines()


def test_a_commit_the_bundle_lacks_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load(SHIPPED.read_text())
    data["repo_url"] = str(BUNDLE)
    data["instances"][1]["fix_commit"] = MISSING
    broken = tmp_path / "counter.yaml"
    broken.write_text(yaml.safe_dump(data, sort_keys=False))
    code, lines = _check(capsys, str(broken), "--repo", str(BUNDLE))
    assert code == 1
    assert lines[0].startswith(f"{broken}:") and lines[0].endswith(
        f": instance 'mobilebench__counter-2': field 'fix_commit': commit {MISSING} is not in mobilebench/counter "
        f"({BUNDLE}): a run makes the instance invalid"
    )
    assert lines[1:] == ["dataset check: 2 instance(s) in 1 file(s): 1 finding(s)"]
    # without --repo the commits are not looked up: nothing found; the shipped file passes with it
    assert _check(capsys, str(broken))[0] == 0
    assert _check(capsys, str(SHIPPED), "--repo", f"mobilebench/counter={BUNDLE}") == (
        0,
        ["dataset check: 2 instance(s) in 1 file(s): no finding"],
    )


@pytest.mark.skipif(not (JELLYFIN / "HEAD").is_file(), reason="no jellyfin-expo mirror")
def test_the_shipped_cases_against_their_mirror_and_bundle(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _check(
        capsys,
        str(ROOT / "cases" / "examples"),
        str(ROOT / "cases" / "issue_resolution"),
        "--repo",
        str(BUNDLE),
        "--repo",
        str(JELLYFIN),
    )
    assert (code, lines) == (0, ["dataset check: 4 instance(s) in 2 file(s): no finding"])
    code, lines = _check(capsys, str(ROOT / "cases" / "issue_resolution"), "--repo", str(BUNDLE))
    assert lines[-1] == (
        "  no --repo for their repository, commits unchecked: jellyfin__jellyfin-expo-546, jellyfin__jellyfin-expo-649"
    )


def test_a_repo_that_is_not_there_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dataset", "check", str(SHIPPED), "--repo", str(tmp_path / "nope.bundle")]) == 2
    assert f"--repo {tmp_path / 'nope.bundle'}: no such file or folder" in capsys.readouterr().err


def test_a_release_without_framework_names_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load(SHIPPED.read_text())
    row = {k: v for k, v in data["instances"][0].items() if k in ("instance_id", "base_commit", "created_at")}
    row.update(
        repo="mobilebench/counter",
        patch="",
        test_patch="",
        FAIL_TO_PASS=json.dumps(data["instances"][0]["FAIL_TO_PASS"]),
        PASS_TO_PASS="[]",
    )
    release = tmp_path / "release.jsonl"
    release.write_text(json.dumps(row) + "\n")
    code, lines = _check(capsys, str(release), str(tmp_path / "missing.yaml"))
    assert code == 1
    assert lines[0].endswith(
        "field 'framework': Field required (the release names no framework: give --framework "
        "android|flutter|react-native, as pytest's --dataset-framework)"
    )
    assert lines[1] == f"{tmp_path / 'missing.yaml'}: no such file"
    assert lines[2] == "dataset check: 1 instance(s) in 2 file(s): 2 finding(s)"  # the missing file is no instance
    assert "--framework" not in "\n".join(_check(capsys, str(release), "--framework", "react-native")[1])
