"""Issue 35, item 8 (Docker side): the image a base build killed early leaves carries its level label, so the
run's image cleanup removes it."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.images import LABEL_LEVEL, LABEL_RUN, ImageBuilder

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from docker_here import client_with_base_image_or_skip  # noqa: E402

pytestmark = pytest.mark.docker


def _run_images(client: object, run_id: str) -> list[dict]:
    return client.api.images(all=True, filters={"label": [f"{LABEL_RUN}={run_id}"]})  # type: ignore[attr-defined]


def _wait_steps_gone(client: object, run_id: str) -> None:
    deadline = time.monotonic() + 60
    while client.api.containers(all=True, filters={"label": [f"{LABEL_RUN}={run_id}"]}):  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "the cancelled build's step container stayed"
        time.sleep(0.5)


def test_a_base_build_killed_early_leaves_only_images_the_cleanup_removes(tmp_path: Path) -> None:
    client = client_with_base_image_or_skip()
    run_id = "killed-base-" + uuid.uuid4().hex[:10]
    builder = ImageBuilder(client, run_id=run_id, log_dir=tmp_path / "logs", lock_dir=tmp_path / "locks")
    builder.build_deadline_s, builder.build_silence_s = 120.0, 6.0
    dockerfile = f"FROM debian:bookworm-slim\nRUN echo {run_id} > /first-step\nRUN sleep 300\n"
    try:
        with pytest.raises(InfraError) as hung:
            builder._ensure(f"mobilebench/base:{run_id}", "base", "inputs", dockerfile, lambda _tar: None, {}, None)
        assert hung.value.kind == "build_hung"
        left = _run_images(client, run_id)
        assert left, "the killed build committed its first steps (the case under test)"
        assert all((image.get("Labels") or {}).get(LABEL_LEVEL) == "base" for image in left), left
        _wait_steps_gone(client, run_id)  # the daemon cancels the step whose client left a moment later
        builder.remove_images(keep_level="none", only_run=run_id)
        assert _run_images(client, run_id) == []
    finally:
        for container in client.api.containers(all=True, filters={"label": [f"{LABEL_RUN}={run_id}"]}):
            client.api.remove_container(container["Id"], force=True)
        for image in client.api.images(filters={"label": [f"{LABEL_RUN}={run_id}"]}):  # leaves: parents go with them
            client.api.remove_image(image["Id"], force=True)
        client.close()
