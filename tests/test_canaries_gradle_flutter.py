"""Known-answer canaries for Gradle / JUnit and Flutter (issue 17, item 1).

Neither runner runs here: the generated files are checked as text, and the check runs on results in the
real output shapes (a Gradle JUnit XML report, a ``flutter test --machine`` event stream) through the
project's own parsers, so the ids the canary expects are the ids the parsers give.
"""

from __future__ import annotations

import json

from pytest_mobilebench.frameworks import canaries
from pytest_mobilebench.parsers.flutter import parse_flutter
from pytest_mobilebench.parsers.junit import parse_junit
from pytest_mobilebench.states import TestState

KOTLIN_TEST = """\
package org.jellyfin.mobile

import org.jellyfin.mobile.utils.Constants
import io.kotest.matchers.shouldBe
import org.junit.Test

class ConstantsTest {
    @Test fun version() { Constants.VERSION shouldBe 1 }
}
"""


def _junit_xml(classname: str, fail: bool) -> bytes:
    failure = '<failure message="expected:&lt;1&gt; but was:&lt;2&gt;" type="java.lang.AssertionError">boom</failure>'
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="{classname}" tests="2" skipped="0" '
        'failures="1" errors="0" '
        f'timestamp="2026-01-01T00:00:00" hostname="h" time="0.01">\n  <properties/>\n'
        f'  <testcase name="mustFail" classname="{classname}" time="0.001">{failure if fail else ""}</testcase>\n'
        f'  <testcase name="mustPass" classname="{classname}" time="0.0"/>\n'
        "  <system-out><![CDATA[]]></system-out>\n  <system-err><![CDATA[]]></system-err>\n</testsuite>\n"
    ).encode()


def test_junit_canary_lives_in_the_graded_module_and_loads_its_imports() -> None:
    canary = canaries.junit_canary(
        "app/src/test/kotlin/org/jellyfin/mobile/ConstantsTest.kt", KOTLIN_TEST, nonce="0123456789abcdef"
    )
    assert canary is not None
    assert canary.path == "app/src/test/java/mobilebench/c0123456789abcdef/Canary0123456789abcdefTest.java"
    assert "package mobilebench.c0123456789abcdef;" in canary.source and "import org.junit.Test;" in canary.source
    for name in ("org.jellyfin.mobile.utils.Constants", "org.junit.Test"):
        assert f'Class.forName("{name}")' in canary.source
    assert "shouldBe" not in canary.source  # a function import is no class: not loaded
    assert canary.ids == (
        "mobilebench.c0123456789abcdef.Canary0123456789abcdefTest#mustFail",
        "mobilebench.c0123456789abcdef.Canary0123456789abcdefTest#mustPass",
    )
    jupiter = canaries.junit_canary("core/src/testDebug/java/a/BTest.java", "import org.junit.jupiter.api.Test;")
    assert jupiter is not None and "import org.junit.jupiter.api.Test;" in jupiter.source
    assert jupiter.path.startswith("core/src/testDebug/java/mobilebench/c")
    assert canaries.junit_canary("app/src/androidTest/java/a/BTest.kt", "") is None


def test_junit_canary_check_on_a_gradle_report() -> None:
    canary = canaries.junit_canary("app/src/test/java/a/ATest.java", "")
    assert canary is not None
    classname = canary.ids[0].split("#")[0]
    honest = parse_junit(
        "", {f"app/build/test-results/testDebugUnitTest/TEST-{classname}.xml": _junit_xml(classname, True)}
    )
    assert canaries.canary_findings(honest.tests, canary.ids) == []
    hollow = parse_junit(
        "", {f"app/build/test-results/testDebugUnitTest/TEST-{classname}.xml": _junit_xml(classname, False)}
    )
    assert canaries.canary_findings(hollow.tests, canary.ids) == [
        "canary outcomes are ('PASS', 'PASS') in the report, expected exactly (FAIL, PASS)"
    ]
    assert canaries.canary_findings({}, canary.ids)  # missing from the results


def _machine(path: str, names: list[tuple[str, str]]) -> str:
    events = [
        {"protocolVersion": "0.1.1", "type": "start", "time": 0},
        {"suite": {"id": 0, "platform": "vm", "path": f"/app/{path}"}, "type": "suite", "time": 0},
        {
            "group": {"id": 1, "suiteID": 0, "parentID": None, "name": "", "testCount": len(names)},
            "type": "group",
            "time": 1,
        },
    ]
    for i, (name, result) in enumerate(names, 2):
        events.append(
            {
                "test": {"id": i, "name": name, "suiteID": 0, "groupIDs": [1], "metadata": {"skip": False}},
                "type": "testStart",
                "time": i,
            }
        )
        if result == "failure":
            events.append(
                {
                    "testID": i,
                    "error": "Expected: <2> Actual: <1>",
                    "stackTrace": "",
                    "isFailure": True,
                    "type": "error",
                    "time": i,
                }
            )
        events.append({"testID": i, "result": result, "skipped": False, "hidden": False, "type": "testDone", "time": i})
    events.append({"success": False, "type": "done", "time": 99})
    return "".join(json.dumps(e) + "\n" for e in events)


def test_flutter_canary_file_command_and_check() -> None:
    graded = (
        "import 'package:flutter_test/flutter_test.dart';\nimport 'package:app/counter.dart';\n"
        "import '../lib/x.dart' show X;\n"
    )
    canary = canaries.flutter_canary("test/counter_test.dart", graded)
    assert canary.path == f"test/mbcanary_{canary.nonce}_test.dart"
    assert "import 'package:app/counter.dart';" in canary.source and "import '../lib/x.dart' show X;" in canary.source
    assert canary.source.count("flutter_test.dart") == 1
    command = "mkdir -p .mobilebench && flutter test --machine test/counter_test.dart > .mobilebench/f.json; status=$?"
    assert canaries.with_flutter_canary(command, canary) == command.replace("--machine ", f"--machine {canary.path} ")
    assert canaries.with_flutter_canary("make test", canary) is None
    fail_name, pass_name = (i.split("::", 1)[1] for i in canary.ids)
    honest = parse_flutter(_machine(canary.path, [(fail_name, "failure"), (pass_name, "success")]), {}, root_dir="/app")
    assert canaries.canary_findings(honest.tests, canary.ids) == [], honest.tests
    hollow = parse_flutter(_machine(canary.path, [(fail_name, "success"), (pass_name, "success")]), {}, root_dir="/app")
    assert canaries.canary_findings(hollow.tests, canary.ids)
    assert hollow.tests[canary.ids[0]] == TestState.PASS
