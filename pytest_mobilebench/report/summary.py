"""The run summary (``--mb-summary``, default ``reports/summary.json``), computed purely from results.

Shape (all plain JSON)::

    {
      "run_id": str, "suites": [str], "models": [str],
      "total": int,                 # items evaluated, missing predictions included (they count as unresolved)
      "resolved": int,              # items whose result has passed == True
      "resolution_rate": float,     # resolved / total (0.0 when total == 0)
      "infra_errors": int,          # results whose reason is an infrastructure reason (counted apart)
      "by_reason": {reason: int},
      "by_model": {model: {"total", "resolved", "resolution_rate", "by_reason"}},
      "instances": {key: {"instance_id", "model_name_or_path", "suite", "reason", "passed", ...properties}},
      "suite_tables": {suite: <that suite's summarize(results)>},
      "manifest_errors": [str], "unmatched_predictions": [str]
    }

``key`` is the instance id when the run has one model, ``instance_id@model`` otherwise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.states import INFRA_REASONS

__all__ = ["build_summary", "headline"]

_INFRA_VALUES = frozenset(r.value for r in INFRA_REASONS)


def headline(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``total``, ``resolved``, ``resolution_rate``, ``infra_errors`` and ``by_reason`` of a result list."""
    total = len(results)
    resolved = sum(1 for r in results if r.get("passed"))
    reasons = Counter(str(r.get("reason")) for r in results)
    return {
        "total": total,
        "resolved": resolved,
        "resolution_rate": round(resolved / total, 6) if total else 0.0,
        "infra_errors": sum(n for reason, n in reasons.items() if reason in _INFRA_VALUES),
        "by_reason": dict(sorted(reasons.items())),
    }


def build_summary(
    results: Sequence[Mapping[str, Any]],
    *,
    run_id: str,
    suite_tables: Mapping[str, Any],
    manifest_errors: Sequence[str] = (),
    unmatched_predictions: Sequence[str] = (),
) -> dict[str, Any]:
    """Assemble the summary document described in the module docstring."""
    models = sorted({str(r.get("model_name_or_path")) for r in results})
    one_model = len(models) <= 1
    instances: dict[str, Any] = {}
    for r in sorted(results, key=lambda r: (str(r.get("instance_id")), str(r.get("model_name_or_path")))):
        key = str(r["instance_id"]) if one_model else f"{r['instance_id']}@{r.get('model_name_or_path')}"
        entry = {k: v for k, v in r.items() if k not in ("properties",)}
        for name, value in r.get("properties", {}).items():
            entry.setdefault(name, value)  # the result's own structured fields win over flat properties
        instances[key] = entry
    by_model = {
        model: headline([r for r in results if str(r.get("model_name_or_path")) == model]) for model in models
    }
    return {
        "run_id": run_id,
        "suites": sorted({str(r.get("suite")) for r in results}),
        "models": models,
        **headline(results),
        "by_model": by_model,
        "instances": instances,
        "suite_tables": dict(suite_tables),
        "manifest_errors": list(manifest_errors),
        "unmatched_predictions": sorted(unmatched_predictions),
    }
