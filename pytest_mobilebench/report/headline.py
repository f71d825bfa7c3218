"""Honest per-suite headlines: what was selected, what was evaluated, what passed, and what was not the model.

Pure: results (plain dicts) and counts in, plain dicts out. One block per suite, the shape written to
``summary.json`` under ``headlines``, printed by :mod:`.terminal` and shown by :mod:`.page` and pytest-html::

    {
      "selected": int,            # items collected for the suite after -k / -m, invalid instances included
      "invalid": int,             # manifest entries that failed validation: selected, never evaluated
      "evaluated": int,           # items with a result (missing predictions included)
      "missing_predictions": int, # results with reason "missing_prediction" (count as failures)
      "infra_errors": int,        # infrastructure results (retryable): not the model's failure
      "environment_unavailable": int, # instances whose dependencies this machine cannot fetch: neither the
                                  # model's failure nor infra (not retried); left out of eligible
      "by_infra_kind": {kind: int}, # those results by ``infra_kind`` (daemon_unreachable: no host could run them)
      "cached": int,              # results reused from the result cache
      "not_run": int,             # selected - invalid - evaluated (interrupted, crashed, skipped)
      "passed": int,              # results with passed == True
      "eligible": int,            # evaluated - infra_errors - environment_unavailable
      "over_eligible": Rate,      # passed / eligible: the model's rate, infrastructure set apart
      "over_all": Rate,           # passed / selected: every invalid, infra and not-run item counted as a failure
      "headline": {...},          # the suite's own figure (its summarize()["headline"]), or with no table to
                                  # read its declared one (see below); "label", "numerator", "denominator",
                                  # "value", "ci95", "note", "source" ("suite", "generic" or "declared"),
                                  # "secondary": the rate-shaped entries of the suite's headline (apps built);
                                  # "aside": a short text the suite shows on the headline line ("" if none);
                                  # "kind": "rate" (value = numerator / denominator, Wilson interval) or
                                  # "score" (a weighted figure such as the planner's Overall: no interval);
                                  # "unavailable": why a figure has no value ("" when it has one or is a rate)
      "by_reason": {reason: int},
      "models": {model: block},   # the same block (without "models") for each model's items alone, each
                                  # with the suite's own figure computed over that model's results
      "pooled": bool,             # True when the block pools several models (then read "models" first)
    }

``Rate`` is ``{"numerator", "denominator", "value", "ci95"}``; ``value`` is None over an empty denominator
and ``ci95`` the Wilson 95% score interval (:func:`pytest_mobilebench.metrics.wilson_interval`, which gives
``[0, 1]`` for no trials). The two rates bracket the truth: ``over_eligible`` is what the model did where the
harness worked; ``over_all`` is the floor if every item the harness could not judge had failed.

The headline's label and kind are declared once per suite (:class:`pytest_mobilebench.suites.base.Headline`,
on its surface in ``suites/declared/``); the suite's ``summarize()`` labels its table with them and this module
uses them when there is no table to read (a suite or a model with no result, or a ``summarize()`` that
failed), so a figure keeps its one label and format whatever the selection:

* no result: ``0/0`` (a rate, ``value`` None, interval ``[0, 1]``) or a score ``n/a (no result)``;
* results but no table: a figure over items (``Headline.over_items``: resolution rate, Pass@1) is computed
  from the results (``source`` "generic"); any other (NavPassRate, Overall) has no value and says why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.states import INFRA_REASONS, UNAVAILABLE_REASONS
from pytest_mobilebench.suites import builtin_surface
from pytest_mobilebench.suites.base import GENERIC_HEADLINE, NO_RESULT, Headline

__all__ = [
    "declared_headline", "figure_kind", "headlines", "is_infra", "is_unavailable", "rate_block", "suite_headline",
]  # fmt: skip

_INFRA_VALUES = frozenset(r.value for r in INFRA_REASONS)
_UNAVAILABLE_VALUES = frozenset(r.value for r in UNAVAILABLE_REASONS)


def declared_headline(suite: str, declared: Mapping[str, Headline] | None = None) -> Headline:
    """Suite ``suite``'s declared headline: from ``declared`` (the run's registry,
    :meth:`~pytest_mobilebench.suites.SuiteRegistry.headlines`), else a built-in suite's surface, else
    :data:`~pytest_mobilebench.suites.base.GENERIC_HEADLINE`."""
    if declared is not None and isinstance(declared.get(suite), Headline):
        return declared[suite]
    surface = builtin_surface(suite)
    return surface.headline if surface is not None else GENERIC_HEADLINE


def is_infra(result: Mapping[str, Any]) -> bool:
    """True for an infrastructure outcome: ``retryable`` (the suite contract) or an infra reason."""
    return result.get("retryable") is True or str(result.get("reason")) in _INFRA_VALUES


def is_unavailable(result: Mapping[str, Any]) -> bool:
    """True for an instance this machine cannot set up (``environment_unavailable``): neither the model's
    failure nor infrastructure; left out of ``eligible`` and counted apart."""
    return not is_infra(result) and str(result.get("reason")) in _UNAVAILABLE_VALUES


def rate_block(numerator: int, denominator: int) -> dict[str, Any]:
    """``{"numerator", "denominator", "value", "ci95"}`` of ``numerator / denominator`` with Wilson 95%.

    ``value`` is None when ``denominator == 0`` (no evidence, shown as "n/a" rather than 0.0).

    Raises:
        ValueError: on negative counts or ``numerator > denominator`` (from the Wilson interval).
    """
    lo, hi = wilson_interval(numerator, denominator)
    value = round(numerator / denominator, 6) if denominator else None
    return {"numerator": numerator, "denominator": denominator, "value": value, "ci95": [round(lo, 6), round(hi, 6)]}


def is_ratio(block: Mapping[str, Any]) -> bool:
    """Whether a headline's ``value`` is its ``numerator / denominator`` (to 3 decimals), or has no value;
    False for a weighted score such as the planner's Overall, whose interval is not Wilson's."""
    num, den, value = block.get("numerator"), block.get("denominator"), block.get("value")
    if value is None or not isinstance(num, int) or not isinstance(den, int) or den <= 0:
        return True
    return abs(float(value) - num / den) < 5e-4


def figure_kind(block: Mapping[str, Any]) -> str:
    """``"score"`` for a weighted figure (the suite says ``"kind": "score"``, or its value is not
    numerator / denominator), else ``"rate"``. Decided by the suite, not by the value: the planner's Overall
    stays a score on a subset where it has no value, so its headline keeps one format."""
    return "score" if block.get("kind") == "score" or not is_ratio(block) else "rate"


def _suite_figure(
    table: Mapping[str, Any] | None, over_eligible: dict[str, Any], evaluated: int, declared: Headline
) -> dict[str, Any]:
    """The suite's own ``headline`` when its table has a well-formed one, else the declared figure (module
    docstring)."""
    own = (table or {}).get("headline") if isinstance(table, Mapping) else None
    if isinstance(own, Mapping) and isinstance(own.get("label"), str):
        num, den = own.get("numerator"), own.get("denominator")
        kind = "score" if declared.kind == "score" else figure_kind(own)
        ci = own.get("ci95") if kind == "rate" else None  # a weighted score gets no Wilson interval
        if ci is None and kind == "rate" and isinstance(num, int) and isinstance(den, int) and 0 <= num <= den:
            ci = rate_block(num, den)["ci95"]
        secondary = [
            dict(v) for v in own.values() if isinstance(v, Mapping) and {"label", "numerator", "denominator"} <= set(v)
        ]
        return {
            "label": own["label"],
            "numerator": num,
            "denominator": den,
            "value": own.get("value"),
            "ci95": ci,
            "note": str(own.get("note", "")),
            "source": "suite",
            "secondary": secondary,
            "kind": kind,
            "unavailable": str(own.get("unavailable", "")),
            "aside": str(own.get("aside", "")),
        }
    return _declared_figure(declared, over_eligible, evaluated, table)


def _declared_figure(
    declared: Headline, over_eligible: dict[str, Any], evaluated: int, table: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The figure of a suite (or model) whose table has no headline, under the suite's declared label and kind."""
    base = {"label": declared.label, "secondary": [], "kind": declared.kind}
    if declared.over_items:  # the figure is items passed / eligible: the results alone give it
        return {
            **base,
            **over_eligible,
            "note": "passed / eligible (evaluated minus infrastructure errors)",
            "source": "generic",
            "unavailable": "",
        }
    if not evaluated:
        why = NO_RESULT
        counts = {
            "numerator": 0,
            "denominator": 0,
            "value": None,
            "ci95": None if declared.kind == "score" else rate_block(0, 0)["ci95"],
        }
    else:
        error = table.get("error") if isinstance(table, Mapping) else None
        why = f"the suite's summary failed: {error}" if error else "the suite's summary gave no headline"
        counts = {"numerator": None, "denominator": None, "value": None, "ci95": None}
    return {**base, **counts, "note": why, "source": "declared", "unavailable": why}


