"""The miner's report: what was scanned, rejected (by reason), validated and kept, and what it cost.

Shape of ``<out>/report.json`` (plain JSON)::

    {"repo": "owner/name", "framework": str, "tip": sha, "scanned": int, "candidates": int,
     "rejected": {reason: int}, "rejections": [{"commit", "subject", "reason", "detail"}],
     "reason_meanings": {reason: str},
     "validation": null | {"run_id", "exit_status", "log", "valid", "invalid", "flaky_dropped", "infra_errors",
                           "environment_unavailable", "gold_refused", "not_run",
                           "cached", "flaky_tests", "setup_s", "test_s"},
     "audit": {...the --mb-audit table...} | {},
     "instances": {id: {"fix_commit", "base_commit", "status", "FAIL_TO_PASS", "NONE_TO_PASS",
                        "PASS_TO_PASS", "flaky", "problems", "setup_s", "test_s", "detail", "problem_statement_source",
                        "difficulty_proxies", "rank", "bug_fix_evidence"}},
     "outputs": [path], "scan_s": float, "total_s": float}

``rank`` is the candidate's place by bug-fix evidence (1 first; :mod:`.rank`), ``bug_fix_evidence`` its
``{"score", "signals"}``. ``rejections[].detail`` says what each rejection rests on (git's own message for
``unreadable_object``). ``status`` is ``candidate`` (not validated), ``valid``, ``invalid``, ``flaky``,
``infra_error``, ``environment_unavailable`` (``detail`` names the package or host this machine cannot fetch; the
terminal shows it under the table, as it shows an infra error's), ``gold_refused`` (the live grade's policy refuses
the gold patch: ``detail`` names the findings, shown under the table too) or ``not_run``. ``setup_s`` is the
validation items' time outside the test commands (workspace, image, dependency installation), ``test_s`` the test
commands' own time, both summed over the instances this run evaluated (seconds; a cached instance costs nothing
now, its original timings stay in its own entry).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.mining.gitsource import Source
from pytest_mobilebench.mining.records import Candidate
from pytest_mobilebench.mining.scan import REASON_MEANINGS, Reason
from pytest_mobilebench.mining.validate import Verdict

__all__ = ["build", "nothing_kept", "render"]


def nothing_kept(report: Mapping[str, Any]) -> str | None:
    """Why the run kept nothing (the ``mine`` exit status is then 1), or None: no candidate under
    ``--no-validate``; no candidate, or no valid one, when validated."""
    rejected = ", ".join(f"{n} {r}" for r, n in report["rejected"].items()) or "none"
    if not report["candidates"]:
        return f"no candidate among {report['scanned']} commits scanned (rejected: {rejected})"
    val = report.get("validation")
    if val is not None and not val["valid"]:
        return (
            f"nothing validated: 0 valid of {report['candidates']} candidates ({val['invalid']} invalid, "
            f"{val['infra_errors']} infra errors, {val.get('environment_unavailable', 0)} environment unavailable, "
            f"{val.get('gold_refused', 0)} gold refused, {val['flaky_dropped']} flaky, {val['not_run']} not run); "
            f"see {val.get('log')}"
        )
    return None


def _instance(c: Candidate, verdict: Verdict | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "fix_commit": c.commit.sha,
        "base_commit": c.base_commit,
        "status": verdict.status if verdict else "candidate",
        "problem_statement_source": c.problem_statement_source,
        "difficulty_proxies": c.split.proxies(),
        "bug_fix_evidence": c.evidence.to_dict(),
    }
    if verdict:
        data.update({k: list(v) for k, v in verdict.gold.items()})
        data.update(flaky=list(verdict.flaky), problems=list(verdict.problems), setup_s=verdict.setup_s,
                    test_s=verdict.test_s, cached=verdict.cached, detail=verdict.detail)  # fmt: skip
    return data


def build(*, source: Source, framework: str, scanned: int, candidates: Sequence[Candidate], rejections: Sequence[Any],
          verdicts: Mapping[str, Verdict], validated: bool, run_id: str | None, audit: Mapping[str, Any],
          outputs: Sequence[Path], scan_s: float, total_s: float) -> dict[str, Any]:  # fmt: skip
    """The report document of the module docstring (pure)."""
    reasons = Counter(r.reason.value for r in rejections)
    statuses = Counter(v.status for v in verdicts.values())
    validation = None
    if validated and candidates:
        validation = {
            "run_id": run_id,
            "valid": statuses["valid"],
            "invalid": statuses["invalid"],
            "flaky_dropped": statuses["flaky"],
            "infra_errors": statuses["infra_error"],
            "environment_unavailable": statuses["environment_unavailable"],
            "gold_refused": statuses["gold_refused"],
            "not_run": statuses["not_run"],
            "cached": sum(1 for v in verdicts.values() if v.cached),
            "flaky_tests": sum(len(v.flaky) for v in verdicts.values()),
            "setup_s": round(sum(v.setup_s for v in verdicts.values() if not v.cached), 3),
            "test_s": round(sum(v.test_s for v in verdicts.values() if not v.cached), 3),
        }
    return {
        "repo": source.repo,
        "framework": framework,
        "tip": source.tip,
        "scanned": scanned,
        "candidates": len(candidates),
        "rejected": dict(sorted(reasons.items())),
        "rejections": [r.to_dict() for r in rejections],
        "reason_meanings": {r: REASON_MEANINGS[Reason(r)] for r in sorted(reasons)},
        "validation": validation,
        "audit": dict(audit),
        "instances": {
            c.instance_id: {**_instance(c, verdicts.get(c.instance_id)), "rank": n}
            for n, c in enumerate(candidates, start=1)
        },
        "outputs": [str(p) for p in outputs],
        "scan_s": round(scan_s, 3),
        "total_s": round(total_s, 3),
    }


#: statuses whose ``detail`` the terminal shows under the table: what is missing, what the policy refused, or the
#: harness's failure
EXPLAINED_STATUSES = ("environment_unavailable", "gold_refused", "infra_error")


def _why_not_kept(instances: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per instance that is ``environment_unavailable``, ``gold_refused`` or an infra error, with its
    ``detail`` (``  NMF-earth__nmf-app-1: environment_unavailable: host_unreachable: <host>``), first line only."""
    lines = []
    for iid, inst in instances.items():
        if inst.get("status") in EXPLAINED_STATUSES:
            detail = (str(inst.get("detail") or "").strip().splitlines() or ["no detail"])[0]
            lines.append(f"  {iid}: {inst['status']}: {detail}")
    return lines


