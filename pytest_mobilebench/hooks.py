"""Hook specifications of pytest-mobilebench, for plugins that add suites or consume results.

Like pytest-xdist's ``newhooks.py``: registered with ``config.pluginmanager.add_hookspecs`` in
``pytest_addhooks``; implement them in a conftest.py or a plugin.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["pytest_mobilebench_register_suites", "pytest_mobilebench_result", "pytest_mobilebench_summary"]


@pytest.hookspec
def pytest_mobilebench_register_suites(registry: dict[str, Any]) -> None:
    """Add suites to ``registry`` ({name: object implementing ``pytest_mobilebench.suites.base.Suite``}).

    Called once per process at configure time; the built-in suites are already in the registry.
    """


@pytest.hookspec
def pytest_mobilebench_result(config: pytest.Config, result: dict[str, Any]) -> None:
    """Called on the controller (or the only process) for each finished item's plain-builtin result."""


@pytest.hookspec
def pytest_mobilebench_summary(config: pytest.Config, summary: dict[str, Any]) -> None:
    """Called on the controller with the run summary before it is written; plugins may add keys."""
