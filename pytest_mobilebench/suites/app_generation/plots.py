"""Run-page plots of the app-generation suite (the seam of :mod:`pytest_mobilebench.report.page`).

From the suite's ``summarize()`` table (MobileForge, seed 002): NavPassRate by spec category (pooled passed /
total specs, Wilson 95%), the C1-C4 failure-class proportions with their Wilson 95% intervals (seed 002,
Table 4), and the five axes per model, models side by side: build rate and NavPassRate (functionality),
Borda (visual), ReuseRate and ColorConsistency (maintainability) on one axis that grows to fit
(ReuseRate may exceed 1), and tokens / cost per app
(efficiency) on their own axis.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_mobilebench.report.page import FigureSpec, Series, rate_series

__all__ = ["plots"]

_CATEGORIES = ("page_existence", "tab_navigation", "parent_child")
_CLASSES = ("C1", "C2", "C3", "C4")
_AXES = (
    ("build_rate", "Build"),
    ("nav_pass_rate", "NavPassRate"),
    ("borda", "Visual Borda"),
    ("reuse_rate", "ReuseRate"),
    ("color_consistency", "ColorConsistency"),
)


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def plots(table: Mapping[str, Any]) -> list[FigureSpec]:
    """NavPassRate by category, C1-C4 proportions, the axes per model and efficiency per model."""
    models: Mapping[str, Mapping[str, Any]] = table.get("models") or {}
    if not models:
        return []
    nav = tuple(
        rate_series(
            model,
            [
                ((row.get(f"nav_rate_{c}") or {}).get("passed", 0), (row.get(f"nav_rate_{c}") or {}).get("total", 0))
                for c in _CATEGORIES
            ],
        )
        for model, row in models.items()
    )
    classes = tuple(
        rate_series(
            model,
            [
                (
                    (row.get("failure_classes") or {}).get("counts", {}).get(c, 0),
                    (row.get("failure_classes") or {}).get("n", 0),
                )
                for c in _CLASSES
            ],
        )
        for model, row in models.items()
    )
    axes = tuple(Series(model, tuple(_num(row.get(key)) for key, _ in _AXES)) for model, row in models.items())
    efficiency = tuple(
        Series(model, tuple(_num(row.get(k)) for k in ("input_tokens_mean", "output_tokens_mean")))
        for model, row in models.items()
    )
    return [
        FigureSpec(
            "nav_by_category",
            "NavPassRate by spec category",
            _CATEGORIES,
            nav,
            ylabel="passed / specs",
            note="pooled over the model's apps; bars: Wilson 95% intervals",
        ),
        FigureSpec(
            "failure_classes",
            "Failure classes C1-C4 among failed interactive specs",
            _CLASSES,
            classes,
            ylabel="proportion",
            note="C1 blank start, C2 wrong route, C3 unreachable, C4 no effect; Wilson 95%",
        ),
        FigureSpec(
            "axes_by_model",
            "The axes per model",
            tuple(label for _, label in _AXES),
            axes,
            ylabel="score",
            note="build rate and NavPassRate over evaluated apps; Borda from the visual ranking; maintainability means",
        ),
        FigureSpec(
            "efficiency_by_model",
            "Efficiency: tokens per app",
            ("input tokens", "output tokens"),
            efficiency,
            ylabel="tokens (mean per app)",
            ylim=None,
            note="from the predictions' run records; cost in summary.json when the price table has the model",
        ),
    ]
