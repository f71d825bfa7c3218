"""Repeated trials: the pure aggregation (pass@1, tau-bench's pass^k, flips, intervals) and ``--mb-trials`` on
recorded trials through the plugin."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from pytest_mobilebench.stats.trials import pass_hat_k, trial_summary

ROOT = Path(__file__).resolve().parent.parent


def test_pass_hat_k_is_the_chance_that_k_drawn_trials_all_pass() -> None:
    assert pass_hat_k(4, 4, 4) == 1.0 and pass_hat_k(3, 4, 4) == 0.0
    assert pass_hat_k(3, 4, 1) == 0.75
    assert pass_hat_k(3, 4, 2) == pytest.approx(3 / 6)  # C(3,2)/C(4,2)
    for bad in [(5, 4, 1), (2, 4, 0), (2, 4, 5), (2, 4, True)]:
        with pytest.raises(ValueError):
            pass_hat_k(*bad)


def test_trial_summary_reports_pass_1_pass_k_and_flips() -> None:
    outcomes = {"a": [True, True, True], "b": [True, False, True], "c": [False, False, False], "d": [False, True, True]}
    s = trial_summary(outcomes)
    assert s["tasks"] == 4 and s["trials"] == 3
    assert s["pass_1"]["value"] == pytest.approx((1 + 2 / 3 + 0 + 2 / 3) / 4, abs=1e-6)
    assert s["pass_hat_k"]["3"]["value"] == 0.25 and s["all_pass"]["passed"] == 1
    assert s["pass_hat_k"]["2"]["value"] == pytest.approx((1 + 1 / 3 + 0 + 1 / 3) / 4, abs=1e-6)
    assert {t: v["flips"] for t, v in s["per_task"].items()} == {"a": 0, "b": 2, "c": 0, "d": 1}
    assert s["flaky"]["passed"] == 2
    for k in ("1", "2", "3"):
        lo, hi = s["pass_hat_k"][k]["ci95"]
        assert 0.0 <= lo <= s["pass_hat_k"][k]["value"] <= hi <= 1.0 and hi > lo
    assert trial_summary(outcomes) == s  # deterministic
    json.dumps(s)  # plain builtins


def test_trial_summary_edge_cases() -> None:
    stable = trial_summary({f"t{i}": [True] * 5 for i in range(10)})
    assert (stable["pass_1"]["value"], stable["pass_1"]["ci95"]) == (1.0, [1.0, 1.0]) and stable["flaky"]["passed"] == 0
    assert math.isclose(stable["all_pass"]["ci95"][1], 1.0)
    assert trial_summary({})["pass_1"]["value"] is None
    mixed = trial_summary({"a": [True, True, True], "b": [False]})
    assert mixed["trials"] == 1 and mixed["trial_counts"] == [1, 3] and list(mixed["pass_hat_k"]) == ["1"]
    with pytest.raises(ValueError, match="without trials"):
        trial_summary({"a": []})


def _run(pytester: pytest.Pytester, preds: Path, *extra: str) -> tuple[pytest.RunResult, dict]:
    reports = pytester.path / "reports"
    res = pytester.runpytest_inprocess(
        "cases",
        "-k",
        "med-like-song or med-pause-invalid",
        f"--predictions={preds}",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
        *extra,
    )
    summary = json.loads((reports / "latest" / "summary.json").read_text())
    return res, summary


def test_mb_trials_with_recorded_trials(pytester: pytest.Pytester) -> None:
    cases = pytester.mkdir("cases")
    shutil.copy(ROOT / "cases" / "planner" / "media.yaml", cases / "media.yaml")
    like = [
        {"tool": "search_music", "arguments": {"query": "Slow Bloom"}},
        {"tool": "like_track", "arguments": {"track_id": "trk-3"}},
        {"tool": "play_track", "arguments": {"track_id": "trk-3"}},
        {"tool": "Finish", "arguments": {}},
    ]
    pause = [
        {"tool": "pause_music", "arguments": {}},
        {"tool": "Finish", "arguments": {"answer": "Nothing is playing right now."}},
    ]
    hedge = [pause[0], {"tool": "Finish", "arguments": {"answer": "Nothing is playing, or I paused the music."}}]
    preds = pytester.path / "p.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"instance_id": i, "model_name_or_path": "m", "trajectories": t}) + "\n"
            for i, t in [("med-like-song", [like, like, like]), ("med-pause-invalid", [pause, hedge, pause])]
        )
    )
    res, summary = _run(pytester, preds, "--mb-trials=3")
    res.assert_outcomes(passed=1, failed=1)
    trials = summary["suite_tables"]["planner"]["by_model"]["m"]["trials"]
    assert trials["trials"] == 3 and trials["all_pass"]["passed"] == 1
    assert trials["pass_1"]["value"] == pytest.approx((1 + 2 / 3) / 2, abs=1e-6)
    assert trials["per_task"]["med-pause-invalid"] == {
        "trials": 3,
        "passes": 2,
        "flips": 2,
        "pass_1": 0.666667,
        "pass_at_k": {"1": 0.666667, "2": 1.0, "3": 1.0},
        "pass_hat_k": {"1": 0.666667, "2": 0.333333, "3": 0.0},
    }
    _, again = _run(pytester, preds)  # without the option: as many trials as recorded
    assert again["suite_tables"]["planner"]["by_model"]["m"]["trials"]["trials"] == 3
    res, wrong = _run(pytester, preds, "--mb-trials=2", "--mb-rerun")
    res.assert_outcomes(failed=2)
    assert wrong["instances"]["med-like-song"]["reason"] == "invalid_prediction"
    assert "2 trials" in wrong["instances"]["med-like-song"]["detail"]


def test_mb_trials_must_be_positive(pytester: pytest.Pytester) -> None:
    pytester.mkdir("cases")
    res = pytester.runpytest_inprocess("cases", "--predictions=gold", "--mb-trials=0", "-p", "no:cacheprovider")
    assert res.ret != 0
    assert "mb-trials" in res.stderr.str()
