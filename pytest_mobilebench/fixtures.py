"""The harness's resources as pytest fixtures, requested by benchmark items the way a test function does.

Each suite names the fixtures its items request (``Suite.fixtures``); the item resolves them through pytest's
fixture machinery, so a ``conftest.py`` overrides any of them by defining a fixture of the same name (a
Docker client with TLS, a remote browser over CDP, a device farm). Every fixture here is session-scoped: one
value per pytest process, i.e. per xdist worker.

=================  ==========================================================================================
fixture            value
=================  ==========================================================================================
mb_docker_client   a connected ``docker.DockerClient`` (``DOCKER_HOST`` etc. from the environment), or None when
                   the SDK is missing or no daemon answers within 5 s (issue resolution)
mb_browser         a Playwright ``Browser`` for app generation, or any object whose ``browser()`` returns one
                   (the default relaunches Chromium after a crash); Debian's Chromium from ``--mb-chromium``
=================  ==========================================================================================

Suites add their own fixtures in their ``fixture_module`` (the device pool, the agent endpoint).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["mb_browser", "mb_docker_client"]


@pytest.fixture(scope="session")
def mb_docker_client() -> Iterator[Any]:
    """A docker client that answered ``ping``, or None (the suite then decides: error, or local runtime)."""
    from pytest_mobilebench.runtime.base import InfraError

    try:
        from pytest_mobilebench.runtime.docker import connect

        client = connect(timeout_s=5)
    except InfraError:
        yield None
        return
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def mb_browser(pytestconfig: pytest.Config) -> Iterator[Any]:
    """One Chromium per process, launched on first use with the flags this harness needs
    (:func:`pytest_mobilebench.suites.app_generation.navigation.launch_browser`), closed at session end."""
    from pytest_mobilebench.suites.app_generation import navigation

    handle = navigation.launch_browser(str(pytestconfig.getoption("mb_chromium") or navigation.CHROMIUM_PATH))
    try:
        yield handle
    finally:
        navigation.close_browser(handle)
