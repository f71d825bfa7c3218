"""The device-repair run summary, pure (AppEval, seed 003; SPEC section 2 "Grading a candidate").

Pass@1 = resolved / eligible, strict: a target that passed only on a retry (``passed_flaky``,
:mod:`.flake`) is not counted in the headline and is listed apart (``passed_flaky``); the headline's
``lenient`` entry counts it (the peers' "passed on any attempt"). Eligible excludes infrastructure outcomes
(``retryable`` results), which are reported apart by kind. Micro over records, macro over repositories (the mean of
per-repository Pass@1), by construction source and by fix-size bins (changed lines of p_f); Hit@k / Recall@k from the
predictions' ``ranked_files``; Fleiss' kappa of pass/fail across the models of the run, over the records
every model has an eligible result for.

Persistent infrastructure stays visible: every item still infrastructure after its retries is listed
(``infra_items``), the headline's note says how many it left out and gives the rate over all selected
items, and ``infra_rates`` compares each model's infrastructure rate with the reference's on the same
devices (the gold rows of the run, else the reference states run inside the candidates' items): a model
with at least 2 infrastructure items and a rate of at least twice the reference's and 0.2 above it is
named in ``infra_callouts`` (a candidate that provokes "device" failures the reference does not).
Devices quarantined because an attempt left them damaged beyond restore are listed in ``quarantined_devices``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import (
    changed_lines_bin,
    fleiss_kappa,
    mean,
    pass_at_1,
    stratify,
    wilson_interval,
)
from pytest_mobilebench.suites.declared.device_repair import HEADLINE

__all__ = ["K_VALUES", "agreement", "infra_rates", "quarantined_devices", "summarize"]

#: the k of Hit@k / Recall@k reported
K_VALUES = (1, 3, 5)


def agreement(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Fleiss' kappa of pass/fail across models over the records every model has an eligible result for."""
    models = sorted({str(r.get("model_name_or_path", "")) for r in rows})
    by_task: dict[str, dict[str, bool]] = defaultdict(dict)
    for r in rows:
        by_task[str(r.get("instance_id", ""))][str(r.get("model_name_or_path", ""))] = bool(r.get("passed"))
    tasks = {t: v for t, v in by_task.items() if len(v) == len(models)}
    if len(models) < 2 or not tasks:
        return {
            "models": models,
            "tasks": len(tasks),
            "fleiss_kappa": None,
            "note": "needs at least two models with eligible results on the same records",
        }
    table = [[sum(v.values()), len(v) - sum(v.values())] for v in tasks.values()]
    return {
        "models": models,
        "tasks": len(tasks),
        "fleiss_kappa": round(fleiss_kappa(table), 6),
        "note": "pass/fail per record, records every model has an eligible result for",
    }


