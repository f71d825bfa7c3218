"""The run page: a static, self-contained ``reports/<run_id>/index.html`` with headlines, plots and instances.

What is on it, per suite present in the run: the headline block (:mod:`.headline`) with Wilson 95% intervals,
generic plots drawn from the results (the headline rate per model and the outcomes per model, models side by
side), the suite's own plots, and one row per item (verdict, the suite's columns, time, a cached badge with the
original duration, a relative link to the evidence folder). Logs are linked, never inlined, so a 2,000-item run
stays light. With two or more models in a suite, a "Model comparison" section follows the plots (every pair on
the instances both evaluated: resolved counts, discordant counts, exact McNemar p, the disagreeing instances
linked to their rows; :func:`pytest_mobilebench.compare.compare_results`); when results carry an ``audit``
(``--mb-audit``), an "Instance audit" section does (:mod:`.sections`); live agent items close the suite with
collapsible "Agent transcripts" (:mod:`.transcripts`). A section that fails to render costs
only itself: the page shows the error in its place. Invalid instances and predictions matching no instance
(with "did you mean") close the page.

The page is one file: plots are inline SVG (matplotlib, ``svg.fonttype = none``), the CSS is inline and the
Content-Security-Policy allows no script at all. Every text that came from a result is HTML-escaped: a
candidate's test name or error text cannot add markup, scripts or links to the page.

The plot seam
-------------
A suite adds plots with a function ``plots(table) -> list[FigureSpec]``: a ``plots`` attribute of the suite
object, else the ``plots`` function of the module it declares (``plots_module``: a built-in suite's surface
entry ``SuiteSurface.plots``, e.g. ``pytest_mobilebench.suites.planner.plots``); no module is guessed.
``table`` is the suite's ``summarize()`` output as written to ``summary.json`` (``suite_tables[<name>]``). Each
:class:`FigureSpec` is a grouped bar chart: one group per category, one bar per :class:`Series` (a model,
usually), with optional error bars (use
:func:`rate_series` for rates: it adds the Wilson 95% interval). A ``plots`` function that raises costs only
its own figures: the page shows the error in their place.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import html
import importlib
import io
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.report.document import render_document
from pytest_mobilebench.report.headline import figure_kind, is_infra, rate_block
from pytest_mobilebench.report.progress import item_seconds
from pytest_mobilebench.report.names import item_label
from pytest_mobilebench.report.sections import audit_section, comparison_section, trials_section
from pytest_mobilebench.report.irt import irt_section
from pytest_mobilebench.report.trials import suite_trials
from pytest_mobilebench.report.integrity import integrity_section
from pytest_mobilebench.report.transcripts import transcripts_section

__all__ = [
    "FigureSpec",
    "Series",
    "column_value",
    "comparison_page",
    "find_plots",
    "generic_figures",
    "headline_table",
    "model_headlines",
    "rate_series",
    "render_page",
    "render_svg",
    "row_id",
    "write_run_page",
]

PAGE_NAME = "index.html"


@dataclasses.dataclass(frozen=True)
class Series:
    """One bar per category. ``values`` may hold None (no data: no bar); ``intervals`` are ``(lo, hi)`` error
    bars in the values' unit (empty tuple: none); ``labels`` are texts above the bars (e.g. ``"2/3"``)."""

    name: str
    values: tuple[float | None, ...]
    intervals: tuple[tuple[float, float] | None, ...] = ()
    labels: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class FigureSpec:
    """A grouped bar chart.

    Attributes:
        key: stable id within the suite (the page's element id is ``plot-<suite>-<key>``).
        title: shown above the plot.
        categories: the x groups, in order.
        series: one per model (or per measure), drawn side by side in each group.
        ylabel: the y-axis label with its unit.
        ylim: ``(low, high)``, or None for automatic.
        note: one sentence under the plot (what the denominator is, where the formula comes from).
    """

    key: str
    title: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    ylabel: str = "rate"
    ylim: tuple[float, float] | None = (0.0, 1.0)
    note: str = ""


