"""The runs of one reports folder, listed with their headlines (issue 33, item 6).

Each run that writes a summary also writes ``<reports>/<run_id>/run-entry.json``, a few hundred bytes (so
listing 500 runs never reads 500 summaries)::

    {"run_id": str, "finished": "2026-12-04T21:40:00.123456Z", "exitstatus": int, "interrupted": bool,
     "run_budget_ran_out": bool, "models": [str], "selected": int, "not_run": int,
     "headlines": [str]}   # one line per suite and model: "issue_resolution (gold): resolution rate 2/2 = ..."

A run folder from before this file existed is listed from its ``summary.json`` (its headlines read from it,
its time the file's), or by name alone when that is unreadable. :func:`write_runs_index` writes
``<reports>/index.html``, the page listing every run newest first (a link to each run page, its headlines);
each run page shows the earlier runs (:func:`earlier_runs_section`). Text from summaries (model names) is
HTML-escaped; nothing is a script.
"""

from __future__ import annotations

import datetime
import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.report.document import render_document
from pytest_mobilebench.report.terminal import figure_text, printable

__all__ = [
    "ENTRY_NAME",
    "INDEX_NAME",
    "earlier_runs_section",
    "read_runs",
    "run_entry",
    "runs_document",
    "write_run_entry",
    "write_runs_index",
]

ENTRY_NAME = "run-entry.json"
#: the reports folder's page listing the runs
INDEX_NAME = "index.html"
#: a summary.json larger than this (bytes) is not parsed to list an old run: it is listed by name
_SUMMARY_READ_LIMIT = 8 << 20
#: earlier runs shown on a run page (the reports folder's index lists all)
EARLIER_SHOWN = 20


def _headline_texts(summary: Mapping[str, Any]) -> list[str]:
    out = []
    for suite, block in (summary.get("headlines") or {}).items():
        models = block.get("models") or {}
        for model, own in models.items():
            out.append(f"{printable(suite, 40)} ({printable(model, 40)}): {figure_text(own)}")
        if len(models) > 1:
            out.append(f"{printable(suite, 40)} (pooled, {len(models)} models): {figure_text(block)}")
        if not models:
            out.append(f"{printable(suite, 40)}: {figure_text(block)}")
    return out


def run_entry(summary: Mapping[str, Any], finished: datetime.datetime | None = None) -> dict[str, Any]:
    """The run's entry (module docstring) from its summary; ``finished`` defaults to now (UTC)."""
    when = (finished or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {
        "run_id": str(summary["run_id"]),
        "finished": when,
        "exitstatus": summary.get("exitstatus"),
        "interrupted": bool(summary.get("interrupted")),
        "run_budget_ran_out": bool((summary.get("run_budget") or {}).get("ran_out")),
        "models": [str(m) for m in summary.get("models", [])],
        "selected": summary.get("selected"),
        "not_run": summary.get("not_run"),
        "headlines": _headline_texts(summary),
    }


def write_run_entry(reports_dir: Path, summary: Mapping[str, Any]) -> Path:
    """Write the run's entry to ``<reports>/<run_id>/run-entry.json`` (atomic) and return its path."""
    path = reports_dir / str(summary["run_id"]) / ENTRY_NAME
    atomic_write_json(path, run_entry(summary))
    return path


def _read_one(folder: Path) -> dict[str, Any] | None:
    """A run folder's entry (None for a folder that is no run: the cache, ``latest``, other files)."""
    entry, summary = folder / ENTRY_NAME, folder / "summary.json"
    try:
        if entry.is_file():
            data = json.loads(entry.read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("run_id"), str):
                return data
        if not summary.is_file():
            return None
        stamp = datetime.datetime.fromtimestamp(summary.stat().st_mtime, datetime.timezone.utc)
        if summary.stat().st_size <= _SUMMARY_READ_LIMIT:
            data = json.loads(summary.read_text(encoding="utf-8"))
            if isinstance(data, dict) and "run_id" in data:
                return run_entry({**data, "run_id": folder.name}, stamp)
        return run_entry({"run_id": folder.name}, stamp)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {"run_id": folder.name, "finished": "", "headlines": ["(its summary could not be read)"]}


def read_runs(reports_dir: Path) -> list[dict[str, Any]]:
    """Every run under ``reports_dir``, newest first (by ``finished``, then run id)."""
    try:
        folders = [p for p in reports_dir.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []
    entries = [e for e in (_read_one(p) for p in folders) if e is not None]
    return sorted(entries, key=lambda e: (str(e.get("finished") or ""), str(e["run_id"])), reverse=True)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _status(entry: Mapping[str, Any]) -> str:
    if entry.get("run_budget_ran_out"):
        return "run budget ran out"
    if entry.get("interrupted"):
        return "interrupted"
    status = entry.get("exitstatus")
    return "" if status is None else f"exit {status}"


def runs_table(entries: Sequence[Mapping[str, Any]], href_prefix: str) -> str:
    """A table of runs: run id (a link to ``<href_prefix><run_id>/index.html``), finished, models, headlines,
    selected / not run, status."""
    rows = []
    for e in entries:
        run = str(e["run_id"])
        heads = "".join(f"<li>{_e(h)}</li>" for h in e.get("headlines") or [])
        rows.append(
            f'<tr><td><a href="{_e(href_prefix + run)}/index.html">{_e(run)}</a></td>'
            f"<td>{_e(str(e.get('finished') or '')[:19].replace('T', ' '))}</td>"
            f'<td>{_e(", ".join(e.get("models") or []))}</td><td><ul class="ids">{heads}</ul></td>'
            f"<td>{_e(e.get('selected', ''))} / {_e(e.get('not_run', ''))}</td><td>{_e(_status(e))}</td></tr>"
        )
    head = (
        "<tr><th>run</th><th>finished (UTC)</th><th>models</th><th>headlines</th><th>selected / not "
        "run</th><th>status</th></tr>"
    )
    return f'<table class="runs"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def earlier_runs_section(reports_dir: Path, run_id: str, shown: int = EARLIER_SHOWN) -> str:
    """The run page's "Earlier runs" section: the other runs of the reports folder, newest first (at most
    ``shown``), and a link to the folder's page listing them all; "" when there is none."""
    others = [e for e in read_runs(reports_dir) if e["run_id"] != run_id]
    if not others:
        return ""
    more = f" ({len(others) - shown} more there)" if len(others) > shown else ""
    return (
        f'<section id="runs"><h2>Earlier runs</h2><p class="note">Every run of this reports folder: '
        f'<a href="../{INDEX_NAME}">the runs page</a>{_e(more)}.</p>{runs_table(others[:shown], "../")}</section>'
    )


def runs_document(entries: Sequence[Mapping[str, Any]]) -> str:
    """The reports folder's page: every run, newest first."""
    body = (
        f"<h1>mobilebench runs</h1><p>{len(entries)} run(s) in this folder, newest first; each run's page has its "
        "items and plots.</p>" + runs_table(entries, "")
    )
    return render_document("mobilebench runs", body)


def write_runs_index(reports_dir: Path) -> Path:
    """Write ``<reports>/index.html`` listing every run (atomic) and return its path."""
    path = reports_dir / INDEX_NAME
    atomic_write_text(path, runs_document(read_runs(reports_dir)))
    return path
