"""Issue 13, items 3 and 5: the shared dependency layer (manifests, key, install in a container with the
package-cache volume, commit) and the deadlines of a step (total and no output)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.deadlines import watch_output
from pytest_mobilebench.runtime.deplayer import deps_key, ensure_deps, manifest_files
from pytest_mobilebench.suites.issue_resolution import docker_answers


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_manifests_are_found_nested_with_their_folders_and_nothing_else(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path,
        {
            "package.json": "{}",
            "package-lock.json": "{}",
            "src/app.js": "x",
            "patches/lib+1.0.patch": "p",
            "packages/ui/package.json": "{}",
            "android/build.gradle": "g",
            "android/gradle/wrapper/gradle-wrapper.properties": "w",
            "android/gradlew": "#!/bin/sh",
            "node_modules/lib/package.json": "{}",
            ".git/config": "c",
            "app/pubspec.yaml": "n",
        },
    )
    assert sorted(manifest_files(tree)) == [
        "android/build.gradle", "android/gradle/wrapper/gradle-wrapper.properties", "android/gradlew",
        "app/pubspec.yaml", "package-lock.json", "package.json", "packages/ui/package.json", "patches/lib+1.0.patch",
    ]  # fmt: skip


def test_key_changes_with_any_manifest_byte_the_install_or_the_env_but_not_with_sources(tmp_path: Path) -> None:
    a = manifest_files(_tree(tmp_path / "a", {"package.json": "{}", "package-lock.json": "1", "src/x.js": "a"}))
    b = manifest_files(_tree(tmp_path / "b", {"package.json": "{}", "package-lock.json": "1", "src/x.js": "b"}))
    c = manifest_files(_tree(tmp_path / "c", {"package.json": "{}", "package-lock.json": "2"}))
    key = deps_key("sha256:env", "npm ci", a)
    assert key == deps_key("sha256:env", "npm ci", b)
    assert (
        len(
            {
                key,
                deps_key("sha256:env", "npm ci", c),
                deps_key("sha256:env2", "npm ci", a),
                deps_key("sha256:env", "npm i", a),
            }
        )
        == 4
    )


def test_watch_output_passes_a_finished_stream_through() -> None:
    assert "".join(watch_output(iter(["a\n", "b\n"]), deadline_s=5, silence_s=5, on_expiry=lambda: None)) == "a\nb\n"


def _slow(pause_s: float, count: int):
    for n in range(count):
        time.sleep(pause_s)
        yield f"{n}\n"


@pytest.mark.parametrize(
    ("pause", "deadline", "silence", "says"),
    [(5.0, 60, 0.3, "no output for 0.3 s"), (0.1, 0.5, 5, "over its 0.5 s deadline")],
)
def test_watch_output_kills_a_silent_or_overlong_step(pause, deadline, silence, says) -> None:
    killed = []
    with pytest.raises(InfraError) as info:
        list(
            watch_output(_slow(pause, 100), deadline_s=deadline, silence_s=silence, on_expiry=lambda: killed.append(1))
        )
    assert info.value.kind == "build_hung" and says in info.value.message and killed == [1]


def test_watch_output_reraises_the_readers_error() -> None:
    def broken():
        yield "a\n"
        raise ConnectionError("daemon went away")

    with pytest.raises(ConnectionError):
        list(watch_output(broken(), deadline_s=5, silence_s=5, on_expiry=lambda: None))


# --------------------------------------------------------------------------------------- in Docker


@pytest.fixture
def debian_env(tmp_path: Path):
    """An ImageBuilder on the local daemon and the Debian image standing in for an environment layer."""
    from pytest_mobilebench.runtime.baseimage import (
        DEFAULT_BASE_IMAGE,
        ensure_base_image,
    )
    from pytest_mobilebench.runtime.daemon import connect
    from pytest_mobilebench.runtime.images import BuiltImage, ImageBuilder

    client = connect(timeout_s=10)
    image_id = ensure_base_image(client, DEFAULT_BASE_IMAGE)
    builder = ImageBuilder(
        client, run_id=f"scale-deps-{time.time_ns()}", log_dir=tmp_path / "logs", lock_dir=tmp_path / "locks"
    )
    yield builder, BuiltImage(DEFAULT_BASE_IMAGE, image_id, built=False, seconds=0)
    for image in client.api.images(filters={"label": f"mobilebench.run_id={builder.run_id}"}):
        client.api.remove_image(image["Id"], force=True)
    client.close()


def _own_containers(builder) -> list[str]:
    return [
        c["Id"]
        for c in builder.client.api.containers(all=True, filters={"label": f"mobilebench.run_id={builder.run_id}"})
    ]


@pytest.mark.docker
@pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)")
def test_identical_manifests_share_one_install_and_the_cache_volume_outlives_it(debian_env, tmp_path: Path) -> None:
    builder, env = debian_env
    install = (
        "test -f package.json; mkdir -p node_modules; date +%s%N > node_modules/stamp; touch $npm_config_cache/seen"
    )
    one = _tree(tmp_path / "one", {"package.json": "{}", "src/a.js": "1"})
    two = _tree(tmp_path / "two", {"package.json": "{}", "src/a.js": "2"})
    first = ensure_deps(builder, env, one, install, repo="demo/app")
    second = ensure_deps(builder, env, two, install, repo="demo/app")
    assert first is not None and second is not None and first.built and not second.built
    assert (first.tag, first.image_id) == (second.tag, second.image_id)
    out = builder.client.containers.run(
        first.image_id,
        ["bash", "-c", "cat /testbed/node_modules/stamp; ls /testbed; ls /mobilebench-cache 2>&1 || true"],
        remove=True,
    )
    assert b"package.json" in out and b"a.js" not in out
    labels = builder.client.api.inspect_image(first.image_id)["Config"]["Labels"]
    assert labels["mobilebench.level"] == "deps" and labels["mobilebench.owner"] == ""
    assert _own_containers(builder) == []
    # the package cache is a volume, so it is not in the image but survives for the next install
    probe = builder.client.containers.run(
        env.image_id, ["ls", "/c/npm"], volumes={"mobilebench-pkgcache": {"bind": "/c", "mode": "ro"}}, remove=True
    )
    assert b"seen" in probe


@pytest.mark.docker
@pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)")
def test_an_install_needing_sources_falls_back_and_a_hung_one_is_build_hung(debian_env, tmp_path: Path) -> None:
    builder, env = debian_env
    tree = _tree(tmp_path / "t", {"package.json": "{}"})
    assert ensure_deps(builder, env, tree, "test -f src/index.js", repo="demo/app") is None
    with pytest.raises(InfraError) as info:
        ensure_deps(builder, env, tree, "echo started; sleep 600", repo="demo/app", silence_s=3)
    assert info.value.kind == "build_hung" and "no output for 3 s" in info.value.message
    assert "started" in info.value.log
    assert _own_containers(builder) == []


@pytest.mark.docker
@pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)")
def test_a_silent_docker_build_is_build_hung_with_its_log_and_is_cancelled(debian_env, tmp_path: Path) -> None:
    builder, debian = debian_env

    class Recipe:  # the run id in the step keeps docker's build cache from answering it
        dockerfile = f"ARG BASE_IMAGE\nFROM ${{BASE_IMAGE}}\nRUN echo hang-started {builder.run_id}; sleep 600\n"
        context_files: ClassVar[dict[str, bytes]] = {}
        install_command = ""

        def key(self) -> str:
            return builder.run_id.replace("scale-deps-", "hang")

    builder.build_silence_s = 5
    started = time.monotonic()
    with pytest.raises(InfraError) as info:
        builder.ensure_env(Recipe(), "demo/hang", base=debian)
    assert time.monotonic() - started < 120, "the hung build was waited for instead of cut"
    assert info.value.kind == "build_hung" and "no output for 5 s" in info.value.message
    assert "hang-started" in info.value.log
    # the daemon cancelled the build: no step container keeps sleeping
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(
        "sleep 600" in " ".join(c.get("Command", "").split()) for c in builder.client.api.containers()
    ):
        time.sleep(1)
    assert not any("sleep 600" in c.get("Command", "") for c in builder.client.api.containers())
