"""The run summary (``--mb-summary``, default ``reports/summary.json``), computed purely from results.

Shape (all plain JSON)::

    {
      "run_id": str, "suites": [str], "models": [str],
      "headlines": {suite: block},  # the honest per-suite figures, see pytest_mobilebench.report.headline
      "selected": int,              # items collected after -k / -m, invalid instances included (all suites)
      "invalid_instances": int,     # manifest entries that failed validation (the run exits non-zero)
      "total": int,                 # items evaluated, missing predictions included (they count as failures)
      "resolved": int,              # items whose result has passed == True (infrastructure results excluded)
      "resolution_rate": float,     # resolved / (total - infra_errors - environment_unavailable)
      "resolution_rate_over_all": float,  # resolved / selected: invalid, infra and not-run items as failures
      "infra_errors": int,          # infrastructure results (retryable; never cached, retried next run)
      "environment_unavailable": int,  # dependencies this machine cannot fetch: not the model's, not infra
      "missing_predictions": int, "cached": int, "not_run": int,
      "by_reason": {reason: int},
      "by_model": {model: {"total", "resolved", "resolution_rate", "infra_errors", "cached", "by_reason",
                           "eligible", "ci95", "headlines": {suite: that model's headline figure},
                           "resolved_ids", "unresolved_ids", "error_ids", "empty_patch_ids",
                           "missing_prediction_ids", "not_run_ids", "ids_by_reason",  # report.outcomes
                           "integrity": {"items", "items_flagged", "findings", <kind>: int}}},  # report.integrity
      "instances": {key: {"instance_id", "model_name_or_path", "suite", "reason", "passed", ...properties}},
      "suite_tables": {suite: <that suite's summarize(results)>},
      "manifest_errors": [str],
      "unmatched_predictions": [str],       # predicted ids that match no selected instance
      "unmatched_suggestions": {id: str}    # for those, the closest selected instance id (a likely typo)
      "deselected_predictions": int,        # predicted ids of instances -k / -m deselected (not unmatched)
      "cache_dropped": int,                 # result-cache entries that were not their item's result: removed,
      "cache_dropped_entries": [{"instance_id", "model", "file", "why"}],  # the items evaluated again
    }

The top-level counts pool every suite and every model (read ``by_model`` first when there are several);
each suite's own headline (NavPassRate, Pass@1 ...) is in ``headlines``, per model under
``headlines.<suite>.models``. :func:`model_report` is one model's part of it, written per model to
``<reports>/<run_id>/models/<encoded model>.json`` (:func:`write_model_reports`). ``key`` is the instance id when the
run has one model, ``instance_id@model`` otherwise. Rates over an empty denominator are 0.0 here (the headlines say
``None``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_mobilebench.files import atomic_write_json
from pytest_mobilebench.report.integrity import integrity_counts
from pytest_mobilebench.report.names import folder_name
from pytest_mobilebench.report.outcomes import ID_LISTS, model_and_trial, not_run_by_model, outcome_ids
from pytest_mobilebench.report.headline import headlines, is_infra, is_unavailable, rate_block
from pytest_mobilebench.report.runs import not_run_and_unmatched
from pytest_mobilebench.suggest import closest

if TYPE_CHECKING:
    from pytest_mobilebench.state import MobileBenchState
    from pytest_mobilebench.suites.base import Headline

__all__ = [
    "build_summary",
    "dropped_entries",
    "headline",
    "make_summary",
    "model_report",
    "one_item_per_invalid_instance",
    "selected_by_model",
    "suite_tables",
    "write_model_reports",
]


def headline(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``total``, ``resolved``, ``resolution_rate`` (over eligible), ``infra_errors``, ``cached``, ``by_reason``;
    ``integrity`` (:func:`~pytest_mobilebench.report.integrity.integrity_counts`) when a result was audited."""
    total = len(results)
    infra = sum(1 for r in results if is_infra(r))
    unavailable = sum(1 for r in results if is_unavailable(r))
    resolved = sum(1 for r in results if r.get("passed") is True and not is_infra(r))
    reasons = Counter(str(r.get("reason")) for r in results)
    eligible = total - infra - unavailable
    return {
        "total": total,
        "resolved": resolved,
        "resolution_rate": round(resolved / eligible, 6) if eligible else 0.0,
        "infra_errors": infra,
        "environment_unavailable": unavailable,
        "cached": sum(1 for r in results if r.get("cached")),
        "by_reason": dict(sorted(reasons.items())),
        "eligible": eligible,
        "ci95": rate_block(resolved, eligible)["ci95"],
        **({"integrity": audited} if (audited := integrity_counts(results)) is not None else {}),
    }


