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
    "mkdir -p /var/tmp/r/.mobilebench && node_modules/.bin/jest --ci --json "
    "--outputFile=/var/tmp/r/.mobilebench/j.json "
    "--testLocationInResults --runTestsByPath __tests__/counter.test.js src/util/__tests__/u.test.ts"
)
FILES = {
    "__tests__/counter.test.js": b"const { Counter } = require('../src/counter');\nconst lodash = require('lodash');\n",
    "src/util/__tests__/u.test.ts": b"import { u } from '../u';\nimport type { T } from './types';\n",
}


def _line(key: bytes, record: dict) -> bytes:
    body = json.dumps(record, separators=(",", ":")).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body + b"\n"


def test_prepare_adds_launcher_runner_reporter_and_no_file_of_its_own_in_the_repository() -> None:
    h = harness.prepare(COMMAND)
    assert h is not None
    assert f"--testRunner={h.folder}/runner.js" in h.command and "--runInBand" in h.command
    # jest's own program through the harness's launcher, never the project's .bin/jest (a proxy at times)
    assert f"&& node {h.folder}/launch.js --runInBand" in h.command and "node_modules/.bin/jest" not in h.command
    # the graded files only: the known answers live in them (issue 35: no second import of the code under test)
    assert h.command.endswith("--runTestsByPath __tests__/counter.test.js src/util/__tests__/u.test.ts")
    assert h.folder.startswith("/var/tmp/mb-harness-") and all(p.startswith(h.folder + "/") for p in h.files)
    runner = h.files[f"{h.folder}/runner.js"].decode()
    assert f'"suite": "mobilebench canary {h.nonce}"' in runner and "__CANARY__" not in runner
    assert f"must fail {h.nonce}" in runner and f"must pass {h.nonce}" in runner
    other = harness.prepare(COMMAND)
    assert other is not None and other.nonce != h.nonce and other.key != h.key


def test_no_harness_for_a_custom_command() -> None:
    assert harness.prepare("yarn test --json --outputFile=x.json") is None
    assert harness.prepare("node_modules/.bin/jest --runTestsByPath a.test.js --ci") is None


GRADED = "__tests__/counter.test.js"


def _run(
    h: harness.JestHarness, tests: dict[str, str], *, passed: int, failed: int
) -> tuple[bytes, dict[str, TestState]]:
    fail_id, pass_id = harness.canary_ids(h.nonce, GRADED)
    records = [{"seq": 0, "type": "start"}]
    titles = [[*i.split("::", 1)[1].split(" > ")] for i in tests]
    canaries = [
        {"titles": fail_id.split("::")[1].split(" > "), "status": "failed", "problems": []},
        {"titles": pass_id.split("::")[1].split(" > "), "status": "passed", "problems": []},
    ]
    records.append(
        {
            "seq": 1,
            "type": "file",
            "path": f"/testbed/{GRADED}",
            "frozen": True,
            "intact": True,
            "problems": [],
            "error": None,
            "tests": [*canaries, *({"titles": t, "status": s, "problems": []} for t, s in zip(titles, tests.values()))],
        }
    )
    records.append(
        {
            "seq": 2,
            "type": "file",
            "path": "/testbed/__tests__/broken.test.js",
            "frozen": True,
            "intact": True,
            "problems": [],
            "error": "Cannot find module '../src/missing'",
            "tests": [],
        }
    )  # did not load: no canary
    records.append({"seq": 3, "type": "final", "numPassedTests": passed, "numFailedTests": failed})
    channel = b"".join(_line(h.key, r) for r in records)
    states = {fail_id: TestState.FAIL, pass_id: TestState.PASS}
    states.update({i: TestState.PASS if s == "passed" else TestState.FAIL for i, s in tests.items()})
    return channel, states


def test_an_honest_run_has_no_findings_and_canaries_are_not_graded() -> None:
    h = harness.prepare(COMMAND)
    assert h is not None
    channel, states = _run(h, {"__tests__/counter.test.js::Counter > one": "passed"}, passed=2, failed=1)
    output = "Tests:       40 passed, 40 total\n...\nTests:       1 failed, 2 passed, 3 total\n"
    assert harness.findings(h.to_dict(), channel, states, output) == []
    fail_id = harness.canary_ids(h.nonce, GRADED)[0]
    graded = harness.without_canaries(ParseResult(tests=states, messages={fail_id: "boom"}, warnings=()), h.to_dict())
    assert graded.tests == {"__tests__/counter.test.js::Counter > one": TestState.PASS} and graded.messages == {}


def test_forged_reports_and_channels_are_runner_compromised() -> None:
    h = harness.prepare(COMMAND)
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
    assert any("no start record" in f for f in found) and any("recorded no test file" in f for f in found), found


@pytest.mark.parametrize(
    "outcomes", [("passed", "passed"), ("failed", "failed"), ("passed", "failed"), (None, "passed")]
)
def test_canary_outcomes_other_than_fail_pass_are_findings(outcomes: tuple[str | None, str]) -> None:
    h = harness.prepare(COMMAND)
    assert h is not None
    fail_id, pass_id = harness.canary_ids(h.nonce, GRADED)
    tests = [
        {"titles": i.split("::")[1].split(" > "), "status": s, "problems": []}
        for i, s in zip((fail_id, pass_id), outcomes)
        if s is not None
    ]
    records = [
        {"seq": 0, "type": "start"},
        {
            "seq": 1,
            "type": "file",
            "path": f"/testbed/{GRADED}",
            "frozen": True,
            "intact": True,
            "problems": [],
            "tests": tests,
        },
        {"seq": 2, "type": "final", "numPassedTests": 1, "numFailedTests": 1},
    ]
    channel = b"".join(_line(h.key, r) for r in records)
    states = {i: TestState.PASS if s == "passed" else TestState.FAIL for i, s in zip((fail_id, pass_id), outcomes) if s}
    assert any("canary outcomes" in f for f in harness.findings(h.to_dict(), channel, states, ""))


