"""The harness's resources as pytest fixtures, requested by benchmark items the way a test function does.

Each suite names the fixtures its items request (``Suite.fixtures``); the item resolves them through pytest's
fixture machinery, so a ``conftest.py`` overrides any of them by defining a fixture of the same name (a
Docker client with TLS, a remote browser over CDP, a device farm). Every fixture here is session-scoped: one
value per pytest process, i.e. per xdist worker.

=================  ==========================================================================================
fixture            value
=================  ==========================================================================================
mb_runtime         a :class:`pytest_mobilebench.runtime.provider.RuntimeSource`: ``.get(trusted=False)`` gives
                   this process's runtime (the ``pytest_mobilebench_make_runtime`` hook's, else the provider
                   ``--mb-runtime`` names); every suite that runs code requests it (a conftest may return any
                   object with ``get(*, trusted)`` and a ``used`` list)
mb_docker_client   a connected ``docker.DockerClient`` (``DOCKER_HOST`` etc. from the environment, or this
                   worker's daemon of ``--mb-docker-hosts``), or None when the SDK is missing or no daemon
                   answers within 5 s (issue resolution)
mb_browser         a Playwright ``Browser`` for app generation, or any object whose ``browser()`` returns one
                   (the default relaunches Chromium after a crash); Debian's Chromium from ``--mb-chromium``
mb_agent           the live agent's ``(Endpoint, Limits)`` from the ``--mb-agent-*`` options
                   (:func:`pytest_mobilebench.agents.options.endpoint_and_limits`), or None without
                   ``--mb-agent-base-url``; a suite naming it drives the agent (those options key its results)
=================  ==========================================================================================

Suites add their own fixtures in their ``fixture_module`` (the device pool, the agent endpoint).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

__all__ = ["mb_agent", "mb_browser", "mb_docker_client", "mb_runtime"]


@pytest.fixture(scope="session")
def mb_runtime(request: pytest.FixtureRequest, pytestconfig: pytest.Config) -> Any:
    """This process's :class:`~pytest_mobilebench.runtime.provider.RuntimeSource` (nothing is connected
    or made until ``get`` is called; providers ask for ``mb_docker_client`` and the like lazily)."""
    from pytest_mobilebench.items import announce
    from pytest_mobilebench.state import options_of
    from pytest_mobilebench.runtime.provider import ProviderContext, RuntimeSource
    from pytest_mobilebench.state import STATE

    state = pytestconfig.stash[STATE]
    options = options_of(pytestconfig)
    ctx = ProviderContext(
        options=options,
        run_id=state.run_id,
        progress=lambda line: announce(pytestconfig, line),
        fixture=request.getfixturevalue,
    )

    def hook(trusted: bool) -> Any:
        return pytestconfig.hook.pytest_mobilebench_make_runtime(
            config=pytestconfig, options=options, run_id=state.run_id, trusted=trusted
        )

    assert state.providers is not None  # set in pytest_configure
    state.runtime_source = RuntimeSource(state.providers, ctx, hook)  # the hook's default answers from it
    return state.runtime_source


@pytest.fixture(scope="session")
def mb_docker_client(pytestconfig: pytest.Config) -> Iterator[Any]:
    """This worker's docker client that answered ``ping``, or None (the suite then decides: error, or local).

    With ``--mb-docker-hosts`` the client is this xdist worker's daemon (slot ``gwN mod slots``, failing
    over to the next slots; :func:`pytest_mobilebench.runtime.hosts.worker_client`); the controller's
    own daemon and the other hosts are its peers for image shipping. ``--mb-registry`` and
    ``--mb-image-budget`` attach their policy to the client (``runtime.hosts.attach_policy``).
    Named hosts of which none answers yield an unpinged client of the worker's slot, so every item
    becomes ``infra_error`` (``daemon_unreachable``) instead of silently running elsewhere.
    """
    from pytest_mobilebench.runtime import hosts
    from pytest_mobilebench.runtime.base import InfraError

    spec = pytestconfig.getoption("mb_docker_hosts", None)
    options = {
        "registry": pytestconfig.getoption("mb_registry", None),
        "budget": pytestconfig.getoption("mb_image_budget", None),
        "progress": _progress_log(pytestconfig),
    }
    try:
        if spec:
            named = hosts.parse_hosts(spec)
            mine, client = hosts.worker_client(named, os.environ.get("PYTEST_XDIST_WORKER"))
            local = hosts.local_host()
            peers = [h for h in (*named, local) if h.url != mine.url]
            hosts.attach_policy(client, url=mine.url, peers=list({h.url: h for h in peers}.values()), **options)
        else:
            from pytest_mobilebench.runtime.daemon import connect

            client = hosts.attach_policy(connect(timeout_s=5), url=hosts.local_host().url, **options)
    except InfraError:
        if not spec:
            yield None
            return
        table = hosts.slot_table(hosts.parse_hosts(spec))
        client = hosts.connect_host(
            table[hosts.worker_index(os.environ.get("PYTEST_XDIST_WORKER")) % len(table)], ping=False
        )
    try:
        yield client
    finally:
        from pytest_mobilebench.runtime.removals import drain

        drain()  # containers whose removal was handed to the background (runtime/removals.py) go first
        client.close()


def _progress_log(config: pytest.Config) -> Callable[[str], None]:
    """Append image shipping / eviction lines to ``<reports>/<run id>/progress.log`` (as items' progress)."""
    import datetime

    from pytest_mobilebench.state import STATE

    def write(line: str) -> None:
        state = config.stash.get(STATE, None)
        if state is None:
            return
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S")
        log = state.reports_dir / state.run_id / "progress.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} [{os.environ.get('PYTEST_XDIST_WORKER', 'main')}] {line}\n")

    return write


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


@pytest.fixture(scope="session")
def mb_agent(pytestconfig: pytest.Config) -> Any:
    """``(Endpoint, Limits)`` of the live agent, or None without ``--mb-agent-base-url``.

    Raises:
        pytest.UsageError: a base URL without a model, a limit out of range, an unusable price table.
    """
    from pytest_mobilebench.agents.options import AGENT_OPTIONS, endpoint_and_limits

    options = {o.dest: pytestconfig.getoption(o.dest, None) for o in AGENT_OPTIONS}
    if not options["mb_agent_base_url"]:
        return None
    try:
        return endpoint_and_limits(options)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from exc
