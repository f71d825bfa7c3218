"""Throughput of one run on the same instances: ``-n 1``, ``-n 2``, and ``-n 2`` over two Docker daemons.

    python benchmarks/bench_scale.py [CASES] [--repo-url-template T]     (root: it makes namespaces)

Each configuration runs twice with ``--predictions=gold --mb-rerun``: *cold* (this benchmark first
removes the instance and dependency images of the selected repositories from every daemon involved, so
they are built, or shipped to the namespaced daemons, again; base and environment images stay) and
*warm* (every image present: containers, patches and tests only). The two daemons are private
``dockerd`` s in network namespaces (tests/netns_daemons.py) without a route out, so their cold run
ships images from the controller's daemon with ``docker save`` / ``load`` instead of building.
Printed: seconds per run, instances per minute, and every run's time as a ratio to ``-n 1`` at the same
temperature (same-run baseline). On a 2-core machine shared with other work, two daemons cannot beat
``-n 2`` on one: the figure shows the price of shipping, not the gain of a second machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from netns_daemons import netns_daemons


def repo_slugs(cases: str) -> list[str]:
    """Docker name slugs of the repositories the manifests under ``cases`` name."""
    import yaml

    from pytest_mobilebench.runtime.naming import docker_name

    files = [Path(cases)] if Path(cases).is_file() else sorted(Path(cases).rglob("*.yaml"))
    return sorted({docker_name(str(yaml.safe_load(f.read_text())["repo"])) for f in files})


def drop_instance_images(urls: list[str], slugs: list[str]) -> None:
    """Remove the instance and dependency images of these repositories (cold start for those layers)."""
    import docker

    prefixes = tuple(p for slug in slugs for p in (f"mobilebench/inst.{slug}-", f"mobilebench/deps.{slug}:"))
    for url in urls:
        client = docker.DockerClient(base_url=url, timeout=300)
        for image in client.api.images(filters={"label": "mobilebench.level"}):
            if any(tag.startswith(prefixes) for tag in image.get("RepoTags") or []):
                try:
                    client.api.remove_image(image["Id"], force=False)
                except docker.errors.APIError:
                    continue  # in use by a container: stays
        client.close()


def timed_run(cases: str, template: str, *args: str) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        command = [
            sys.executable, "-m", "pytest", cases, "--predictions=gold", "--mb-runtime=docker", "--mb-rerun",
            "--mb-cache-level=instance", f"--mb-repo-url-template={template}", f"--mb-reports-dir={tmp}",
            f"--mb-summary={tmp}/summary.json", f"--mb-run-id=bench-scale-{uuid.uuid4().hex[:8]}", "-q",
            "-p", "no:cacheprovider", *args,
        ]  # fmt: skip
        started = time.monotonic()
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
        summary = json.loads(Path(tmp, "summary.json").read_text())
        if summary.get("infra_errors"):
            sys.exit(f"infra errors in {' '.join(args)}:\n{proc.stdout[-3000:]}")
        return seconds, int(summary["total"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="?", default=str(ROOT / "cases" / "examples"))
    parser.add_argument("--repo-url-template", default="https://github.com/{owner}/{name}")
    args = parser.parse_args()
    local = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    slugs = repo_slugs(args.cases)
    rows: dict[tuple[str, str], tuple[float, int]] = {}
    with netns_daemons(2) as daemons:
        hosts = ",".join(d.url for d in daemons)
        configurations = {
            "-n 1": (["-n", "1"], [local]),
            "-n 2": (["-n", "2"], [local]),
            "2 daemons": (["-n", "2", f"--mb-docker-hosts={hosts}"], [local] + [d.url for d in daemons]),
        }
        for name, (flags, urls) in configurations.items():
            drop_instance_images(urls if name != "2 daemons" else [d.url for d in daemons], slugs)
            if name == "2 daemons":  # the controller's daemon holds the images to ship
                timed_run(args.cases, args.repo_url_template, "-n", "1")
            for temperature in ("cold", "warm"):
                rows[(name, temperature)] = timed_run(args.cases, args.repo_url_template, *flags)
                print(f"{name:10} {temperature}: {rows[(name, temperature)][0]:.0f} s", flush=True)
        drop_instance_images([local], slugs)
    for temperature in ("cold", "warm"):
        base = rows[("-n 1", temperature)][0]
        for name in configurations:
            seconds, total = rows[(name, temperature)]
            print(
                f"{temperature} {name:10} {seconds:6.0f} s  {60 * total / seconds:5.1f} instances/min  ratio to "
                f"-n 1: {seconds / base:.2f}"
            )


if __name__ == "__main__":
    main()
