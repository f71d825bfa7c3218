"""``dataset check --verify``: each instance's verifier leak, through the harness's own audit in a pytest run.

The files are run as ``python -m pytest FILE --predictions=gold --mb-audit --mb-audit-mutants=N
--mb-audit-seed=S`` (manifests and folders as paths, releases as ``--dataset``), reports and the result
cache under ``--out`` (an unchanged re-run is answered from the cache). The audit runs gold (must resolve),
the empty patch (must not), each gold hunk dropped and the semantic mutants of
:mod:`pytest_mobilebench.suites.issue_resolution.verifier`; the leaks are read back from the run's summary
(never from the subprocess's output). An instance is **weak** when its leak is above ``threshold``;
``--strict`` fails on a weak instance and on one left unmeasured (gold not resolving, empty resolving,
infrastructure error, not run).

A device-repair manifest (top-level ``suite: device_repair``) is measured by
:mod:`pytest_mobilebench.mining.verify_device` (gold, its S_bug state as the empty patch, and the
mutants graded as candidate patches on the devices named in ``pytest_args``); its rows have the same shape.
A folder holding only device-repair manifests is measured file by file.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench.mining._harness import read_json
from pytest_mobilebench.mining.verify_device import is_device_manifest, verify_device_manifest
from pytest_mobilebench.suites.issue_resolution.verifier import leak_distribution

__all__ = ["VerifyOptions", "failed", "render_verify", "verify"]


@final
@dataclasses.dataclass(frozen=True)
class VerifyOptions:
    """``files``: manifests, folders or releases; ``out``: reports folder; ``threshold``: leak above it is
    weak; ``per_hunk`` / ``seed``: the mutant draw; ``runtime``: ``--mb-runtime``; ``workers``: ``-n``;
    ``pytest_args``: passed on (``-k``, ``--mb-cache-level=env`` ...)."""

    files: tuple[Path, ...]
    out: Path = Path("verify")
    threshold: float = 0.25
    per_hunk: int = 3
    seed: int = 0
    runtime: str = "auto"
    workers: int = 0
    pytest_args: tuple[str, ...] = ()


def _command(path: Path, opts: VerifyOptions, reports: Path, run_id: str) -> list[str]:
    target = [str(path)] if path.is_dir() or path.suffix in (".yaml", ".yml") else [f"--dataset={path}"]
    workers = ["-n", str(opts.workers)] if opts.workers else []
    return [
        sys.executable,
        "-m",
        "pytest",
        *target,
        "--predictions=gold",
        "--mb-audit",
        f"--mb-audit-mutants={opts.per_hunk}",
        f"--mb-audit-seed={opts.seed}",
        f"--mb-runtime={opts.runtime}",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / run_id / 'summary.json'}",
        f"--mb-run-id={run_id}",
        "-p",
        "no:cacheprovider",
        f"--rootdir={path.parent if path.is_file() else path}",
        "-q",
        *workers,
        *opts.pytest_args,
    ]


def _row(entry: Mapping[str, Any], threshold: float) -> dict[str, Any]:
    """One instance's verify row from its summary entry."""
    audit = entry.get("audit") if isinstance(entry.get("audit"), Mapping) else {}
    verifier = audit.get("verifier") if isinstance(audit.get("verifier"), Mapping) else {}
    leak = entry.get("verifier_leak")
    evidence = Path(str(entry.get("evidence_dir") or "."))
    if entry.get("retryable"):
        status = "infra_error"
    elif audit.get("gold_resolves") is False:
        status = "gold_not_resolving"
    elif verifier.get("empty_resolves"):
        status = "empty_resolves"
    elif leak is None:
        status = "not_measured"
    else:
        status = "measured"
    surviving = [{**{k: m.get(k) for k in ("id", "kind", "file", "line", "before", "after")},
                  "diff": str(evidence / m["diff"]) if m.get("diff") else None}
                 for m in verifier.get("mutants") or () if m.get("resolves") is True]  # fmt: skip
    return {
        "instance_id": str(entry.get("instance_id")),
        "verifier_leak": leak,
        "status": status,
        "weak": isinstance(leak, (int, float)) and leak > threshold,
        "empty_resolves": verifier.get("empty_resolves"),
        "judged": verifier.get("judged", 0),
        "survived": verifier.get("survived", 0),
        "surviving": surviving,
        "mutants": [
            {k: m.get(k) for k in ("id", "kind", "file", "line", "before", "after", "applied", "resolves")}
            for m in verifier.get("mutants") or ()
        ],  # fmt: skip
        "evidence_dir": str(evidence),
        "detail": str(entry.get("detail") or ""),
    }


