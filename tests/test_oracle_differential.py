"""The oracle against real jest: every row of ``tests/oracle_js/rows.js`` decided the way ``expect`` 29 decides it.

A session fixture installs ``expect@29`` and ``jest-mock@29`` with npm into a temporary directory (its own npm cache
there too) and skips, saying why, where node or npm is missing or the install fails. ``oracle_js/run.js`` evaluates
each row with real ``expect`` and prints one assertion record per row, its values encoded by ``oracle_js/encode.js``
(the format of ``docs/oracle.md``); the decider must reach jest's outcome on every row, and may call a row
undecidable only where the table marks it so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from pytest_mobilebench.oracle import decide_record, decide_test

pytestmark = pytest.mark.node
HERE = Path(__file__).parent / "oracle_js"
PACKAGES = ["expect@29", "jest-mock@29"]


@pytest.fixture(scope="session")
def jest_records(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
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
        done = subprocess.run([*install, *PACKAGES], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm install {' '.join(PACKAGES)} took over 300 s (no registry?)")
    if done.returncode != 0:
        pytest.skip(f"npm install {' '.join(PACKAGES)} failed: {done.stderr.strip()[-400:]}")
    env = {**os.environ, "NODE_PATH": str(prefix / "node_modules")}
    run = subprocess.run([node, str(HERE / "run.js")], capture_output=True, text=True, env=env, timeout=120, cwd=HERE)
    assert run.returncode == 0, run.stderr
    try:
        return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


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


def test_the_decider_agrees_with_jest_on_every_row(jest_records: list[dict]) -> None:
    wrong, unsettled = [], []
    for record in jest_records:
        decision = decide_record(record)
        assert decision.error is None, (record["test"], decision.error)
        if decision.outcome is None:
            if not record["undecidable"]:
                unsettled.append((record["test"], decision.reason))
        elif decision.outcome != record["inrealm"]:
            wrong.append((record["test"], record["inrealm"], decision.outcome, decision.reason))
    assert not wrong, wrong
    assert not unsettled, unsettled


def test_a_forged_inrealm_outcome_is_a_disagreement(jest_records: list[dict]) -> None:
    """Flip what the realm claimed on every decidable row: each flip is reported, none is taken."""
    forged = [
        {**r, "inrealm": "pass" if r["inrealm"] == "fail" else "fail"} for r in jest_records if not r["undecidable"]
    ]
    decision = decide_test(forged)
    assert len(decision.disagreements) == len(forged)
    assert decision.holds is False
