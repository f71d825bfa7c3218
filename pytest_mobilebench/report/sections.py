"""Two run-page sections drawn from data other modules compute: the paired model comparison and the instance audit.

Pure: plain dicts in, an HTML fragment out; every text is HTML-escaped (model names, instance ids and test
ids come from results the candidate influences). Used by the run page (:mod:`.page`, one section per suite)
and by ``python -m pytest_mobilebench compare ... --html`` (:func:`pytest_mobilebench.report.page.comparison_page`).

Links to instance rows are the caller's: ``row_href(instance_id, model) -> str | None`` gives a relative
link (``#item-...`` on the run page) or None (the id is shown as text).

Long lists are capped (:data:`LIST_CAP` disagreeing instances per side, :data:`CELL_CAP` entries per audit
cell) with a count of the rest, so a 2,000-item run stays light; the full lists are in ``summary.json``.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["CELL_CAP", "LIST_CAP", "RowHref", "audit_section", "comparison_section", "format_p", "trials_section"]

#: Disagreeing (or infra-excluded) instances listed per side of a pair; the rest are counted.
LIST_CAP = 50
#: Entries listed in one audit cell (flaky tests, ids never reported, hunks); the rest are counted.
CELL_CAP = 10

RowHref = Callable[[str, str], "str | None"]


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def format_p(p: Any) -> str:
    """A p-value with 6 significant digits (``0.25``, ``0.109375``, ``1.2e-07``); ``n/a`` when not a number."""
    return f"{float(p):.6g}" if isinstance(p, (int, float)) and not isinstance(p, bool) else "n/a"


def _capped(items: Sequence[Any], cap: int, render: Callable[[Any], str], more: str = "") -> str:
    """``render`` of the first ``cap`` items as ``<li>``s, then one ``<li>`` counting the rest."""
    shown = "".join(f"<li>{render(i)}</li>" for i in items[:cap])
    rest = len(items) - cap
    return shown + (f'<li class="more">... and {rest} more{_e(more)}</li>' if rest > 0 else "")


def _id_link(iid: str, model: str, row_href: RowHref | None, text: str | None = None) -> str:
    href = row_href(iid, model) if row_href is not None else None
    shown = _e(iid if text is None else text)
    return f'<a href="{_e(href)}">{shown}</a>' if href else shown


# ---------------------------------------------------------------------------------------- comparison


def _boot_cell(pair: Mapping[str, Any]) -> str:
    boot = pair.get("paired_bootstrap") or {}
    if boot.get("difference") is None:
        return "-"
    lo, hi = boot["ci95"]
    return f"{float(boot['difference']):+.3f} [{float(lo):+.3f}, {float(hi):+.3f}]"


def _pair_row(pair: Mapping[str, Any], anchor: str) -> str:
    cells = [
        ("a", _e(pair["a"])),
        ("b_model", _e(pair["b"])),
        ("instances", _e(pair["instances"])),
        ("resolved_a", _e(pair["resolved_a"])),
        ("resolved_b", _e(pair["resolved_b"])),
        ("both_resolved", _e(pair["both_resolved"])),
        ("neither_resolved", _e(pair["neither_resolved"])),
        ("b", _e(len(pair["only_a"]))),
        ("c", _e(len(pair["only_b"]))),
        ("mcnemar_p", "-" if pair["mcnemar_p"] is None else _e(format_p(pair["mcnemar_p"]))),
        ("paired_bootstrap", _e(_boot_cell(pair))),
        ("excluded_infra", _e(len(pair["excluded_infra"]))),
    ]
    cells = [(k, "-" if v == "None" else v) for k, v in cells]  # repeated trials: no single-trial counts
    body = "".join(f'<td data-figure="{k}">{v}</td>' for k, v in cells)
    return f'<tr class="pair">{body}<td><a href="#{_e(anchor)}">disagreements</a></td></tr>'


def _disagreements(pair: Mapping[str, Any], anchor: str, row_href: RowHref | None, more: str) -> str:
    a, b = str(pair["a"]), str(pair["b"])

    def both_rows(iid: str) -> str:
        links = [_id_link(iid, m, row_href, label) for m, label in ((a, "A"), (b, "B"))] if row_href else []
        return _e(iid) + (f" <small>({' | '.join(links)})</small>" if links else "")

    parts = [f'<div class="disagreements" id="{_e(anchor)}"><h4>A = {_e(a)} vs B = {_e(b)}</h4>']
    trials = pair.get("mcnemar_p") is None
    for label, ids in (
        (
            f"{'A ahead (higher pass fraction)' if trials else 'resolved by A only'} (b = {len(pair['only_a'])})",
            pair["only_a"],
        ),
        (
            f"{'B ahead (higher pass fraction)' if trials else 'resolved by B only'} (c = {len(pair['only_b'])})",
            pair["only_b"],
        ),
        (f"left out, infrastructure error of A or B ({len(pair['excluded_infra'])})", pair["excluded_infra"]),
    ):
        if ids:
            parts.append(f'<p>{_e(label)}:</p><ul class="ids">{_capped(list(ids), LIST_CAP, both_rows, more)}</ul>')
    if len(parts) == 1:
        parts.append("<p>The two models agree on every instance both evaluated.</p>")
    return "".join(parts) + "</div>"


def comparison_section(
    report: Mapping[str, Any], *, anchor: str, row_href: RowHref | None = None, more: str = ""
) -> str:
    """The "Model comparison" section of :func:`pytest_mobilebench.compare.compare`'s result.

    Args:
        report: ``{"models": [str], "pairs": [{"a", "b", "instances", "resolved_a", "resolved_b",
            "both_resolved", "neither_resolved", "only_a", "only_b", "mcnemar_p", "excluded_infra"}]}``.
        anchor: this section's element id (unique on the page); pair blocks are ``<anchor>-<n>``.
        row_href: link of an instance row, or None.
        more: appended to "... and N more" (where the full lists are).

    Returns:
        ``<section class="comparison">`` with one overview row per pair (each figure cell carries
        ``data-figure``: ``b`` and ``c`` are the discordant counts) and, per pair, the disagreeing instances.
    """
    pairs = list(report.get("pairs") or [])
    head = (
        "<tr><th>A</th><th>B</th><th>both evaluated</th><th>resolved by A</th><th>resolved by B</th>"
        "<th>both</th><th>neither</th><th>b: A only</th><th>c: B only</th><th>exact McNemar p</th>"
        "<th>pass@1 A - B [95% CI]</th><th>left out (infra)</th><th></th></tr>"
    )
    rows = "".join(_pair_row(p, f"{anchor}-{n}") for n, p in enumerate(pairs))
    details = "".join(_disagreements(p, f"{anchor}-{n}", row_href, more) for n, p in enumerate(pairs))
    note = (
        "Resolved = the item's verdict is a pass. "
        "Paired, on the instances both models evaluated: an infrastructure error leaves the instance out "
        "of the pair, a missing prediction counts as unresolved. b and c are the discordant counts; the "
        "two-sided exact McNemar p = min(1, 2 * sum_{i<=min(b,c)} C(b+c, i) / 2^(b+c)). The last figure is "
        "the paired bootstrap of the difference of pass@1 (instances drawn once for both models, then each "
        "one's trials); with repeated trials it is the test, McNemar (single trials only) is '-', and b / c "
        "count the instances where A / B has the higher pass fraction."
    )
    return (
        f'<section class="comparison" id="{_e(anchor)}"><h3>Model comparison</h3>'
        f'<p class="note">{_e(note)}</p><table class="comparison"><thead>{head}</thead><tbody>{rows}</tbody>'
        f"</table>{details}</section>"
    )


# --------------------------------------------------------------------------------------------- audit


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _ul(items: Sequence[Any], render: Callable[[Any], str] = _e) -> str:
    return f'<ul class="ids">{_capped(list(items), CELL_CAP, render)}</ul>' if items else "-"


def _gold_cell(audit: Mapping[str, Any]) -> str:
    resolves = audit.get("gold_resolves")
    if not isinstance(resolves, bool):
        return "n/a"
    runs = f" ({_e(audit['runs'])} runs)" if isinstance(audit.get("runs"), int) else ""
    reasons = [r for r in _list(audit.get("gold_reasons")) if r != "resolved"]
    return (
        ("yes" + runs)
        if resolves
        else (
            f'<b class="finding">no</b>{runs}'
            + (f"<br><small>{_e(', '.join(map(str, reasons)))}</small>" if reasons else "")
        )
    )


def _flaky_cell(audit: Mapping[str, Any]) -> str:
    gold = {str(t) for t in _list(audit.get("flaky_gold_tests"))}
    flaky = [str(t) for t in _list(audit.get("flaky_tests"))] or sorted(gold)
    return _ul(flaky, lambda t: f'<b class="finding">{_e(t)}</b> (gold)' if t in gold else _e(t))


def _test_files_cell(audit: Mapping[str, Any]) -> str:
    if "test_patch_test_files" not in audit:
        return "n/a"
    files = _list(audit.get("test_patch_test_files"))
    return _ul(files) if files else '<b class="finding">none</b>'


def _hunk_text(hunk: Any) -> str:
    if not isinstance(hunk, Mapping):
        return _e(hunk)
    header = str(hunk.get("header", "")).split(" @@")[0] + " @@" if hunk.get("header") else ""
    return f"{_e(hunk.get('file', '?'))} <code>{_e(header)}</code>"


def _hunks_cell(audit: Mapping[str, Any]) -> str:
    if "hunks" not in audit:
        return "n/a"
    hunks = [h for h in _list(audit.get("hunks")) if isinstance(h, Mapping)]
    unnoticed = _list(audit.get("unnoticed_hunks")) or [h for h in hunks if h.get("noticed") is False]
    no_verdict = [h for h in hunks if "noticed" in h and h.get("noticed") is None]
    if not hunks:
        return "not measured" + (" (the gold does not resolve)" if audit.get("gold_resolves") is False else "")
    parts = [f"{len(hunks) - len(unnoticed) - len(no_verdict)} of {len(hunks)} noticed"]
    if unnoticed:
        parts.append(f'<b class="finding">no test notices</b>{_ul(unnoticed, _hunk_text)}')
    if no_verdict:
        parts.append(f"no verdict (the rest of the patch does not apply without it){_ul(no_verdict, _hunk_text)}")
    return "<br>".join(parts)


def _verifier_cell(audit: Mapping[str, Any]) -> str:
    """The verifier leak, the empty patch's verdict and the surviving mutants of ``audit["verifier"]``."""
    v = audit.get("verifier")
    if not isinstance(v, Mapping):
        return "not measured"
    leak = v.get("verifier_leak")
    head = (
        f"leak {float(leak):.3f} ({_e(v.get('survived'))}/{_e(v.get('judged'))} survive)"
        if isinstance(leak, (int, float))
        else "n/a"
    )
    empty = '<br><b class="finding">the empty patch resolves</b>' if v.get("empty_resolves") else ""
    alive = [m for m in _list(v.get("mutants")) if isinstance(m, Mapping) and m.get("resolves") is True]
    shown = _ul(
        alive,
        lambda m: (
            f"{_e(m.get('id'))} {_e(m.get('kind'))} {_e(m.get('file'))}"
            + (f":{_e(m.get('line'))} <code>{_e(str(m.get('after') or '').strip())}</code>" if m.get("line") else "")
        ),
    )
    return head + empty + (f'<br><b class="finding">survive</b>{shown}' if alive else "")


