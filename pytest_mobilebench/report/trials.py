"""Repeated trials in every suite (``--mb-trials K``, or a predictions file's ``trial`` rows; docs/statistics.md).

A suite that runs one item per trial (issue resolution live; any suite given a predictions file whose rows of
one instance and model carry distinct ``trial`` values) has results carrying ``trial``. Per model:

* outcomes ``{instance: [passed?, ...]}`` in trial order, infrastructure trials left out (they are not the
  model's and are retried by the next run; counted in ``infra_trials``);
* :func:`pytest_mobilebench.stats.trials.trial_summary` of them: per instance pass@1, pass@k and pass^k; per model
  their means, pass@1 with a hierarchical bootstrap interval beside Wilson's, the variance shares between
  instances and between trials;
* ``flips``: the instances whose trials disagree, each with its trials' verdicts.

:func:`trial_table` is added to every suite's table by :func:`pytest_mobilebench.report.summary.suite_tables`
(issue resolution also makes it its headline: :func:`trial_headline`). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.stats.trials import DEFAULT_RESAMPLES, trial_summary

__all__ = ["bootstrap_options", "suite_trials", "trial_headline", "trial_table"]


def bootstrap_options(options: Mapping[str, Any] | None) -> dict[str, int]:
    """``{"resamples", "seed"}`` from the run's options (``--mb-bootstrap-resamples``, ``--mb-bootstrap-seed``)."""
    options = options or {}
    return {
        "resamples": int(options.get("mb_bootstrap_resamples") or DEFAULT_RESAMPLES),
        "seed": int(options.get("mb_bootstrap_seed") or 0),
    }


def _outcomes(rows: Sequence[Mapping[str, Any]]) -> tuple[dict[str, list[bool]], dict[str, dict[str, str]], int]:
    """``(outcomes, verdicts {instance: {"t<k>": reason}}, infra trials left out)`` of one model's trial rows."""
    by_trial = sorted(rows, key=lambda r: (str(r.get("instance_id")), int(r["trial"])))
    outcomes: dict[str, list[bool]] = {}
    verdicts: dict[str, dict[str, str]] = {}
    infra = 0
    for r in by_trial:
        iid = str(r.get("instance_id"))
        verdicts.setdefault(iid, {})[f"t{r['trial']}"] = str(r.get("reason"))
        if r.get("retryable"):
            infra += 1
            continue
        outcomes.setdefault(iid, []).append(bool(r.get("passed")))
    return outcomes, verdicts, infra


def trial_table(
    results: Sequence[Mapping[str, Any]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> dict[str, Any] | None:
    """``{model: {**trial_summary, "resolved_trials", "eligible_trials", "infra_trials", "flips": [{"instance_id",
    "passes", "trials", "verdicts": {"t<k>": reason}}]}}`` over the results that carry ``trial``; None when none
    does. A model whose every trial was infrastructure gets ``{"tasks": 0, "infra_trials", "flips": [],
    "resolved_trials": 0, "eligible_trials": 0}``."""
    trialled = [r for r in results if isinstance(r.get("trial"), int) and not isinstance(r.get("trial"), bool)]
    if not trialled:
        return None
    table: dict[str, Any] = {}
    for model in sorted({str(r.get("model_name_or_path")) for r in trialled}):
        outcomes, verdicts, infra = _outcomes([r for r in trialled if str(r.get("model_name_or_path")) == model])
        if not outcomes:
            table[model] = {"tasks": 0, "infra_trials": infra, "flips": [], "resolved_trials": 0, "eligible_trials": 0}
            continue
        summary = trial_summary(outcomes, resamples=resamples, seed=seed)
        flips = [{**f, "verdicts": verdicts[f["instance_id"]]} for f in summary["flips"]]
        table[model] = {
            **summary,
            "resolved_trials": summary["pass_1"]["passes"],
            "eligible_trials": summary["pass_1"]["trials"],
            "infra_trials": infra,
            "flips": flips,
        }
    return table


def trial_headline(own: Mapping[str, Any]) -> dict[str, Any] | None:
    """One model's headline from its :func:`trial_table` entry: ``pass@1 over K trials`` (resolved / eligible
    trials, the value the mean over instances, the hierarchical bootstrap interval), with ``pass^K`` (instances
    whose K trials all resolved) and the instances whose trials disagree as rate-shaped secondary figures; None
    without an eligible trial."""
    if not own.get("tasks"):
        return None
    k, tasks = int(own["trials"]), int(own["tasks"])
    hat = own["pass_hat_k"][str(k)]
    flipped = len(own["flips"])
    note = (
        f"mean over {tasks} instance(s) of each one's resolved fraction over its trials (hierarchical bootstrap "
        f"95% CI: instances, then trials); pass@k, pass^k for k=1..{k}, Wilson's interval, the variance shares "
        "and the flips are in the suite table 'trials'"
    )
    if own.get("infra_trials"):
        note += f"; infrastructure left {own['infra_trials']} trial(s) out"
    return {
        "label": f"pass@1 over {k} trials",
        "numerator": own["resolved_trials"],
        "denominator": own["eligible_trials"],
        "value": own["pass_1"]["value"],
        "ci95": own["pass_1"]["ci95"],
        "note": note,
        "pass_hat_k": {
            "label": f"pass^{k}",
            "key": f"pass_hat_{k}",
            "numerator": own["all_pass"]["passed"],
            "denominator": tasks,
            "value": hat["value"],
            "ci95": own["all_pass"]["ci95"],
        },
        "flipped": {
            "label": "instances whose trials disagree",
            "key": "flips",
            "numerator": flipped,
            "denominator": tasks,
            "value": round(flipped / tasks, 6),
            "ci95": own["flaky"]["ci95"],
        },
    }


def suite_trials(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{suite: {model: trial table}}`` of a run summary: a suite table's ``trials`` (:func:`trial_table`), or
    the planner's per-model ``by_model.<model>.trials`` (K runs inside one item); suites without trials left out."""
    out: dict[str, dict[str, Any]] = {}
    for suite, table in (summary.get("suite_tables") or {}).items():
        if not isinstance(table, Mapping):
            continue
        own = table.get("trials")
        if isinstance(own, Mapping) and "error" not in own and own:
            out[suite] = dict(own)
            continue
        per_model = {
            m: t["trials"]
            for m, t in (table.get("by_model") or {}).items()
            if isinstance(t, Mapping) and isinstance(t.get("trials"), Mapping)
        }
        if per_model:
            out[suite] = per_model
    return out
