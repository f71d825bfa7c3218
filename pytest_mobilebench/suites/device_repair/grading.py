"""Grading an item from its evidence folder: the ONE function the live run and a re-grade both use.

The live run writes ``grading.json`` (mode, the candidate's path classes and hash, the shadowing entries,
which attempt folder is the final one of each state, and ``integrity``: the ``--mb-integrity`` mode), then calls
:func:`grade_evidence`, which re-grades every named folder from its raw files (:func:`~.execution.outcome_from_dir`) and
derives the verdict with :mod:`.contract`. Nothing here runs a build or touches a device.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_mobilebench import integrity
from pytest_mobilebench.suites.device_repair.contract import (
    CANDIDATE_REACHABLE,
    Cause,
    Reason,
    StateOutcome,
    TargetOutcome,
    acceptance,
    candidate_verdict,
    compromised_runs,
    failure_cause,
    state_infra_kind,
)
from pytest_mobilebench.suites.device_repair.execution import outcome_from_dir
from pytest_mobilebench.suites.device_repair.records import DeviceRecord, record_hash

__all__ = ["RecordMismatch", "check_record", "grade_evidence"]


class RecordMismatch(ValueError):
    """The evidence was produced for other record bytes: it is not reused."""


def _outcomes(evidence: Path, finals: Mapping[str, str]) -> dict[str, StateOutcome]:
    return {state: outcome_from_dir(evidence / folder) for state, folder in finals.items()}


def _compromised(state: StateOutcome) -> dict[str, Any]:
    """The fields of a ``policy_violation`` of kind ``runner_compromised`` from ``state``'s runs."""
    return {
        "reason": Reason.POLICY_VIOLATION,
        "policy_kind": "runner_compromised",
        "final": state,
        "cause": None,
        "detail": f"{state.state}: runner_compromised: " + "; ".join(compromised_runs(state)),
    }


def _quarantined(quarantine: Mapping[str, Any] | None, outcomes: Mapping[str, StateOutcome]) -> dict[str, Any] | None:
    """The fields charging a device that could not be restored: to the candidate when its own attempt left
    the damage (``policy_violation`` of kind ``device_damage``: never resolved, never infrastructure), else
    infrastructure (``device_quarantined``: the record's own code left it, or only the health probe failed). None
    without a quarantine."""
    if not quarantine:
        return None
    state = outcomes.get(str(quarantine["state"])) or next(iter(outcomes.values()))
    what = "; ".join([*(quarantine.get("remaining") or []), *(quarantine.get("unhealthy") or [])])
    if quarantine["state"] == "candidate" and quarantine.get("remaining"):
        return {
            "reason": Reason.POLICY_VIOLATION,
            "policy_kind": "device_damage",
            "final": state,
            "cause": None,
            "infra_kind": None,
            "attributed": True,
            "detail": f"candidate attempt {quarantine['attempt']} left device "
            f"{quarantine.get('serial')} damaged beyond "
            f"restore (quarantined for the run): {what}",
        }
    return {
        "reason": Reason.INFRA_ERROR,
        "infra_kind": "device_quarantined",
        "final": state,
        "cause": "external_infrastructure",
        "detail": f"{quarantine['state']} left device {quarantine.get('serial')} unrestorable (quarantined): {what}",
    }


def _gold(outcomes: Mapping[str, StateOutcome]) -> dict[str, Any]:
    s_bug, s_fix = outcomes["S_bug"], outcomes.get("S_fix")
    for state in (s_bug, s_fix):
        if state is not None and compromised_runs(state):
            return {**_compromised(state), "accepted": False}
    for state in (s_bug, s_fix):
        kind = state_infra_kind(state, reference=True) if state is not None else None
        if kind:
            return {
                "reason": Reason.INFRA_ERROR,
                "infra_kind": kind,
                "accepted": False,
                "final": state,
                "detail": f"{state.state}: {state.detail or state.target_detail}",
            }
    assert s_fix is not None, "S_fix runs whenever S_bug is not infrastructure"
    accepted, why = acceptance(s_bug, s_fix)
    return {
        "reason": Reason.RESOLVED if accepted else Reason.RECORD_REJECTED,
        "detail": why,
        "final": s_fix,
        "accepted": accepted,
        "s_bug_q": s_bug.target.value if s_bug.target else None,
    }


