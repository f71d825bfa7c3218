"""Background container removals (pure: callables stand in for the daemon; issue 23, item 3).

The Docker side is in ``tests/test_docker_runtime.py`` (a container whose removal was deferred is gone
once the run-end clean-up returns) and ``tests/test_examples_docker.py`` (never handed over before the
evidence is written and the verdict judged; removed by the worker itself before it ends).
"""

from __future__ import annotations

import threading
import time

from pytest_mobilebench.runtime.removals import Removals


def test_removals_run_in_order_in_the_background_and_drain_waits_for_every_one() -> None:
    removals = Removals()
    gate = threading.Event()
    done: list[int] = []
    caller = threading.get_ident()
    threads: set[int] = set()

    def remove(n: int) -> None:
        gate.wait(5)
        threads.add(threading.get_ident())
        done.append(n)

    for n in range(3):
        removals.defer(lambda n=n: remove(n))  # type: ignore[misc]
    assert removals.pending == 3 and done == []  # handed over: the caller did not wait
    assert removals.drain(0.05) is False  # still pending
    gate.set()
    assert removals.drain(5) is True
    assert done == [0, 1, 2] and removals.pending == 0 and caller not in threads


def test_a_failing_removal_is_ignored_and_the_next_one_still_runs() -> None:
    removals = Removals()
    done: list[str] = []

    def broken() -> None:
        raise RuntimeError("daemon gone")

    removals.defer(broken)
    removals.defer(lambda: done.append("next"))
    assert removals.drain(5) and done == ["next"]


def test_a_removal_handed_over_while_the_worker_ends_is_not_lost() -> None:
    removals = Removals()
    done: list[int] = []
    for n in range(50):
        removals.defer(lambda n=n: done.append(n))  # type: ignore[misc]
        if n % 7 == 0:
            time.sleep(0.002)  # let the worker find the queue empty and end, now and then
    assert removals.drain(5) and done == list(range(50))
    assert removals.drain(0) is True  # nothing pending: returns at once