def _duplicates(table: Mapping[str, Any] | None) -> dict[str, list[str]]:
    groups = _list(table.get("duplicate_fixes")) if isinstance(table, Mapping) else []
    out: dict[str, list[str]] = {}
    for group in groups:
        ids = [str(i) for i in _list(group)]
        for iid in ids:
            out[iid] = [j for j in ids if j != iid]
    return out


_OVERVIEW = (
    ("instances", "instances audited"),
    ("trusted", "trusted (no finding)"),
    ("gold_not_resolving", "gold does not resolve"),
    ("flaky_gold_tests", "with flaky gold tests"),
    ("gold_ids_never_reported", "with gold ids never reported"),
    ("test_patch_without_test_file", "test patch touching no test file"),
    ("duplicate_fixes", "duplicate / backport groups"),
)


def _overview(table: Mapping[str, Any] | None) -> str:
    if not isinstance(table, Mapping):
        return ""
    cells = []
    for key, label in _OVERVIEW:
        value = table.get(key)
        if isinstance(value, (Mapping, list, tuple)):
            value = len(value)
        if value is not None:
            cells.append(f'<tr data-figure="{key}"><th>{_e(label)}</th><td>{_e(value)}</td></tr>')
    unnoticed = table.get("unnoticed_hunks")
    if isinstance(unnoticed, Mapping):
        count = sum(1 for hunks in unnoticed.values() if _list(hunks))
        cells.append(f'<tr data-figure="unnoticed_hunks"><th>with gold hunks no test notices</th><td>{count}</td></tr>')
    return f'<table class="audit-overview">{"".join(cells)}</table>' if cells else ""


