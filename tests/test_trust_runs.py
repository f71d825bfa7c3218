"""Runs that share a machine (issue 7, item 6): own folders, the ``latest`` link, not-run items, a full disk."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.report.runs import (
    ReportsDiskFull,
    instance_of_nodeid,
    not_run_and_unmatched,
    point_latest,
    run_files,
    write_summary,
)


def test_each_run_has_its_own_files_and_latest_points_at_the_last(tmp_path: Path) -> None:
    assert run_files(tmp_path, "r1") == (tmp_path / "r1" / "summary.json", tmp_path / "r1" / "results.jsonl")
    assert run_files(tmp_path, "r1", tmp_path / "mine.json") == (
        tmp_path / "mine.json",
        tmp_path / "r1" / "results.jsonl",
    )
    (tmp_path / "r1").mkdir()
    (tmp_path / "r2").mkdir()
    point_latest(tmp_path, "r1")
    point_latest(tmp_path, "r2")
    assert os.readlink(tmp_path / "latest") == "r2" and (tmp_path / "latest").resolve() == (tmp_path / "r2").resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "r1", "r2"]  # no temporary link left
    (tmp_path / "other").mkdir()
    (tmp_path / "latest").unlink()
    (tmp_path / "latest").mkdir()
    with pytest.raises(OSError, match="not a link"):
        point_latest(tmp_path, "r1")


def test_interrupted_items_are_not_run_never_unmatched() -> None:
    selected = [
        instance_of_nodeid(n) for n in ("cases/a.yaml::o__r-1", "cases/a.yaml::o__r-2[m1]", "cases/a.yaml::o__r-3")
    ]
    assert selected == ["o__r-1", "o__r-2", "o__r-3"]
    not_run, unmatched = not_run_and_unmatched(selected, ["o__r-1"], ["o__r-1", "o__r-2", "o__r-3", "typo-9"])
    assert not_run == ["o__r-2", "o__r-3"] and unmatched == ["typo-9"]


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/bin/mount").exists(), reason="mounting a tmpfs needs root")
def test_a_full_reports_disk_keeps_the_previous_summary(tmp_path: Path) -> None:
    disk = tmp_path / "tiny"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], check=False, capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        previous = {"run_id": "before", "resolved": 1}
        write_summary(disk / "summary.json", previous)
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass  # ENOSPC: the disk is full now
        finally:
            os.close(fd)
        with pytest.raises(
            ReportsDiskFull,
            match=r"the reports disk is full: .* was not written \(the previous summary there is intact\)",
        ):
            write_summary(disk / "summary.json", {"run_id": "after", "blob": "x" * 100_000})
        assert json.loads((disk / "summary.json").read_text()) == previous
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "summary.json"]  # no temporary file left
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_sweep_takes_only_containers_of_dead_runs() -> None:
    import socket
    import time

    from pytest_mobilebench.runtime.daemon import sweepable as _sweepable
    from pytest_mobilebench.runtime.owners import LABEL_OWNER, owner_label
    from pytest_mobilebench.runtime.images import LABEL_RUN

    me = owner_label()
    dead = f"{socket.gethostname()}:999999:1"
    other_host = "elsewhere:1:1"
    old, new = time.time() - 3600, time.time()

    def entry(owner: str | None, state: str = "exited", created: float = old, run: str = "r") -> dict:
        labels = {LABEL_RUN: run, **({LABEL_OWNER: owner} if owner is not None else {})}
        return {"Labels": labels, "State": state, "Created": created}

    assert not _sweepable(entry(me), own=me, run_id=None)  # this process's own
    assert not _sweepable(entry(owner_label(os.getppid())), own=me, run_id=None)  # a live process (the parent)
    assert _sweepable(entry(dead), own=me, run_id=None)  # its process is gone
    assert not _sweepable(entry(other_host), own=me, run_id=None)  # unknown: another host
    assert _sweepable(entry(None), own=me, run_id=None)  # ownerless build step, stopped an hour ago
    assert not _sweepable(entry(None, created=new), own=me, run_id=None)  # maybe a live build's step
    assert not _sweepable(entry(None, state="running"), own=me, run_id=None)


def test_real_candidates_never_run_unisolated_without_consent() -> None:
    from pytest_mobilebench.runtime.local import local_refusal

    assert local_refusal("auto", daemon=False, trusted=True) is None  # gold without a daemon: local is fine
    no_daemon = local_refusal("auto", daemon=False, trusted=False)
    assert (
        no_daemon is not None and no_daemon.kind == "daemon_unreachable" and "never run unisolated" in no_daemon.message
    )
    local = local_refusal("local", daemon=True, trusted=False)
    assert local is not None and local.kind == "untrusted_local_run" and "--mb-trust-candidates" in local.message
    assert local_refusal("local", daemon=True, trusted=True) is None  # --mb-trust-candidates