def rate_series(name: str, cells: Sequence[tuple[int, int] | None]) -> Series:
    """A series of rates ``k / n`` with Wilson 95% error bars and ``"k/n"`` labels; None or ``n == 0``: no bar."""
    values: list[float | None] = []
    intervals: list[tuple[float, float] | None] = []
    labels: list[str] = []
    for cell in cells:
        if cell is None or cell[1] == 0:
            values.append(None)
            intervals.append(None)
            labels.append("")
            continue
        block = rate_block(int(cell[0]), int(cell[1]))
        values.append(block["value"])
        intervals.append((block["ci95"][0], block["ci95"][1]))
        labels.append(f"{cell[0]}/{cell[1]}")
    return Series(name, tuple(values), tuple(intervals), tuple(labels))


# ------------------------------------------------------------------------------------------ figures


def generic_figures(
    results: Sequence[Mapping[str, Any]], headline_label: str, headline_counts: tuple[Any, Any] | None = None
) -> list[FigureSpec]:
    """The plots every suite gets, from its results: passed over eligible per model, outcomes per model.
    ``headline_counts`` (the pooled headline's numerator, denominator; None for a weighted score) says whether
    the first plot shows the headline's own measure (issue resolution) or another one (NavPassRate, Overall):
    its note says which."""
    models = sorted({str(r.get("model_name_or_path")) for r in results})
    cells = []
    for model in models:
        mine = [r for r in results if str(r.get("model_name_or_path")) == model and not is_infra(r)]
        cells.append((sum(1 for r in mine if r.get("passed") is True), len(mine)))
    reasons = sorted({str(r.get("reason")) for r in results})
    outcome = tuple(
        Series(
            model,
            tuple(
                float(
                    sum(
                        1
                        for r in results
                        if str(r.get("model_name_or_path")) == model and str(r.get("reason")) == reason
                    )
                )
                for reason in reasons
            ),
        )
        for model in models
    )
    pooled = (sum(c[0] for c in cells), sum(c[1] for c in cells))
    same = ":" if headline_counts is not None and tuple(headline_counts) == pooled else ", not"
    return [
        FigureSpec(
            "passed_by_model",
            "Items passed per model",
            tuple(models),
            (rate_series("passed / eligible", cells),),
            note=f"items passed / eligible (evaluated minus infrastructure errors){same} the {headline_label}; "
            "bars are Wilson 95% intervals",
        ),
        FigureSpec(
            "outcomes_by_model",
            "Outcomes per model",
            tuple(reasons),
            outcome,
            ylabel="items",
            ylim=None,
            note="one reason per item; infrastructure reasons are not the model's failure",
        ),
    ]


def find_plots(suite: Any) -> Callable[[Mapping[str, Any]], Sequence[FigureSpec]] | None:
    """The suite's ``plots`` function (see the module docstring), or None when it declares none.

    Raises:
        ImportError: the declared plots module cannot be imported (the page shows the error in its place).
    """
    own = getattr(suite, "plots", None) if suite is not None else None
    if callable(own):
        return own  # type: ignore[no-any-return]
    dotted = getattr(suite, "plots_module", None) if suite is not None else None
    if not dotted:
        return None
    fn = getattr(importlib.import_module(str(dotted)), "plots", None)
    return fn if callable(fn) else None


def y_top(spec: FigureSpec) -> float:
    """The top of a figure's y axis: its declared ``ylim`` top, raised to the largest bar or error bar so a
    value above the usual range (a ReuseRate of 2.5 on a 0-1 axis) is drawn whole, never cut off."""
    top = spec.ylim[1] if spec.ylim is not None else 0.0
    for series in spec.series:
        top = max([top, *(v for v in series.values if v is not None), *(iv[1] for iv in series.intervals if iv)])
    return float(top)


