"""Issue 13, the pure parts: host lists and slot tables, sizes, the budget's byte charge and eviction plan."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.budget import (
    ImageInfo,
    budget_option,
    charged_bytes,
    parse_size,
    plan_evictions,
)
from pytest_mobilebench.runtime.hosts import (
    DockerHost,
    ImagePolicy,
    connect_host,
    hosts_option,
    parse_hosts,
    slot_table,
    worker_client,
    worker_index,
)

# ------------------------------------------------------------------------------------------ hosts


def test_parse_hosts_reads_slots_schemes_and_tls_folder(tmp_path) -> None:
    for name in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / name).write_text("x")
    hosts = parse_hosts(f"tcp://10.0.0.2:2375*4, unix:///run/d.sock ,ssh://me@build1, tcp://h:2376?tls={tmp_path}")
    assert hosts == (
        DockerHost("tcp://10.0.0.2:2375", 4),
        DockerHost("unix:///run/d.sock", 1),
        DockerHost("ssh://me@build1", 1),
        DockerHost("tcp://h:2376", 1, str(tmp_path)),
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "no host given"),
        ("http://h:2375", "scheme must be one of"),
        ("tcp://h:2375*0", "slot count '0'"),
        ("tcp://h:2375*", "slot count ''"),
        ("tcp://:2375", "no host name"),
        ("tcp://h:2376?tls=/nonexistent", "cert.pem"),
        ("unix://", "no socket path"),
    ],
)
def test_bad_host_entries_are_named(text: str, says: str) -> None:
    with pytest.raises(ValueError, match="--mb-docker-hosts") as info:
        parse_hosts(text)
    assert says in str(info.value)
    with pytest.raises(argparse.ArgumentTypeError):
        hosts_option(text)


def test_slot_table_interleaves_by_slot_count_and_workers_go_round_robin() -> None:
    a, b = DockerHost("tcp://a:1", 2), DockerHost("tcp://b:1", 1)
    table = slot_table([a, b])
    assert table == [a, b, a]
    assert [table[worker_index(f"gw{n}") % len(table)].url for n in range(6)] == [
        "tcp://a:1",
        "tcp://b:1",
        "tcp://a:1",
    ] * 2
    assert worker_index(None) == worker_index("master") == 0


def test_a_dead_host_fails_over_to_the_next_slot_and_all_dead_is_infra_error() -> None:
    dead = DockerHost("tcp://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(InfraError) as info:
        worker_client([dead, DockerHost("unix:///nonexistent/docker.sock")], "gw0", timeout_s=2)
    assert info.value.kind == "daemon_unreachable"
    assert "127.0.0.1:9" in info.value.message and "/nonexistent/docker.sock" in info.value.message
    with pytest.raises(InfraError):
        connect_host(dead, timeout_s=2)


# ------------------------------------------------------------------------------------------ sizes


def test_parse_size_binary_units() -> None:
    assert parse_size("50G") == 50 << 30
    assert parse_size("800m") == 800 << 20
    assert parse_size("1.5TiB") == int(1.5 * (1 << 40))
    assert parse_size("123") == 123
    for bad in ("", "-1G", "0", "5 X", "G"):
        with pytest.raises(ValueError, match="--mb-image-budget"):
            parse_size(bad)
        with pytest.raises(argparse.ArgumentTypeError):
            budget_option(bad)


# ----------------------------------------------------------------------------------------- budget


def _img(
    name: str, layers: str, size: int, *, harness: bool = True, used: float = 0, in_use: bool = False
) -> ImageInfo:
    return ImageInfo(f"sha256:{name}", tuple(layers), size, harness, used, in_use)


def test_charge_counts_shared_parent_layers_once() -> None:
    debian = _img("debian", "a", 100, harness=False)
    base = _img("base", "ab", 300)
    env = _img("env", "abc", 1000)
    inst1 = _img("i1", "abcd", 1500)
    inst2 = _img("i2", "abce", 1200)
    # harness-only bytes: base 200 + env 700 + i1 500 + i2 200 (debian's 100 are not the harness's)
    assert charged_bytes([debian, base, env, inst1, inst2]) == 1600
    # env evicted (children keep its layers): its bytes are charged to each child, an upper bound
    assert charged_bytes([debian, base, inst1, inst2]) == 200 + 1200 + 900


def test_plan_evicts_least_recently_used_leaves_never_in_use_protected_or_fresh() -> None:
    env = _img("env", "ab", 1000, used=1)
    old = _img("old", "abc", 500, used=10)
    busy = _img("busy", "abd", 500, used=5, in_use=True)
    mine = _img("mine", "abe", 500, used=3)
    fresh = _img("fresh", "abf", 500, used=99)
    newer = _img("newer", "abg", 500, used=20)
    plan = plan_evictions([env, old, busy, mine, fresh, newer], 0, protect={"sha256:mine"}, now=100, grace_s=30)
    # env is the parent of the others (removing it frees nothing); busy in use; mine protected; fresh < 30 s old
    assert plan == ["sha256:old", "sha256:newer"]
    assert plan_evictions([env, old], 10**9, now=100, grace_s=0) == []


layer_chains = st.lists(
    st.tuples(st.text("abcdef", min_size=1, max_size=5), st.integers(0, 1000), st.booleans(), st.booleans()),
    min_size=1,
    max_size=8,
    unique_by=lambda t: t[0],
)


@settings(max_examples=200, deadline=None)
@given(layer_chains, st.integers(0, 3000))
def test_plan_only_touches_evictable_harness_images_and_reaches_budget_when_it_can(chains, budget) -> None:
    images = [
        _img(f"i{n}", layers, size + len(layers), harness=h, used=n, in_use=u)
        for n, (layers, size, h, u) in enumerate(chains)
    ]
    plan = plan_evictions(images, budget, now=1000, grace_s=0)
    by_id = {img.image_id: img for img in images}
    assert len(plan) == len(set(plan))
    assert all(by_id[i].harness and not by_id[i].in_use for i in plan)
    left = [img for img in images if img.image_id not in plan]
    if charged_bytes(left) > budget:  # stopped early: nothing evictable is left
        assert not plan_evictions(left, budget, now=1000, grace_s=0)


class _Budget:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def touch(self, image_id: str) -> None:
        self.calls.append(("touch", image_id))

    def enforce(self, protect=()) -> list[str]:
        self.calls.append(("enforce", set(protect)))
        return []

    def explain(self, error: InfraError) -> InfraError:
        return InfraError(error.kind, error.message + " [budget]")


def test_policy_records_use_and_protects_the_image_just_added() -> None:
    budget = _Budget()
    policy = ImagePolicy(budget=budget)
    policy.used("sha256:a")
    policy.added("mobilebench/inst.x:1", "sha256:b")
    assert budget.calls == [
        ("touch", "sha256:a"),
        ("enforce", {"sha256:a"}),
        ("touch", "sha256:b"),
        ("enforce", {"sha256:b"}),
    ]
    assert policy.supply("t", None) is None
    assert "[budget]" in policy.failed(InfraError("disk_full", "no space left on device")).message


# ------------------------------------------------------------------------------- remote evidence


def test_evidence_round_trips_as_plain_builtins_and_oversized_files_are_listed(tmp_path) -> None:
    import json

    from pytest_mobilebench.remote import pack_evidence, unpack_evidence

    folder = tmp_path / "w" / "run" / "gold" / "inst"
    (folder / "results").mkdir(parents=True)
    (folder / "test_output.log").write_text("ok\n")
    (folder / "results" / "r.bin").write_bytes(bytes(range(256)))
    (folder / "big.log").write_bytes(b"x" * 1000)
    shipped = json.loads(json.dumps(pack_evidence(folder, tmp_path / "w", limit=600)))  # what crosses the gateway
    home = unpack_evidence(shipped, tmp_path / "controller")
    assert home == tmp_path / "controller" / "run" / "gold" / "inst"
    assert (home / "results" / "r.bin").read_bytes() == bytes(range(256))
    assert not (home / "big.log").exists()
    assert json.loads((home / "evidence_skipped.json").read_text()) == {"big.log": 1000}


@pytest.mark.parametrize(
    "bad",
    [
        {"folder": "../escape", "files": {}},
        {"folder": "run/x", "files": {"../../etc/x": ""}},
        {"folder": "/abs", "files": {}},
    ],
)
def test_evidence_paths_from_a_worker_cannot_leave_the_reports_folder(tmp_path, bad) -> None:
    from pytest_mobilebench.remote import unpack_evidence

    with pytest.raises(ValueError, match="unsafe evidence path"):
        unpack_evidence(bad, tmp_path)
    assert list(tmp_path.iterdir()) == []
