"""Repeated trials of issue resolution (``--mb-trials K``; docs/live-agents.md, "Trials"). Pure.

Each trial is one item (node id ``<instance>[t<k>]``) whose result carries ``trial``. Per model:

* outcomes ``{instance: [resolved?, ...]}`` in trial order, infrastructure trials left out (they are not the
  model's and are retried by the next run; counted in ``infra_trials``);
* :func:`pytest_mobilebench.metrics.trial_summary` of them: pass@1 the mean over instances of each instance's
  resolved fraction with a percentile-bootstrap interval over instances, pass^k for k = 1..K (tau-bench,
  Yao et al. 2024, arXiv:2406.12045, Section 4, :func:`pytest_mobilebench.metrics.pass_hat_k`), the
  instances whose trials all resolved and the flaky ones with Wilson intervals;
* ``flips``: the instances whose trials disagree, each with its trials' verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import trial_summary

__all__ = ["trial_headline", "trial_table"]


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


def trial_table(results: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``{model: {**trial_summary, "resolved_trials", "eligible_trials", "infra_trials", "flips": [{"instance_id",
    "verdicts": {"t<k>": reason}}]}}`` over the results that carry ``trial``; None when none does."""
    trialled = [r for r in results if isinstance(r.get("trial"), int)]
    if not trialled:
        return None
    table: dict[str, Any] = {}
    for model in sorted({str(r.get("model_name_or_path")) for r in trialled}):
        outcomes, verdicts, infra = _outcomes([r for r in trialled if str(r.get("model_name_or_path")) == model])
        if not outcomes:
            table[model] = {"tasks": 0, "infra_trials": infra, "flips": [], "resolved_trials": 0, "eligible_trials": 0}
            continue
        summary = trial_summary(outcomes)
        flips = [{"instance_id": iid, "verdicts": verdicts[iid]} for iid, o in sorted(outcomes.items()) if len(set(o)) > 1]
        table[model] = {**summary, "resolved_trials": sum(sum(o) for o in outcomes.values()),
                        "eligible_trials": sum(len(o) for o in outcomes.values()), "infra_trials": infra, "flips": flips}
    return table


def trial_headline(own: Mapping[str, Any]) -> dict[str, Any] | None:
    """One model's headline from its :func:`trial_table` entry: ``pass@1 over K trials`` (resolved / eligible
    trials, the value the mean over instances, the bootstrap interval), with ``pass^K`` (instances whose K
    trials all resolved) and the instances whose trials disagree as rate-shaped secondary figures; None
    without an eligible trial."""
    if not own.get("tasks"):
        return None
    k, tasks = int(own["trials"]), int(own["tasks"])
    hat = own["pass_hat_k"][str(k)]
    flipped = len(own["flips"])
    note = (f"mean over {tasks} instance(s) of each one's resolved fraction over its trials (bootstrap 95% CI); "
            f"pass^k for k=1..{k} and the flips are in the suite table 'trials'")
    if own.get("infra_trials"):
        note += f"; infrastructure left {own['infra_trials']} trial(s) out"
    return {
        "label": f"pass@1 over {k} trials", "numerator": own["resolved_trials"], "denominator": own["eligible_trials"],
        "value": own["pass_1"]["value"], "ci95": own["pass_1"]["ci95"], "note": note,
        "pass_hat_k": {"label": f"pass^{k}", "key": f"pass_hat_{k}", "numerator": own["all_pass"]["passed"],
                       "denominator": tasks, "value": hat["value"], "ci95": own["all_pass"]["ci95"]},
        "flipped": {"label": "instances whose trials disagree", "key": "flips", "numerator": flipped,
                    "denominator": tasks, "value": round(flipped / tasks, 6), "ci95": own["flaky"]["ci95"]},
    }
