"""Issue 13 for real: two Docker daemons in their own network namespaces (tests/netns_daemons.py), a run
with ``-n 2`` spread over both gives the verdicts of a one-daemon run; a budget smaller than a run's
images evicts and the run still completes.

The namespaced daemons have no route out, so every image reaches them through ``docker save`` /
``docker load`` over the API from the controller's daemon, where a one-daemon reference run built them
(``--mb-cache-level instance``). Everything made here is removed at the end: the reference run's images
on the main daemon (by their run label), and the daemons, namespaces, veths and folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from netns_daemons import NsDaemon, netns_available, netns_daemons

from pytest_mobilebench.runtime.images import LABEL_LEVEL, LABEL_RUN
from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
    pytest.mark.skipif(netns_available() is not None, reason=str(netns_available())),
]


def run_examples(reports: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    """``pytest cases/examples --predictions=gold`` in a fresh interpreter; the summary it wrote. When an
    item ended as infrastructure (seen on this 2-core machine under a full test run: npm's "Exit handler never
    called!" inside an image build), the run is repeated once, as a user would: the re-run keeps the
    finished verdicts and retries only the infra ones (never cached)."""
    summary = _run_examples_once(reports, *args, env=env)
    if any(v["reason"] == "infra_error" for v in summary["instances"].values()):
        summary = _run_examples_once(reports, *args, env=env)
    return summary


def _run_examples_once(reports: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(ROOT / "cases" / "examples"),
        "--predictions=gold",
        "--mb-runtime=docker",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / 'summary.json'}",
        "-p",
        "no:cacheprovider",
        "-q",
        *args,
    ]
    proc = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})}, timeout=1500
    )
    assert (reports / "summary.json").is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((reports / "summary.json").read_text())


def verdicts(summary: dict) -> dict[str, tuple]:
    """instance -> (verdict, reason, F2P passed, P2P passed); an error result keeps its detail (shown on failure)."""
    return {
        k: (
            v.get("verdict"),
            v["reason"],
            v.get("f2p_passed"),
            v.get("p2p_passed"),
            *(() if v.get("verdict") else (v.get("detail"),)),
        )
        for k, v in summary["instances"].items()
    }


def harness_images(url: str, level: str = "instance") -> list[str]:
    import docker

    client = docker.DockerClient(base_url=url, timeout=60)
    try:
        return [t for img in client.images.list(filters={"label": f"{LABEL_LEVEL}={level}"}) for t in img.tags]
    finally:
        client.close()


def leftover_containers(url: str) -> list[str]:
    import docker

    client = docker.DockerClient(base_url=url, timeout=60)
    try:
        return [c["Id"] for c in client.api.containers(all=True, filters={"label": LABEL_RUN})]
    finally:
        client.close()


@pytest.fixture(scope="module")
def daemons() -> Iterator[list[NsDaemon]]:
    with netns_daemons(2) as started:
        yield started


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The one-daemon run on the main daemon, keeping its images for shipping; they are removed after."""
    import docker

    run_id = f"scale-ref-{uuid.uuid4().hex[:8]}"
    try:
        yield run_examples(
            tmp_path_factory.mktemp("ref"), "-n", "2", f"--mb-run-id={run_id}", "--mb-cache-level=instance"
        )
    finally:
        client = docker.from_env(timeout=120)
        for level in ("instance", "deps", "env", "base"):
            for image in client.api.images(filters={"label": [f"{LABEL_RUN}={run_id}", f"{LABEL_LEVEL}={level}"]}):
                client.api.remove_image(image["Id"], force=True)
        client.close()


@pytest.mark.e2e
def test_two_daemons_under_xdist_give_the_one_daemon_verdicts(daemons, reference, tmp_path) -> None:
    assert {v[1] for v in verdicts(reference).values()} == {"resolved"}
    hosts = ",".join(d.url for d in daemons)
    summary = run_examples(tmp_path, "-n", "2", f"--mb-docker-hosts={hosts}", "--mb-cache-level=instance")
    assert verdicts(summary) == verdicts(reference)
    assert all(entry["runtime"] == "docker" for entry in summary["instances"].values())
    # each worker ran its instance on its own daemon: each daemon received an instance image
    assert all(harness_images(d.url) for d in daemons), [harness_images(d.url) for d in daemons]
    assert all(leftover_containers(d.url) == [] for d in daemons)


@pytest.mark.e2e
def test_a_budget_smaller_than_the_run_evicts_and_the_run_completes(daemons, reference, tmp_path) -> None:
    daemon = daemons[1]
    summary = run_examples(
        tmp_path,
        "-p",
        "no:xdist",
        f"--mb-docker-hosts={daemon.url}",
        "--mb-image-budget=1M",
        "--mb-cache-level=instance",
        env={"MOBILEBENCH_IMAGE_BUDGET_GRACE_S": "0"},
    )
    assert verdicts(summary) == verdicts(reference)
    # both instances ran on this daemon, yet at most one instance image is left: the other was evicted
    assert len(harness_images(daemon.url)) <= 1, harness_images(daemon.url)
    assert harness_images(daemon.url, "env"), "the parent of the image in use is never evicted"
    progress = "".join(f.read_text() for f in tmp_path.glob("*/progress.log"))
    assert "evicted" in progress and "shipping" in progress
    assert leftover_containers(daemon.url) == []
