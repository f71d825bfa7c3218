"""The jest harness's pure parts (issue 17, items 1 and 2): canary files, the keyed channel, the findings.

The JavaScript channel module is run with the host's ``node`` when there is one (its MAC must verify with
Python's ``hmac``); everything else is pure Python.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.react_native import harness
from pytest_mobilebench.frameworks.react_native.harness_js import CHANNEL_JS
from pytest_mobilebench.parsers import ParseResult
from pytest_mobilebench.parsers.jest import jest_console_counts
from pytest_mobilebench.states import TestState

COMMAND = (
    "mkdir -p /var/tmp/r/.mobilebench && node_modules/.bin/jest --ci --json --outputFile=/var/tmp/r/.mobilebench/j.json "
    "--testLocationInResults --runTestsByPath __tests__/counter.test.js src/util/__tests__/u.test.ts"
)
FILES = {
    "__tests__/counter.test.js": b"const { Counter } = require('../src/counter');\nconst lodash = require('lodash');\n",
    "src/util/__tests__/u.test.ts": b"import { u } from '../u';\nimport type { T } from './types';\n",
}


def _line(key: bytes, record: dict) -> bytes:
    body = json.dumps(record, separators=(",", ":")).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body + b"\n"


def test_prepare_adds_runner_reporter_and_a_canary_next_to_the_first_test_file() -> None:
    h = harness.prepare(COMMAND, FILES)
    assert h is not None
    assert h.canary == f"__tests__/mbcanary{h.nonce}.counter.test.js"
    assert f"--testRunner={h.folder}/runner.js" in h.command and "--runInBand" in h.command
    # jest's own program through the harness's launcher, never the project's .bin/jest (a proxy at times)
    assert f"&& node {h.folder}/launch.js --runInBand" in h.command and "node_modules/.bin/jest" not in h.command
    assert f"{h.folder}/launch.js" in h.files and f"{h.folder}/runner.js" in h.files
    assert h.command.endswith(f"src/util/__tests__/u.test.ts {h.canary}")
    assert h.folder.startswith("/var/tmp/mb-harness-") and not h.folder.startswith("/testbed")
    source = h.files[f"/testbed/{h.canary}"].decode()
    # the test files' modules, rebased to the canary's folder; ESM syntax because one test file uses it
    for spec in ("../src/counter", "lodash", "../src/util/u", "../src/util/__tests__/types"):
        assert f'import "{spec}";' in source, source
    assert f"must fail {h.nonce}" in source and f"must pass {h.nonce}" in source
    other = harness.prepare(COMMAND, FILES)
    assert other is not None and other.nonce != h.nonce and other.key != h.key


def test_no_harness_for_a_custom_command() -> None:
    assert harness.prepare("yarn test --json --outputFile=x.json", FILES) is None
    assert harness.prepare("node_modules/.bin/jest --runTestsByPath a.test.js --ci", FILES) is None


def test_commonjs_canary_guards_each_require() -> None:
    h = harness.prepare(COMMAND.replace(" src/util/__tests__/u.test.ts", ""), FILES)
    assert h is not None
    source = h.files[f"/testbed/{h.canary}"].decode()
    assert 'try { require("../src/counter"); }' in source and "import " not in source


def test_imported_modules_are_repository_relative_and_never_escape() -> None:
    text = "import a from './a';\nconst b = require(\"../../../etc/passwd\");\nexport * from '../x';\n"
    assert harness.imported_modules("src/t/a.test.js", text) == ["./src/t/a", "./src/x"]


def _run(h: harness.JestHarness, tests: dict[str, str], *, passed: int, failed: int) -> tuple[bytes, dict[str, TestState]]:
    fail_id, pass_id = h.canary_ids
    records = [{"seq": 0, "type": "start"}]
    titles = [[*i.split("::", 1)[1].split(" > ")] for i in tests]
    records.append({"seq": 1, "type": "file", "path": f"/testbed/{h.canary}", "frozen": True, "intact": True,
                    "problems": [], "tests": [{"titles": fail_id.split("::")[1].split(" > "), "status": "failed", "problems": []},
                                              {"titles": pass_id.split("::")[1].split(" > "), "status": "passed", "problems": []}]})
    records.append({"seq": 2, "type": "file", "path": "/testbed/__tests__/counter.test.js", "frozen": True, "intact": True,
                    "problems": [], "tests": [{"titles": t, "status": s, "problems": []} for t, s in zip(titles, tests.values())]})
    records.append({"seq": 3, "type": "final", "numPassedTests": passed, "numFailedTests": failed})
    channel = b"".join(_line(h.key, r) for r in records)
    states = {fail_id: TestState.FAIL, pass_id: TestState.PASS}
    states.update({i: TestState.PASS if s == "passed" else TestState.FAIL for i, s in tests.items()})
    return channel, states


def test_an_honest_run_has_no_findings_and_canaries_are_not_graded() -> None:
    h = harness.prepare(COMMAND, FILES)
    assert h is not None
    channel, states = _run(h, {"__tests__/counter.test.js::Counter > one": "passed"}, passed=2, failed=1)
    output = "Tests:       40 passed, 40 total\n...\nTests:       1 failed, 2 passed, 3 total\n"
    assert harness.findings(h.to_dict(), channel, states, output) == []
    graded = harness.without_canaries(ParseResult(tests=states, messages={h.canary_ids[0]: "boom"}, warnings=()), h.to_dict())
    assert graded.tests == {"__tests__/counter.test.js::Counter > one": TestState.PASS} and graded.messages == {}


def test_forged_reports_and_channels_are_runner_compromised() -> None:
    h = harness.prepare(COMMAND, FILES)
    assert h is not None
    real = "__tests__/counter.test.js::Counter > one"
    channel, states = _run(h, {real: "failed"}, passed=1, failed=2)
    output = "Tests:       2 failed, 1 passed, 3 total\n"
    # the report rewritten to "passed" where the runner's own record says failed
    found = harness.findings(h.to_dict(), channel, {**states, real: TestState.PASS}, output)
    assert any("the report says" in f and real in f for f in found), found
    # a line written by someone without the key, and a replayed line
    forged = _line(b"x" * 32, {"seq": 4, "type": "final", "numPassedTests": 40, "numFailedTests": 0})
    found = harness.findings(h.to_dict(), channel + forged + channel.splitlines(keepends=True)[0], states, output)
    assert any("not signed" in f for f in found) and any("out of sequence" in f for f in found), found
    # a console whose last summary differs from the runner's own
    found = harness.findings(h.to_dict(), channel, states, output + "Tests:       40 passed, 40 total\n")
    assert any("console's final summary" in f for f in found), found
    # no channel at all (fd 3 closed or replaced): every record is missing
    found = harness.findings(h.to_dict(), b"", states, output)
    assert any("no start record" in f for f in found) and any("canary outcomes" in f for f in found), found


@pytest.mark.parametrize("outcomes", [("passed", "passed"), ("failed", "failed"), ("passed", "failed"), (None, "passed")])
def test_canary_outcomes_other_than_fail_pass_are_findings(outcomes: tuple[str | None, str]) -> None:
    h = harness.prepare(COMMAND, FILES)
    assert h is not None
    fail_id, pass_id = h.canary_ids
    tests = [{"titles": i.split("::")[1].split(" > "), "status": s, "problems": []}
             for i, s in zip((fail_id, pass_id), outcomes) if s is not None]
    records = [{"seq": 0, "type": "start"},
               {"seq": 1, "type": "file", "path": f"/testbed/{h.canary}", "frozen": True, "intact": True, "problems": [], "tests": tests},
               {"seq": 2, "type": "final", "numPassedTests": 1, "numFailedTests": 1}]
    channel = b"".join(_line(h.key, r) for r in records)
    states = {i: TestState.PASS if s == "passed" else TestState.FAIL for i, s in zip((fail_id, pass_id), outcomes) if s}
    assert any("canary outcomes" in f for f in harness.findings(h.to_dict(), channel, states, ""))


def test_replaced_bodies_and_unfrozen_globals_are_findings() -> None:
    h = harness.prepare(COMMAND, FILES)
    assert h is not None
    channel, states = _run(h, {}, passed=1, failed=1)
    lines = channel.splitlines(keepends=True)
    bad = {"seq": 2, "type": "file", "path": "/testbed/__tests__/counter.test.js", "frozen": True, "intact": False,
           "problems": [], "tests": [{"titles": ["Counter", "one"], "status": "passed", "problems": ["its body was replaced after registration"]}]}
    channel = lines[0] + lines[1] + _line(h.key, bad) + lines[3]
    found = harness.findings(h.to_dict(), channel, states, "")
    assert any("body was replaced" in f for f in found) and any("globals" in f for f in found), found


def test_the_console_summary_is_the_last_one_never_a_sum() -> None:
    assert jest_console_counts("Tests:       40 passed, 40 total\nTests:       2 failed, 1 passed, 3 total\n") == (1, 2)


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on the host")
def test_the_javascript_channel_signs_what_python_verifies(tmp_path: Path) -> None:
    (tmp_path / "channel.js").write_text(CHANNEL_JS)
    key = bytes(range(256))[:70]  # longer than a SHA-256 block: hashed first, as HMAC says
    script = (f"const c = require('./channel.js'); c.open({json.dumps(list(key))}); c.open([1, 2]);"
              "c.emit({type: 'start', title: 'caf\\u00e9 \\u2713'});"
              "c.emit({type: 'final', numPassedTests: 3, big: 'x'.repeat(300)});")
    out = tmp_path / "out"
    subprocess.run(["bash", "-c", f"exec 3>{out}; node -e \"$0\"", script], cwd=tmp_path, check=True)
    report = harness.read_channel(out.read_bytes(), key)
    assert report.problems == () and [r["type"] for r in report.records] == ["start", "final"]
    assert report.records[0]["title"] == "café ✓" and report.records[1]["numPassedTests"] == 3
    assert harness.read_channel(out.read_bytes(), b"other").problems  # another key: nothing verifies


def test_a_pass_without_assertions_where_the_fix_has_some_is_hollow() -> None:
    h = harness.prepare(COMMAND, FILES)
    assert h is not None
    record = {"seq": 0, "type": "file", "path": "/testbed/__tests__/counter.test.js", "frozen": True, "intact": True,
              "problems": [], "tests": [{"titles": ["Counter", "one"], "status": "passed", "assertions": 0, "problems": []},
                                        {"titles": ["Counter", "two"], "status": "passed", "assertions": 3, "problems": []}]}
    counts = harness.assertion_counts(h.to_dict(), _line(h.key, record))
    one, two = "__tests__/counter.test.js::Counter > one", "__tests__/counter.test.js::Counter > two"
    assert counts == {one: 0, two: 3}
    tests = {one: TestState.PASS, two: TestState.PASS}
    assert harness.hollow_passes(tests, counts, {one: 2, two: 1}) == [one]
    assert harness.hollow_passes(tests, counts, {one: 0}) == []  # the fix has none either: a pass
