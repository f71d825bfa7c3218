"""Everything the harness builds carries its labels from the first step, and the sweep finds unlabelled
build steps of older builds by their command (issue 25, item 3)."""

from __future__ import annotations

import time

import pytest

from pytest_mobilebench.runtime.daemon import sweepable
from pytest_mobilebench.runtime.dockerfiles import BUILD_STEP_MARK, base_dockerfile, labelled_dockerfile
from pytest_mobilebench.runtime.images import LABEL_RUN
from pytest_mobilebench.runtime.owners import LABEL_OWNER


def test_every_from_is_followed_by_the_labels_so_each_step_container_carries_them() -> None:
    text = labelled_dockerfile(
        "ARG B\nFROM ${B}\nRUN a\nfrom x AS y\nRUN b\n", {LABEL_RUN: "r1", LABEL_OWNER: 'h:1:"2'}
    )
    lines = text.splitlines()
    label = f'LABEL {LABEL_OWNER}="h:1:\\"2" {LABEL_RUN}="r1"'
    assert lines == ["ARG B", "FROM ${B}", label, "RUN a", "from x AS y", label, "RUN b"]
    assert labelled_dockerfile(base_dockerfile(), {LABEL_RUN: "r"}).count("LABEL ") == 1


def test_the_sweep_takes_old_stopped_unlabelled_build_steps_of_its_own_and_nothing_else() -> None:
    old, new = time.time() - 3600, time.time() - 5
    step = {
        "Labels": {},
        "State": "exited",
        "Created": old,
        "Command": f"/bin/sh -c #(nop) COPY file:abc in /usr/local/share/ca-certificates/{BUILD_STEP_MARK}",
    }
    assert sweepable(step, own="me", run_id=None)
    assert not sweepable({**step, "State": "running"}, own="me", run_id=None)
    assert not sweepable({**step, "Created": new}, own="me", run_id=None)  # a build of a live run, in progress
    assert not sweepable({**step, "Command": "/bin/sh -c apt-get update"}, own="me", run_id=None)  # not ours
    assert not sweepable(
        {"Labels": {"com.example": "x"}, "State": "exited", "Created": old, "Command": "sleep 1"}, own="me", run_id=None
    )


_CHILD = r"""
import sys, time
import docker
from pytest_mobilebench.runtime.owners import LABEL_OWNER, owner_label
from pytest_mobilebench.runtime.reaper import ensure_reaper
client = docker.from_env()
ensure_reaper(sys.argv[1], owner_label())
box = client.containers.run(sys.argv[2], ["sleep", "infinity"], detach=True, network_mode="none",
                            labels={LABEL_OWNER: owner_label(), "mobilebench.test": "reaper"})
print(box.id, flush=True)
time.sleep(600)
"""


@pytest.mark.docker
def test_a_sigkilled_process_groups_containers_are_removed_within_seconds() -> None:
    import os
    import signal
    import subprocess
    import sys

    docker = pytest.importorskip("docker")
    from pytest_mobilebench.suites.issue_resolution import docker_answers

    if not docker_answers():
        pytest.skip("no Docker daemon answers")
    client = docker.from_env()
    image = "debian:bookworm-slim"
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        pytest.skip(f"{image} is not on the daemon")
    url = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, url, image],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    box = ""
    try:
        box = (child.stdout.readline() if child.stdout else "").strip()
        assert box, "the child did not start its container"
        assert client.api.inspect_container(box)["State"]["Running"]
        os.killpg(child.pid, signal.SIGKILL)  # the whole group: no cleanup code of the child runs
        child.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and client.api.containers(all=True, filters={"id": box}):
            time.sleep(0.2)
        assert not client.api.containers(all=True, filters={"id": box}), "the reaper left the container"
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        if box:
            with __import__("contextlib").suppress(Exception):
                client.api.remove_container(box, force=True)
        client.close()
