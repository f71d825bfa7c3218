"""Run-page plots of the device-repair suite (the seam of :mod:`pytest_mobilebench.report.page`).

From the suite's ``summarize()`` table (:func:`pytest_mobilebench.suites.device_repair.summary.summarize`;
AppEval, seed 003): Pass@1 micro (resolved / eligible records) and macro (the mean of per-repository
Pass@1), Pass@1 per model and per repository with Wilson 95% intervals, the infrastructure outcomes by kind
(not the model's failures) and the failure causes of eligible records that did not pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_mobilebench.report.page import FigureSpec, Series, rate_series

__all__ = ["plots"]


def _strata(rows: Mapping[str, Any]) -> tuple[tuple[str, ...], list[tuple[int, int] | None]]:
    names = tuple(rows)
    return names, [(int(rows[n]["resolved"]), int(rows[n]["total"])) for n in names]


def _counts(key: str, title: str, counts: Mapping[str, Any], note: str) -> list[FigureSpec]:
    if not counts:
        return []
    names = tuple(counts)
    return [
        FigureSpec(
            key,
            title,
            names,
            (Series("records", tuple(float(counts[n]) for n in names), labels=tuple(str(counts[n]) for n in names)),),
            ylabel="records",
            ylim=None,
            note=note,
        )
    ]


def plots(table: Mapping[str, Any]) -> list[FigureSpec]:
    """Pass@1 micro / macro, per model, per repository; infrastructure kinds; failure causes."""
    head = table.get("headline") or {}
    figures = []
    if head.get("denominator"):
        macro = table.get("pass_at_1_macro")
        figures.append(
            FigureSpec(
                "pass_at_1",
                "Pass@1 micro and macro",
                ("micro", "macro"),
                (
                    Series(
                        "Pass@1",
                        (head.get("value"), macro),
                        ((float(head["ci95"][0]), float(head["ci95"][1])), None) if head.get("ci95") else (),
                        (f"{head['numerator']}/{head['denominator']}", f"{macro:.3f}" if macro is not None else ""),
                    ),
                ),
                ylabel="Pass@1",
                note="micro: resolved / eligible records (Wilson 95%); macro: mean of the "
                "repositories' Pass@1; infrastructure outcomes excluded",
            )
        )
    for key, title in (("by_model", "Pass@1 per model"), ("by_repository", "Pass@1 per repository")):
        rows = table.get(key) or {}
        if rows:
            names, cells = _strata(rows)
            figures.append(
                FigureSpec(
                    key,
                    title,
                    names,
                    (rate_series("Pass@1", cells),),
                    ylabel="resolved / eligible",
                    note="bars: Wilson 95% intervals; labels: resolved/eligible",
                )
            )
    figures += _counts(
        "infra_by_kind",
        "Infrastructure outcomes by kind",
        table.get("infra_by_kind") or {},
        "not the model's failures: excluded from every Pass@1 denominator",
    )
    figures += _counts(
        "failure_causes", "Failure causes", table.get("failure_causes") or {}, "why eligible records did not pass"
    )
    return figures
