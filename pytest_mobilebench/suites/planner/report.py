"""Run-level tables of the planner suite (pure: results in, tables out).

Overall (MobilePA-Bench, seed 004, Section 3.5 and the Table 3 caption: "Overall uses the fixed 50/10/20/20
weighting" of Basic Tool Use, Sub-agent Collaboration, Memory Usage, Skill Usage)::

    Overall = 0.50 * S_basic + 0.10 * S_subagent + 0.20 * S_memory + 0.20 * S_skill

where ``S_d`` is the success rate (tasks scoring 1.0 / tasks) of dimension ``d``. Overall is None unless every
dimension has at least one task in the run (a partial run cannot be weighted the paper's way). Infrastructure
outcomes are left out of every denominator and counted apart; a missing or invalid prediction counts as a
failed task.

Repeated trials (``--mb-trials K``): ``trials`` holds :func:`pytest_mobilebench.stats.trials.trial_summary` over the
model's tasks (pass@1 = mean pass fraction with a bootstrap interval, tau-bench's pass^k for k = 1..K, the tasks
whose K trials all passed and the flaky ones with Wilson intervals, per-task flip counts); a task without a
graded run (missing or invalid prediction) counts as K failed trials.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.stats.trials import trial_summary
from pytest_mobilebench.suites.base import NO_RESULT
from pytest_mobilebench.suites.declared.planner import HEADLINE

__all__ = ["WEIGHTS", "overall", "summarize_results"]

#: dimension -> weight in Overall (the paper's fixed scheme).
WEIGHTS: Final = {"basic_tool_use": 0.50, "subagent_collaboration": 0.10, "memory_usage": 0.20, "skill_usage": 0.20}


def overall(success: Mapping[str, float | None]) -> float | None:
    """The weighted Overall from per-dimension success rates; None when a dimension has no rate."""
    if any(success.get(d) is None for d in WEIGHTS):
        return None
    return round(sum(w * float(success[d]) for d, w in WEIGHTS.items()), 6)


def _rate(passed: int, total: int) -> dict[str, Any]:
    lo, hi = wilson_interval(passed, total)
    return {
        "passed": passed,
        "total": total,
        "success": round(passed / total, 6) if total else None,
        "ci95": [round(lo, 6), round(hi, 6)],
    }


def _by(rows: Sequence[Mapping[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        groups[r["planner"][key]].append(r["reason"] == "passed")
    return {k: _rate(sum(v), len(v)) for k, v in sorted(groups.items())}


def _model_table(rows: Sequence[Mapping[str, Any]], bootstrap: Mapping[str, int]) -> dict[str, Any]:
    graded = [r for r in rows if "planner" in r]
    dims = {d: _rate(0, 0) for d in WEIGHTS}
    dims.update(_by(graded, "dimension"))
    success = {d: dims[d]["success"] for d in WEIGHTS}
    runs = [run for r in graded for run in r["planner"]["runs"]]
    recovery = [r for r in graded if r["planner"]["recovery_task"]]
    gate = {
        g: [
            run["gates"][g]
            for run in (r["planner"]["runs"][0] for r in graded if r["planner"]["runs"])
            if run["gates"][g] is not None
        ]
        for g in ("memory", "skill")
    }
    repeats = max((len(r["planner"]["runs"]) for r in graded), default=0)
    return {
        "tasks": len(graded),
        "passed": sum(r["reason"] == "passed" for r in graded),
        "overall": overall(success),
        "dimensions": dims,
        "by_domain": _by(graded, "domain"),
        "by_bucket": _by(graded, "bucket"),
        "gates": {g: _rate(sum(v), len(v)) for g, v in gate.items()},
        "errors": {
            "met": sum(run["errors_met"] for run in runs),
            "recovered": sum(run["errors_recovered"] for run in runs),
            "recovery_tasks": _rate(sum(r["reason"] == "passed" for r in recovery), len(recovery)),
        },
        "minefield_hits": sum(bool(run["minefields"]) for run in runs),
        "mean_steps": round(sum(run["steps"] for run in runs) / len(runs), 3) if runs else None,
        "tokens": {
            k: sum(int(r["planner"]["usage"].get(k, 0)) for r in graded) for k in ("input_tokens", "output_tokens")
        },
        "repeats": repeats,
        "pass_1": round(sum(run["score"] for run in runs) / len(runs), 6) if runs else None,
        "pass_k": _rate(sum(r["reason"] == "passed" for r in graded), len(graded)) if repeats > 1 else None,
        "trials": _trials(graded, repeats, bootstrap) if repeats > 1 else None,
        "collateral_runs": sum(bool(run.get("collateral")) for run in runs),
        "extra_skill_load_runs": sum(bool(run.get("extra_skill_loads")) for run in runs),
        "missing_or_invalid": sum(r["reason"] in ("missing_prediction", "invalid_prediction") for r in graded),
        "infra_error": sum(r.get("reason") == "infra_error" for r in rows),
    }


def _trials(graded: Sequence[Mapping[str, Any]], repeats: int, bootstrap: Mapping[str, int]) -> dict[str, Any]:
    outcomes = {
        str(r["instance_id"]): [run["score"] == 1.0 for run in r["planner"]["runs"]] or [False] * repeats
        for r in graded
    }
    return trial_summary(outcomes, **bootstrap)


def summarize_results(
    results: Sequence[Mapping[str, Any]], bootstrap: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """``{"headline": {...}, "by_model": {model: table}}`` (see :func:`_model_table` for a table's keys);
    ``bootstrap``: ``{"resamples", "seed"}`` of the trials' intervals (:func:`pytest_mobilebench.report.trials.
    bootstrap_options`; default 1,000 resamples, seed 0)."""
    bootstrap = bootstrap or {}
    per_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in results:  # a live run is tabled under its agent's own model (a conftest's planner_agent may name another)
        per_model[str((r.get("planner") or {}).get("model") or r.get("model_name_or_path"))].append(r)
    tables = {m: _model_table(rows, bootstrap) for m, rows in sorted(per_model.items())}
    if len(tables) == 1:
        ((model, t),) = tables.items()
        head = {
            "label": HEADLINE.label,
            "numerator": t["passed"],
            "denominator": t["tasks"],
            "value": t["overall"],
            "ci95": None,
            "kind": HEADLINE.kind,
            "unavailable": "needs a task of all four dimensions",
            "note": f"{model}: value = 0.50 basic + 0.10 sub-agent + 0.20 memory + 0.20 skill success "
            "(MobilePA-Bench weights; None unless all four dimensions ran); numerator/denominator = "
            "tasks passed / tasks graded (infra errors excluded)",
        }
    elif not tables:
        head = {
            "label": HEADLINE.label,
            "numerator": 0,
            "denominator": 0,
            "value": None,
            "ci95": None,
            "kind": HEADLINE.kind,
            "unavailable": NO_RESULT,
            "note": "no task graded",
        }
    else:
        head = {
            "label": HEADLINE.label,
            "numerator": sum(t["passed"] for t in tables.values()),
            "denominator": sum(t["tasks"] for t in tables.values()),
            "value": None,
            "ci95": None,
            "kind": HEADLINE.kind,
            "unavailable": "per model only",
            "note": f"{len(tables)} models: each one's Overall is in its own headline (summary: by_model)",
        }
    return {"headline": head, "by_model": tables}
