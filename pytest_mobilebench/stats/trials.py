"""Repeated trials of one model on a set of tasks (``--mb-trials K``; docs/statistics.md). Pure, seeded.

Input everywhere: ``{task id: [trial passed?, ...]}`` in trial order (tasks may hold different trial counts).

Per task (``per_task``): pass@1 (its pass fraction), pass@k (Chen et al. 2021, :func:`pass_at_k`: the chance
that at least one of k trials drawn from its n passes) and pass^k (Yao et al. 2024, :func:`pass_hat_k`: the
chance that all k pass), for k = 1..n; ``flips`` counts outcome changes between consecutive trials.

Per model (:func:`trial_summary`): the means of those over tasks; pass@1 with a **hierarchical bootstrap**
interval (:func:`hierarchical_bootstrap`: tasks resampled, then trials within each chosen task) and, beside it,
Wilson's interval over the pooled trials (which treats every trial as independent, so it is too narrow when
tasks differ); the **variance shares** between tasks and between trials (:func:`variance_shares`); the tasks
whose trials disagree (``flips``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pytest_mobilebench.metrics import _check_k_of_n, wilson_interval

__all__ = [
    "DEFAULT_RESAMPLES",
    "hierarchical_bootstrap",
    "pass_at_k",
    "pass_hat_k",
    "resampled_means",
    "task_bootstrap",
    "trial_summary",
    "variance_shares",
]

#: bootstrap resamples unless ``--mb-bootstrap-resamples`` says otherwise
DEFAULT_RESAMPLES = 1000
_LEVEL = 0.95
#: drawn trials per chunk of resamples in :func:`resampled_means` (about 16 MB per array of them)
_CHUNK = 2_000_000


def _check_k(k: object, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n:
        raise ValueError(f"k must be an int in 1..{n}, got {k!r}")
    return k


def pass_at_k(passes: int, trials: int, k: int) -> float:
    """The unbiased pass@k estimate of one task: the chance that at least one of ``k`` trials drawn without
    replacement from its ``trials`` recorded ones passes, ``1 - C(n - c, k) / C(n, k)`` with ``c`` passes among
    ``n`` trials (M. Chen et al. 2021, "Evaluating Large Language Models Trained on Code", arXiv:2107.03374,
    section 2.1, equation 1). Exact in integers up to the final division.

    Raises:
        ValueError: counts not ints, ``passes > trials``, or ``k`` not in ``1..trials``.
    """
    c, n = _check_k_of_n(passes, trials, "passes", "trials")
    k = _check_k(k, n)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(passes: int, trials: int, k: int) -> float:
    """tau-bench's pass^k estimate for one task: the chance that ``k`` trials drawn without replacement from its
    ``trials`` recorded ones all pass, ``C(c, k) / C(n, k)`` (S. Yao et al. 2024, "tau-bench", arXiv:2406.12045,
    section 4); with ``k == trials`` it is 1 iff every trial passed.

    Raises:
        ValueError: counts not ints, ``passes > trials``, or ``k`` not in ``1..trials``.
    """
    c, n = _check_k_of_n(passes, trials, "passes", "trials")
    k = _check_k(k, n)
    return math.comb(c, k) / math.comb(n, k)


def _padded(outcomes: Sequence[Sequence[bool]]) -> tuple[np.ndarray, np.ndarray]:
    """``(values (tasks x max trials) of 0/1, zero-padded; trial counts per task)``."""
    counts = np.array([len(o) for o in outcomes], dtype=np.int64)
    values = np.zeros((len(outcomes), int(counts.max(initial=0))), dtype=np.float64)
    for i, o in enumerate(outcomes):
        values[i, : len(o)] = [bool(x) for x in o]
    return values, counts


def _percentile(means: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def hierarchical_bootstrap(
    outcomes: Sequence[Sequence[bool]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = _LEVEL
) -> tuple[float, float]:
    """Percentile interval of pass@1 (the mean over tasks of each task's pass fraction) by a two-stage bootstrap:
    each resample draws the tasks with replacement, then, within each drawn task, its trials with replacement
    (A. C. Davison & D. V. Hinkley 1997, "Bootstrap Methods and their Application", section 3.8, hierarchical
    data, the strategy resampling at both stages; the percentile interval of B. Efron & R. Tibshirani 1993,
    ch. 13). With one trial per task it is the ordinary bootstrap over tasks. Deterministic for a ``seed``.

    Args:
        outcomes: one sequence of trial outcomes per task, each non-empty.
        resamples: bootstrap resamples, ``>= 1``.
        level: the interval's coverage, in ``(0, 1)``.

    Returns:
        ``(low, high)`` in ``[0, 1]``; ``(0.0, 1.0)`` for no task.

    Raises:
        ValueError: a task without trials, ``resamples < 1`` or ``level`` outside ``(0, 1)``.
    """
    _check_bootstrap(resamples, level)
    if not outcomes:
        return (0.0, 1.0)
    if any(len(o) == 0 for o in outcomes):
        raise ValueError("a task without trials")
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(outcomes), size=(resamples, len(outcomes)))  # stage 1: tasks
    return _percentile(resampled_means(outcomes, drawn, rng), level)


def resampled_means(outcomes: Sequence[Sequence[bool]], drawn: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Stage 2 of :func:`hierarchical_bootstrap`: for each row of ``drawn`` (task indices, resamples x tasks), the
    mean over the drawn tasks of each one's trials resampled with replacement; shape ``(resamples,)``. Rows are
    taken in chunks of about :data:`_CHUNK` drawn trials, so memory stays bounded on large runs."""
    values, counts = _padded(outcomes)
    width = values.shape[1]
    step = max(1, _CHUNK // max(1, drawn.shape[1] * width))
    out = []
    for start in range(0, drawn.shape[0], step):
        rows = drawn[start : start + step]
        n = counts[rows]  # (rows, tasks): each drawn task's trial count
        picks = np.floor(rng.random((*rows.shape, width)) * n[..., None]).astype(np.int64)
        used = np.arange(width)[None, None, :] < n[..., None]
        out.append(((values[rows[..., None], picks] * used).sum(axis=2) / n).mean(axis=1))
    return np.concatenate(out) if out else np.zeros(0)


def task_bootstrap(
    values: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = _LEVEL
) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean of per-task values, resampling the tasks (Efron & Tibshirani
    1993, ch. 13); used for pass@k and pass^k with k > 1, whose per-task estimates are already unbiased over
    that task's trials (resampling trials with replacement would bias them). ``(0.0, 1.0)`` for no value."""
    _check_bootstrap(resamples, level)
    if not values:
        return (0.0, 1.0)
    array = np.asarray(values, dtype=np.float64)
    drawn = np.random.default_rng(seed).integers(0, len(array), size=(resamples, len(array)))
    return _percentile(array[drawn].mean(axis=1), level)


def _check_bootstrap(resamples: object, level: float) -> None:
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ValueError(f"resamples must be an int >= 1, got {resamples!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")


def variance_shares(outcomes: Sequence[Sequence[bool]]) -> dict[str, float | None]:
    """How the spread of trial outcomes splits between tasks and between trials of one task: the one-way
    random-effects ANOVA estimators for unbalanced data (S. R. Searle, G. Casella & C. E. McCulloch 1992,
    "Variance Components", ch. 3: ``MSW = sum (y_ij - mean_i)^2 / (N - T)``, ``MSB = sum n_i (mean_i - mean)^2 /
    (T - 1)``, ``n0 = (N - sum n_i^2 / N) / (T - 1)``, ``between = max(0, (MSB - MSW) / n0)``).

    Returns:
        ``{"between_tasks": variance of the tasks' true pass rates, "between_trials": variance of one trial
        around its task's rate (MSW), "share_tasks": between_tasks / total (the intraclass correlation),
        "share_trials": 1 - share_tasks}``; values None when not estimable (fewer than two tasks, no task
        with two trials, or no variation at all).
    """
    none: dict[str, float | None] = dict.fromkeys(("between_tasks", "between_trials", "share_tasks", "share_trials"))
    tasks, total = len(outcomes), sum(len(o) for o in outcomes)
    if tasks < 2 or total <= tasks:
        return none
    means = [sum(map(bool, o)) / len(o) for o in outcomes]
    grand = sum(sum(map(bool, o)) for o in outcomes) / total
    msw = sum((bool(x) - m) ** 2 for o, m in zip(outcomes, means) for x in o) / (total - tasks)
    msb = sum(len(o) * (m - grand) ** 2 for o, m in zip(outcomes, means)) / (tasks - 1)
    n0 = (total - sum(len(o) ** 2 for o in outcomes) / total) / (tasks - 1)
    between = max(0.0, (msb - msw) / n0)
    if between + msw == 0:
        return {**none, "between_tasks": 0.0, "between_trials": 0.0}
    share = between / (between + msw)
    return {
        "between_tasks": round(between, 6),
        "between_trials": round(msw, 6),
        "share_tasks": round(share, 6),
        "share_trials": round(1 - share, 6),
    }


def _flips(outcomes: Sequence[bool]) -> int:
    return sum(a != b for a, b in zip(outcomes, outcomes[1:]))


def _per_task(o: Sequence[bool]) -> dict[str, Any]:
    n, c = len(o), sum(map(bool, o))
    return {
        "trials": n,
        "passes": c,
        "flips": _flips([bool(x) for x in o]),
        "pass_1": round(c / n, 6),
        "pass_at_k": {str(k): round(pass_at_k(c, n, k), 6) for k in range(1, n + 1)},
        "pass_hat_k": {str(k): round(pass_hat_k(c, n, k), 6) for k in range(1, n + 1)},
    }


def _rounded(value: float, ci: tuple[float, float]) -> dict[str, Any]:
    return {"value": round(value, 6), "ci95": [round(ci[0], 6), round(ci[1], 6)]}


def trial_summary(
    outcomes: Mapping[str, Sequence[bool]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """Repeated-trial statistics of one model over tasks (pure; deterministic for a given ``seed``).

    Returns:
        ``{"tasks", "trials": the smallest trial count (pass@k and pass^k stop there), "trial_counts": sorted
        distinct counts, "pass_1": {"value", "ci95": hierarchical bootstrap, "wilson95": Wilson over the pooled
        trials, "passes", "trials"}, "pass_at_k" / "pass_hat_k": {str(k): {"value", "ci95": bootstrap over tasks}}
        for k = 1..trials, "all_pass" / "flaky": {"passed": tasks whose trials all passed / disagree, "total",
        "ci95": Wilson}, "variance": :func:`variance_shares`, "flips": [{"instance_id", "passes", "trials"}] (tasks
        whose trials disagree), "bootstrap": {"resamples", "seed", "level"}, "per_task": {task: {"trials",
        "passes", "flips", "pass_1", "pass_at_k": {k: v}, "pass_hat_k": {k: v}}}}``. Values are rounded to 6
        places; with no task ``pass_1.value`` is None.

    Raises:
        ValueError: a task without trials, or ``resamples < 1``.
    """
    _check_bootstrap(resamples, _LEVEL)
    empty = [t for t, o in outcomes.items() if not o]
    if empty:
        raise ValueError(f"tasks without trials: {sorted(empty)}")
    tasks = sorted(outcomes)
    runs = [list(outcomes[t]) for t in tasks]
    per_task = {t: _per_task(o) for t, o in zip(tasks, runs)}
    k_max = min((v["trials"] for v in per_task.values()), default=0)

    def estimate(name: str, k: int) -> dict[str, Any]:
        values = [v[name][str(k)] for v in per_task.values()]
        return _rounded(sum(values) / len(values), task_bootstrap(values, resamples=resamples, seed=seed + k))

    def counted(n: int) -> dict[str, Any]:
        lo, hi = wilson_interval(n, len(tasks))
        return {"passed": n, "total": len(tasks), "ci95": [round(lo, 6), round(hi, 6)]}

    passes, trials = sum(v["passes"] for v in per_task.values()), sum(v["trials"] for v in per_task.values())
    pass_1: dict[str, Any] = {"value": None, "ci95": [0.0, 1.0]}
    if tasks:
        pass_1 = _rounded(
            sum(v["pass_1"] for v in per_task.values()) / len(tasks),
            hierarchical_bootstrap(runs, resamples=resamples, seed=seed),
        )
    lo, hi = wilson_interval(passes, trials)
    return {
        "tasks": len(tasks),
        "trials": k_max,
        "trial_counts": sorted({v["trials"] for v in per_task.values()}),
        "pass_1": {**pass_1, "wilson95": [round(lo, 6), round(hi, 6)], "passes": passes, "trials": trials},
        "pass_at_k": {str(k): estimate("pass_at_k", k) for k in range(1, k_max + 1)},
        "pass_hat_k": {str(k): estimate("pass_hat_k", k) for k in range(1, k_max + 1)},
        "all_pass": counted(sum(v["passes"] == v["trials"] for v in per_task.values())),
        "flaky": counted(sum(0 < v["passes"] < v["trials"] for v in per_task.values())),
        "variance": variance_shares(runs),
        "flips": [
            {"instance_id": t, "passes": v["passes"], "trials": v["trials"]}
            for t, v in per_task.items()
            if 0 < v["passes"] < v["trials"]
        ],
        "bootstrap": {"resamples": resamples, "seed": seed, "level": _LEVEL},
        "per_task": per_task,
    }