def render_svg(spec: FigureSpec, element_id: str) -> str:
    """The figure as an inline ``<svg>`` element (no XML prolog), drawn with matplotlib's SVG backend."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": element_id, "font.size": 9}):
        n_cat, n_ser = len(spec.categories), max(1, len(spec.series))
        fig = Figure(figsize=(max(4.0, 1.0 + 0.9 * n_cat * max(1, n_ser) ** 0.5), 3.0), layout="constrained")
        ax = fig.add_subplot()
        width = 0.8 / n_ser
        for i, series in enumerate(spec.series):
            xs = [c + (i - (n_ser - 1) / 2) * width for c in range(n_cat)]
            heights = [v if v is not None else 0.0 for v in series.values]
            bars = ax.bar(xs, heights, width * 0.95, label=series.name)
            if series.intervals:
                lo = [max(0.0, (v or 0.0) - iv[0]) if iv else 0.0 for v, iv in zip(series.values, series.intervals)]
                hi = [max(0.0, iv[1] - (v or 0.0)) if iv else 0.0 for v, iv in zip(series.values, series.intervals)]
                ax.errorbar(xs, heights, yerr=[lo, hi], fmt="none", ecolor="black", capsize=3, linewidth=0.8)
            if series.labels:
                ax.bar_label(bars, labels=list(series.labels), fontsize=7, padding=2)
        ax.set_xticks(
            range(n_cat),
            [str(c) for c in spec.categories],
            rotation=20 if n_cat > 4 else 0,
            ha="right" if n_cat > 4 else "center",
        )
        ax.set_ylabel(spec.ylabel)
        values = [v for series in spec.series for v in series.values if v is not None]
        if spec.ylim is None and all(float(v).is_integer() for v in values):  # counts: no 0.25 of an item
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if spec.ylim is not None:
            ax.set_ylim(spec.ylim[0], y_top(spec) * 1.12)
        if len(spec.series) > 1:  # beside the axes, never over a bar
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


# --------------------------------------------------------------------------------------------- html


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _link(target: str | None, page_dir: Path, reports_dir: Path, text: str) -> str:
    """A relative link to ``target`` when it lies inside ``reports_dir``, else the text alone."""
    if not target:
        return ""
    path = Path(target).resolve()
    if not path.is_relative_to(reports_dir.resolve()):
        return _e(text)
    rel = os.path.relpath(path, page_dir.resolve())
    return (
        f'<a href="{_e(Path(rel).as_posix())}/">{_e(text)}</a>'
        if path.is_dir()
        else f'<a href="{_e(Path(rel).as_posix())}">{_e(text)}</a>'
    )


def _rate_cell(block: Mapping[str, Any]) -> str:
    value = block.get("value")
    shown = "n/a" if value is None else f"{float(value):.3f}"
    ci = block.get("ci95")
    interval = f" <small>[{float(ci[0]):.3f}, {float(ci[1]):.3f}]</small>" if ci and value is not None else ""
    if block.get("numerator") is None or block.get("denominator") is None:  # no figure: its note says why
        return f"<b>{shown}</b>"
    if figure_kind(block) == "score":  # a weighted score (the planner's Overall): its value is not num/den
        return f"<b>{shown}</b> ({_e(block.get('numerator'))}/{_e(block.get('denominator'))} passed)"
    return f"{_e(block.get('numerator'))}/{_e(block.get('denominator'))} = <b>{shown}</b>{interval}"


def headline_table(block: Mapping[str, Any]) -> str:
    """One suite's headline block (:mod:`.headline`) as an HTML table (also used in the pytest-html report)."""
    own = block["headline"]
    rows = [
        (
            f"{_e(own['label'])}",
            _rate_cell(own) + (f"<br><small>{_e(own.get('note', ''))}</small>" if own.get("note") else ""),
        )
    ]
    rows += [(_e(extra["label"]), _rate_cell(extra)) for extra in own.get("secondary", [])]
    rows += [
        (
            "passed over eligible",
            _rate_cell(block["over_eligible"]) + "<br><small>evaluated minus infrastructure errors</small>",
        ),
        (
            "passed over all selected",
            _rate_cell(block["over_all"]) + "<br><small>invalid, infra and not-run items count as failures</small>",
        ),
    ]
    counts = ("selected", "evaluated", "invalid", "missing_predictions", "infra_errors", "cached", "not_run")
    rows += [(name.replace("_", " "), _e(block[name])) for name in counts]
    body = "".join(f'<tr data-figure="{_e(k)}"><th>{k}</th><td>{v}</td></tr>' for k, v in rows)
    return f'<table class="headline">{body}</table>'


def _figure_cell(block: Mapping[str, Any]) -> str:
    """A block's one headline figure (the terminal's format, :func:`~.terminal.figure_text`), escaped."""
    from pytest_mobilebench.report.terminal import figure_text

    return _e(figure_text(block))