def render(report: Mapping[str, Any]) -> str:
    """The short terminal table: counts, rejections by reason, validation, cost, then one row per candidate."""
    rows: list[tuple[str, str]] = [
        ("commits scanned", str(report["scanned"])),
        ("candidates", str(report["candidates"])),
    ]
    rows.append(("rejected", str(sum(report["rejected"].values()))))
    rows += [(f"  {reason}", str(n)) for reason, n in report["rejected"].items()]
    val = report.get("validation")
    if val:
        rows += [
            ("valid", str(val["valid"])),
            ("invalid", str(val["invalid"])),
            ("flaky dropped", str(val["flaky_dropped"])),
            ("infra errors", str(val["infra_errors"])),
            ("environment unavailable", str(val.get("environment_unavailable", 0))),
            ("gold refused by policy", str(val.get("gold_refused", 0))),
            ("cached", str(val["cached"])),
            ("install/setup seconds", f"{val['setup_s']:.1f}"),
            ("test seconds", f"{val['test_s']:.1f}"),
        ]
        if val.get("not_run") or val.get("exit_status") not in (None, 0, 1):
            rows.append(("validation log", f"{val.get('log')} (exit {val.get('exit_status')})"))
    else:
        rows.append(("validation", "not run (--no-validate)"))
    audit = report.get("audit") or {}
    if audit:
        unnoticed = sum(len(h) for h in audit.get("unnoticed_hunks", {}).values())
        rows += [("audited", str(audit.get("instances", 0))), ("audit: trusted", str(audit.get("trusted", 0))),
                 ("audit: unnoticed hunks", str(unnoticed))]  # fmt: skip
        leaks = [v for v in (audit.get("verifier_leak") or {}).values() if isinstance(v, (int, float))]
        if leaks:
            rows.append(("audit: max leak", f"{max(leaks):.3f}"))
    width = max(len(k) for k, _ in rows)
    lines = [f"mine {report['repo']} ({report['framework']}) at {report['tip'][:12]}"]
    lines += [f"  {k.ljust(width)}  {v}" for k, v in rows]
    if report["instances"]:
        iw = max(len(i) for i in report["instances"])
        sw = max(11, *(len(inst["status"]) for inst in report["instances"].values()))
        lines.append(f"  {'instance'.ljust(iw)}  {'status'.ljust(sw)} {'F2P':>3} {'N2P':>3} {'P2P':>3}  fix")
        for iid, inst in report["instances"].items():
            counts = [
                str(len(inst.get(k, []))) if "FAIL_TO_PASS" in inst else "-"
                for k in ("FAIL_TO_PASS", "NONE_TO_PASS", "PASS_TO_PASS")
            ]
            lines.append(
                f"  {iid.ljust(iw)}  {inst['status'].ljust(sw)} {counts[0]:>3} {counts[1]:>3} {counts[2]:>3}  "
                f"{inst['fix_commit'][:10]}"
            )
    lines += _why_not_kept(report["instances"])
    lines += [f"  wrote {p}" for p in report["outputs"]]
    if report.get("interrupted"):
        status = (report.get("validation") or {}).get("exit_status")
        lines.append(
            f"interrupted (Ctrl-C) during the {report['interrupted']} run (exit {status}): "
            + ("no manifest written; " if report["interrupted"] == "validation" else "")
            + "re-run the same command to resume (what finished comes from the result cache)"
        )
    if not val and report["instances"]:
        lines.append(
            "  candidates only: their test lists (FAIL_TO_PASS ...) are empty until validated; run mine "
            "without --no-validate to write the manifest"
        )
    return "\n".join(lines) + "\n"
