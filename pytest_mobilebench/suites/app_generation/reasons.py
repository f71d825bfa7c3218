"""The app-generation suite's closed reason vocabulary and the verdict of a built app's navigation."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["AppGenReason", "grade_navigation"]


@enum.unique
class AppGenReason(str, enum.Enum):
    """The closed reason vocabulary of this suite (one per item).

    ``ok``: built and every spec passed; ``nav_failed``: built, some spec failed; ``build_failed``: tsc or vite
    reported errors (or the project has no ``src/``); ``missing_prediction``: no project for this app and
    model; ``invalid_prediction``: the prediction's fields or paths are unusable; ``infra_error``: the
    harness's environment failed (npm, Chromium, price table) - never the candidate's fault.
    """

    OK = "ok"
    NAV_FAILED = "nav_failed"
    BUILD_FAILED = "build_failed"
    MISSING_PREDICTION = "missing_prediction"
    INVALID_PREDICTION = "invalid_prediction"
    INFRA_ERROR = "infra_error"

    @property
    def is_infra(self) -> bool:
        """True when the outcome says nothing about the candidate."""
        return self is AppGenReason.INFRA_ERROR


def grade_navigation(nav: Sequence[Mapping[str, Any]]) -> tuple[AppGenReason, str]:
    """The verdict of a built app from its per-spec navigation records (``{"spec_id", "passed",
    "failure_class"}``): ``ok`` when there is at least one spec and every spec passed, else ``nav_failed``
    with the failed specs (and their C1-C4 class) in the detail."""
    passed = sum(1 for e in nav if e.get("passed"))
    if nav and passed == len(nav):
        return AppGenReason.OK, ""
    failed = [
        str(e.get("spec_id")) + (f" ({e['failure_class']})" if e.get("failure_class") else "")
        for e in nav
        if not e.get("passed")
    ]
    return AppGenReason.NAV_FAILED, f"NavPassRate {passed}/{len(nav)}; failed: {', '.join(failed)}"
