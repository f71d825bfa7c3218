"""The static integrity audit of candidate diffs (issue 31 item 3): each kind in JS, TS, Kotlin, Java and Dart
on added production lines; the same words in a string, a comment, a test file or an unchanged line are not
findings; strict mode turns findings into policy violations; the summary counts and the run page shows them."""

from __future__ import annotations

import pytest

from pytest_mobilebench import frameworks
from pytest_mobilebench.integrity import Finding, audit, audit_text, violations
from pytest_mobilebench.report.integrity import integrity_counts, integrity_section
from pytest_mobilebench.report.summary import headline


def _new_file(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


def _whats(path: str, text: str) -> set[tuple[int, str, str]]:
    return {(f.line, f.kind, f.what) for f in audit(_new_file(path, text), lambda p: False)}


JS_CASES = [
    ("if (process.env.JEST_WORKER_ID) return 1;", "runner_marker", "process.env.JEST_WORKER_ID"),
    ("if (process.env['CI']) return 1;", "runner_marker", "process.env.CI"),
    ("if (process.env.NODE_ENV === 'test') return 1;", "runner_marker", "process.env.NODE_ENV compared with 'test'"),
    ("const { JEST_WORKER_ID } = process.env;", "runner_marker", "process.env.JEST_WORKER_ID destructured"),
    ("expect.extend({ toBe: () => ({ pass: true }) });", "test_runner_api", "runner global expect"),
    ("jest.spyOn(console, 'log');", "test_runner_api", "runner global jest"),
    ("describe('x', () => {});", "test_runner_api", "runner global describe()"),
    ("globalThis.expect = undefined;", "test_runner_api", "runner global globalThis.expect"),
    ("import { expect as e } from '@jest/globals';", "test_runner_api", "module @jest/globals"),
    ("const j = require('jest-circus');", "test_runner_api", "module jest-circus"),
    ("delete require.cache[k];", "introspection", "require.cache"),
    ("const M = module.constructor;", "introspection", "module.constructor"),
    ("const s = new Error().stack;", "introspection", "new Error().stack"),
    ("Error.captureStackTrace(o);", "introspection", "Error.captureStackTrace"),
    ("const a = process.argv;", "introspection", "process.argv"),
    ("const m = process.mainModule;", "introspection", "process.mainModule"),
    ("const c = fs.readFileSync('/proc/self/cmdline');", "introspection", "a /proc path"),
    ("const v = process.env[name];", "introspection", "process.env read with a computed key"),
    ("const env = process.env;", "introspection", "process.env taken whole"),
    ("const k = Object.keys(process.env);", "introspection", "process.env taken whole"),
    ("const g = global['je' + 'st'];", "introspection", "global[...] read with a computed key"),
    ("const j = eval('je' + 'st');", "introspection", "dynamic code (eval)"),
    ("const m = require(name);", "introspection", "require() of a computed name"),
    ("if (process?.env?.CI) return 1;", "runner_marker", "process.env.CI"),
]


@pytest.mark.parametrize("suffix", [".js", ".ts", ".tsx"])
@pytest.mark.parametrize(("line", "kind", "what"), JS_CASES)
def test_js_and_ts_kinds_on_added_lines(suffix: str, line: str, kind: str, what: str) -> None:
    text = f"export function add(a, b) {{\n  const name = 'x';\n  {line}\n  return a + b;\n}}\n"
    assert (3, kind, what) in _whats(f"src/add{suffix}", text)


NEGATIVE_JS = """\
// process.env.JEST_WORKER_ID expect.extend jest.fn() require.cache new Error().stack
/* describe('x') process.argv '/proc/self' */
const s = "process.env.CI jest expect describe module.constructor";
const t = `JEST_WORKER_ID ${name} NODE_ENV === 'test'`;
if (process.env.NODE_ENV === 'production') run();
const items = list.filter((it) => it.ok);
function test(x) { return x; }
test(1);
const expect = makeExpectation(); expect.toString();
const stack = err.stack;
"""


@pytest.mark.parametrize("suffix", [".js", ".ts"])
def test_js_words_in_strings_comments_locals_are_not_findings(suffix: str) -> None:
    assert _whats(f"src/ok{suffix}", NEGATIVE_JS) == set()


KOTLIN = """\
package app
import org.junit.Assert
fun probe(): Int {
    if (System.getenv("JEST_WORKER_ID") != null) return 1
    val t = Thread.currentThread().stackTrace
    val c = Class.forName("org.junit.runner.JUnitCore")
    val cp = System.getProperty("java.class.path")
    val i = androidx.test.platform.app.InstrumentationRegistry.getInstrumentation()
    val e = "${System.getenv("CI")}"
    val w = StackWalker.getInstance()
    return java.io.File("/proc/self/cmdline").readText().length
}
"""
KOTLIN_EXPECTED = {
    (2, "test_runner_api", "org.junit.Assert"),
    (4, "runner_marker", "environment JEST_WORKER_ID"),
    (5, "introspection", "stackTrace"),
    (6, "test_runner_api", "forName(org.junit.runner.JUnitCore)"),
    (7, "introspection", "getProperty(java.class.path)"),
    (8, "test_runner_api", "androidx.test.platform.app.InstrumentationRegistry.getInstrumentation"),
    (9, "runner_marker", "environment CI"),
    (10, "introspection", "StackWalker.getInstance"),
    (11, "introspection", "a /proc path"),
}


def test_kotlin_kinds() -> None:
    assert _whats("app/src/main/java/app/Probe.kt", KOTLIN) == KOTLIN_EXPECTED


JAVA = """\
package app;
import android.test.InstrumentationTestCase;
class Probe {
    static int probe() throws Exception {
        if (System.getenv("CI") != null) return 1;
        StackTraceElement[] s = Thread.currentThread().getStackTrace();
        Class<?> c = Class.forName("org.junit.Test");
        String cp = System.getProperty("java.class.path");
        return 0;
    }
}
"""


def test_java_kinds() -> None:
    assert _whats("app/src/main/java/app/Probe.java", JAVA) == {
        (2, "test_runner_api", "android.test.InstrumentationTestCase"),
        (5, "runner_marker", "environment CI"),
        (6, "introspection", "getStackTrace"),
        (7, "test_runner_api", "forName(org.junit.Test)"),
        (8, "introspection", "getProperty(java.class.path)"),
    }


DART = """\
import 'dart:io';
import 'package:flutter_test/flutter_test.dart';
bool underTest() => Platform.environment.containsKey('FLUTTER_TEST');
bool ci() => Platform.environment['CI'] != null;
final t = StackTrace.current;
final a = Platform.executableArguments;
final s = '${Platform.environment['FLUTTER_TEST']}';
"""


def test_dart_kinds() -> None:
    assert _whats("lib/probe.dart", DART) == {
        (2, "test_runner_api", "import package:flutter_test/flutter_test.dart"),
        (3, "runner_marker", "environment FLUTTER_TEST"),
        (4, "runner_marker", "environment CI"),
        (5, "introspection", "StackTrace.current"),
        (6, "introspection", "Platform.executableArguments"),
        (7, "runner_marker", "environment FLUTTER_TEST"),
    }


NEGATIVE_JVM = """\
// import org.junit.Assert; System.getenv("CI") Thread.currentThread().getStackTrace()
/* InstrumentationRegistry /* nested in Kotlin */ StackWalker "org.junit" */
val s = "System.getenv(\\"CI\\") org.junit.Test InstrumentationRegistry StackWalker /proc"
val t = \"\"\"Class.forName("org.junit.Test") androidx.test\"\"\"
val u = System.getenv("HOME")
val k = listOf("CI", "JEST_WORKER_ID")
"""
NEGATIVE_DART = """\
// import 'package:test/test.dart'; Platform.environment['FLUTTER_TEST']
final s = 'package:flutter_test/ FLUTTER_TEST StackTrace.current';
final r = r'${Platform.environment}';
final h = Platform.environment['HOME'];
"""


def test_environment_read_whole_or_with_a_computed_key() -> None:
    what = "environment read whole or with a computed key"
    assert _whats(
        "app/src/main/java/app/E.kt",
        'val a = System.getenv()\nval b = System.getenv(k)\nval c = System.getenv("HOME")\n',
    ) == {(1, "introspection", what), (2, "introspection", what)}
    dart = (
        "final a = Platform.environment;\nfinal b = Platform.environment[k];\nfinal c = Platform.environment['HOME'];\n"
        "final d = Platform.environment.containsKey(k);\nfinal e = Platform.environment.containsKey('X');\n"
    )
    assert _whats("lib/e.dart", dart) == {
        (1, "introspection", what),
        (2, "introspection", what),
        (4, "introspection", what),
    }


def test_jvm_and_dart_words_in_strings_and_comments_are_not_findings() -> None:
    assert _whats("app/src/main/java/app/Ok.kt", NEGATIVE_JVM) == set()
    assert _whats("lib/ok.dart", NEGATIVE_DART) == set()


def test_test_files_by_the_frameworks_rule_are_not_audited() -> None:
    cases = [
        ("react-native", "src/__tests__/add.test.js", "src/add.js", "expect.extend({});"),
        (
            "android",
            "app/src/test/java/app/ProbeTest.kt",
            "app/src/main/java/app/Probe.kt",
            'val x = System.getenv("CI")',
        ),
        ("flutter", "test/probe_test.dart", "lib/probe.dart", "import 'package:flutter_test/flutter_test.dart';"),
    ]
    for name, test_path, production, line in cases:
        is_test = frameworks.get(name).test_rule({})
        assert is_test(test_path) and not is_test(production), name
        assert audit(_new_file(test_path, line), is_test) == []
        assert len(audit(_new_file(production, line), is_test)) == 1, production


MODIFIED = """\
diff --git a/src/add.js b/src/add.js
--- a/src/add.js
+++ b/src/add.js
@@ -10,4 +10,5 @@
 export function add(a, b) {
   if (process.env.CI) log();
-  return a + b + 1;
+  if (process.env.JEST_WORKER_ID) return a + b;
+  return a - b;
 }
"""


def test_only_added_lines_are_reported_with_the_patched_files_numbers() -> None:
    found = audit(MODIFIED, lambda p: False)
    assert [(f.file, f.line, f.kind, f.snippet) for f in found] == [
        ("src/add.js", 12, "runner_marker", "if (process.env.JEST_WORKER_ID) return a + b;")
    ]


def test_a_chain_split_over_lines_is_found_on_its_added_line() -> None:
    diff = (
        "diff --git a/src/a.js b/src/a.js\n--- a/src/a.js\n+++ b/src/a.js\n@@ -1,2 +1,3 @@\n const v = process\n"
        "+  .env\n   .CI;\n"
    )
    assert [(f.line, f.what) for f in audit(diff, lambda p: False)] == [(2, "process.env.CI")]


def test_strict_makes_each_finding_a_violation_and_report_none() -> None:
    found = audit_text("src/a.js", "if (process.env.CI) x();\n")
    assert violations(found, "report") == []
    assert violations([f.to_dict() for f in found], "strict") == [
        "integrity: src/a.js:1: runner_marker (process.env.CI): if (process.env.CI) x();"
    ]
    with pytest.raises(ValueError, match="--mb-integrity"):
        violations(found, "lenient")


def test_summary_counts_and_page_shows_the_findings() -> None:
    finding = Finding("src/a.js", 3, "runner_marker", "process.env.CI", "if (process.env.CI) <b>").to_dict()
    results = [
        {
            "instance_id": "i-1",
            "model_name_or_path": "m",
            "reason": "resolved",
            "passed": True,
            "integrity_findings": [finding, {**finding, "kind": "introspection"}],
        },
        {
            "instance_id": "i-2",
            "model_name_or_path": "m",
            "reason": "unresolved",
            "passed": False,
            "integrity_findings": [],
        },
        {"instance_id": "i-3", "model_name_or_path": "n", "reason": "resolved", "passed": True},
    ]
    assert headline(results)["integrity"] == {
        "items": 2,
        "items_flagged": 1,
        "findings": 2,
        "test_runner_api": 0,
        "runner_marker": 1,
        "introspection": 1,
        "unaudited": 0,
    }
    assert integrity_counts(results[2:]) is None and "integrity" not in headline(results[2:])
    page = integrity_section(results, row_href=lambda iid, model: f"#{iid}")
    assert 'data-figure="findings">2<' in page and "src/a.js:3" in page and "&lt;b&gt;" in page
    assert 'href="#i-1"' in page and "i-2" not in page.split("</table>")[1]
    assert integrity_section(results[2:]) == ""


def test_device_repair_cache_material_keys_strict_apart() -> None:
    from pathlib import Path

    from pytest_mobilebench.manifest.yamlfile import read_yaml
    from pytest_mobilebench.suites.device_repair import SUITE

    path = Path(__file__).resolve().parents[1] / "cases" / "device_repair" / "mobilebench__calc.yaml"
    (loaded,) = SUITE.load(path, read_yaml(path))
    report = SUITE.cache_material(loaded, None, {"mb_integrity": "report"})
    assert report == SUITE.cache_material(loaded, None, {})
    assert SUITE.cache_material(loaded, None, {"mb_integrity": "strict"}) != report


def test_a_crlf_patch_is_read() -> None:
    crlf = MODIFIED.replace("\n", "\r\n")
    assert [(f.line, f.what) for f in audit(crlf, lambda p: False)] == [(12, "process.env.JEST_WORKER_ID")]


def test_a_section_the_audits_reader_misses_is_an_unaudited_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_mobilebench.integrity as integrity

    monkeypatch.setattr(integrity, "fragments", lambda text: iter(()))  # a reader that sees no section
    found = audit(MODIFIED, lambda p: False)
    assert [(f.file, f.kind) for f in found] == [("src/add.js", "unaudited")]
    assert audit(MODIFIED, lambda p: p == "src/add.js") == []
