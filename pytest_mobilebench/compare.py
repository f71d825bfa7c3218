"""Paired comparison of models from run summaries (``python -m pytest_mobilebench compare SUMMARY...``).

For every pair of models found in the summaries, on the instances both evaluated:

* single trials (one attempt per instance): resolved counts, the discordant counts (resolved by one model only),
  the two-sided exact McNemar p-value (:func:`pytest_mobilebench.metrics.mcnemar_exact`) and the instances where
  the two disagree;
* always: ``paired_bootstrap``, the paired bootstrap of ``pass@1(A) - pass@1(B)`` with its 95% interval
  (:func:`pytest_mobilebench.stats.paired.paired_bootstrap`: instances drawn once for both, then each model's
  trials within them). With repeated trials (``--mb-trials K``, results carrying ``trial``) it is the test:
  ``mcnemar_p`` and the resolved counts are None (McNemar needs one paired outcome per instance), ``only_a`` /
  ``only_b`` list the instances where A's / B's pass fraction is the higher.

"Evaluated" means a result exists and its reason is not an infrastructure reason (``infra_error``): an
infrastructure failure says nothing about the model, so such trials are dropped and an instance left without a
trial of either model is left out of the pair and listed under ``excluded_infra``. A missing prediction is an
evaluation (unresolved), as in the summary.

Where it appears: printed by the command (``--json OUT`` for the table, ``--html OUT`` for a self-contained
page; ``--irt`` adds the item-response fit of :mod:`pytest_mobilebench.report.irt`), in a run's
``summary.json`` (the issue-resolution table's ``model_comparison``) and on the run page
(``reports/<run_id>/index.html``, "Model comparison" in each suite with two or more models). All of them are
:func:`compare` over :func:`load_outcomes` (summary files) or :func:`compare_results` (one run's results).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.metrics import mcnemar_exact
from pytest_mobilebench.states import INFRA_REASONS
from pytest_mobilebench.stats.paired import paired_bootstrap
from pytest_mobilebench.stats.trials import DEFAULT_RESAMPLES

__all__ = ["CompareError", "compare", "compare_pair", "compare_results", "load_outcomes", "outcomes_of", "render_text"]

_INFRA = frozenset(r.value for r in INFRA_REASONS)
#: an instance's outcomes of one model: one per trial in trial order (one element for a single attempt); None an
#: infrastructure trial. A bare bool / None is read as a single attempt.
Outcomes = Mapping[str, Mapping[str, "bool | None | Sequence[bool | None]"]]


class CompareError(ValueError):
    """A summary file is unusable or two summaries disagree; the message names the file(s)."""


def load_outcomes(paths: Iterable[Path]) -> dict[str, dict[str, list[bool | None]]]:
    """``{model: {instance_id: [outcome per trial, in trial order]}}`` from summary files (one element for a
    single attempt); ``None`` marks an infrastructure result.

    Raises:
        CompareError: unreadable or non-summary JSON, an entry without instance id / model, or the same
            (instance, model, trial) with different outcomes in two files.
    """
    found: dict[tuple[str, str, int], bool | None] = {}
    seen_in: dict[tuple[str, str, int], str] = {}
    for path in paths:
        for key, entry in _instances(path).items():
            iid, model = entry.get("instance_id"), entry.get("model_name_or_path")
            if not isinstance(iid, str) or not isinstance(model, str):
                raise CompareError(f"{path}: instance {key!r}: missing 'instance_id' or 'model_name_or_path'")
            for trial, value in _trials_of(entry):
                at = (iid, model, trial)
                if at in seen_in and found[at] != value:
                    of = f" trial {trial}" if trial else ""
                    raise CompareError(
                        f"{path}: instance {iid!r}{of} of model {model!r} is {value} here and "
                        f"{found[at]} in {seen_in[at]}"
                    )
                found[at], seen_in[at] = value, str(path)
    outcomes: dict[str, dict[str, list[bool | None]]] = {}
    for (iid, model, _trial), value in sorted(found.items(), key=lambda kv: kv[0]):
        outcomes.setdefault(model, {}).setdefault(iid, []).append(value)
    return outcomes


def _trials_of(result: Mapping[str, Any]) -> list[tuple[int, bool | None]]:
    """``[(trial, outcome)]`` of one result: its ``trial`` (one item per trial; 0 for a single attempt), or the K
    runs of one item (``trial_outcomes``, the planner's ``--mb-trials``) as trials 1..K."""
    runs = result.get("trial_outcomes")
    if isinstance(runs, list) and len(runs) > 1 and _outcome(result) is not None:
        return [(k, bool(x)) for k, x in enumerate(runs, 1)]
    return [(result.get("trial") if isinstance(result.get("trial"), int) else 0, _outcome(result))]


def _outcome(result: Mapping[str, Any]) -> bool | None:
    """Resolved or not; None for an infrastructure result (it says nothing about the model)."""
    return None if result.get("reason") in _INFRA or result.get("retryable") else bool(result.get("passed"))


def compare_results(
    results: Iterable[Mapping[str, Any]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """:func:`compare` of one run's results (pure): the summary's ``model_comparison`` and the run page's section.

    ``results`` are result dicts with ``instance_id``, ``model_name_or_path``, ``passed``, ``reason``,
    ``retryable`` and, for one of K trials, ``trial``; a later result of the same (model, instance, trial)
    replaces an earlier one.
    """
    return compare(outcomes_of(results), resamples=resamples, seed=seed)


def outcomes_of(results: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, list[bool | None]]]:
    """:func:`load_outcomes`'s shape from one run's results (a later result of the same (model, instance,
    trial) replaces an earlier one)."""
    found: dict[tuple[str, str, int], bool | None] = {}
    for r in results:
        for trial, value in _trials_of(r):
            found[(str(r.get("model_name_or_path")), str(r.get("instance_id")), trial)] = value
    outcomes: dict[str, dict[str, list[bool | None]]] = {}
    for (model, iid, _trial), value in sorted(found.items(), key=lambda kv: kv[0]):
        outcomes.setdefault(model, {}).setdefault(iid, []).append(value)
    return outcomes


def _instances(path: Path) -> Mapping[str, Mapping[str, Any]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareError(f"{path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise CompareError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    instances = doc.get("instances") if isinstance(doc, Mapping) else None
    if not isinstance(instances, Mapping):
        raise CompareError(f"{path}: not a run summary (no 'instances' object)")
    return instances


def _eligible(value: bool | None | Sequence[bool | None]) -> list[bool]:
    """An instance's trials that are the model's (infrastructure ones dropped)."""
    trials = value if isinstance(value, Sequence) else [value]
    return [bool(x) for x in trials if x is not None]


def compare_pair(
    a: Mapping[str, Any], b: Mapping[str, Any], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """One pair's table (pure): see the module docstring for the fields' meaning. ``a`` / ``b``: ``{instance:
    outcome or [outcome per trial]}`` (None: infrastructure)."""
    common = sorted(set(a) & set(b))
    ta = {i: _eligible(a[i]) for i in common}
    tb = {i: _eligible(b[i]) for i in common}
    excluded = [i for i in common if not ta[i] or not tb[i]]
    both = [i for i in common if ta[i] and tb[i]]
    boot = paired_bootstrap([ta[i] for i in both], [tb[i] for i in both], resamples=resamples, seed=seed)
    if any(len(ta[i]) > 1 or len(tb[i]) > 1 for i in both):  # repeated trials: the paired bootstrap is the test
        frac = {i: (sum(ta[i]) / len(ta[i]), sum(tb[i]) / len(tb[i])) for i in both}
        return {
            "instances": len(both),
            "trials": True,
            "resolved_a": None,
            "resolved_b": None,
            "both_resolved": None,
            "neither_resolved": None,
            "only_a": [i for i in both if frac[i][0] > frac[i][1]],
            "only_b": [i for i in both if frac[i][1] > frac[i][0]],
            "mcnemar_p": None,
            "excluded_infra": excluded,
            "paired_bootstrap": boot,
        }
    one_a, one_b = {i: ta[i][0] for i in both}, {i: tb[i][0] for i in both}
    only_a = [i for i in both if one_a[i] and not one_b[i]]
    only_b = [i for i in both if one_b[i] and not one_a[i]]
    return {
        "instances": len(both),
        "trials": False,
        "resolved_a": sum(1 for i in both if one_a[i]),
        "resolved_b": sum(1 for i in both if one_b[i]),
        "both_resolved": sum(1 for i in both if one_a[i] and one_b[i]),
        "neither_resolved": sum(1 for i in both if not one_a[i] and not one_b[i]),
        "only_a": only_a,
        "only_b": only_b,
        "mcnemar_p": mcnemar_exact(len(only_a), len(only_b)),
        "excluded_infra": excluded,
        "paired_bootstrap": boot,
    }


def compare(outcomes: Outcomes, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """Every pair of models (sorted by name): ``{"models": [...], "pairs": [{"a", "b", ...}]}``."""
    models = sorted(outcomes)
    pairs = [
        {"a": a, "b": b, **compare_pair(outcomes[a], outcomes[b], resamples=resamples, seed=seed)}
        for a, b in itertools.combinations(models, 2)
    ]
    return {"models": models, "pairs": pairs}


def _bootstrap_line(pair: Mapping[str, Any]) -> str:
    boot = pair.get("paired_bootstrap") or {}
    if boot.get("difference") is None:
        return "  paired bootstrap: no instance both evaluated"
    lo, hi = boot["ci95"]
    return (
        f"  pass@1 {boot['pass_1_a']:.3f} vs {boot['pass_1_b']:.3f}; paired bootstrap A - B = "
        f"{boot['difference']:+.3f} "
        f"[95% CI {lo:+.3f}, {hi:+.3f}] ({boot['resamples']} resamples, seed {boot['seed']})"
    )


def render_text(report: Mapping[str, Any]) -> str:
    """A plain-text table of :func:`compare`'s result, one block per pair."""
    lines: list[str] = []
    if not report["pairs"]:
        return f"fewer than two models in the summaries ({', '.join(report['models']) or 'none'}): nothing to compare\n"
    for pair in report["pairs"]:
        lines.append(f"{pair['a']}  vs  {pair['b']}   ({pair['instances']} instances both evaluated)")
        if pair.get("mcnemar_p") is None:  # repeated trials: A / B ahead = the higher pass fraction
            lines.append(
                f"  repeated trials: {pair['a']} ahead on {len(pair['only_a'])}, {pair['b']} ahead on "
                f"{len(pair['only_b'])} (McNemar needs single trials)"
            )
        else:
            lines.append(
                f"  resolved: {pair['resolved_a']} vs {pair['resolved_b']}; both {pair['both_resolved']}, "
                f"neither {pair['neither_resolved']}"
            )
            lines.append(
                f"  only {pair['a']}: {len(pair['only_a'])}; only {pair['b']}: {len(pair['only_b'])}; "
                f"exact McNemar p = {pair['mcnemar_p']:.6g}"
            )
        lines.append(_bootstrap_line(pair))
        for iid in pair["only_a"]:
            lines.append(f"    + {pair['a']}: {iid}")
        for iid in pair["only_b"]:
            lines.append(f"    + {pair['b']}: {iid}")
        if pair["excluded_infra"]:
            lines.append(f"  left out (infrastructure error): {', '.join(pair['excluded_infra'])}")
    return "\n".join(lines) + "\n"