def audit_section(
    results: Sequence[Mapping[str, Any]],
    table: Mapping[str, Any] | None,
    *,
    anchor: str,
    row_href: RowHref | None = None,
) -> str:
    """The "Instance audit" section: what ``--mb-audit`` found, per instance.

    Args:
        results: the suite's results; those with an ``audit`` mapping are shown (the per-instance report of
            :func:`pytest_mobilebench.suites.issue_resolution.audit.audit_instance`: ``gold_resolves``,
            ``runs``, ``gold_reasons``, ``flaky_tests``, ``flaky_gold_tests``, ``gold_ids_never_reported``,
            ``test_patch_test_files``, ``hunks`` [{``file``, ``header``, ``noticed``}], ``unnoticed_hunks``,
            ``findings``). Missing fields show ``n/a``.
        table: the run-level audit table (``suite_tables.<suite>.audit``: counts and ``duplicate_fixes``), or None.
        anchor: the section's element id.
        row_href: link of an instance row, or None.

    Returns:
        ``<section class="audit">``: an overview table and one row per audited instance, instances with a
        finding first.
    """
    audited = [r for r in results if isinstance(r.get("audit"), Mapping)]
    dups = _duplicates(table)
    ordered = sorted(audited, key=lambda r: (not _list(r["audit"].get("findings")), str(r.get("instance_id"))))
    rows = []
    for r in ordered:
        audit, iid = r["audit"], str(r.get("instance_id"))
        findings = [str(f) for f in _list(audit.get("findings"))]
        others = dups.get(iid, [])
        cells = [
            _id_link(iid, str(r.get("model_name_or_path")), row_href),
            _gold_cell(audit),
            _flaky_cell(audit),
            _ul([str(i) for i in _list(audit.get("gold_ids_never_reported"))]),
            _test_files_cell(audit),
            _ul(others) if others else "-",
            _hunks_cell(audit),
            _verifier_cell(audit),
            _ul(findings) if findings else "none",
        ]
        css = "fail" if findings else "pass"
        rows.append(f'<tr class="{css}" data-instance="{_e(iid)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = (
        "<tr><th>instance</th><th>gold resolves</th><th>flaky tests</th><th>gold ids never reported</th>"
        "<th>test files in the test patch</th><th>same fix as</th><th>gold hunks (test adequacy)</th>"
        "<th>verifier leak (mutants that still resolve)</th><th>findings</th></tr>"
    )
    note = (
        "The gold patch run repeatedly; flaky = state differs between identical runs; a gold hunk is noticed "
        "when, with that hunk removed from the gold patch, a FAIL_TO_PASS / NONE_TO_PASS test does not pass."
    )
    return (
        f'<section class="audit" id="{_e(anchor)}"><h3>Instance audit</h3><p class="note">{_e(note)}</p>'
        f'{_overview(table)}<table class="audit"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
        "</section>"
    )


