"""A run-level time budget (``--mb-run-budget DURATION``, issue 33 item 6).

The budget starts when the controller configures the run. Once it has passed, no benchmark item *starts*:
each remaining item is skipped in its setup (before any fixture: no runtime, container or browser is made)
with the reason ``not run: the run budget ... ran out``; items already running finish under their own limits
(``--mb-instance-timeout`` ...). An item that did not start has no result, so it counts where an interrupted
run's items count: ``not run`` in the headline and the "over all selected" floor, ``not_run_instances`` and
each model's ``not_run_ids`` in the summary. A re-run resumes: finished items come from the result cache (no
container runs), the rest are evaluated (with a budget again if one is given).

Under xdist the controller hands each worker the seconds left when the worker is configured; the worker counts
them on its own monotonic clock, so a worker on another machine needs no synchronised clock.

The controller records ``run_budget`` in the summary: ``{"seconds": float, "ran_out": bool, "not_started":
int}`` and, when it ran out, ends the run with exit status 2 (as an interrupted run: the benchmark is
incomplete, whatever the items that ran said).
"""

from __future__ import annotations

import time
from typing import Any, Final, final

import pytest

__all__ = ["NOT_STARTED", "PLUGIN_NAME", "RunBudget", "WORKER_KEY", "budget_summary", "fmt_duration"]

#: the worker-input key carrying the seconds left (controller -> worker)
WORKER_KEY: Final = "mobilebench_budget_left"
#: the report attribute saying an item was not started (crosses xdist as a plain string)
NOT_STARTED: Final = "mobilebench_not_started"
#: the name the budget is registered under (the plugin registers it, a benchmark item asks it)
PLUGIN_NAME: Final = "mobilebench-run-budget"
_SKIPPED = pytest.StashKey[bool]()


def fmt_duration(seconds: float) -> str:
    """``90`` -> ``"1m30s"``, ``3600`` -> ``"1h"``, ``4`` -> ``"4s"``."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs or not whole else ""]
    return "".join(parts)


@final
class RunBudget:
    """The budget's hooks on one process (the controller, or one xdist worker).

    Args:
        seconds: the budget as given (for messages).
        left: seconds left now (the whole budget on the controller; what the controller handed a worker).
    """

    def __init__(self, seconds: float, left: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + left

    def left(self) -> float:
        """Seconds left (negative once it ran out)."""
        return self.deadline - time.monotonic()

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_KEY] = self.left()

    def refuse_start(self, item: pytest.Item) -> None:
        """Skip ``item`` when the budget ran out; a benchmark item calls it from its ``setup``, before it makes
        any fixture (so this module knows no item class)."""
        if self.left() <= 0:
            item.stash[_SKIPPED] = True
            pytest.skip(
                f"not run: the run budget (--mb-run-budget {fmt_duration(self.seconds)}) ran out before this item "
                "started; re-run to resume (finished items come from the result cache)"
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if call.when == "setup" and item.stash.get(_SKIPPED, False):
            setattr(report, NOT_STARTED, "run_budget")
        return report


def budget_summary(seconds: float, not_started: int) -> dict[str, Any]:
    """The summary's ``run_budget``: ``{"seconds", "ran_out", "not_started"}``."""
    return {"seconds": seconds, "ran_out": not_started > 0, "not_started": not_started}
