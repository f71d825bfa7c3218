"""What the issue-resolution suite shows the user: its options, markers and report columns.

Declared once here (imported at start-up, without the implementation); the plugin adds the options to the
command line, the markers to the ini and the columns to the html report
(:class:`pytest_mobilebench.suites.base.SuiteSurface`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pytest_mobilebench.suites.base import Column, Headline, Option, SuiteSurface

__all__ = ["COLUMNS", "FIXTURES", "HEADLINE", "MARKERS", "OPTIONS", "SURFACE"]

OPTIONS: Final[tuple[Option, ...]] = (
    Option(("--dataset-framework",), "dataset_framework", "framework of --dataset rows that lack one"),
    Option(
        ("--mb-instance-timeout",),
        "mb_instance_timeout",
        "wall-clock seconds for one test run (default 1800)",
        default=1800.0,
        type=float,
        keyed=True,
        item_deadline=True,
    ),
    Option(
        ("--mb-max-patch-files",),
        "mb_max_patch_files",
        "most files a candidate patch may touch; more is policy_violation (patch_too_large), nothing runs",
        default=5_000,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-max-patch-bytes",),
        "mb_max_patch_bytes",
        "most bytes of a candidate patch (default 64 MiB)",
        default=64 << 20,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-max-patch-lines",),
        "mb_max_patch_lines",
        "most added + removed lines of a candidate patch",
        default=1_000_000,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-integrity",),
        "mb_integrity",
        "static audit of candidate diffs (production code naming the test runner, its markers, the stack or the "
        "process; issue resolution and device repair): report lists the findings, strict makes each a "
        "policy_violation (integrity)",
        default="report",
        choices=("report", "strict"),
        keyed=True,
    ),
    Option(
        ("--mb-oracle",),
        "mb_oracle",
        "jest: record every assertion of the graded tests in realm and re-decide it out of realm (docs/oracle.md); "
        "off runs the harness without the recorder (to measure what it costs: benchmarks/bench_oracle.py)",
        default="on",
        choices=("on", "off"),
        keyed=True,
    ),
    Option(
        ("--mb-validate",),
        "mb_validate",
        "with --predictions=gold: run base, test and fix configurations",
        default=False,
        action="store_true",
        keyed=True,
    ),
    Option(
        ("--mb-validate-runs",),
        "mb_validate_runs",
        "repeat validation runs and drop flaky tests",
        default=1,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-audit",),
        "mb_audit",
        "audit the instances with their gold patch: gold resolves, flaky tests, gold ids never reported, "
        "test patch without test file, per-hunk test adequacy, duplicate fixes (docs/datasets.md)",
        default=False,
        action="store_true",
        keyed=True,
    ),
    Option(
        ("--mb-audit-runs",),
        "mb_audit_runs",
        "gold runs per audited instance (at least 2: flaky tests)",
        default=2,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-audit-mutants",),
        "mb_audit_mutants",
        "semantic mutants of the gold patch per hunk the audit runs to measure the verifier leak (0: hunk drops only)",
        default=3,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-audit-seed",),
        "mb_audit_seed",
        "seed of the audit's mutant draw (same seed, same mutants)",
        default=0,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-agent-dir",),
        "mb_agent_dir",
        "with --mb-agent-command: a host folder copied into each agent "
        "sandbox at /opt/mobilebench-agent (the program and its files; docs/live-agents.md)",
        keyed=True,
    ),
)


#: the suite's own markers; the implementation adds every registered framework's (:class:`FrameworkMarkers`)
MARKERS: Final[Mapping[str, str]] = {
    "issue_resolution": "issue-resolution instances (MobileDev-Bench)",
    "easy": "difficulty easy (< 15 min)",
    "medium": "difficulty medium (15 min - 1 h)",
    "hard": "difficulty hard (> 1 h)",
    "bug_fix": "category bug fix",
    "new_feature": "category new feature",
    "feature_optimization": "category feature optimisation",
}

COLUMNS: Final[tuple[Column, ...]] = (
    Column("Verdict", "reason"),
    Column("F2P", "f2p"),
    Column("N2P", "n2p"),
    Column("P2P", "p2p"),
)

#: the runtime source each item requests (runtime options are the providers': runtime/provider.py);
#: see pytest_mobilebench.fixtures
#: ``mb_agent``: the live agent's ``(Endpoint, Limits)``; naming it keys the results on the agent options
FIXTURES: Final[tuple[str, ...]] = ("mb_runtime", "mb_agent")

#: the headline: resolved / eligible items (evaluated minus infrastructure errors), Wilson 95% interval
HEADLINE: Final = Headline("resolution rate", kind="rate", over_items=True)

SURFACE: Final = SuiteSurface(
    name="issue_resolution",
    module="pytest_mobilebench.suites.issue_resolution",
    plots="pytest_mobilebench.suites.issue_resolution.plots",
    options=OPTIONS,
    markers=MARKERS,
    columns=COLUMNS,
    fixtures=FIXTURES,
    datasets=("*",),  # any file: the rows say their dialect
    headline=HEADLINE,
)
