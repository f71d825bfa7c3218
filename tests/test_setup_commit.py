"""``environment_setup_commit`` (issue 30): the manifest field, where the install inputs come from, and the miner's
choice. Pure or plain git; the Docker run is ``tests/test_setup_commit_docker.py``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.mining.gitsource import Commit
from pytest_mobilebench.mining.records import Candidate, swe_bench_row
from pytest_mobilebench.mining.split import split_change
from pytest_mobilebench.records import LoadedRecord, ManifestError
from pytest_mobilebench.runtime.docker import _setup_tree
from pytest_mobilebench.runtime.install_inputs import is_install_input
from pytest_mobilebench.runtime.setup_inputs import SetupInputs
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance, load_dataset, load_manifest

BASE, FIX = "a" * 40, "b" * 40
ROW = {"instance_id": "acme__app-1", "repo": "acme/app", "base_commit": BASE, "framework": "react-native"}


def _load(tmp_path: Path, text: str) -> list[LoadedRecord | ManifestError]:
    path = tmp_path / "acme__app.yaml"
    path.write_text(text)
    return load_manifest(read_yaml(path))


def test_the_manifest_field_is_read_and_absent_means_the_base(tmp_path: Path) -> None:
    head = "suite: issue_resolution\nrepo: acme/app\nframework: react-native\ninstances:\n"
    entry = f"  - instance_id: acme__app-1\n    base_commit: {BASE}\n    fix_commit: {FIX}\n"
    [named] = _load(tmp_path, head + entry + f"    environment_setup_commit: {FIX}\n")
    [plain] = _load(tmp_path, head + entry)
    assert isinstance(named, LoadedRecord) and named.record.environment_setup_commit == FIX
    assert isinstance(plain, LoadedRecord) and plain.record.environment_setup_commit is None


def test_a_malformed_setup_commit_is_an_error_naming_the_instance_and_field(tmp_path: Path) -> None:
    text = (
        "suite: issue_resolution\nrepo: acme/app\nframework: react-native\ninstances:\n"
        f"  - instance_id: acme__app-1\n    base_commit: {BASE}\n    fix_commit: {FIX}\n"
        "    environment_setup_commit: not-a-sha\n"
        f"  - instance_id: acme__app-2\n    base_commit: {BASE}\n    fix_commit: {FIX}\n"
    )
    bad, good = _load(tmp_path, text)
    assert isinstance(bad, ManifestError) and isinstance(good, LoadedRecord)
    assert bad.instance_id == "acme__app-1" and bad.field == "environment_setup_commit" and bad.line == 8
    assert "not-a-sha" in str(bad)


def test_a_dataset_row_names_it_and_an_empty_one_is_the_base(tmp_path: Path) -> None:
    rows = [
        {**ROW, "patch": "", "test_patch": "", "environment_setup_commit": FIX},
        {**ROW, "instance_id": "acme__app-2", "patch": "", "test_patch": "", "environment_setup_commit": ""},
    ]
    path = tmp_path / "release.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first, second = load_dataset(path)
    assert isinstance(first, LoadedRecord) and first.record.environment_setup_commit == FIX
    assert isinstance(second, LoadedRecord) and second.record.environment_setup_commit is None


def test_the_workspace_spec_carries_it() -> None:
    from pytest_mobilebench.suites.issue_resolution.workspaces import workspace_spec

    class Ctx:
        options = {"mb_repo_url_template": "https://example.invalid/{repo}.git"}
        run_id = "r"

    instance = IssueInstance.model_validate({**ROW, "fix_commit": FIX, "environment_setup_commit": FIX})
    assert workspace_spec(instance, Ctx()).environment_setup_commit == FIX  # type: ignore[arg-type]
    plain = IssueInstance.model_validate({**ROW, "fix_commit": FIX})
    assert workspace_spec(plain, Ctx()).environment_setup_commit is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("package.json", True),
        ("packages/ui/package.json", True),
        ("yarn.lock", True),
        ("patches/react-native+0.74.patch", True),
        ("android/gradle/wrapper/gradle-wrapper.properties", True),
        ("src/App.tsx", False),
        ("node_modules/x/package.json", False),
        ("docs/package.md", False),
    ],
)
def test_install_inputs_by_path(path: str, expected: bool) -> None:
    assert is_install_input(path) is expected


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@x.invalid", "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"}
    out = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _history(tmp_path: Path) -> tuple[Path, str, str, str]:
    """``(repo, base, fix adding a dependency and a lockfile, a source-only commit)``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "package.json").write_text('{"name": "x"}\n')
    (repo / "old.lock").write_text("old\n")
    (repo / "src.js").write_text("1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (repo / "package.json").write_text('{"name": "x", "dependencies": {"is-number": "7.0.0"}}\n')
    (repo / "yarn.lock").write_text("is-number@7.0.0\n")
    (repo / "src.js").write_text("2\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "fix")
    fix = _git(repo, "rev-parse", "HEAD")
    (repo / "src.js").write_text("3\n")
    _git(repo, "commit", "-qam", "source only")
    return repo, base, fix, _git(repo, "rev-parse", "HEAD")


def test_the_install_inputs_come_from_the_setup_commit_and_the_base_comes_back(tmp_path: Path) -> None:
    from pytest_mobilebench.runtime.checkout import export_tree, shallow_checkout

    repo, base, fix, _ = _history(tmp_path)
    tree = tmp_path / "tree"
    sha = export_tree(repo, base, tree)
    assert _setup_tree(repo, tree, sha, None, tmp_path / "s0") == (tree, None)
    assert _setup_tree(repo, tree, sha, base[:10], tmp_path / "s1") == (tree, None)
    inputs_tree, setup = _setup_tree(repo, tree, sha, fix, tmp_path / "s2")
    assert inputs_tree == tmp_path / "s2" and setup is not None
    assert setup.changed == ["package.json", "yarn.lock"]
    assert b"is-number" in setup.setup["package.json"] and b"is-number" not in setup.base["package.json"]
    # the instance's own install: the setup's inputs written over the base checkout, then the base put back
    checkout = tmp_path / "checkout"
    shallow_checkout(repo, sha, checkout)
    setup.overlay(checkout)
    assert b"is-number" in (checkout / "package.json").read_bytes() and (checkout / "yarn.lock").is_file()
    command = setup.install_command("cp yarn.lock installed")
    subprocess.run(["bash", "-c", "set -e; " + command], cwd=checkout, check=True)
    assert (checkout / "installed").read_text() == "is-number@7.0.0\n"
    assert _git(checkout, "status", "--porcelain") == "?? installed"


def test_the_setup_key_follows_the_inputs_content() -> None:
    one = SetupInputs(base={"package.json": b"a"}, setup={"package.json": b"b"})
    same = SetupInputs(base={"package.json": b"z"}, setup={"package.json": b"b"})
    other = SetupInputs(base={"package.json": b"a"}, setup={"package.json": b"c"})
    assert one.key == same.key != other.key
    assert SetupInputs(base={"a": b"1"}, setup={"a": b"1"}).restore_command() == "true"


def _candidate(repo: Path, base: str, fix: str) -> Candidate:
    diff = subprocess.run(["git", "diff", base, fix], cwd=repo, capture_output=True, text=True, check=True).stdout
    split = split_change(diff, lambda p: p.startswith("__tests__/"), name="t")
    commit = Commit(fix, (base,), "2026-01-05T10:00:00+00:00", "fix: x")
    return Candidate("acme__app-2", "acme/app", "react-native", commit, split, "", "commit", (), {}, {}, "jest")


def test_the_miner_names_the_fix_as_setup_commit_only_when_it_changes_install_inputs(tmp_path: Path) -> None:
    repo, base, fix, source_only = _history(tmp_path)
    deps = _candidate(repo, base, fix)
    assert deps.install_inputs_changed == ["package.json", "yarn.lock"]
    assert deps.environment_setup_commit == fix and deps.entry()["environment_setup_commit"] == fix
    assert swe_bench_row(deps, {})["environment_setup_commit"] == fix
    plain = _candidate(repo, fix, source_only)
    assert plain.environment_setup_commit == fix  # its base
    assert (
        "environment_setup_commit" not in plain.entry() and swe_bench_row(plain, {})["environment_setup_commit"] == fix
    )


def test_a_setup_commit_the_repository_lacks_makes_the_instance_invalid_naming_the_field(tmp_path: Path) -> None:
    from pytest_mobilebench.runtime.base import NotInRepository
    from pytest_mobilebench.suites.issue_resolution.manifest import invalid_source, record_for

    setup = "c" * 40
    instance = IssueInstance.model_validate({**ROW, "fix_commit": FIX, "environment_setup_commit": setup})
    error = invalid_source(record_for(instance, tmp_path / "m.yaml", 3), NotInRepository("acme/app", "u", (setup,)))
    assert error.field == "environment_setup_commit" and error.instance_id == "acme__app-1" and error.line == 3
    assert f"environment_setup_commit {setup} is not in the repository" in str(error)
