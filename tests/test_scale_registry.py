"""Issue 13, item 1: ``--mb-registry`` with a real registry (Debian's ``docker-registry``, on a loopback
port of the controller): an image built here is pushed; a daemon lacking it pulls it back with the same
id; an image whose ``mobilebench.inputs`` label differs is never taken."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mobilebench.runtime.hosts import HostImages
from pytest_mobilebench.suites.issue_resolution import docker_answers

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
    pytest.mark.skipif(shutil.which("docker-registry") is None, reason="Debian's docker-registry is not installed"),
]


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "registry.yml"
    config.write_text(
        f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp_path / 'data'}\nhttp:\n"
        f"  addr: 127.0.0.1:{port}\n"
    )
    process = subprocess.Popen(
        ["docker-registry", "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def labelled_image() -> Iterator[tuple[object, str, str]]:
    """(client, tag, image id) of a tiny harness-labelled image on the local daemon; removed after."""
    import io

    from pytest_mobilebench.runtime.baseimage import (
        DEFAULT_BASE_IMAGE,
        ensure_base_image,
    )
    from pytest_mobilebench.runtime.daemon import connect

    client = connect(timeout_s=10)
    ensure_base_image(client, DEFAULT_BASE_IMAGE)
    tag = f"mobilebench/scaletest:{uuid.uuid4().hex[:12]}"
    dockerfile = (
        f"FROM {DEFAULT_BASE_IMAGE}\nRUN echo {tag} > /marker\n"
        "LABEL mobilebench.inputs=want mobilebench.level=instance\n"
    )
    image, _ = client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    try:
        yield client, tag, str(image.id)
    finally:
        for ref in [t for t in client.api.images(name="*/mobilebench/scaletest") for t in t.get("RepoTags") or []] + [
            tag
        ]:
            with contextlib.suppress(Exception):  # already gone
                client.api.remove_image(ref, force=True)
        client.close()


def test_built_images_are_pushed_and_pulled_back_only_with_the_right_label(registry, labelled_image) -> None:
    client, tag, image_id = labelled_image
    supply = HostImages(client, registry=registry)
    supply.added(tag)  # pushed
    client.api.remove_image(f"{registry}/{tag}")
    client.api.remove_image(tag)
    assert supply.supply(tag, "other") is None  # wrong inputs: pulled, checked, dropped
    assert not client.api.images(name=f"{registry}/{tag.split(':')[0]}")
    assert supply.supply(tag, "want") == image_id  # same id: image ids are config digests
    assert client.api.inspect_image(tag)["Id"] == image_id
