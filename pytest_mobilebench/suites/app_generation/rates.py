"""App generation's headline: NavPassRate pooled over every navigation spec of the apps evaluated without an
infrastructure error, an app that did not build counting all its specs as failed, and the apps built beside it
(MobileForge, seed 002: build and navigation axes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.suites.declared import app_generation as surface

__all__ = ["headline"]


def _spec_outcomes(result: Mapping[str, Any]) -> tuple[int, int]:
    """(passed, specs) of one evaluated app: its navigation records when its specs ran, else every spec of the
    app counted as failed (it did not build, or had no project: ``nav_specs``, the manifest's spec count)."""
    nav = result.get("nav") or []
    if nav:
        return sum(1 for n in nav if n.get("passed")), len(nav)
    specs = result.get("nav_specs", result.get("properties", {}).get("nav_total", 0))
    return 0, specs if isinstance(specs, int) and not isinstance(specs, bool) and specs > 0 else 0


def headline(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """NavPassRate pooled over every navigation spec of the apps evaluated without an infrastructure error (an
    app that did not build counts all its specs as failed: never out of the rate), with the apps built beside
    it (MobileForge, seed 002: build and navigation axes).

    Returns ``{"label", "kind", "numerator", "denominator", "value", "ci95", "note", "aside", "infra",
    "build_pass"}``; ``ci95`` is the Wilson 95% interval; ``aside`` (``"k/n apps built"``) is shown on the
    headline line; ``build_pass`` (label ``apps built``) has the same shape for built apps / evaluated apps.
    """
    evaluated = [r for r in results if not r.get("retryable")]
    outcomes = [_spec_outcomes(r) for r in evaluated]
    passed, specs = sum(p for p, _ in outcomes), sum(n for _, n in outcomes)
    built = sum(1 for r in evaluated if r.get("properties", {}).get("build_ok"))
    return {
        "label": surface.HEADLINE.label,
        "kind": surface.HEADLINE.kind,
        "numerator": passed,
        "denominator": specs,
        "value": (passed / specs) if specs else None,
        "ci95": list(wilson_interval(passed, specs)) if specs else None,
        "note": f"navigation specs passed / specs, pooled over apps without an infrastructure error; {built} of "
        f"{len(evaluated)} apps built (an app that did not build counts all its specs as failed)",
        "aside": f"{built}/{len(evaluated)} apps built" if evaluated else "",
        "infra": len(results) - len(evaluated),
        "build_pass": {
            "label": "apps built",
            "numerator": built,
            "denominator": len(evaluated),
            "value": (built / len(evaluated)) if evaluated else None,
            "ci95": list(wilson_interval(built, len(evaluated))) if evaluated else None,
        },
    }
