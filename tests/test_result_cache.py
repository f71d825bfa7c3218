"""The result cache reads back only results of the item asking: an entry that is not (``[]``, ``{}``, another
item's entry, a truncated file, another schema, an infrastructure result, a broken verdict, a foreign prediction
row) is removed, the item evaluated again, and the entry reported on the terminal and in the summary; the summary
never crashes on what an entry held. The third-party echo suite of ``test_suite_seam`` runs in-process; the
bundled examples run end to end with the local runtime.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_suite_seam import ECHO_MANIFEST, THIRD_PARTY_CONFTEST, _preds

from pytest_mobilebench.cache import (
    RESULT_SCHEMA,
    CacheEntryError,
    EntryOwner,
    cache_entry,
    parse_entry,
    prediction_path,
    read_cached,
    result_path,
    row_problem,
)
from pytest_mobilebench.report.summary import build_summary
from pytest_mobilebench.report.terminal import cache_lines, headline_lines

ROOT = Path(__file__).resolve().parent.parent


def _echo_run(pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest("--predictions=p.jsonl", "-p", "no:cacheprovider", "-p", "no:randomly")
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    return result, summary


@pytest.fixture
def echo(pytester: pytest.Pytester) -> dict[str, Path]:
    """A first echo run (echo-1 passes, echo-2 is wrong, echo-3 passes): each instance's cache file."""
    pytester.makeconftest(THIRD_PARTY_CONFTEST)
    pytester.makefile(".yaml", echo=ECHO_MANIFEST)
    _preds(pytester.path / "p.jsonl", {"echo-1": "yes", "echo-2": "yes", "echo-3": "maybe"})
    first, summary = _echo_run(pytester)
    first.assert_outcomes(passed=2, failed=1)
    assert summary["cache_dropped"] == 0
    reports = pytester.path / "reports"
    return {iid: result_path(reports, e["cache_key"]) for iid, e in summary["instances"].items()}


