"""Flutter and React-Native (jest) test plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks import PLANNING_FILES, PlanError, TestPlan, plan_tests, production_built
from pytest_mobilebench.frameworks.react_native import is_jest_test_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "recipes"


def test_flutter_plan_runs_only_test_entry_points() -> None:
    plan = plan_tests(
        "flutter",
        FIXTURES / "flutter-fvm",
        [
            "test/widgets/note_card_test.dart",
            "test/model/store_test.dart",
            "test/model/store_checks.dart",  # helper: not an entry point
            "integration_test/app_test.dart",  # needs a device
            "lib/model/store.dart",
        ],
    )
    assert plan == TestPlan(
        command=(
            "mkdir -p .mobilebench && flutter test --machine test/model/store_test.dart "
            "test/widgets/note_card_test.dart > .mobilebench/flutter-machine.jsonl; "
            "status=$?; cat .mobilebench/flutter-machine.jsonl; exit $status"
        ),
        result_globs=(".mobilebench/flutter-machine.jsonl",),
        parser="flutter",
        modules=(),
    )


def test_flutter_without_test_files_and_explicit_command() -> None:
    with pytest.raises(PlanError, match="no test/\\*\\*/\\*_test.dart"):
        plan_tests("flutter", FIXTURES / "flutter-fvm", ["lib/main.dart", "test/helpers.dart"])
    plan = plan_tests("flutter", FIXTURES / "flutter-fvm", [], test_command="flutter test --machine test/a_test.dart")
    assert (plan.command, plan.parser) == ("flutter test --machine test/a_test.dart", "flutter")


def test_flutter_production_compile_error_detection() -> None:
    plan = TestPlan("x", (), "flutter")
    lib_error = json.dumps(
        {"testID": 1, "error": "lib/model/store.dart:41:7: Error: The getter 'x' isn't defined.", "type": "error"}
    )
    test_error = json.dumps(
        {"testID": 1, "error": "test/model/store_test.dart:9:3: Error: Method not found: 'archive'.", "type": "error"}
    )
    assert not production_built("flutter", lib_error, plan)
    assert production_built("flutter", test_error, plan)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/b.test.ts", True),
        ("src/b.spec.tsx", True),
        ("src/__tests__/util.js", True),
        ("src/__tests__/__snapshots__/util.js.snap", False),
        ("src/util.ts", False),
        ("node_modules/x/a.test.js", False),
        ("e2e/login.e2e.js", False),
    ],
)
def test_jest_test_file_rule(path: str, expected: bool) -> None:
    assert is_jest_test_file(path) is expected


def _rn(tmp_path: Path, lockfile: str | None, package_manager: str | None = None) -> Path:
    data: dict[str, object] = {"name": "app", "version": "1.0.0"}
    if package_manager:
        data["packageManager"] = package_manager
    (tmp_path / "package.json").write_text(json.dumps(data), encoding="utf-8")
    if lockfile:
        (tmp_path / lockfile).write_text("", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("lockfile", "field", "runner"),
    [
        ("package-lock.json", None, "npx jest"),
        ("yarn.lock", None, "yarn jest"),
        ("pnpm-lock.yaml", None, "pnpm exec jest"),
        ("package-lock.json", "pnpm@9.1.0", "pnpm exec jest"),
        (None, None, "npx jest"),
    ],
)
def test_jest_runner_per_package_manager(tmp_path: Path, lockfile: str | None, field: str | None, runner: str) -> None:
    plan = plan_tests("react-native", _rn(tmp_path, lockfile, field), ["src/a.test.ts", "src/a.ts"])
    assert plan.command == (
        f"mkdir -p .mobilebench && {runner} --ci --json --outputFile=.mobilebench/jest-results.json "
        "--testLocationInResults --runTestsByPath src/a.test.ts"
    )
    assert (plan.result_globs, plan.parser, plan.modules) == ((".mobilebench/jest-results.json",), "jest", ())


def test_jest_paths_are_quoted_and_explicit_overrides(tmp_path: Path) -> None:
    repo = _rn(tmp_path, "yarn.lock")
    plan = plan_tests("react-native", repo, ["app/[id].test.tsx", "app/__tests__/b.ts"])
    assert plan.command.endswith("--runTestsByPath 'app/[id].test.tsx' app/__tests__/b.ts")
    plan = plan_tests("react-native", repo, [], test_targets=["src/only.test.ts"])
    assert plan.command.endswith("--runTestsByPath src/only.test.ts")
    plan = plan_tests("react-native", repo, ["src/a.test.ts"], test_command="yarn test --json")
    assert (plan.command, plan.parser, plan.result_globs) == (
        "yarn test --json",
        "jest",
        (".mobilebench/jest-results.json",),
    )
    with pytest.raises(PlanError, match="no jest test file"):
        plan_tests("react-native", repo, ["src/a.ts"])


def test_unknown_framework_and_planning_files() -> None:
    with pytest.raises(PlanError, match="'ios' is not one of"):
        plan_tests("ios", Path("."), [])
    assert "settings.gradle.kts" in PLANNING_FILES["android"] and "**/build.gradle.kts" in PLANNING_FILES["android"]
    assert PLANNING_FILES["react-native"][0] == "package.json"
    assert production_built("react-native", "anything", TestPlan("x", (), "jest"))


def test_react_native_plans_from_the_lockfiles_presence_alone() -> None:
    """Issue 23, item 3: a workspace lists the ``presence_files`` and copies nothing of them (``b""``)."""
    from pytest_mobilebench import frameworks

    fw = frameworks.get("react-native")
    assert set(fw.presence_files) <= set(fw.planning_files) and "package.json" not in fw.presence_files  # type: ignore[attr-defined]
    package = b'{"jest": {"testMatch": ["**/*.check.js"]}}'
    for lockfile in fw.presence_files:  # type: ignore[attr-defined]
        full = fw.plan({"package.json": package, lockfile: b"lockfileVersion: 9\n" * 500}, ["a.check.js", "b.test.js"])
        assert fw.plan({"package.json": package, lockfile: b""}, ["a.check.js", "b.test.js"]) == full
