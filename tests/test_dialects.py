"""Foreign id dialects matched against our parsers' real output samples, and release rows read as they are.

The foreign ids below are what the MobileDev-Bench harness's console parsers make of the same runs
(rules in docs/datasets.md): jest titles and suite paths as printed by ``jest --verbose`` (the real
console output of the same run is in fixtures/dialects/jest/verbose-console.txt), Gradle
``{classname}.{name}`` read from the XML, flutter expanded-reporter descriptions.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_mobilebench.suites.issue_resolution import grading
from pytest_mobilebench.suites.issue_resolution.dialects import (
    ForeignIssueInstance,
    detect_row_dialect,
    gold_for_run,
    load_dataset,
    match_gold_id,
    records_from_ids,
)
from pytest_mobilebench.parsers import get_parser
from pytest_mobilebench.predictions import PredictionsError, load_predictions
from pytest_mobilebench.records import LoadedRecord, ManifestError

ROOT = Path(__file__).resolve().parents[1]
JEST_DIR = ROOT / "fixtures" / "dialects" / "jest"


def _jest_tests() -> dict:
    data = (JEST_DIR / "jest-results.json").read_bytes()
    return get_parser("jest")("", {"results.json": data}, root_dir="/tmp/g_jestproj").tests


def _match(framework: str, gold_id: str, tests) -> tuple[str, tuple[str, ...]]:
    m = match_gold_id("mobiledev", framework, gold_id, records_from_ids(framework, tests))
    return m.kind, m.ids


# ------------------------------------------------------------------------------------------------ jest


def test_jest_console_titles_from_the_real_verbose_output() -> None:
    tests = _jest_tests()
    console = (JEST_DIR / "verbose-console.txt").read_text(encoding="utf-8")
    math_file = "src/__tests__/math.test.js::"
    expected = {
        "adds two numbers": math_file + "math > add > adds two numbers",
        "adds  negatives (two spaces)": math_file + "math > add > adds  negatives (two spaces)",
        "multiplies 3 by 4": math_file + "math > mul > multiplies 3 by 4",
        "top level > with arrow in name": math_file + "top level > with arrow in name",
        "add(1, 1) = 2": math_file + "add(1, 1) = 2",
        "duplicate title 1": "src/__tests__/format.test.ts::formatPrice > duplicate title 1",
    }
    for title, ours in expected.items():
        assert f" {title}" in console  # the harness's id is a line of this real output
        assert _match("react-native", title, tests) == ("test", (ours,))


def test_jest_suite_lines_are_file_level_ids() -> None:
    tests = _jest_tests()
    kind, ids = _match("react-native", "src/__tests__/format.test.ts", tests)
    assert kind == "file" and len(ids) == 2
    # a suite that failed to run has no test of ours: the id stays as it is and can never pass
    assert _match("react-native", "src/__tests__/currency.test.ts", tests) == (
        "none",
        ("src/__tests__/currency.test.ts",),
    )


def test_jest_multiline_title_is_reported_unmatched() -> None:
    # the console parser reads "a multi-line" (first line only); no test of ours has that title
    assert _match("react-native", "a multi-line", _jest_tests())[0] == "none"


def test_jest_same_title_in_two_files_is_ambiguous() -> None:
    tests = ["a.test.js::suite > works", "b.test.js::other > works"]
    kind, ids = _match("react-native", "works", tests)
    assert kind == "ambiguous" and ids == tuple(sorted(tests))


# ------------------------------------------------------------------------------------------------ junit


@pytest.mark.parametrize("folder", ["gradle", "handmade"])
def test_junit_class_dot_name_on_real_gradle_xml(folder: str) -> None:
    root = ROOT / "fixtures" / "logs" / "junit" / folder
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.xml")}
    tests = get_parser("junit")("", files).tests
    checked = 0
    for data in files.values():
        for case in ET.fromstring(data).iter("testcase"):
            if case.get("classname") is None:
                continue
            foreign = f"{case.get('classname')}.{case.get('name')}"
            kind, ids = _match("android", foreign, tests)
            assert kind == "test", foreign
            assert ids == (f"{case.get('classname')}#{case.get('name')}",)
            checked += 1
    assert checked >= 5


def test_junit_xml_escaped_name_as_read_by_regex() -> None:
    tests = ['demo.QuoteTest#shows "quoted" & escaped']
    assert _match("android", "demo.QuoteTest.shows &quot;quoted&quot; &amp; escaped", tests)[0] == "test"
    # a dot inside the class name is not a separator of ours: no false match on a prefix
    assert _match("android", "demo.Quote", tests)[0] == "none"


# ------------------------------------------------------------------------------------------------ flutter


def test_flutter_expanded_reporter_descriptions() -> None:
    output = (ROOT / "fixtures" / "logs" / "flutter" / "machine-complete.txt").read_text(encoding="utf-8")
    tests = get_parser("flutter")(output, {}, root_dir="/app").tests
    ours = "test/counter_test.dart::Counter increments  twice"
    assert _match("flutter", "Counter increments  twice", tests) == ("test", (ours,))
    assert _match("flutter", "test/counter_test.dart: Counter increments  twice", tests) == ("test", (ours,))
    assert _match("flutter", "/app/test/counter_test.dart: Counter increments  twice", tests) == ("test", (ours,))
    assert _match("flutter", "test/other_test.dart: Counter increments  twice", tests)[0] == "none"
    assert _match("flutter", "same name", tests) == ("test", ("test/counter_test.dart::same name",))


# ------------------------------------------------------------------------------------------------ grading


def _row(number: int = 7, **over) -> dict:
    row = {
        "org": "acme",
        "repo": "app",
        "number": number,
        "lang": "typescript",
        "base": {"label": "acme:main", "ref": "main", "sha": "a" * 40},
        "fix_patch": "diff --git a/x.js b/x.js\n",
        "test_patch": "diff --git a/x.test.js b/x.test.js\n",
        "f2p_tests": {"adds two numbers": {"run": "NONE", "test": "FAIL", "fix": "PASS"}},
        "p2p_tests": {"works": {"run": "PASS", "test": "PASS", "fix": "PASS"}},
        "n2p_tests": {},
        "s2p_tests": {},
        "test_command": float("nan"),
        "problem_statement": "it breaks",
    }
    row.update(over)
    return row


def test_unmatched_gold_id_never_passes() -> None:
    from pytest_mobilebench.suites.issue_resolution.dialects import row_to_instance
    from pytest_mobilebench.states import TestState

    instance = row_to_instance(_row(), row_dialect="mobiledev-bench", default_framework=None)
    tests = {"x.test.js::m > adds two numbers": TestState.PASS, "x.test.js::works": TestState.PASS}
    lists, report = gold_for_run(instance, tests)
    assert lists["FAIL_TO_PASS"] == ["x.test.js::m > adds two numbers"] and report["unmatched"] == {}
    # a candidate run in which the F2P test vanished: the gold id stays foreign, state NONE, unresolved
    gone = {"x.test.js::works": TestState.PASS}
    lists, report = gold_for_run(instance, gone)
    assert report["unmatched"] == {"FAIL_TO_PASS": ["adds two numbers"]}
    verdict = grading.grade(
        fail_to_pass=lists["FAIL_TO_PASS"],
        none_to_pass=lists["NONE_TO_PASS"],
        pass_to_pass=lists["PASS_TO_PASS"],
        outcome=grading.RunOutcome(applied=True, built=True, tests=gone),
    )
    assert verdict.reason.value == "unresolved"


# ------------------------------------------------------------------------------------------------ rows


def test_release_rows_double_encoded_nan_and_a_bad_row(tmp_path: Path) -> None:
    encoded = _row(8, base=json.dumps(_row()["base"]), f2p_tests=json.dumps(_row()["f2p_tests"]))
    bad = _row(9, base={"ref": "main"})
    path = tmp_path / "mobiledev.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (_row(), encoded, bad)) + "\n", encoding="utf-8")
    assert "NaN" in path.read_text()  # the release's NaN test_command, as Python's json writes it
    out = load_dataset(path, {})
    assert out is not None and len(out) == 3
    first, second, third = out
    assert isinstance(first, LoadedRecord) and isinstance(second, LoadedRecord)
    inst = second.record
    assert isinstance(inst, ForeignIssueInstance)
    assert (inst.instance_id, inst.foreign_id, inst.base_commit) == ("acme__app-8", "acme/app:pr-8", "a" * 40)
    assert inst.framework == "react-native" and inst.FAIL_TO_PASS == ("adds two numbers",)
    assert inst.test_command is None and inst.row_dialect == "mobiledev-bench"
    assert isinstance(third, ManifestError)
    assert str(third) == f"{path}:3: instance 'acme__app-9': field 'base': expected an object with 'sha'"


def test_detection_per_file(tmp_path: Path) -> None:
    assert detect_row_dialect(_row()) == "mobiledev-bench"
    msb = {k: v for k, v in _row().items() if k not in ("problem_statement", "test_command")}
    assert detect_row_dialect(msb) == "multi-swe-bench"
    assert detect_row_dialect({"instance_id": "a__b-1", "base_commit": "abc1234"}) == "swe-bench"
    other = tmp_path / "other.json"
    other.write_text('[{"hello": 1}]')
    assert load_dataset(other, {}) is None
    unknown_lang = tmp_path / "u.jsonl"
    unknown_lang.write_text(json.dumps(_row(lang="rust")) + "\n")
    (err,) = load_dataset(unknown_lang, {})
    assert isinstance(err, ManifestError) and err.field == "lang"
    (ok,) = load_dataset(unknown_lang, {"dataset_framework": "android"})
    assert ok.record.framework == "android"


def test_patch_file_predictions(tmp_path: Path) -> None:
    path = tmp_path / "patches.jsonl"
    entries = [
        {"org": "acme", "repo": "app", "number": 7, "fix_patch": "diff --git a/x b/x\n", "model": "m1"},
        {"org": "acme", "repo": "app", "number": 8, "fix_patch": ""},
    ]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    preds = load_predictions([str(path)])
    assert preds.get("acme__app-7", "m1").model_patch == "diff --git a/x b/x\n"
    assert preds.get("acme__app-8", "patches").model_patch == ""  # no model: the file's stem
    path.write_text(json.dumps({"org": "acme", "repo": "app", "number": "7x", "fix_patch": ""}) + "\n")
    with pytest.raises(PredictionsError, match=r"patches.jsonl:1: .*'number' must be an integer"):
        load_predictions([str(path)])


def test_nan_is_not_a_string_command() -> None:
    assert math.isnan(_row()["test_command"])


def test_jellyfin_release_rows_map_onto_the_native_gold_lists() -> None:
    """The jellyfin-expo instances written as a MobileDev-Bench release (fixtures/dialects/jellyfin) give,
    against the tests a run reports, exactly the native manifest's gold lists (the Docker runs of both
    agreeing on every verdict are in docs/datasets.md)."""
    from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest
    from pytest_mobilebench.manifest.yamlfile import read_yaml
    from pytest_mobilebench.states import TestState

    native = {
        r.instance_id: r.record
        for r in load_manifest(read_yaml(ROOT / "cases/issue_resolution/jellyfin__jellyfin-expo.yaml"))
    }
    foreign = {r.instance_id: r.record for r in load_dataset(ROOT / "fixtures/dialects/jellyfin/mobiledev.jsonl", {})}
    assert sorted(native) == sorted(foreign)
    for iid, inst in foreign.items():
        mine = native[iid]
        assert (inst.base_commit, inst.framework, inst.repo) == (mine.base_commit, mine.framework, mine.repo)
        reported = {t: TestState.PASS for t in (*mine.FAIL_TO_PASS, *mine.NONE_TO_PASS, *mine.PASS_TO_PASS)}
        lists, report = gold_for_run(inst, reported)
        assert report["unmatched"] == {} and report["ambiguous"] == {}
        assert lists == {
            "FAIL_TO_PASS": sorted(mine.FAIL_TO_PASS),
            "NONE_TO_PASS": sorted(mine.NONE_TO_PASS),
            "PASS_TO_PASS": sorted(mine.PASS_TO_PASS),
        }


def test_skip_to_pass_is_fail_to_pass_and_multi_swe_bench_problem_statement() -> None:
    from pytest_mobilebench.suites.issue_resolution.dialects import row_to_instance

    row = {k: v for k, v in _row().items() if k not in ("problem_statement", "test_command")}
    row["s2p_tests"] = {"was skipped": {"run": "SKIP", "test": "SKIP", "fix": "PASS"}}
    row["resolved_issues"] = json.dumps([{"number": 3, "title": "Crash on start", "body": "It crashes."}])
    inst = row_to_instance(row, row_dialect=detect_row_dialect(row), default_framework=None)
    assert inst.row_dialect == "multi-swe-bench"
    assert inst.FAIL_TO_PASS == ("adds two numbers", "was skipped")
    assert inst.problem_statement == "Crash on start\nIt crashes."
