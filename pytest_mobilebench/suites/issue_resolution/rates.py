"""The issue-resolution headline: resolution rate over eligible items, with infrastructure kept visible
(issue 17, item 5): the items it left out, named, and candidates whose items end as infrastructure far
more often than the reference's. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.predictions import GOLD
from pytest_mobilebench.report.headline import is_unavailable
from pytest_mobilebench.suites.declared.issue_resolution import HEADLINE

__all__ = ["headline", "infra_callouts"]


def headline(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Resolution rate over the eligible items (infrastructure and ``environment_unavailable`` outcomes excluded,
    counted apart and named).

    Returns ``{"label", "kind", "numerator", "denominator", "value", "ci95", "note", "infra", "infra_left_out",
    "infra_callouts", "environment_unavailable", "unharnessed"}`` (``environment_unavailable``: ``"model: instance:
    cause: subject"`` lines; ``unharnessed``: ``"model: instance: capability, ..."`` of runs graded without the
    harness their runner needs, trusted code on a runtime lacking the capability); ``value`` is None when nothing
    was eligible; ``ci95`` is the Wilson 95% interval (:func:`pytest_mobilebench.metrics.wilson_interval`);
    ``infra_left_out`` lists the ``model: instance`` items infrastructure left out (after their retries);
    ``infra_callouts`` is :func:`infra_callouts`.
    """
    infra_rows = [r for r in results if r.get("retryable")]
    unavailable = [r for r in results if is_unavailable(r)]
    eligible = len(results) - len(infra_rows) - len(unavailable)
    resolved = sum(1 for r in results if r.get("passed"))
    callouts = infra_callouts(results)
    note = "resolved / evaluated items without an infrastructure error (infra errors are counted apart)"
    if infra_rows:
        note += f"; infrastructure left {len(infra_rows)} item(s) out"
    if unavailable:
        note += (
            f"; {len(unavailable)} item(s) left out: their dependencies cannot be fetched here "
            "(environment_unavailable)"
        )
    note += "".join(f"; {c['model']}: infra on {c['infra']}/{c['items']} items, the reference on {c['reference_infra']}"
                    for c in callouts)  # fmt: skip
    unharnessed = [r for r in results if _unharnessed(r)]
    if unharnessed:  # trusted code graded without the harness its runner needs (issue 32, item 1)
        note += f"; {len(unharnessed)} item(s) ran unharnessed: the runtime lacks a capability (see 'unharnessed')"
    return {
        "label": HEADLINE.label,
        "kind": HEADLINE.kind,
        "numerator": resolved,
        "denominator": eligible,
        "value": (resolved / eligible) if eligible else None,
        "ci95": list(wilson_interval(resolved, eligible)) if eligible else None,
        "note": note,
        "infra": len(infra_rows),
        "infra_left_out": sorted(f"{r.get('model_name_or_path')}: {r.get('instance_id')}" for r in infra_rows),
        "infra_callouts": callouts,
        "environment_unavailable": sorted(
            f"{r.get('model_name_or_path')}: {r.get('instance_id')}: {_missing(r)}" for r in unavailable
        ),
        "unharnessed": sorted(
            f"{r.get('model_name_or_path')}: {r.get('instance_id')}: {', '.join(_unharnessed(r))}" for r in unharnessed
        ),
    }


def _unharnessed(result: Mapping[str, Any]) -> list[str]:
    """The capabilities a result's run lacked (its ``unharnessed:<capability>`` flags)."""
    return [f.partition(":")[2] for f in result.get("flags") or () if str(f).startswith("unharnessed:")]


def _missing(result: Mapping[str, Any]) -> str:
    found = (result.get("properties") or {}).get("environment_unavailable") or {}
    return f"{found.get('cause', '?')}: {found.get('subject', '?')}" if isinstance(found, Mapping) else str(found)


def infra_callouts(results: Sequence[Mapping[str, Any]], reference: str = GOLD) -> list[dict[str, Any]]:
    """Models whose items end as infrastructure far more often than the reference's (``gold``) on the same
    instances of the same run: ``infra >= max(2, 2 * reference_infra + 1)``. A candidate that makes the
    harness fail (to leave the denominator) shows here. Returns ``[{"model", "items", "infra",
    "reference_infra"}]``, by model name; empty without reference results."""
    ref = {
        str(r.get("instance_id")): bool(r.get("retryable")) for r in results if r.get("model_name_or_path") == reference
    }
    found: list[dict[str, Any]] = []
    for model in sorted({str(r.get("model_name_or_path")) for r in results} - {reference}):
        rows = [r for r in results if str(r.get("model_name_or_path")) == model and str(r.get("instance_id")) in ref]
        infra = sum(1 for r in rows if r.get("retryable"))
        ref_infra = sum(1 for r in rows if ref[str(r.get("instance_id"))])
        if ref and infra >= max(2, 2 * ref_infra + 1):
            found.append({"model": model, "items": len(rows), "infra": infra, "reference_infra": ref_infra})
    return found