def test_every_graded_file_that_loaded_needs_its_own_canaries() -> None:
    """The canaries are declared in each test file: a file that loaded without them (the candidate's code
    removed them, or reported its tests under another file) is a finding; one that did not load ran nothing."""
    h = harness.prepare(COMMAND)
    assert h is not None
    channel, states = _run(h, {f"{GRADED}::Counter > one": "passed"}, passed=2, failed=1)
    other = {
        "seq": 3,
        "type": "file",
        "path": "/testbed/src/util/__tests__/u.test.ts",
        "frozen": True,
        "intact": True,
        "problems": [],
        "error": None,
        "tests": [{"titles": ["u", "works"], "status": "passed", "problems": []}],
    }
    lines = channel.splitlines(keepends=True)
    final = _line(h.key, {"seq": 4, "type": "final", "numPassedTests": 3, "numFailedTests": 1})
    both = {**states, "src/util/__tests__/u.test.ts::u > works": TestState.PASS}
    found = harness.findings(h.to_dict(), b"".join(lines[:3]) + _line(h.key, other) + final, both, "")
    assert [f for f in found if "canary" in f] == [
        "src/util/__tests__/u.test.ts: canary outcomes are (None, None) in the runner's records and "
        "(None, None) in the "
        "report, expected exactly (fail, pass)"
    ], found


def test_evidence_of_a_run_with_a_canary_file_of_its_own_is_still_graded() -> None:
    """Evidence written before the canaries moved into the graded files names a canary file (``canary``)."""
    h = harness.prepare(COMMAND)
    assert h is not None
    old = {**h.to_dict(), "canary": f"__tests__/mbcanary{h.nonce}.counter.test.js"}
    fail_id, pass_id = harness.canary_ids(h.nonce, old["canary"])
    states = {fail_id: TestState.FAIL, pass_id: TestState.PASS, f"{GRADED}::Counter > one": TestState.FAIL}
    assert harness.without_canaries(ParseResult(tests=states, messages={}, warnings=()), old).tests == {
        f"{GRADED}::Counter > one": TestState.FAIL
    }
    found = harness.findings(old, b"", states, "")
    assert any(f.startswith(f"{old['canary']}: canary outcomes are (None, None)") for f in found), found


def test_replaced_bodies_and_unfrozen_globals_are_findings() -> None:
    h = harness.prepare(COMMAND)
    assert h is not None
    channel, states = _run(h, {}, passed=1, failed=1)
    lines = channel.splitlines(keepends=True)
    bad = {
        "seq": 2,
        "type": "file",
        "path": "/testbed/__tests__/counter.test.js",
        "frozen": True,
        "intact": False,
        "problems": [],
        "tests": [
            {"titles": ["Counter", "one"], "status": "passed", "problems": ["its body was replaced after registration"]}
        ],
    }
    channel = lines[0] + lines[1] + _line(h.key, bad) + lines[3]
    found = harness.findings(h.to_dict(), channel, states, "")
    assert any("body was replaced" in f for f in found) and any("globals" in f for f in found), found


def test_the_console_summary_is_the_last_one_never_a_sum() -> None:
    assert jest_console_counts("Tests:       40 passed, 40 total\nTests:       2 failed, 1 passed, 3 total\n") == (1, 2)


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on the host")
def test_the_javascript_channel_signs_what_python_verifies(tmp_path: Path) -> None:
    (tmp_path / "channel.js").write_text(CHANNEL_JS)
    key = bytes(range(256))[:70]  # longer than a SHA-256 block: hashed first, as HMAC says
    script = (
        f"const c = require('./channel.js'); c.open({json.dumps(list(key))}); c.open([1, 2]);"
        "c.emit({type: 'start', title: 'caf\\u00e9 \\u2713'});"
        "c.emit({type: 'final', numPassedTests: 3, big: 'x'.repeat(300)});"
    )
    out = tmp_path / "out"
    subprocess.run(["bash", "-c", f'exec 3>{out}; node -e "$0"', script], cwd=tmp_path, check=True)
    report = harness.read_channel(out.read_bytes(), key)
    assert report.problems == () and [r["type"] for r in report.records] == ["start", "final"]
    assert report.records[0]["title"] == "café ✓" and report.records[1]["numPassedTests"] == 3
    assert harness.read_channel(out.read_bytes(), b"other").problems  # another key: nothing verifies


def test_a_pass_without_assertions_where_the_fix_has_some_is_hollow() -> None:
    h = harness.prepare(COMMAND)
    assert h is not None
    record = {
        "seq": 0,
        "type": "file",
        "path": "/testbed/__tests__/counter.test.js",
        "frozen": True,
        "intact": True,
        "problems": [],
        "tests": [
            {"titles": ["Counter", "one"], "status": "passed", "assertions": 0, "problems": []},
            {"titles": ["Counter", "two"], "status": "passed", "assertions": 3, "problems": []},
        ],
    }
    counts = harness.assertion_counts(h.to_dict(), _line(h.key, record))
    one, two = "__tests__/counter.test.js::Counter > one", "__tests__/counter.test.js::Counter > two"
    assert counts == {one: 0, two: 3}
    tests = {one: TestState.PASS, two: TestState.PASS}
    assert harness.hollow_passes(tests, counts, {one: 2, two: 1}) == [one]
    assert harness.hollow_passes(tests, counts, {one: 0}) == []  # the fix has none either: a pass
