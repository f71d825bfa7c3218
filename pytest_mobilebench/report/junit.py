"""The run's headlines as junit ``<testsuite>`` properties, per model first, then pooled.

Pure :func:`junit_properties` maps a summary (:mod:`.summary`) to ``(name, value)`` pairs;
:func:`add_junit_properties` hands them to pytest's junitxml plugin (when ``--junitxml`` is active) before it
writes the file. Names::

    mobilebench.<suite>.<model>.headline    "resolution rate 2/3 = 0.667 [95% CI 0.208, 0.939]"
    mobilebench.<suite>.<model>.numerator / .denominator / .value / .ci95_low / .ci95_high
    mobilebench.<suite>.<model>.selected / .evaluated / .infra_errors / .not_run
    mobilebench.<suite>.pooled.<same>       only with several models
    mobilebench.<suite>.<model>.trials.*    with trials: pass_1 (+ ci95 / wilson95 bounds), pass_at_<k>,
                                            pass_hat_<k>, variance_share_instances, flips, infra_trials

Model names are written as they are (XML-escaped by junitxml); a name's control characters are shown as
``\\xNN`` (:func:`~.terminal.printable`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from pytest_mobilebench.report.terminal import figure_text, printable
from pytest_mobilebench.report.trials import suite_trials

__all__ = ["add_junit_properties", "junit_properties"]

_COUNTS = ("selected", "evaluated", "infra_errors", "not_run")


def _block_properties(prefix: str, block: Mapping[str, Any]) -> list[tuple[str, str]]:
    own = block["headline"]
    ci = own.get("ci95") or [None, None]
    pairs = [
        ("headline", figure_text(block)),
        ("numerator", own.get("numerator")),
        ("denominator", own.get("denominator")),
        ("value", own.get("value")),
        ("ci95_low", ci[0]),
        ("ci95_high", ci[1]),
    ]
    pairs += [(name, block[name]) for name in _COUNTS]
    return [(f"{prefix}.{name}", "" if value is None else str(value)) for name, value in pairs]


def junit_properties(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``[(name, value)]``: every suite's headline per model, then the pooled one when several models ran; then
    each model's static-audit counts (``mobilebench.integrity.<model>.<count>``) when its results were audited."""
    out = []
    for suite, block in summary.get("headlines", {}).items():
        models = block.get("models") or {}
        for model, own in models.items():
            out += _block_properties(f"mobilebench.{suite}.{printable(model)}", own)
        if len(models) > 1:
            out += _block_properties(f"mobilebench.{suite}.pooled", block)
        for model, trials in sorted(suite_trials(summary).get(suite, {}).items()):
            out += _trial_properties(f"mobilebench.{suite}.{printable(model)}.trials", trials)
    for model, row in sorted((summary.get("by_model") or {}).items()):  # the static audit (report.integrity)
        audited = row.get("integrity") if isinstance(row, Mapping) else None
        if isinstance(audited, Mapping):
            out += [(f"mobilebench.integrity.{printable(model)}.{k}", str(v)) for k, v in audited.items()]
    return out


def _trial_properties(prefix: str, trials: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A model's repeated-trial figures (``--mb-trials``): pass@1 with its hierarchical bootstrap and Wilson
    intervals, pass@k and pass^k per k, the variance share between instances, the flips."""
    if not trials.get("tasks"):
        return [(f"{prefix}.infra_trials", str(trials.get("infra_trials", 0)))]
    ci = trials["pass_1"]["ci95"]
    pairs = [
        ("trials", trials["trials"]),
        ("pass_1", trials["pass_1"]["value"]),
        ("pass_1_ci95_low", ci[0]),
        ("pass_1_ci95_high", ci[1]),
        *(zip(("pass_1_wilson95_low", "pass_1_wilson95_high"), trials["pass_1"].get("wilson95") or ())),
        *((f"pass_at_{k}", v["value"]) for k, v in (trials.get("pass_at_k") or {}).items()),
        *((f"pass_hat_{k}", v["value"]) for k, v in trials["pass_hat_k"].items()),
        ("variance_share_instances", (trials.get("variance") or {}).get("share_tasks")),
        ("flips", ",".join(printable(f["instance_id"]) for f in trials["flips"])),
        ("infra_trials", trials.get("infra_trials", 0)),
    ]
    return [(f"{prefix}.{name}", str(value)) for name, value in pairs]


def add_junit_properties(config: pytest.Config, summary: Mapping[str, Any]) -> None:
    """Add :func:`junit_properties` to the ``<testsuite>`` of ``--junitxml`` (nothing without it). Must run
    before junitxml's own ``pytest_sessionfinish`` writes the file."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is not None:
        for name, value in junit_properties(summary):
            xml.add_global_property(name, value)
