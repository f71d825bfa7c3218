"""The suite's own Docker cleanup (tests/docker_cleanup.py) picks only what the harness made during it."""

from __future__ import annotations

from docker_cleanup import new_harness_images


def _image(iid: str, tags: list[str] | None, created: int, labels: dict[str, str] | None = None) -> dict:
    return {"Id": iid, "RepoTags": tags, "Created": created, "Labels": labels}


def test_only_new_harness_images_newest_first() -> None:
    images = [
        _image("old", ["mobilebench/base:1"], 1),  # there before the session
        _image("base", ["debian:bookworm-slim"], 2),
        _image("env", ["mobilebench/env.demo__app:1"], 5),
        _image("layer", ["<none>:<none>"], 3),
        _image("labelled", ["acme/thing:1"], 4, {"mobilebench.run_id": "r"}),
        _image("theirs", ["acme/other:1"], 6),  # another program's image: never ours to remove
        _image("untagged", None, 7),  # nobody's known: kept
        _image("built", None, 8, {"mobilebench.inputs": "x"}),  # a harness build whose tag moved on
        _image("shared", ["mobilebench/env.x:1", "mine:latest"], 9),  # a user's extra tag stays
    ]
    picked = new_harness_images({"old"}, images)
    # newest first; an unlabelled layer, a foreign-tagged labelled image and another program's image stay
    assert picked == [("mobilebench/env.x:1",), ("built",), ("mobilebench/env.demo__app:1",), ("debian:bookworm-slim",)]
