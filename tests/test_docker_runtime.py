"""Integration tests of the Docker runtime's workspaces against a real daemon (marked ``docker``): apply, run,
read, diff, restore, timeouts, network, labels and sweeps (image layers: ``test_docker_runtime_images.py``).

They need a running dockerd and the Debian base image (made locally with debootstrap by
``ensure_base_image`` the first time: about a minute, cached afterwards). Every test uses its own small
git repository, its own run id and its own instance id, so tests are independent and xdist-safe.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
import uuid

import pytest

from pytest_mobilebench.runtime.base import (
    InfraError,
    Runtime,
    Workspace,
)

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from pytest_mobilebench.runtime.daemon import sweepable
from pytest_mobilebench.runtime.images import LABEL_INSTANCE, LABEL_RUN
from pytest_mobilebench.runtime.owners import LABEL_OWNER


from docker_runtime_fixture import ENV_DOCKERFILE, FIX, NEW_TEST, Recipe, own_env
from docker_runtime_fixture import client, make  # noqa: F401  (fixtures)

pytestmark = pytest.mark.docker


def test_protocols_are_implemented(make) -> None:
    fx = make()
    assert isinstance(fx.runtime, Runtime) and fx.runtime.name == "docker"
    ws = fx.runtime.prepare(fx.spec)
    try:
        assert isinstance(ws, Workspace)
    finally:
        ws.close()


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
        # every evaluating run sweeps at start, so the other xdist worker may have removed it first: it is gone either
        # way
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


def test_a_removal_handed_to_the_background_ends_before_the_run_end_returns(
    make, client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 23, item 3: ``close_later`` closes the workspace at once and removes the container in the
    background (slowed down here); the run-end clean-up waits for it, so nothing is left after it."""
    from pytest_mobilebench.runtime import docker_workspace, removals

    def slow(remove):
        removals.remove_later(lambda: (time.sleep(1.0), remove()))

    monkeypatch.setattr(docker_workspace, "remove_later", slow)
    fx = make(own_env())  # an environment layer of its own: no other test's clean-up removes it
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
    fx = make(own_env())  # an environment layer of its own: no other test's clean-up removes it
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
    fx = make(own_env())  # an environment layer of its own: no other test's clean-up removes it
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

    fx = make(dataclasses.replace(own_env(), test_user=UserHandover(root_dirs={"deps": ()})))  # find as the test user
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
