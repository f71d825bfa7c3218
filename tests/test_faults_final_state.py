"""Resource limits are decided on the command's final state too (issue 35, item 3): disk, memory and process
counts are measured once more when the command ends (``runtime/limits.py``), so the same candidate always
gets the same verdict."""

from __future__ import annotations

import pytest

from pytest_mobilebench.runtime import limits
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.limits import Counters, counters_of, grep_files

V1 = (
    b"/sys/fs/cgroup/memory/memory.oom_control:oom_kill_disable 0\n"
    b"/sys/fs/cgroup/memory/memory.oom_control:under_oom 0\n"
    b"/sys/fs/cgroup/memory/memory.oom_control:oom_kill 2\n/sys/fs/cgroup/pids/pids.events:max 7\n"
)
V2 = (
    b"/sys/fs/cgroup/memory.events:low 0\n/sys/fs/cgroup/memory.events:max 9\n/sys/fs/cgroup/memory.events:oom_kill 1\n"
)


def test_the_kernel_counters_are_read_from_cgroup_v1_and_v2_files() -> None:
    assert counters_of(grep_files(V1)) == Counters(oom_kills=2, pids_refused=7)
    assert counters_of(grep_files(V2)) == Counters(oom_kills=1, pids_refused=0)  # memory.events' "max" is no fork
    assert counters_of(grep_files(b"")) is None
    assert counters_of({"/sys/fs/cgroup/pids.events": "max x\n"}) is None


def test_only_what_grew_since_the_last_look_counts_and_a_restart_starts_from_zero() -> None:
    reads = iter([V1, V1, V1.replace(b"max 7", b"max 9"), V1])
    watch = limits.LimitWatch(None, "c" * 64, None, lambda: next(reads))  # type: ignore[arg-type]
    first, second, third = watch.ended(), watch.ended(), watch.ended()
    assert (first.oom_kills, first.pids_refused) == (2, 7)  # a fresh container's cgroups start at 0
    assert (second.oom_kills, second.pids_refused) == (0, 0)  # nothing new since the last look
    assert (third.oom_kills, third.pids_refused) == (0, 2)
    watch.restarted()
    assert watch.ended().oom_kills == 2


docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from test_trust_docker import client, workspace  # noqa: E402,F401 - the fixtures (images and containers removed after)

WRITE_THEN_EXIT = "rm -f /tmp/fill; head -c {n} /dev/zero > /tmp/fill; exit 0"


@pytest.mark.docker
def test_a_write_past_the_disk_limit_right_before_the_exit_is_disk_full_every_time(workspace) -> None:  # noqa: F811 (the fixture)
    ws = workspace(disk_limit="64m")
    assert ws.run(WRITE_THEN_EXIT.format(n=16_000_000), timeout_s=120).exit_code == 0  # under the limit: its own
    verdicts = []
    for _ in range(3):  # the poll (every 3 s) never sees a write of a second; the final look always does
        with pytest.raises(InfraError) as full:
            ws.run(WRITE_THEN_EXIT.format(n=100_000_000), timeout_s=120)
        verdicts.append((full.value.kind, "writable layer" in full.value.message))
    assert verdicts == [("disk_full", True)] * 3


@pytest.mark.docker
@pytest.mark.parametrize("where", ["host", "container"])
def test_an_oom_kill_is_found_by_the_kernels_counter_when_the_events_come_late(workspace, monkeypatch, where) -> None:  # noqa: F811
    if where == "container":  # a remote daemon: the counters are read in the container by root's grep
        monkeypatch.setattr(limits, "host_counters", lambda _id: None)
    ws = workspace(mem_limit="96m")
    monkeypatch.setattr(ws, "_events_since", lambda _since, _actions: set())  # the daemon's events not in yet
    with pytest.raises(InfraError) as oom:
        ws.run("python3 -c 'x = bytearray(400 << 20)'; exit 0", timeout_s=120)
    assert oom.value.kind == "oom_killed"
    assert ws.run("true", timeout_s=60).exit_code == 0  # counted once: the next command is its own


@pytest.mark.docker
@pytest.mark.parametrize("where", ["host", "container"])
def test_a_fork_the_process_limit_refused_is_pids_limit(workspace, monkeypatch, where) -> None:  # noqa: F811
    if where == "container":
        monkeypatch.setattr(limits, "host_counters", lambda _id: None)
    ws = workspace(pids_limit=40)
    with pytest.raises(InfraError) as refused:
        ws.run("for i in $(seq 80); do sleep 1 & done 2>/dev/null; wait; exit 0", timeout_s=120)
    assert refused.value.kind == "pids_limit" and "refused" in refused.value.message
    assert ws.run("for i in $(seq 10); do sleep 0.1 & done; wait", timeout_s=60).exit_code == 0
