"""Integration tests of the Docker runtime's image layers against a real daemon (marked ``docker``): reuse by
hash, rebuilds, concurrent builds, clean-up levels, the base image, the React-Native recipe end to end, warm
candidates sharing the instance layer. The fixture is ``tests/docker_runtime_fixture.py``."""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
import time
import uuid
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks import workspace_recipe
from pytest_mobilebench.runtime.base import (
    InfraError,
    WorkspaceSpec,
)

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from pytest_mobilebench.runtime.baseimage import (
    cache_root,
    ensure_base_image,
)
from pytest_mobilebench.runtime.checkout import shallow_checkout
from pytest_mobilebench.runtime.docker import DockerRuntime
from pytest_mobilebench.runtime.images import LABEL_RUN, BuiltImage, ImageBuilder
from pytest_mobilebench.runtime.repos import RepoCache


from conftest import git
from docker_runtime_fixture import HOST_BUNDLE, ENV_DOCKERFILE, FIX, Recipe
from docker_runtime_fixture import client, make  # noqa: F401  (fixtures)

pytestmark = pytest.mark.docker


def test_image_reused_by_hash_and_rebuilt_when_recipe_changes(make) -> None:
    fx = make()
    first = fx.runtime.ensure_instance_image(fx.spec)
    assert first.built and first.log_path is not None and first.log_path.is_file()
    assert first.tag.startswith("mobilebench/inst." + fx.spec.instance_id.lower() + ":")
    assert "Step" in first.log_path.read_text()

    again = make(instance_id=fx.spec.instance_id)  # a fresh runtime: no in-process memo
    second = again.runtime.ensure_instance_image(dataclasses.replace(again.spec, base_commit=fx.spec.base_commit))
    # found by its hash, nothing built (how fast that is belongs to benchmarks/, not to a timed unit test)
    assert (second.tag, second.image_id, second.built) == (first.tag, first.image_id, False)

    changed = make(Recipe(ENV_DOCKERFILE + "RUN echo changed > /opt/changed\n"), instance_id=fx.spec.instance_id)
    third = changed.runtime.ensure_instance_image(changed.spec)
    assert third.built and third.tag != first.tag and third.image_id != first.image_id
    env_tags = {tag for image in changed.runtime.client.images.list("mobilebench/env.demo__calc") for tag in image.tags}
    assert len({t for t in env_tags if t.startswith("mobilebench/env.demo__calc:")}) >= 2


def test_force_rebuild_builds_again_once_per_run(make, client: docker.DockerClient, tmp_path: Path) -> None:
    fx = make()
    first = fx.runtime.ensure_instance_image(fx.spec)
    base = fx.runtime.builder.ensure_base()
    assert not base.built
    recipe = Recipe(ENV_DOCKERFILE)
    checkout = tmp_path / "checkout"
    shallow_checkout(fx.runtime.repos.ensure("demo/calc", [fx.spec.base_commit]), fx.spec.base_commit, checkout)

    def build(builder: ImageBuilder) -> tuple[BuiltImage, BuiltImage]:
        env = builder.ensure_env(recipe, "demo/calc", base=base)
        inst = builder.ensure_instance(
            fx.spec.instance_id,
            env,
            repo="demo/calc",
            base_commit=fx.spec.base_commit,
            install_command=recipe.install_command,
            checkout_dir=checkout,
        )
        return env, inst

    ca = fx.runtime.builder.ca_bundle  # the host CA bundle is part of the environment layer's content key
    forced = ImageBuilder(
        client, run_id="forced-" + uuid.uuid4().hex[:8], force_rebuild=True, log_dir=tmp_path, ca_bundle=ca
    )
    env, inst = build(forced)
    assert env.built and inst.built and inst.tag == first.tag and inst.image_id != first.image_id
    env_again, inst_again = build(forced)  # the same run: what it built is reused
    assert not env_again.built and not inst_again.built and inst_again.image_id == inst.image_id
    _plain_env, plain_inst = build(ImageBuilder(client, run_id="plain", log_dir=tmp_path, ca_bundle=ca))
    assert not plain_inst.built and plain_inst.image_id == inst.image_id
    forced.remove_images(keep_level="env", only_run=forced.run_id)


def test_a_layer_another_run_removes_before_this_run_holds_it_is_built_again(make, client) -> None:
    """Run A built the environment layer; its clean-up lands after run B found that layer, before B built on it."""
    recipe = Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/own\n")  # a layer of this test's own
    a = make(recipe)
    a.runtime.ensure_instance_image(a.spec)
    b = make(recipe)
    lookup, seen, removed, tags = b.runtime.builder.ensure_env, [], [], []

    def found_then_removed(*args, **kwargs):
        env = lookup(*args, **kwargs)
        seen.append(env.built)
        tags.append(env.tag)
        removed.extend([] if env.built else a.runtime.cleanup("base"))  # A ends in the window
        return env

    b.runtime.builder.ensure_env = found_then_removed  # type: ignore[method-assign]
    assert b.runtime.ensure_instance_image(b.spec).built
    env_tag = tags[0]
    assert tags == [env_tag, env_tag] and seen == [False, True] and env_tag in removed and client.images.get(env_tag)


