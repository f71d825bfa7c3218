"""Run-page plots of the issue-resolution suite (the seam of :mod:`pytest_mobilebench.report.page`).

The MobileDev-Bench stratified tables (seed 000, section 5.3 and Appendix E): resolution rate by repository,
framework, difficulty, category, gold file-count bin, gold changed-line bin and artifact combination, each
bar with its Wilson 95% interval. With a ``per_model`` table (``{model: {"by_repository": ...}}``) the models
stand side by side; otherwise one series pools every model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import CHANGED_LINES_BINS, FILE_COUNT_BINS
from pytest_mobilebench.report.page import FigureSpec, rate_series

__all__ = ["STRATA", "plots"]

#: (table key, title, fixed category order or None for the table's own order)
STRATA: tuple[tuple[str, str, tuple[str, ...] | None], ...] = (
    ("by_repository", "Resolution rate by repository", None),
    ("by_framework", "Resolution rate by framework", None),
    ("by_difficulty", "Resolution rate by difficulty", ("easy", "medium", "hard", "unknown")),
    ("by_category", "Resolution rate by category", None),
    ("by_gold_file_count", "Resolution rate by gold file count", FILE_COUNT_BINS),
    ("by_gold_changed_lines", "Resolution rate by gold changed lines", CHANGED_LINES_BINS),
    ("by_artifact_combination", "Resolution rate by artifact combination", None),
)


def _categories(tables: Sequence[Mapping[str, Any]], order: tuple[str, ...] | None) -> tuple[str, ...]:
    present = {name for t in tables for name in t}
    if order is None:
        return tuple(sorted(present))
    return tuple(c for c in order if c in present) + tuple(sorted(present - set(order)))


def plots(table: Mapping[str, Any]) -> list[FigureSpec]:
    """One figure per non-empty stratum table of ``table`` (the suite's ``summarize()`` output)."""
    per_model = table.get("per_model") if isinstance(table.get("per_model"), Mapping) else None
    sources = dict(per_model) if per_model else {"all models": table}
    figures = []
    for key, title, order in STRATA:
        tables = {name: src.get(key) or {} for name, src in sources.items()}
        categories = _categories(list(tables.values()), order)
        if not categories:
            continue
        series = tuple(
            rate_series(name, [(t[c]["resolved"], t[c]["total"]) if c in t else None for c in categories])
            for name, t in tables.items()
        )
        figures.append(
            FigureSpec(
                key,
                title,
                categories,
                series,
                ylabel="resolved / evaluated",
                note="bars: Wilson 95% intervals; labels: resolved/evaluated",
            )
        )
    return figures