def model_headlines(block: Mapping[str, Any]) -> str:
    """A suite block's headlines, per model first: with several models, one row per model (its own figure,
    interval and denominators) and then the pooled block's full table under "pooled"; with one model, that
    model's full table. Used by the run page and the pytest-html report."""
    models = block.get("models") or {}
    if len(models) <= 1:
        who = f'<p class="model">model: <b>{_e(next(iter(models)))}</b></p>' if models else ""
        return who + headline_table(block)
    head = (
        "<tr><th>model</th><th>headline</th><th>passed over all selected</th><th>selected</th>"
        "<th>evaluated</th><th>infra errors</th><th>missing predictions</th><th>not run</th></tr>"
    )
    rows = "".join(
        f'<tr class="model-headline" data-model="{_e(m)}"><td>{_e(m)}</td><td>{_figure_cell(b)}</td>'
        f"<td>{_rate_cell(b['over_all'])}</td><td>{_e(b['selected'])}</td><td>{_e(b['evaluated'])}</td>"
        f"<td>{_e(b['infra_errors'])}</td><td>{_e(b['missing_predictions'])}</td><td>{_e(b['not_run'])}</td></tr>"
        for m, b in models.items()
    )
    return (
        f'<table class="models"><thead>{head}</thead><tbody>{rows}</tbody></table>'
        f'<h4 class="pooled">pooled ({len(models)} models): {_figure_cell(block)}</h4>{headline_table(block)}'
    )


