"""``--predictions=live --mb-trials 2`` in Docker on the bundled counter-1 instance: a scripted model resolves on
trial 1 and does nothing on trial 2. Each trial is its own item (``[t1]``, ``[t2]``) with its own sandbox: trial 2
sees neither trial 1's files nor its edit; the summary gives pass@1 0.5, pass^2 0 and the flip, on the terminal
(a short headline), in junit and on the run page; the run's predictions.jsonl carries the trial and re-grades to
the same per-trial verdicts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from live_scripts import by_instance  # noqa: F401 (fixture)
from scripted_openai import bash, submit

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
C1 = "adds one too many"  # a marker of counter-1's problem statement (cases/examples/mobilebench__counter.yaml)
C1_SED = "sed -i 's/this.value += step + 1;/this.value += step;/' src/counter.js"
IID = "mobilebench__counter-1"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]


def _run(pytester: pytest.Pytester, run_id: str, predictions: str, *args: str) -> tuple[pytest.RunResult, dict, Path]:
    reports = pytester.path / "reports"
    result = pytester.runpytest(
        str(ROOT / "cases" / "examples"),
        f"--predictions={predictions}",
        "--mb-runtime=docker",
        f"--mb-run-id={run_id}",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / run_id / 'summary.json'}",
        "-p",
        "no:cacheprovider",
        "-k",
        "counter-1",
        *args,
    )
    return result, json.loads((reports / run_id / "summary.json").read_text()), reports / run_id


def test_a_flip_between_two_trials_gives_pass_at_1_half_pass_hat_2_zero_and_regrades_the_same(
    pytester: pytest.Pytester, by_instance
) -> None:
    by_instance.trials[C1] = [
        [bash(f"echo trial-one > /tmp/trial-mark && echo trial-one > trial-mark.txt && {C1_SED}"), submit("fixed")],
        [
            bash("cat /tmp/trial-mark trial-mark.txt; git status --short; grep -c 'step + 1' src/counter.js"),
            submit("nothing to change"),
        ],
    ]
    live = (
        f"--mb-agent-base-url={by_instance.url}",
        "--mb-agent-model=scripted",
        "--mb-trials=2",
        "--junitxml=junit.xml",
    )
    result, summary, run = _run(pytester, "trials", "live", *live)
    result.assert_outcomes(passed=1, failed=1)
    verdicts = {k: e["reason"] for k, e in summary["instances"].items()}
    assert verdicts == {f"{IID}[t1]": "resolved", f"{IID}[t2]": "empty_patch"}

    # trial 2 ran in its own sandbox: no file of trial 1, the bug still there, nothing changed
    second = run / "scripted" / f"{IID}%t2"
    tool = [
        json.loads(x)
        for x in (second / "trajectory.jsonl").read_text().splitlines()
        if '"role": "tool"' in x or '"role":"tool"' in x
    ]
    out = next(x for x in tool if "command" in x)["output"]
    # (stdout and stderr interleave in any order: grep's count "1" is a line of its own somewhere)
    assert "trial-one" not in out and out.count("No such file") == 2 and "1" in out.splitlines(), out
    assert json.loads((run / "scripted" / f"{IID}%t1" / "result.json").read_text())["trial"] == 1

    trials = summary["suite_tables"]["issue_resolution"]["trials"]["scripted"]
    assert trials["pass_1"]["value"] == 0.5 and trials["pass_hat_k"]["2"]["value"] == 0.0
    assert trials["flips"] == [
        {"instance_id": IID, "passes": 1, "trials": 2, "verdicts": {"t1": "resolved", "t2": "empty_patch"}}
    ]
    assert trials["pass_at_k"]["2"]["value"] == 1.0 and trials["per_task"][IID]["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert (
        trials["pass_1"]["ci95"] == [0.0, 1.0]
        and trials["pass_1"]["wilson95"][0] < 0.5 < trials["pass_1"]["wilson95"][1]
    )
    assert any(x.startswith("trials of issue_resolution (scripted): 1 x 2: pass@1 0.500") for x in result.outlines)
    head = summary["headlines"]["issue_resolution"]["headline"]
    assert head["label"] == "pass@1 over 2 trials" and (head["numerator"], head["denominator"]) == (1, 2)
    line = next(x for x in result.outlines if x.startswith("issue_resolution (scripted): "))
    assert "pass@1 over 2 trials 1/2 = 0.500" in line and len(line) < 120, line
    assert any("pass^2 0/1 = 0.000" in x for x in result.outlines)
    assert any("instances whose trials disagree 1/1" in x for x in result.outlines)

    junit = ET.parse(pytester.path / "junit.xml").getroot()
    suite_props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert suite_props["mobilebench.issue_resolution.scripted.trials.pass_hat_2"] == "0.0"
    assert suite_props["mobilebench.issue_resolution.scripted.trials.flips"] == IID
    cases = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")} for c in junit.iter("testcase")}
    assert cases[f"{IID}[t2]"]["trial"] == "2"
    page = (run / "index.html").read_text()
    assert "Trials" in page and "pass^2" in page

    rows = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert sorted((r["instance_id"], r["trial"]) for r in rows) == [(IID, 1), (IID, 2)]
    again, regraded, _ = _run(pytester, "trials-regrade", str(run / "predictions.jsonl"))
    again.assert_outcomes(passed=1, failed=1)
    assert {k: e["reason"] for k, e in regraded["instances"].items()} == verdicts
    assert regraded["suite_tables"]["issue_resolution"]["trials"]["scripted"]["flips"] == trials["flips"]
