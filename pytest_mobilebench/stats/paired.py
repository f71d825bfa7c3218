"""Two models on shared instances: a paired bootstrap of the difference of their pass@1 (docs/statistics.md). Pure.

Each resample draws the shared instances with replacement, the **same** draw for both models (that is the
pairing: an instance hard for both moves both means together), then, within each drawn instance, each model's
own trials with replacement (the second stage of :func:`pytest_mobilebench.stats.trials.hierarchical_bootstrap`;
with one trial per instance it changes nothing). The interval is the percentile interval of
``pass@1(A) - pass@1(B)`` over the resamples (B. Efron & R. Tibshirani 1993, "An Introduction to the Bootstrap",
ch. 13; hierarchical data: A. C. Davison & D. V. Hinkley 1997, section 3.8).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pytest_mobilebench.stats.trials import DEFAULT_RESAMPLES, resampled_means

__all__ = ["paired_bootstrap"]


def paired_bootstrap(
    a: Sequence[Sequence[bool]],
    b: Sequence[Sequence[bool]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """The paired bootstrap of ``pass@1(A) - pass@1(B)``.

    Args:
        a, b: per shared instance (same order in both), each model's trial outcomes (non-empty).
        resamples: bootstrap resamples, ``>= 1``; ``seed``: the generator's seed; ``level``: the coverage.

    Returns:
        ``{"instances", "pass_1_a", "pass_1_b", "difference": pass_1_a - pass_1_b, "ci95": [low, high],
        "resamples", "seed"}`` (values rounded to 6 places); with no instance the difference is None and the
        interval ``[-1.0, 1.0]``.

    Raises:
        ValueError: ``a`` and ``b`` of different lengths, an instance without trials, ``resamples < 1``.
    """
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} instances, b {len(b)}: the pairs must match")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ValueError(f"resamples must be an int >= 1, got {resamples!r}")
    if any(not o for o in (*a, *b)):
        raise ValueError("an instance without trials")
    out: dict[str, Any] = {"instances": len(a), "resamples": resamples, "seed": seed}
    if not a:
        return {**out, "pass_1_a": None, "pass_1_b": None, "difference": None, "ci95": [-1.0, 1.0]}
    mean_a = sum(sum(map(bool, o)) / len(o) for o in a) / len(a)
    mean_b = sum(sum(map(bool, o)) / len(o) for o in b) / len(b)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(a), size=(resamples, len(a)))  # one draw of instances for both models
    differences = resampled_means(a, drawn, rng) - resampled_means(b, drawn, rng)
    lo, hi = np.quantile(differences, [(1 - level) / 2, 1 - (1 - level) / 2])
    return {
        **out,
        "pass_1_a": round(mean_a, 6),
        "pass_1_b": round(mean_b, 6),
        "difference": round(mean_a - mean_b, 6),
        "ci95": [round(float(lo), 6), round(float(hi), 6)],
    }