def _table(suite: Any, rows: Sequence[Mapping[str, Any]], options: Mapping[str, Any] | None) -> Any:
    """The suite's ``summarize``; with trial rows (``--mb-trials``, a predictions file's ``trial``) and no
    ``trials`` of its own, the generic :func:`pytest_mobilebench.report.trials.trial_table` is added; with three
    or more models, ``irt`` (:func:`pytest_mobilebench.report.irt.irt_table`: difficulty and ability)."""
    try:
        table = suite.summarize(rows, options=options)
    except Exception as exc:  # noqa: BLE001 - a table must never cost the summary itself
        return {"error": f"{type(exc).__name__}: {exc}"}
    if isinstance(table, dict) and "trials" not in table:
        from pytest_mobilebench.report.trials import bootstrap_options, trial_table

        try:
            if (trials := trial_table(rows, **bootstrap_options(options))) is not None:
                table["trials"] = trials
        except Exception as exc:  # noqa: BLE001 - nor the trials the suite's table
            table["trials"] = {"error": f"{type(exc).__name__}: {exc}"}
    if isinstance(table, dict) and len({str(r.get("model_name_or_path")) for r in rows}) >= 3:
        from pytest_mobilebench.report.irt import irt_table

        try:
            table["irt"] = irt_table(rows)
        except Exception as exc:  # noqa: BLE001 - nor the fit
            table["irt"] = {"error": f"{type(exc).__name__}: {exc}"}
    return table


