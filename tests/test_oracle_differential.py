"""The oracle against real jest: every row of ``tests/oracle_js/rows.js`` decided the way ``expect`` decides it, for
each jest major the decider follows (26 to 30: the real repositories run 26, 29 and 30).

A session fixture installs every major's ``expect`` and ``jest-mock`` (and jest-snapshot 29) with one npm run into a
temporary directory (its own npm cache there too) and skips, saying why, where node or npm is missing or the
install fails.
``oracle_js/run.js`` evaluates each row with real ``expect`` and prints one assertion record per row, its values
encoded by ``oracle_js/encode.js`` (the format of ``docs/oracle.md``); the decider must reach jest's outcome on every
row, and may call a row undecidable only where the table marks it so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_mobilebench.oracle import decide_record, decide_test, parse_snap

pytestmark = pytest.mark.node
HERE = Path(__file__).parent / "oracle_js"
MAJORS = [26, 27, 28, 29, 30]
#: installed side by side under npm aliases (``expect29`` is ``expect@29``), in one npm run
PACKAGES = [f"{name}{major}@npm:{name}@{major}" for major in MAJORS for name in ("expect", "jest-mock")]
PACKAGES.append("jest-snapshot29@npm:jest-snapshot@29")


@pytest.fixture(scope="session")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every major's ``expect`` and ``jest-mock`` and jest-snapshot 29, installed once into a temporary directory
    (its npm cache there too, removed after the session); skips, saying why, without node, npm or the registry."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("the differential test needs node and npm on PATH")
    prefix = tmp_path_factory.mktemp("jest-expect")
    install = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--cache",
        str(prefix / ".npm-cache"),
        "--no-audit",
        "--no-fund",
    ]
    try:
        try:
            done = subprocess.run([*install, *PACKAGES], capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install of the jest packages took over 600 s (no registry?)")
        if done.returncode != 0:
            pytest.skip(f"npm install of the jest packages failed: {done.stderr.strip()[-400:]}")
        yield prefix / "node_modules"
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


def node_run(node_modules: Path, script: str, *args: str, **env: str) -> str:
    """``node oracle_js/<script> args`` with ``node_modules`` on NODE_PATH; its stdout."""
    full_env = {**os.environ, "NODE_PATH": str(node_modules), **env}
    run = subprocess.run(["node", str(HERE / script), *args], capture_output=True, text=True, env=full_env, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.fixture(scope="session")
def tables(node_modules: Path) -> Callable[[int], list[dict]]:
    """``tables(major)``: the table's records under real ``expect@<major>``, run once per session."""
    memo: dict[int, list[dict]] = {}

    def table(major: int) -> list[dict]:
        if major not in memo:
            env = {
                "JEST_MAJOR": str(major),
                "EXPECT_PACKAGE": f"expect{major}",
                "JEST_MOCK_PACKAGE": f"jest-mock{major}",
            }
            out = node_run(node_modules, "run.js", **env)
            memo[major] = [json.loads(line) for line in out.splitlines() if line.strip()]
        return memo[major]

    return table


@pytest.fixture(scope="session")
def jest_records(tables: Callable[[int], list[dict]]) -> list[dict]:
    return tables(29)


def test_the_table_is_wide_and_ran_whole(jest_records: list[dict]) -> None:
    broken = [r for r in jest_records if "harness_error" in r]
    assert not broken, broken[:3]
    assert len(jest_records) >= 150
    outcomes = Counter(r["inrealm"] for r in jest_records)
    assert outcomes["pass"] >= 60 and outcomes["fail"] >= 60, outcomes
    matchers = {r["matcher"] for r in jest_records}
    for family in ("toBe", "toEqual", "toStrictEqual", "toThrow", "toHaveBeenCalledWith", "toMatchObject"):
        assert family in matchers
    assert len(matchers) >= 40, sorted(matchers)


@pytest.mark.parametrize("major", MAJORS)
def test_the_decider_agrees_with_jest_on_every_row(tables: Callable[[int], list[dict]], major: int) -> None:
    records = tables(major)
    assert not [r for r in records if "harness_error" in r]
    wrong, unsettled = [], []
    for record in records:
        decision = decide_record(record, jest_major=major)
        assert decision.error is None, (record["test"], decision.error)
        if decision.outcome is None:
            if not record["undecidable"]:
                unsettled.append((record["test"], decision.reason))
        elif decision.outcome != record["inrealm"]:
            wrong.append((record["test"], record["inrealm"], decision.outcome, decision.reason))
    assert not wrong, wrong
    assert not unsettled, unsettled


@pytest.mark.parametrize("major", [m for m in MAJORS if m < 29])
def test_the_older_majors_need_their_own_rules(tables: Callable[[int], list[dict]], major: int) -> None:
    """The 29 rules decide some of an older major's rows the other way, so each major's own rules are exercised."""
    records = tables(major)
    as_29 = [r["test"] for r in records if decide_record(r).outcome not in (None, r["inrealm"])]
    assert as_29, f"jest {major} decides every row as jest 29 does: its own rules would be untested"


def test_a_forged_inrealm_outcome_is_a_disagreement(jest_records: list[dict]) -> None:
    """Flip what the realm claimed on every decidable row: each flip is reported, none is taken."""
    forged = [
        {**r, "inrealm": "pass" if r["inrealm"] == "fail" else "fail"} for r in jest_records if not r["undecidable"]
    ]
    decision = decide_test(forged)
    assert len(decision.disagreements) == len(forged)
    assert decision.holds is False


def test_snap_files_read_as_jest_reads_them(node_modules: Path, tmp_path: Path) -> None:
    """A ``.snap`` written by jest-snapshot 29's own writer (backticks, backslashes, ``${``, line breaks, astral
    characters) parses to exactly what jest's own reader gets from it."""
    snap = tmp_path / "__snapshots__" / "x.test.js.snap"
    jest_read = json.loads(node_run(node_modules, "snap.js", str(snap), JEST_SNAPSHOT_PACKAGE="jest-snapshot29"))
    assert len(jest_read) == 7
    assert parse_snap(snap.read_bytes().decode("utf-8"), "x.test.js.snap") == jest_read
