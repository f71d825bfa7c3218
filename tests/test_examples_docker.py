"""The README's main job: ``cases/examples`` under the Docker runtime, gold -> resolved, empty -> empty_patch,
and an unchanged re-run answered from the result cache."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]


def _run(pytester: pytest.Pytester, predictions: str, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest(
        str(ROOT / "cases" / "examples"),
        f"--predictions={predictions}",
        "--mb-runtime=docker",
        f"--mb-reports-dir={pytester.path / 'reports'}",
        f"--mb-summary={pytester.path / 'reports' / 'summary.json'}",
        "-p",
        "no:cacheprovider",
        *args,
    )
    return result, json.loads((pytester.path / "reports" / "summary.json").read_text())


def test_examples_resolve_with_gold_in_docker_and_rerun_is_cached(pytester: pytest.Pytester) -> None:
    result, summary = _run(pytester, "gold", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2)
    assert summary["resolution_rate"] == 1.0
    first = summary["instances"]["mobilebench__counter-2"]
    assert first["runtime"] == "docker"
    assert (first["n2p_passed"], first["f2p_passed"], first["p2p_passed"]) == (2, 1, 2)
    started = time.monotonic()
    result, again = _run(pytester, "gold")
    assert time.monotonic() - started < 60
    assert all(entry["cached"] for entry in again["instances"].values())


def test_examples_with_empty_predictions(pytester: pytest.Pytester) -> None:
    result, summary = _run(pytester, "empty")
    result.assert_outcomes(failed=2)
    assert summary["resolution_rate"] == 0.0 and summary["by_reason"] == {"empty_patch": 2}


#: a plugin for the run below (its xdist worker loads it too): the removal handed over is logged with what
#: the evidence folder held then, and runs 3 s late, logging when it is done
_SLOW_REMOVALS = """
import json, os, time
from pytest_mobilebench.runtime import docker_workspace, removals
from pytest_mobilebench.suites.issue_resolution import evaluation

LOG = os.environ["MB_TEST_REMOVALS_LOG"]
judged = []


def log(**entry):
    with open(LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\\n")


def pytest_configure(config):
    real_judge, real_remove_later = evaluation.judge, docker_workspace.remove_later

    def judge(instance, evidence):
        judged.append(evidence)
        return real_judge(instance, evidence)

    def slow(remove):
        container = remove.args[0].id
        evidence = sorted(p.name for p in judged[-1].iterdir()) if judged else []
        log(handed=container, judged=bool(judged), evidence=evidence)
        real_remove_later(lambda: (time.sleep(3.0), remove(), log(removed=container)))

    evaluation.judge, docker_workspace.remove_later = judge, slow
"""


@pytest.mark.e2e
def test_a_deferred_removal_runs_after_the_evidence_and_verdict_and_is_done_when_the_worker_ends(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23, item 3: an xdist worker hands each candidate's container to the background removal only
    after its evidence is written and its verdict judged, and its session's end waits for the removal
    (slowed down here): the container is removed by the worker itself, never left to its reaper."""
    import docker

    pytester.makepyfile(mb_slow_removals=_SLOW_REMOVALS)
    log = pytester.path / "removals.jsonl"
    monkeypatch.setenv("MB_TEST_REMOVALS_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(pytester.path), os.environ.get("PYTHONPATH")])))
    result = pytester.runpytest_subprocess(
        str(ROOT / "cases" / "examples"),
        "-k",
        "mobilebench__counter-1",
        "--predictions=gold",
        "--mb-runtime=docker",
        f"--mb-reports-dir={pytester.path / 'reports'}",
        "-p",
        "no:cacheprovider",
        "-p",
        "mb_slow_removals",
        "-n",
        "1",
    )
    result.assert_outcomes(passed=1)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    handed = [e for e in entries if "handed" in e]
    assert len(handed) == 1 and handed[0]["judged"], entries  # judged before the container was handed over
    assert {"run.json", "parsed.json", "test_output.log", "candidate_as_run.diff", "policy.json"} <= set(
        handed[0]["evidence"]
    )
    assert [e["removed"] for e in entries if "removed" in e] == [handed[0]["handed"]]  # by the worker, 3 s late
    client = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(handed[0]["handed"])
    finally:
        client.close()