def suite_tables(
    results: Sequence[Mapping[str, Any]], suites: Mapping[str, Any], options: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``({suite: summarize(its results)}, {suite: {model: summarize(that model's results)}})``; the
    per-model tables exist only with several models (with one, the suite's table is that model's). A
    ``summarize`` that raises gives ``{"error": "<type>: <message>"}`` in its place."""
    tables: dict[str, Any] = {}
    per_model: dict[str, dict[str, Any]] = {}
    for name in sorted({str(r.get("suite")) for r in results}):
        suite = suites.get(name)
        if suite is None:
            continue
        rows = [r for r in results if str(r.get("suite")) == name]
        tables[name] = _table(suite, rows, options)
        models = sorted({str(r.get("model_name_or_path")) for r in rows})
        per_model[name] = (
            {m: _table(suite, [r for r in rows if str(r.get("model_name_or_path")) == m], options) for m in models}
            if len(models) > 1
            else {m: tables[name] for m in models}
        )
    return tables, per_model


def selected_by_model(
    collected: Mapping[str, Sequence[str]], models: Sequence[str], invalid_nodeids: Iterable[str] = ()
) -> dict[str, dict[str, int]]:
    """``{suite: {model: items selected}}`` from the collected ``{nodeid: (suite, instance_id)}``.

    With one model every item is that model's; with several, an item's node id ends with ``[<model>]``
    (the longest model name that fits wins). Invalid instances (``invalid_nodeids``) belong to no model.
    """
    skip = set(invalid_nodeids)
    out: dict[str, dict[str, int]] = {}
    for nodeid, (suite, _iid) in collected.items():
        if nodeid in skip or not models:
            continue
        model, _trial = model_and_trial(nodeid.rsplit("::", 1)[-1], str(_iid), models)
        if model is not None:
            out.setdefault(str(suite), {}).setdefault(model, 0)
            out[str(suite)][model] += 1
    return out


def _instances(results: Sequence[Mapping[str, Any]], one_model: bool) -> dict[str, Any]:
    instances: dict[str, Any] = {}
    for r in sorted(
        results, key=lambda r: (str(r.get("instance_id")), str(r.get("model_name_or_path")), r.get("trial") or 0)
    ):
        key = str(r.get("instance_id")) if one_model else f"{r.get('instance_id')}@{r.get('model_name_or_path')}"
        key += f"[t{r['trial']}]" if isinstance(r.get("trial"), int) else ""  # one of K trials (--mb-trials)
        entry = {k: v for k, v in r.items() if k not in ("properties",)}
        for name, value in r.get("properties", {}).items():
            entry.setdefault(name, value)  # the result's own structured fields win over flat properties
        instances[key] = entry
    return instances


def build_summary(
    results: Sequence[Mapping[str, Any]],
    *,
    run_id: str,
    suite_tables: Mapping[str, Any],
    manifest_errors: Sequence[str] = (),
    unmatched_predictions: Sequence[str] = (),
    deselected_predictions: int = 0,
    selected: Mapping[str, int] | None = None,
    invalid: Mapping[str, int] | None = None,
    instance_ids: Iterable[str] = (),
    selected_models: Mapping[str, Mapping[str, int]] | None = None,
    model_tables: Mapping[str, Mapping[str, Any]] | None = None,
    declared: Mapping[str, Headline] | None = None,
    not_run_ids: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Assemble the summary document described in the module docstring.

    Args:
        results: every finished result (plain dicts from the suites, with the plugin's fields).
        run_id: the run's id.
        suite_tables: ``{suite: summarize(...)}``.
        manifest_errors: one message per invalid instance.
        unmatched_predictions: predicted instance ids that match no selected instance.
        deselected_predictions: how many predicted instance ids ``-k`` / ``-m`` deselected.
        selected: items collected per suite (None: unknown, then evaluated + invalid).
        invalid: invalid instances per suite (default: ``len(manifest_errors)`` under suite ``"unknown"``).
        instance_ids: every selected instance id, for "did you mean" on unmatched predictions.
        selected_models: ``{suite: {model: items selected}}`` (:func:`selected_by_model`).
        model_tables: ``{suite: {model: summarize() of that model's results}}``.
        declared: ``{suite: its declared headline}`` (the run's registry, ``SuiteRegistry.headlines()``);
            None: the built-in suites' surfaces (:func:`~pytest_mobilebench.report.headline.declared_headline`).
        not_run_ids: ``{model: [selected items without a result]}`` (:func:`~.outcomes.not_run_by_model`).
    """
    if invalid is None:
        invalid = {"unknown": len(manifest_errors)} if manifest_errors else {}
    blocks = headlines(
        results,
        selected=selected,
        invalid=invalid,
        tables=suite_tables,
        selected_by_model=selected_models,
        model_tables=model_tables,
        declared=declared,
    )
    models = sorted(
        {str(r.get("model_name_or_path")) for r in results}  # with the selected ones: an interrupted
        | {str(m) for per in (selected_models or {}).values() for m in per}
    )  # run names its models
    by_model = {model: headline([r for r in results if str(r.get("model_name_or_path")) == model]) for model in models}
    for model, row in by_model.items():
        row |= outcome_ids(
            [r for r in results if str(r.get("model_name_or_path")) == model], (not_run_ids or {}).get(model, ())
        )
        row["headlines"] = {name: b["models"][model]["headline"] for name, b in blocks.items() if model in b["models"]}
    pooled = headline(results)
    n_selected = sum(b["selected"] for b in blocks.values())
    known = set(instance_ids) | {str(r.get("instance_id")) for r in results}
    suggestions = {iid: match for iid in unmatched_predictions if (match := closest(iid, known))}
    return {
        "run_id": run_id,
        "suites": sorted({str(r.get("suite")) for r in results} | set(blocks)),
        "models": models,
        "headlines": blocks,
        "selected": n_selected,
        "invalid_instances": sum(b["invalid"] for b in blocks.values()),
        **pooled,
        "resolution_rate_over_all": round(pooled["resolved"] / n_selected, 6) if n_selected else 0.0,
        "missing_predictions": sum(b["missing_predictions"] for b in blocks.values()),
        "not_run": sum(b["not_run"] for b in blocks.values()),
        "by_model": by_model,
        "instances": _instances(results, len(models) <= 1),
        "suite_tables": dict(suite_tables),
        "manifest_errors": list(manifest_errors),
        "unmatched_predictions": sorted(unmatched_predictions),
        "unmatched_suggestions": dict(sorted(suggestions.items())),
        "deselected_predictions": deselected_predictions,
        **dropped_entries(results),
    }


def one_item_per_invalid_instance(
    collected: Mapping[str, tuple[str, str]], invalid: Mapping[str, str]
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """``(collected, invalid)`` with each invalid instance's items after the first left out: an instance found
    invalid when it ran fails once per model, and, as a broken manifest entry (one item, counted against every
    model), counts once among the selected and the invalid. Maps: node id -> (suite, instance id) / suite."""
    seen: set[tuple[str, str]] = set()
    extra: set[str] = set()
    for nodeid in invalid:
        key = collected.get(nodeid)
        if key is None:
            continue
        if tuple(key) in seen:
            extra.add(nodeid)
        seen.add(tuple(key))  # type: ignore[arg-type]
    return (
        {n: v for n, v in collected.items() if n not in extra},
        {n: v for n, v in invalid.items() if n not in extra},
    )


def dropped_entries(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"cache_dropped": int, "cache_dropped_entries": [{"instance_id", "model", "file", "why"}]}``: the results
    whose cache entry was not their item's result (their ``cache_dropped``: ``{"file", "why"}``, from
    :func:`pytest_mobilebench.cache.read_cached`) and were evaluated again."""
    entries = [
        {
            "instance_id": str(r.get("instance_id")),
            "model": str(r.get("model_name_or_path")),
            "file": str(r["cache_dropped"].get("file")),
            "why": str(r["cache_dropped"].get("why")),
        }
        for r in results
        if isinstance(r.get("cache_dropped"), Mapping)
    ]
    return {"cache_dropped": len(entries), "cache_dropped_entries": entries}


def make_summary(state: MobileBenchState, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Build the run summary from the results gathered on the controller.

    An instance found invalid when its items ran (a commit its repository lacks) fails one item per model; it
    counts once, as a broken manifest entry does (:func:`one_item_per_invalid_instance`)."""
    collected, invalid_nodes = one_item_per_invalid_instance(state.collected, state.invalid)
    tables, model_tables = suite_tables(state.results, state.suites, options)
    evaluated = {str(r.get("instance_id")) for r in state.results}
    real = state.predictions is not None and not state.predictions.pseudo
    not_run, unmatched = not_run_and_unmatched(  # interrupted items are not_run, never unmatched predictions
        [iid for _, iid in collected.values()], evaluated, state.predictions.instance_ids if real else ()
    )
    # not `if state.predictions`: gold / empty / live hold no file entries, so their Predictions is falsy (len 0)
    models = list(state.predictions.models) if state.predictions is not None else []
    not_run_ids = not_run_by_model(collected, models, state.results, invalid_nodes)
    if len(models) > 1:  # an instance one model finished and another did not is still not run (issue 35, item 8)
        unfinished = _instances_of(not_run_ids)
        not_run = sorted(set(not_run) | {iid for _, iid in collected.values() if iid in unfinished})
    deselected = [iid for iid in unmatched if iid in state.deselected]  # -k / -m left them out: no typo
    unmatched = [iid for iid in unmatched if iid not in state.deselected]
    selected: dict[str, int] = {}
    for suite_name, _ in collected.values():
        selected[suite_name] = selected.get(suite_name, 0) + 1
    invalid_ids = {iid for nodeid, (_, iid) in collected.items() if nodeid in invalid_nodes}
    invalid: dict[str, int] = {}
    for suite_name in invalid_nodes.values():
        invalid[suite_name] = invalid.get(suite_name, 0) + 1
    return build_summary(
        state.results,
        run_id=state.run_id,
        suite_tables=tables,
        manifest_errors=sorted(set(state.manifest_errors)),
        unmatched_predictions=unmatched,
        deselected_predictions=len(deselected),
        selected=selected or None,
        invalid=invalid,
        instance_ids=[iid for _, iid in collected.values()],
        selected_models=selected_by_model(collected, models, invalid_nodes),
        model_tables=model_tables,
        declared=_declared(state.suites),
        not_run_ids=not_run_ids,
    ) | {
        "not_run_instances": [iid for iid in not_run if iid not in invalid_ids]
    }  # an invalid one did run: it is invalid


#: the trial suffix :func:`.outcomes.item_label` writes
_TRIAL_LABEL = re.compile(r"\[t\d+\]$")


def _instances_of(not_run_ids: Mapping[str, Sequence[str]]) -> set[str]:
    """The instance ids of ``not_run_ids``' labels (``iid`` or ``iid[t<k>]``: :func:`.outcomes.item_label`), any
    model, any trial: one set, so a run of many items is not scanned once per item."""
    return {_TRIAL_LABEL.sub("", label) for labels in not_run_ids.values() for label in labels}


def _declared(suites: Any) -> dict[str, Headline]:
    """``{suite: declared headline}`` of a run's registry (its surfaces: nothing imported); {} for another map."""
    own = getattr(suites, "headlines", None)
    return own() if callable(own) else {}


def model_report(summary: Mapping[str, Any], model: str) -> dict[str, Any]:
    """One model's part of a run summary: ``{"run_id", "model", "headlines": {suite: block}, "totals":
    by_model[model] without its id lists, the id lists (``resolved_ids`` ... :mod:`.outcomes`) at the top level
    as SWE-bench's report has them, "instances": {instance_id (``[t<k>]`` for trial k): entry}, "trials"?: {suite:
    that model's trial table (:func:`pytest_mobilebench.report.trials.suite_trials`)}, "regraded_from"?}`` (the
    pooled figures left out)."""
    from pytest_mobilebench.report.trials import suite_trials

    entries = {
        str(e.get("instance_id")) + (f"[t{e['trial']}]" if isinstance(e.get("trial"), int) else ""): e
        for e in summary.get("instances", {}).values()
        if str(e.get("model_name_or_path")) == model
    }
    report = {
        "run_id": summary["run_id"],
        "model": model,
        "headlines": {
            name: b["models"][model] for name, b in summary.get("headlines", {}).items() if model in b.get("models", {})
        },
    }
    totals = summary.get("by_model", {}).get(model, {})
    ids = (*ID_LISTS, "ids_by_reason")
    report["totals"] = {k: v for k, v in totals.items() if k not in ids}
    report |= {k: totals[k] for k in ids if k in totals}
    report["instances"] = dict(sorted(entries.items()))
    trials = {suite: t[model] for suite, t in suite_trials(summary).items() if model in t}
    if trials:
        report["trials"] = trials
    if "regraded_from" in summary:
        report["regraded_from"] = summary["regraded_from"]
    return report


def write_model_reports(summary: Mapping[str, Any], run_dir: Path) -> list[str]:
    """Write :func:`model_report` of every model to ``run_dir/models/<folder_name(model)>.json`` (atomic).
    Returns what could not be written, in words (never raises for a full disk or a bad folder)."""
    problems = []
    for model in summary.get("models", []):
        target = run_dir / "models" / f"{folder_name(model)}.json"
        try:
            atomic_write_json(target, model_report(summary, model))
        except OSError as exc:
            problems.append(f"{target} not written: {exc}")
    return problems
