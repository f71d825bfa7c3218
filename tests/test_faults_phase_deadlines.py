"""Each phase of an item is bounded by a deadline on the whole operation (issue 35, item 1, the runtime's
side): acquiring a host, making the image, creating the container and reading the results back each end as
their own infrastructure kind when the harness's side is late. The Docker tests hang a second daemon of their
own (``SIGSTOP``); the main daemon is never stopped."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from private_daemon import private_daemon, private_daemon_unavailable, ship
from pytest_mobilebench.runtime.base import InfraError, WorkspaceSpec
from pytest_mobilebench.runtime.deadlines import Deadlines, within
from pytest_mobilebench.states import InfraKind


def test_the_phase_deadlines_are_options_with_defaults() -> None:
    assert (Deadlines().acquire_s, Deadlines().image_s, Deadlines().create_s, Deadlines().grade_s) == (
        300,
        14400,
        300,
        1800,
    )
    chosen = Deadlines.from_options(
        {"mb_acquire_deadline": 5, "mb_image_deadline": "60", "mb_create_deadline": 7, "mb_grade_deadline": 9}
    )
    assert (chosen.acquire_s, chosen.image_s, chosen.create_s, chosen.grade_s) == (5, 60, 7, 9)
    with pytest.raises(ValueError, match="--mb-create-deadline"):
        Deadlines.from_options({"mb_create_deadline": 0})


def test_within_bounds_the_whole_step_and_undoes_what_it_makes_late() -> None:
    assert within(5, InfraKind.CREATE_TIMEOUT, "quick", lambda: 42) == 42
    with pytest.raises(KeyError):
        within(5, InfraKind.CREATE_TIMEOUT, "its own error", lambda: {}["x"])
    release, undone = threading.Event(), []

    def trickles() -> str:  # a step whose every read answers, but never in time as a whole
        for _ in range(100):
            if release.wait(0.05):
                break
        return "made late"

    started = time.monotonic()
    with pytest.raises(InfraError) as late:
        within(0.5, InfraKind.CREATE_TIMEOUT, "i-1: creating its container", trickles, late=undone.append)
    assert late.value.kind == "create_timeout" and "i-1: creating its container" in late.value.message
    assert time.monotonic() - started < 2
    release.set()
    deadline = time.monotonic() + 5
    while not undone and time.monotonic() < deadline:
        time.sleep(0.05)
    assert undone == ["made late"]


docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from pytest_mobilebench.runtime.docker import DockerRuntime  # noqa: E402
from pytest_mobilebench.runtime.docker_workspace import DockerWorkspace  # noqa: E402
from pytest_mobilebench.runtime.hosts import DockerHost, connect_host  # noqa: E402
from pytest_mobilebench.runtime.images import BuiltImage  # noqa: E402
from pytest_mobilebench.runtime.provider import DockerProvider, ProviderContext  # noqa: E402

IMAGE = "debian:bookworm-slim"
unavailable = private_daemon_unavailable()


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


def _stopped(daemon, seconds: float, action):
    """``action()`` while ``daemon`` is stopped; resumed after it (and after a failure)."""
    daemon.stop()
    try:
        started = time.monotonic()
        with pytest.raises(InfraError) as info:
            action()
        assert time.monotonic() - started < seconds + 5
        return info.value
    finally:
        daemon.resume()


@pytest.mark.docker
@pytest.mark.skipif(unavailable is not None, reason=str(unavailable))
def test_acquiring_a_stopped_host_is_acquire_timeout(daemon) -> None:
    client = connect_host(DockerHost(daemon.url), timeout_s=10)
    ctx = ProviderContext(
        options={"mb_acquire_deadline": 3}, run_id="r", progress=lambda _l: None, fixture=lambda _name: client
    )
    try:
        error = _stopped(daemon, 3, lambda: DockerProvider._client(ctx))
        assert error.kind == "acquire_timeout" and daemon.url in error.message
    finally:
        client.close()


@pytest.mark.docker
@pytest.mark.skipif(unavailable is not None, reason=str(unavailable))
def test_making_the_image_on_a_stopped_daemon_is_image_timeout(daemon, tmp_path) -> None:
    client = connect_host(DockerHost(daemon.url), timeout_s=10)
    runtime = DockerRuntime(
        run_id="phase-" + uuid.uuid4().hex[:8],
        client=client,
        ca_bundle=None,
        deadlines=Deadlines(image_s=3),
        log_dir=tmp_path,
    )
    spec = WorkspaceSpec("phase__image-1", "phase/image", "0" * 40, str(tmp_path), run_id=runtime.run_id)
    try:
        error = _stopped(daemon, 3, lambda: runtime.prepare(spec))
        assert error.kind == "image_timeout" and "phase__image-1" in error.message
    finally:
        client.close()


@pytest.mark.docker
@pytest.mark.skipif(unavailable is not None, reason=str(unavailable))
def test_creating_the_container_on_a_stopped_daemon_is_create_timeout_and_the_late_one_is_removed(
    daemon, tmp_path
) -> None:
    client = connect_host(DockerHost(daemon.url), timeout_s=60)
    run_id = "phase-" + uuid.uuid4().hex[:8]
    runtime = DockerRuntime(
        run_id=run_id, client=client, ca_bundle=None, disk_limit=None, deadlines=Deadlines(create_s=3), log_dir=tmp_path
    )
    image = BuiltImage(tag=IMAGE, image_id=str(client.images.get(IMAGE).id), built=False, seconds=0.0)
    runtime.ensure_instance_image = lambda _spec, log_dir=None: image  # type: ignore[method-assign]
    spec = WorkspaceSpec("phase__create-1", "phase/create", "0" * 40, str(tmp_path), run_id=run_id)
    try:
        error = _stopped(daemon, 3, lambda: runtime.prepare(spec))
        assert error.kind == "create_timeout" and "phase__create-1" in error.message
        deadline = time.monotonic() + 60  # resumed: the late creation finishes, and its container is removed
        while True:
            made = client.containers.list(all=True, filters={"label": f"mobilebench.run_id={run_id}"})
            if not made or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert made == []
    finally:
        for left in client.containers.list(all=True, filters={"label": f"mobilebench.run_id={run_id}"}):
            left.remove(force=True)
        client.close()


@pytest.mark.docker
@pytest.mark.skipif(unavailable is not None, reason=str(unavailable))
def test_reading_results_from_a_stopped_daemon_is_grade_timeout(daemon) -> None:
    client = connect_host(DockerHost(daemon.url), timeout_s=60)
    container = client.containers.run(
        IMAGE,
        ["sleep", "infinity"],
        detach=True,
        network_mode="none",
        labels={"mobilebench.test": "phases"},
        working_dir="/",
    )
    client.api.exec_start(client.api.exec_create(container.id, ["mkdir", "-p", "/testbed/out"])["Id"])
    image = BuiltImage(tag=IMAGE, image_id=str(container.image.id), built=False, seconds=0.0)
    ws = DockerWorkspace(client, container, image, "phase__grade-1", read_deadline_s=3)
    try:
        assert ws.read_files(["out/*.xml"]) == {}  # answered in time: its own outcome
        ws.forget_reads()
        error = _stopped(daemon, 3, lambda: ws.read_files(["out/*.xml"]))
        assert error.kind == "grade_timeout" and "phase__grade-1" in error.message
    finally:
        ws.close()
        client.close()
