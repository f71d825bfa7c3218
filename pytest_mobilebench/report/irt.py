"""Difficulty and ability (issue 34; docs/statistics.md): the item-response fit of
:func:`pytest_mobilebench.stats.irt.irt_from_outcomes` in a run's summary, as text and on a page.

* :func:`irt_table`: a suite's results with three or more models -> ``{"models", "instances", "left_out",
  "none_solved", "all_solved", "one_pl", "two_pl"}`` (the suite table's ``irt``), ``{"error": why}`` when it
  cannot be fitted (no shared instance, scipy missing), None with fewer than three models;
* :func:`irt_text`: the lines ``python -m pytest_mobilebench compare --irt`` prints;
* :func:`irt_section`: the "Difficulty and ability" section of the run page and of ``compare --html``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LIST_CAP", "irt_section", "irt_table", "irt_text"]

#: instances listed per flag / per end of the difficulty scale (the JSON holds them all)
LIST_CAP = 10


def irt_table(results: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The fit over one suite's results (trials kept apart, infrastructure dropped), or None under three models."""
    from pytest_mobilebench.compare import outcomes_of
    from pytest_mobilebench.stats.irt import IrtError, IrtUnavailable, irt_from_outcomes

    outcomes = outcomes_of(results)
    if len(outcomes) < 3:
        return None
    try:
        return irt_from_outcomes(outcomes)
    except (IrtError, IrtUnavailable) as exc:
        return {"error": str(exc)}


def _ci(block: Mapping[str, Any]) -> str:
    lo, hi = block["ci95"]
    return f"{block['estimate']:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def _ranked(fit: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return sorted(fit["instances"].items(), key=lambda kv: (-kv[1]["difficulty"]["estimate"], kv[0]))


def irt_text(irt: Mapping[str, Any]) -> str:
    """Abilities per model (1PL and 2PL, with 95% intervals), the hardest and easiest instances, the flags."""
    if "error" in irt:
        return f"item-response fit: {irt['error']}\n"
    one, two = irt["one_pl"], irt["two_pl"]
    lines = [
        f"item-response fit over {irt['instances']} instance(s) all {len(irt['models'])} models evaluated "
        f"({irt['left_out']} left out); {one['method']}",
        f"  {'model':30} {'ability 1PL [95% CI]':>24} {'ability 2PL [95% CI]':>24}",
    ]
    for model in sorted(irt["models"], key=lambda m: -one["abilities"][m]["estimate"]):
        lines.append(f"  {model[:30]:30} {_ci(one['abilities'][model]):>24} {_ci(two['abilities'][model]):>24}")
    ranked = _ranked(two)
    for label, part in (("hardest", ranked[:LIST_CAP]), ("easiest", ranked[::-1][:LIST_CAP])):
        lines.append(f"  {label} (2PL difficulty, discrimination):")
        lines += [
            f"    {iid}: b {_ci(own['difficulty'])}, a {own['discrimination']['estimate']:.2f}" for iid, own in part
        ]
    for key, label in (("none_solved", "no model solves"), ("all_solved", "every model solves")):
        ids = irt[key]
        more = f" (+{len(ids) - LIST_CAP} more)" if len(ids) > LIST_CAP else ""
        lines.append(f"  {label}: {len(ids)}" + (f": {', '.join(ids[:LIST_CAP])}{more}" if ids else ""))
    if not (one["converged"] and two["converged"]):
        lines.append("  warning: the optimiser did not converge (see 'converged' in the JSON)")
    return "\n".join(lines) + "\n"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def irt_section(irt: Mapping[str, Any] | None) -> str:
    """``<section class="irt">``: abilities, the instances by difficulty (capped), the flags; "" without a fit."""
    if not isinstance(irt, Mapping):
        return ""
    if "error" in irt:
        return f'<section class="irt"><h3>Difficulty and ability</h3><p>{_e(irt["error"])}</p></section>'
    one, two = irt["one_pl"], irt["two_pl"]
    models = "".join(
        f"<tr><td>{_e(m)}</td><td>{_e(_ci(one['abilities'][m]))}</td><td>{_e(_ci(two['abilities'][m]))}</td></tr>"
        for m in sorted(irt["models"], key=lambda m: -one["abilities"][m]["estimate"])
    )
    ranked = _ranked(two)
    shown = ranked if len(ranked) <= 2 * LIST_CAP else ranked[:LIST_CAP] + ranked[-LIST_CAP:]
    items = "".join(
        f"<tr><td>{_e(iid)}</td><td>{_e(_ci(own['difficulty']))}</td><td>"
        f"{_e(_ci(one['instances'][iid]['difficulty']))}</td><td>{own['discrimination']['estimate']:.2f} "
        f"[{own['discrimination']['ci95'][0]:.2f}, {own['discrimination']['ci95'][1]:.2f}]</td></tr>"
        for iid, own in shown
    )
    flags = "".join(
        f"<p>{_e(label)} ({len(irt[key])}): {_e(', '.join(irt[key][:LIST_CAP]) or '-')}"
        f"{_e(' ...' if len(irt[key]) > LIST_CAP else '')}</p>"
        for key, label in (("none_solved", "no model solves"), ("all_solved", "every model solves"))
    )
    note = (
        f"{irt['instances']} instance(s) every model evaluated ({irt['left_out']} left out). {one['method']}; "
        "2PL adds a discrimination per instance. Intervals: estimate +- 1.96 / sqrt(information). "
        f"Instances by 2PL difficulty, hardest first{' (the 10 hardest and easiest)' if shown is not ranked else ''}."
    )
    return (
        '<section class="irt"><h3>Difficulty and ability</h3>'
        f'<p class="note">{_e(note)}</p><table class="irt"><thead><tr><th>model</th><th>ability, 1PL [95% CI]</th>'
        f"<th>ability, 2PL [95% CI]</th></tr></thead><tbody>{models}</tbody></table>"
        '<table class="irt"><thead><tr><th>instance</th><th>difficulty, 2PL</th><th>difficulty, 1PL</th>'
        f"<th>discrimination, 2PL</th></tr></thead><tbody>{items}</tbody></table>{flags}</section>"
    )
