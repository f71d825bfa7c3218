"""The framework registry: the protocol is checked at registration, a new framework plugs in without
touching the harness, and the test rule the patch splitter uses is the runner's own (real git repository)."""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from conftest import git
from pytest_mobilebench import frameworks
from pytest_mobilebench.frameworks import Environment, FrameworkError, TestPlan
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance, record_for
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.suites.issue_resolution import SUITE, resolve_patches

PACKAGE = Path(frameworks.__file__).resolve().parents[1]


class Harmony:
    """A device platform's framework, as a plugin would register it (hdc, JSON results)."""

    name = "harmony"
    parser = "jest"
    markers: tuple[str, ...] = ("device",)
    planning_files: tuple[str, ...] = ("oh-package.json5",)

    def config_paths(self, files: Mapping[str, bytes]) -> tuple[str, ...]:
        return ()

    def test_rule(self, files: Mapping[str, bytes]):  # type: ignore[no-untyped-def]
        return lambda path: "/ohosTest/" in f"/{path}"

    def plan(self, files: Mapping[str, bytes], test_files: Sequence[str], *, test_command: str | None = None,
             test_targets: Sequence[str] = (), test_results: Sequence[str] = (),
             environment: Environment = Environment()) -> TestPlan:  # fmt: skip
        return TestPlan(test_command or "hdc shell aa test", tuple(test_results) or ("out.json",), self.parser)

    def production_built(self, output: str, plan: TestPlan) -> bool:
        return "BUILD FAILED" not in output

    def runner_config(self, change, before, after, plan_command):  # type: ignore[no-untyped-def]
        return []

    def tool_path(self, path: str) -> str | None:
        return "hvigor cache" if path.startswith(".hvigor/") else None

    def infer_recipe(self, repo_dir: Path, overrides: Mapping[str, object]):  # type: ignore[no-untyped-def]
        raise NotImplementedError("device frameworks run on devices, not in images")


@pytest.fixture
def harmony() -> Iterator[Harmony]:
    yield frameworks.register(Harmony())  # type: ignore[misc]
    frameworks.unregister("harmony")


def test_the_protocol_is_checked_at_registration() -> None:
    class Half:
        name = "half"
        parser = "jest"

    with pytest.raises(FrameworkError, match="missing markers, planning_files, config_paths"):
        frameworks.register(Half())
    bad = Harmony()
    bad.markers = ["device"]  # type: ignore[assignment]
    with pytest.raises(FrameworkError, match="'markers' must be a tuple"):
        frameworks.register(bad)
    assert "half" not in frameworks.names()


def test_a_registered_framework_is_a_manifest_framework(harmony: Harmony) -> None:
    instance = IssueInstance(
        instance_id="a__b-1", repo="a/b", base_commit="a" * 40, framework="harmony", patch="", test_patch=""
    )
    assert record_for(instance, Path("m.yaml"), 1).markers == ("issue_resolution", "harmony", "device")
    assert frameworks.get("harmony").tool_path(".hvigor/x") == "hvigor cache"


def test_an_unknown_framework_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown framework 'ios'; expected one of android, flutter, react-native"):
        IssueInstance(instance_id="a__b-1", repo="a/b", base_commit="a" * 40, framework="ios", patch="", test_patch="")


def test_the_suite_declares_every_registered_framework_marker(harmony: Harmony) -> None:
    """The issue-resolution markers follow the registry: a new framework's name and markers are declared."""
    assert {"harmony", "device", "android", "flutter", "react-native", "react_native"} <= set(SUITE.markers)
    assert SUITE.markers["device"] == "harmony instances"
    frameworks.unregister("harmony")
    assert "harmony" not in SUITE.markers and "device" not in SUITE.markers


def test_a_framework_registered_from_a_conftest_selects_its_items_under_strict_markers(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        textwrap.dedent("""
        from pytest_mobilebench import frameworks

        class Ohos:
            name, parser, markers, planning_files = "ohos", "jest", ("arkts",), ()
            def config_paths(self, files): return ()
            def test_rule(self, files): return lambda path: "/ohosTest/" in "/" + path
            def plan(self, files, test_files, **kw): raise NotImplementedError
            def production_built(self, output, plan): return True
            def runner_config(self, change, before, after, plan_command): return []
            def tool_path(self, path): return None
            def infer_recipe(self, repo_dir, overrides): raise NotImplementedError

        frameworks.register(Ohos())

        def pytest_unconfigure(config):
            frameworks.unregister("ohos")
    """)
    )
    pytester.makefile(
        ".yaml",
        **{
            "cases/acme__app": textwrap.dedent(
                """\
        suite: issue_resolution
        repo: acme/app
        framework: ohos
        test_command: "true"
        instances:
          - {instance_id: acme__app-1, base_commit: "%s", patch: "", test_patch: ""}
    """
                % ("a" * 40)
            )
        },
    )
    for expression in ("ohos", "arkts"):
        result = pytester.runpytest(
            "cases", "--collect-only", "-q", "--strict-markers", "-m", expression, "-p", "no:cacheprovider"
        )
        assert "cases/acme__app.yaml::acme__app-1" in result.stdout.str(), result.stdout.str()
    assert "ohos" not in frameworks.names()


