"""Run-page plots of the planner suite (the seam of :mod:`pytest_mobilebench.report.page`).

From the suite's ``summarize()`` table (:func:`pytest_mobilebench.suites.planner.report.summarize_results`):
per model, the success rate of each dimension (Basic Tool Use, Sub-agent Collaboration, Memory Usage, Skill
Usage; MobilePA-Bench, seed 004, Table 3) and of each difficulty bucket, tasks passed / tasks graded with
Wilson 95% intervals; a dimension or bucket without a task in the selection has no bar.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_mobilebench.report.page import FigureSpec, rate_series
from pytest_mobilebench.suites.planner.report import WEIGHTS

__all__ = ["plots"]

_DIMENSION_NAMES = {
    "basic_tool_use": "basic",
    "subagent_collaboration": "sub-agent",
    "memory_usage": "memory",
    "skill_usage": "skill",
}


def _cells(rows: Mapping[str, Any], keys: tuple[str, ...]) -> list[tuple[int, int] | None]:
    out: list[tuple[int, int] | None] = []
    for key in keys:
        row = rows.get(key)
        out.append((int(row["passed"]), int(row["total"])) if isinstance(row, Mapping) and row.get("total") else None)
    return out


def plots(table: Mapping[str, Any]) -> list[FigureSpec]:
    """Success per dimension and per bucket, one series per model."""
    models: Mapping[str, Mapping[str, Any]] = table.get("by_model") or {}
    if not models:
        return []
    dims = tuple(WEIGHTS)
    buckets = tuple(sorted({b for t in models.values() for b in (t.get("by_bucket") or {})}))
    figures = [
        FigureSpec(
            "success_by_dimension",
            "Success per dimension",
            tuple(_DIMENSION_NAMES[d] for d in dims),
            tuple(rate_series(m, _cells(t.get("dimensions") or {}, dims)) for m, t in models.items()),
            ylabel="tasks passed / graded",
            note="Overall = 0.50 basic + 0.10 sub-agent + 0.20 memory + 0.20 skill (MobilePA-Bench); "
            "no bar: no task of that dimension selected; bars: Wilson 95%",
        )
    ]
    if buckets:
        figures.append(
            FigureSpec(
                "success_by_bucket",
                "Success per bucket",
                buckets,
                tuple(rate_series(m, _cells(t.get("by_bucket") or {}, buckets)) for m, t in models.items()),
                ylabel="tasks passed / graded",
                note="bars: Wilson 95% intervals; labels: passed/graded",
            )
        )
    return figures
