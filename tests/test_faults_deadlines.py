"""Build and install deadlines are options, and a hung shared step fails every instance waiting for its
lock at once with the same reason (issue 25, item 4)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.deadlines import Deadlines, shared_step


def test_deadlines_from_options_keep_defaults_and_refuse_nonsense() -> None:
    assert Deadlines.from_options({}) == Deadlines(3600, 900, 7200, 1800)
    chosen = Deadlines.from_options(
        {"mb_install_silence": 5, "mb_image_build_deadline": "60", "mb_install_deadline": None}
    )
    assert (chosen.install_s, chosen.install_silence_s, chosen.build_s) == (3600, 5, 60)
    with pytest.raises(ValueError, match="--mb-install-silence"):
        Deadlines.from_options({"mb_install_silence": 0})


def test_a_hung_shared_step_fails_its_waiters_at_once_and_a_later_caller_tries_again(tmp_path: Path) -> None:
    lock = tmp_path / "deps.lock"
    ran: list[str] = []
    outcomes: dict[str, BaseException | None] = {}
    holding = threading.Event()

    def holder() -> None:
        try:
            with shared_step(lock):
                holding.set()
                ran.append("holder")
                time.sleep(1.5)  # the step "hangs" until its deadline
                raise InfraError("build_hung", "step killed: no output for 1.5 s installing dependencies for deps:x")
        except InfraError as exc:
            outcomes["holder"] = exc

    def waiter(name: str) -> None:
        try:
            with shared_step(lock):
                ran.append(name)
                time.sleep(30)  # would hang again: must never run
            outcomes[name] = None
        except InfraError as exc:
            outcomes[name] = exc

    first = threading.Thread(target=holder)
    first.start()
    assert holding.wait(5)
    waiters = [threading.Thread(target=waiter, args=(f"w{i}",)) for i in range(3)]
    started = time.monotonic()
    for thread in waiters:
        thread.start()
    for thread in (first, *waiters):
        thread.join(20)
    assert time.monotonic() - started < 5  # at once, not three more deadlines
    assert ran == ["holder"]
    for name in ("w0", "w1", "w2"):
        error = outcomes[name]
        assert isinstance(error, InfraError) and error.kind == "build_hung" and "deps:x" in error.message
    with shared_step(lock):  # a caller arriving after the failure runs the step afresh
        ran.append("later")
    assert ran == ["holder", "later"]