@pytest.mark.skipif(not HOST_BUNDLE.is_file(), reason="the host has no CA bundle at /etc/ssl/certs")
def test_ca_bundle_in_image(make) -> None:
    fx = make()
    ws = fx.runtime.prepare(fx.spec)
    try:
        injected = ws.run("cat /usr/local/share/ca-certificates/mobilebench-host-ca.crt", timeout_s=30)
        assert injected.output.encode() == HOST_BUNDLE.read_bytes()
        env = ws.run("echo $NODE_EXTRA_CA_CERTS $REQUESTS_CA_BUNDLE $SSL_CERT_FILE", timeout_s=30).output.split()
        assert env == ["/etc/ssl/certs/ca-certificates.crt"] * 3
        # the first certificate of the host bundle is trusted by the system bundle in the image
        first = HOST_BUNDLE.read_text().split("-----END CERTIFICATE-----")[0].split("-----BEGIN CERTIFICATE-----")[1]
        bundle = ws.run("cat /etc/ssl/certs/ca-certificates.crt", timeout_s=30).output
        assert first.strip() in bundle
    finally:
        ws.close()


def test_one_build_per_tag_under_concurrency(make) -> None:
    recipe = Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/unique && sleep 2\n")
    fxs = [make(recipe) for _ in range(2)]
    spec = fxs[0].spec
    results: list[object] = [None, None]

    def ensure(index: int) -> None:
        try:
            results[index] = fxs[index].runtime.ensure_instance_image(spec)
        except (InfraError, docker.errors.DockerException) as exc:  # reported below
            results[index] = exc

    threads = [threading.Thread(target=ensure, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert all(not isinstance(r, BaseException) and r is not None for r in results), results
    assert sorted(r.built for r in results) == [False, True]  # type: ignore[union-attr]
    assert results[0].image_id == results[1].image_id  # type: ignore[union-attr]


def test_install_failure_is_image_build_failed_with_log(make) -> None:
    fx = make(Recipe(ENV_DOCKERFILE, install_command="echo installing; echo broken-dependency >&2; exit 3"))
    with pytest.raises(InfraError) as caught:
        fx.runtime.prepare(fx.spec)
    assert caught.value.kind == "image_build_failed"
    assert "broken-dependency" in caught.value.log and "returned a non-zero code: 3" in caught.value.log


def test_cleanup_keeps_levels(make, client: docker.DockerClient) -> None:
    fx = make(Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/unique\n"))
    image = fx.runtime.ensure_instance_image(fx.spec)
    removed = fx.runtime.cleanup("env")
    assert image.tag in removed
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(image.tag)
    env_images = client.images.list(filters={"label": [f"{LABEL_RUN}={fx.runtime.run_id}", "mobilebench.level=env"]})
    assert len(env_images) == 1
    assert fx.runtime.cleanup("base") == env_images[0].tags


def test_a_run_going_on_keeps_the_instance_layer_another_run_built(make, client: docker.DockerClient) -> None:
    """Run a built the instance layer, run b (going on) uses it: a's clean-up keeps it for b, b's removes it."""
    fx = make(Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/unique\n"))
    image = fx.runtime.ensure_instance_image(fx.spec)
    other = make(fx.runtime.recipe_factory(fx.repo_dir, fx.spec), instance_id=fx.spec.instance_id)
    assert other.runtime.ensure_instance_image(fx.spec).image_id == image.image_id
    assert image.tag not in fx.runtime.cleanup("env")
    assert client.images.get(image.tag).id == image.image_id  # still there for run b's next candidate
    assert image.image_id in other.runtime.cleanup("env")  # the last run out removes what a wanted removed
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(image.image_id)


def test_base_image_import_from_cached_rootfs(client: docker.DockerClient) -> None:
    tarball = cache_root() / "rootfs" / "debian-bookworm-minbase.tar"
    if not tarball.is_file():
        pytest.skip("no cached root file system yet")
    name = "debian:12-slim"
    try:
        client.images.remove(name)
    except docker.errors.ImageNotFound:
        pass
    started = time.monotonic()
    image_id = ensure_base_image(client, name)
    assert client.images.get(name).id == image_id
    assert time.monotonic() - started < 60
    out = client.containers.run(name, ["cat", "/etc/debian_version"], remove=True)
    assert out.decode().startswith("12.")
    client.images.remove(name)


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is needed on the host to pack Node into the build context")
def test_react_native_recipe_end_to_end(client: docker.DockerClient, tmp_path: Path) -> None:
    """The real recipe path: infer_recipe -> npm pack on the host -> env + instance images -> offline test."""
    repo = tmp_path / "src" / "app"
    repo.mkdir(parents=True)
    (repo / "package.json").write_text(
        json.dumps(
            {
                "name": "app",
                "version": "1.0.0",
                "private": True,
                "engines": {"node": ">=20 <21"},
                "scripts": {"test": "node test.js"},
            }
        )
    )
    (repo / "test.js").write_text(
        "const assert = require('node:assert');\nassert.strictEqual(1 + 1, 2);\nconsole.log('PASS', process.version);\n"
    )
    (repo / ".gitignore").write_text("node_modules/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    run_id = "test-rn-" + uuid.uuid4().hex[:8]
    runtime = DockerRuntime(
        run_id=run_id,
        client=client,
        log_dir=tmp_path / "logs",
        repos=RepoCache(tmp_path / "mirrors", f"{tmp_path}/src/{{name}}", run_id=run_id),
        recipe_factory=workspace_recipe,
    )
    spec = WorkspaceSpec(
        "demo__app-1",
        "demo/app",
        git(repo, "rev-parse", "HEAD"),
        str(repo),
        environment={"framework": "react-native"},
        run_id=run_id,
    )
    try:
        ws = runtime.prepare(spec)
    except InfraError as exc:
        if "npm pack" in exc.message:
            pytest.skip(f"the npm registry is not reachable from here: {exc.message}")
        raise
    try:
        result = ws.run("exec 2>&1; npm test && ls /sys/class/net", timeout_s=120)  # one stream: ordered
        assert result.exit_code == 0, result.output
        assert "PASS v20." in result.output and result.output.split()[-1] == "lo"
        assert ws.diff() == ""
    finally:
        ws.close()
        runtime.cleanup("env")


#: every regular file and folder of the container but the kernel's, with owner, mode and content digest
_FINGERPRINT = (
    "find / -xdev \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o \\( -type f -o -type d -o -type l \\) "
    "-printf '%p %U:%G %m %y\\n' 2>/dev/null | sort | sha256sum; "
    "find /testbed /home /tmp /var/tmp /opt -xdev -type f -print0 2>/dev/null | sort -z | xargs -0 "
    "-r sha256sum | sha256sum"
)


def test_warm_candidates_share_the_instance_layer_but_never_each_others_files(
    make, client: docker.DockerClient
) -> None:
    """Two candidates on one warm instance layer (issue 23): the second pays no build, its container
    starts from the byte-identical layer with an empty writable layer, and nothing candidate A wrote,
    inside the work tree or outside it, in git or in the user's home, reaches candidate B."""
    from pytest_mobilebench.runtime.recipe import UserHandover

    # an environment layer of its own: another test's clean-up never removes it under this one
    own_env = Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/own\n")
    fx = make(dataclasses.replace(own_env, test_user=UserHandover(root_dirs={"deps": ()})))
    image = fx.runtime.ensure_instance_image(fx.spec)
    a = fx.runtime.prepare(fx.spec)
    try:
        pristine = a.run(_FINGERPRINT, timeout_s=120).output
        owners = a.run(
            "stat -c '%u %n' /testbed /testbed/.git/HEAD /testbed/demo/calc.py /testbed/deps/marker", timeout_s=30
        )
        assert owners.output.split("\n")[:4] == [
            "10001 /testbed",
            "10001 /testbed/.git/HEAD",
            "10001 /testbed/demo/calc.py",
            "0 /testbed/deps/marker",
        ]
        assert a.apply_patch(FIX, name="model_patch").ok
        planted = a.run(
            "set -e; echo A > /testbed/planted.txt; echo A > /tmp/outside.txt; echo A > /var/tmp/outside.txt; "
            "echo A >> ~/.bashrc; git -c user.email=a@x -c user.name=a commit -qam candidate-a; "
            "git tag -f mobilebench-base HEAD >/dev/null; ! echo A 2>/dev/null > /testbed/deps/x; echo done",
            timeout_s=60,
        )
        assert planted.exit_code == 0 and planted.output.strip().endswith("done"), planted.output
    finally:
        a.close()
    b = fx.runtime.prepare(fx.spec)
    try:
        assert b.image.image_id == image.image_id and not b.image.built  # warm: the same layer, no build
        fresh = [c["Path"] for c in client.api.diff(b.container_id) or []]
        assert not [p for p in fresh if p.startswith(("/testbed", "/tmp", "/var/tmp", "/home"))], fresh
        assert b.run(_FINGERPRINT, timeout_s=120).output == pristine  # byte-identical base for every candidate
        seen = b.run(
            "ls /testbed/planted.txt /tmp/outside.txt /var/tmp/outside.txt /testbed/deps/x 2>&1; "
            "grep -c '^A$' ~/.bashrc; git log --format=%s -1; git status --porcelain",
            timeout_s=60,
        ).output
        assert "candidate-a" not in seen and seen.count("No such file") == 4, seen
        assert b.run("git rev-parse mobilebench-base", timeout_s=30).output.strip() == fx.spec.base_commit
        assert b.read_files(["demo/calc.py"])["demo/calc.py"] == b"def add(a, b):\n    return a - b\n"
    finally:
        b.close()
