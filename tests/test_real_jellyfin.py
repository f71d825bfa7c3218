"""The jellyfin/jellyfin-expo issue-resolution manifest against a local mirror of the real repository.

Fast checks only (no ``npm ci``, no jest): the manifest loads, every fix commit is split by the jest
test-file rule into a gold patch touching the expected source files and a test patch touching only jest
test files, both apply to the base commit, and the gold test ids name tests of the test patch's files.
Skipped where the mirror ``/work/.mirror/jellyfin+jellyfin-expo/repo`` is absent (CI machines).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks import is_test_file
from pytest_mobilebench.frameworks.react_native import is_jest_test_file
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.artifacts import Artifact
from pytest_mobilebench.patch import parse_patch
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.records import ManifestError
from pytest_mobilebench.suites.issue_resolution import SUITE, resolve_patches

MIRROR_ROOT = Path("/work/.mirror")
MIRROR = MIRROR_ROOT / "jellyfin+jellyfin-expo" / "repo"
URL_TEMPLATE = f"file://{MIRROR_ROOT}/{{owner}}+{{name}}/repo"
MANIFEST = Path(__file__).resolve().parent.parent / "cases" / "issue_resolution" / "jellyfin__jellyfin-expo.yaml"

#: instance id -> (files of the gold patch, files of the test patch), as read from the upstream commits.
EXPECTED_FILES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "jellyfin__jellyfin-expo-546": (("stores/SettingStore.js",), ("stores/__tests__/SettingStore.test.js",)),
    "jellyfin__jellyfin-expo-649": (
        ("App.js", "models/DownloadModel.ts"),
        ("models/__tests__/DownloadModel.test.js",),
    ),
}

pytestmark = pytest.mark.skipif(not (MIRROR / "HEAD").exists(), reason=f"no local mirror at {MIRROR}")


def _instances() -> dict[str, IssueInstance]:
    loaded = SUITE.load(MANIFEST, read_yaml(MANIFEST))
    errors = [r for r in loaded if isinstance(r, ManifestError)]
    assert not errors, errors
    return {r.instance_id: r.record for r in loaded if not isinstance(r, ManifestError)}


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> RepoCache:
    """A repository cache of its own, cloned from the local mirror (no network)."""
    return RepoCache(root=tmp_path_factory.mktemp("repos"), url_template=URL_TEMPLATE, run_id="test-real-jellyfin")


def test_manifest_loads_with_gold_lists() -> None:
    instances = _instances()
    assert sorted(instances) == sorted(EXPECTED_FILES)
    for inst in instances.values():
        assert inst.repo == "jellyfin/jellyfin-expo"
        assert inst.framework == "react-native"
        assert inst.environment.node == "20"
        assert inst.environment.package_manager == "npm"
        assert inst.fix_commit is not None and len(inst.fix_commit) == 40
        assert inst.FAIL_TO_PASS, inst.instance_id
        assert inst.PASS_TO_PASS, inst.instance_id


def test_base_commit_is_the_fix_commits_parent() -> None:
    for inst in _instances().values():
        parent = subprocess.run(
            ["git", f"--git-dir={MIRROR}", "rev-parse", f"{inst.fix_commit}^1"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        assert parent == inst.base_commit, inst.instance_id


@pytest.mark.parametrize("instance_id", sorted(EXPECTED_FILES))
def test_fix_commit_splits_into_gold_and_jest_test_patch(instance_id: str, repos: RepoCache) -> None:
    inst = _instances()[instance_id]
    gold, test = resolve_patches(inst, repos)
    gold_info = parse_patch(gold, name="gold")
    test_info = parse_patch(test, name="test")
    want_gold, want_test = EXPECTED_FILES[instance_id]
    assert gold_info.paths == want_gold
    assert test_info.paths == want_test
    assert all(f.artifact is Artifact.SOURCE for f in gold_info.files)
    assert not any(is_test_file(p, "react-native") for p in gold_info.paths)
    assert all(is_test_file(p, "react-native") and is_jest_test_file(p) for p in test_info.paths)
    # every gold test id names a test of a file that the test patch changes: "path::describe > title",
    # and that title is written in the file at the fix commit
    for test_id in (*inst.FAIL_TO_PASS, *inst.NONE_TO_PASS, *inst.PASS_TO_PASS):
        path, sep, title = test_id.partition("::")
        assert sep and title, test_id
        assert path in want_test, test_id
        source = subprocess.run(
            ["git", f"--git-dir={MIRROR}", "show", f"{inst.fix_commit}:{path}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        assert all(part in source for part in title.split(" > ")), test_id


@pytest.mark.parametrize("instance_id", sorted(EXPECTED_FILES))
def test_derived_patches_apply_to_the_base_commit(instance_id: str, repos: RepoCache, tmp_path: Path) -> None:
    inst = _instances()[instance_id]
    gold, test = resolve_patches(inst, repos)
    tree = repos.checkout(inst.repo, inst.base_commit, tmp_path / "tree")
    for name, text in (("test", test), ("gold", gold)):
        patch_file = tmp_path / f"{name}.diff"
        patch_file.write_text(text, encoding="utf-8")
        subprocess.run(["git", "apply", "--index", str(patch_file)], cwd=tree, check=True, capture_output=True)
    changed = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=tree, check=True, capture_output=True, text=True
    ).stdout.split()
    want_gold, want_test = EXPECTED_FILES[instance_id]
    assert sorted(changed) == sorted((*want_gold, *want_test))
    # base + test patch + gold patch is exactly the fix commit's tree
    tree_id = subprocess.run(["git", "write-tree"], cwd=tree, check=True, capture_output=True, text=True).stdout.strip()
    fix_tree = subprocess.run(
        ["git", "rev-parse", f"{inst.fix_commit}^{{tree}}"], cwd=tree, check=True, capture_output=True, text=True
    ).stdout.strip()
    assert tree_id == fix_tree
