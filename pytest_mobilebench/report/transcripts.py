"""The run page's "Agent transcripts" section: one collapsible block per live item (results with ``agent``).

Each block's summary line gives the instance, the model, the verdict, how the agent ended and its usage (steps,
calls, tokens in / out, model seconds, cost); inside are the transcript lines the suite kept (bounded: the whole
trajectory is the item's ``trajectory.jsonl``) and the taken diff. Every text is the candidate's and is
HTML-escaped; the page's Content-Security-Policy allows no script.
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
    parts = [f"steps {usage.get('steps') if usage.get('steps') is not None else '-'}", f"calls {usage.get('calls', 0)}",
             f"tokens {usage.get('tokens_in', 0)} in / {usage.get('tokens_out', 0)} out",
             f"model {float(usage.get('model_seconds') or 0):.1f} s", "cost " + ("unpriced" if cost is None else f"${float(cost):.4f}")]
    return ", ".join(parts)


def _line(entry: Mapping[str, Any]) -> str:
    code = f" (exit {_e(entry['exit_code'])})" if "exit_code" in entry else ""
    return (f'<li class="t-{_e(entry.get("role"))}"><b>{_e(entry.get("role"))}</b> step {_e(entry.get("step"))}{code}'
            f"<pre>{_e(entry.get('text'))}</pre></li>")


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
    return (f'<details class="transcript"><summary>{_e(iid)} [{_e(model)}]: {_e(result.get("reason"))}, agent '
            f'{_e(agent.get("end"))} ({_e(agent.get("mode"))}); {_e(_usage_text(agent))}</summary>{link}{claim}'
            f'<ol class="steps">{lines}</ol><details><summary>taken diff, {len(diff)} characters{_e(cut)}</summary>'
            f"<pre>{_e(diff) or '(empty)'}</pre></details></details>")


def transcripts_section(results: Sequence[Mapping[str, Any]], *, anchor: str,
                        row_href: Callable[[str, str], str] | None = None) -> str:
    """The section's HTML, or "" when no result carries an ``agent`` record."""
    live = sorted((r for r in results if isinstance(r.get("agent"), Mapping)),
                  key=lambda r: (str(r.get("instance_id")), str(r.get("model_name_or_path")), r.get("trial") or 0))
    if not live:
        return ""
    return (f'<section id="{_e(anchor)}"><h3>Agent transcripts</h3>'
            + "".join(_block(r, row_href) for r in live) + "</section>")
