"""``--mb-validate`` with ``--predictions=gold``: the three configurations of MobileDev-Bench (Section 3,
Phase 4), ``base``, ``test`` (base + test patch) and ``fix`` (base + test patch + gold patch), run
``--mb-validate-runs`` times each; flaky tests are dropped and the gold lists proposed (``validation.json``).

The gold patch goes through the live grade's own apply step (:meth:`.evaluation.IssueResolutionEvaluator.
_apply_candidate`: sections touching the runner's tools dropped, test files and runner configuration restored to
base, the policy's review) and its size limits: the ``fix`` runs see what a grade of gold would see, and a gold
the policy refuses (a grade of it would be ``policy_violation``) makes the instance invalid, its findings in
``validation.json``'s ``policy_violations`` and in ``problems``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.frameworks.react_native import harness as jest_harness
from pytest_mobilebench.patch import PatchError, PatchInfo, parse_patch
from pytest_mobilebench.records import EvalContext
from pytest_mobilebench.runtime.base import InfraError, Workspace
from pytest_mobilebench.runtime.provider import repo_cache
from pytest_mobilebench.states import InfraKind, Reason, TestState
from pytest_mobilebench.suites.issue_resolution import grading
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance
from pytest_mobilebench.suites.issue_resolution.policy import PatchLimits, size_findings
from pytest_mobilebench.suites.issue_resolution.workspaces import release, resolve_patches, runtime_for, workspace_spec

__all__ = ["POLICY_PROBLEM", "validate"]

#: the start of the problem a gold patch refused by the live grade's policy adds (the findings follow)
POLICY_PROBLEM = "the grade's policy refuses the gold patch (a grade of gold would be policy_violation)"


def validate(evaluator: Any, instance: IssueInstance, ctx: EvalContext, base: dict[str, Any]) -> dict[str, Any]:
    """Run base / test / fix configurations (with the gold patch) through ``evaluator``'s test step
    (:meth:`.evaluation.IssueResolutionEvaluator._run_tests`) and propose the gold lists.

    Raises:
        InfraError: a workspace or the runtime failed, or the gold patch does not apply
            (``gold_patch_apply_failed``).
    """
    repos = repo_cache(ctx.options, ctx.run_id)
    gold_patch, test_patch = resolve_patches(instance, repos)
    atomic_write_text(ctx.evidence_dir / "gold_patch.diff", gold_patch)
    atomic_write_text(ctx.evidence_dir / "test_patch.diff", test_patch)
    runtime = runtime_for(ctx, trusted=True)  # the benchmark's own gold patch
    base["runtime"] = runtime.name
    spec = workspace_spec(instance, ctx)
    runs = max(1, int(ctx.options.get("mb_validate_runs") or 1))
    info, violations = _gold_review(gold_patch, instance, ctx)
    configs: dict[str, list[grading.RunStates]] = {"base": [], "test": [], "fix": []}
    for attempt in range(runs):
        for config in ("base", "test", "fix"):
            tag = f".{config}.{attempt + 1}"
            ws = runtime.prepare(spec, log_dir=ctx.evidence_dir)
            try:
                if config == "fix":
                    violations |= _apply_gold(evaluator, ws, instance, gold_patch, info, test_patch, ctx)
                # at base the test patch's files are targeted without applying it: absent tests are NONE
                run, parsed, built, _ = evaluator._run_tests(
                    ws, instance, test_patch, ctx, tag=tag, apply=config != "base"
                )
            finally:
                release(ws)  # this configuration's evidence is written: removed in the background
            executed = not run.timed_out and not run.oom_killed and built
            configs[config].append(grading.RunStates(tests=parsed.tests, built=built, executed=executed))
    stable: dict[str, Mapping[str, TestState]] = {}
    flaky: set[str] = set()
    for config, states in configs.items():
        merged, unstable = grading.drop_flaky([s.tests for s in states])
        stable[config] = merged
        flaky |= unstable
    final = {
        c: grading.RunStates(
            tests={k: v for k, v in stable[c].items() if k not in flaky},
            built=all(s.built for s in configs[c]),
            executed=all(s.executed for s in configs[c]),
        )
        for c in configs
    }
    validation = grading.validate_instance(final["base"], final["test"], final["fix"])
    problems = list(validation.problems)
    if violations:
        problems.insert(0, f"{POLICY_PROBLEM}: " + "; ".join(sorted(violations)))
    valid = validation.valid and not violations
    transitions = grading.transitions(final["test"].tests, final["fix"].tests)
    report = {
        "instance_id": instance.instance_id,
        "valid": valid,
        "problems": problems,
        "policy_violations": sorted(violations),
        "FAIL_TO_PASS": list(validation.fail_to_pass),
        "NONE_TO_PASS": list(validation.none_to_pass),
        "PASS_TO_PASS": list(validation.pass_to_pass),
        "PASS_TO_FAIL": list(validation.pass_to_fail),
        "flaky": sorted(flaky),
        "assertions": _fix_assertions(ctx.evidence_dir, runs, [*validation.fail_to_pass, *validation.none_to_pass]),
        "states": {c: _states_json(final[c].tests) for c in final},
        "transitions": dict(sorted(transitions.items())),
        "runs": runs,
    }
    atomic_write_json(ctx.evidence_dir / "validation.json", report)
    counts: dict[str, int] = {}
    for t in transitions.values():
        counts[t] = counts.get(t, 0) + 1
    return {
        **base,
        "reason": Reason.RESOLVED.value if valid else Reason.UNRESOLVED.value,
        "passed": valid,
        "retryable": False,
        "validation": report,
        "detail": "; ".join(problems),
        "properties": {
            "valid": valid,
            "gold_refused": bool(violations),
            "f2p": len(validation.fail_to_pass),
            "n2p": len(validation.none_to_pass),
            "p2p": len(validation.pass_to_pass),
            "p2f": len(validation.pass_to_fail),
            "flaky": len(flaky),
            "transitions": json.dumps(counts, sort_keys=True),
        },
    }


def _gold_review(gold_patch: str, instance: IssueInstance, ctx: EvalContext) -> tuple[PatchInfo, set[str]]:
    """The gold patch parsed, and the live grade's size findings on it (``--mb-max-patch-*``).

    Raises:
        InfraError: ``gold_patch_apply_failed``: the gold patch is not a patch the harness can read.
    """
    limits = PatchLimits.from_options(ctx.options)
    try:
        info = parse_patch(gold_patch, name=f"gold_patch of {instance.instance_id}")
    except PatchError as exc:
        raise InfraError(InfraKind.GOLD_PATCH_APPLY_FAILED, f"the gold patch cannot be read: {exc}") from exc
    return info, set(size_findings(gold_patch, info, limits))


def _apply_gold(
    evaluator: Any,
    ws: Workspace,
    instance: IssueInstance,
    gold_patch: str,
    info: PatchInfo,
    test_patch: str,
    ctx: EvalContext,
) -> set[str]:
    """Apply the gold patch as the live grade applies a candidate; the policy's violations.

    Raises:
        InfraError: ``gold_patch_apply_failed``: the gold patch does not apply.
    """
    applied = evaluator._apply_candidate(ws, instance, gold_patch, info, test_patch, ctx)
    if not applied.ok:
        raise InfraError(InfraKind.GOLD_PATCH_APPLY_FAILED, "the gold patch does not apply", log=applied.log)
    return set(applied.violations)


def _states_json(tests: Mapping[str, TestState]) -> dict[str, str]:
    return {k: TestState(v).value for k, v in sorted(tests.items())}


def _fix_assertions(evidence: Path, runs: int, ids: Sequence[str]) -> dict[str, int]:
    """``{id: fewest executed assertions over the fix runs}`` for ``ids`` (jest runs with a channel only):
    the manifest's ``assertions`` proposal (:func:`.harness.hollow_passes`)."""
    counts: dict[str, int] = {}
    for attempt in range(1, runs + 1):
        harness_file, channel_file = evidence / f"harness.fix.{attempt}.json", evidence / f"channel.fix.{attempt}.jsonl"
        if not harness_file.is_file() or not channel_file.is_file():
            return {}
        found = jest_harness.assertion_counts(
            json.loads(harness_file.read_text(encoding="utf-8")), channel_file.read_bytes()
        )
        for test_id in ids:
            if test_id in found:
                counts[test_id] = min(counts.get(test_id, found[test_id]), found[test_id])
    return dict(sorted(counts.items()))
