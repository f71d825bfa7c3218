"""Repeated-trial statistics (pytest_mobilebench.stats.trials): pass@k against brute-force enumeration, pass^k,
the hierarchical bootstrap (seeded, both stages, coverage on generated data), the variance shares, and the trial
table of every suite that repeats an item (summary, models/<model>.json, terminal)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mobilebench.report.summary import build_summary, model_report, suite_tables
from pytest_mobilebench.report.terminal import headline_lines, trial_lines
from pytest_mobilebench.report.trials import bootstrap_options, suite_trials
from pytest_mobilebench.stats.trials import (
    hierarchical_bootstrap,
    pass_at_k,
    pass_hat_k,
    task_bootstrap,
    trial_summary,
    variance_shares,
)

ROOT = Path(__file__).resolve().parents[1]


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_and_pass_hat_k_are_the_shares_of_k_subsets_with_a_pass_and_with_all_passing(case) -> None:
    n, c, k = case
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(trials, k))
    assert pass_at_k(c, n, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(c, n, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_pass_at_k_refuses_what_is_not_a_count() -> None:
    for bad in ((3, 2, 1), (1, 2, 0), (1, 2, 3), (True, 2, 1)):
        with pytest.raises(ValueError):
            pass_at_k(*bad)


def test_the_hierarchical_bootstrap_is_seeded_and_resamples_trials_too() -> None:
    runs = [[True, False, True, False]] * 30  # every instance the same: only the trials vary
    lo, hi = hierarchical_bootstrap(runs, resamples=500, seed=1)
    assert hierarchical_bootstrap(runs, resamples=500, seed=1) == (lo, hi)
    assert lo < 0.5 < hi and hi - lo > 0.05  # the second stage: trials resampled within each instance
    assert task_bootstrap([0.5] * 30, resamples=500) == (0.5, 0.5)  # the first stage alone sees nothing
    stable = [[True] * 3] * 10 + [[False] * 3] * 10  # only the instances vary: the first stage's interval
    assert hierarchical_bootstrap(stable, resamples=500, seed=2) == task_bootstrap(
        [1.0] * 10 + [0.0] * 10, resamples=500, seed=2
    )
    assert hierarchical_bootstrap([], resamples=10) == (0.0, 1.0)
    with pytest.raises(ValueError, match="resamples"):
        hierarchical_bootstrap(runs, resamples=0)
    with pytest.raises(ValueError, match="without trials"):
        hierarchical_bootstrap([[True], []])


def test_the_hierarchical_interval_covers_the_truth_at_its_nominal_rate() -> None:
    """Generated data: instance rates drawn from Beta(2, 3) (true mean 0.4), K = 3 Bernoulli trials each, 30
    instances; 300 seeded runs (benchmarks/bench_trial_coverage.py runs 1,000). Wilson's interval over the pooled
    trials ignores the instances' spread and covers less often."""
    rng = np.random.default_rng(34)
    covered = wilson_covered = 0
    runs = 300
    for run in range(runs):
        rates = rng.beta(2, 3, size=30)
        outcomes = (rng.random((30, 3)) < rates[:, None]).tolist()
        lo, hi = hierarchical_bootstrap(outcomes, resamples=400, seed=run)
        covered += lo <= 0.4 <= hi
        s = trial_summary({str(i): o for i, o in enumerate(outcomes)}, resamples=10, seed=run)
        wilson_covered += s["pass_1"]["wilson95"][0] <= 0.4 <= s["pass_1"]["wilson95"][1]
    assert 0.92 <= covered / runs <= 0.995, covered / runs
    assert wilson_covered < covered


def test_variance_shares_split_instances_from_trials() -> None:
    apart = variance_shares([[True] * 4] * 5 + [[False] * 4] * 5)  # instances differ, trials never
    assert apart["share_tasks"] == 1.0 and apart["share_trials"] == 0.0 and apart["between_trials"] == 0.0
    coin = variance_shares([[True, False, True, False]] * 10)  # every instance a coin: all within
    assert coin["share_tasks"] == 0.0 and coin["share_trials"] == 1.0 and coin["between_trials"] == pytest.approx(1 / 3)
    rng = np.random.default_rng(7)  # a known split: rates 0.2 / 0.8 half and half, 20 trials each
    rates = np.repeat([0.2, 0.8], 200)
    mixed = variance_shares((rng.random((400, 20)) < rates[:, None]).tolist())
    # between = var(rates) = 0.09, within = E[p(1-p)] = 0.16: share 0.09 / 0.25 = 0.36
    assert mixed["share_tasks"] == pytest.approx(0.36, abs=0.03)
    assert variance_shares([[True, False]])["share_tasks"] is None  # one instance: nothing to split
    assert variance_shares([[True], [False]])["share_tasks"] is None  # no instance with two trials


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,4}", fullmatch=True),
        st.lists(st.booleans(), min_size=1, max_size=5),
        min_size=1,
        max_size=6,
    )
)
def test_trial_summary_means_the_per_instance_estimates(outcomes) -> None:
    s = trial_summary(outcomes, resamples=50)
    for k in map(int, s["pass_at_k"]):
        want = sum(pass_at_k(sum(o), len(o), k) for o in outcomes.values()) / len(outcomes)
        assert s["pass_at_k"][str(k)]["value"] == pytest.approx(want, abs=1e-6)
        assert s["pass_at_k"][str(k)]["value"] >= s["pass_hat_k"][str(k)]["value"]
    for iid, o in outcomes.items():
        own = s["per_task"][iid]
        assert own["pass_1"] == pytest.approx(sum(o) / len(o), abs=1e-6) and list(own["pass_at_k"]) == [
            str(k) for k in range(1, len(o) + 1)
        ]
    assert [f["instance_id"] for f in s["flips"]] == sorted(i for i, o in outcomes.items() if len(set(o)) > 1)
    assert s["bootstrap"] == {"resamples": 50, "seed": 0, "level": 0.95}
    json.dumps(s)