def _entry(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


#: what a shape does to echo-1's cache file, given every instance's file
SHAPES: dict[str, Callable[[dict[str, Path]], None]] = {
    "a JSON list": lambda f: f["echo-1"].write_text("[]"),
    "an empty object": lambda f: f["echo-1"].write_text("{}"),
    "truncated": lambda f: f["echo-1"].write_text(f["echo-1"].read_text()[:40]),
    "not UTF-8": lambda f: f["echo-1"].write_bytes(b"\xff\xfe{}"),
    "another item's entry": lambda f: f["echo-1"].write_text(f["echo-2"].read_text()),
    "another schema": lambda f: f["echo-1"].write_text(json.dumps({**_entry(f["echo-1"]), "cache_schema": 0})),
    "written before schemas": lambda f: f["echo-1"].write_text(
        json.dumps({k: v for k, v in _entry(f["echo-1"]).items() if k != "cache_schema"})
    ),
    "an infrastructure result": lambda f: f["echo-1"].write_text(
        json.dumps({**_entry(f["echo-1"]), "reason": "flaky_oracle", "passed": False})
    ),
    "a reason outside the vocabulary": lambda f: f["echo-1"].write_text(
        json.dumps({**_entry(f["echo-1"]), "reason": "splendid"})
    ),
    "passed is not a bool": lambda f: f["echo-1"].write_text(json.dumps({**_entry(f["echo-1"]), "passed": "yes"})),
    "properties not a mapping": lambda f: f["echo-1"].write_text(json.dumps({**_entry(f["echo-1"]), "properties": []})),
    "another model": lambda f: f["echo-1"].write_text(json.dumps({**_entry(f["echo-1"]), "model_name_or_path": "x"})),
    "a foreign prediction row": lambda f: (
        f["echo-1"]
        .with_name(f["echo-1"].stem + ".prediction.json")
        .write_text(json.dumps({"instance_id": "echo-2", "model_name_or_path": "m", "model_patch": "yes"}))
    ),
    "a prediction row that is a list": lambda f: (
        f["echo-1"].with_name(f["echo-1"].stem + ".prediction.json").write_text("[]")
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_entry_that_is_not_the_items_result_is_dropped_regraded_and_reported(
    pytester: pytest.Pytester, echo: dict[str, Path], shape: str
) -> None:
    SHAPES[shape](echo)
    again, summary = _echo_run(pytester)
    again.assert_outcomes(passed=2, failed=1)  # echo-1 keeps its own verdict (passed), echo-2 its own (wrong)
    inst = summary["instances"]
    assert inst["echo-1"]["reason"] == "ok" and not inst["echo-1"].get("cached")
    assert inst["echo-2"]["cached"] is True and inst["echo-3"]["cached"] is True
    assert summary["cache_dropped"] == 1
    [dropped] = summary["cache_dropped_entries"]
    assert (dropped["instance_id"], dropped["model"], dropped["file"]) == ("echo-1", "m", str(echo["echo-1"]))
    assert "result cache: 1 entry not the result of its item: removed, evaluated again" in again.stdout.str()
    again.stdout.fnmatch_lines([f"  echo-1 [[]m[]]: {dropped['why'][:40]}*"])
    entry = _entry(echo["echo-1"])  # the re-graded result replaced it, without this run's note
    assert entry["instance_id"] == "echo-1" and entry["cache_schema"] == RESULT_SCHEMA and "cache_dropped" not in entry
    assert not echo["echo-1"].with_name(echo["echo-1"].stem + ".prediction.json").exists()
    third, healed = _echo_run(pytester)
    third.assert_outcomes(passed=2, failed=1)
    assert healed["cache_dropped"] == 0 and healed["cached"] == 3
    assert "result cache:" not in third.stdout.str()


def test_another_items_entry_never_gives_its_verdict(pytester: pytest.Pytester, echo: dict[str, Path]) -> None:
    """echo-2's (wrong) entry copied under echo-1's key and echo-1's (passed) under echo-2's: each item still
    gets its own verdict."""
    one, two = echo["echo-1"].read_text(), echo["echo-2"].read_text()
    echo["echo-1"].write_text(two)
    echo["echo-2"].write_text(one)
    again, summary = _echo_run(pytester)
    again.assert_outcomes(passed=2, failed=1)
    assert (summary["instances"]["echo-1"]["reason"], summary["instances"]["echo-2"]["reason"]) == ("ok", "wrong")
    assert summary["cache_dropped"] == 2
    whys = {d["instance_id"]: d["why"] for d in summary["cache_dropped_entries"]}
    assert "instance_id 'echo-2'" in whys["echo-1"] and "instance_id 'echo-1'" in whys["echo-2"]


def test_mb_rerun_reads_no_entry_and_reports_none(pytester: pytest.Pytester, echo: dict[str, Path]) -> None:
    echo["echo-1"].write_text("{}")
    result = pytester.runpytest("--predictions=p.jsonl", "-p", "no:cacheprovider", "--mb-rerun")
    result.assert_outcomes(passed=2, failed=1)
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["cache_dropped"] == 0 and summary["cached"] == 0
    assert _entry(echo["echo-1"])["instance_id"] == "echo-1"  # the evaluation wrote its own entry


def _suite() -> Any:
    """A minimal suite for the result contract: reasons ``ok`` (a verdict) and ``down`` (infrastructure)."""
    import enum

    class Reason(str, enum.Enum):
        OK = "ok"
        DOWN = "down"

        @property
        def is_infra(self) -> bool:
            return self is Reason.DOWN

    return type("S", (), {"name": "s", "reasons": Reason})()


OWNER = EntryOwner(key="ab" * 32, instance_id="i-1", suite="s", model="m", trial=None)


def _good(**over: Any) -> dict[str, Any]:
    result = {
        "reason": "ok",
        "passed": True,
        "retryable": False,
        "detail": "",
        "properties": {},
        "instance_id": "i-1",
        "suite": "s",
        "model_name_or_path": "m",
        "cache_key": OWNER.key,
        "evidence_dir": "/r/m/i-1",
    }
    return cache_entry({**result, **over})


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ([], "not a JSON object but a list"),
        ({}, "no cache_schema"),
        ("text", "not a JSON object but a str"),
        ({**_good(), "cache_schema": 2}, "cache schema 2, this harness reads 1"),
        (_good(instance_id="i-2"), "the result of another item: instance_id 'i-2'"),
        (_good(cache_key="cd" * 32), "the result of another item: cache_key"),
        (_good(trial=2), "the result of another item: trial 2"),
        (_good(suite="t"), "the result of another item: suite 't'"),
        (_good(instance_id=None), "not a kept result: instance_id is None"),
        (_good(evidence_dir=["x"]), "not a kept result: evidence_dir is a list"),
        (_good(reason="down", passed=False), "an infrastructure result (down)"),
        (_good(properties=[]), "not a kept result: properties is a list"),
        (_good(reason=["ok"]), "not a result"),
        (_good(passed=1), "not a result"),
        (_good(properties={"n": [1]}), "not a result"),
    ],
)
def test_parse_entry_names_what_is_wrong(entry: Any, said: str) -> None:
    with pytest.raises(CacheEntryError, match=".") as caught:
        parse_entry(entry, OWNER, _suite())
    assert said in str(caught.value)


def test_an_entry_of_the_item_is_its_checked_result() -> None:
    parsed = parse_entry(_good(detail=None, retryable=True), OWNER, _suite())
    assert parsed["detail"] == "" and parsed["retryable"] is False and "cache_schema" not in parsed  # as checked
    assert parsed["instance_id"] == "i-1" and parsed["evidence_dir"] == "/r/m/i-1"
    assert parse_entry(_good(trial=3), EntryOwner(OWNER.key, "i-1", "s", "m", trial=3), _suite())["trial"] == 3
    assert "cached" not in cache_entry({**_good(), "cached": True, "cache_dropped": {"why": "x"}})


def test_a_prediction_row_must_be_the_items() -> None:
    assert row_problem({"instance_id": "i-1", "model_name_or_path": "m", "model_patch": ""}, OWNER) is None
    assert "not a JSON object" in (row_problem([], OWNER) or "")
    assert "instance_id 'i-2'" in (row_problem({"instance_id": "i-2", "model_name_or_path": "m"}, OWNER) or "")
    assert "trial 1" in (row_problem({"instance_id": "i-1", "model_name_or_path": "m", "trial": 1}, OWNER) or "")


def test_read_cached_misses_hits_and_drops(tmp_path: Path) -> None:
    assert read_cached(tmp_path, OWNER, _suite()).result is None  # absent: a plain miss, nothing dropped
    assert read_cached(tmp_path, OWNER, _suite()).dropped is None
    path = result_path(tmp_path, OWNER.key)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_good()))
    hit = read_cached(tmp_path, OWNER, _suite())
    assert hit.result is not None and hit.result["cached"] is True and "cache_schema" not in hit.result
    prediction_path(tmp_path, OWNER.key).write_text('{"instance_id": "i-9", "model_name_or_path": "m"}')
    dropped = read_cached(tmp_path, OWNER, _suite())
    assert dropped.result is None and dropped.dropped == {
        "file": str(path),
        "why": "its prediction row is another item's: instance_id 'i-9'",
    }
    assert not path.exists() and not prediction_path(tmp_path, OWNER.key).exists()


