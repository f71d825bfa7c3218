"""Test helper: the main Docker daemon, or a skip that says why (one place for every Docker test module)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.baseimage import DEFAULT_BASE_IMAGE, ensure_base_image
from pytest_mobilebench.runtime.daemon import connect

__all__ = ["client_or_skip", "client_with_base_image_or_skip", "once_running"]


def client_or_skip() -> Any:
    """A connected client of the main daemon; the calling test (or module, from a fixture) is skipped when no
    daemon answers."""
    try:
        return connect()
    except InfraError as exc:
        pytest.skip(f"no Docker daemon answers: {exc.message}")


def client_with_base_image_or_skip() -> Any:
    """:func:`client_or_skip`, with the harness's base image present (built here when missing); skipped when it
    cannot be made."""
    found = client_or_skip()
    try:
        ensure_base_image(found, DEFAULT_BASE_IMAGE)
    except InfraError as exc:
        pytest.skip(f"the base image {DEFAULT_BASE_IMAGE} cannot be made here: {exc.message}")
    return found


def once_running(
    client: Any, container_id: str, marker: str, action: Callable[[], None]
) -> tuple[threading.Thread, list[BaseException]]:
    """A started thread that calls ``action()`` once ``marker`` is in the command line of one of the container's
    processes (``docker top``; a fault injected on a timer could land before the command even started). The
    list collects the thread's own failure (``marker`` not running within 60 s included): the test re-raises it."""
    errors: list[BaseException] = []

    def wait_then_act() -> None:
        try:
            deadline = time.monotonic() + 60
            while not any(marker in " ".join(row) for row in client.api.top(container_id).get("Processes") or []):
                assert time.monotonic() < deadline, f"{marker!r} never ran"
                time.sleep(0.1)
            action()
        except BaseException as exc:  # noqa: BLE001 - re-raised by the test
            errors.append(exc)

    thread = threading.Thread(target=wait_then_act, daemon=True)
    thread.start()
    return thread, errors