class _NoTrialsSuite:
    """A suite whose own table knows nothing of trials (as app generation and device repair)."""

    def summarize(self, results, *, options=None):
        return {"headline": {"label": "Pass@1", "numerator": 0, "denominator": len(results), "value": None}}


def _rows(suite: str = "device_repair") -> list[dict]:
    outcome = {"a": [True, True, True], "b": [True, False, False], "c": [False, False, False]}
    rows = [
        {
            "instance_id": iid,
            "model_name_or_path": model,
            "suite": suite,
            "trial": t + 1,
            "passed": p,
            "reason": "passed" if p else "failed",
        }
        for model in ("m1", "m2")
        for iid, o in outcome.items()
        for t, p in enumerate(o)
    ]
    return rows + [
        {
            "instance_id": "a",
            "model_name_or_path": "m1",
            "suite": suite,
            "trial": 4,
            "passed": False,
            "reason": "infra_error",
            "retryable": True,
        }
    ]


def test_every_suite_with_trial_rows_gets_the_trial_table_in_the_summary_model_files_and_terminal() -> None:
    rows = _rows()
    options = {"mb_bootstrap_resamples": 200, "mb_bootstrap_seed": 3}
    assert bootstrap_options(options) == {"resamples": 200, "seed": 3} and bootstrap_options(None)["resamples"] == 1000
    tables, per_model = suite_tables(rows, {"device_repair": _NoTrialsSuite()}, options)
    own = tables["device_repair"]["trials"]["m1"]
    assert own["tasks"] == 3 and own["trials"] == 3 and own["infra_trials"] == 1 and own["bootstrap"]["seed"] == 3
    assert own["pass_1"]["value"] == pytest.approx((1 + 1 / 3 + 0) / 3, abs=1e-6)
    assert own["pass_at_k"]["3"]["value"] == pytest.approx(2 / 3, abs=1e-6)
    assert own["flips"] == [
        {"instance_id": "b", "passes": 1, "trials": 3, "verdicts": {"t1": "passed", "t2": "failed", "t3": "failed"}}
    ]
    assert per_model["device_repair"]["m2"]["trials"].keys() == {"m2"}
    summary = build_summary(rows, run_id="r", suite_tables=tables, model_tables=per_model)
    assert suite_trials(summary)["device_repair"]["m1"] == own
    report = model_report(summary, "m1")
    assert report["trials"]["device_repair"] == own
    assert {"a[t1]", "a[t2]", "a[t3]", "a[t4]", "b[t1]"} <= set(report["instances"])  # no trial hides another
    lines = trial_lines(summary)
    assert lines[0].startswith("trials of device_repair (m1): 3 x 3: pass@1 0.444 [95% CI ")
    assert "Wilson" in lines[0] and lines[1].startswith("  pass@3 0.667 | pass^3 0.333 | variance: instances ")
    assert lines[1].endswith("| flips 1/3") and all(len(x) < 120 for x in lines)
    assert set(lines) <= set(headline_lines(summary))


def test_results_without_trial_add_no_trial_table() -> None:
    rows = [{k: v for k, v in r.items() if k != "trial"} for r in _rows()[:3]]
    tables, _ = suite_tables(rows, {"device_repair": _NoTrialsSuite()})
    assert "trials" not in tables["device_repair"] and trial_lines({"suite_tables": tables}) == []
    assert math.isclose(trial_summary({"a": [True]})["pass_1"]["value"], 1.0)


@pytest.mark.parametrize("manifest", ["device_repair/mobilebench__calc.yaml", "app_generation/tabs_demo.yaml"])
def test_live_trials_are_one_item_each_in_device_repair_and_app_generation(
    pytester: pytest.Pytester, manifest: str
) -> None:
    path = str(ROOT / "cases" / manifest)
    common = (
        "--predictions=live",
        "--mb-agent-base-url=http://127.0.0.1:9/v1",
        "--mb-agent-model=m",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
    )
    single = [x.split("::")[-1] for x in pytester.runpytest(path, *common).outlines if "::" in x]
    trials = [x.split("::")[-1] for x in pytester.runpytest(path, *common, "--mb-trials=2").outlines if "::" in x]
    assert single and trials == [f"{name}[t{t}]" for name in single for t in (1, 2)]


def test_junit_carries_each_suites_trial_figures_planner_included() -> None:
    from pytest_mobilebench.report.junit import junit_properties

    rows = _rows()
    tables, per_model = suite_tables(rows, {"device_repair": _NoTrialsSuite()})
    summary = build_summary(rows, run_id="r", suite_tables=tables, model_tables=per_model)
    props = dict(junit_properties(summary))
    assert props["mobilebench.device_repair.m1.trials.pass_at_3"] == "0.666667"
    assert props["mobilebench.device_repair.m1.trials.pass_1_wilson95_low"] == str(
        tables["device_repair"]["trials"]["m1"]["pass_1"]["wilson95"][0]
    )
    assert props["mobilebench.device_repair.m1.trials.flips"] == "b"
    planner = {"by_model": {"m": {"trials": trial_summary({"t": [True, False]}, resamples=20)}}}
    summary["suite_tables"]["planner"] = planner
    summary["headlines"]["planner"] = summary["headlines"]["device_repair"]
    props = dict(junit_properties(summary))
    assert (
        props["mobilebench.planner.m.trials.infra_trials"] == "0" and props["mobilebench.planner.m.trials.flips"] == "t"
    )