def _localization(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    with_loc = [r for r in rows if isinstance(r.get("localization"), Mapping)]
    out: dict[str, Any] = {"records": len(with_loc)}
    for k in K_VALUES:
        out[f"hit@{k}"] = round(mean([float(r["localization"][f"hit@{k}"]) for r in with_loc]), 6)
        out[f"recall@{k}"] = round(mean([float(r["localization"][f"recall@{k}"]) for r in with_loc]), 6)
    return out


def _rate(infra: int, total: int) -> dict[str, Any]:
    lo, hi = wilson_interval(infra, total)
    return {"infra": infra, "items": total, "rate": round(infra / total, 6) if total else None, "ci95": [lo, hi]}


def _reference_baseline(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The reference's infrastructure rate: gold rows (``accepted`` present), else the final attempt of each
    ``reference`` state run inside a candidate's item."""
    gold = [r for r in rows if "accepted" in r]
    if gold:
        return {**_rate(sum(1 for r in gold if r.get("retryable")), len(gold)), "source": "gold items"}
    finals: list[bool] = []
    for r in rows:
        attempts = [a for a in r.get("attempt_log") or [] if a.get("state") == "reference"]
        if attempts:
            finals.append(bool(attempts[-1].get("infra_kind")))
    return {**_rate(sum(finals), len(finals)), "source": "reference states inside candidate items"}


def infra_rates(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per model ``{"infra", "items", "rate", "ci95"}``, the reference's baseline and the callouts (see the
    module docstring for the rule)."""
    models = sorted({str(r.get("model_name_or_path", "")) for r in rows if "accepted" not in r})
    per_model = {
        m: _rate(
            sum(1 for r in rows if r.get("model_name_or_path") == m and r.get("retryable")),
            sum(1 for r in rows if r.get("model_name_or_path") == m),
        )
        for m in models
    }
    baseline = _reference_baseline(rows)
    base_rate = baseline["rate"] or 0.0
    callouts = []
    for model, rate in per_model.items():
        value = rate["rate"] or 0.0
        if rate["infra"] >= 2 and value >= max(2 * base_rate, base_rate + 0.2):
            callouts.append(
                f"{model}: {rate['infra']}/{rate['items']} items infrastructure, the reference "
                f"{baseline['infra']}/{baseline['items']} ({baseline['source']}) on the same devices"
            )
    return {"by_model": per_model, "reference": baseline, "callouts": callouts}


def quarantined_devices(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The devices the run quarantined: ``[{"serial", "instance_id", "model_name_or_path", "state", "charged_to",
    "remaining"}]``; ``charged_to`` is ``candidate`` (a ``device_damage`` policy violation) or ``infrastructure``."""
    return [
        {
            "serial": q.get("serial"),
            "instance_id": r.get("instance_id"),
            "model_name_or_path": r.get("model_name_or_path"),
            "state": q.get("state"),
            "charged_to": "candidate" if r.get("policy_kind") == "device_damage" else "infrastructure",
            "remaining": [*(q.get("remaining") or []), *(q.get("unhealthy") or [])][:5],
        }
        for r in rows
        if isinstance(q := r.get("quarantine"), Mapping)
    ]


def summarize(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The suite's summary tables; ``headline`` is Pass@1 with its Wilson 95% interval."""
    rows = [dict(r, resolved=bool(r.get("passed"))) for r in results]
    eligible = [r for r in rows if not r.get("retryable")]
    infra = [r for r in rows if r.get("retryable")]
    from pytest_mobilebench.suites.device_repair.flake import strict_and_lenient

    strict, lenient = strict_and_lenient(eligible)
    flaky = [r for r in eligible if r.get("passed") and r.get("passed_flaky")]
    resolved = strict["numerator"]  # the headline is strict: a pass only on a retry is reported apart
    per_repo = stratify(eligible, lambda r: r.get("repo", "unknown"))
    lo, hi = wilson_interval(resolved, len(eligible))
    rates = infra_rates(rows)
    from pytest_mobilebench.agents.records import agent_table

    agents = agent_table(results)  # the live items: how the agent ended, calls, tokens, model time, cost
    note = (
        f"resolved / eligible records, strict: {len(flaky)} target(s) that passed only on a retry "
        f"(passed_flaky) not counted, the lenient rate counts them; {len(infra)} item(s) left out as "
        "infrastructure after their retries "
        f"(listed in infra_items); over all selected {resolved}/{len(rows)}"
    )
    if rates["callouts"]:
        note += "; infrastructure far above the reference's: " + "; ".join(rates["callouts"])
    quarantined = quarantined_devices(rows)
    if quarantined:
        note += f"; {len(quarantined)} device(s) quarantined, listed in quarantined_devices"
    return {
        "headline": {
            "label": HEADLINE.label,
            "kind": HEADLINE.kind,
            "numerator": resolved,
            "denominator": len(eligible),
            "value": pass_at_1(resolved, len(eligible)) if eligible else None,
            "ci95": [lo, hi],
            "note": note,
            "lenient": {"label": f"{HEADLINE.label} lenient (a pass on a retry counts)", **lenient},
        },
        "passed_flaky": [
            {
                "instance_id": r.get("instance_id"),
                "model_name_or_path": r.get("model_name_or_path"),
                "attempts": r.get("attempts", 0),
                "test_attempts": r.get("test_attempts") or {},
            }
            for r in flaky
        ],
        "infra_items": [
            {
                "instance_id": r.get("instance_id"),
                "model_name_or_path": r.get("model_name_or_path"),
                "infra_kind": r.get("infra_kind"),
                "attempts": r.get("attempts", 0),
                "detail": str(r.get("detail", ""))[:200],
            }
            for r in infra
        ],
        "infra_rates": rates["by_model"],
        "infra_reference": rates["reference"],
        "infra_callouts": rates["callouts"],
        "quarantined_devices": quarantined,
        "policy_violations": dict(
            sorted(
                Counter(
                    str(r.get("policy_kind") or "unknown") for r in rows if r.get("reason") == "policy_violation"
                ).items()
            )
        ),
        "pass_at_1_macro": round(mean([s["rate"] for s in per_repo.values()]), 6) if per_repo else None,
        "by_repository": per_repo,
        "by_construction": stratify(eligible, lambda r: r.get("construction", "unknown")),
        "by_fix_size": stratify(
            [r for r in eligible if "fix_lines" in r], lambda r: changed_lines_bin(int(r["fix_lines"]))
        ),
        "by_model": stratify(eligible, lambda r: r.get("model_name_or_path", "")),
        "infra_by_kind": dict(sorted(Counter(str(r.get("infra_kind") or "unknown") for r in infra).items())),
        "failure_causes": dict(sorted(Counter(str(r["cause"]) for r in eligible if r.get("cause")).items())),
        "policy_flags": dict(sorted(Counter(f for r in rows for f in r.get("flags") or []).items())),
        "localization": _localization(eligible),
        "agreement": agreement(eligible),
        "acceptance": {
            "records": sum(1 for r in rows if "accepted" in r),
            "accepted": sum(1 for r in rows if r.get("accepted")),
        },
        **({"agent": agents} if agents is not None else {}),
    }
