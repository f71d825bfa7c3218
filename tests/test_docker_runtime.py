"""Integration tests of the Docker runtime against a real daemon (marked ``docker``).

They need a running dockerd and the Debian base image (made locally with debootstrap by
``ensure_base_image`` the first time: about a minute, cached afterwards). Every test uses its own small
git repository, its own run id and its own instance id, so tests are independent and xdist-safe.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks import workspace_recipe
from pytest_mobilebench.runtime.base import (
    InfraError,
    Runtime,
    Workspace,
    WorkspaceSpec,
)

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from pytest_mobilebench.runtime.baseimage import (
    cache_root,
    ensure_base_image,
)
from pytest_mobilebench.runtime.checkout import shallow_checkout
from pytest_mobilebench.runtime.daemon import sweepable
from pytest_mobilebench.runtime.docker import LABEL_INSTANCE, DockerRuntime
from pytest_mobilebench.runtime.images import LABEL_RUN, BuiltImage, ImageBuilder
from pytest_mobilebench.runtime.owners import LABEL_OWNER
from pytest_mobilebench.runtime.repos import RepoCache
from docker_here import client_with_base_image_or_skip

pytestmark = pytest.mark.docker

HOST_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    """A connected client, or the whole module is skipped with the reason."""
    return client_with_base_image_or_skip()


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A test recipe with the fields the runtime uses (the real one comes from frameworks.recipe)."""

    dockerfile: str
    install_command: str = "mkdir -p deps && echo installed > deps/marker"
    context_files: dict[str, bytes] = dataclasses.field(default_factory=dict)
    context_packages: dict[str, str] = dataclasses.field(default_factory=dict)
    test_user: None = None  # tests run as root here (tests/test_trust_docker.py covers the test user)

    def key(self) -> str:
        return hashlib.sha256(
            json.dumps([self.dockerfile, self.install_command, sorted(self.context_files)]).encode()
        ).hexdigest()


ENV_DOCKERFILE = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo env-layer > /opt/env-marker\n"


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x.invalid",
    }
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


@dataclasses.dataclass
class Fixture:
    runtime: DockerRuntime
    spec: WorkspaceSpec
    repo_dir: Path