def test_the_summary_never_crashes_on_what_a_result_lacks() -> None:
    """The shapes an old harness read back as results (``{}`` with the cache mark): no KeyError."""
    summary = build_summary([{"cached": True}, {"cached": True, "reason": "ok"}], run_id="r", suite_tables={})
    assert summary["cached"] == 2 and summary["cache_dropped"] == 0
    headline_lines(summary)


def test_cache_lines_count_and_cap_the_dropped_entries() -> None:
    dropped = {"why": "not a JSON object but a list\x1b[31m"}
    results = [
        {
            "instance_id": f"i-{n}",
            "model_name_or_path": "m",
            "reason": "ok",
            "passed": True,
            "cache_dropped": {**dropped, "file": f"/c/{n}.json"},
        }
        for n in range(12)
    ]
    summary = build_summary(results, run_id="r", suite_tables={})
    assert summary["cache_dropped"] == 12
    lines = cache_lines(summary)
    assert lines[0] == "result cache: 12 entries not the result of its item: removed, evaluated again"
    assert lines[1] == "  i-0 [m]: not a JSON object but a list\\x1b[31m"
    assert lines[-1] == "  ... and 2 more (summary.json: cache_dropped_entries)" and len(lines) == 12
    assert cache_lines({"cache_dropped_entries": []}) == []


@pytest.mark.e2e
def test_examples_with_broken_cache_entries_are_regraded_end_to_end(tmp_path: Path) -> None:
    """cases/examples with gold on the local runtime: counter-1's entry replaced by ``{}`` and counter-2's by
    counter-1's entry; both are evaluated again (resolved, their own evidence), reported, and healed."""
    env = {**os.environ, "PYTEST_MOBILEBENCH_CACHE": str(tmp_path / "mbcache")}
    reports = tmp_path / "reports"

    def run() -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                str(ROOT / "cases" / "examples"),
                "--predictions=gold",
                "--mb-runtime=local",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                f"--mb-reports-dir={reports}",
                f"--rootdir={ROOT}",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        return done, json.loads((reports / "latest" / "summary.json").read_text())

    done, first = run()
    assert done.returncode == 0, done.stdout[-3000:]
    files = {iid: result_path(reports, e["cache_key"]) for iid, e in first["instances"].items()}
    one, two = "mobilebench__counter-1", "mobilebench__counter-2"
    files[two].write_text(files[one].read_text())
    files[one].write_text("{}")
    done, second = run()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert second["cache_dropped"] == 2 and second["resolved"] == 2 and second["cached"] == 0
    for iid in (one, two):
        assert second["instances"][iid]["reason"] == "resolved"
        assert second["instances"][iid]["evidence_dir"].endswith(f"/gold/{iid}")
        assert Path(second["instances"][iid]["evidence_dir"]).parent.parent.name == second["run_id"]
    assert "result cache: 2 entries not the result of its item: removed, evaluated again" in done.stdout
    done, third = run()
    assert done.returncode == 0 and third["cached"] == 2 and third["cache_dropped"] == 0
