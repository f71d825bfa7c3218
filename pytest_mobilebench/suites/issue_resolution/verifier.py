"""Verifier strength per instance (part of ``--mb-audit``): do the instance's tests reject near-miss fixes?

Run after the audit's gold runs, when the gold resolves (:func:`verifier_strength`):

* **empty**: no patch, the test patch only; it must not resolve;
* **each hunk dropped**: the audit's adequacy runs (:func:`.audit._adequacy`), graded in full;
* **semantic mutants**: :func:`.mutants.mutants` of the gold patch (``--mb-audit-mutants`` per hunk,
  ``--mb-audit-seed``), each run once with the test patch.

A mutant *survives* when it grades ``resolved`` (every F2P / N2P / P2P test passes: the full verdict a
candidate would get). A mutant whose patch does not apply (a dropped hunk the rest depends on) has no
verdict and is left out. The **verifier leak** is ``survived / judged`` over the judged mutants (hunk drops
and semantic mutants), in [0, 1]; None when nothing was judged. Each surviving mutant's patch is kept in the
evidence as ``mutant.<id>.diff``. An equivalent mutant (one that changes nothing observable) survives too:
a leak above zero asks a human to read the surviving diffs, it does not prove a wrong fix passes.

:func:`leak_distribution` summarises leaks across instances (pure).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_mobilebench.files import atomic_write_text
from pytest_mobilebench.records import EvalContext
from pytest_mobilebench.suites.issue_resolution import grading
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance
from pytest_mobilebench.suites.issue_resolution.hunks import without_hunk
from pytest_mobilebench.suites.issue_resolution.mutants import mutants
from pytest_mobilebench.suites.issue_resolution.workspaces import one_run

__all__ = ["LEAK_BINS", "grade_run", "leak_distribution", "leak_of", "verifier_strength"]

#: the distribution's bins: ``(label, low exclusive, high inclusive)``; 0 has its own bin
LEAK_BINS: Final = (("0", -1.0, 0.0), ("(0, 0.1]", 0.0, 0.1), ("(0.1, 0.25]", 0.1, 0.25),
                    ("(0.25, 0.5]", 0.25, 0.5), ("(0.5, 1]", 0.5, 1.0))  # fmt: skip


def grade_run(lists: Mapping[str, Sequence[str]], one: Mapping[str, Any]) -> bool:
    """Whether one audit run (``{"applied", "built", "tests"}``) grades ``resolved`` against ``lists``."""
    outcome = grading.RunOutcome(applied=bool(one["applied"]), built=bool(one["built"]), tests=one["tests"])
    return grading.grade(fail_to_pass=lists["FAIL_TO_PASS"], none_to_pass=lists["NONE_TO_PASS"],
                         pass_to_pass=lists["PASS_TO_PASS"], outcome=outcome).resolved  # fmt: skip


def leak_of(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """``survived / judged`` over rows ``{"resolves": bool | None}`` (None: no verdict, left out)."""
    judged = [r for r in rows if isinstance(r.get("resolves"), bool)]
    return round(sum(1 for r in judged if r["resolves"]) / len(judged), 4) if judged else None


def verifier_strength(
    suite: Any,
    instance: IssueInstance,
    ctx: EvalContext,
    gold: str,
    test: str,
    lists: Mapping[str, Sequence[str]],
    hunk_rows: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Run the empty patch and the semantic mutants; combine with the hunk-drop rows (which carry
    ``resolves``). Returns ``{"empty_resolves", "mutants": [row], "judged", "survived", "verifier_leak",
    "per_hunk", "seed"}``, each row ``{"id", "kind", "hunk", "file", "line", "before", "after", "applied",
    "resolves", "diff"}`` (``diff``: the evidence file of a surviving mutant, else None).

    Raises:
        InfraError: a workspace fails (the plugin reports infra; nothing is charged to the instance).
    """
    ctx.progress(f"{instance.instance_id}: verifier: empty patch")
    empty = one_run(suite, instance, ctx, "", test, ".empty")
    per_hunk = int(ctx.options.get("mb_audit_mutants") if ctx.options.get("mb_audit_mutants") is not None else 3)
    seed = int(ctx.options.get("mb_audit_seed") or 0)
    rows: list[dict[str, Any]] = []
    for h in hunk_rows:
        rows.append({"id": f"h{h['index']}.drop", "kind": "hunk_dropped", "hunk": h["index"], "file": h["file"],
                     "line": None, "before": h["header"], "after": "", "applied": h["applied"],
                     "resolves": h.get("resolves"), "patch": None})  # fmt: skip
    for m in mutants(gold, per_hunk=per_hunk, seed=seed, key=instance.instance_id):
        ctx.progress(f"{instance.instance_id}: verifier: mutant {m.id} ({m.kind}, {m.file}:{m.line})")
        one = one_run(suite, instance, ctx, m.patch, test, f".mutant.{m.id}")
        rows.append({"id": m.id, "kind": m.kind, "hunk": m.hunk, "file": m.file, "line": m.line, "before": m.before,
                     "after": m.after, "applied": one["applied"],
                     "resolves": grade_run(lists, one) if one["applied"] else None, "patch": m.patch})  # fmt: skip
    for row in rows:
        patch = row.pop("patch")
        row["diff"] = None
        if row["resolves"] is True:
            if patch is None:  # a dropped hunk: the gold without it
                patch = without_hunk(gold, int(row["hunk"]))
            row["diff"] = f"mutant.{row['id']}.diff"
            atomic_write_text(ctx.evidence_dir / row["diff"], patch)
    judged = [r for r in rows if isinstance(r["resolves"], bool)]
    return {
        "empty_resolves": grade_run(lists, empty) if empty["applied"] else None,
        "per_hunk": per_hunk,
        "seed": seed,
        "mutants": rows,
        "judged": len(judged),
        "survived": sum(1 for r in judged if r["resolves"]),
        "verifier_leak": leak_of(rows),
    }


def leak_distribution(leaks: Mapping[str, float | None], threshold: float) -> dict[str, Any]:
    """Across instances (pure): ``{"instances", "measured", "mean", "median", "max", "bins": {label: n},
    "weak": [ids with leak > threshold], "threshold"}``; unmeasured leaks (None) count in ``instances``
    only."""
    values = sorted(v for v in leaks.values() if v is not None)
    bins = {label: sum(1 for v in values if low < v <= high) for label, low, high in LEAK_BINS}
    return {
        "instances": len(leaks),
        "measured": len(values),
        "mean": round(statistics.fmean(values), 4) if values else None,
        "median": round(statistics.median(values), 4) if values else None,
        "max": values[-1] if values else None,
        "bins": bins,
        "threshold": threshold,
        "weak": sorted(iid for iid, v in leaks.items() if v is not None and v > threshold),
    }
