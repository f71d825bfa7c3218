"""What a candidate may not change: test files (flag) and the test runner's configuration (violation)."""

from __future__ import annotations

import json

from pytest_mobilebench.patch import parse_patch
from pytest_mobilebench.policy import jest_setup_files, runner_config_violations, touched_test_files


def _diff(path: str, old: str, new: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"


def test_touched_test_files_per_framework() -> None:
    patch = _diff("src/app.ts", "a", "b") + _diff("src/app.test.ts", "a", "b") + _diff("test/widget_test.dart", "a", "b")
    info = parse_patch(patch)
    assert touched_test_files(info, "react-native") == ["src/app.test.ts"]
    assert touched_test_files(info, "flutter") == ["test/widget_test.dart"]


def test_jest_section_of_package_json() -> None:
    before = {"name": "app", "jest": {"preset": "react-native", "setupFiles": ["<rootDir>/jest/setup.js"]}}
    after = {**before, "jest": {**before["jest"], "testPathIgnorePatterns": ["__tests__/hard"]}}
    patch = _diff("package.json", "x", "y")
    found = runner_config_violations(
        parse_patch(patch), patch, "react-native",
        before={"package.json": json.dumps(before).encode()}, after={"package.json": json.dumps(after).encode()},
    )
    assert found == ["changed the 'jest' section of package.json"]


def test_dependency_bump_in_package_json_is_allowed() -> None:
    before = {"dependencies": {"a": "1.0.0"}, "jest": {"preset": "react-native"}}
    after = {"dependencies": {"a": "1.0.1"}, "jest": {"preset": "react-native"}}
    patch = _diff("package.json", "x", "y")
    assert runner_config_violations(
        parse_patch(patch), patch, "react-native",
        before={"package.json": json.dumps(before).encode()}, after={"package.json": json.dumps(after).encode()},
    ) == []


def test_jest_config_and_named_setup_files() -> None:
    pkg = json.dumps({"jest": {"setupFilesAfterEnv": ["./jest/after-env.ts"]}}).encode()
    patch = _diff("jest.config.js", "a", "b") + _diff("jest/after-env.ts", "a", "b")
    found = runner_config_violations(parse_patch(patch), patch, "react-native", before={"package.json": pkg}, after={"package.json": pkg})
    assert found == ["changed jest configuration file jest.config.js", "changed jest setup file jest/after-env.ts"]
    assert jest_setup_files({"jest": {"globalSetup": "<rootDir>/setup/global.js", "testEnvironment": "node"}}) == {"setup/global.js"}


def test_gradle_test_options_lines() -> None:
    patch = (
        "diff --git a/app/build.gradle.kts b/app/build.gradle.kts\n--- a/app/build.gradle.kts\n+++ b/app/build.gradle.kts\n"
        "@@ -1,3 +1,4 @@\n android {\n+    testOptions { unitTests.isReturnDefaultValues = true }\n     namespace = \"x\"\n }\n"
        + _diff("app/src/main/java/A.kt", "a", "b")
    )
    found = runner_config_violations(parse_patch(patch), patch, "android", before={}, after={})
    assert found == ["changed Gradle test configuration in app/build.gradle.kts: +    testOptions { unitTests.isReturnDefaultValues = true }"]
    plain = _diff("app/build.gradle.kts", 'implementation("a:b:1")', 'implementation("a:b:2")')
    assert runner_config_violations(parse_patch(plain), plain, "android", before={}, after={}) == []


def test_flutter_test_config() -> None:
    patch = _diff("test/flutter_test_config.dart", "a", "b")
    assert runner_config_violations(parse_patch(patch), patch, "flutter", before={}, after={}) == [
        "changed Flutter test configuration test/flutter_test_config.dart"
    ]
