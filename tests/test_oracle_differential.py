"""The oracle against real jest: every row of ``tests/oracle_js/rows.js`` decided the way ``expect`` decides it, for
each jest major the decider follows (26 to 30: the real repositories run 26, 29 and 30).

A session fixture per major installs ``expect@<major>`` and ``jest-mock@<major>`` with npm into a temporary
directory (its own npm cache there too) and skips, saying why, where node or npm is missing or the install fails.
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
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_mobilebench.oracle import decide_record, decide_test

pytestmark = pytest.mark.node
HERE = Path(__file__).parent / "oracle_js"
MAJORS = [26, 27, 28, 29, 30]


def run_table(tmp_path_factory: pytest.TempPathFactory, major: int) -> list[dict]:
    """The table's records under real ``expect@<major>`` (skips when npm cannot install it)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("the differential test needs node and npm on PATH")
    packages = [f"expect@{major}", f"jest-mock@{major}"]
    prefix = tmp_path_factory.mktemp(f"jest-expect-{major}")
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
            done = subprocess.run([*install, *packages], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {' '.join(packages)} took over 300 s (no registry?)")
        if done.returncode != 0:
            pytest.skip(f"npm install {' '.join(packages)} failed: {done.stderr.strip()[-400:]}")
        env = {**os.environ, "NODE_PATH": str(prefix / "node_modules"), "JEST_MAJOR": str(major)}
        run = subprocess.run([node, str(HERE / "run.js")], capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], list[dict]]:
    """``tables(major)``: the table's records under that major, installed and run once per session."""
    memo: dict[int, list[dict]] = {}

    def table(major: int) -> list[dict]:
        if major not in memo:
            memo[major] = run_table(tmp_path_factory, major)
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
