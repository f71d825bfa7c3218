"""Host faults are named results per item (issue 25, item 1): no answering ``--mb-docker-hosts`` host gives
every item ``infra_error`` / ``daemon_unreachable`` naming the host, retried by the next run (never cached),
and the headline says how many items no host could run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.daemon import host_url, require_answer
from pytest_mobilebench.runtime.hosts import DockerHost, connect_host

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")


def test_an_unpinged_client_of_a_dead_host_exists_and_names_its_host(tmp_path: Path) -> None:
    dead = DockerHost(f"unix://{tmp_path}/dead.sock")
    client = connect_host(dead, ping=False)  # used to raise: the SDK asked the API version when constructed
    try:
        assert host_url(client) == dead.url
        with pytest.raises(InfraError) as info:
            require_answer(client, timeout_s=2)
        assert info.value.kind == "daemon_unreachable" and dead.url in info.value.message
    finally:
        client.close()
    with pytest.raises(InfraError):
        connect_host(dead, timeout_s=2)  # pinged: still refused


def _run(pytester: pytest.Pytester, hosts: str) -> tuple[pytest.RunResult, list[dict]]:
    reports = pytester.path / "reports"
    result = pytester.runpytest_subprocess(
        str(ROOT / "cases" / "examples"),
        "--predictions=gold",
        f"--mb-docker-hosts={hosts}",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        timeout=240,
    )
    lines = (reports / "latest" / "results.jsonl").read_text().splitlines()
    return result, [json.loads(line) for line in lines]


@pytest.mark.e2e
def test_no_answering_host_gives_each_item_daemon_unreachable_naming_the_host_and_retries(
    pytester: pytest.Pytester,
) -> None:
    dead = f"unix://{pytester.path}/dead.sock,tcp://127.0.0.1:9"  # no socket; the discard port
    result, rows = _run(pytester, dead)
    assert {r["instance_id"] for r in rows} == {"mobilebench__counter-1", "mobilebench__counter-2"}
    for row in rows:
        assert (row["reason"], row["infra_kind"], row["retryable"]) == ("infra_error", "daemon_unreachable", True)
        assert "does not answer" in row["detail"] and ("dead.sock" in row["detail"] or "127.0.0.1:9" in row["detail"])
    out = result.stdout.str()
    assert "ERROR cases" not in out  # a result, not a setup error
    assert "infra errors 2" in out and "infra kinds: daemon_unreachable 2" in out
    assert "no Docker host could run 2 item(s)" in out
    again, rows = _run(pytester, dead)
    assert not any(r.get("cached") for r in rows) and {r["infra_kind"] for r in rows} == {"daemon_unreachable"}


def test_an_unpinged_client_whose_host_answers_after_all_asks_the_real_api_version() -> None:
    from pytest_mobilebench.suites.issue_resolution import docker_answers

    if not docker_answers():
        pytest.skip("no Docker daemon answers")
    import os

    client = connect_host(DockerHost(os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"), ping=False)
    try:
        require_answer(client)
        assert client.api._version == client.api.version()["ApiVersion"]
        client.api.containers(limit=1)  # a real call at that version
    finally:
        client.close()
