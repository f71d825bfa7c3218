"""The issue-resolution suite's summary tables (MobileDev-Bench, SPEC section 1): strata per repository,
framework, difficulty, category, gold size and artifacts; localization means; flags; trials, the live agents'
table, validation, audit and the paired model comparison. Pure: results in, plain dicts out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import changed_lines_bin, file_count_bin, mean, stratify
from pytest_mobilebench.suites.issue_resolution.audit import summarize_audit
from pytest_mobilebench.suites.issue_resolution.rates import headline

__all__ = ["summarize"]


def summarize(results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Per-repository, per-framework, difficulty, category, gold-size and artifact tables; localization means."""
    rows = [dict(r, resolved=bool(r.get("passed")), **r.get("properties", {})) for r in results]
    loc_rows = [r for r in rows if "loc_f1" in r]
    table: dict[str, Any] = {
        "by_repository": stratify(rows, "repo"),
        "by_framework": stratify(rows, "framework"),
        "by_difficulty": stratify(rows, lambda r: r.get("difficulty") or "unknown"),
        "by_category": stratify(rows, lambda r: r.get("category") or "unknown"),
        "by_gold_file_count": stratify(
            [r for r in rows if "gold_files" in r], lambda r: file_count_bin(int(r["gold_files"]))
        ),
        "by_gold_changed_lines": stratify(
            [r for r in rows if "gold_lines" in r], lambda r: changed_lines_bin(int(r["gold_lines"]))
        ),
        "by_artifact_combination": stratify(
            [r for r in rows if r.get("gold_artifacts")], lambda r: r["gold_artifacts"]
        ),
        "by_artifact_count": stratify(
            [r for r in rows if r.get("gold_artifacts")],
            lambda r: "multi-artifact" if "+" in r["gold_artifacts"] else "single-artifact",
        ),
        "localization": {
            "precision": mean([float(r["loc_precision"]) for r in loc_rows]),
            "recall": mean([float(r["loc_recall"]) for r in loc_rows]),
            "f1": mean([float(r["loc_f1"]) for r in loc_rows]),
            "instances": len(loc_rows),
        },
        "flags": {
            flag: sum(1 for r in rows if flag in (r.get("flags") or []))
            for flag in ("test_files_touched", "runner_config_touched", "tools_touched")
        },
    }
    table["headline"] = headline(results)
    from pytest_mobilebench.report.trials import bootstrap_options, trial_headline, trial_table

    if (
        trials := trial_table(results, **bootstrap_options(options))
    ) is not None:  # --mb-trials K: pass@1 over trials, pass^k, flips
        table["trials"] = trials
        own = trial_headline(next(iter(trials.values()))) if len(trials) == 1 else None
        if own is not None and all(isinstance(r.get("trial"), int) for r in results):
            table["headline"] = {**table["headline"], **own, "note": f"{own['note']}; {table['headline']['note']}"}
    from pytest_mobilebench.agents.records import agent_table

    if (agents := agent_table(results)) is not None:
        table["agent"] = agents  # the live items: how the agent ended, calls, tokens, model time, cost
    validated = [r for r in rows if "validation" in r]
    if validated:
        table["validation"] = {
            "instances": len(validated),
            "valid": sum(1 for r in validated if r["validation"]["valid"]),
            "flaky_tests": sum(len(r["validation"]["flaky"]) for r in validated),
        }
    if any("audit" in r for r in results):
        table["audit"] = summarize_audit(results)
    models = sorted({str(r.get("model_name_or_path")) for r in results})
    if len(models) > 1:
        from pytest_mobilebench.compare import compare_results

        table["model_comparison"] = compare_results(
            results, **bootstrap_options(options)
        )  # paired, exact McNemar (docs/datasets.md)
    if len(models) > 1:  # the run page (plots.py) draws each model's strata side by side
        table["per_model"] = {
            m: summarize([r for r in results if str(r.get("model_name_or_path")) == m], options=options) for m in models
        }
    return table
