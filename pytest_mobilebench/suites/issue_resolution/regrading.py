"""Re-grading an issue-resolution item from its evidence folder, through the live run's grading step.

The live run ends in ``IssueResolutionEvaluator._finish(instance, base, outcome, gold_patch, info)``; re-grading
rebuilds its inputs from what the run left in the evidence folder and calls the same method:

* ``outcome``, flags, touched test files and policy violations from :func:`.judge.judge` on the folder
  (the policy re-run on the saved patch and configuration snapshots, the results parsed again with the
  current parsers): a re-grade never forgets a policy violation, and never trusts the old result's;
* the runtime and the item's identity from the live ``result.json``;
* localization and gold-size properties from the live result (they depend on the patches only).

Items that never reached the tests (missing prediction, empty patch, apply failure, infrastructure error)
and validation / audit items are returned unchanged, marked ``regraded: False``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_mobilebench.suites.issue_resolution import grading
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance
from pytest_mobilebench.patch import PatchError, parse_patch
from pytest_mobilebench.suites.issue_resolution.attribution import unharnessed_flags
from pytest_mobilebench.suites.issue_resolution.judge import judge

__all__ = ["outcome_from_evidence", "regrade_result"]

#: fields of the live result that were fixed before the tests ran (the ``base`` of ``_finish``)
_BASE_KEYS = (
    "instance_id",
    "suite",
    "model_name_or_path",
    "trial",
    "repo",
    "framework",
    "difficulty",
    "category",
    "flags",
    "test_files_touched",
    "policy_violations",
    "runtime",
)
#: fields the plugin adds to every result
_PLUGIN_KEYS = ("evidence_dir", "cache_key", "group", "duration_s")
#: properties that depend on the patches only, kept from the live result
_PATCH_PROPERTIES = (
    "loc_precision",
    "loc_recall",
    "loc_f1",
    "gold_files",
    "gold_lines",
    "gold_artifacts",
    "duration_s",
)


def outcome_from_evidence(instance: IssueInstance, evidence_dir: Path) -> grading.RunOutcome:
    """The run's facts re-derived from the evidence by :func:`.judge.judge` (the live run's own step):
    the policy re-run on the saved patch and configuration, the results parsed with today's parsers.

    Raises:
        FileNotFoundError: the folder lacks the files the live run writes before grading.
    """
    return judge(instance, evidence_dir).outcome


def regrade_result(suite: Any, instance: IssueInstance, evidence_dir: Path) -> dict[str, Any]:
    """A new result for the item whose evidence is ``evidence_dir`` (see the module docstring).

    Raises:
        FileNotFoundError: no ``result.json`` in the folder.
    """
    old = json.loads((evidence_dir / "result.json").read_text(encoding="utf-8"))
    if old.get("retryable") or "validation" in old or "audit" in old or not (evidence_dir / "run.json").is_file():
        return {**old, "regraded": False, "regrade_note": "the item did not reach a candidate test run; kept as it was"}
    judged = judge(instance, evidence_dir)
    outcome = judged.outcome
    base = {k: old[k] for k in _BASE_KEYS if k in old and k not in ("flags", "test_files_touched", "policy_violations")}
    base["flags"] = [*unharnessed_flags(evidence_dir), *(judged.review.flags if judged.review else ())]
    if judged.review and judged.review.test_files:
        base["test_files_touched"] = list(judged.review.test_files)
    if outcome.policy_violation:
        base["policy_violations"] = outcome.policy_violation.split("; ")
    base["integrity_findings"] = [f.to_dict() for f in judged.integrity]
    info = None
    model_patch = evidence_dir / "model_patch.diff"
    if model_patch.is_file():
        try:
            info = parse_patch(model_patch.read_text(encoding="utf-8"))
        except PatchError:
            info = None
    new = suite._finish(instance, base, outcome, None, info)
    new["localization"] = old.get("localization", new["localization"])
    old_props = old.get("properties") or {}
    new["properties"].update({k: old_props[k] for k in _PATCH_PROPERTIES if k in old_props})
    new.update({k: old[k] for k in _PLUGIN_KEYS if k in old})
    new.update(regraded=True, previous_reason=old.get("reason"))
    return new
