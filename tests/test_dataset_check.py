"""``python -m pytest_mobilebench dataset check``: the shipped cases pass; a broken copy of a shipped manifest
gets one finding per planted defect, each naming file:line, instance and field; releases are linted too."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from pytest_mobilebench.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"
C1 = "mobilebench__counter-1"
INC_ONE = "__tests__/counter.test.js::Counter > increments by one"


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["dataset", "check", *args])
    return code, capsys.readouterr().out.splitlines()


def test_shipped_cases_pass(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _check(capsys, str(ROOT / "cases" / "examples"), str(ROOT / "cases" / "issue_resolution"),
                         "--cutoff", "2024-01-01")  # fmt: skip
    assert code == 0, lines
    assert lines == ["dataset check: 4 instance(s) in 2 file(s): no finding"]


def _broken(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """The shipped examples manifest with one planted defect per added instance; returns the file and the
    line of each planted field (by a marker name)."""
    data = yaml.safe_load(SHIPPED.read_text())
    one, two = data["instances"]
    planted = [
        one,  # the original: the first of a duplicated id
        {**copy.deepcopy(two), "created_at": "2020-03-01"},  # older than the cut-off
        {**copy.deepcopy(one), "problem_statement": "same id again"},  # duplicate id
        {**copy.deepcopy(one), "instance_id": "mobilebench__counter-3", "PASS_TO_PASS": [INC_ONE]},  # F2P also in P2P
        {**copy.deepcopy(one), "instance_id": "mobilebench__counter-4", "environment": {"node": None}},  # no node
        {**copy.deepcopy(one), "instance_id": "mobilebench__counter-5", "FAIL_TO_PAS": []},  # a typo
        {**copy.deepcopy(one), "instance_id": "mobilebench__counter-6", "FAIL_TO_PASS": []},  # nothing to pass
        {
            **copy.deepcopy(one),
            "instance_id": "mobilebench__counter-7",
            "FAIL_TO_PASS": [INC_ONE, "__tests__/counter.test.js::Counter > never ran"],
        },
    ]
    swapped = {k: v for k, v in one.items() if k != "fix_commit"}
    swapped.update(
        instance_id="mobilebench__counter-8",
        patch="--- a/__tests__/counter.test.js\n+++ b/__tests__/counter.test.js\n@@ -1 +1 @@\n-a\n+b\n",
        test_patch="--- a/src/counter.js\n+++ b/src/counter.js\n@@ -1 +1 @@\n-a\n+b\n",
    )
    planted.append(swapped)  # fix touching tests, test patch touching source
    data["instances"] = planted
    path = tmp_path / "broken.yaml"
    text = yaml.safe_dump(data, sort_keys=False, width=200)
    path.write_text(text)
    lines = text.splitlines()

    def line_of(entry: int, key: str) -> int:
        starts = [n for n, ln in enumerate(lines, start=1) if ln.startswith("- instance_id:")]
        start = starts[entry]
        end = starts[entry + 1] if entry + 1 < len(starts) else len(lines) + 1
        return next(n for n in range(start, end) if lines[n - 1].lstrip("- ").startswith(f"{key}:"))

    where = {
        "cutoff": line_of(1, "created_at"),
        "duplicate": line_of(2, "instance_id"),
        "both": line_of(3, "PASS_TO_PASS"),
        "env": line_of(4, "environment"),
        "typo": line_of(5, "FAIL_TO_PAS"),
        "empty": line_of(6, "FAIL_TO_PASS"),
        "never": line_of(7, "FAIL_TO_PASS"),
        "patch": line_of(8, "patch"),
        "test_patch": line_of(8, "test_patch"),
    }
    return path, where


def _fake_run(tmp_path: Path) -> Path:
    """A run folder as the harness writes it: per instance result.json and parsed.json evidence."""
    run = tmp_path / "run"
    reported = {INC_ONE: "PASS", "__tests__/counter.test.js::Counter > increments by a step": "PASS"}
    for iid in (C1, "mobilebench__counter-7"):
        folder = run / "gold" / iid
        folder.mkdir(parents=True)
        (folder / "result.json").write_text(json.dumps({"instance_id": iid}))
        (folder / "parsed.json").write_text(json.dumps({"tests": reported}))
    return run


def test_broken_copy_names_each_planted_defect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, at = _broken(tmp_path)
    code, lines = _check(capsys, str(path), "--cutoff", "2025-01-01", "--run", str(_fake_run(tmp_path)))
    assert code == 1
    f = str(path)
    expected = {
        "cutoff": f"{f}:{at['cutoff']}: instance 'mobilebench__counter-2': field 'created_at': created 2020-03-01, "
        "before the cut-off 2025-01-01",
        "duplicate": f"{f}:{at['duplicate']}: instance 'mobilebench__counter-1': field 'instance_id': duplicate "
        "instance id",
        "both": f"{f}:{at['both']}: instance 'mobilebench__counter-3': field 'PASS_TO_PASS': test '{INC_ONE}' is "
        "in both FAIL_TO_PASS and PASS_TO_PASS",
        "env": f"{f}:{at['env']}: instance 'mobilebench__counter-4': field 'environment.node': missing "
        "environment fact",
        "typo": f"{f}:{at['typo']}: instance 'mobilebench__counter-5': field 'FAIL_TO_PAS': Extra inputs are not "
        "permitted (did you mean 'FAIL_TO_PASS'?)",
        "empty": f"{f}:{at['empty']}: instance 'mobilebench__counter-6': field 'FAIL_TO_PASS': no FAIL_TO_PASS and "
        "no NONE_TO_PASS test",
        "never": f"{f}:{at['never']}: instance 'mobilebench__counter-7': field 'FAIL_TO_PASS': 1 test(s) no run "
        "reported: '__tests__/counter.test.js::Counter > never ran'",
        "patch": f"{f}:{at['patch']}: instance 'mobilebench__counter-8': field 'patch': touches test files (the "
        "test patch's): __tests__/counter.test.js",
        "test_patch": f"{f}:{at['test_patch']}: instance 'mobilebench__counter-8': field 'test_patch': touches files "
        "that are not tests: src/counter.js",
    }
    findings = lines[:-2] if lines[-1].startswith("  not in the run") else lines[:-1]
    for name, start in expected.items():
        assert sum(1 for ln in findings if ln.startswith(start)) == 1, (name, start, findings)
    assert len(findings) == len(expected), findings  # nothing else is reported
    assert lines[-2 if lines[-1].startswith("  not in") else -1].endswith(f"{len(expected)} finding(s)")


def test_releases_are_linted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0" * 40, "patch": "", "test_patch": "",
           "FAIL_TO_PASS": json.dumps(["t"]), "PASS_TO_PASS": "[]", "created_at": "2024-05-01T00:00:00Z"}  # fmt: skip
    release = tmp_path / "release.jsonl"
    release.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    code, lines = _check(capsys, str(release), "--framework", "react-native", "--cutoff", "2025-01-01")
    assert code == 1
    assert any(
        ln.startswith(f"{release}:2: instance 'a__b-1': field 'instance_id': duplicate instance id") for ln in lines
    )
    assert any(ln.startswith(f"{release}:1: instance 'a__b-1': field 'environment.node'") for ln in lines)
    assert any(f"{release}:1: instance 'a__b-1': field 'created_at': created 2024-05-01" in ln for ln in lines)
    no_framework, _ = _check(capsys, str(release))
    assert no_framework == 1


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dataset", "check", str(SHIPPED), "--cutoff", "last year"]) == 2
    code, lines = _check(capsys, str(tmp_path / "missing.yaml"))
    assert code == 1 and lines[0].endswith("missing.yaml: no such file")
    other = ROOT / "cases" / "planner" / "clock.yaml"
    code, lines = _check(capsys, str(other))
    assert code == 1 and "field 'suite'" in lines[0]
