"""A harness image whose tag a later build moved on (dangling, labelled ``mobilebench.level``) is removed by
the run-end clean-up; a young one (a build going on elsewhere), one a container uses and a dangling image
that is not the harness's stay."""

from __future__ import annotations

import io
import uuid

import pytest

from pytest_mobilebench.runtime.budget import remove_superseded
from docker_here import client_or_skip

pytestmark = pytest.mark.docker


def _build(client, tag: str, label: bool, marker: str) -> str:
    lines = ["FROM scratch", f"LABEL mobilebench.test.marker={marker}"]
    if label:
        lines.append("LABEL mobilebench.level=instance")
    image, _ = client.images.build(fileobj=io.BytesIO("\n".join(lines).encode()), tag=tag, rm=True)
    return str(image.id)


def test_superseded_harness_images_go_and_others_stay() -> None:
    client = client_or_skip()
    tag = f"mobilebench-test-superseded:{uuid.uuid4().hex[:8]}"
    other = f"mobilebench-test-foreign:{uuid.uuid4().hex[:8]}"
    made = []
    try:
        old = _build(client, tag, True, "old")
        made.append(_build(client, tag, True, "new"))  # moves the tag: `old` is dangling now
        foreign_old = _build(client, other, False, "foreign-old")
        made.append(_build(client, other, False, "foreign-new"))
        made += [old, foreign_old]
        ids = {str(i["Id"]) for i in client.api.images(filters={"dangling": True})}
        assert {old, foreign_old} <= ids
        # other tests' images are spared: with no age limit, a step of their builds could go
        ours = {old, foreign_old}
        assert old not in remove_superseded(client, spare=lambda i: i not in ours)  # too young: a build going on?
        assert old not in remove_superseded(client, spare=lambda i: True, min_age_s=0)
        removed = remove_superseded(client, spare=lambda i: i not in ours, min_age_s=0)
        assert removed == [old]
        left = {str(i["Id"]) for i in client.api.images(filters={"dangling": True})}
        assert old not in left and foreign_old in left
    finally:
        for ref in (tag, other, *made):
            try:
                client.api.remove_image(ref, force=True)
            except Exception:  # noqa: BLE001, S112 - gone already
                continue
        client.close()
