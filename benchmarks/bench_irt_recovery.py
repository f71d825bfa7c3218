"""Recovery of known item-response parameters by ``compare --irt``'s fit (issue 34; docs/statistics.md).

Generates outcomes from a two-parameter logistic model with known abilities (N(0, 1)), difficulties (N(0, 1))
and discriminations (exp N(0, 0.5^2)), fits the 1PL and the 2PL (:func:`pytest_mobilebench.stats.irt.fit`) and
prints, per shape (models x instances x trials) and seed, the correlation and RMSE of each recovered parameter
with the truth and the share of true abilities inside their 95% intervals. Seeded.

Usage: ``python benchmarks/bench_irt_recovery.py [--seeds 3]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pytest_mobilebench.stats.irt import fit

#: (models, instances, trials): many models; the usual few models with many trials
SHAPES = ((60, 100, 2), (30, 120, 3), (8, 150, 5))


def _line(name: str, result: dict, theta: np.ndarray, b: np.ndarray, a: np.ndarray) -> str:
    th = np.array([v["estimate"] for v in result["abilities"].values()])
    bh = np.array([v["difficulty"]["estimate"] for v in result["instances"].values()])
    cover = np.mean([lo <= t <= hi for t, (lo, hi) in zip(theta, (v["ci95"] for v in result["abilities"].values()))])
    out = (
        f"{name} ability r {np.corrcoef(th, theta)[0, 1]:.3f} rmse {np.sqrt(np.mean((th - theta) ** 2)):.3f} "
        f"covered {cover:.2f} | difficulty r {np.corrcoef(bh, b)[0, 1]:.3f} rmse {np.sqrt(np.mean((bh - b) ** 2)):.3f}"
    )
    if result["model"] == "2PL":
        ah = np.array([v["discrimination"]["estimate"] for v in result["instances"].values()])
        out += f" | discrimination r {np.corrcoef(ah, a)[0, 1]:.3f} rmse {np.sqrt(np.mean((ah - a) ** 2)):.3f}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    started = time.monotonic()
    for models, instances, trials in SHAPES:
        for seed in range(1, args.seeds + 1):
            rng = np.random.default_rng(seed)
            theta, b = rng.normal(0, 1, models), rng.normal(0, 1, instances)
            a = np.exp(rng.normal(0, 0.5, instances))
            p = 1 / (1 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
            s, n = rng.binomial(trials, p), np.full((models, instances), trials)
            print(f"{models} x {instances} x {trials}, seed {seed}")
            for two in (False, True):
                result = fit(s, n, two_parameter=two)
                print("  " + _line(result["model"], result, theta, b, a))
    print(f"{time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
