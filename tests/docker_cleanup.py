"""The test suite removes every Docker image and volume it made (issue 7 item 6).

Loaded as a plugin by ``tests/conftest.py``. In the process that runs the whole session (the xdist
controller, or the only process without ``-n``), the session start records the daemon's image ids and
volume names; the session end removes, of what appeared since, the images the harness makes (a
``mobilebench/...`` tag or a ``mobilebench.*`` label, the default base image, and untagged layers) and the
harness's package-cache volume. Images that existed before are never touched, nor anything another
program made (no harness tag or label). ``MOBILEBENCH_KEEP_TEST_IMAGES=1`` keeps them (a developer
re-running docker tests saves the base image build).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import pytest

from pytest_mobilebench.runtime.baseimage import DEFAULT_BASE_IMAGE
from pytest_mobilebench.runtime.deplayer import CACHE_VOLUME

_BEFORE = pytest.StashKey[tuple[Any, set[str], set[str]]]()


def _client() -> Any:
    try:
        import docker

        client = docker.from_env(timeout=30)
        client.ping()
        return client
    except Exception:  # noqa: BLE001 - no daemon: nothing to clean
        return None


def _harness_made(image: dict[str, Any]) -> bool:
    tags = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"]
    labels = image.get("Labels") or {}
    return (not tags or any(t.startswith("mobilebench/") or t == DEFAULT_BASE_IMAGE for t in tags)
            or any(k.startswith("mobilebench") for k in labels))


def new_harness_images(before: set[str], images: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Images (``docker image ls -a`` entries) not in ``before`` that the harness made, newest first."""
    fresh = [i for i in images if i["Id"] not in before and _harness_made(i)]
    return sorted(fresh, key=lambda i: i.get("Created", 0), reverse=True)


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput") and os.environ.get("MOBILEBENCH_KEEP_TEST_IMAGES") != "1"


def pytest_sessionstart(session: pytest.Session) -> None:
    client = _client() if _controller(session.config) else None
    if client is not None:
        images = {i["Id"] for i in client.api.images(all=True)}
        volumes = {v["Name"] for v in client.api.volumes().get("Volumes") or []}
        session.config.stash[_BEFORE] = (client, images, volumes)


def pytest_sessionfinish(session: pytest.Session) -> None:
    client, images, volumes = session.config.stash.get(_BEFORE, (None, set(), set()))
    if client is None:
        return
    for image in new_harness_images(images, client.api.images(all=True)):
        refs = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"] or [image["Id"]]
        for ref in refs:
            with contextlib.suppress(Exception):  # gone with a child, or in use by another run
                client.api.remove_image(ref)
    if CACHE_VOLUME not in volumes:
        with contextlib.suppress(Exception):  # never made, or in use
            client.api.remove_volume(CACHE_VOLUME)
    client.close()