def _ci(block: Mapping[str, Any]) -> str:
    lo, hi = block.get("ci95") or (None, None)
    value = block.get("value")
    shown = "n/a" if value is None else f"{float(value):.3f}"
    return shown if lo is None or value is None else f"{shown} [95% CI {float(lo):.3f}, {float(hi):.3f}]"


def _flip(f: Mapping[str, Any]) -> str:
    if isinstance(f.get("verdicts"), Mapping):
        return f"{_e(f['instance_id'])}: " + ", ".join(f"{_e(t)} {_e(r)}" for t, r in sorted(f["verdicts"].items()))
    return f"{_e(f['instance_id'])}: {_e(f.get('passes'))}/{_e(f.get('trials'))} passed"


def _pass_1(own: Mapping[str, Any]) -> str:
    wilson = own["pass_1"].get("wilson95")
    beside = "" if not wilson else f"; Wilson {float(wilson[0]):.3f}, {float(wilson[1]):.3f} over pooled trials"
    variance = own.get("variance") or {}
    shares = (
        ""
        if variance.get("share_tasks") is None
        else f"<br>variance between instances {100 * float(variance['share_tasks']):.0f}%, between trials "
        f"{100 * float(variance['share_trials']):.0f}%"
    )
    return (
        f"{_e(own['tasks'])} instances x {_e(own['trials'])} trials; pass@1 {_ci(own['pass_1'])} "
        f"(hierarchical bootstrap{_e(beside)}){shares}"
    )


def trials_section(trials: Mapping[str, Any] | None) -> str:
    """The "Trials" section (``--mb-trials``) of a suite's ``{model: trial table}`` (:mod:`pytest_mobilebench.report.
    trials`): per model pass@1 (hierarchical bootstrap and Wilson intervals, the variance shares), pass@k and
    pass^k for each k, the flips with each trial's verdict (or pass count); "" without."""
    if not isinstance(trials, Mapping) or not trials:
        return ""
    rows = []
    for model, own in sorted(trials.items()):
        if not own.get("tasks"):
            rows.append(
                f'<tr><td>{_e(model)}</td><td colspan="3">no eligible trial ({_e(own.get("infra_trials"))} '
                "infra)</td></tr>"
            )
            continue
        ats = [f"pass@{_e(k)} {_ci(v)}" for k, v in (own.get("pass_at_k") or {}).items()]
        hats = "<br>".join(ats + [f"pass^{_e(k)} {_ci(v)}" for k, v in own["pass_hat_k"].items()])
        flips = _capped(own.get("flips") or [], LIST_CAP, _flip)
        rows.append(
            f'<tr><td>{_e(model)}</td><td>{_pass_1(own)}</td><td>{hats}</td><td><ul class="ids">{flips}</ul></td></tr>'
        )
    return (
        '<section class="trials"><h3>Trials</h3><table class="trials"><thead><tr><th>model</th><th>pass@1</th>'
        f"<th>pass@k, pass^k</th><th>flips</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )
