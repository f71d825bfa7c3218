"""Hook specifications of pytest-mobilebench, for plugins that add suites or consume results.

Like pytest-xdist's ``newhooks.py``: registered with ``config.pluginmanager.add_hookspecs`` in
``pytest_addhooks``; implement them in a conftest.py or a plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_mobilebench.runtime.base import Runtime
    from pytest_mobilebench.runtime.provider import ProviderRegistry
    from pytest_mobilebench.suites import SuiteRegistry

__all__ = [
    "pytest_mobilebench_make_runtime",
    "pytest_mobilebench_register_runtimes",
    "pytest_mobilebench_register_suites",
    "pytest_mobilebench_result",
    "pytest_mobilebench_summary",
]


@pytest.hookspec(historic=True)
def pytest_mobilebench_register_suites(registry: SuiteRegistry) -> None:
    """Add suites: ``registry.register(suite)`` or ``registry[name] = suite``, where ``suite`` implements
    :class:`pytest_mobilebench.suites.base.Suite` (checked as it is added).

    Called once per process while options are declared, before the command line is parsed, so a suite's
    declared options are real command-line options. Historic: a ``conftest.py`` at the root of the run (an
    initial conftest) or a plugin loaded later still receives the call. The built-in suites are already in
    the registry.
    """


@pytest.hookspec
def pytest_mobilebench_result(config: pytest.Config, result: dict[str, Any]) -> None:
    """Called on the controller (or the only process) for each finished item's plain-builtin result."""


@pytest.hookspec
def pytest_mobilebench_summary(config: pytest.Config, summary: dict[str, Any]) -> None:
    """Called on the controller with the run summary before it is written; plugins may add keys."""


@pytest.hookspec(historic=True)
def pytest_mobilebench_register_runtimes(registry: ProviderRegistry) -> None:
    """Add runtime providers: ``registry.register(provider)``, where ``provider`` implements
    :class:`pytest_mobilebench.runtime.provider.RuntimeProvider` (checked as it is added; its options are
    declared at that moment). ``--mb-runtime=NAME`` then selects it; ``auto`` tries providers in registration
    order (``docker`` and ``local`` are already in). Historic, called while options are declared, like
    ``pytest_mobilebench_register_suites``.
    """


@pytest.hookspec(firstresult=True)
def pytest_mobilebench_make_runtime(
    config: pytest.Config, options: dict[str, Any], run_id: str, trusted: bool
) -> Runtime | None:
    """Return the runtime (a :class:`pytest_mobilebench.runtime.base.Runtime`) for code of this trust level
    in this process, or None to leave it to the next implementation (like pytest-xdist's
    ``pytest_xdist_make_scheduler``). The plugin's own implementation runs last and answers with the registry's
    choice for ``--mb-runtime`` (:meth:`pytest_mobilebench.runtime.provider.RuntimeSource.choose`): the one way
    to replace the runtime is to answer first, or to register a provider. Called on every ``mb_runtime.get(...)``:
    cache what you make. The controller calls ``finish`` of the registered provider named ``runtime.name``
    after the run, if any.
    """
