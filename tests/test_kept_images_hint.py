"""The end-of-run hint about kept images removes only this run's images (issue 33, item 4): on a shared daemon
``docker image rm $(docker images -q --filter label=mobilebench.level)`` removed every user's harness images."""

from __future__ import annotations

import io
import shlex
import subprocess
import tarfile
import uuid
from typing import Any

import pytest

from pytest_mobilebench.runtime.budget import kept_images, kept_note
from pytest_mobilebench.runtime.owners import session_labels


class _Api:
    """A daemon's image list, filtered by labels as the Docker API does (every ``label`` filter must match)."""

    def __init__(self, images: list[dict[str, Any]]) -> None:
        self._images = images

    def images(self, filters: dict[str, Any]) -> list[dict[str, Any]]:
        wanted = filters["label"] if isinstance(filters["label"], list) else [filters["label"]]

        def match(labels: dict[str, str], one: str) -> bool:
            key, _, value = one.partition("=")
            return key in labels and (not _ or labels[key] == value)

        return [i for i in self._images if all(match(i["Labels"], w) for w in wanted)]


class _Client:
    def __init__(self, images: list[dict[str, Any]]) -> None:
        self.api = _Api(images)


def test_the_note_counts_this_runs_images_and_its_command_names_this_run() -> None:
    images = [
        {"Id": "a", "Size": 10**9, "Labels": {"mobilebench.level": "env", "mobilebench.run_id": "r1"}},
        {"Id": "b", "Size": 10**9, "Labels": {"mobilebench.level": "base", "mobilebench.run_id": "other"}},
        {"Id": "c", "Size": 5, "Labels": {"mobilebench.run_id": "r1"}},
    ]  # a container's image: no level
    client = _Client(images)
    assert kept_images(client) == (2, 2 * 10**9) and kept_images(client, "r1") == (1, 10**9)
    note = kept_note(2, 2 * 10**9, 1, None, "r1")
    assert (
        note.startswith("docker: 2 harness images kept on the daemon (2.00 GB")
        and "1 of them built by this run" in note
    )
    command = note.split("remove this run's with ")[1].split(" (or run")[0]
    assert command == (
        "docker image rm $(docker images -q --filter label=mobilebench.level --filter label=mobilebench.run_id=r1)"
    )
    odd = kept_note(1, 1, 1, "env", "r1; rm -rf ~")  # a run id is quoted, never run
    assert "--filter 'label=mobilebench.run_id=r1; rm -rf ~')" in odd


def _image(client: Any, run_id: str, tag: str) -> str:
    """A two-file image labelled as a harness image of ``run_id`` (and of this test session, for its cleanup)."""
    labels = {"mobilebench.level": "env", "mobilebench.run_id": run_id, **session_labels()}
    dockerfile = "FROM scratch\nCOPY f /f\n" + "".join(f'LABEL "{k}"="{v}"\n' for k, v in labels.items())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in (("Dockerfile", dockerfile.encode()), ("f", run_id.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    image, _ = client.images.build(fileobj=buf, custom_context=True, tag=tag, rm=True)
    return str(image.id)


@pytest.mark.docker
def test_the_hint_removes_this_runs_images_and_no_other() -> None:
    from docker_here import client_or_skip

    docker_client = client_or_skip()
    mine, theirs = f"hint-{uuid.uuid4().hex[:8]}", f"hint-{uuid.uuid4().hex[:8]}"
    made = {run: _image(docker_client, run, f"mobilebench-test/{run}:1") for run in (mine, theirs)}
    try:
        command = kept_note(2, 0, 1, "env", mine).split("remove this run's with ")[1].split(" (or run")[0]
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        left = {i.id for i in docker_client.images.list(filters={"label": "mobilebench.level"})}
        assert made[mine] not in left and made[theirs] in left
    finally:
        for run in (mine, theirs):
            subprocess.run(
                ["docker", "image", "rm", "-f", f"mobilebench-test/{run}:1"], capture_output=True, timeout=120
            )
    assert shlex.split(command)[0] == "docker"
