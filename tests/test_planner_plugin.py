"""The planner suite through the plugin on the bundled cases and replay files: gold Overall 1.0, no-op 0.0, the
weak agent in between with the per-dimension breakdown its four habits imply; repeats and pass^k."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from pytest_mobilebench.suites.planner.report import WEIGHTS, overall, summarize_results

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "planner"


def _generator():
    spec = importlib.util.spec_from_file_location("make_replays", FIXTURES / "make_replays.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bundled_replay_files_are_current(tmp_path: Path) -> None:
    gen = _generator()
    before = {n: (FIXTURES / n).read_text() for n in ("gold.jsonl", "noop.jsonl", "weak-agent.jsonl")}
    gen.HERE = tmp_path
    gen.main()
    assert {n: (tmp_path / n).read_text() for n in before} == before, "run: python fixtures/planner/make_replays.py"


def _weak_agent_should_pass(task: dict, odd_skills: set[str]) -> bool:
    """The weak agent's expected outcome, from its habits and the task's metadata alone (no grading)."""
    gold = task["gold"]
    first_error = next((i for i, s in enumerate(gold) if "expect_error" in s), None)
    if first_error is not None:
        nothing_after = gold[first_error + 1]["tool"] == "Finish"
        if not (nothing_after and task["bucket"] == "tool_call"):
            return False  # it gave up at the error (a tool-call task whose writes all came before it survives)
    if task["dimension"] == "memory_usage" or task["id"] in odd_skills:
        return False  # no memory search -> memory gate; no skill loaded -> skill gate and tools unavailable
    return not {s["tool"] for s in gold} & {"delegate_to_vision_agent", "delegate_to_web_agent"}


@pytest.fixture(scope="module")
def bundled_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One run over every bundled task with the three replay files (three models, 3 x N items)."""
    import subprocess
    import sys

    reports = tmp_path_factory.mktemp("reports")
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "cases/planner",
        "-p",
        "no:cacheprovider",
        "-q",
        "-n",
        "2",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / 'summary.json'}",
        "--mb-rerun",
        *(f"--predictions=fixtures/planner/{n}" for n in ("gold.jsonl", "noop.jsonl", "weak-agent.jsonl")),
    ]
    proc = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert (reports / "summary.json").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((reports / "summary.json").read_text())


@pytest.mark.e2e
def test_gold_noop_and_weak_agent_overall(bundled_run: dict) -> None:
    tables = bundled_run["suite_tables"]["planner"]["by_model"]
    assert tables["gold-replay"]["overall"] == 1.0
    assert tables["noop"]["overall"] == 0.0
    assert 0.0 < tables["weak-agent"]["overall"] < 1.0


@pytest.mark.e2e
def test_weak_agent_per_dimension_breakdown(bundled_run: dict) -> None:
    gen = _generator()
    tasks = gen.tasks()
    odd = gen.odd_skill_tasks(tasks)
    table = bundled_run["suite_tables"]["planner"]["by_model"]["weak-agent"]
    for dim in WEIGHTS:
        in_dim = [t for t in tasks if t["dimension"] == dim]
        expected = sum(_weak_agent_should_pass(t, odd) for t in in_dim)
        got = table["dimensions"][dim]
        assert (got["passed"], got["total"]) == (expected, len(in_dim)), dim
        lo, hi = got["ci95"]
        assert lo <= got["success"] <= hi
    success = {d: table["dimensions"][d]["success"] for d in WEIGHTS}
    assert table["overall"] == overall(success)
    assert table["errors"]["met"] < sum(1 for t in tasks for s in t["gold"] if "expect_error" in s)
    assert len(table["by_domain"]) == len(list((ROOT / "cases" / "planner").glob("*.yaml")))


def test_overall_formula_and_partial_runs() -> None:
    assert overall(
        {"basic_tool_use": 1.0, "subagent_collaboration": 0.0, "memory_usage": 0.5, "skill_usage": 0.25}
    ) == pytest.approx(0.5 + 0.1 + 0.05)
    assert overall({"basic_tool_use": 1.0, "subagent_collaboration": None, "memory_usage": 1, "skill_usage": 1}) is None
    assert summarize_results([])["headline"]["denominator"] == 0


def test_repeats_give_pass_k(pytester: pytest.Pytester) -> None:
    """--mb-repeat 2: a prediction with two recorded runs, one good and one not -> pass^1 0.5, pass^k 0."""
    cases = pytester.mkdir("cases")
    shutil.copy(ROOT / "cases" / "planner" / "media.yaml", cases / "media.yaml")
    good = [
        {"tool": "search_music", "arguments": {"query": "Slow Bloom"}},
        {"tool": "like_track", "arguments": {"track_id": "trk-3"}},
        {"tool": "play_track", "arguments": {"track_id": "trk-3"}},
        {"tool": "Finish", "arguments": {}},
    ]
    preds = pytester.path / "p.jsonl"
    preds.write_text(
        json.dumps(
            {"instance_id": "med-like-song", "model_name_or_path": "m", "trajectories": [good, good[:1] + good[2:]]}
        )
        + "\n"
    )
    reports = pytester.path / "reports"
    res = pytester.runpytest_inprocess(
        "cases",
        "-k",
        "med-like-song",
        f"--predictions={preds}",
        "--mb-repeat=2",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
    )
    res.assert_outcomes(failed=1)
    table = json.loads((reports / "latest" / "summary.json").read_text())["suite_tables"]["planner"]["by_model"]["m"]
    assert table["repeats"] == 2 and table["pass_1"] == 0.5 and table["pass_k"]["passed"] == 0
    preds.write_text(json.dumps({"instance_id": "med-like-song", "model_name_or_path": "m", "trajectory": good}) + "\n")
    res = pytester.runpytest_inprocess(
        "cases",
        "-k",
        "med-like-song",
        f"--predictions={preds}",
        "--mb-repeat=2",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
    )
    res.assert_outcomes(failed=1)
    result = json.loads((reports / "latest" / "summary.json").read_text())["instances"]["med-like-song"]
    assert result["reason"] == "invalid_prediction" and "trajectories" in result["detail"]
