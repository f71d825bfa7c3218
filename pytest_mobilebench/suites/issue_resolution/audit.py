"""Instance audit (``--mb-audit``): is an instance worth trusting?

Per instance, with the gold patch (``docs/datasets.md`` "Auditing instances"):

* **gold resolves**: the gold patch + test patch, run ``--mb-audit-runs`` times (at least 2), grades
  ``resolved`` in every run;
* **flaky tests**: tests whose state differs between those identical runs (:func:`grading.drop_flaky`),
  and which of them are gold ids;
* **gold ids never reported**: gold ids no gold run reports at all (state ``NONE`` every time);
* **test patch touching no test file**: no file of the test patch is a test file by the framework's rule;
* **verifier strength**: the empty patch must not resolve, and near-miss mutants of the gold (each hunk
  dropped, small semantic mutations) should not: the share that still resolves is the instance's
  ``verifier_leak`` (:mod:`.verifier`);
* **test adequacy**: for each hunk of the gold patch, the gold patch *without that hunk* + the test patch is
  run once; the hunk is *noticed* when a FAIL_TO_PASS / NONE_TO_PASS test is then not ``PASS`` (or the
  build breaks). Hunks no test notices are listed: the tests would accept a fix without them.

Across instances (:func:`summarize_audit`): **duplicate or backported instances**, i.e. instances whose
gold patches make the same change (:func:`fix_fingerprint`).

The pure parts (hunk listing and removal, fingerprints, the summary) are separate from :func:`audit_instance`,
which runs workspaces through the suite's own test-run step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


from pytest_mobilebench.suites.issue_resolution import grading
from pytest_mobilebench.frameworks import is_test_file
from pytest_mobilebench.suites.issue_resolution.dialects import gold_for_run
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance
from pytest_mobilebench.patch import parse_patch
from pytest_mobilebench.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import Reason, TestState
from pytest_mobilebench.records import EvalContext
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.suites.issue_resolution.hunks import fix_fingerprint, gold_hunks, without_hunk
from pytest_mobilebench.suites.issue_resolution.workspaces import one_run
from pytest_mobilebench.suites.issue_resolution.verifier import grade_run, verifier_strength

__all__ = ["audit_instance", "summarize_audit"]


def _gold_ids(lists: Mapping[str, Sequence[str]]) -> list[str]:
    return sorted({i for ids in lists.values() for i in ids})


def _gold_checks(suite: Any, instance: IssueInstance, ctx: EvalContext, gold: str, test: str) -> dict[str, Any]:
    runs = max(2, int(ctx.options.get("mb_audit_runs") or 2))
    results = []
    for attempt in range(runs):
        ctx.progress(f"{instance.instance_id}: audit gold run {attempt + 1}/{runs}")
        one = one_run(suite, instance, ctx, gold, test, f".gold.{attempt + 1}")
        if not one["applied"]:
            raise InfraError(InfraKind.GOLD_PATCH_APPLY_FAILED, "the gold patch does not apply")
        results.append(one)
    reported = set().union(*(set(r["tests"]) for r in results))
    lists, id_report = gold_for_run(instance, reported)
    _, flaky = grading.drop_flaky([r["tests"] for r in results])
    verdicts = [
        grading.grade(
            fail_to_pass=lists["FAIL_TO_PASS"],
            none_to_pass=lists["NONE_TO_PASS"],
            pass_to_pass=lists["PASS_TO_PASS"],
            outcome=grading.RunOutcome(applied=True, built=r["built"], tests=r["tests"]),
        )
        for r in results
    ]
    return {
        "runs": runs,
        "lists": lists,
        "id_matching": id_report,
        "gold_resolves": all(v.resolved for v in verdicts),
        "gold_reasons": [v.reason.value for v in verdicts],
        "flaky_tests": sorted(flaky),
        "flaky_gold_tests": sorted(flaky & set(_gold_ids(lists))),
        "gold_ids_never_reported": [i for i in _gold_ids(lists) if i not in reported],
    }


def _adequacy(
    suite: Any, instance: IssueInstance, ctx: EvalContext, gold: str, test: str, lists: Mapping[str, Sequence[str]]
) -> list[dict[str, Any]]:
    targets = [*lists["FAIL_TO_PASS"], *lists["NONE_TO_PASS"]]
    rows = []
    for hunk in gold_hunks(gold):
        ctx.progress(f"{instance.instance_id}: audit without gold hunk {hunk.index} ({hunk.file})")
        one = one_run(suite, instance, ctx, without_hunk(gold, hunk.index), test, f".hunk{hunk.index}")
        failing = sorted(t for t in targets if one["tests"].get(t, TestState.NONE) is not TestState.PASS)
        if not one["applied"]:
            noticed: bool | None = None  # the rest of the patch depends on it textually: no verdict
        else:
            noticed = bool(failing) or not one["executed"]
        rows.append(
            {
                **hunk.to_dict(),
                "applied": one["applied"],
                "built": one["built"],
                "noticed": noticed,
                "noticed_by": failing,
                "resolves": grade_run(lists, one) if one["applied"] else None,
            }
        )
    return rows


def audit_instance(suite: Any, instance: IssueInstance, ctx: EvalContext, base: dict[str, Any]) -> dict[str, Any]:
    """Audit one instance (see the module docstring); a result in the suite's shape, ``passed`` = no finding.

    Raises:
        InfraError: the repository, a workspace or the gold patch fails (the plugin reports infra).
    """
    from pytest_mobilebench.runtime.provider import repo_cache
    from pytest_mobilebench.suites.issue_resolution.workspaces import resolve_patches

    gold, test = resolve_patches(instance, repo_cache(ctx.options, ctx.run_id))
    atomic_write_text(ctx.evidence_dir / "gold_patch.diff", gold)
    atomic_write_text(ctx.evidence_dir / "test_patch.diff", test)
    test_files = (
        [f.path for f in parse_patch(test).files if is_test_file(f.path, instance.framework)] if test.strip() else []
    )
    checks = _gold_checks(suite, instance, ctx, gold, test)
    targets = [*checks["lists"]["FAIL_TO_PASS"], *checks["lists"]["NONE_TO_PASS"]]
    measured = checks["gold_resolves"] and bool(targets)
    hunks = _adequacy(suite, instance, ctx, gold, test, checks["lists"]) if measured else []
    verifier = None
    if measured:
        verifier = verifier_strength(suite, instance, ctx, gold, test, checks["lists"], hunks)
    report = {
        **{k: v for k, v in checks.items() if k != "lists"},
        "test_patch_test_files": test_files,
        "gold_fingerprint": fix_fingerprint(gold) if gold.strip() else None,
        "hunks": hunks,
        "unnoticed_hunks": [h for h in hunks if h["noticed"] is False],
        "verifier": verifier,
    }
    findings = _findings(report, targets)
    report["findings"] = findings
    atomic_write_json(ctx.evidence_dir / "audit.json", report)
    return {
        **base,
        "reason": (Reason.UNRESOLVED if findings else Reason.RESOLVED).value,
        "passed": not findings,
        "retryable": False,
        "audit": report,
        "verifier_leak": verifier["verifier_leak"] if verifier else None,
        "detail": "; ".join(findings),
        "properties": {
            "audit_findings": len(findings),
            "gold_resolves": report["gold_resolves"],
            "flaky_tests": len(report["flaky_tests"]),
            "hunks": len(hunks),
            "unnoticed_hunks": len(report["unnoticed_hunks"]),
            **(
                {"verifier_leak": verifier["verifier_leak"]}
                if verifier and verifier["verifier_leak"] is not None
                else {}
            ),
        },
    }


def _findings(report: Mapping[str, Any], targets: Sequence[str]) -> list[str]:
    out = []
    if not report["gold_resolves"]:
        out.append(f"the gold patch does not resolve the instance ({', '.join(report['gold_reasons'])})")
    if report["flaky_gold_tests"]:
        out.append(f"flaky gold tests: {', '.join(report['flaky_gold_tests'])}")
    if report["gold_ids_never_reported"]:
        out.append(f"gold ids never reported: {', '.join(report['gold_ids_never_reported'])}")
    if not report["test_patch_test_files"]:
        out.append("the test patch touches no test file")
    if not targets:
        out.append("no FAIL_TO_PASS or NONE_TO_PASS test: nothing shows the issue fixed")
    if (report.get("verifier") or {}).get("empty_resolves"):
        out.append("the empty patch resolves the instance: its tests pass without any fix")
    for hunk in report["unnoticed_hunks"]:
        out.append(f"no test notices gold hunk {hunk['index']} ({hunk['file']} {hunk['header'].split(' @@')[0]} @@)")
    return out


def summarize_audit(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Run-level audit table: per-finding counts, per-instance unnoticed hunks, duplicate groups (pure)."""
    audited = [r for r in results if isinstance(r.get("audit"), Mapping)]
    by_fix: dict[str, list[str]] = {}
    for r in audited:
        if r["audit"].get("gold_fingerprint"):
            by_fix.setdefault(r["audit"]["gold_fingerprint"], []).append(str(r.get("instance_id")))
    return {
        "instances": len(audited),
        "trusted": sum(1 for r in audited if r.get("passed")),
        "gold_not_resolving": sorted(str(r.get("instance_id")) for r in audited if not r["audit"]["gold_resolves"]),
        "flaky_gold_tests": {
            str(r.get("instance_id")): r["audit"]["flaky_gold_tests"] for r in audited if r["audit"]["flaky_gold_tests"]
        },
        "gold_ids_never_reported": {
            str(r.get("instance_id")): r["audit"]["gold_ids_never_reported"]
            for r in audited
            if r["audit"]["gold_ids_never_reported"]
        },
        "test_patch_without_test_file": sorted(
            str(r.get("instance_id")) for r in audited if not r["audit"]["test_patch_test_files"]
        ),
        "unnoticed_hunks": {
            str(r.get("instance_id")): [f"{h['file']} {h['header']}" for h in r["audit"]["unnoticed_hunks"]]
            for r in audited
            if r["audit"]["hunks"]
        },
        "duplicate_fixes": sorted(sorted(ids) for ids in by_fix.values() if len(ids) > 1),
        "verifier_leak": {str(r.get("instance_id")): r.get("verifier_leak") for r in audited},
    }
