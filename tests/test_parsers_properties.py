"""Property-based tests (hypothesis): the parsers are total on mutations of the real samples.

For each parser, random mutations of the samples in fixtures/logs must (1) raise nothing but ParseError
and (2) never lose a test the mutation did not touch: every unrelated test keeps its id, and its state
is at least as strong as before under the duplicate rule (FAIL > PASS > SKIP), since a mutation may add
a failure to another test but must never hide one or drop a test.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_mobilebench.parsers import ParseError, ParseResult, get_parser
from pytest_mobilebench.states import TestState

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
RANK = {TestState.SKIP: 1, TestState.PASS: 2, TestState.FAIL: 3}
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MORE = settings(SETTINGS, max_examples=1000)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _parse(name: str, output: str, files: dict[str, bytes], **kwargs: Any) -> ParseResult | None:
    """The parser's result, or None when it raised ParseError (any other exception fails the test)."""
    try:
        return get_parser(name)(output, files, **kwargs)  # type: ignore[call-arg]
    except ParseError:
        return None


def _kept(result: ParseResult | None, expected: dict[str, TestState]) -> list[str]:
    """Ids in ``expected`` that ``result`` lost or reports weaker than expected."""
    tests = result.tests if result is not None else {}
    return [k for k, v in expected.items() if k not in tests or RANK[tests[k]] < RANK[v]]


# ---------------------------------------------------------------------------------------------- junit

JUNIT_SAMPLES = sorted((LOGS / "junit").rglob("*.xml"))
XML_TOKENS = [
    b"<",
    b">",
    b"/>",
    b"</",
    b"&",
    b"&#27;",
    b"&#x0;",
    b'"',
    b"'",
    b"\x00",
    b"\x1b",
    b"\xff",
    b"\xc3",
    b"<!--",
    b"-->",
    b"<![CDATA[",
    b"]]>",
    b"<testcase name='x'>",
    b"</testcase>",
    b"</testsuite>",
    b"<failure/>",
    b"\n",
    b"a",
    b" ",
]


def _testcases(data: bytes) -> list[tuple[int, int, str | None, TestState]]:
    """``(start, end, id or None, state)`` of each testcase of a sample (None: no classname attribute)."""
    found = []
    for match in re.finditer(rb"<testcase\b", data):
        tag_end = data.find(b">", match.start())
        end = tag_end + 1 if data[tag_end - 1 : tag_end] == b"/" else data.find(b"</testcase>", tag_end) + 11
        if tag_end < 0 or end < 11:
            break  # the cut-off sample's last testcase is incomplete
        element = ET.fromstring(data[match.start() : end])
        tags = {child.tag for child in element}
        failed = tags & {"failure", "error", "flakyFailure", "flakyError", "rerunFailure", "rerunError"}
        state = TestState.FAIL if failed else TestState.SKIP if "skipped" in tags else TestState.PASS
        classname = element.get("classname")
        test_id = None if classname is None else f"{classname}#{element.get('name', '')}"
        found.append((match.start(), end, test_id, state))
    return found


@SETTINGS
@given(
    sample=st.sampled_from(JUNIT_SAMPLES),
    where=st.floats(min_value=0, max_value=1, exclude_max=True),
    cut=st.integers(min_value=0, max_value=40),
    insert=st.lists(st.sampled_from(XML_TOKENS), max_size=4).map(b"".join) | st.binary(max_size=6),
)
def test_junit_mutations(sample: Path, where: float, cut: int, insert: bytes) -> None:
    data = sample.read_bytes()
    start = int(where * len(data))
    mutated = data[:start] + insert + data[start + cut :]
    expected: dict[str, TestState] = {}
    for case_start, case_end, test_id, state in _testcases(data):
        if test_id is not None and (case_end < start or case_start > start + cut):
            expected[test_id] = max(state, expected.get(test_id, state), key=RANK.__getitem__)
    result = _parse("junit", "", {sample.name: mutated})
    assert _kept(result, expected) == []


# -------------------------------------------------------------------------------------------- flutter

FLUTTER_SAMPLE = (LOGS / "flutter" / "machine-complete.txt").read_text(encoding="utf-8")
FLUTTER_ROOT = "/app"
JSON_TEXT = st.text(alphabet=st.sampled_from(list('{}[]":,0123456789 abcdeinorstuxyz\\\u2028\u2029\x85\r')), max_size=8)


def _flutter_events() -> list[Any]:
    return [json.loads(line) if line.startswith("{") else None for line in FLUTTER_SAMPLE.split("\n")]


def _flutter_expected(skip_line: int) -> dict[str, TestState]:
    """The sample's tests (ids and states) that no event of line ``skip_line`` (0-based) is about."""
    events = _flutter_events()
    touched = events[skip_line] if isinstance(events[skip_line], dict) else {}
    touched_test = touched.get("testID", (touched.get("test") or {}).get("id"))
    touched_suite = (touched.get("suite") or {}).get("id")
    baseline = get_parser("flutter")(FLUTTER_SAMPLE, {}, root_dir=FLUTTER_ROOT).tests
    suites = {e["suite"]["id"]: e["suite"]["path"] for e in events if isinstance(e, dict) and e["type"] == "suite"}
    expected: dict[str, TestState] = {}
    by_id: dict[str, list[int]] = {}
    for event in events:
        if isinstance(event, dict) and event["type"] == "testStart":
            info = event["test"]
            test_id = f"{suites[info['suiteID']][len(FLUTTER_ROOT) + 1 :]}::{info['name']}"
            by_id.setdefault(test_id, []).append(info["id"])
            if info["id"] == touched_test or info["suiteID"] == touched_suite:
                by_id[test_id].append(-1)  # mark as touched
    for test_id, ids in by_id.items():
        if test_id in baseline and -1 not in ids:
            expected[test_id] = baseline[test_id]
    return expected


