"""C1-C4 failure classes over collected navigation evidence (pure; MobileForge seed 002 section 7)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.suites.app_generation.failures import (
    FailureClass,
    classify_failure,
    failure_table,
)

ROUTES = {"home": "/", "search": "/search", "profile": "/profile", "settings": "/profile/settings"}


def _ev(**over: Any) -> dict[str, Any]:
    """Evidence of a failed tab spec home -> profile whose affordance was found, visible and hit-tested."""
    ev: dict[str, Any] = {
        "spec_id": "s",
        "category": "tab_navigation",
        "passed": False,
        "error": None,
        "path_before": "/",
        "path_after": "/",
        "hash_before": "a",
        "hash_after": "a",
        "visible_text_len": 40,
        "interactive_count": 3,
        "clicked": True,
        "affordance": {"found": True, "visible": True, "in_viewport": True, "hit_ok": True},
    }
    aff = over.pop("affordance", {})
    ev.update(over)
    ev["affordance"] = {**ev["affordance"], **aff}
    return ev


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        (_ev(visible_text_len=0, interactive_count=0, affordance={"found": False}), FailureClass.C1),
        (_ev(path_after="/search", hash_after="b"), FailureClass.C2),
        (_ev(path_after="/search/", hash_after="b"), FailureClass.C2),  # trailing slash is the same route
        (
            _ev(affordance={"found": False, "visible": False, "in_viewport": False, "hit_ok": False}, clicked=False),
            FailureClass.C3,
        ),
        (_ev(affordance={"visible": False, "in_viewport": False, "hit_ok": False}, clicked=False), FailureClass.C3),
        (_ev(affordance={"in_viewport": False, "hit_ok": False}, clicked=False), FailureClass.C3),
        (_ev(affordance={"hit_ok": False}), FailureClass.C3),  # covered: the tap hit something else
        (_ev(), FailureClass.C4),
        (_ev(path_after="/elsewhere", hash_after="b"), FailureClass.UNCLASSIFIED),  # an unknown route
        (_ev(hash_after="b"), FailureClass.UNCLASSIFIED),  # something changed, but not the route
        (_ev(error="TimeoutError: page.goto"), FailureClass.ERROR),
    ],
)
def test_classes(evidence: dict[str, Any], expected: FailureClass) -> None:
    assert classify_failure(evidence, ROUTES, "profile") is expected


def test_order_c1_before_c3_and_c3_before_c2() -> None:
    # a blank page also lacks the affordance: C1 wins
    assert (
        classify_failure(_ev(visible_text_len=0, interactive_count=0, affordance={"found": False}), ROUTES, "profile")
        is FailureClass.C1
    )
    # text but no interactive element is not blank
    assert classify_failure(_ev(interactive_count=0, affordance={"found": False}), ROUTES, "profile") is FailureClass.C3
    # covered affordance whose tap landed on another known page (the cover's own link): C3, not C2
    assert (
        classify_failure(_ev(affordance={"hit_ok": False}, path_after="/search"), ROUTES, "profile") is FailureClass.C3
    )


def test_passed_and_page_existence_specs_have_no_class() -> None:
    assert classify_failure(_ev(passed=True), ROUTES, "profile") is None
    assert classify_failure(_ev(category="page_existence"), ROUTES, "profile") is None


def test_landing_on_the_target_route_is_not_c2() -> None:
    # overlay spec that reached its route but the content did not change: nothing changed -> C4
    ev = _ev(category="parent_child", path_before="/search", path_after="/search")
    assert classify_failure(ev, ROUTES, "search") is FailureClass.C4


def _overlay(**over: Any) -> dict[str, Any]:
    """Evidence of a failed overlay spec search -> filters (same route) whose affordance was tapped."""
    return _ev(category="parent_child", overlay=True, path_before="/search", path_after="/search", **over)


def test_an_overlay_change_that_is_no_new_layer_is_c4() -> None:
    # issue 31 item 5: a page-wide listener rewrote a line (the hash changed) but no dialog / top layer appeared
    assert classify_failure(_overlay(hash_after="b", new_layers=[]), ROUTES, "search") is FailureClass.C4
    # a new layer appeared, but the control tap on a neutral point made one too: not the tap's own change
    control = {
        "point": [10, 400],
        "hit": "main",
        "path_after": "/search",
        "same_change": True,
        "error": None,
        "new_layers": [{"tag": "div", "role": "dialog", "label": None, "text": "x", "bbox": [0, 0, 375, 812]}],
    }
    layers = control["new_layers"]
    assert (
        classify_failure(_overlay(hash_after="b", new_layers=layers, control=control), ROUTES, "search")
        is FailureClass.C4
    )
    # a new layer, and no control (the page offered no neutral point): changed, but not shown to be the tap's own
    assert (
        classify_failure(
            _overlay(
                hash_after="b",
                new_layers=layers,
                control={**control, "same_change": False, "error": "no neutral point"},
            ),
            ROUTES,
            "search",
        )
        is FailureClass.UNCLASSIFIED
    )
    # the target's declared phrase newly shown, and tied to the tap (the control showed nothing): not C4
    assert (
        classify_failure(
            _overlay(
                hash_after="b",
                target_text=["Filter options"],
                control={**control, "same_change": False, "error": "no neutral point"},
            ),
            ROUTES,
            "search",
        )
        is FailureClass.UNCLASSIFIED
    )
    # a route spec (no overlay) whose content changed in place stays unclassified, as before
    assert classify_failure(_ev(hash_after="b", new_layers=[]), ROUTES, "profile") is FailureClass.UNCLASSIFIED


def test_a_route_reached_by_any_tap_is_c4() -> None:
    control = {
        "point": [10, 400],
        "hit": "main",
        "path_after": "/profile",
        "same_change": True,
        "error": None,
        "new_layers": [],
    }
    ev = _ev(path_after="/profile", hash_after="b", control=control)
    assert classify_failure(ev, ROUTES, "profile") is FailureClass.C4


def test_missing_field_raises_key_error() -> None:
    ev = _ev()
    del ev["affordance"]
    with pytest.raises(KeyError):
        classify_failure(ev, ROUTES, "profile")


def test_failure_table_proportions_and_wilson() -> None:
    table = failure_table(["C1", FailureClass.C3, "C3", "C4", None, "unclassified"])
    assert table["n"] == 5
    assert table["counts"] == {"C1": 1, "C2": 0, "C3": 2, "C4": 1, "unclassified": 1, "error": 0}
    assert table["proportions"]["C3"] == pytest.approx(0.4)
    assert table["wilson95"]["C3"] == pytest.approx(list(wilson_interval(2, 5)))
    lo, hi = table["wilson95"]["C3"]
    assert 0.0 < lo < 0.4 < hi < 1.0
    assert table["wilson95"]["C2"][0] == 0.0 and table["wilson95"]["C2"][1] > 0.0
    empty = failure_table([])
    assert empty["n"] == 0 and empty["proportions"]["C1"] == 0.0 and empty["wilson95"]["C1"] == [0.0, 1.0]
    with pytest.raises(ValueError):
        failure_table(["C5"])
