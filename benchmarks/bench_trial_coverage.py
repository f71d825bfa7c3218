"""Coverage of the trials' intervals on generated data with known pass rates (issue 34; docs/statistics.md).

Each simulated run draws ``--instances`` instance pass rates from a Beta(a, b) population (true pass@1: its mean
a / (a + b)), then ``--trials`` Bernoulli trials per instance, and computes three 95% intervals of pass@1:

* ``hierarchical``: :func:`pytest_mobilebench.stats.trials.hierarchical_bootstrap` (instances, then trials), the
  interval the summary reports;
* ``instances only``: the bootstrap over instances alone (:func:`pytest_mobilebench.stats.trials.task_bootstrap`
  of the per-instance pass fractions);
* ``Wilson pooled``: Wilson's interval over all trials as if independent (reported beside the first).

It prints, per scenario, the share of runs whose interval covers the truth (the target: at least the nominal
0.95 for ``hierarchical``, within the Monte-Carlo error of about +-0.014 at 1,000 runs) and the mean width.
Seeded: the same arguments print the same figures.

Usage: ``python benchmarks/bench_trial_coverage.py [--runs 1000] [--resamples 1000] [--seed 34]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.stats.trials import hierarchical_bootstrap, task_bootstrap

#: (label, instances, trials, Beta a, Beta b): spread between instances from wide (0.5, 0.5) to narrow (20, 30)
SCENARIOS = (
    ("30 x 3, Beta(2, 3)", 30, 3, 2.0, 3.0),
    ("50 x 5, Beta(0.5, 0.5)", 50, 5, 0.5, 0.5),
    ("20 x 10, Beta(20, 30)", 20, 10, 20.0, 30.0),
    ("100 x 1, Beta(1, 4)", 100, 1, 1.0, 4.0),
)


def simulate(
    instances: int, trials: int, a: float, b: float, runs: int, resamples: int, seed: int
) -> dict[str, tuple[float, float]]:
    """``{method: (coverage, mean width)}`` over ``runs`` seeded simulated runs."""
    rng = np.random.default_rng(seed)
    truth = a / (a + b)
    hits = {"hierarchical": 0, "instances only": 0, "Wilson pooled": 0}
    widths = {name: 0.0 for name in hits}
    for run in range(runs):
        rates = rng.beta(a, b, size=instances)
        outcomes = rng.random((instances, trials)) < rates[:, None]
        found = {
            "hierarchical": hierarchical_bootstrap(outcomes.tolist(), resamples=resamples, seed=seed + run),
            "instances only": task_bootstrap(outcomes.mean(axis=1).tolist(), resamples=resamples, seed=seed + run),
            "Wilson pooled": wilson_interval(int(outcomes.sum()), outcomes.size),
        }
        for name, (lo, hi) in found.items():
            hits[name] += lo <= truth <= hi
            widths[name] += hi - lo
    return {name: (hits[name] / runs, widths[name] / runs) for name in hits}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args()
    print(f"95% intervals of pass@1, {args.runs} runs per scenario, {args.resamples} resamples, seed {args.seed}")
    print(f"{'scenario':26} {'method':15} {'coverage':>8} {'width':>7}")
    started = time.monotonic()
    for label, instances, trials, a, b in SCENARIOS:
        for name, (coverage, width) in simulate(instances, trials, a, b, args.runs, args.resamples, args.seed).items():
            print(f"{label:26} {name:15} {coverage:8.3f} {width:7.3f}")
    print(f"{time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
