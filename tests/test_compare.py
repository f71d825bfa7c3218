"""Paired model comparison: exact McNemar against hand calculations, from real summary-shaped files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mobilebench.compare import CompareError, compare, load_outcomes
from pytest_mobilebench.metrics import mcnemar_exact


def _summary(path: Path, model: str, outcomes: dict[str, str]) -> Path:
    """A summary in the plugin's shape: one model, instances keyed by id, reason + passed per instance."""
    instances = {
        iid: {"instance_id": iid, "model_name_or_path": model, "reason": reason, "passed": reason == "resolved"}
        for iid, reason in outcomes.items()
    }
    path.write_text(json.dumps({"run_id": "r", "models": [model], "instances": instances}), encoding="utf-8")
    return path


# A resolves i1 only alone; B resolves i2..i7 alone; both resolve i8, i9; neither i10; i11 is an infra error of B.
A = {f"i{n}": "resolved" if n in (1, 8, 9, 11) else "unresolved" for n in range(1, 12)}
B = {f"i{n}": "resolved" if n in range(2, 10) else "unresolved" for n in range(1, 11)} | {"i11": "infra_error"}


def test_mcnemar_hand_calculated() -> None:
    # b=1, c=6, n=7: p = 2 * (C(7,0) + C(7,1)) / 2^7 = 2 * 8 / 128 = 0.125
    assert mcnemar_exact(1, 6) == 0.125
    # b=2, c=8, n=10: p = 2 * (1 + 10 + 45) / 1024 = 0.109375
    assert mcnemar_exact(8, 2) == 0.109375
    # b=c: the tail holds more than half the mass, p is capped at 1
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    # b=0, c=5: p = 2 / 32
    assert mcnemar_exact(0, 5) == 0.0625
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_compare_two_summaries(tmp_path: Path) -> None:
    paths = [_summary(tmp_path / "a.json", "model-a", A), _summary(tmp_path / "b.json", "model-b", B)]
    report = compare(load_outcomes(paths))
    (pair,) = report["pairs"]
    assert (pair["a"], pair["b"]) == ("model-a", "model-b")
    assert pair["instances"] == 10  # i11 left out: B's infra error says nothing about B
    assert pair["excluded_infra"] == ["i11"]
    assert (pair["resolved_a"], pair["resolved_b"], pair["both_resolved"], pair["neither_resolved"]) == (3, 8, 2, 1)
    assert pair["only_a"] == ["i1"]
    assert pair["only_b"] == ["i2", "i3", "i4", "i5", "i6", "i7"]
    assert pair["mcnemar_p"] == 0.125


@pytest.mark.e2e
def test_command_line(tmp_path: Path) -> None:
    paths = [_summary(tmp_path / "a.json", "model-a", A), _summary(tmp_path / "b.json", "model-b", B)]
    out = tmp_path / "cmp.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_mobilebench", "compare", *map(str, paths), "--json", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "exact McNemar p = 0.125" in proc.stdout
    assert json.loads(out.read_text())["pairs"][0]["mcnemar_p"] == 0.125


def test_conflicting_outcomes_are_an_error_naming_both_files(tmp_path: Path) -> None:
    first = _summary(tmp_path / "one.json", "m", {"i1": "resolved"})
    second = _summary(tmp_path / "two.json", "m", {"i1": "unresolved"})
    with pytest.raises(CompareError, match="two.json.*one.json"):
        load_outcomes([first, second])


