"""The run page's "Agent transcripts" section: one collapsible block per live item (results with ``agent``).

Each block's summary line gives the instance, the model, the verdict, how the agent ended and its usage (steps,
calls, tokens in / out, model seconds, cost); inside are the transcript lines the suite kept (bounded: the whole
trajectory is the item's ``trajectory.jsonl``) and the taken diff. Every text is the candidate's and is
HTML-escaped; the page's Content-Security-Policy allows no script.

When the results carry integrity reports (:mod:`pytest_mobilebench.agents.integrity`), the section opens with
an "Integrity" table (per model: items, items flagged, and each category's count) and each block lists its
flagged steps (step, category, reasons, the command).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["transcripts_section"]


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _usage_text(agent: Mapping[str, Any]) -> str:
    usage = agent.get("usage") or {}
    cost = usage.get("cost_usd")
    parts = [
        f"steps {usage.get('steps') if usage.get('steps') is not None else '-'}",
        f"calls {usage.get('calls', 0)}",
        f"tokens {usage.get('tokens_in', 0)} in / {usage.get('tokens_out', 0)} out",
        f"model {float(usage.get('model_seconds') or 0):.1f} s",
        "cost " + ("unpriced" if cost is None else f"${float(cost):.4f}"),
    ]
    return ", ".join(parts)


def _line(entry: Mapping[str, Any]) -> str:
    code = f" (exit {_e(entry['exit_code'])})" if "exit_code" in entry else ""
    return (
        f'<li class="t-{_e(entry.get("role"))}"><b>{_e(entry.get("role"))}</b> step {_e(entry.get("step"))}{code}'
        f"<pre>{_e(entry.get('text'))}</pre></li>"
    )


def _integrity_table(results: Sequence[Mapping[str, Any]]) -> str:
    from pytest_mobilebench.agents.integrity import CATEGORIES, integrity_totals

    totals = integrity_totals(results)
    if not totals:
        return ""
    head = "".join(f"<th>{_e(c.replace('_', ' '))}</th>" for c in ("model", "items", "items flagged", *CATEGORIES))
    rows = "".join(
        f'<tr data-model="{_e(model)}"><td>{_e(model)}</td>'
        + "".join(
            f'<td data-figure="{_e(k)}">{_e(row.get(k, 0))}</td>' for k in ("items", "items_flagged", *CATEGORIES)
        )
        + "</tr>"
        for model, row in totals.items()
    )
    return (
        f'<h4>Integrity</h4><p class="note">Counted from each live trajectory (lexical; a flag asks for a '
        f'reading, it changes no verdict).</p><table class="integrity"><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _flagged(agent: Mapping[str, Any]) -> str:
    report = agent.get("integrity")
    flagged = report.get("flagged") if isinstance(report, Mapping) else None
    if not flagged:
        return ""
    items = "".join(
        f'<li data-category="{_e(f.get("category"))}">step '
        f"{_e(f.get('step') if f.get('step') is not None else 'diff')}: "
        f"<b>{_e(f.get('category'))}</b> ({_e(', '.join(map(str, f.get('reasons') or [])))})"
        f"<pre>{_e(f.get('command'))}</pre></li>"
        for f in flagged
    )
    return f'<div class="integrity"><b>integrity flags: {len(flagged)}</b><ul>{items}</ul></div>'


def _block(result: Mapping[str, Any], row_href: Callable[[str, str], str] | None) -> str:
    agent = result["agent"]
    from pytest_mobilebench.report.names import item_label

    iid, model = item_label(result), str(result.get("model_name_or_path"))
    link = f' <a href="{_e(row_href(iid, model))}">row</a>' if row_href else ""
    diff = str(agent.get("diff") or "")
    cut = " (cut: the whole patch is the evidence's model_patch.diff)" if agent.get("diff_cut") else ""
    lines = "".join(_line(e) for e in agent.get("transcript") or [])
    submission = agent.get("submission")
    claim = f"<p>the agent's own note (not trusted): <q>{_e(submission)}</q></p>" if submission else ""
    return (
        f'<details class="transcript"><summary>{_e(iid)} [{_e(model)}]: {_e(result.get("reason"))}, agent '
        f"{_e(agent.get('end'))} ({_e(agent.get('mode'))}); {_e(_usage_text(agent))}</summary>{link}{claim}"
        f"{_flagged(agent)}"
        f'<ol class="steps">{lines}</ol><details><summary>taken diff, {len(diff)} characters{_e(cut)}</summary>'
        f"<pre>{_e(diff) or '(empty)'}</pre></details></details>"
    )


def transcripts_section(
    results: Sequence[Mapping[str, Any]], *, anchor: str, row_href: Callable[[str, str], str] | None = None
) -> str:
    """The section's HTML, or "" when no result carries an ``agent`` record."""
    live = sorted(
        (r for r in results if isinstance(r.get("agent"), Mapping)),
        key=lambda r: (str(r.get("instance_id")), str(r.get("model_name_or_path")), r.get("trial") or 0),
    )
    if not live:
        return ""
    return (
        f'<section id="{_e(anchor)}"><h3>Agent transcripts</h3>{_integrity_table(live)}'
        + "".join(_block(r, row_href) for r in live)
        + "</section>"
    )