def _candidate(record: DeviceRecord, data: Mapping[str, Any], outcomes: Mapping[str, StateOutcome]) -> dict[str, Any]:
    outcome = outcomes["candidate"]
    reference = outcomes.get("reference")
    attributed = (
        reference is not None
        and state_infra_kind(reference, reference=True) is None
        and reference.target is TargetOutcome.PASSED
    )
    reason = candidate_verdict(outcome, attributed=attributed)
    if reason is Reason.POLICY_VIOLATION:
        return {**_compromised(outcome), "infra_kind": None, "attributed": attributed}
    if data.get("shadowing") and reason is Reason.RESOLVED:
        reason = Reason.UNRESOLVED
    classes = data["candidate"]["classes"]
    kind = state_infra_kind(outcome, reference=False)
    if reason is Reason.INFRA_ERROR:
        cause: Cause | None = Cause.EXTERNAL_INFRASTRUCTURE
    elif reason is Reason.RESOLVED:
        cause = None
    elif data.get("shadowing"):
        cause = Cause.TEST_TARGET_MISMATCH
    else:
        touched = [p for group in classes.values() for p in group]
        cause = failure_cause(touched, classes["production"], record.defect_files, outcome)
    detail = outcome.detail or outcome.target_detail
    if attributed and kind in CANDIDATE_REACHABLE:
        detail = f"{kind} persisted through the retries while the reference state passed on the same device: {detail}"
    if data.get("shadowing"):
        detail = f"the app artefact ships test-stack classes ({', '.join(data['shadowing'][:3])}); {detail}"
    return {
        "reason": reason,
        "infra_kind": kind if reason is Reason.INFRA_ERROR else None,
        "detail": detail,
        "final": outcome,
        "cause": cause.value if cause else None,
        "attributed": attributed,
    }


def _integrity(record: DeviceRecord, evidence: Path, data: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The static audit of ``candidate.diff`` (:mod:`pytest_mobilebench.integrity`; production files by the
    record's test rule): ``(findings as dicts, policy-violation messages under the saved mode)``."""
    patch = evidence / "candidate.diff"
    if data.get("mode") == "gold" or not patch.is_file():
        return [], []
    found = integrity.audit(patch.read_text(encoding="utf-8"), record.is_test_path)
    return [f.to_dict() for f in found], integrity.violations(found, str(data.get("integrity") or "report"))


def check_record(record: DeviceRecord, evidence: Path) -> None:
    """Raises :class:`RecordMismatch` unless ``evidence/record.sha256`` is the record's hash."""
    stored = (evidence / "record.sha256").read_text(encoding="utf-8").strip()
    if stored != record_hash(record):
        raise RecordMismatch(
            f"{evidence}: evidence of record {stored[:12]}, the record is now {record_hash(record)[:12]}"
        )


def grade_evidence(record: DeviceRecord, evidence: Path) -> dict[str, Any]:
    """Grade one item's evidence folder. Returns the result fields (plain builtins, no ``properties``).

    Raises:
        RecordMismatch: ``record.sha256`` in the folder differs from the record's hash.
        FileNotFoundError: the folder has no ``grading.json`` (the item stopped before any state ran).
    """
    check_record(record, evidence)
    data = json.loads((evidence / "grading.json").read_text(encoding="utf-8"))
    outcomes = _outcomes(evidence, data["finals"])
    fields = _quarantined(data.get("quarantine"), outcomes)
    if fields is not None and data["mode"] == "gold":
        fields["accepted"] = False
    if fields is None:
        fields = _gold(outcomes) if data["mode"] == "gold" else _candidate(record, data, outcomes)
    findings, refused = _integrity(record, evidence, data)
    if refused and fields["reason"] is not Reason.POLICY_VIOLATION:  # --mb-integrity=strict; an earlier kind stands
        fields.update(
            reason=Reason.POLICY_VIOLATION,
            policy_kind="integrity",
            infra_kind=None,
            cause=None,
            detail="; ".join(refused),
        )
    final: StateOutcome = fields.pop("final")
    reason: Reason = fields.pop("reason")
    q_passed = final.target is TargetOutcome.PASSED
    return {
        **fields,
        "reason": reason.value,
        "passed": reason is Reason.RESOLVED,
        "retryable": reason.is_infra,
        "patch_valid": final.applied and final.built,
        "fail_to_pass": q_passed,
        "regression_safe": q_passed and all(v is TargetOutcome.PASSED for v in final.regression.values()),
        "q_outcome": final.target.value if final.target else "not_run",
        "states": {state: o.to_dict() for state, o in outcomes.items()},
        **({"integrity_findings": findings} if data["mode"] != "gold" else {}),
    }
