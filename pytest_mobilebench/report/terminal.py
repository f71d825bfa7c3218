"""The terminal section of a run: the per-suite headlines, in words a user reads at a glance.

Pure: :func:`headline_lines` maps a summary (:mod:`.summary`) to lines; the plugin prints them. Text that came
from results (instance ids, details, model names) goes through :func:`printable` first, so a candidate cannot
move the cursor, clear the line or colour a forged verdict onto the user's terminal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_mobilebench.report.headline import figure_kind
from pytest_mobilebench.run_budget import fmt_duration
from pytest_mobilebench.states import InfraKind

__all__ = [
    "NAME_CAP",
    "cache_lines",
    "figure_text",
    "fmt_rate",
    "headline_lines",
    "nothing_selected_line",
    "printable",
    "regrade_lines",
    "suite_lines",
    "trial_lines",
]

#: C0 / C1 control characters and DEL, which includes ESC (ANSI sequences), CR (overprinting) and BS, and the
#: bidirectional overrides and isolates (text shown in another order than it is)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object, limit: int = 300) -> str:
    """``text`` with every control character shown as ``\\xNN`` and cut to ``limit`` characters."""
    flat = _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", str(text)
    )
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def fmt_rate(block: Mapping[str, Any]) -> str:
    """``"2/3 = 0.667 [95% CI 0.208, 0.939]"`` from a rate block; ``0/0 = n/a`` (no interval: there is no
    estimate to bound) for an empty denominator. A weighted
    score whose value is not ``numerator / denominator`` (the planner's Overall) reads ``"0.388 (29/87 passed)"``."""
    num, den, value, ci = block.get("numerator"), block.get("denominator"), block.get("value"), block.get("ci95")
    shown = "n/a" if value is None else f"{float(value):.3f}"
    if figure_kind(block) == "score":
        return f"{shown} ({num}/{den} passed)" if num is not None and den is not None else shown
    interval = f" [95% CI {float(ci[0]):.3f}, {float(ci[1]):.3f}]" if ci and value is not None else ""  # no n/a [0, 1]
    prefix = f"{num}/{den} = " if num is not None and den is not None else ""
    return f"{prefix}{shown}{interval}"


#: longest model or suite name shown on a headline line (the full name is on the run page and in summary.json)
NAME_CAP = 40


def figure_text(block: Mapping[str, Any]) -> str:
    """The one headline figure of a suite block, in the suite's one format whatever the selection:

    * a rate: ``"resolution rate 2/3 = 0.667 [95% CI 0.208, 0.939]"`` (``n/a`` over no eligible item);
    * a score: ``"Overall 0.388 | passed 29/87 = 0.333 [95% CI 0.241, 0.440]"``, the score ``n/a (<why>)``
      when this selection cannot give it (the planner's Overall needs all four dimensions).
    """
    own = block["headline"]
    label = printable(own["label"], NAME_CAP)
    if own.get("kind", figure_kind(own)) != "score":
        why = own.get("unavailable") if own.get("numerator") is None else ""  # no figure at all: say why
        aside = why or own.get("aside")  # or the suite's short aside (app generation: the apps built)
        return f"{label} {fmt_rate(own)}" + (f" ({printable(aside, 60)})" if aside else "")
    value = own.get("value")
    why = printable(own.get("unavailable") or "not computable on this selection", 60)
    shown = f"{float(value):.3f}" if value is not None else f"n/a ({why})"
    return f"{label} {shown} | passed {fmt_rate(block['over_eligible'])}"


def _figure_lines(block: Mapping[str, Any], indent: str) -> list[str]:
    """The full figures of a block, below its headline line."""
    own = block["headline"]
    lines = [
        indent
        + "selected {selected} | evaluated {evaluated} | invalid {invalid} | missing predictions "
        "{missing_predictions} | infra errors {infra_errors} | cached {cached} | not run {not_run}".format(**block)
    ]
    if block.get("environment_unavailable"):  # dependencies this machine cannot fetch: neither infra nor the model's
        lines[0] += f" | environment unavailable {block['environment_unavailable']}"
    lines.extend(f"{indent}{printable(extra['label'])} {fmt_rate(extra)}" for extra in own.get("secondary", []))
    same = (own.get("numerator"), own.get("denominator")) == (
        block["over_eligible"]["numerator"],
        block["over_eligible"]["denominator"],
    )
    if own.get("source") != "generic" and not same:
        lines.append(f"{indent}passed {fmt_rate(block['over_eligible'])} over eligible (evaluated minus infra errors)")
    lines.append(
        f"{indent}passed {fmt_rate(block['over_all'])} over all selected (invalid, infra, not run count as failures)"
    )
    if block["by_reason"]:
        lines.append(f"{indent}reasons: " + ", ".join(f"{printable(k)} {v}" for k, v in block["by_reason"].items()))
    kinds = block.get("by_infra_kind") or {}
    if kinds:
        lines.append(f"{indent}infra kinds: " + ", ".join(f"{printable(k)} {v}" for k, v in kinds.items()))
    if kinds.get(InfraKind.DAEMON_UNREACHABLE.value):
        lines.append(
            f"{indent}no Docker host could run {kinds[InfraKind.DAEMON_UNREACHABLE.value]} item(s): "
            "start the daemon(s) or fix --mb-docker-hosts, then re-run (they are retried)"
        )
    return lines


def suite_lines(name: str, block: Mapping[str, Any]) -> list[str]:
    """One suite: with one model ``"<suite> (<model>): <figure>"``; with several, one headline per model,
    then the pooled one labelled ``pooled``; each headline line under 120 characters, its full figures below."""
    models = block.get("models") or {}
    suite = printable(name, NAME_CAP)
    if len(models) <= 1:
        who = f" ({printable(next(iter(models)), NAME_CAP)})" if models else ""
        return [f"{suite}{who}: {figure_text(block)}", *_figure_lines(block, "  ")]
    lines = [f"{suite}: {len(models)} models, each on its own, then pooled"]
    for model, own in models.items():
        lines += [f"  {printable(model, NAME_CAP)}: {figure_text(own)}", *_figure_lines(own, "    ")]
    return lines + [f"  pooled ({len(models)} models): {figure_text(block)}", *_figure_lines(block, "    ")]


def _share(value: object) -> str:
    return "n/a" if value is None else f"{100 * float(value):.0f}%"  # type: ignore[arg-type]


def trial_lines(summary: Mapping[str, Any]) -> list[str]:
    """Per suite and model with repeated trials (``--mb-trials``): pass@1 with its hierarchical bootstrap and
    Wilson intervals, then pass@K, pass^K, the variance shares and the flips (docs/statistics.md)."""
    from pytest_mobilebench.report.trials import suite_trials

    lines = []
    for suite, models in suite_trials(summary).items():
        for model, own in models.items():
            who = f"trials of {printable(suite, NAME_CAP)} ({printable(model, NAME_CAP)})"
            if not isinstance(own, Mapping) or not own.get("tasks"):
                lines.append(f"{who}: no eligible trial")
                continue
            p1, k = own["pass_1"], str(own["trials"])
            ci, wilson = p1["ci95"], p1.get("wilson95") or [0.0, 1.0]
            lines.append(
                f"{who}: {own['tasks']} x {k}: pass@1 {p1['value']:.3f} [95% CI {ci[0]:.3f}, {ci[1]:.3f}; "
                f"Wilson {wilson[0]:.3f}, {wilson[1]:.3f}]"
            )
            variance = own.get("variance") or {}
            at_k = (own.get("pass_at_k") or {}).get(k, {}).get("value")
            lines.append(
                f"  pass@{k} {'n/a' if at_k is None else f'{at_k:.3f}'} | pass^{k} "
                f"{own['pass_hat_k'][k]['value']:.3f} | variance: instances {_share(variance.get('share_tasks'))}"
                f", trials {_share(variance.get('share_trials'))} | flips {len(own.get('flips') or [])}"
                f"/{own['tasks']}"
            )
    return lines


def regrade_lines(summary: Mapping[str, Any], cap: int = 10) -> list[str]:
    """What a re-grade (``--mb-regrade``) did: how many items it re-graded, kept and could not use, and why
    (at most ``cap`` items listed; all are in summary.json under ``regrade``). [] for a live run."""
    info = summary.get("regrade")
    if not isinstance(info, Mapping):
        return []
    not_used = list(info.get("not_used") or [])
    lines = [
        (
            f"re-grade of {printable(info.get('from'))}: re-graded {info.get('regraded', 0)}, kept as they were "
            f"{info.get('kept', 0)}, not used {len(not_used)}"
        )
    ]
    lines += [
        f"  not used: {printable(n.get('instance_id'))} [{printable(n.get('model'))}]: {printable(n.get('why'))}"
        for n in not_used[:cap]
    ]
    if len(not_used) > cap:
        lines.append(f"  ... and {len(not_used) - cap} more (summary.json: regrade.not_used)")
    no_evidence = sum(int(b.get("not_run", 0)) for b in summary.get("headlines", {}).values())
    if no_evidence:
        lines.append(f"  {no_evidence} selected item(s) have no result in that run (counted as not run)")
    if not info.get("regraded") and not info.get("kept"):
        lines.append("  no selected item has a result in that run: nothing was graded, exit status 5")
    return lines


def cache_lines(summary: Mapping[str, Any], cap: int = 10) -> list[str]:
    """The result-cache entries this run did not use because they were not their item's result (removed, the
    items evaluated again): a count line, then up to ``cap`` items with why. [] when there were none."""
    dropped = list(summary.get("cache_dropped_entries") or [])
    if not dropped:
        return []
    entries = "1 entry" if len(dropped) == 1 else f"{len(dropped)} entries"
    lines = [f"result cache: {entries} not the result of its item: removed, evaluated again"]
    lines += [
        f"  {printable(d.get('instance_id'))} [{printable(d.get('model'))}]: {printable(d.get('why'))}"
        for d in dropped[:cap]
    ]
    if len(dropped) > cap:
        lines.append(f"  ... and {len(dropped) - cap} more (summary.json: cache_dropped_entries)")
    return lines


def nothing_selected_line(summary_path: Path, reports_dir: Path) -> str:
    """What a run that selected no benchmark item (exit 5) left on disk, naming only files that exist."""
    if summary_path.is_file():
        return f"no benchmark item selected: {summary_path} (an earlier run's) is left as it was"
    latest = reports_dir / "latest" / "summary.json"
    if latest.is_file():
        return f"no benchmark item selected: nothing written; the last run's summary is {latest.resolve()}"
    return f"no benchmark item selected: nothing written (no run has written a summary under {reports_dir} yet)"


def headline_lines(summary: Mapping[str, Any], *, summary_path: str = "", page_path: str = "") -> list[str]:
    """Lines of the terminal section for ``summary``: one headline block per suite, then what needs attention."""
    lines = [f"run {printable(summary['run_id'])}: models {', '.join(printable(m) for m in summary['models']) or '-'}"]
    lines.extend(f"WARNING: {printable(note)}" for note in summary.get("runtime_warnings", []))
    for name, block in summary.get("headlines", {}).items():
        lines.extend(suite_lines(name, block))
    lines.extend(trial_lines(summary))
    lines.extend(regrade_lines(summary))
    lines.extend(cache_lines(summary))
    if summary.get("interrupted"):
        lines.append("the run was interrupted: items not run are counted in 'not run' (re-run to resume)")
    budget = summary.get("run_budget") or {}
    if budget.get("ran_out"):
        lines.append(
            f"the run budget ({fmt_duration(float(budget['seconds']))}) ran out: {budget['not_started']} item(s) not "
            "started, counted in 'not run'; exit status 2 (re-run to resume: finished items come from the cache)"
        )
    if summary.get("invalid_instances"):
        lines.append(f"invalid instances: {summary['invalid_instances']} (the run fails until they are fixed)")
        lines.extend(f"  {printable(e)}" for e in summary.get("manifest_errors", [])[:10])
    unmatched = summary.get("unmatched_predictions") or []
    if unmatched:
        hints = summary.get("unmatched_suggestions", {})
        shown = [
            printable(i) + (f" (did you mean {printable(hints[i])!r}?)" if i in hints else "") for i in unmatched[:10]
        ]
        more = len(unmatched) - 10
        lines.append(
            "predictions matching no selected instance: " + ", ".join(shown) + (f" (+{more} more)" if more > 0 else "")
        )
    lines.extend(f"kept: {printable(note)}" for note in summary.get("kept", []))
    for table in summary.get("suite_tables", {}).values():
        for q in (table.get("quarantined_devices") or []) if isinstance(table, Mapping) else []:
            lines.append(
                f"quarantined device {printable(q.get('serial'))}: left by {printable(q.get('instance_id'))} "
                f"[{printable(q.get('model_name_or_path'))}] ({printable(q.get('charged_to'))}): "
                + printable("; ".join(q.get("remaining") or []), 160)
            )
    if summary_path:
        lines.append(f"summary: {summary_path}")
    if page_path:
        lines.append(f"run page: {page_path}")
    return lines
