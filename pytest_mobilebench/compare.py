"""Paired comparison of models from run summaries (``python -m pytest_mobilebench compare SUMMARY...``).

For every pair of models found in the summaries, on the instances both evaluated: resolved counts, the
discordant counts (resolved by one model only), the two-sided exact McNemar p-value
(:func:`pytest_mobilebench.metrics.mcnemar_exact`) and the instances where the two disagree.

"Evaluated" means a result exists and its reason is not an infrastructure reason (``infra_error``): an
infrastructure failure says nothing about the model, so such instances are left out of the pair and
listed under ``excluded_infra``. A missing prediction is an evaluation (unresolved), as in the summary.

Where it appears: printed by the command (``--json OUT`` for the table, ``--html OUT`` for a self-contained
page), in a run's ``summary.json`` (the issue-resolution table's ``model_comparison``) and on the run page
(``reports/<run_id>/index.html``, "Model comparison" in each suite with two or more models). All of them are
:func:`compare` over :func:`load_outcomes` (summary files) or :func:`compare_results` (one run's results).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_mobilebench.metrics import mcnemar_exact
from pytest_mobilebench.states import INFRA_REASONS

__all__ = ["CompareError", "compare", "compare_pair", "compare_results", "load_outcomes", "render_text"]

_INFRA = frozenset(r.value for r in INFRA_REASONS)


class CompareError(ValueError):
    """A summary file is unusable or two summaries disagree; the message names the file(s)."""


def load_outcomes(paths: Iterable[Path]) -> dict[str, dict[str, bool | None]]:
    """``{model: {instance_id: resolved}}`` from summary files; ``None`` marks an infrastructure result.

    Raises:
        CompareError: unreadable or non-summary JSON, an entry without instance id / model, or the same
            (instance, model) with different outcomes in two files.
    """
    outcomes: dict[str, dict[str, bool | None]] = {}
    seen_in: dict[tuple[str, str], str] = {}
    for path in paths:
        for key, entry in _instances(path).items():
            iid, model = entry.get("instance_id"), entry.get("model_name_or_path")
            if not isinstance(iid, str) or not isinstance(model, str):
                raise CompareError(f"{path}: instance {key!r}: missing 'instance_id' or 'model_name_or_path'")
            value = _outcome(entry)
            previous = outcomes.setdefault(model, {}).get(iid, value)
            if (iid, model) in seen_in and previous != value:
                raise CompareError(
                    f"{path}: instance {iid!r} of model {model!r} is {value} here and {previous} in {seen_in[(iid, model)]}"
                )
            outcomes[model][iid] = value
            seen_in[(iid, model)] = str(path)
    return outcomes


def _outcome(result: Mapping[str, Any]) -> bool | None:
    """Resolved or not; None for an infrastructure result (it says nothing about the model)."""
    return None if result.get("reason") in _INFRA or result.get("retryable") else bool(result.get("passed"))


def compare_results(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`compare` of one run's results (pure): the summary's ``model_comparison`` and the run page's section.

    ``results`` are result dicts with ``instance_id``, ``model_name_or_path``, ``passed``, ``reason`` and
    ``retryable``; a later result of the same (model, instance) replaces an earlier one.
    """
    outcomes: dict[str, dict[str, bool | None]] = {}
    for r in results:
        outcomes.setdefault(str(r.get("model_name_or_path")), {})[str(r.get("instance_id"))] = _outcome(r)
    return compare(outcomes)


def _instances(path: Path) -> Mapping[str, Mapping[str, Any]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareError(f"{path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise CompareError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    instances = doc.get("instances") if isinstance(doc, Mapping) else None
    if not isinstance(instances, Mapping):
        raise CompareError(f"{path}: not a run summary (no 'instances' object)")
    return instances


def compare_pair(a: Mapping[str, bool | None], b: Mapping[str, bool | None]) -> dict[str, Any]:
    """One pair's table (pure): see the module docstring for the fields' meaning."""
    common = sorted(set(a) & set(b))
    excluded = [i for i in common if a[i] is None or b[i] is None]
    both = [i for i in common if a[i] is not None and b[i] is not None]
    only_a = [i for i in both if a[i] and not b[i]]
    only_b = [i for i in both if b[i] and not a[i]]
    return {
        "instances": len(both),
        "resolved_a": sum(1 for i in both if a[i]),
        "resolved_b": sum(1 for i in both if b[i]),
        "both_resolved": sum(1 for i in both if a[i] and b[i]),
        "neither_resolved": sum(1 for i in both if not a[i] and not b[i]),
        "only_a": only_a,
        "only_b": only_b,
        "mcnemar_p": mcnemar_exact(len(only_a), len(only_b)),
        "excluded_infra": excluded,
    }


def compare(outcomes: Mapping[str, Mapping[str, bool | None]]) -> dict[str, Any]:
    """Every pair of models (sorted by name): ``{"models": [...], "pairs": [{"a", "b", ...}]}``."""
    models = sorted(outcomes)
    pairs = [{"a": a, "b": b, **compare_pair(outcomes[a], outcomes[b])} for a, b in itertools.combinations(models, 2)]
    return {"models": models, "pairs": pairs}


def render_text(report: Mapping[str, Any]) -> str:
    """A plain-text table of :func:`compare`'s result, one block per pair."""
    lines: list[str] = []
    if not report["pairs"]:
        return f"fewer than two models in the summaries ({', '.join(report['models']) or 'none'}): nothing to compare\n"
    for pair in report["pairs"]:
        lines.append(f"{pair['a']}  vs  {pair['b']}   ({pair['instances']} instances both evaluated)")
        lines.append(f"  resolved: {pair['resolved_a']} vs {pair['resolved_b']}; both {pair['both_resolved']}, "
                     f"neither {pair['neither_resolved']}")
        lines.append(f"  only {pair['a']}: {len(pair['only_a'])}; only {pair['b']}: {len(pair['only_b'])}; "
                     f"exact McNemar p = {pair['mcnemar_p']:.6g}")
        for iid in pair["only_a"]:
            lines.append(f"    + {pair['a']}: {iid}")
        for iid in pair["only_b"]:
            lines.append(f"    + {pair['b']}: {iid}")
        if pair["excluded_infra"]:
            lines.append(f"  left out (infrastructure error): {', '.join(pair['excluded_infra'])}")
    return "\n".join(lines) + "\n"
