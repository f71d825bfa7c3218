"""Leases on shared layers (runtime.leases): a run's clean-up spares a layer another live run holds and
owes its removal to the last run out; dead runs' leases hold nothing."""

from __future__ import annotations

import socket
from pathlib import Path

from pytest_mobilebench.runtime.leases import Leases
from pytest_mobilebench.runtime.owners import owner_label

LAYER = "sha256:" + "ab" * 32


def test_a_live_run_holds_a_layer_and_the_last_run_out_removes_it(tmp_path: Path) -> None:
    first, second = Leases(tmp_path, "run-a"), Leases(tmp_path, "run-b")
    first.take(LAYER)
    assert not first.held_elsewhere(LAYER)  # its own lease never holds back its own clean-up
    second.take(LAYER)
    assert first.held_elsewhere(LAYER)  # run-b goes on: run-a keeps the layer, and owes its removal
    assert first.settle() == []  # still held by run-b
    assert not second.held_elsewhere(LAYER)  # run-a released its lease
    assert second.settle() == [LAYER]  # the last run out removes what run-a wanted removed
    second.forget(LAYER)
    assert list(tmp_path.iterdir()) == []


def test_a_layer_nobody_owes_is_not_removed_by_a_later_run(tmp_path: Path) -> None:
    kept = Leases(tmp_path, "run-a")
    kept.take(LAYER)  # e.g. --mb-cache-level=instance: nothing asked for its removal
    assert kept.settle() == []
    later = Leases(tmp_path, "run-b")
    later.take(LAYER)
    assert later.settle() == [] and list(tmp_path.iterdir()) == []  # bookkeeping gone, the layer stays


def test_leases_of_dead_processes_hold_nothing(tmp_path: Path) -> None:
    dead = f"{socket.gethostname()}:999999999:1"  # no such pid
    Leases(tmp_path, "crashed", owner=dead).take(LAYER)
    assert not Leases(tmp_path, "run-a").held_elsewhere(LAYER)
    assert not list((tmp_path / LAYER.removeprefix("sha256:")).glob("crashed@*"))  # deleted on sight
    elsewhere = Leases(tmp_path, "remote", owner="other-host:12:34")
    elsewhere.take(LAYER)
    assert Leases(tmp_path, "run-a", owner=owner_label()).held_elsewhere(LAYER)  # another host: held while fresh
