"""Integrity: every name a diff section touches counts, and only git applies sections whose names differ.

On a real git repository with the real ``git apply`` / GNU ``patch`` ladder of the local workspace: a
plain diff whose ``---`` names a test file and whose ``+++`` names a new file is read by every check as a
change to the new file, while GNU ``patch`` (the last fallback) edits whichever name exists: the test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import git
from pytest_mobilebench import frameworks
from pytest_mobilebench.patch import PatchError, parse_patch
from pytest_mobilebench.suites.issue_resolution.policy import touched_test_files
from pytest_mobilebench.runtime.local import LocalWorkspace
from pytest_mobilebench.runtime.patching import strategies_for

pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")

SNEAKY = """\
--- a/__tests__/sum.test.js
+++ b/src/brand-new.js
@@ -1,3 +1,3 @@
 const sum = require('../src/sum');
-test('adds', () => expect(sum(1, 2)).toBe(3));
+test('adds', () => expect(true).toBe(true));
 
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "owned" / "repo"
    (root / "__tests__").mkdir(parents=True)
    (root / "src").mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "src" / "sum.js").write_text("module.exports = (a, b) => a - b;\n")
    (root / "__tests__" / "sum.test.js").write_text(
        "const sum = require('../src/sum');\ntest('adds', () => expect(sum(1, 2)).toBe(3));\n\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "tag", "mobilebench-base")
    return root


def test_both_names_of_a_section_count() -> None:
    info = parse_patch(SNEAKY)
    assert info.files[0].paths == ("__tests__/sum.test.js", "src/brand-new.js")
    assert info.files[0].names_differ
    assert touched_test_files(info, frameworks.get("react-native").test_rule({})) == ["__tests__/sum.test.js"]


def test_differing_names_never_reach_gnu_patch(repo: Path) -> None:
    assert [name for name, _ in strategies_for(SNEAKY)] == ["git apply", "git apply --3way"]
    ws = LocalWorkspace(repo, repo.parent)
    before = (repo / "__tests__" / "sum.test.js").read_text()
    result = ws.apply_patch(SNEAKY, name="model_patch")
    assert not result.ok, result.log  # git reads the +++ name, which does not exist
    assert "patch --batch" not in result.log
    assert (repo / "__tests__" / "sum.test.js").read_text() == before


def test_a_real_rename_still_applies_with_git(repo: Path) -> None:
    rename = (
        "diff --git a/src/sum.js b/src/add.js\nsimilarity index 100%\nrename from src/sum.js\nrename to src/add.js\n"
    )
    ws = LocalWorkspace(repo, repo.parent)
    assert ws.apply_patch(rename, name="model_patch").ok
    assert (repo / "src" / "add.js").is_file() and not (repo / "src" / "sum.js").exists()


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside", "../.."])
def test_symlinks_pointing_outside_the_repository_are_rejected(target: str) -> None:
    link = (
        "diff --git a/src/link b/src/link\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n"
        f"+++ b/src/link\n@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n"
    )
    with pytest.raises(PatchError, match="points outside the repository"):
        parse_patch(link, name="model_patch")


def test_a_symlink_inside_the_repository_is_kept(repo: Path) -> None:
    link = (
        "diff --git a/lib/sum.js b/lib/sum.js\nnew file mode 120000\n--- /dev/null\n+++ b/lib/sum.js\n"
        "@@ -0,0 +1 @@\n+../src/sum.js\n\\ No newline at end of file\n"
    )
    assert parse_patch(link).files[0].symlink_target == "../src/sum.js"
    ws = LocalWorkspace(repo, repo.parent)
    assert ws.apply_patch(link, name="model_patch").ok
    assert (repo / "lib" / "sum.js").is_symlink()
