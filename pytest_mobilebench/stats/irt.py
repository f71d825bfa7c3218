"""Item-response models over several models' outcomes on shared instances (``compare --irt``; docs/statistics.md).

The models under evaluation are the respondents, the benchmark instances the items. With ``s`` passes out of
``n`` trials of model ``j`` on instance ``i`` (``n = 1`` for single attempts; ``n = 0`` where it has none):

* one-parameter (Rasch) model: ``P(pass) = sigmoid(theta_j - b_i)``;
* two-parameter logistic model: ``P(pass) = sigmoid(a_i * (theta_j - b_i))``, ``a_i = exp(alpha_i) > 0``;

with ``theta_j`` the model's ability, ``b_i`` the instance's difficulty and ``a_i`` its discrimination (F. M.
Lord 1980, "Applications of Item Response Theory to Practical Testing Problems", ch. 2). The likelihood is
binomial, ``sum s * z - n * log(1 + e^z)`` with ``z`` the logit above.

Fit: joint maximum a posteriori ("Bayes modal") estimation of every parameter at once (H. Swaminathan & J. A.
Gifford 1985, "Bayesian estimation in the two-parameter logistic model", Psychometrika 50(3); R. J. Mislevy 1986,
"Bayes modal estimation in item response models", Psychometrika 51(2)) with weak normal priors: ``theta ~ N(0,
1)`` (it fixes the scale's origin and unit, as in marginal ML), ``b ~ N(0, 3^2)`` and ``log a ~ N(0, 0.5^2)``.
The priors keep the estimates finite where plain joint ML diverges: an instance every model solves (or none
does) has an infinite ML difficulty; here it gets a finite one pulled towards 0, and is flagged. The optimiser
is scipy's L-BFGS-B with the analytic gradient.

Intervals: ``estimate +- 1.96 * se`` from the expected (Fisher) information at the estimate plus the priors'
precisions (Lord 1980, ch. 5; the Laplace approximation of the posterior). An ability's ``se`` is from the
inverse of the abilities' block of the information after the instances' parameters are eliminated (its Schur
complement: the instances' uncertainty, and the scale's location, count in it); an instance's from the inverse
of its own 1x1 (1PL) or 2x2 (2PL) block, the abilities held at their estimates (narrow when few models answer
it). A discrimination's interval is ``exp`` of its logarithm's.

Needs scipy (the ``stats`` extra); :class:`IrtUnavailable` says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["PRIORS", "IrtError", "IrtUnavailable", "fit", "irt_from_outcomes"]

#: prior standard deviations: ability, difficulty, log discrimination
PRIORS: Mapping[str, float] = {"ability": 1.0, "difficulty": 3.0, "log_discrimination": 0.5}
_Z95 = 1.959964


class IrtError(ValueError):
    """The outcomes cannot be fitted (fewer than three models, no shared instance); the message says why."""


class IrtUnavailable(RuntimeError):
    """scipy is not installed (``pip install 'pytest-mobilebench[stats]'``)."""


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # stable for large |z|


def _unpack(x: np.ndarray, models: int, items: int, two: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    theta, b = x[:models], x[models : models + items]
    alpha = x[models + items :] if two else np.zeros(items)
    return theta, b, alpha


def _objective(x: np.ndarray, s: np.ndarray, n: np.ndarray, two: bool) -> tuple[float, np.ndarray]:
    """Negative log posterior and its gradient; ``s`` / ``n``: passes / trials, models x instances."""
    models, items = s.shape
    theta, b, alpha = _unpack(x, models, items, two)
    a = np.exp(alpha)
    diff = theta[:, None] - b[None, :]
    z = a[None, :] * diff
    loglik = float((s * z - n * np.logaddexp(0.0, z)).sum())
    r = s - n * _sigmoid(z)  # d loglik / d z
    sd_t, sd_b, sd_a = PRIORS["ability"], PRIORS["difficulty"], PRIORS["log_discrimination"]
    prior = -0.5 * (float((theta**2).sum()) / sd_t**2 + float((b**2).sum()) / sd_b**2)
    grad_theta = (r * a[None, :]).sum(axis=1) - theta / sd_t**2
    grad_b = -a * r.sum(axis=0) - b / sd_b**2
    grads = [grad_theta, grad_b]
    if two:
        prior -= 0.5 * float((alpha**2).sum()) / sd_a**2
        grads.append(a * (r * diff).sum(axis=0) - alpha / sd_a**2)
    return -(loglik + prior), -np.concatenate(grads)


def _interval(value: float, information: float) -> dict[str, Any]:
    se = 1.0 / np.sqrt(information)
    return {
        "estimate": round(value, 4),
        "se": round(float(se), 4),
        "ci95": [round(value - _Z95 * float(se), 4), round(value + _Z95 * float(se), 4)],
    }


def _standard_errors(
    theta: np.ndarray, b: np.ndarray, alpha: np.ndarray, n: np.ndarray, two: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(ability se (models,), instance covariance (instances x q x q), q = 1 or 2: difficulty, log discrimination)``
    from the expected information ``sum n p (1 - p) dz/du dz/dv`` plus the priors' precisions (module docstring)."""
    a = np.exp(alpha)
    z = a[None, :] * (theta[:, None] - b[None, :])
    p = _sigmoid(z)
    w = n * p * (1 - p)  # models x instances
    q = 2 if two else 1
    block = np.zeros((len(b), q, q))  # each instance's own information
    block[:, 0, 0] = (w * a[None, :] ** 2).sum(axis=0) + 1 / PRIORS["difficulty"] ** 2
    cross = np.zeros((len(theta), len(b), q))  # ability j x instance i's parameters
    cross[:, :, 0] = -w * a[None, :] ** 2
    if two:
        block[:, 0, 1] = block[:, 1, 0] = -(w * a[None, :] * z).sum(axis=0)
        block[:, 1, 1] = (w * z**2).sum(axis=0) + 1 / PRIORS["log_discrimination"] ** 2
        cross[:, :, 1] = w * a[None, :] * z
    item_cov = np.linalg.inv(block)
    ability = np.diag((w * a[None, :] ** 2).sum(axis=1) + 1 / PRIORS["ability"] ** 2)
    schur = ability - np.einsum("jiq,iqr,kir->jk", cross, item_cov, cross)
    return np.sqrt(np.diag(np.linalg.inv(schur))), item_cov


