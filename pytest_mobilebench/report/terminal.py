"""The terminal section of a run: the per-suite headlines, in words a user reads at a glance.

Pure: :func:`headline_lines` maps a summary (:mod:`.summary`) to lines; the plugin prints them. Text that came
from results (instance ids, details, model names) goes through :func:`printable` first, so a candidate cannot
move the cursor, clear the line or colour a forged verdict onto the user's terminal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_mobilebench.report.headline import is_ratio, rate_block
from pytest_mobilebench.states import InfraKind

__all__ = ["fmt_rate", "headline_lines", "printable"]

#: C0 / C1 control characters and DEL, which includes ESC (ANSI sequences), CR (overprinting) and BS.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: object, limit: int = 300) -> str:
    """``text`` with every control character shown as ``\\xNN`` and cut to ``limit`` characters."""
    flat = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def fmt_rate(block: Mapping[str, Any]) -> str:
    """``"2/3 = 0.667 [95% CI 0.208, 0.939]"`` from a rate block; ``n/a`` for an empty denominator. A weighted
    score whose value is not ``numerator / denominator`` (the planner's Overall) reads ``"0.388 (29/87 passed)"``."""
    num, den, value, ci = block.get("numerator"), block.get("denominator"), block.get("value"), block.get("ci95")
    shown = "n/a" if value is None else f"{float(value):.3f}"
    if not is_ratio(block):
        return f"{shown} ({num}/{den} passed)"
    interval = f" [95% CI {float(ci[0]):.3f}, {float(ci[1]):.3f}]" if ci else ""
    prefix = f"{num}/{den} = " if num is not None and den is not None else ""
    return f"{prefix}{shown}{interval}"


def _suite_lines(name: str, block: Mapping[str, Any]) -> list[str]:
    own = block["headline"]
    figure = "" if own.get("value") is None and own.get("numerator") is None else f" {fmt_rate(own)}"  # per-model only
    lines = [f"{printable(name)}: {printable(own['label'])}{figure}"
             + (f" ({printable(own['note'])})" if own.get("note") else "")]
    lines.extend(f"  {printable(extra['label'])} {fmt_rate(extra)}" for extra in own.get("secondary", []))
    same = (own.get("numerator"), own.get("denominator")) == (block["over_eligible"]["numerator"], block["over_eligible"]["denominator"])
    if own.get("source") == "suite" and not same:
        lines.append(f"  passed {fmt_rate(block['over_eligible'])} over eligible (evaluated minus infra errors)")
    lines.append(f"  passed {fmt_rate(block['over_all'])} over all selected (invalid, infra, not run count as failures)")
    lines.append(
        "  selected {selected} | evaluated {evaluated} | invalid {invalid} | missing predictions "
        "{missing_predictions} | infra errors {infra_errors} | cached {cached} | not run {not_run}".format(**block)
    )
    if block["by_reason"]:
        reasons = ", ".join(f"{printable(k)} {v}" for k, v in block["by_reason"].items())
        lines.append(f"  reasons: {reasons}")
    kinds = block.get("by_infra_kind") or {}
    if kinds:
        lines.append("  infra kinds: " + ", ".join(f"{printable(k)} {v}" for k, v in kinds.items()))
    if kinds.get(InfraKind.DAEMON_UNREACHABLE.value):
        lines.append(f"  no Docker host could run {kinds[InfraKind.DAEMON_UNREACHABLE.value]} item(s): "
                     "start the daemon(s) or fix --mb-docker-hosts, then re-run (they are retried)")
    return lines


def headline_lines(summary: Mapping[str, Any], *, summary_path: str = "", page_path: str = "") -> list[str]:
    """Lines of the terminal section for ``summary``: one headline block per suite, then what needs attention."""
    lines = [f"run {printable(summary['run_id'])}: models {', '.join(printable(m) for m in summary['models']) or '-'}"]
    for name, block in summary.get("headlines", {}).items():
        lines.extend(_suite_lines(name, block))
    if len(summary.get("by_model", {})) > 1:
        for model, row in summary["by_model"].items():
            eligible = rate_block(row["resolved"], row["total"] - row["infra_errors"])
            lines.append(f"  model {printable(model)}: passed {fmt_rate(eligible)} over eligible, "
                         f"infra errors {row['infra_errors']}, cached {row['cached']}")
    if summary.get("interrupted"):
        lines.append("the run was interrupted: items not run are counted in 'not run' (re-run to resume)")
    if summary.get("invalid_instances"):
        lines.append(f"invalid instances: {summary['invalid_instances']} (the run fails until they are fixed)")
        lines.extend(f"  {printable(e)}" for e in summary.get("manifest_errors", [])[:10])
    unmatched = summary.get("unmatched_predictions") or []
    if unmatched:
        hints = summary.get("unmatched_suggestions", {})
        shown = [printable(i) + (f" (did you mean {printable(hints[i])!r}?)" if i in hints else "") for i in unmatched[:10]]
        more = len(unmatched) - 10
        lines.append("predictions matching no selected instance: " + ", ".join(shown) + (f" (+{more} more)" if more > 0 else ""))
    if summary_path:
        lines.append(f"summary: {summary_path}")
    if page_path:
        lines.append(f"run page: {page_path}")
    return lines
