"""Re-grading an issue-resolution item from its evidence folder, through the live run's grading step.

The live run ends in ``IssueResolutionSuite._finish(instance, base, outcome, gold_patch, info)``; re-grading
rebuilds its inputs from what the run left in the evidence folder and calls the same method:

* ``outcome`` from ``run.json`` (timed out, OOM), ``test_output.log`` and ``results/`` parsed again with the
  current parsers (:func:`outcome_from_evidence`);
* the facts established before the tests ran (flags, touched test files, runner-configuration
  violations, runtime) from the live ``result.json``: a re-grade never forgets a policy violation;
* localization and gold-size properties from the live result (they depend on the patches only).

Items that never reached the tests (missing prediction, empty patch, apply failure, infrastructure error)
and validation / audit items are returned unchanged, marked ``regraded: False``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_mobilebench import frameworks, grading
from pytest_mobilebench.manifest.issue_resolution import IssueInstance
from pytest_mobilebench.patch import PatchError, parse_patch

__all__ = ["outcome_from_evidence", "regrade_result"]

#: fields of the live result that were fixed before the tests ran (the ``base`` of ``_finish``)
_BASE_KEYS = ("instance_id", "suite", "model_name_or_path", "repo", "framework", "difficulty", "category",
              "flags", "test_files_touched", "policy_violations", "runtime")
#: fields the plugin adds to every result
_PLUGIN_KEYS = ("evidence_dir", "cache_key", "group", "duration_s")
#: properties that depend on the patches only, kept from the live result
_PATCH_PROPERTIES = ("loc_precision", "loc_recall", "loc_f1", "gold_files", "gold_lines", "gold_artifacts", "duration_s")


def outcome_from_evidence(instance: IssueInstance, evidence_dir: Path, *, policy_violation: str | None = None) -> grading.RunOutcome:
    """The run's facts from ``run.json``, ``test_output.log`` and ``results/``, parsed with today's parsers.

    Raises:
        FileNotFoundError: the folder lacks ``run.json`` or ``test_output.log`` (the run did not reach the tests).
        KeyError: ``run.json`` has no test plan.
    """
    from pytest_mobilebench.suites.issue_resolution import parse_run

    run = json.loads((evidence_dir / "run.json").read_text(encoding="utf-8"))
    output = (evidence_dir / "test_output.log").read_text(encoding="utf-8")
    results = evidence_dir / "results"
    files = {p.relative_to(results).as_posix(): p.read_bytes() for p in sorted(results.rglob("*")) if p.is_file()}
    plan = frameworks.TestPlan.from_dict(run["plan"])
    parsed, built = parse_run(instance.framework, plan, output, files, root_dir=run.get("root_dir"))
    return grading.RunOutcome(
        applied=True,
        built=built,
        timed_out=bool(run.get("timed_out")),
        infra_error="oom_killed" if run.get("oom_killed") else None,
        tests=parsed.tests,
        policy_violation=policy_violation,
    )


def regrade_result(suite: Any, instance: IssueInstance, evidence_dir: Path) -> dict[str, Any]:
    """A new result for the item whose evidence is ``evidence_dir`` (see the module docstring).

    Raises:
        FileNotFoundError: no ``result.json`` in the folder.
    """
    old = json.loads((evidence_dir / "result.json").read_text(encoding="utf-8"))
    if old.get("retryable") or "validation" in old or "audit" in old or not (evidence_dir / "run.json").is_file():
        return {**old, "regraded": False, "regrade_note": "the item did not reach a candidate test run; kept as it was"}
    violations = old.get("policy_violations") or []
    outcome = outcome_from_evidence(instance, evidence_dir, policy_violation="; ".join(violations) if violations else None)
    base = {k: old[k] for k in _BASE_KEYS if k in old}
    base["flags"] = list(old.get("flags") or [])
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