def _make_repo(root: Path) -> tuple[Path, str]:
    """``calc``: add() is wrong; test_calc.py tests it; .gitignore keeps Python caches out of diffs."""
    repo = root / "src" / "calc"
    (repo / "demo").mkdir(parents=True)
    (repo / "demo" / "__init__.py").write_text("")
    (repo / "demo" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text(
        "import unittest\nfrom demo.calc import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
    (repo / ".gitignore").write_text("__pycache__/\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    return repo, _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def make(client: docker.DockerClient, tmp_path: Path) -> Iterator:
    """Factory ``make(recipe=..., **runtime options) -> Fixture``; removes what it made afterwards."""
    repo, sha = _make_repo(tmp_path)
    made: list[DockerRuntime] = []

    def factory(recipe: Recipe | None = None, instance_id: str | None = None, **options: object) -> Fixture:
        chosen = recipe or Recipe(ENV_DOCKERFILE)
        run_id = "test-" + uuid.uuid4().hex[:10]
        runtime = DockerRuntime(
            run_id=run_id,
            client=client,
            repos=RepoCache(tmp_path / "mirrors", f"{tmp_path}/src/{{name}}", run_id=run_id),
            recipe_factory=lambda _dir, _spec: chosen,
            node_packages=lambda _recipe: {},
            log_dir=tmp_path / "logs",
            **options,  # type: ignore[arg-type]
        )
        made.append(runtime)
        spec = WorkspaceSpec(
            instance_id=instance_id or f"Demo__calc-{uuid.uuid4().hex[:8]}",
            repo="demo/calc",
            base_commit=sha,
            repo_url=str(repo),
            run_id=run_id,
        )
        return Fixture(runtime, spec, repo)

    yield factory
    for runtime in made:
        runtime.cleanup("base")


FIX = (
    "diff --git a/demo/calc.py b/demo/calc.py\n--- a/demo/calc.py\n+++ b/demo/calc.py\n"
    "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
)
NEW_TEST = (
    "diff --git a/test_more.py b/test_more.py\nnew file mode 100644\n--- /dev/null\n+++ b/test_more.py\n"
    "@@ -0,0 +1,2 @@\n+import unittest\n+class M(unittest.TestCase):\n"
)


def test_protocols_are_implemented(make) -> None:
    fx = make()
    assert isinstance(fx.runtime, Runtime) and fx.runtime.name == "docker"
    ws = fx.runtime.prepare(fx.spec)
    try:
        assert isinstance(ws, Workspace)
    finally:
        ws.close()


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


def test_apply_run_read_diff_restore(make) -> None:
    fx = make()
    ws = fx.runtime.prepare(fx.spec)
    try:
        before = ws.run("python3 -m unittest -q", timeout_s=60)
        assert before.exit_code == 1 and "FAILED (failures=1)" in before.output
        assert ws.diff() == ""  # the install's deps/ folder is excluded, not a change

        applied = ws.apply_patch(FIX, name="model_patch")
        assert applied.ok and applied.method == "git apply", applied.log
        after = ws.run("python3 -m unittest -q", timeout_s=60)
        assert after.exit_code == 0 and "OK" in after.output

        bad = ws.apply_patch(
            "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n", name="bad"
        )
        assert not bad.ok and bad.method is None and bad.log.count("$ ") == 3

        created = ws.apply_patch(NEW_TEST, name="test_patch")
        assert created.ok, created.log
        diff = ws.diff()
        assert "-    return a - b\n+    return a + b" in diff
        assert "new file mode 100644" in diff and "b/test_more.py" in diff

        files = ws.read_files(["**/*.py", "deps/*"])
        assert files["demo/calc.py"] == b"def add(a, b):\n    return a + b\n"
        assert files["deps/marker"] == b"installed\n"
        assert set(files) == {"demo/__init__.py", "demo/calc.py", "test_calc.py", "test_more.py", "deps/marker"}
        assert ws.read_files(["nothing/**/*.xml"]) == {}

        ws.restore_paths(["demo/calc.py", "test_more.py"])
        assert ws.diff() == ""
        assert ws.read_files(["demo/calc.py"])["demo/calc.py"] == b"def add(a, b):\n    return a - b\n"
        assert ws.run("cat /opt/env-marker", timeout_s=30).output == "env-layer\n"
        assert ws.run("git rev-parse mobilebench-base", timeout_s=30).output.strip() == fx.spec.base_commit
    finally:
        ws.close()


def test_timeout_kills_the_container_and_close_removes_it(make, client: docker.DockerClient) -> None:
    fx = make()
    ws = fx.runtime.prepare(fx.spec)
    try:
        ws.run("echo partial > partial.txt", timeout_s=30)
        started = time.monotonic()
        result = ws.run("sleep 600 & sleep 600; echo never", timeout_s=2)
        elapsed = time.monotonic() - started
        assert result.timed_out and result.exit_code is None and "never" not in result.output
        assert elapsed < 10, elapsed
        container = client.containers.get(ws.container_id)
        assert container.status != "running"  # killed: every process in it died
        # evidence can still be read after the kill
        assert ws.read_files(["partial.txt"]) == {"partial.txt": b"partial\n"}
    finally:
        ws.close()
        ws.close()  # safe twice
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(ws.container_id)


def test_network_is_off_unless_asked(make) -> None:
    fx = make()
    ws = fx.runtime.prepare(fx.spec)
    try:
        offline = ws.run(
            "exec 2>&1; ls /sys/class/net; python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 3)'",
            timeout_s=30,
        )
        assert offline.output.split()[0] == "lo" and offline.exit_code != 0
        assert "Network is unreachable" in offline.output
        online = ws.run("ls /sys/class/net", timeout_s=30, network=True)
        assert "eth0" in online.output.split()
        again = ws.run("ls /sys/class/net", timeout_s=30)
        assert again.output.split() == ["lo"]
        # a timeout while the network was on: the restarted container is offline again
        assert ws.run("sleep 600", timeout_s=1, network=True).timed_out
        assert ws.run("ls /sys/class/net", timeout_s=30).output.split() == ["lo"]
        # a container stopped behind the workspace's back is infrastructure, never restarted silently
        fx.runtime.client.containers.get(ws.container_id).kill()
        with pytest.raises(InfraError) as died:
            ws.run("echo back", timeout_s=30)
        assert died.value.kind == "container_died"
    finally:
        ws.close()


def test_labels_and_sweep_of_dead_runs(make, client: docker.DockerClient) -> None:
    fx = make()
    ws = fx.runtime.prepare(fx.spec)
    dead = client.containers.create(
        ws.image.image_id,
        ["sleep", "infinity"],
        labels={LABEL_RUN: "dead-run", LABEL_INSTANCE: "x", LABEL_OWNER: "nohost-but-here:1:1"},
    )
    gone_pid = subprocess.Popen(["true"])
    gone_pid.wait()
    dead_here = client.containers.create(
        ws.image.image_id,
        ["sleep", "infinity"],
        labels={
            LABEL_RUN: "dead-run-2",
            LABEL_INSTANCE: "y",
            LABEL_OWNER: f"{os.uname().nodename}:{gone_pid.pid}:12345",
        },
    )
    try:
        labels = client.containers.get(ws.container_id).labels
        assert labels[LABEL_RUN] == fx.runtime.run_id
        assert labels[LABEL_INSTANCE] == fx.spec.instance_id
        (listed,) = client.api.containers(all=True, filters={"id": dead_here.id})
        assert sweepable(listed, own=fx.runtime.owner, run_id=None)  # its owner is dead: due for removal
        removed = fx.runtime.sweep()
        # every evaluating run sweeps at start, so the other xdist worker may have removed it first: it is gone either way
        assert dead_here.id in removed or not client.api.containers(all=True, filters={"id": dead_here.id})
        assert dead.id not in removed  # other host: unknown liveness, kept
        assert ws.container_id not in removed  # our own live container is kept
        assert dead.id in fx.runtime.sweep(run_id="dead-run")
        client.containers.get(ws.container_id)  # still there
    finally:
        ws.close()
        for container in (dead, dead_here):
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass


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


def test_oom_is_detected(make) -> None:
    fx = make(mem_limit="64m")
    ws = fx.runtime.prepare(fx.spec)
    try:
        with pytest.raises(InfraError) as killed:
            ws.run("python3 -c 'x = bytearray(200 * 1024 * 1024); print(len(x))'", timeout_s=60)
        assert killed.value.kind == "oom_killed"
        plain_kill = ws.run("kill -9 $$", timeout_s=30)
        assert plain_kill.exit_code == 137 and not plain_kill.oom_killed
        assert ws.run("echo alive", timeout_s=30).output == "alive\n"
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
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
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
        _git(repo, "rev-parse", "HEAD"),
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
    "find /testbed /home /tmp /var/tmp /opt -xdev -type f -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum | sha256sum"
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


def test_reads_kept_never_cross_a_change_nor_reach_another_candidate(make) -> None:
    """Issue 23, item 3: a read kept in a workspace (its read memo) is never served after anything ran or
    was copied in, and the base reads kept per image id (suites/issue_resolution/base_memo.py) hold the
    image's files only: a candidate's changes, before or after a read, never reach another's reads."""
    from pytest_mobilebench.runtime.recipe import UserHandover
    from pytest_mobilebench.suites.issue_resolution import base_memo
    from pytest_mobilebench.suites.issue_resolution.judge import base_status

    own_env = Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/own\n")
    fx = make(dataclasses.replace(own_env, test_user=UserHandover(root_dirs={"deps": ()})))
    base = b"def add(a, b):\n    return a - b\n"
    test = (fx.repo_dir / "test_calc.py").read_bytes()
    names = ["demo/calc.py", "deps/marker"]
    fw = f"fw-{uuid.uuid4().hex[:8]}"

    def config(ws):
        return base_memo.config(base_memo.base_key(ws), fw, lambda: ws.read_files(["demo/calc.py", "*.py"]))

    def status(ws):
        return base_memo.status(base_memo.base_key(ws), names, lambda n: base_status(ws, n))

    a = fx.runtime.prepare(fx.spec)
    try:
        key = base_memo.base_key(a)
        assert key == a.image.image_id
        at_base = status(a)
        assert config(a) == {"demo/calc.py": base, "test_calc.py": test} and "demo/calc.py" in at_base[1]
        assert base_memo.base_key(a) is None  # base_status ran a command: nothing more is kept for this one
        assert a.apply_patch(FIX, name="model_patch").ok
        fixed = a.read_files(["demo/calc.py"])["demo/calc.py"]
        assert fixed != base and config(a)["demo/calc.py"] == fixed  # read live, not from the image's memo
        assert a.read_files(["demo/calc.py"])["demo/calc.py"] == fixed  # kept: nothing ran in between
        assert a.run("echo changed > demo/calc.py && echo n > new.py", timeout_s=30).exit_code == 0
        assert a.read_files(["demo/calc.py", "*.py"]) == {
            "demo/calc.py": b"changed\n",
            "new.py": b"n\n",
            "test_calc.py": test,
        }
        a.put_input("x", b"")  # a copy in forgets too
        a.write_root_files({"/testbed/root.py": b"r\n"}, private="")
        assert a.read_files(["*.py"]) == {"new.py": b"n\n", "root.py": b"r\n", "test_calc.py": test}
    finally:
        a.close()
    c = fx.runtime.prepare(fx.spec)  # a candidate that changes the tree before any base read keeps nothing
    try:
        assert c.run("echo planted > demo/calc.py && echo p > planted.py", timeout_s=30).exit_code == 0
        assert base_memo.base_key(c) is None and config(c)["demo/calc.py"] == b"planted\n"
    finally:
        c.close()
    b = fx.runtime.prepare(fx.spec)
    try:
        assert base_memo.base_key(b) == key
        assert config(b) == {"demo/calc.py": base, "test_calc.py": test} == b.read_files(["demo/calc.py", "*.py"])
        assert status(b) == at_base == base_status(b, names)
    finally:
        b.close()


def _own_env() -> Recipe:
    """A recipe whose environment layer no other test shares (a layer another test built can be removed by
    that test's clean-up while this one builds on it, under xdist)."""
    return Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/own\n")


def test_a_removal_handed_to_the_background_ends_before_the_run_end_returns(
    make, client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23, item 3: ``close_later`` closes the workspace at once and removes the container in the
    background (slowed down here); the run-end clean-up waits for it, so nothing is left after it."""
    from pytest_mobilebench.runtime import docker_workspace, removals

    def slow(remove):
        removals.remove_later(lambda: (time.sleep(1.0), remove()))

    monkeypatch.setattr(docker_workspace, "remove_later", slow)
    fx = make(_own_env())  # an environment layer of its own: no other test's clean-up removes it
    ws = fx.runtime.prepare(fx.spec)
    ws.run("sleep 600 &", timeout_s=30)  # a leftover process: the removal kills it
    started = time.monotonic()
    ws.close_later()
    ws.close_later()  # safe twice
    assert time.monotonic() - started < 0.5  # the caller did not wait
    assert client.containers.get(ws.container_id).status == "running"  # not removed yet
    with pytest.raises(InfraError) as closed:
        ws.read_files(["demo/calc.py"])
    assert closed.value.kind == "workspace_error"
    fx.runtime.cleanup("instance")  # the run's end: waits for the background removal first
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(ws.container_id)
    assert removals.REMOVALS.pending == 0


def test_staged_patches_are_copied_in_once_root_owned_and_applied_as_given(make) -> None:
    """Issue 23, item 3: both patches of a candidate go in with one copy (one tar); ``apply_patch`` then
    copies nothing, unless the bytes differ from what was staged or the staged file was used already."""
    fx = make(_own_env())  # an environment layer of its own: no other test's clean-up removes it
    ws = fx.runtime.prepare(fx.spec)
    puts: list[str] = []
    real = ws._container.put_archive
    ws._container.put_archive = lambda path, data: (puts.append(path), real(path, data))[1]  # type: ignore[method-assign]
    try:
        ws.stage_patches({"model_patch": FIX, "test_patch": NEW_TEST})
        assert len(puts) == 1
        owner = ws.run(
            "stat -c '%U %a' /var/tmp/mobilebench-model_patch.diff /var/tmp/mobilebench-test_patch.diff", timeout_s=30
        ).output
        assert owner == "root 644\nroot 644\n"
        assert ws.apply_patch(FIX, name="model_patch").ok and ws.apply_patch(NEW_TEST, name="test_patch").ok
        assert len(puts) == 1  # both staged: nothing copied again
        diff = ws.diff()
        assert "+    return a + b" in diff and "b/test_more.py" in diff
        ws.restore_paths(["demo/calc.py", "test_more.py"])
        assert len(puts) == 2  # the restore script: not staged
        assert ws.apply_patch(FIX, name="model_patch").ok and len(puts) == 3  # used once: copied again
        ws.stage_patches({"test_patch": NEW_TEST})
        other = NEW_TEST.replace("class M(", "class N(")  # other bytes under the staged name: copied in
        assert ws.apply_patch(other, name="test_patch").ok and len(puts) == 5
        assert "class N(" in ws.read_files(["test_more.py"])["test_more.py"].decode()
    finally:
        ws.close()


def test_list_files_names_what_read_files_would_and_copies_nothing(make) -> None:
    """Issue 23, item 3: a file whose presence alone matters (a lockfile) is listed, never copied out."""
    fx = make(_own_env())  # an environment layer of its own: no other test's clean-up removes it
    ws = fx.runtime.prepare(fx.spec)
    try:
        ws.run("ln -s demo/calc.py link.py", timeout_s=30)  # a link is no file: neither lists it
        fetched: list[str] = []
        real = ws._fetch
        ws._fetch = lambda path: (fetched.append(path), real(path))[1]  # type: ignore[method-assign]
        assert sorted(ws.list_files(["*.py", "demo/*.py", "nothing/*"])) == [
            "demo/__init__.py",
            "demo/calc.py",
            "test_calc.py",
        ]
        assert fetched == []
        assert sorted(ws.read_files(["*.py", "demo/*.py"])) == sorted(ws.list_files(["*.py", "demo/*.py"]))
    finally:
        ws.close()


def test_folders_listed_ahead_and_under_a_listed_folder_cost_no_further_find(make) -> None:
    """Issue 23, item 3: the folders a read will want next (``list_ahead``: the jest probes in
    ``node_modules``) go into the same ``find`` as the read before it, and a folder under a listed one is
    answered from that listing: the reads are those of a workspace without either."""
    from pytest_mobilebench.runtime.recipe import UserHandover

    fx = make(dataclasses.replace(_own_env(), test_user=UserHandover(root_dirs={"deps": ()})))  # find as the test user
    setup = (
        "mkdir -p node_modules/pkg tests/unit && echo '{}' > node_modules/pkg/package.json && "
        "echo t > tests/unit/a_test.py && ln -s /etc tests/etc"
    )
    patterns = ["node_modules/pkg/package.json", "tests/unit/*.py", "tests/etc/*", "demo/*.py"]
    reads = []
    for ahead in (True, False):
        ws = fx.runtime.prepare(fx.spec)
        try:
            ws.run(setup, timeout_s=30)
            finds: list[list[str]] = []
            ws._list = lambda folders, finds=finds, real=ws._list: (finds.append(list(folders)), real(folders))[1]  # type: ignore[method-assign]
            if ahead:
                ws.list_ahead(["node_modules/pkg/package.json"])
            first = ws.read_files(["*.py"])
            reads.append((first, ws.read_files(patterns), len(finds)))
        finally:
            ws.close()
    (first, later, count), (plain_first, plain_later, plain_count) = reads
    assert (first, later) == (plain_first, plain_later) and "tests/unit/a_test.py" in later
    assert not any(key.startswith("tests/etc/") for key in later)  # a link is never followed
    assert (count, plain_count) == (1, 2)
