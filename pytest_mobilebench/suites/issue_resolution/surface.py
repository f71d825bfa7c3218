"""What the issue-resolution suite shows the user: its options, markers and report columns.

Declared once here; the plugin adds the options to the command line, the markers to the ini and the columns
to the html report (:class:`pytest_mobilebench.suites.base.Suite`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final, final

from pytest_mobilebench import frameworks
from pytest_mobilebench.runtime.budget import budget_option
from pytest_mobilebench.runtime.hosts import hosts_option
from pytest_mobilebench.suites.base import Column, Option

__all__ = ["COLUMNS", "FIXTURES", "MARKERS", "OPTIONS"]

OPTIONS: Final[tuple[Option, ...]] = (
    Option(("--dataset-framework",), "dataset_framework", "framework of --dataset rows that lack one"),
    Option(("--mb-runtime",), "mb_runtime",
           "where issue-resolution instances run; auto = docker when a daemon answers (never local for real "
           "predictions); local needs --mb-trust-candidates",
           default="auto", choices=("auto", "docker", "local"), keyed=True),
    Option(("--mb-trust-candidates",), "mb_trust_candidates",
           "allow --mb-runtime=local to run real candidates UNISOLATED on this host (gold / empty need none)",
           default=False, action="store_true"),
    Option(("--mb-repo-url-template",), "mb_repo_url_template",
           "clone URL template, e.g. file:///srv/mirrors/{owner}+{name}.git for offline mirrors",
           default="https://github.com/{owner}/{name}", env="MOBILEBENCH_REPO_URL_TEMPLATE", keyed=True),
    Option(("--mb-docker-hosts",), "mb_docker_hosts",
           "Docker daemons for the workers: URL[*slots],... (unix://, tcp://[?tls=DIR], ssh://); worker gwN "
           "takes slot N of the interleaved slot table (docs/scale-out.md)",
           type=hosts_option, env="MOBILEBENCH_DOCKER_HOSTS"),
    Option(("--mb-registry",), "mb_registry",
           "host:port of a registry: images a daemon lacks are pulled from it, images built are pushed to it"),
    Option(("--mb-image-budget",), "mb_image_budget",
           "bytes of harness images kept per daemon (50G, 800M): least recently used evicted beyond it",
           type=budget_option),
    Option(("--mb-cache-level",), "mb_cache_level", "which Docker images are kept after the run",
           default="env", choices=("none", "base", "env", "instance")),
    Option(("--mb-force-rebuild",), "mb_force_rebuild", "rebuild Docker images even when their hash matches",
           default=False, action="store_true"),
    Option(("--mb-ca-bundle",), "mb_ca_bundle", "CA bundle injected into images (default: the system bundle)"),
    Option(("--mb-instance-timeout",), "mb_instance_timeout", "wall-clock seconds for one test run (default 1800)",
           default=1800.0, type=float, keyed=True, item_deadline=True),
    Option(("--mb-mem-limit",), "mb_mem_limit", "memory limit of instance containers", default="4g"),
    Option(("--mb-cpus",), "mb_cpus", "CPU limit of instance containers (CPUs)", default=2.0, type=float),
    Option(("--mb-pids-limit",), "mb_pids_limit", "process limit of instance containers", default=4096, type=int),
    Option(("--mb-install-deadline",), "mb_install_deadline",
           "seconds the shared dependency install may run (default 3600); then build_hung, infrastructure",
           type=float),
    Option(("--mb-install-silence",), "mb_install_silence",
           "seconds the dependency install may print nothing (default 900)", type=float),
    Option(("--mb-image-build-deadline",), "mb_image_build_deadline",
           "seconds one image build may run (default 7200)", type=float),
    Option(("--mb-image-build-silence",), "mb_image_build_silence",
           "seconds an image build may print nothing (default 1800)", type=float),
    Option(("--mb-max-patch-files",), "mb_max_patch_files",
           "most files a candidate patch may touch; more is policy_violation (patch_too_large), nothing runs",
           default=5_000, type=int, keyed=True),
    Option(("--mb-max-patch-bytes",), "mb_max_patch_bytes", "most bytes of a candidate patch (default 64 MiB)",
           default=64 << 20, type=int, keyed=True),
    Option(("--mb-max-patch-lines",), "mb_max_patch_lines", "most added + removed lines of a candidate patch",
           default=1_000_000, type=int, keyed=True),
    Option(("--mb-validate",), "mb_validate", "with --predictions=gold: run base, test and fix configurations",
           default=False, action="store_true", keyed=True),
    Option(("--mb-validate-runs",), "mb_validate_runs", "repeat validation runs and drop flaky tests",
           default=1, type=int, keyed=True),
    Option(("--mb-audit",), "mb_audit",
           "audit the instances with their gold patch: gold resolves, flaky tests, gold ids never reported, "
           "test patch without test file, per-hunk test adequacy, duplicate fixes (docs/datasets.md)",
           default=False, action="store_true", keyed=True),
    Option(("--mb-audit-runs",), "mb_audit_runs", "gold runs per audited instance (at least 2: flaky tests)",
           default=2, type=int, keyed=True),
)


@final
class FrameworkMarkers(Mapping[str, str]):
    """The suite's own markers plus, for every registered framework, its name and its ``markers`` (what
    :func:`pytest_mobilebench.suites.issue_resolution.manifest.record_for` puts on an instance), read from the
    registry at each look-up: a framework registered later (a plugin's, a ``conftest.py``'s) gets its
    markers declared without editing this file."""

    def __init__(self, own: Mapping[str, str]) -> None:
        self._own = dict(own)

    def _all(self) -> dict[str, str]:
        markers = dict(self._own)
        for fw in map(frameworks.get, frameworks.names()):
            for marker in (fw.name, *fw.markers):
                markers.setdefault(marker, f"{fw.name} instances")
        return markers

    def __getitem__(self, name: str) -> str:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


MARKERS: Final[Mapping[str, str]] = FrameworkMarkers({
    "issue_resolution": "issue-resolution instances (MobileDev-Bench)",
    "easy": "difficulty easy (< 15 min)",
    "medium": "difficulty medium (15 min - 1 h)",
    "hard": "difficulty hard (> 1 h)",
    "bug_fix": "category bug fix",
    "new_feature": "category new feature",
    "feature_optimization": "category feature optimisation",
})

COLUMNS: Final[tuple[Column, ...]] = (
    Column("Verdict", "reason"),
    Column("F2P", "f2p"),
    Column("N2P", "n2p"),
    Column("P2P", "p2p"),
)

#: the Docker client each item requests (None when no daemon answers); see pytest_mobilebench.fixtures
FIXTURES: Final[tuple[str, ...]] = ("mb_docker_client",)
