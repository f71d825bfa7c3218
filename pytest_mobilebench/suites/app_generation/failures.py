"""Automatic C1-C4 failure classes for failed interactive navigation specs (MobileForge, seed 002 section 7).

The paper hand-labels a sample of failed tab / parent-child specs into four user-perception classes; here the
same classes are decided from evidence the navigation driver collects (:mod:`.navigation`), in this order
(first match wins):

* **C1 blank starting page**: before the action the source page shows no visible text and no interactive
  element (``visible_text_len == 0 and interactive_count == 0``).
* **C3 target unreachable or occluded**: no hint found the affordance, or it is not visible, or its centre is
  outside the 375x812 viewport after scrolling it into view, or ``document.elementFromPoint`` at its centre is
  neither the element nor one of its descendants (something covers it).
* **C2 route mapping error**: after the action the URL path is a different route than before and it is the
  route of a *known* screen other than the target (the click lands on an existing, wrong page).
* **C4 click has no effect**: the affordance was clicked and nothing target-like changed: neither the URL path
  nor the normalised content hash changed, or (overlay spec) the path stayed and no new top-layer element nor
  target phrase (``Screen.text``) appeared (a rewritten line is no overlay), or the change was not the tap's own: a
  control tap on a neutral point made it too (``control.same_change``, :mod:`.tapcheck`).

A failed spec matching none of them (it went to an unknown route, or the page changed without reaching the
target) is ``unclassified``; a spec whose driver raised is ``error``. C3 is tested before C2 because a covered
affordance's click lands on whatever covers it, so a resulting navigation is not the affordance's own.

Evidence dict (plain builtins, as written to ``nav/<spec>.json``)::

    {"spec_id": str, "category": str, "passed": bool, "error": str | None,
     "path_before": str, "path_after": str, "hash_before": str, "hash_after": str,
     "visible_text_len": int, "interactive_count": int, "clicked": bool, "overlay": bool,
     "affordance": {"found": bool, "visible": bool, "in_viewport": bool, "hit_ok": bool, ...},
     "new_layers": [{"tag", "role", "label", "text", "bbox"}],   # overlay specs: layers the tap showed
     "target_text": [str],                                        # overlay specs: target phrases it showed
     "control": None | {"point", "hit", "path_after", "new_layers", "same_change": bool, "error"}}
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, Final

from pytest_mobilebench.metrics import wilson_interval

__all__ = ["FAILURE_CLASSES", "FailureClass", "classify_failure", "failure_table"]


@enum.unique
class FailureClass(str, enum.Enum):
    """Closed vocabulary of failure classes (seed 002 Table 4), plus the two leftovers."""

    C1 = "C1"  # blank starting page
    C2 = "C2"  # route mapping error
    C3 = "C3"  # target unreachable or occluded
    C4 = "C4"  # click has no effect
    UNCLASSIFIED = "unclassified"
    ERROR = "error"


#: the four taxonomy classes, in report order
FAILURE_CLASSES: Final = (FailureClass.C1, FailureClass.C2, FailureClass.C3, FailureClass.C4)

_INTERACTIVE: Final = frozenset({"tab_navigation", "parent_child"})


def _norm(path: str) -> str:
    return "/" + path.strip("/") if path.strip("/") else "/"


def classify_failure(evidence: Mapping[str, Any], routes: Mapping[str, str], target: str) -> FailureClass | None:
    """The failure class of one spec from its evidence (pure).

    Args:
        evidence: the spec's evidence dict (see the module docstring).
        routes: ``{screen id: route}`` of the app's known screens.
        target: the spec's expected screen id.

    Returns:
        ``None`` for a passed spec or a ``page_existence`` spec (the taxonomy covers interactive specs only),
        else a :class:`FailureClass`.

    Raises:
        KeyError: ``evidence`` lacks a field the decision needs.
    """
    if evidence["passed"] or evidence["category"] not in _INTERACTIVE:
        return None
    if evidence.get("error"):
        return FailureClass.ERROR
    if int(evidence["visible_text_len"]) == 0 and int(evidence["interactive_count"]) == 0:
        return FailureClass.C1
    aff = evidence["affordance"]
    if not (aff["found"] and aff["visible"] and aff["in_viewport"] and aff["hit_ok"]):
        return FailureClass.C3
    before, after = _norm(evidence["path_before"]), _norm(evidence["path_after"])
    target_route = _norm(routes[target])
    known_other = {_norm(r) for sid, r in routes.items() if _norm(r) != target_route}
    if after != before and after in known_other:
        return FailureClass.C2
    if evidence["clicked"] and _nothing_tied(evidence, before, after):
        return FailureClass.C4
    return FailureClass.UNCLASSIFIED


def _nothing_tied(evidence: Mapping[str, Any], before: str, after: str) -> bool:
    """Nothing target-like changed that is the tap's own (the C4 rule of the module docstring)."""
    control = evidence.get("control") or {}
    if control.get("same_change"):
        return True
    if after != before:
        return False
    return evidence["hash_after"] == evidence["hash_before"] or (
        bool(evidence.get("overlay")) and not evidence.get("new_layers") and not evidence.get("target_text")
    )


def failure_table(classes: Iterable[FailureClass | str | None]) -> dict[str, Any]:
    """Counts and proportions of C1-C4 among classified failures, with Wilson 95% intervals.

    The denominator ``n`` is every failed interactive spec (including ``unclassified`` and ``error``), as the
    paper's proportions are over labelled failures (seed 002 section 7, Table 4). ``None`` entries (passed
    or non-interactive specs) are ignored.

    Returns:
        ``{"n": int, "counts": {cls: int}, "proportions": {cls: float}, "wilson95": {cls: [lo, hi]}}`` with
        keys ``C1`` .. ``C4``, ``unclassified``, ``error``; proportions are 0.0 when ``n == 0``.
    """
    counts = {c.value: 0 for c in FailureClass}
    for c in classes:
        if c is None:
            continue
        counts[FailureClass(c).value] += 1
    n = sum(counts.values())
    return {
        "n": n,
        "counts": counts,
        "proportions": {k: (v / n if n else 0.0) for k, v in counts.items()},
        "wilson95": {k: list(wilson_interval(v, n)) for k, v in counts.items()},
    }
