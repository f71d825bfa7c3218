"""Tests of pytest_mobilebench.patch.

Diffs are either written here by hand (small, annotated) or produced by running real ``git`` on a
throw-away repository built in ``tmp_path``; the split results are checked by ``git apply``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks import default_test_rule, is_test_file
from pytest_mobilebench.artifacts import Artifact, artifact_type
from pytest_mobilebench.patch import (
    ChangeStatus,
    FileChange,
    PatchError,
    filter_patch,
    parse_patch,
    split_patch,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

# --------------------------------------------------------------------------------------------- helpers


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=check, env=env)


def _write(repo: Path, rel: str, data: bytes | str) -> None:
    target = repo / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.encode() if isinstance(data, str) else data)


def _init_repo(repo: Path) -> None:
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    _git(repo, "config", "core.quotePath", "true")
    _write(repo, "app/src/main/java/org/ex/Login.kt", "class Login {\n    fun ok() = false\n}\n")
    _write(repo, "app/src/main/res/values/strings.xml", "<resources>\n</resources>\n")
    _write(repo, "app/src/main/res/drawable/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR-one")
    _write(repo, "docs/Old Name.md", "# title\n\n" + "".join(f"line {i}\n" for i in range(10)) + "body\n")
    _write(repo, "scripts/run.sh", "echo run\n")
    _write(repo, "lib/legacy.dart", "void legacy() {}\n")
    _write(repo, "config/base.json", "".join(f'"k{i}": {i},\n' for i in range(30)))
    _write(repo, "app/src/test/java/org/ex/LoginTest.kt", "class LoginTest {\n}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")


def _make_fix(repo: Path) -> None:
    """One commit's worth of every kind of change git can express."""
    _write(repo, "app/src/main/java/org/ex/Login.kt", "class Login {\n    fun ok() = true\n}")  # no final newline
    _write(repo, "app/src/main/res/values-fr/strings.xml", '<resources>\n  <string name="a">b</string>\n</resources>\n')
    _write(repo, "app/src/main/res/drawable/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR-two")
    _git(repo, "mv", "docs/Old Name.md", "docs/New Name.md")
    _write(repo, "docs/New Name.md", "# title\n\n" + "".join(f"line {i}\n" for i in range(10)) + "body changed\n")
    (repo / "scripts/run.sh").chmod(0o755)
    _git(repo, "rm", "-q", "lib/legacy.dart")
    _write(repo, "app/empty.txt", "")
    _write(repo, "app/src/main/java/org/ex/Caf\u00e9.kt", "class Cafe\n")
    shutil.copy(repo / "config/base.json", repo / "config/copy.json")
    _write(repo, "app/src/test/java/org/ex/LoginTest.kt", "class LoginTest {\n    @Test fun ok() {}\n}\n")
    _write(repo, "app/src/androidTest/java/org/ex/UiTest.kt", "class UiTest\n")
    _git(repo, "add", "-A")