def fit(
    successes: Sequence[Sequence[float]],
    trials: Sequence[Sequence[float]],
    *,
    two_parameter: bool = False,
    models: Sequence[str] | None = None,
    instances: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Fit the one- or two-parameter model (see the module docstring).

    Args:
        successes: passes, models x instances (non-negative, at most ``trials``).
        trials: trials, the same shape (0 where a model has no outcome on an instance).
        two_parameter: fit the 2PL (difficulty and discrimination) rather than the 1PL (difficulty only).
        models, instances: names (default ``m0..``, ``i0..``).

    Returns:
        ``{"model": "1PL" | "2PL", "method", "priors", "converged": bool, "iterations", "log_posterior",
        "abilities": {model: {"estimate", "se", "ci95"}}, "instances": {instance: {"difficulty": {...},
        "discrimination"?: {...}}}}``; a discrimination's interval is ``exp`` of its log's.

    Raises:
        IrtError: shapes disagree, a count is negative or passes exceed trials.
        IrtUnavailable: scipy is missing.
    """
    try:
        from scipy.optimize import minimize
    except ImportError as exc:
        raise IrtUnavailable("the item-response fit needs scipy: pip install 'pytest-mobilebench[stats]'") from exc
    s, n = np.asarray(successes, dtype=np.float64), np.asarray(trials, dtype=np.float64)
    if s.ndim != 2 or s.shape != n.shape:
        raise IrtError(f"successes {s.shape} and trials {n.shape} must be the same models x instances shape")
    if (s < 0).any() or (s > n).any():
        raise IrtError("passes must lie in 0..trials")
    m, k = s.shape
    names = list(models) if models is not None else [f"m{j}" for j in range(m)]
    items = list(instances) if instances is not None else [f"i{i}" for i in range(k)]
    x0 = np.zeros(m + k * (2 if two_parameter else 1))
    result = minimize(
        _objective, x0, args=(s, n, two_parameter), jac=True, method="L-BFGS-B", options={"maxiter": 5000, "gtol": 1e-8}
    )
    theta, b, alpha = _unpack(result.x, m, k, two_parameter)
    ability_se, item_cov = _standard_errors(theta, b, alpha, n, two_parameter)
    per_item: dict[str, Any] = {}
    for i, iid in enumerate(items):
        per_item[iid] = {"difficulty": _interval(float(b[i]), 1 / float(item_cov[i, 0, 0]))}
        if two_parameter:
            own = _interval(float(alpha[i]), 1 / float(item_cov[i, 1, 1]))
            per_item[iid]["discrimination"] = {
                "estimate": round(float(np.exp(alpha[i])), 4),
                "se_log": own["se"],
                "ci95": [round(float(np.exp(c)), 4) for c in own["ci95"]],
            }
    return {
        "model": "2PL" if two_parameter else "1PL",
        "method": "joint maximum a posteriori (L-BFGS-B); priors ability N(0, 1), difficulty N(0, 3^2)"
        + (", log discrimination N(0, 0.5^2)" if two_parameter else ""),
        "priors": dict(PRIORS),
        "converged": bool(result.success),
        "iterations": int(result.nit),
        "log_posterior": round(-float(result.fun), 4),
        "abilities": {name: _interval(float(theta[j]), 1 / float(ability_se[j]) ** 2) for j, name in enumerate(names)},
        "instances": per_item,
    }


def irt_from_outcomes(outcomes: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Both fits over the instances every model evaluated (:func:`pytest_mobilebench.compare.load_outcomes`'s
    shape: ``{model: {instance: [outcome per trial] or outcome}}``, None for infrastructure, dropped).

    Returns:
        ``{"models": [...], "instances": int (shared), "left_out": int (instances not every model evaluated),
        "none_solved": [ids no model passed in any trial], "all_solved": [ids every model passed in every trial],
        "one_pl": :func:`fit`, "two_pl": :func:`fit` with two_parameter}``.

    Raises:
        IrtError: fewer than three models, or no instance every model evaluated.
        IrtUnavailable: scipy is missing.
    """
    models = sorted(outcomes)
    if len(models) < 3:
        raise IrtError(
            f"the item-response fit needs three or more models, got {len(models)}: {', '.join(models) or '-'}"
        )
    eligible = {
        m: {
            iid: [bool(x) for x in (v if isinstance(v, Sequence) else [v]) if x is not None]
            for iid, v in outcomes[m].items()
        }
        for m in models
    }
    every = set.union(*(set(eligible[m]) for m in models))
    shared = sorted(iid for iid in every if all(eligible[m].get(iid) for m in models))
    if not shared:
        raise IrtError(f"no instance was evaluated by all {len(models)} models ({', '.join(models)})")
    s = [[sum(eligible[m][iid]) for iid in shared] for m in models]
    n = [[len(eligible[m][iid]) for iid in shared] for m in models]
    return {
        "models": models,
        "instances": len(shared),
        "left_out": len(every) - len(shared),
        "none_solved": [iid for c, iid in enumerate(shared) if all(s[j][c] == 0 for j in range(len(models)))],
        "all_solved": [iid for c, iid in enumerate(shared) if all(s[j][c] == n[j][c] for j in range(len(models)))],
        "one_pl": fit(s, n, models=models, instances=shared),
        "two_pl": fit(s, n, two_parameter=True, models=models, instances=shared),
    }
