"""The device-repair run summary, pure (AppEval, seed 003; SPEC section 2 "Grading a candidate").

Pass@1 = resolved / eligible, where eligible excludes infrastructure outcomes (``retryable`` results),
which are reported apart by kind. Micro over records, macro over repositories (the mean of per-repository
Pass@1), by construction source and by fix-size bins (changed lines of p_f); Hit@k / Recall@k from the
predictions' ``ranked_files``; Fleiss' kappa of pass/fail across the models of the run, over the records
every model has an eligible result for.
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

__all__ = ["K_VALUES", "agreement", "summarize"]

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
        return {"models": models, "tasks": len(tasks), "fleiss_kappa": None,
                "note": "needs at least two models with eligible results on the same records"}
    table = [[sum(v.values()), len(v) - sum(v.values())] for v in tasks.values()]
    return {"models": models, "tasks": len(tasks), "fleiss_kappa": round(fleiss_kappa(table), 6),
            "note": "pass/fail per record, records every model has an eligible result for"}


def _localization(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    with_loc = [r for r in rows if isinstance(r.get("localization"), Mapping)]
    out: dict[str, Any] = {"records": len(with_loc)}
    for k in K_VALUES:
        out[f"hit@{k}"] = round(mean([float(r["localization"][f"hit@{k}"]) for r in with_loc]), 6)
        out[f"recall@{k}"] = round(mean([float(r["localization"][f"recall@{k}"]) for r in with_loc]), 6)
    return out


def summarize(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The suite's summary tables; ``headline`` is Pass@1 with its Wilson 95% interval."""
    rows = [dict(r, resolved=bool(r.get("passed"))) for r in results]
    eligible = [r for r in rows if not r.get("retryable")]
    infra = [r for r in rows if r.get("retryable")]
    resolved = sum(1 for r in eligible if r["resolved"])
    per_repo = stratify(eligible, lambda r: r.get("repo", "unknown"))
    lo, hi = wilson_interval(resolved, len(eligible))
    return {
        "headline": {
            "label": "Pass@1",
            "numerator": resolved,
            "denominator": len(eligible),
            "value": pass_at_1(resolved, len(eligible)) if eligible else None,
            "ci95": [lo, hi],
            "note": f"resolved / eligible records; {len(infra)} infrastructure outcome(s) excluded and listed in infra_by_kind",
        },
        "pass_at_1_macro": round(mean([s["rate"] for s in per_repo.values()]), 6) if per_repo else None,
        "by_repository": per_repo,
        "by_construction": stratify(eligible, lambda r: r.get("construction", "unknown")),
        "by_fix_size": stratify([r for r in eligible if "fix_lines" in r], lambda r: changed_lines_bin(int(r["fix_lines"]))),
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
    }
