"""The run summary (``--mb-summary``, default ``reports/summary.json``), computed purely from results.

Shape (all plain JSON)::

    {
      "run_id": str, "suites": [str], "models": [str],
      "headlines": {suite: block},  # the honest per-suite figures, see pytest_mobilebench.report.headline
      "selected": int,              # items collected after -k / -m, invalid instances included (all suites)
      "invalid_instances": int,     # manifest entries that failed validation (the run exits non-zero)
      "total": int,                 # items evaluated, missing predictions included (they count as failures)
      "resolved": int,              # items whose result has passed == True (infrastructure results excluded)
      "resolution_rate": float,     # resolved / (total - infra_errors): infrastructure is counted apart
      "resolution_rate_over_all": float,  # resolved / selected: invalid, infra and not-run items as failures
      "infra_errors": int,          # infrastructure results (retryable; never cached, retried next run)
      "missing_predictions": int, "cached": int, "not_run": int,
      "by_reason": {reason: int},
      "by_model": {model: {"total", "resolved", "resolution_rate", "infra_errors", "cached", "by_reason"}},
      "instances": {key: {"instance_id", "model_name_or_path", "suite", "reason", "passed", ...properties}},
      "suite_tables": {suite: <that suite's summarize(results)>},
      "manifest_errors": [str],
      "unmatched_predictions": [str],       # predicted ids that match no selected instance
      "unmatched_suggestions": {id: str}    # for those, the closest selected instance id (a likely typo)
    }

The top-level counts pool every suite; each suite's own headline (NavPassRate, Pass@1 ...) is in
``headlines``. ``key`` is the instance id when the run has one model, ``instance_id@model`` otherwise.
Rates over an empty denominator are 0.0 here (the headlines say ``None``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_mobilebench.report.headline import headlines, is_infra
from pytest_mobilebench.report.runs import not_run_and_unmatched
from pytest_mobilebench.suggest import closest

if TYPE_CHECKING:
    from pytest_mobilebench.state import MobileBenchState

__all__ = ["build_summary", "headline"]


def headline(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``total``, ``resolved``, ``resolution_rate`` (over eligible), ``infra_errors``, ``cached``, ``by_reason``."""
    total = len(results)
    infra = sum(1 for r in results if is_infra(r))
    resolved = sum(1 for r in results if r.get("passed") is True and not is_infra(r))
    reasons = Counter(str(r.get("reason")) for r in results)
    eligible = total - infra
    return {
        "total": total,
        "resolved": resolved,
        "resolution_rate": round(resolved / eligible, 6) if eligible else 0.0,
        "infra_errors": infra,
        "cached": sum(1 for r in results if r.get("cached")),
        "by_reason": dict(sorted(reasons.items())),
    }


def _instances(results: Sequence[Mapping[str, Any]], one_model: bool) -> dict[str, Any]:
    instances: dict[str, Any] = {}
    for r in sorted(results, key=lambda r: (str(r.get("instance_id")), str(r.get("model_name_or_path")))):
        key = str(r["instance_id"]) if one_model else f"{r['instance_id']}@{r.get('model_name_or_path')}"
        entry = {k: v for k, v in r.items() if k not in ("properties",)}
        for name, value in r.get("properties", {}).items():
            entry.setdefault(name, value)  # the result's own structured fields win over flat properties
        instances[key] = entry
    return instances


def build_summary(
    results: Sequence[Mapping[str, Any]],
    *,
    run_id: str,
    suite_tables: Mapping[str, Any],
    manifest_errors: Sequence[str] = (),
    unmatched_predictions: Sequence[str] = (),
    selected: Mapping[str, int] | None = None,
    invalid: Mapping[str, int] | None = None,
    instance_ids: Iterable[str] = (),
) -> dict[str, Any]:
    """Assemble the summary document described in the module docstring.

    Args:
        results: every finished result (plain dicts from the suites, with the plugin's fields).
        run_id: the run's id.
        suite_tables: ``{suite: summarize(...)}``.
        manifest_errors: one message per invalid instance.
        unmatched_predictions: predicted instance ids that match no selected instance.
        selected: items collected per suite (None: unknown, then evaluated + invalid).
        invalid: invalid instances per suite (default: ``len(manifest_errors)`` under suite ``"unknown"``).
        instance_ids: every selected instance id, for "did you mean" on unmatched predictions.
    """
    if invalid is None:
        invalid = {"unknown": len(manifest_errors)} if manifest_errors else {}
    blocks = headlines(results, selected=selected, invalid=invalid, tables=suite_tables)
    models = sorted({str(r.get("model_name_or_path")) for r in results})
    by_model = {model: headline([r for r in results if str(r.get("model_name_or_path")) == model]) for model in models}
    pooled = headline(results)
    n_selected = sum(b["selected"] for b in blocks.values())
    known = set(instance_ids) | {str(r.get("instance_id")) for r in results}
    suggestions = {iid: match for iid in unmatched_predictions if (match := closest(iid, known))}
    return {
        "run_id": run_id,
        "suites": sorted({str(r.get("suite")) for r in results}),
        "models": models,
        "headlines": blocks,
        "selected": n_selected,
        "invalid_instances": sum(b["invalid"] for b in blocks.values()),
        **pooled,
        "resolution_rate_over_all": round(pooled["resolved"] / n_selected, 6) if n_selected else 0.0,
        "missing_predictions": sum(b["missing_predictions"] for b in blocks.values()),
        "not_run": sum(b["not_run"] for b in blocks.values()),
        "by_model": by_model,
        "instances": _instances(results, len(models) <= 1),
        "suite_tables": dict(suite_tables),
        "manifest_errors": list(manifest_errors),
        "unmatched_predictions": sorted(unmatched_predictions),
        "unmatched_suggestions": dict(sorted(suggestions.items())),
    }


def make_summary(state: MobileBenchState, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Build the run summary from the results gathered on the controller."""
    tables: dict[str, Any] = {}
    for suite_name in sorted({str(r.get("suite")) for r in state.results}):
        suite = state.suites.get(suite_name)
        rows = [r for r in state.results if r.get("suite") == suite_name]
        if suite is not None:
            try:
                tables[suite_name] = suite.summarize(rows, options=options)
            except Exception as exc:  # noqa: BLE001 - a table must never cost the summary itself
                tables[suite_name] = {"error": f"{type(exc).__name__}: {exc}"}
    evaluated = {str(r.get("instance_id")) for r in state.results}
    real = state.predictions is not None and not state.predictions.pseudo
    not_run, unmatched = not_run_and_unmatched(  # interrupted items are not_run, never unmatched predictions
        [iid for _, iid in state.collected.values()], evaluated, state.predictions.instance_ids if real else ()
    )
    selected: dict[str, int] = {}
    for suite_name, _ in state.collected.values():
        selected[suite_name] = selected.get(suite_name, 0) + 1
    invalid: dict[str, int] = {}
    for suite_name in state.invalid.values():
        invalid[suite_name] = invalid.get(suite_name, 0) + 1
    return build_summary(
        state.results,
        run_id=state.run_id,
        suite_tables=tables,
        manifest_errors=sorted(set(state.manifest_errors)),
        unmatched_predictions=unmatched,
        selected=selected or None,
        invalid=invalid,
        instance_ids=[iid for _, iid in state.collected.values()],
    ) | {"not_run_instances": not_run}