@pytest.fixture()
def git_fix(tmp_path: Path) -> tuple[Path, str]:
    """A repository at its base commit plus the staged fix's diff as git prints it (-M -C --binary)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    _init_repo(repo)
    _make_fix(repo)
    diff = _git(repo, "diff", "--cached", "-M", "-C", "--find-copies-harder", "--binary").stdout.decode()
    _git(repo, "reset", "-q", "--hard")
    return repo, diff


def _applies(repo: Path, patch: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[bytes]:
    patch_file = tmp_path / f"p{len(list(tmp_path.iterdir()))}.diff"
    patch_file.write_bytes(patch.encode("utf-8"))
    return _git(repo, "apply", *extra, str(patch_file), check=False)


# --------------------------------------------------------------------------------------------- parse: git output


def test_parse_real_git_diff_every_kind_of_change(git_fix: tuple[Path, str]) -> None:
    _, diff = git_fix
    info = parse_patch(diff, name="fix")
    by_path = {f.path: f for f in info.files}
    assert set(by_path) == {
        "app/empty.txt",
        "app/src/androidTest/java/org/ex/UiTest.kt",
        "app/src/main/java/org/ex/Caf\u00e9.kt",
        "app/src/main/java/org/ex/Login.kt",
        "app/src/main/res/drawable/logo.png",
        "app/src/main/res/values-fr/strings.xml",
        "app/src/test/java/org/ex/LoginTest.kt",
        "config/copy.json",
        "docs/New Name.md",
        "lib/legacy.dart",
        "scripts/run.sh",
    }
    login = by_path["app/src/main/java/org/ex/Login.kt"]
    assert (login.status, login.added, login.removed, login.hunks, login.binary) == (
        ChangeStatus.MODIFIED, 2, 2, 1, False,
    )  # fmt: skip
    assert login.old_path == login.path
    assert login.artifact is Artifact.SOURCE

    logo = by_path["app/src/main/res/drawable/logo.png"]
    assert (logo.status, logo.binary, logo.added, logo.removed, logo.hunks) == (ChangeStatus.MODIFIED, True, 0, 0, 0)
    assert logo.artifact is Artifact.RESOURCE

    renamed = by_path["docs/New Name.md"]
    assert renamed.status is ChangeStatus.RENAMED
    assert renamed.old_path == "docs/Old Name.md"
    assert (renamed.added, renamed.removed) == (1, 1)
    assert renamed.paths == ("docs/Old Name.md", "docs/New Name.md")
    assert renamed.artifact is Artifact.DOCS

    copied = by_path["config/copy.json"]
    assert (copied.status, copied.old_path, copied.added, copied.removed) == (
        ChangeStatus.COPIED, "config/base.json", 0, 0,
    )  # fmt: skip
    assert copied.paths == ("config/base.json", "config/copy.json")  # every name a section touches counts

    mode = by_path["scripts/run.sh"]
    assert (mode.status, mode.hunks, mode.added) == (ChangeStatus.MODIFIED, 0, 0)

    deleted = by_path["lib/legacy.dart"]
    assert (deleted.status, deleted.removed, deleted.added) == (ChangeStatus.DELETED, 1, 0)

    empty = by_path["app/empty.txt"]
    assert (empty.status, empty.old_path, empty.hunks) == (ChangeStatus.ADDED, None, 0)

    i18n = by_path["app/src/main/res/values-fr/strings.xml"]
    assert (i18n.status, i18n.added, i18n.artifact) == (ChangeStatus.ADDED, 3, Artifact.I18N)

    assert by_path["app/src/main/java/org/ex/Caf\u00e9.kt"].status is ChangeStatus.ADDED  # C-quoted by git

    # 2+2 (Login) + 3 (fr strings) + 1+1 (rename) + 1 (delete) + 1 (Café) + 1 (LoginTest) + 1 (UiTest)
    assert info.lines_changed == 2 + 2 + 3 + 2 + 1 + 1 + 1 + 1
    assert info.binary_files == ("app/src/main/res/drawable/logo.png",)
    assert "docs/Old Name.md" in info.paths and "docs/New Name.md" in info.paths
    assert "config/base.json" in info.paths  # every name a section touches counts, a copy's source too
    assert info.paths == tuple(sorted(info.paths))
    assert info.artifacts == {Artifact.SOURCE, Artifact.RESOURCE, Artifact.I18N, Artifact.DOCS, Artifact.OTHER}
    assert info.to_dict()["lines_changed"] == info.lines_changed


def test_git_binary_without_binary_flag(git_fix: tuple[Path, str]) -> None:
    repo, _ = git_fix
    _make_fix(repo)
    diff = _git(repo, "diff", "--cached", "-M").stdout.decode()
    assert "Binary files a/app/src/main/res/drawable/logo.png and b/app/src/main/res/drawable/logo.png differ" in diff
    info = parse_patch(diff)
    assert info.binary_files == ("app/src/main/res/drawable/logo.png",)


def test_crlf_diff_parses_like_lf(git_fix: tuple[Path, str]) -> None:
    _, diff = git_fix
    crlf = diff.replace("\n", "\r\n")
    assert parse_patch(crlf).files == parse_patch(diff).files


def test_no_newline_marker_is_not_counted() -> None:
    text = (
        "--- a/x.kt\n"
        "+++ b/x.kt\n"
        "@@ -1,2 +1,2 @@\n"
        " keep\n"
        "-old\n"
        "\\ No newline at end of file\n"
        "+new\n"
        "\\ No newline at end of file\n"
    )
    (change,) = parse_patch(text).files
    assert (change.path, change.added, change.removed, change.hunks) == ("x.kt", 1, 1, 1)


def test_removed_line_that_looks_like_a_header_stays_in_its_hunk() -> None:
    # the removed content "-- notes" renders as "--- notes", and the added "++ more" as "+++ more"
    text = (
        "diff --git a/README.md b/README.md\n"
        "--- a/README.md\n"
        "+++ b/README.md\n"
        "@@ -1,2 +1,2 @@\n"
        " title\n"
        "--- notes\n"
        "+++ more\n"
        "diff --git a/b.kt b/b.kt\n"
        "--- a/b.kt\n"
        "+++ b/b.kt\n"
        "@@ -1 +1,2 @@\n"
        " x\n"
        "+y\n"
    )
    info = parse_patch(text)
    assert [(f.path, f.added, f.removed) for f in info.files] == [("README.md", 1, 1), ("b.kt", 1, 0)]


def test_gnu_diff_with_timestamps_and_p1_paths() -> None:
    text = (
        "diff -ru orig/src/A.java new/src/A.java\n"
        "--- orig/src/A.java\t2024-01-01 10:00:00.000000000 +0000\n"
        "+++ new/src/A.java\t2024-01-02 10:00:00.000000000 +0000\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
        "diff -ru orig/src/B.java new/src/B.java\n"
        "--- orig/src/B.java\t2024-01-01 10:00:00.000000000 +0000\n"
        "+++ new/src/B.java\t2024-01-02 10:00:00.000000000 +0000\n"
        "@@ -1,0 +2 @@\n"
        "+c\n"
    )
    info = parse_patch(text)
    assert [(f.path, f.added, f.removed, f.line) for f in info.files] == [
        ("src/A.java", 1, 1, 1),
        ("src/B.java", 1, 0, 7),
    ]
    non_test, test = split_patch(text, default_test_rule("android"))
    assert test == ""
    assert non_test == text


def test_format_patch_preamble_and_signature(git_fix: tuple[Path, str]) -> None:
    repo, _ = git_fix
    _make_fix(repo)
    _git(repo, "commit", "-q", "-m", "fix: login\n\nLonger body with --- dashes inside.")
    mail = _git(repo, "format-patch", "-1", "--stdout", "-M", "-C", "--binary").stdout.decode()
    assert mail.startswith("From ")
    info = parse_patch(mail)
    assert len(info.files) == 11
    non_test, test = split_patch(mail, default_test_rule("android"))
    assert "Subject:" not in non_test + test


def test_empty_patch_is_valid_and_empty() -> None:
    for text in ("", "  \n\n\t\n", "\r\n"):
        info = parse_patch(text, name="model_patch")
        assert info.files == ()
        assert info.is_empty
        assert info.paths == ()
        assert info.lines_changed == 0
    assert split_patch("", default_test_rule("flutter")) == ("", "")


# --------------------------------------------------------------------------------------------- errors


def test_not_a_diff_names_patch_and_line() -> None:
    with pytest.raises(PatchError) as err:
        parse_patch("\nI fixed the bug by editing Login.kt.\nThanks!\n", name="model_patch")
    assert err.value.name == "model_patch"
    assert err.value.line == 2
    assert str(err.value).startswith("model_patch: line 2: not a unified diff")
    assert "I fixed the bug" in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    ("minus", "plus", "bad"),
    [
        ("/etc/passwd", "/etc/passwd", "/etc/passwd"),
        ("a//etc/hosts", "b//etc/hosts", "a//etc/hosts"),
        ("../outside", "../outside", "../outside"),
        ("a/../../x", "b/../../x", "a/../../x"),
        ("a/ok.kt", "b/../x.kt", "b/../x.kt"),
    ],
)
def test_bad_paths_are_rejected_with_line_and_path(minus: str, plus: str, bad: str) -> None:
    text = f"--- {minus}\n+++ {plus}\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(PatchError) as err:
        parse_patch(text, name="model_patch")
    message = str(err.value)
    assert message.startswith("model_patch: line ")
    assert repr(bad) in message or repr(bad.split("/", 1)[1]) in message
    assert "absolute path" in message or "escapes the repository" in message


def test_escaping_rename_target_is_rejected() -> None:
    text = "diff --git a/x b/x\nsimilarity index 100%\nrename from x\nrename to ../../etc/x\n"
    with pytest.raises(PatchError, match=r"line 4: path '../../etc/x' escapes the repository"):
        parse_patch(text, name="model_patch")


def test_inner_dotdot_is_normalised() -> None:
    (change,) = parse_patch("--- a/src/../lib/x.dart\n+++ b/src/../lib/x.dart\n@@ -1 +1 @@\n-a\n+b\n").files
    assert change.path == "lib/x.dart"


def test_nul_byte_is_rejected_with_line() -> None:
    text = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\x00c\n"
    with pytest.raises(PatchError, match=r"^test_patch: line 5: NUL byte"):
        parse_patch(text, name="test_patch")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n", r"line 6: hunk '@@ -1,3 \+1,3 @@' is truncated"),
        (
            "--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n-b\n+c\n",
            r"line 5: hunk '@@ -1 \+1,2 @@' has more lines than its header",
        ),
        ("--- a/x\n+++ b/x\n@@ -one +1 @@\n-a\n", r"line 3: malformed hunk header"),
        ("@@ -1 +1 @@\n-a\n+b\n", r"line 1: hunk header without a '---'/'\+\+\+' file header"),
        ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n*b\n", r"line 5: line '\*b' inside hunk"),
        ("--- a/x\n+++ b/x\n", r"line 1: file header for 'x' has no hunks"),
        ("diff --git a/x b/x\nindex 1..2 100644\n", r"line 1: 'diff --git' section for 'x' changes nothing"),
    ],
)
def test_malformed_diffs(text: str, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        parse_patch(text)


def test_extra_hunk_line_after_complete_hunk_is_trailing_text() -> None:
    # "+c" after a complete 1/1 hunk is not part of it; git apply ignores such a tail too
    (change,) = parse_patch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n").files
    assert (change.added, change.removed) == (1, 1)


# --------------------------------------------------------------------------------------------- taxonomy


@pytest.mark.parametrize(
    ("path", "artifact"),
    [
        # i18n first: locale strings beat the res/ subtree; .arb anywhere
        ("app/src/main/res/values-fr/strings.xml", Artifact.I18N),
        ("app/src/main/res/values-pt-rBR/strings.xml", Artifact.I18N),
        ("lib/l10n/app_en.arb", Artifact.I18N),
        # default-locale strings.xml is not values-*: falls to the res/ subtree
        ("app/src/main/res/values/strings.xml", Artifact.RESOURCE),
        ("app/src/main/res/values-fr/colors.xml", Artifact.RESOURCE),
        ("app/src/main/res/layout/activity_main.xml", Artifact.RESOURCE),
        ("assets/images/logo.PNG", Artifact.RESOURCE),
        ("fastlane/metadata/android/en-US/images/phoneScreenshots/1.jpg", Artifact.RESOURCE),
        ("assets/sounds/ding.mp3", Artifact.RESOURCE),
        ("app/src/main/AndroidManifest.xml", Artifact.MANIFEST),
        ("pubspec.yaml", Artifact.MANIFEST),
        ("packages/core/pubspec.yaml", Artifact.MANIFEST),
        ("build.gradle", Artifact.BUILD),
        ("app/build.gradle.kts", Artifact.BUILD),
        ("buildSrc/src/main/kotlin/Deps.kts", Artifact.BUILD),
        ("gradle/libs.versions.toml", Artifact.BUILD),
        ("settings.gradle", Artifact.BUILD),
        ("settings.gradle.kts", Artifact.BUILD),
        ("gradle.properties", Artifact.BUILD),
        (".github/workflows/ci.yml", Artifact.CONFIG),
        (".gitlab-ci.yml", Artifact.CONFIG),
        (".eslintrc.js", Artifact.CONFIG),  # config before source
        ("analysis_options.yaml", Artifact.CONFIG),
        ("config/detekt/detekt.yml", Artifact.CONFIG),
        ("yarn.lock", Artifact.CONFIG),
        ("package-lock.json", Artifact.CONFIG),
        ("pubspec.lock", Artifact.CONFIG),
        ("ios/Podfile.lock", Artifact.CONFIG),
        ("README.md", Artifact.DOCS),
        ("docs/guide.markdown", Artifact.DOCS),
        ("CHANGELOG", Artifact.DOCS),
        ("LICENSE.txt", Artifact.DOCS),
        ("fastlane/metadata/android/en-US/changelogs/1042.txt", Artifact.DOCS),
        ("app/src/main/java/org/ex/Login.kt", Artifact.SOURCE),
        ("app/src/main/java/org/ex/Login.java", Artifact.SOURCE),
        ("lib/main.dart", Artifact.SOURCE),
        ("src/App.tsx", Artifact.SOURCE),
        ("src/api.ts", Artifact.SOURCE),
        ("index.js", Artifact.SOURCE),
        ("src/Button.jsx", Artifact.OTHER),
        ("app/proguard-rules.pro", Artifact.OTHER),
        ("app/jacoco.gradle", Artifact.OTHER),
        ("tsconfig.json", Artifact.OTHER),
        ("Makefile", Artifact.OTHER),
    ],
)
def test_artifact_type(path: str, artifact: Artifact) -> None:
    assert artifact_type(path) is artifact


def test_artifact_order_is_first_match() -> None:
    assert [a.value for a in Artifact] == ["i18n", "resource", "manifest", "build", "config", "docs", "source", "other"]
    # a Kotlin file under res/ is a resource (rule 2 comes before rule 7)
    assert artifact_type("app/src/main/res/raw/script.js") is Artifact.RESOURCE
    # a Markdown file in a workflows folder is config (rule 5 before rule 6)
    assert artifact_type(".github/workflows/README.md") is Artifact.CONFIG


@pytest.mark.parametrize(
    ("path", "framework", "expected"),
    [
        ("app/src/test/java/org/ex/LoginTest.kt", "android", True),
        ("app/src/main/java/org/ex/LoginTest.kt", "android", True),
        ("app/src/main/java/org/ex/LoginTest.java", "android", True),
        ("app/src/androidTest/java/org/ex/Ui.kt", "android", True),
        ("app/src/test/resources/fixture.json", "android", True),
        ("app/src/main/java/org/ex/Login.kt", "android", False),
        ("app/src/main/java/org/ex/LoginTests.kt", "android", False),
        ("app/src/main/java/org/ex/testing/Fake.kt", "android", False),
        ("app/src/main/java/org/test/Fake.kt", "android", False),  # a package folder, not a source set
        ("core/data/src/androidTest/AndroidManifest.xml", "android", True),
        ("test/Helper.kt", "android", False),
        ("src/__tests__/App.test.tsx", "react-native", True),
        ("src/util.test.ts", "react-native", True),
        ("src/util.test.js", "react-native", True),
        ("e2e/login.spec.ts", "react-native", True),
        ("e2e/login.spec.js", "react-native", True),  # jest's default testMatch runs *.spec.js
        ("src/test/helpers.ts", "react-native", False),
        ("android/app/src/test/java/ExampleTest.java", "react-native", False),
        ("test/widget_test.dart", "flutter", True),
        ("test/helpers/fakes.dart", "flutter", True),
        ("integration_test/app_test.dart", "flutter", True),
        ("packages/core/test/fixtures/a.json", "flutter", True),
        ("lib/main.dart", "flutter", False),
        ("lib/testing.dart", "flutter", False),
    ],
)
def test_is_test_file(path: str, framework: str, expected: bool) -> None:
    assert is_test_file(path, framework) is expected


def test_is_test_file_unknown_framework() -> None:
    with pytest.raises(ValueError, match="unknown framework 'ios'"):
        is_test_file("a/bTest.swift", "ios")
    with pytest.raises(ValueError, match="unknown framework"):
        default_test_rule("React-Native")


# --------------------------------------------------------------------------------------------- split / filter


@needs_git
def test_split_parts_apply_and_rebuild_the_fix(git_fix: tuple[Path, str], tmp_path: Path) -> None:
    repo, diff = git_fix
    code, tests = split_patch(diff, default_test_rule("android"))
    code_paths = set(parse_patch(code).paths)
    test_paths = set(parse_patch(tests).paths)
    assert test_paths == {"app/src/test/java/org/ex/LoginTest.kt", "app/src/androidTest/java/org/ex/UiTest.kt"}
    assert code_paths & test_paths == set()
    assert code_paths | test_paths == set(parse_patch(diff).paths)
    # every section is kept byte for byte: each part's sections appear verbatim in the original
    for part in (code, tests):
        for chunk in part.split("diff --git ")[1:]:
            assert "diff --git " + chunk in diff or ("diff --git " + chunk).rstrip("\n") in diff
    # both parts are valid patches that git applies, in either order, to the base commit
    assert _applies(repo, tests, tmp_path, "--check").returncode == 0
    assert _applies(repo, code, tmp_path, "--check").returncode == 0
    assert _applies(repo, tests, tmp_path).returncode == 0
    assert _applies(repo, code, tmp_path).returncode == 0
    _git(repo, "add", "-A")
    rebuilt = _git(repo, "diff", "--cached", "-M", "-C", "--find-copies-harder", "--binary").stdout.decode()
    assert rebuilt == diff


@needs_git
def test_split_keeps_crlf_bytes(git_fix: tuple[Path, str]) -> None:
    _, diff = git_fix
    crlf = diff.replace("\n", "\r\n")
    code, tests = split_patch(crlf, default_test_rule("android"))
    assert "\r\n" in tests and "\n" not in tests.replace("\r\n", "")
    assert (code, tests) == tuple(
        part.replace("\n", "\r\n") for part in split_patch(diff, default_test_rule("android"))
    )


def test_split_missing_final_newline_gets_one_between_sections() -> None:
    test_section = "--- a/test/a_test.dart\n+++ b/test/a_test.dart\n@@ -1 +1 @@\n-a\n+b"
    lib_section = "--- a/lib/a.dart\n+++ b/lib/a.dart\n@@ -1 +1 @@\n-a\n+b\n"
    text = lib_section + test_section
    code, tests = split_patch(text, default_test_rule("flutter"))
    assert (code, tests) == (lib_section, test_section)
    # reordered: the section without final newline is no longer last, so it must gain one
    swapped = test_section + "\n" + lib_section
    assert filter_patch(swapped, lambda p: True) == swapped
    assert filter_patch(test_section, lambda p: True) == test_section


def test_split_rename_into_tests_goes_to_test_patch() -> None:
    text = (
        "diff --git a/lib/helper.dart b/test/helper.dart\n"
        "similarity index 100%\n"
        "rename from lib/helper.dart\n"
        "rename to test/helper.dart\n"
        "diff --git a/lib/a.dart b/lib/a.dart\n"
        "--- a/lib/a.dart\n"
        "+++ b/lib/a.dart\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
    )
    code, tests = split_patch(text, default_test_rule("flutter"))
    assert tests == "".join(text.splitlines(keepends=True)[:4])
    assert code == "".join(text.splitlines(keepends=True)[4:])
    assert filter_patch(text, lambda p: not is_test_file(p, "flutter")) == code


def test_filter_patch_by_predicate() -> None:
    text = (
        "--- a/src/App.tsx\n+++ b/src/App.tsx\n@@ -1 +1 @@\n-a\n+b\n"
        "--- a/src/App.test.tsx\n+++ b/src/App.test.tsx\n@@ -1 +1 @@\n-a\n+b\n"
        "--- a/package.json\n+++ b/package.json\n@@ -1 +1 @@\n-a\n+b\n"
    )
    kept = filter_patch(text, lambda p: p.startswith("src/"))
    assert [f.path for f in parse_patch(kept).files] == ["src/App.tsx", "src/App.test.tsx"]
    assert filter_patch(text, lambda p: False) == ""
    code, tests = split_patch(text, default_test_rule("react-native"))
    assert [f.path for f in parse_patch(tests).files] == ["src/App.test.tsx"]
    assert [f.path for f in parse_patch(code).files] == ["src/App.tsx", "package.json"]
    with pytest.raises(PatchError, match="^model_patch: line 1: not a unified diff"):
        filter_patch("hello", lambda p: True, name="model_patch")


def test_filechange_to_dict_is_plain() -> None:
    (change,) = parse_patch("--- /dev/null\n+++ b/pubspec.yaml\n@@ -0,0 +1 @@\n+name: x\n").files
    assert change == FileChange(
        path="pubspec.yaml", old_path=None, status=ChangeStatus.ADDED, added=1, removed=0, hunks=1,
        binary=False, artifact=Artifact.MANIFEST, line=1,
    )  # fmt: skip
    assert change.to_dict() == {
        "path": "pubspec.yaml", "old_path": None, "status": "added", "added": 1, "removed": 0, "hunks": 1,
        "binary": False, "artifact": "manifest", "line": 1, "symlink_target": None,
    }  # fmt: skip