def suite_headline(
    suite: str,
    results: Sequence[Mapping[str, Any]],
    *,
    selected: int | None = None,
    invalid: int = 0,
    table: Mapping[str, Any] | None = None,
    declared: Headline | None = None,
) -> dict[str, Any]:
    """The headline block of one suite (shape in the module docstring).

    Args:
        suite: the suite name.
        results: that suite's results.
        selected: items collected for the suite; None when unknown (then ``invalid + evaluated``).
        invalid: invalid manifest entries of the suite.
        table: the suite's ``summarize()`` output, whose ``headline`` is used when present.
        declared: the suite's declared headline (None: :func:`declared_headline` of ``suite``).
    """
    evaluated = len(results)
    infra = sum(1 for r in results if is_infra(r))
    unavailable = sum(1 for r in results if is_unavailable(r))
    passed = sum(1 for r in results if r.get("passed") is True and not is_infra(r))
    reasons = Counter(str(r.get("reason")) for r in results)
    chosen = max(selected if selected is not None else 0, invalid + evaluated)
    eligible = evaluated - infra - unavailable
    over_eligible = rate_block(passed, eligible)
    return {
        "selected": chosen,
        "invalid": invalid,
        "evaluated": evaluated,
        "missing_predictions": reasons.get("missing_prediction", 0),
        "infra_errors": infra,
        "environment_unavailable": unavailable,
        "cached": sum(1 for r in results if r.get("cached")),
        "not_run": chosen - invalid - evaluated,
        "passed": passed,
        "eligible": eligible,
        "over_eligible": over_eligible,
        "over_all": rate_block(passed, chosen),
        "headline": _suite_figure(table, over_eligible, evaluated, declared or declared_headline(suite)),
        "by_reason": dict(sorted(reasons.items())),
        "by_infra_kind": dict(
            sorted(Counter(str(r.get("infra_kind") or "unnamed") for r in results if is_infra(r)).items())
        ),
    }


