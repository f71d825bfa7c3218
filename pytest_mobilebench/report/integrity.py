"""The static integrity audit on the run page and in the summary (:mod:`pytest_mobilebench.integrity`).

Each issue-resolution or device-repair result whose candidate diff was audited carries ``integrity_findings``
(``[{"file", "line", "kind", "what", "snippet"}]``). :func:`integrity_counts` gives a set of results'
totals (the summary's per-model and pooled ``integrity``); :func:`integrity_section` renders the per-model
table and each flagged item's findings (pure; HTML-escaped).
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_mobilebench.integrity import KINDS

__all__ = ["integrity_counts", "integrity_section"]


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def integrity_counts(results: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``{"items": audited items, "items_flagged": items with a finding, "findings": total, <kind>: count ...}``,
    or None when no result was audited."""
    audited = [r for r in results if isinstance(r.get("integrity_findings"), list)]
    if not audited:
        return None
    kinds = Counter(str(f.get("kind")) for r in audited for f in r["integrity_findings"])
    return {
        "items": len(audited),
        "items_flagged": sum(1 for r in audited if r["integrity_findings"]),
        "findings": sum(kinds.values()),
        **{k: kinds.get(k, 0) for k in KINDS},
    }


def _findings(result: Mapping[str, Any], row_href: Callable[[str, str], str] | None) -> str:
    iid, model = str(result.get("instance_id")), str(result.get("model_name_or_path"))
    name = f'<a href="{_e(row_href(iid, model))}">{_e(iid)}</a>' if row_href else _e(iid)
    items = "".join(f'<li data-kind="{_e(f.get("kind"))}">{_e(f.get("file"))}:{_e(f.get("line"))} '
                    f"<b>{_e(f.get('kind'))}</b> ({_e(f.get('what'))})<pre>{_e(f.get('snippet'))}</pre></li>"
                    for f in result["integrity_findings"])  # fmt: skip
    return f'<li data-model="{_e(model)}">{name} ({_e(model)}, {_e(result.get("reason"))})<ul>{items}</ul></li>'


def integrity_section(
    results: Sequence[Mapping[str, Any]], *, row_href: Callable[[str, str], str] | None = None
) -> str:
    """The per-model table and the flagged items' findings; ``""`` when no result was audited."""
    models = sorted({str(r.get("model_name_or_path")) for r in results})
    totals = {m: integrity_counts([r for r in results if str(r.get("model_name_or_path")) == m]) for m in models}
    totals = {m: t for m, t in totals.items() if t is not None}
    if not totals:
        return ""
    keys = ("items", "items_flagged", "findings", *KINDS)
    head = "".join(f"<th>{_e(k.replace('_', ' '))}</th>" for k in ("model", *keys))
    rows = "".join(f'<tr data-model="{_e(m)}"><td>{_e(m)}</td>'
                   + "".join(f'<td data-figure="{_e(k)}">{_e(t[k])}</td>' for k in keys) + "</tr>"
                   for m, t in totals.items())  # fmt: skip
    flagged = [r for r in results if r.get("integrity_findings")]
    listed = (
        f'<ul class="integrity-findings">{"".join(_findings(r, row_href) for r in flagged)}</ul>' if flagged else ""
    )
    return (
        '<h4>Static integrity audit</h4><p class="note">References from production files of the candidate diff '
        "to the test runner, its markers, the stack or the process (--mb-integrity=strict makes each a "
        f'policy_violation).</p><table class="static-integrity"><thead><tr>{head}</tr></thead><tbody>{rows}'
        f"</tbody></table>{listed}"
    )
