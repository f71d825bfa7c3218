"""Daemon faults on a second daemon the test starts (issue 24, item 1): a daemon that hangs (SIGSTOP)
while a test command runs into its deadline is ``daemon_stalled`` (infrastructure), not the candidate's
``timeout``; the same command without the hang keeps its own outcome, and a real timeout stays a timeout."""

from __future__ import annotations

import time

import pytest

from docker_here import once_running
from private_daemon import private_daemon, private_daemon_unavailable, ship
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.docker_workspace import DockerWorkspace
from pytest_mobilebench.runtime.hosts import DockerHost, connect_host
from pytest_mobilebench.runtime.images import BuiltImage

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

IMAGE = "debian:bookworm-slim"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(private_daemon_unavailable() is not None, reason=str(private_daemon_unavailable())),
]


@pytest.fixture(scope="module")
def daemon():
    main = docker.from_env()
    try:
        main.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        pytest.skip(f"{IMAGE} is not on the main daemon")
    finally:
        main.close()
    with private_daemon() as d:
        ship(IMAGE, d)
        yield d


def _workspace(daemon):
    client = connect_host(DockerHost(daemon.url), timeout_s=10)
    container = client.containers.run(
        IMAGE,
        ["sleep", "infinity"],
        detach=True,
        network_mode="none",
        labels={"mobilebench.test": "faults"},
        working_dir="/",
    )
    client.api.exec_start(client.api.exec_create(container.id, ["mkdir", "-p", "/testbed"])["Id"])
    image = BuiltImage(tag=IMAGE, image_id=str(container.image.id), built=False, seconds=0.0)
    return client, container, DockerWorkspace(client, container, image, "faults-1")


def test_a_stopped_daemon_is_daemon_stalled_not_the_candidates_timeout(daemon) -> None:
    client, container, ws = _workspace(daemon)
    try:
        result = ws.run("sleep 6; echo finished", timeout_s=12)  # without a hang: the command's own outcome
        assert (result.exit_code, result.timed_out) == (0, False) and "finished" in result.output

        def stall() -> None:  # SIGSTOP for 20 s: outlasts the 12 s limit
            daemon.stop()
            time.sleep(20.0)
            daemon.resume()

        hang, errors = once_running(client, container.id, "sleep 6", stall)
        started = time.monotonic()
        with pytest.raises(InfraError) as info:
            ws.run("sleep 6; echo finished", timeout_s=12)
        hang.join()
        assert not errors, errors
        assert info.value.kind == "daemon_stalled", info.value
        assert daemon.url in info.value.message and time.monotonic() - started < 60
        timed_out = ws.run("sleep 30", timeout_s=4)  # a real hang of the command stays the candidate's timeout
        assert timed_out.timed_out and timed_out.exit_code is None
    finally:
        daemon.resume()
        ws.close()  # removes the container
        client.close()
