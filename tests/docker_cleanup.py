"""The test suite removes every Docker image and volume it made (issue 7 item 6).

Loaded as a plugin by ``tests/conftest.py``. In the process that runs the whole session (the xdist
controller, or the only process without ``-n``), the session start records the daemon's image ids and
volume names; the session end removes, of what appeared since, what the harness makes: its
``mobilebench/...`` tags, images carrying a ``mobilebench.*`` label (untagged ones included), the default base
image's tag, and the package-cache volume. Images that existed before are never touched, and of another
program's image only a ``mobilebench/`` tag it was given would go. Two harness runs sharing one daemon
with a test session may lose images made meanwhile that no container uses (they are rebuilt on demand);
CI runs one session per machine. ``MOBILEBENCH_KEEP_TEST_IMAGES=1`` keeps everything (a developer
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


def _harness_tags(image: dict[str, Any]) -> list[str]:
    return [t for t in image.get("RepoTags") or [] if t.startswith("mobilebench/") or t == DEFAULT_BASE_IMAGE]


def _labelled(image: dict[str, Any]) -> bool:
    return any(k.startswith("mobilebench") for k in image.get("Labels") or {})


def new_harness_images(before: set[str], images: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """What to remove, newest image first: for each image (``docker image ls -a`` entry) not in ``before``,
    its harness tags, or its id when it carries a harness label and no other tag."""
    fresh = sorted((i for i in images if i["Id"] not in before), key=lambda i: i.get("Created", 0), reverse=True)
    out = []
    for image in fresh:
        ours = _harness_tags(image)
        other = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>" and t not in ours]
        refs = tuple(ours) or ((image["Id"],) if _labelled(image) and not other else ())
        if refs:
            out.append(refs)
    return out


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
    for refs in new_harness_images(images, client.api.images(all=True)):
        for ref in refs:
            with contextlib.suppress(Exception):  # gone with a child, or in use by another run
                client.api.remove_image(ref)
    if CACHE_VOLUME not in volumes:
        with contextlib.suppress(Exception):  # never made, or in use
            client.api.remove_volume(CACHE_VOLUME)
    client.close()
