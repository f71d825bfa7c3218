"""The suite's own Docker cleanup (tests/docker_cleanup.py) takes only what this test session made."""

from __future__ import annotations

import contextlib
import io
import os
import uuid

import pytest
from docker_cleanup import remove_session_artifacts, session_images

from pytest_mobilebench.runtime.owners import (
    LABEL_TEST_SESSION,
    TEST_SESSION_ENV,
    session_labels,
)


def _image(iid: str, tags: list[str] | None, created: int, labels: dict[str, str] | None = None) -> dict:
    return {"Id": iid, "RepoTags": tags, "Created": created, "Labels": labels}


def test_only_this_sessions_images_newest_first() -> None:
    ours = {LABEL_TEST_SESSION: "s1"}
    images = [
        _image("env", ["mobilebench/env.demo__app:1"], 5, ours),
        _image("user", ["mobilebench/env.user__app:1"], 6, {LABEL_TEST_SESSION: "", "mobilebench.level": "env"}),
        _image("other-session", ["mobilebench/env.b:1"], 7, {LABEL_TEST_SESSION: "s2"}),
        _image("old-harness", ["mobilebench/env.c:1"], 8, {"mobilebench.level": "env"}),  # no session label
        _image("built", None, 8, ours),  # a build of ours whose tag moved on
        _image("shared", ["mobilebench/env.x:1", "mine:latest"], 9, ours),  # a user's extra tag stays
    ]
    assert session_images("s1", images) == [
        ("mobilebench/env.x:1",),
        ("built",),
        ("mobilebench/env.demo__app:1", "env"),
    ]
    assert session_images("", images) == []  # no session id: nothing is anyone's


def test_the_harness_labels_its_builds_with_the_session_or_with_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TEST_SESSION_ENV, "s9")
    assert session_labels() == {LABEL_TEST_SESSION: "s9"}
    monkeypatch.delenv(TEST_SESSION_ENV)
    # empty, not absent: it overrides the id an image inherits from a base image a test session built
    assert session_labels() == {LABEL_TEST_SESSION: ""}


def test_this_session_exported_its_id_for_workers_and_subprocesses() -> None:
    assert os.environ.get(TEST_SESSION_ENV, "").startswith("tests-")


@pytest.mark.docker
def test_a_users_image_built_during_a_test_session_stays() -> None:
    docker = pytest.importorskip("docker")
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no Docker daemon: {exc}")
    session = f"cleanup-test-{uuid.uuid4().hex[:8]}"
    tag = uuid.uuid4().hex[:8]

    def build(name: str, value: str) -> str:
        dockerfile = f'FROM scratch\nLABEL mobilebench.level=env {LABEL_TEST_SESSION}="{value}" marker={name}-{tag}\n'
        image, _ = client.images.build(
            fileobj=io.BytesIO(dockerfile.encode()), tag=f"mobilebench/{name}:{tag}", rm=True
        )
        return str(image.id)

    made = {"session": build("cleanup-session", session), "user": build("cleanup-user", "")}
    try:
        remove_session_artifacts(client, session)
        names = {t for i in client.api.images(all=True) for t in i.get("RepoTags") or []}
        assert f"mobilebench/cleanup-user:{tag}" in names  # the user's image built meanwhile stays
        assert f"mobilebench/cleanup-session:{tag}" not in names
    finally:
        for ref in (f"mobilebench/cleanup-user:{tag}", f"mobilebench/cleanup-session:{tag}", *made.values()):
            with contextlib.suppress(Exception):
                client.api.remove_image(ref, force=True)
        client.close()