def _is_start(line: str) -> bool:
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("type") == "start"


@SETTINGS
@given(data=st.data(), line=st.integers(min_value=0, max_value=FLUTTER_SAMPLE.count("\n") - 1))
def test_flutter_mutations(data: st.DataObject, line: int) -> None:
    lines = FLUTTER_SAMPLE.split("\n")
    original = lines[line]
    event = _flutter_events()[line]
    if isinstance(event, dict) and data.draw(st.booleans(), label="replace a value"):
        keys = [k for k in event if k != "type"]  # a changed type is another event, not a damaged one
        assume(keys)
        key = data.draw(st.sampled_from(keys), label="key")
        target = event
        if isinstance(event[key], dict) and event[key] and data.draw(st.booleans(), label="nested"):
            target = event[key]
            key = data.draw(st.sampled_from(sorted(target)), label="nested key")
        target[key] = data.draw(JSON_VALUES, label="value")
        lines[line] = json.dumps(event, ensure_ascii=False)
    else:
        at = data.draw(st.integers(min_value=0, max_value=len(original)), label="at")
        cut = data.draw(st.integers(min_value=0, max_value=20), label="cut")
        lines[line] = original[:at] + data.draw(JSON_TEXT, label="insert") + original[at + cut :]
    assume(line < 3 or not _is_start(lines[line]))  # a new `start` event begins a new stream, by design
    result = _parse("flutter", "\n".join(lines), {}, root_dir=FLUTTER_ROOT)
    assert _kept(result, _flutter_expected(line)) == []


# ----------------------------------------------------------------------------------------------- jest

JEST_REPORT = (LOGS / "jest" / "jest-results.json").read_text(encoding="utf-8")
JEST_ROOT = "/tmp/jestproj"


def _jest_ids(report: dict[str, Any]) -> dict[tuple[int, int], str]:
    return {
        (i, j): f"{suite['name'][len(JEST_ROOT) + 1 :]}::{' > '.join([*a['ancestorTitles'], a['title']])}"
        for i, suite in enumerate(report["testResults"])
        for j, a in enumerate(suite["assertionResults"])
    }


@st.composite
def _json_path(draw: st.DrawFn, report: dict[str, Any]) -> tuple[Any, ...]:
    """A path to one node of a jest report: a report key, a suite key, an assertion key, or a deeper node."""
    suites = report["testResults"]
    level = draw(st.sampled_from(["report", "suite", "assertion", "walk"]))
    if level == "report":
        return (draw(st.sampled_from(sorted(report))),)
    index = draw(st.sampled_from([i for i, suite in enumerate(suites) if suite["assertionResults"]]))
    suite = suites[index]
    if level == "suite":
        return ("testResults", index, draw(st.sampled_from(sorted(suite))))
    number = draw(st.integers(0, len(suite["assertionResults"]) - 1))
    assertion = suite["assertionResults"][number]
    path: list[Any] = ["testResults", index, "assertionResults", number, draw(st.sampled_from(sorted(assertion)))]
    node = assertion[path[-1]]
    while level == "walk" and isinstance(node, (dict, list)) and node and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    return tuple(path)


@MORE
@given(data=st.data())
def test_jest_structural_mutations(data: st.DataObject) -> None:
    report = json.loads(JEST_REPORT)
    path = data.draw(_json_path(report), label="path")
    assume(path)
    ids = _jest_ids(report)
    baseline = get_parser("jest")("", {"r.json": JEST_REPORT.encode()}, root_dir=JEST_ROOT).tests
    parent = report
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = data.draw(JSON_VALUES, label="value")
    if path[0] != "testResults":
        touched: set[tuple[int, int]] = set()
    elif len(path) >= 4 and path[2] == "assertionResults":
        touched = {(path[1], path[3])}
    elif len(path) >= 2:
        touched = {key for key in ids if key[0] == path[1]}
    else:
        touched = set(ids)
    same_id = {ids[key] for key in touched}  # a duplicate id shares its fate with the touched one
    expected = {ids[k]: baseline[ids[k]] for k in ids if k not in touched and ids[k] not in same_id}
    result = _parse("jest", "", {"r.json": json.dumps(report).encode()}, root_dir=JEST_ROOT)
    assert _kept(result, expected) == []


@SETTINGS
@given(
    where=st.floats(min_value=0, max_value=1, exclude_max=True),
    cut=st.integers(min_value=0, max_value=30),
    insert=JSON_TEXT,
    in_output=st.booleans(),
)
def test_jest_text_mutations_raise_only_parse_error(where: float, cut: int, insert: str, in_output: bool) -> None:
    text = (LOGS / "jest" / "npm-test-json-output.txt").read_text(encoding="utf-8") if in_output else JEST_REPORT
    at = int(where * len(text))
    mutated = text[:at] + insert + text[at + cut :]
    if in_output:
        _parse("jest", mutated, {}, root_dir=JEST_ROOT)
    else:
        _parse("jest", "", {"r.json": mutated.encode("utf-8", errors="surrogatepass")}, root_dir=JEST_ROOT)
