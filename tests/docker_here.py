"""Test helper: the main Docker daemon, or a skip that says why (one place for every Docker test module)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.baseimage import DEFAULT_BASE_IMAGE, ensure_base_image
from pytest_mobilebench.runtime.daemon import connect

__all__ = ["client_or_skip", "client_with_base_image_or_skip"]


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