def _overview(summary: Mapping[str, Any]) -> str:
    """The page's first table: every suite's headline per model, then the pooled one."""
    rows = []
    for name, block in summary.get("headlines", {}).items():
        models = block.get("models") or {}
        for model, own in models.items():
            rows.append((name, model, own))
        if len(models) > 1:
            rows.append((name, f"pooled ({len(models)} models)", block))
    body = "".join(
        f'<tr><td><a href="#suite-{_e(n)}">{_e(n)}</a></td><td>{_e(m)}</td><td>{_figure_cell(b)}</td></tr>'
        for n, m, b in rows
    )
    return (
        (
            f'<table class="overview"><thead><tr><th>suite</th><th>model</th><th>headline</th></tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )
        if rows
        else ""
    )


def column_value(result: Mapping[str, Any], key: str) -> str:
    """The text of a suite column (``Column.key``) for one result: ``"<key>_passed/<key>_total"`` when the
    properties count it, else the property, else the result's own top-level field (``reason``: the verdict
    of every suite), floats to 3 decimals; "" when the result has neither."""
    props = result.get("properties") or {}
    if f"{key}_total" in props:
        return f"{props.get(f'{key}_passed', 0)}/{props[f'{key}_total']}"
    value = props[key] if key in props else result.get(key, "")
    if isinstance(value, (Mapping, list, tuple)):
        return ""
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def row_id(suite: str, instance_id: str, model: str) -> str:
    """The element id of an item's row: ``item-<suite>-<instance id>-<hash>``, characters outside
    ``[A-Za-z0-9_-]`` replaced by ``_`` and the hash (of the exact instance id and model) keeping it unique."""
    digest = hashlib.sha1(f"{suite}\0{instance_id}\0{model}".encode()).hexdigest()[:8]
    return f"item-{_slug(suite)}-{_slug(instance_id)[:80]}-{digest}"


def _instance_rows(
    suite: str, results: Sequence[Mapping[str, Any]], columns: Sequence[Any], page_dir: Path, reports_dir: Path
) -> str:
    columns = [c for c in columns if c.key != "reason"]  # the row's own reason cell is the verdict
    head = "".join(f"<th>{_e(c.header)}</th>" for c in columns)
    rows = []
    for r in sorted(
        results, key=lambda r: (str(r.get("instance_id")), str(r.get("model_name_or_path")), r.get("trial") or 0)
    ):
        seconds = item_seconds(r, 0.0)
        shown = (
            f'<span class="badge">cached</span> originally {seconds:.1f} s' if r.get("cached") else f"{seconds:.1f} s"
        )
        verdict = "pass" if r.get("passed") is True else ("infra" if is_infra(r) else "fail")
        cells = "".join(f"<td>{_e(column_value(r, c.key))}</td>" for c in columns)
        detail = str(r.get("detail") or "")
        rows.append(
            f'<tr class="{verdict}" id="{_e(row_id(suite, item_label(r), str(r.get("model_name_or_path"))))}">'
            f"<td>{_e(item_label(r))}</td><td>{_e(r.get('model_name_or_path'))}</td>"
            f"<td>{_e(r.get('reason'))}</td>{cells}<td>{shown}</td>"
            f"<td>{_link(r.get('evidence_dir'), page_dir, reports_dir, 'evidence')}</td>"
            f'<td class="detail">{_e(detail[:300] + ("..." if len(detail) > 300 else ""))}</td></tr>'
        )
    return (
        f'<table class="instances"><thead><tr><th>instance</th><th>model</th><th>reason</th>{head}'
        f"<th>time</th><th>logs</th><th>detail</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _figures_html(suite: str, specs: Sequence[FigureSpec]) -> str:
    parts = []
    for spec in specs:
        element_id = f"plot-{re.sub(r'[^A-Za-z0-9_-]', '_', suite)}-{re.sub(r'[^A-Za-z0-9_-]', '_', spec.key)}"
        parts.append(
            f'<figure class="plot" id="{_e(element_id)}"><figcaption>{_e(spec.title)}</figcaption>'
            f"{render_svg(spec, element_id)}"
            + (f'<p class="note">{_e(spec.note)}</p>' if spec.note else "")
            + "</figure>"
        )
    return "".join(parts)


def _contained(what: str, render: Callable[[], str]) -> str:
    """``render()``, or an error paragraph in its place: one section's failure must not cost the page."""
    try:
        return render()
    except Exception as exc:  # noqa: BLE001 - shown on the page instead of the section
        return f'<p class="error">{_e(what)} failed: {_e(type(exc).__name__)}: {_e(exc)}</p>'


def _comparison(name: str, results: Sequence[Mapping[str, Any]]) -> str:
    """The suite's "Model comparison" section, or "" with fewer than two models."""
    from pytest_mobilebench.compare import compare_results

    if len({str(r.get("model_name_or_path")) for r in results}) < 2:
        return ""
    return comparison_section(
        compare_results(results),
        anchor=f"comparison-{_slug(name)}",
        row_href=lambda iid, model: "#" + row_id(name, iid, model),
        more=" (python -m pytest_mobilebench compare --json lists them all)",
    )


def _audit(name: str, results: Sequence[Mapping[str, Any]], table: Any) -> str:
    """The suite's "Instance audit" section, or "" when no result carries an audit."""
    own = table.get("audit") if isinstance(table, Mapping) else None
    if not any(isinstance(r.get("audit"), Mapping) for r in results):
        return ""
    return audit_section(
        results,
        own if isinstance(own, Mapping) else None,
        anchor=f"audit-{_slug(name)}",
        row_href=lambda iid, model: "#" + row_id(name, iid, model),
    )


def _suite_section(
    name: str,
    summary: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    suite: Any,
    page_dir: Path,
    reports_dir: Path,
) -> str:
    block = summary["headlines"][name]
    head = block["headline"]
    counts = None if head.get("kind") == "score" else (head.get("numerator"), head.get("denominator"))
    figures = _figures_html(name, generic_figures(results, head["label"], counts)) if results else ""
    table = summary.get("suite_tables", {}).get(name)
    try:
        plots = find_plots(suite)
        own = list(plots(table)) if plots is not None and isinstance(table, Mapping) and "error" not in table else []
        figures += _figures_html(name, own)
    except Exception as exc:  # noqa: BLE001 - one suite's plotting error costs only its plots
        figures += f'<p class="error">plots of {_e(name)} failed: {_e(type(exc).__name__)}: {_e(exc)}</p>'
    columns = tuple(getattr(suite, "columns", ()) or ()) if suite is not None else ()
    comparison = _contained(f"model comparison of {name}", lambda: _comparison(name, results))
    audit = _contained(f"instance audit of {name}", lambda: _audit(name, results, table))
    audit += _contained(f"trials of {name}", lambda: trials_section(suite_trials(summary).get(name)))
    audit += _contained(
        f"difficulty and ability of {name}",
        lambda: irt_section(table.get("irt") if isinstance(table, Mapping) else None),
    )
    audit += _contained(
        f"static integrity audit of {name}",
        lambda: integrity_section(results, row_href=lambda iid, model: "#" + row_id(name, iid, model)),
    )
    agents = _contained(
        f"agent transcripts of {name}",
        lambda: transcripts_section(
            results, anchor=f"transcripts-{_slug(name)}", row_href=lambda iid, model: "#" + row_id(name, iid, model)
        ),
    )
    return (
        f'<section class="suite" id="suite-{_e(name)}"><h2>{_e(name)}</h2>{model_headlines(block)}'
        f'<div class="figures">{figures}</div>{comparison}{audit}<h3>Items</h3>'
        f"{_instance_rows(name, results, columns, page_dir, reports_dir)}{agents}</section>"
    )


def render_page(
    summary: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    suites: Mapping[str, Any],
    page_dir: Path,
    reports_dir: Path,
    *,
    summary_path: Path | None = None,
    runs: str = "",
) -> str:
    """The run page's HTML (a pure function of its inputs, apart from reading the plots modules); ``runs`` is
    the "Earlier runs" section (:func:`~pytest_mobilebench.report.run_list.earlier_runs_section`), markup."""
    sections = [
        _suite_section(
            name, summary, [r for r in results if str(r.get("suite")) == name], suites.get(name), page_dir, reports_dir
        )
        for name in summary.get("headlines", {})
    ]
    problems = []
    if summary.get("manifest_errors"):
        problems.append(
            "<h3>Invalid instances (the run fails)</h3><ul>"
            + "".join(f"<li>{_e(e)}</li>" for e in summary["manifest_errors"])
            + "</ul>"
        )
    if summary.get("unmatched_predictions"):
        hints = summary.get("unmatched_suggestions", {})
        problems.append(
            "<h3>Predictions matching no selected instance</h3><ul>"
            + "".join(
                f"<li>{_e(i)}" + (f" (did you mean {_e(hints[i])}?)" if i in hints else "") + "</li>"
                for i in summary["unmatched_predictions"]
            )
            + "</ul>"
        )
    if summary.get("interrupted"):
        problems.append("<p class='error'>The run was interrupted: items not run are counted as not run.</p>")
    if (summary.get("run_budget") or {}).get("ran_out"):
        problems.append(
            f"<p class='error'>The run budget ran out: {_e(summary['run_budget']['not_started'])} item(s) "
            "not started are counted as not run (re-run to resume).</p>"
        )
    summary_link = (
        f'<a href="{_e(Path(os.path.relpath(summary_path, page_dir)).as_posix())}">summary.json</a>'
        if summary_path
        else ""
    )
    nav = " | ".join(f'<a href="#suite-{_e(n)}">{_e(n)}</a>' for n in summary.get("headlines", {}))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return render_document(
        f"mobilebench run {summary['run_id']}",
        f"<h1>mobilebench run {_e(summary['run_id'])}</h1>"
        f"<p>models: {_e(', '.join(summary.get('models', [])) or '-')} | suites: {nav or '-'} | {stamp}"
        + (f" | {summary_link}" if summary_link else "")
        + "</p>"
        + _overview(summary)
        + "".join(sections)
        + (f'<section id="problems">{"".join(problems)}</section>' if problems else "")
        + runs,
    )


def write_run_page(
    summary: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    suites: Mapping[str, Any],
    reports_dir: Path,
    *,
    summary_path: Path | None = None,
) -> Path:
    """Write ``<reports_dir>/<run_id>/index.html`` (atomically, mode 0644) and return its path; it ends with the
    earlier runs of ``reports_dir`` (:mod:`.run_list`)."""
    from pytest_mobilebench.files import atomic_write_text

    page_dir = reports_dir / str(summary["run_id"])
    page_dir.mkdir(parents=True, exist_ok=True)
    path = page_dir / PAGE_NAME
    from pytest_mobilebench.report.run_list import earlier_runs_section

    runs = _contained("earlier runs", lambda: earlier_runs_section(reports_dir, str(summary["run_id"])))
    atomic_write_text(
        path, render_page(summary, results, suites, page_dir, reports_dir, summary_path=summary_path, runs=runs)
    )
    return path


def comparison_page(report: Mapping[str, Any], sources: Sequence[str] = ()) -> str:
    """:func:`pytest_mobilebench.compare.compare`'s result as a self-contained HTML page: the run page's
    "Model comparison" section (:func:`~pytest_mobilebench.report.sections.comparison_section`) under a
    title naming ``sources`` (``python -m pytest_mobilebench compare ... --html``)."""
    from pytest_mobilebench.compare import render_text

    title = "mobilebench model comparison"
    names = ", ".join(sources)
    if report["pairs"]:
        body = comparison_section(report, anchor="comparison", more=" (compare --json lists them all)")
    else:
        body = f"<p>{_e(render_text(report).strip())}</p>"
    body += irt_section(report.get("irt"))  # compare --irt
    return render_document(title, f"<h1>{_e(title)}</h1><p>from: {_e(names or '-')}</p>{body}")