@pytest.mark.e2e
def test_not_a_summary(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_mobilebench", "compare", str(bad)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and "not a run summary" in proc.stderr


def test_compare_results_of_one_run() -> None:
    from pytest_mobilebench.compare import compare_results

    results = [
        {"instance_id": iid, "model_name_or_path": "model-a", "reason": r, "passed": r == "resolved"}
        for iid, r in A.items()
    ]
    results += [
        {
            "instance_id": iid,
            "model_name_or_path": "model-b",
            "reason": r,
            "passed": r == "resolved",
            "retryable": r == "infra_error",
        }
        for iid, r in B.items()
    ]
    (pair,) = compare_results(results)["pairs"]
    assert pair["mcnemar_p"] == 0.125 and pair["excluded_infra"] == ["i11"]


def _trial_summary(path: Path, model: str, outcomes: dict[str, list[bool | None]]) -> Path:
    """A trial run's summary: instances keyed ``<id>[t<k>]``, each entry with its ``trial``."""
    instances = {
        f"{iid}[t{t}]": {
            "instance_id": iid,
            "model_name_or_path": model,
            "trial": t,
            "passed": bool(ok),
            "reason": "infra_error" if ok is None else ("resolved" if ok else "unresolved"),
        }
        for iid, trials in outcomes.items()
        for t, ok in enumerate(trials, 1)
    }
    path.write_text(json.dumps({"run_id": "r", "models": [model], "instances": instances}), encoding="utf-8")
    return path


@pytest.mark.e2e
def test_trial_runs_get_a_paired_bootstrap_difference_and_no_mcnemar(tmp_path: Path) -> None:
    strong = {f"i{n}": [True, True, n % 3 != 0] for n in range(30)} | {"flaky": [None, True, False]}
    weak = {f"i{n}": [n % 2 == 0, False, n % 5 == 0] for n in range(30)} | {"flaky": [None, None, None]}
    paths = [_trial_summary(tmp_path / "a.json", "a", strong), _trial_summary(tmp_path / "b.json", "b", weak)]
    outcomes = load_outcomes(paths)
    assert outcomes["a"]["i3"] == [True, True, False] and outcomes["b"]["flaky"] == [None, None, None]
    (pair,) = compare(outcomes, resamples=500, seed=1)["pairs"]
    assert pair["trials"] is True and pair["mcnemar_p"] is None and pair["resolved_a"] is None
    assert pair["instances"] == 30 and pair["excluded_infra"] == ["flaky"]  # b has no eligible trial there
    boot = pair["paired_bootstrap"]
    want_a = sum(sum(t) / 3 for iid, t in strong.items() if iid != "flaky") / 30
    want_b = sum(sum(t) / 3 for iid, t in weak.items() if iid != "flaky") / 30
    assert boot["pass_1_a"] == pytest.approx(want_a, abs=1e-6) and boot["pass_1_b"] == pytest.approx(want_b, abs=1e-6)
    assert boot["difference"] == pytest.approx(want_a - want_b, abs=1e-6)
    assert 0.0 < boot["ci95"][0] < boot["difference"] < boot["ci95"][1]  # A is better, and the interval says so
    assert compare(outcomes, resamples=500, seed=1)["pairs"][0] == pair  # seeded
    assert "i1" in pair["only_a"] and "i0" not in pair["only_a"] and not pair["only_b"]  # i0: 2/3 each
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_mobilebench", "compare", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "paired bootstrap A - B = +" in proc.stdout and "McNemar needs single trials" in proc.stdout


def test_single_trials_keep_mcnemar_and_add_the_paired_bootstrap(tmp_path: Path) -> None:
    paths = [_summary(tmp_path / "a.json", "model-a", A), _summary(tmp_path / "b.json", "model-b", B)]
    (pair,) = compare(load_outcomes(paths))["pairs"]
    assert pair["mcnemar_p"] == 0.125 and pair["trials"] is False
    boot = pair["paired_bootstrap"]
    assert (boot["pass_1_a"], boot["pass_1_b"], boot["difference"]) == (0.3, 0.8, -0.5)
    assert boot["ci95"][0] < -0.5 < boot["ci95"][1] and boot["resamples"] == 1000


def test_a_paired_bootstrap_of_two_equal_models_covers_zero_at_its_nominal_rate() -> None:
    """Generated data: both models draw their trials from the same instance rates; the interval of the
    difference should hold 0 in about 95% of 200 seeded runs."""
    import numpy as np

    from pytest_mobilebench.stats.paired import paired_bootstrap

    rng = np.random.default_rng(5)
    held = 0
    for run in range(200):
        rates = rng.beta(1, 1, size=25)[:, None]
        a, b = (rng.random((25, 3)) < rates).tolist(), (rng.random((25, 3)) < rates).tolist()
        lo, hi = paired_bootstrap(a, b, resamples=300, seed=run)["ci95"]
        held += lo <= 0 <= hi
    assert 0.92 <= held / 200 <= 1.0, held / 200
    with pytest.raises(ValueError, match="pairs must match"):
        paired_bootstrap([[True]], [])


def test_k_runs_inside_one_item_are_trials_to_compare(tmp_path: Path) -> None:
    """The planner's --mb-trials: one item holds K runs (``trial_outcomes``); its verdict is pass^K, the
    comparison uses every run."""
    from pytest_mobilebench.compare import compare_results

    def entry(iid: str, model: str, runs: list[bool]) -> dict:
        return {
            "instance_id": iid,
            "model_name_or_path": model,
            "passed": all(runs),
            "reason": "passed" if all(runs) else "failed",
            "trial_outcomes": runs,
        }

    a = [entry(f"t{n}", "a", [True, False, True]) for n in range(20)]
    b = [entry(f"t{n}", "b", [False, False, False]) for n in range(20)]
    (pair,) = compare_results(a + b, resamples=200)["pairs"]
    assert pair["trials"] is True and pair["paired_bootstrap"]["difference"] == pytest.approx(2 / 3, abs=1e-6)
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"instances": {f"{e['instance_id']}@{e['model_name_or_path']}": e for e in a + b}}))
    assert load_outcomes([path])["a"]["t0"] == [True, False, True]
    infra = {**a[0], "reason": "infra_error", "retryable": True}
    assert compare_results([infra, b[0]])["pairs"][0]["excluded_infra"] == ["t0"]
