"""The test suite removes the Docker images and volumes it made, and only those (issue 7 item 6, issue 20 item 6).

Loaded as a plugin by ``tests/conftest.py``. The process that runs the whole session (the xdist controller,
or the only process without ``-n``) gives the session an id at configure time and exports it as
``$MOBILEBENCH_TEST_SESSION`` before any worker or subprocess starts; every image the harness builds and the
package-cache volume it creates then carry the label ``mobilebench.test_session=<that id>``
(:func:`pytest_mobilebench.runtime.owners.session_labels`). At the session's end exactly what carries this
session's id is removed: an image another run (a user's, another test session's) built meanwhile has another
or an empty value and stays, even when it was built FROM an image of this session. Of an image of this
session that someone gave another tag, only the harness tags go.

``MOBILEBENCH_KEEP_TEST_IMAGES=1`` keeps everything (a developer re-running docker tests saves the base image
build; the labels are still set).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from typing import Any

import pytest

from pytest_mobilebench.runtime.baseimage import DEFAULT_BASE_IMAGE
from pytest_mobilebench.runtime.owners import LABEL_TEST_SESSION, TEST_SESSION_ENV


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


def session_images(session_id: str, images: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """What to remove, newest image first: of each image (``docker image ls -a`` entry) whose
    ``mobilebench.test_session`` label is ``session_id``, its id, or only its harness tags when it also has
    a tag of someone else's."""
    ours = [i for i in images if session_id and (i.get("Labels") or {}).get(LABEL_TEST_SESSION) == session_id]
    out = []
    for image in sorted(ours, key=lambda i: i.get("Created", 0), reverse=True):
        harness = _harness_tags(image)
        other = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>" and t not in harness]
        refs = tuple(harness) if other else (*harness, image["Id"])
        if refs:
            out.append(refs)
    return out


def remove_session_artifacts(client: Any, session_id: str) -> None:
    """Remove the images and volumes labelled with ``session_id`` (what is in use stays)."""
    for refs in session_images(session_id, client.api.images(all=True)):
        for ref in refs:
            with contextlib.suppress(Exception):  # gone with a child, or in use by a container
                client.api.remove_image(ref)
    labelled = client.api.volumes(filters={"label": f"{LABEL_TEST_SESSION}={session_id}"}).get("Volumes") or []
    for volume in labelled:
        with contextlib.suppress(Exception):  # in use
            client.api.remove_volume(volume["Name"])


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if _controller(config):  # workers and subprocesses inherit it
        os.environ[TEST_SESSION_ENV] = f"tests-{uuid.uuid4().hex[:12]}"


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _controller(session.config) or os.environ.get("MOBILEBENCH_KEEP_TEST_IMAGES") == "1":
        return
    client = _client()
    if client is not None:
        remove_session_artifacts(client, os.environ.get(TEST_SESSION_ENV, ""))
        client.close()
