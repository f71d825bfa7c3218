"""Id lists per outcome, for each model (issue 33, item 6): which items a model resolved, failed, errored on,
left empty or never ran, as SWE-bench's harness reports them (``resolved_ids``, ``unresolved_ids``,
``error_ids``, ``empty_patch_ids``), plus every suite's own reasons.

Pure: results (plain dicts) and the collected node ids in, plain dicts out. Shape (written under
``by_model.<model>`` in ``summary.json`` and at the top level of ``models/<model>.json``)::

    {
      "resolved_ids": [str],            # passed (never an infrastructure result)
      "unresolved_ids": [str],          # a counted failure: every other non-infrastructure result but
                                        # empty_patch and missing_prediction (as SWE-bench's "unresolved")
      "error_ids": [str],               # infrastructure results (retryable; not the model's failure)
      "empty_patch_ids": [str],         # reason empty_patch (no candidate change)
      "missing_prediction_ids": [str],  # selected, but the predictions held nothing for it
      "not_run_ids": [str],             # selected, no result (interrupted, --mb-run-budget, a crash)
      "ids_by_reason": {reason: [str]}, # every result by its suite's own reason
    }

An id is the instance id, with ``[t<k>]`` for trial k of K (``--mb-trials``); lists are sorted. Every result
is in exactly one of ``resolved_ids``, ``unresolved_ids``, ``error_ids``, ``empty_patch_ids`` and
``missing_prediction_ids``, and in ``ids_by_reason`` under its reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_mobilebench.report.headline import is_infra

__all__ = ["ID_LISTS", "item_label", "model_and_trial", "not_run_by_model", "outcome_ids"]

#: the id lists of :func:`outcome_ids`, in the order they are written
ID_LISTS = ("resolved_ids", "unresolved_ids", "error_ids", "empty_patch_ids", "missing_prediction_ids", "not_run_ids")
#: reasons with an id list of their own (not "unresolved")
_OWN_LIST = {"empty_patch": "empty_patch_ids", "missing_prediction": "missing_prediction_ids"}
_TRIAL = re.compile(r"(?:^|-)t(\d+)$")


def item_label(instance_id: str, trial: int | None) -> str:
    """``instance_id``, or ``instance_id[t<k>]`` for trial k."""
    return instance_id if trial is None else f"{instance_id}[t{trial}]"


def outcome_ids(results: Iterable[Mapping[str, Any]], not_run: Iterable[str] = ()) -> dict[str, Any]:
    """The id lists (module docstring) of one model's ``results``; ``not_run`` are its selected items without a
    result (labels as :func:`item_label` writes them)."""
    lists: dict[str, set[str]] = {name: set() for name in ID_LISTS}
    by_reason: dict[str, set[str]] = {}
    for result in results:
        trial = result.get("trial")
        label = item_label(str(result.get("instance_id")), trial if isinstance(trial, int) else None)
        reason = str(result.get("reason"))
        by_reason.setdefault(reason, set()).add(label)
        if is_infra(result):
            lists["error_ids"].add(label)
        elif result.get("passed") is True:
            lists["resolved_ids"].add(label)
        else:
            lists[_OWN_LIST.get(reason, "unresolved_ids")].add(label)
    lists["not_run_ids"] = set(not_run)
    out: dict[str, Any] = {name: sorted(ids) for name, ids in lists.items()}
    out["ids_by_reason"] = {reason: sorted(ids) for reason, ids in sorted(by_reason.items())}
    return out


def model_and_trial(name: str, instance_id: str, models: Sequence[str]) -> tuple[str | None, int | None]:
    """The model and trial an item's name (``iid``, ``iid[model]``, ``iid[t2]``, ``iid[model-t2]``) stands for."""
    inner = name[len(instance_id) + 1 : -1] if name.startswith(instance_id + "[") and name.endswith("]") else ""
    found = _TRIAL.search(inner)
    trial = int(found.group(1)) if found else None
    rest = inner[: found.start()] if found else inner
    if len(models) == 1:
        return models[0], trial
    return (rest if rest in models else None), trial


def not_run_by_model(
    collected: Mapping[str, Sequence[str]],
    models: Sequence[str],
    results: Iterable[Mapping[str, Any]],
    invalid_nodeids: Iterable[str] = (),
) -> dict[str, list[str]]:
    """``{model: [labels]}``: the selected items of each model (``collected``: ``{node id: (suite,
    instance_id)}``) with no result; invalid instances (``invalid_nodeids``) belong to no model."""
    done = {
        (
            str(r.get("model_name_or_path")),
            item_label(str(r.get("instance_id")), r.get("trial") if isinstance(r.get("trial"), int) else None),
        )
        for r in results
    }
    skip = set(invalid_nodeids)
    out: dict[str, set[str]] = {}
    for nodeid, (_suite, iid) in collected.items():
        if nodeid in skip or not models:
            continue
        model, trial = model_and_trial(nodeid.rsplit("::", 1)[-1], str(iid), models)
        if model is not None and (model, item_label(str(iid), trial)) not in done:
            out.setdefault(model, set()).add(item_label(str(iid), trial))
    return {model: sorted(labels) for model, labels in out.items()}