def _model_of(result: Mapping[str, Any]) -> str:
    return str(result.get("model_name_or_path"))


def model_blocks(
    suite: str,
    results: Sequence[Mapping[str, Any]],
    *,
    selected: Mapping[str, int] | None = None,
    invalid: int = 0,
    tables: Mapping[str, Any] | None = None,
    declared: Headline | None = None,
) -> dict[str, dict[str, Any]]:
    """``{model: block}`` of one suite: each model's results alone (an invalid instance is selected for, and
    counts against, every model); ``selected`` counts each model's items without the invalid ones; ``tables``
    holds the suite's ``summarize()`` of each model's results (its own figure per model; a model without
    results has none, and gets the ``declared`` figure)."""
    selected = selected or {}
    models = sorted({_model_of(r) for r in results} | set(selected))
    return {
        model: suite_headline(
            suite,
            [r for r in results if _model_of(r) == model],
            selected=selected[model] + invalid if model in selected else None,
            invalid=invalid,
            table=(tables or {}).get(model),
            declared=declared,
        )
        for model in models
    }


def headlines(
    results: Sequence[Mapping[str, Any]],
    *,
    selected: Mapping[str, int] | None = None,
    invalid: Mapping[str, int] | None = None,
    tables: Mapping[str, Any] | None = None,
    selected_by_model: Mapping[str, Mapping[str, int]] | None = None,
    model_tables: Mapping[str, Mapping[str, Any]] | None = None,
    declared: Mapping[str, Headline] | None = None,
) -> dict[str, dict[str, Any]]:
    """``{suite: block}`` for every suite that has a result, a selected item or an invalid instance.

    Args:
        declared: ``{suite: its declared headline}`` (the run's registry); a suite not in it gets
            :func:`declared_headline`'s.
        selected_by_model: ``{suite: {model: items selected}}`` (invalid instances not included).
        model_tables: ``{suite: {model: summarize() of that model's results}}``.
    """
    selected = selected or {}
    invalid = invalid or {}
    names = sorted({str(r.get("suite")) for r in results} | set(selected) | set(invalid))
    out = {}
    for name in names:
        rows = [r for r in results if str(r.get("suite")) == name]
        head = declared_headline(name, declared)
        block = suite_headline(
            name,
            rows,
            selected=selected.get(name),
            invalid=invalid.get(name, 0),
            table=(tables or {}).get(name),
            declared=head,
        )
        block["models"] = model_blocks(
            name,
            rows,
            selected=(selected_by_model or {}).get(name),
            invalid=invalid.get(name, 0),
            tables=(model_tables or {}).get(name),
            declared=head,
        )
        block["pooled"] = len(block["models"]) > 1
        out[name] = block
    return out