def _expand(path: Path) -> list[Path]:
    """A folder whose manifests are all device-repair ones becomes those files (each measured on devices);
    anything else stays as given."""
    if path.is_dir():
        manifests = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        if manifests and all(is_device_manifest(p) for p in manifests):
            return manifests
    return [path]


def verify(opts: VerifyOptions, log: Any = None) -> dict[str, Any]:
    """Run the audit on each file and read the leaks back. Returns ``{"instances": [row], "distribution",
    "runs": [{"file", "exit", "summary", "log"}]}`` (rows: :func:`_row`; distribution:
    :func:`~pytest_mobilebench.suites.issue_resolution.verifier.leak_distribution`)."""
    reports = opts.out.resolve()
    rows: dict[str, dict[str, Any]] = {}
    runs = []
    for n, path in enumerate(p for given in opts.files for p in _expand(given.resolve())):
        run_id = f"verify-{time.strftime('%Y%m%d-%H%M%S')}-{n}"
        if is_device_manifest(path):  # the device suite's own measurement (no --mb-audit there)
            for row in verify_device_manifest(path, opts, reports, run_id, runs.append):
                rows[row["instance_id"]] = row
            continue
        command = _command(path, opts, reports, run_id)
        log_path = reports / f"{run_id}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("w", encoding="utf-8") as out:
            out.write("$ " + " ".join(command) + "\n")
            out.flush()
            cwd = path.parent if path.is_file() else path
            code = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, check=False).returncode
        summary_path = reports / run_id / "summary.json"
        runs.append({"file": str(path), "exit": code, "summary": str(summary_path), "log": str(log_path)})
        summary = read_json(summary_path)
        for entry in (summary or {}).get("instances", {}).values() if isinstance(summary, Mapping) else ():
            if isinstance(entry, Mapping) and entry.get("suite") == "issue_resolution":
                rows[str(entry.get("instance_id"))] = _row(entry, opts.threshold)
    leaks = {iid: row["verifier_leak"] for iid, row in rows.items()}
    return {"instances": [rows[k] for k in sorted(rows)], "distribution": leak_distribution(leaks, opts.threshold),
            "runs": runs}  # fmt: skip


def failed(report: Mapping[str, Any]) -> list[str]:
    """What makes ``--strict`` fail: ``"<id>: weak (leak 0.5)"`` / ``"<id>: <status>"``; a run that measured
    nothing at all fails too."""
    out = []
    for row in report["instances"]:
        if row["weak"]:
            out.append(f"{row['instance_id']}: weak (leak {row['verifier_leak']})")
        elif row["status"] != "measured":
            out.append(f"{row['instance_id']}: {row['status']}")
    if not report["instances"]:
        out.append("no instance was measured (see the run logs)")
    return out


def render_verify(report: Mapping[str, Any]) -> str:
    """Per instance its leak and surviving mutants, then the distribution."""
    lines = ["verifier strength (gold must resolve, empty and near-miss mutants must not):"]
    for row in report["instances"]:
        leak = row["verifier_leak"]
        figure = (
            f"leak {leak:.3f} ({row['survived']}/{row['judged']} mutants survive)"
            if leak is not None
            else row["status"]
        )
        lines.append(f"  {row['instance_id']:<40} {figure}{'  WEAK' if row['weak'] else ''}")
        for m in row["surviving"]:
            where = f"{m['file']}:{m['line']}" if m["line"] else f"{m['file']} {str(m['before']).split(' @@')[0]} @@"
            change = (
                "hunk dropped"
                if m["kind"] == "hunk_dropped"
                else f"{m['kind']}: {m['before'].strip()!r} -> {m['after'].strip()!r}"
            )
            lines.append(f"      survives {m['id']} {where} {change}  [{m['diff']}]")
    d = report["distribution"]
    if d["measured"]:
        lines.append(f"  leak over {d['measured']}/{d['instances']} measured instance(s): mean {d['mean']:.3f}, "
                     f"median {d['median']:.3f}, max {d['max']:.3f}")  # fmt: skip
    lines.append("  distribution: " + " | ".join(f"{label}: {n}" for label, n in d["bins"].items()))
    lines.append(f"  weak (leak > {d['threshold']}): {', '.join(d['weak']) or 'none'}")
    for run in report["runs"]:
        lines.append(f"  run {run['file']}: exit {run['exit']}, log {run['log']}")
    return "\n".join(lines) + "\n"