def test_no_framework_branch_outside_the_registry() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in PACKAGE.rglob("*.py")
        if "frameworks" not in path.relative_to(PACKAGE).parts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"framework\s*[!=]=", line)
    ]
    assert offenders == []


def _repo(root: Path, base_files: dict[str, str], fix_files: dict[str, str]) -> tuple[Path, str, str]:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in base_files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    for rel, text in fix_files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fix")
    return root, base, git(root, "rev-parse", "HEAD")


def _split(tmp_path: Path, framework: str, base_files: dict[str, str], fix_files: dict[str, str]) -> tuple[str, str]:
    root, base, fix = _repo(tmp_path / "src", base_files, fix_files)
    instance = IssueInstance(
        instance_id="a__b-1", repo="a/b", base_commit=base, fix_commit=fix, framework=framework, repo_url=str(root)
    )
    return resolve_patches(instance, RepoCache(root=tmp_path / "mirrors", run_id="t"))


def test_the_split_uses_jests_defaults_on_a_real_repository(tmp_path: Path) -> None:
    gold, test = _split(
        tmp_path, "react-native", {"package.json": "{}\n", "App.js": "a\n"},
        {"App.js": "b\n", "__tests__/App-test.js": "t\n", "src/x.spec.tsx": "t\n", "src/y.test.jsx": "t\n",
         "src/__tests__/__snapshots__/App-test.js.snap": "s\n"},
    )  # fmt: skip
    for name in ("__tests__/App-test.js", "src/x.spec.tsx", "src/y.test.jsx", "App-test.js.snap"):
        assert name in test and name not in gold
    assert "App.js" in gold


def test_the_split_reads_the_projects_own_test_match(tmp_path: Path) -> None:
    config = 'module.exports = {\n  testMatch: ["<rootDir>/checks/**/*.check.js"],\n};\n'
    gold, test = _split(
        tmp_path, "react-native", {"package.json": "{}\n", "jest.config.js": config, "lib.js": "a\n"},
        {"lib.js": "b\n", "checks/lib.check.js": "t\n"},
    )  # fmt: skip
    assert "checks/lib.check.js" in test and "checks/lib.check.js" not in gold


def test_the_split_counts_every_gradle_test_source_set(tmp_path: Path) -> None:
    gold, test = _split(
        tmp_path, "android", {"app/src/main/java/A.kt": "a\n"},
        {"app/src/main/java/A.kt": "b\n", "app/src/sharedTest/java/S.kt": "t\n",
         "app/src/testDebug/java/D.kt": "t\n", "lib/src/testFixtures/java/F.kt": "t\n"},
    )  # fmt: skip
    for name in ("sharedTest/java/S.kt", "testDebug/java/D.kt", "testFixtures/java/F.kt"):
        assert name in test and name not in gold


def test_planning_reads_file_contents_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every framework plans from the bytes the workspace returned: no host folder, temporary or not."""
    import os
    import pathlib
    import tempfile

    files = {
        "settings.gradle": b"include ':app', ':core'\n",
        "app/build.gradle": b"plugins { id 'com.android.application' }\nandroid {}\n",
        "core/build.gradle.kts": b"plugins { `java-library` }\n",
        "package.json": b'{"packageManager": "pnpm@9.1.0"}',
        "pubspec.yaml": b"name: app\n",
    }

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("planning touched the host file system")

    for name in ("is_file", "is_dir", "exists", "iterdir", "read_text", "read_bytes", "glob"):
        monkeypatch.setattr(pathlib.Path, name, refuse)
    monkeypatch.setattr(os, "walk", refuse)
    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    android = frameworks.get("android").plan(files, ["app/src/test/java/ATest.kt", "core/src/test/java/BTest.kt"])
    assert android.command.endswith(":app:testDebugUnitTest :core:test")
    assert " pnpm exec jest " in frameworks.get("react-native").plan(files, ["a.test.ts"]).command
    assert (
        "flutter test --machine test/a_test.dart" in frameworks.get("flutter").plan(files, ["test/a_test.dart"]).command
    )


def test_no_comparison_with_a_framework_name_outside_the_framework_modules() -> None:
    """Runtime, plugin, policy, manifest and suites compare no value with a framework's name or marker
    (``recipe.framework != "react-native"``, ``x in ("android", "flutter")``): they ask the registry or
    read what the framework's recipe declares. The framework modules and their recipes may name
    themselves; device platforms (``suites/device_repair``: ``"android"`` is a device there) are another
    registry."""
    spelled = {m for name in frameworks.names() for m in (name, *frameworks.get(name).markers)}
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(("frameworks/", "suites/device_repair/")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                names = [
                    c.value
                    for side in (node.left, *node.comparators)
                    for c in ast.walk(side)
                    if isinstance(c, ast.Constant) and c.value in spelled
                ]
                offenders += [f"{rel}:{node.lineno}: {ast.unparse(node)}" for _ in names[:1]]
    assert offenders == []
