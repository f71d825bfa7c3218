"""Difficulty and ability (pytest_mobilebench.stats.irt, compare --irt): the fits recover known parameters from
generated data (seeded; tolerances stated in each test), flag instances no model or every model solves, and
reach the command line, its JSON and page, the run summary and the run page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_mobilebench.report.irt import irt_section, irt_table, irt_text
from pytest_mobilebench.stats.irt import IrtError, fit, irt_from_outcomes


def _generate(seed: int, models: int, instances: int, trials: int, log_a_sd: float):
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1, models), rng.normal(0, 1, instances)
    a = np.exp(rng.normal(0, log_a_sd, instances))
    p = 1 / (1 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    return theta, b, a, rng.binomial(trials, p), np.full((models, instances), trials)


def _estimates(result: dict, key: str = "difficulty") -> tuple[np.ndarray, np.ndarray]:
    theta = np.array([v["estimate"] for v in result["abilities"].values()])
    return theta, np.array([v[key]["estimate"] for v in result["instances"].values()])


def _rmse(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((x - y) ** 2)))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_two_parameter_fit_recovers_known_abilities_difficulties_and_discriminations(seed: int) -> None:
    """60 models x 100 instances x 2 trials. Tolerances: ability correlation >= 0.97 and RMSE <= 0.25; difficulty
    correlation >= 0.9 and RMSE <= 0.45; discrimination correlation >= 0.7; ability intervals cover >= 85% (nominal 95%,
    60 abilities)."""
    theta, b, a, s, n = _generate(seed, 60, 100, 2, 0.5)
    result = fit(s, n, two_parameter=True)
    assert result["model"] == "2PL" and result["converged"]
    theta_hat, b_hat = _estimates(result)
    a_hat = np.array([v["discrimination"]["estimate"] for v in result["instances"].values()])
    assert np.corrcoef(theta_hat, theta)[0, 1] >= 0.97 and _rmse(theta_hat, theta) <= 0.25
    assert np.corrcoef(b_hat, b)[0, 1] >= 0.9 and _rmse(b_hat, b) <= 0.45
    assert np.corrcoef(a_hat, a)[0, 1] >= 0.7
    covered = [lo <= t <= hi for t, (lo, hi) in zip(theta, (v["ci95"] for v in result["abilities"].values()))]
    assert np.mean(covered) >= 0.85
    for own in result["instances"].values():
        lo, hi = own["discrimination"]["ci95"]
        assert 0 < lo <= own["discrimination"]["estimate"] <= hi


def test_the_rasch_fit_recovers_known_parameters_from_few_models_with_many_trials() -> None:
    """The usual benchmark shape: 8 models x 150 instances x 5 trials, Rasch data (a = 1). Tolerances: ability
    correlation >= 0.98, RMSE <= 0.3; difficulty correlation >= 0.9."""
    theta, b, _a, s, n = _generate(7, 8, 150, 5, 0.0)
    result = fit(s, n)
    assert result["model"] == "1PL" and result["converged"] and "discrimination" not in result["instances"]["i0"]
    theta_hat, b_hat = _estimates(result)
    assert np.corrcoef(theta_hat, theta)[0, 1] >= 0.98 and _rmse(theta_hat, theta) <= 0.3
    assert np.corrcoef(b_hat, b)[0, 1] >= 0.9


def test_instances_no_model_or_every_model_solves_are_flagged_and_stay_finite() -> None:
    outcomes = {
        "strong": {"easy": [True, True], "mid": [True, False], "hard": [False, False], "gone": None},
        "middle": {"easy": [True, True], "mid": [False, True], "hard": [False, False], "gone": [None]},
        "weak": {"easy": [True, None], "mid": [False, False], "hard": [False, False]},
    }
    irt = irt_from_outcomes(outcomes)
    assert irt["models"] == ["middle", "strong", "weak"] and irt["instances"] == 3 and irt["left_out"] == 1
    assert irt["none_solved"] == ["hard"] and irt["all_solved"] == ["easy"]
    for key in ("one_pl", "two_pl"):
        b = {iid: v["difficulty"]["estimate"] for iid, v in irt[key]["instances"].items()}
        assert b["easy"] < b["mid"] < b["hard"] and all(np.isfinite(list(b.values())))
        ability = {m: v["estimate"] for m, v in irt[key]["abilities"].items()}
        assert ability["weak"] < ability["middle"] == pytest.approx(ability["strong"], abs=1e-3)
    text = irt_text(irt)
    assert "no model solves: 1: hard" in text and "every model solves: 1: easy" in text
    page = irt_section(irt | {"models": irt["models"]})
    assert "Difficulty and ability" in page and "hard" in page
    json.dumps(irt)
    with pytest.raises(IrtError, match="three or more models"):
        irt_from_outcomes({"a": {"i": [True]}, "b": {"i": [False]}})
    with pytest.raises(IrtError, match="no instance was evaluated by all 3"):
        irt_from_outcomes({"a": {"i": [True]}, "b": {"j": [False]}, "c": {"i": [None]}})


def test_a_run_with_three_models_has_the_fit_in_its_suite_table_and_page() -> None:
    rows = [
        {"instance_id": f"i{i}", "model_name_or_path": m, "passed": i < cut, "reason": "x", "suite": "s"}
        for m, cut in (("m1", 2), ("m2", 4), ("m3", 6))
        for i in range(8)
    ]
    irt = irt_table(rows)
    assert irt is not None and irt["none_solved"] == ["i6", "i7"] and irt["all_solved"] == ["i0", "i1"]
    assert irt_table(rows[:16]) is None  # two models: nothing to fit
    from pytest_mobilebench.report.summary import suite_tables

    class Suite:
        def summarize(self, results, *, options=None):
            return {"headline": {}}

    tables, _ = suite_tables(rows, {"s": Suite()})
    assert tables["s"]["irt"]["all_solved"] == ["i0", "i1"]


def _summary(path: Path, model: str, solved: int, total: int = 12) -> Path:
    instances = {
        f"i{i:02d}": {
            "instance_id": f"i{i:02d}",
            "model_name_or_path": model,
            "passed": i < solved,
            "reason": "resolved" if i < solved else "unresolved",
        }
        for i in range(total)
    }
    path.write_text(json.dumps({"run_id": "r", "models": [model], "instances": instances}), encoding="utf-8")
    return path


@pytest.mark.e2e
def test_compare_irt_on_the_command_line_writes_the_json_and_the_page(tmp_path: Path) -> None:
    paths = [_summary(tmp_path / f"{m}.json", m, k) for m, k in (("alpha", 3), ("beta", 6), ("gamma", 9))]
    out, page = tmp_path / "cmp.json", tmp_path / "cmp.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_mobilebench",
            "compare",
            *map(str, paths),
            "--irt",
            "--json",
            str(out),
            "--html",
            str(page),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "item-response fit over 12 instance(s) all 3 models evaluated" in proc.stdout
    irt = json.loads(out.read_text())["irt"]
    assert irt["none_solved"] == ["i09", "i10", "i11"] and irt["all_solved"] == ["i00", "i01", "i02"]
    one = irt["one_pl"]["abilities"]
    assert one["alpha"]["estimate"] < one["beta"]["estimate"] < one["gamma"]["estimate"]
    assert "Difficulty and ability" in page.read_text()
    two = subprocess.run(
        [sys.executable, "-m", "pytest_mobilebench", "compare", *map(str, paths[:2]), "--irt"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert two.returncode == 2 and "three or more models" in two.stderr
