"""The evaluating half of the issue-resolution suite (MobileDev-Bench; SPEC section 1), one candidate at a time.

Imported the first time an item of the suite runs (or summarizes, or re-grades): collecting a manifest needs
only the loading half (:mod:`pytest_mobilebench.suites.issue_resolution`, which delegates ``evaluate``,
``summarize`` and ``regrade`` to :data:`EVALUATOR`; issue 23).

``evaluate`` drives one item through: patches (inline, or derived from ``fix_commit``) -> a fresh
workspace at ``base_commit`` -> the candidate's ``model_patch`` -> test files the candidate touched
restored to base (flagged) -> runner-configuration check (``policy_violation``) -> ``test_patch`` -> the
framework's test plan under the instance timeout -> result files -> registered parser -> grading.
Everything needed to re-grade is written to the evidence folder (:func:`regrade` re-grades from it
without running anything). Infrastructure failures become the ``infra_error`` reason and are marked
retryable, so they are never cached and never scored as the model's fault.

``--mb-validate`` with ``--predictions=gold`` runs the three configurations of MobileDev-Bench
(Section 3, Phase 4): ``base``, ``test`` (base + test patch) and ``fix`` (base + test patch + gold
patch), ``--mb-validate-runs`` times each, drops flaky tests and proposes the gold lists.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench import frameworks
from pytest_mobilebench.suites.issue_resolution import grading
from pytest_mobilebench.suites.issue_resolution import base_memo, dialects
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance, invalid_source
from pytest_mobilebench.frameworks.react_native import harness as jest_harness
from pytest_mobilebench.frameworks.react_native.harness import without_ids
from pytest_mobilebench.parsers import ParseResult
from pytest_mobilebench.patch import PatchError, PatchInfo, parse_patch, select_sections, split_patch
from pytest_mobilebench.suites.issue_resolution.policy import PatchLimits, review, size_findings, withheld_finding
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.report.files import atomic_write_json, atomic_write_text, write_under
from pytest_mobilebench.runtime.base import (
    ApplyResult,
    EnvironmentUnavailable,
    InfraError,
    NotInRepository,
    Runtime,
    RunResult,
    Workspace,
    WorkspaceSpec,
)
from pytest_mobilebench.runtime.provider import repo_cache
from pytest_mobilebench.runtime.repos import RepoCache, repo_url
from pytest_mobilebench.states import Reason, TestState
from pytest_mobilebench.trust import cross_check_run, harden_plan
from pytest_mobilebench.suites.base import EvalContext, LoadedRecord
from pytest_mobilebench.suites.declared import issue_resolution as surface
from pytest_mobilebench.suites.issue_resolution.rates import headline, infra_callouts
from pytest_mobilebench.suites.issue_resolution.unavailable import unavailable_result
from pytest_mobilebench.suites.issue_resolution.attribution import (
    CANDIDATE_FAILURE,
    RESOURCE_KINDS,
    CandidateFailure,
    apply_failure_detail,
    attribute_exhaustion,
    canary_for,
    harness_probes,
    jest_harness_for,
    run_harnessed,
)
from pytest_mobilebench.suites.issue_resolution.judge import (
    base_status,
    judge,
    parse_run,
    save_policy_inputs,
    verdict_of,
)
from pytest_mobilebench.states import InfraKind

__all__ = [
    "EVALUATOR",
    "IssueResolutionEvaluator",
    "apply_failure_detail",
    "headline",
    "infra_callouts",
    "parse_run",
    "regrade",
    "repo_cache",
    "resolve_patches",
    "runtime_for",
    "workspace_spec",
]


def _write(evidence: Path, name: str, text: str) -> None:
    atomic_write_text(evidence / name, text)


def runtime_for(ctx: EvalContext, *, trusted: bool = False) -> Runtime:
    """This process's runtime for the item (the ``mb_runtime`` fixture: :mod:`pytest_mobilebench.runtime.provider`).

    ``trusted``: the benchmark's own code (the gold patch) may run where a real candidate may not.

    Raises:
        InfraError: no runtime can serve the item (no daemon; ``local`` without trust).
    """
    return ctx.fixture("mb_runtime").get(trusted=trusted)  # type: ignore[no-any-return]


def workspace_spec(instance: IssueInstance, ctx: EvalContext) -> WorkspaceSpec:
    """The runtime's view of an instance: repository, base commit, clone URL and environment."""
    return WorkspaceSpec(
        instance_id=instance.instance_id,
        repo=instance.repo,
        base_commit=instance.base_commit,
        repo_url=instance.repo_url or repo_url(ctx.options["mb_repo_url_template"], instance.repo),
        environment={**instance.environment.model_dump(exclude_none=True), "framework": instance.framework},
        run_id=ctx.run_id,
    )


def resolve_patches(instance: IssueInstance, repos: RepoCache) -> tuple[str, str]:
    """``(gold patch, test patch)`` of an instance: inline, or derived from ``fix_commit``.

    Derived patches: ``git diff base_commit fix_commit`` split by the runner's own test rule under the
    project's configuration at the base commit (``frameworks.get(fw).test_rule``; SPEC section 1
    "Test-file identification"): test files -> test patch, the rest -> gold patch.

    Raises:
        InfraError: the repository or a commit cannot be fetched.
    """
    if instance.patch is not None and instance.test_patch is not None:
        return instance.patch, instance.test_patch
    assert instance.fix_commit is not None
    args = (
        str(repos.root),
        repos.url_template,
        repos.run_id,
        instance.repo,
        instance.repo_url or None,
        instance.base_commit,
        instance.fix_commit,
        instance.framework,
    )
    named = all(_FULL_SHA.fullmatch(c) for c in (instance.base_commit, instance.fix_commit))
    return _derived_patches(*args) if named else _derived_patches.__wrapped__(*args)


@functools.lru_cache(maxsize=64)
def _derived_patches(
    root: str, template: str, run_id: str, repo: str, url: str | None, base: str, fix: str, framework: str
) -> tuple[str, str]:
    """``(gold, test)`` split from ``git diff base fix`` (:func:`resolve_patches`), kept per process for
    these arguments when both commits are full ids (content-addressed): a further candidate of the instance
    (another model) reads no repository.

    Raises:
        InfraError: the repository or a commit cannot be fetched (not kept: the next call tries again).
    """
    repos = RepoCache(root=Path(root), url_template=template, run_id=run_id)
    diff = repos.diff(repo, base, fix, url=url)
    fw = frameworks.get(framework)
    config = frameworks.read_config(fw, lambda paths: repos.read_files(repo, base, paths, url=url))
    gold, test = split_patch(diff, fw.test_rule(config))
    return gold, test


#: a full commit id (what names one commit's content for good; a branch or a short id may move)
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _states_json(tests: Mapping[str, TestState]) -> dict[str, str]:
    return {k: TestState(v).value for k, v in sorted(tests.items())}


@final
class IssueResolutionEvaluator:
    """What :class:`~pytest_mobilebench.suites.issue_resolution.IssueResolutionSuite` delegates to: ``evaluate``,
    ``summarize`` and the steps the live, audit and re-grading modules share (``_grade_candidate``,
    ``_run_tests``, ``_finish``). Stateless; one instance, :data:`EVALUATOR`."""

    name = surface.SURFACE.name

    # ------------------------------------------------------------------------------------- evaluate

    def evaluate(self, record: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        """Evaluate one prediction; see the module docstring. Never raises for the candidate's fault."""
        instance: IssueInstance = record.record
        evidence = ctx.evidence_dir
        started = time.monotonic()
        model = prediction.model_name_or_path if prediction is not None else ""
        base: dict[str, Any] = {
            "instance_id": instance.instance_id,
            "suite": self.name,
            "model_name_or_path": model,
            "repo": instance.repo,
            "framework": instance.framework,
            "difficulty": instance.difficulty,
            "category": instance.category,
            "flags": [],
        }
        try:
            if ctx.options.get("mb_audit"):
                from pytest_mobilebench.suites.issue_resolution.audit import audit_instance

                result = audit_instance(self, instance, ctx, base)
            elif ctx.options.get("mb_validate"):
                result = self._validate(instance, prediction, ctx, base)
            elif prediction is not None and prediction.is_live():
                from pytest_mobilebench.suites.issue_resolution.live import evaluate_live

                result = evaluate_live(
                    self, instance, ctx, base, trial=prediction.trial
                )  # agent in a sandbox, then below
            else:
                result = self._grade_candidate(instance, prediction, ctx, base)
        except NotInRepository as exc:  # the data's fault: the instance is invalid, never infra (issue 33, item 3)
            raise invalid_source(record, exc) from exc
        except EnvironmentUnavailable as exc:  # neither the candidate's nor infra to retry (issue 30, item 3)
            _write(evidence, "environment_unavailable.log", f"{exc}\n\n{exc.log}")
            result = unavailable_result(base, exc)
        except InfraError as exc:
            _write(evidence, "infra_error.log", f"{exc}\n\n{exc.log}")
            result = {
                **base,
                "reason": Reason.INFRA_ERROR.value,
                "passed": False,
                "retryable": True,
                "detail": str(exc),
                "infra_kind": exc.kind,
                "properties": {"infra_error": exc.kind},
            }
        result["duration_s"] = round(time.monotonic() - started, 3)
        result["properties"]["duration_s"] = result["duration_s"]
        return result

    def _grade_candidate(
        self, instance: IssueInstance, prediction: Prediction | None, ctx: EvalContext, base: dict[str, Any]
    ) -> dict[str, Any]:
        evidence = ctx.evidence_dir
        repos = repo_cache(ctx.options, ctx.run_id)
        if prediction is None:
            return self._finish(
                instance,
                base,
                grading.RunOutcome(applied=False, built=False, tests={}, missing_prediction=True),
                None,
                None,
            )
        gold = prediction.kind is PredictionKind.GOLD
        raw = prediction.model_patch
        if not gold and (prediction.withheld is not None or not (raw or "").strip()):
            # no workspace needed; the gold patch only serves localization, so its absence costs nothing
            try:
                gold_only: str | None = resolve_patches(instance, repos)[0]
            except InfraError:
                gold_only = None
            if prediction.withheld is not None:  # a live run's diff over the sandbox's bound: the policy's, as live
                violation = withheld_finding(prediction.withheld)
                base["policy_violations"] = [violation]
                outcome = grading.RunOutcome(applied=True, built=False, tests={}, policy_violation=violation)
                return self._finish(instance, base, outcome, gold_only, None)
            return self._finish(
                instance,
                base,
                grading.RunOutcome(applied=False, built=False, tests={}, empty_patch=True),
                gold_only,
                None,
            )
        gold_patch, test_patch = resolve_patches(instance, repos)
        _write(evidence, "test_patch.diff", test_patch)
        model_patch = gold_patch if gold else str(raw)
        _write(evidence, "model_patch.diff", model_patch)
        limits = PatchLimits.from_options(ctx.options)
        info: PatchInfo | None = None
        try:
            if not (too_large := size_findings(model_patch, None, limits)):
                info = parse_patch(model_patch, name=f"model_patch of {instance.instance_id}")
                too_large = size_findings(model_patch, info, limits)
        except PatchError as exc:
            base["detail"] = str(exc)
            return self._finish(
                instance, base, grading.RunOutcome(applied=False, built=False, tests={}), gold_patch, None
            )
        if too_large:  # the candidate's size: policy, before any workspace exists
            base["policy_violations"] = too_large
            # applied=True: not an apply failure, the policy refused it first (verdict_of checks apply before policy)
            outcome = grading.RunOutcome(applied=True, built=False, tests={}, policy_violation="; ".join(too_large))
            return self._finish(instance, base, outcome, gold_patch, info)
        assert info is not None
        if not info.files:
            return self._finish(
                instance,
                base,
                grading.RunOutcome(applied=False, built=False, tests={}, empty_patch=True),
                gold_patch,
                info,
            )

        runtime = runtime_for(ctx, trusted=gold)
        base["runtime"] = runtime.name
        spec = workspace_spec(instance, ctx)
        ctx.progress(f"{instance.instance_id}: preparing workspace ({runtime.name})")
        ws = runtime.prepare(spec, log_dir=evidence)
        try:
            found, exhausted = self._run_candidate(ws, instance, model_patch, info, test_patch, ctx, gold=gold)
            if exhausted is not None:  # the reference run gets the limits the candidate's container holds
                ws.close()
                attribute_exhaustion(
                    exhausted,
                    instance,
                    ctx,
                    gold_patch,
                    lambda: runtime.prepare(workspace_spec(instance, ctx), log_dir=evidence),
                    lambda ws: self._run_tests(ws, instance, test_patch, ctx, tag=".reference"),
                )
            judged = judge(instance, evidence)
        finally:
            _release(ws)  # after the evidence and the verdict (or an error): removed in the background
        if judged.review is not None:
            base["flags"] = [*base["flags"], *judged.review.flags]
            if judged.review.test_files:
                base["test_files_touched"] = list(judged.review.test_files)
        if judged.outcome.policy_violation:
            base["policy_violations"] = judged.outcome.policy_violation.split("; ")
        base["integrity_findings"] = [f.to_dict() for f in judged.integrity]
        if not judged.outcome.applied:
            base["detail"] = apply_failure_detail(found.log if found is not None else "")
        elif judged.detail:
            base["detail"] = judged.detail
        return self._finish(instance, base, judged.outcome, gold_patch, info)

    def _run_candidate(
        self,
        ws: Workspace,
        instance: IssueInstance,
        model_patch: str,
        info: PatchInfo,
        test_patch: str,
        ctx: EvalContext,
        *,
        gold: bool,
    ) -> tuple[_Applied | None, InfraError | None]:
        """The candidate's patch, then the tests when it applied: ``(what applying left, or None when the
        limits ran out first; the exhausted limits, or None)``. A candidate failure is written to the evidence.

        Raises:
            InfraError: anything but exhausted limits, and those too under the gold patch.
        """
        found: _Applied | None = None
        try:
            found = self._apply_candidate(ws, instance, model_patch, info, test_patch, ctx)
            if found.ok:  # tools never applied, runner configuration restored: the run is the project's own
                self._run_tests(ws, instance, test_patch, ctx, tag="", candidate=True)
        except InfraError as exc:
            if exc.kind not in RESOURCE_KINDS or gold:
                raise
            return found, exc  # the candidate's, unless the reference fix exhausts the same limits
        except CandidateFailure as failure:
            atomic_write_json(
                ctx.evidence_dir / CANDIDATE_FAILURE, {"reason": failure.reason.value, "detail": failure.detail}
            )
        return found, None

    def _apply_candidate(
        self,
        ws: Workspace,
        instance: IssueInstance,
        model_patch: str,
        info: PatchInfo,
        test_patch: str,
        ctx: EvalContext,
    ) -> _Applied:
        """Drop the sections that touch tools, apply the rest, restore test files and runner configuration
        to base, and write the policy's inputs and findings to the evidence (see :mod:`.judge`)."""
        evidence = ctx.evidence_dir
        fw = frameworks.get(instance.framework)
        key = base_memo.base_key(ws)  # before anything: the image's own files, the same for every candidate
        before = base_memo.config(key, fw.name, lambda: _read_base_config(fw, ws))
        ignored, tracked = base_memo.status(key, info.paths, lambda names: base_status(ws, names))
        tools = {
            line for line, _ in review(info, fw, before=before, after=before, ignored=ignored, tracked=tracked).tools
        }
        _write(
            evidence, "dropped_sections.diff", select_sections(model_patch, lambda c: c.line in tools) if tools else ""
        )
        kept = select_sections(model_patch, lambda c: c.line not in tools) if tools else model_patch
        if kept.strip() and test_patch.strip() and hasattr(ws, "stage_patches"):
            ws.stage_patches({"model_patch": kept, "test_patch": test_patch})  # both copied in at once
        applied = (
            ws.apply_patch(kept, name="model_patch")
            if kept.strip()
            else ApplyResult(ok=True, method=None, log="every section touched the runner's tools; nothing applied")
        )
        _write(evidence, "model_patch.apply.log", applied.log)
        atomic_write_json(
            evidence / "apply.json", {"ok": applied.ok, "method": applied.method, "dropped_sections": len(tools)}
        )
        after = frameworks.read_config(fw, ws.read_files) if applied.ok else before
        plan_command = self._plan_command(ws, instance, test_patch) if applied.ok else ""
        save_policy_inputs(
            evidence,
            before=before,
            after=after,
            ignored=ignored,
            tracked=tracked,
            plan_command=plan_command,
            integrity_mode=str(ctx.options.get("mb_integrity") or "report"),
        )
        found = review(
            info, fw, before=before, after=after, ignored=ignored, tracked=tracked, plan_command=plan_command
        )
        atomic_write_json(evidence / "policy.json", found.to_dict())
        if applied.ok and found.restore:
            ws.restore_paths(found.restore)
        if applied.ok:
            _write(evidence, "candidate_as_run.diff", ws.diff())  # what the tests saw of the candidate
        return _Applied(ok=applied.ok, log=applied.log, violations=tuple(found.violations))

    def _plan_command(self, ws: Workspace, instance: IssueInstance, test_patch: str) -> str:
        """The command the plan would run with the candidate applied (which package.json scripts matter)."""
        try:
            return self._plan(ws, instance, test_patch).command
        except InfraError:
            return instance.test_command or ""

    def _plan(self, ws: Workspace, instance: IssueInstance, test_patch: str) -> frameworks.TestPlan:
        """The framework's plan for the test patch's files, from the workspace's planning files.

        Raises:
            InfraError: ``plan_failed`` when no plan can be made.
        """
        test_files = self._test_files(instance, test_patch)
        fw = frameworks.get(instance.framework)
        try:
            return fw.plan(
                _planning_files(ws, fw),
                test_files,
                test_command=instance.test_command,
                test_targets=instance.test_targets,
                test_results=instance.test_results,
                environment=instance.environment,
            )
        except ValueError as exc:  # PlanError, RecipeError: the instance cannot be run as described
            raise InfraError(InfraKind.PLAN_FAILED, f"cannot plan the test run: {exc}") from exc

    @staticmethod
    def _test_files(instance: IssueInstance, test_patch: str) -> list[str]:
        """The files the test patch adds or changes (what the plan targets)."""
        if not test_patch.strip():
            return []
        test_info = parse_patch(test_patch, name=f"test_patch of {instance.instance_id}")
        return [f.path for f in test_info.files if f.status.value != "deleted"]

    def _run_tests(
        self,
        ws: Workspace,
        instance: IssueInstance,
        test_patch: str,
        ctx: EvalContext,
        *,
        tag: str,
        apply: bool = True,
        candidate: bool = False,
    ) -> tuple[RunResult, ParseResult, bool, str | None]:
        """Apply the test patch (unless ``apply`` is False), run the plan that targets its test files, parse.

        Returns ``(run, parsed, production built, why the report disagrees with the runner or None)``.

        Raises:
            CandidateFailure: ``test_patch_conflict`` (``candidate`` runs): the test patch does not apply
                after the candidate's patch but applies at base.
            InfraError: the test patch does not apply at base either, and the runtime's kinds.
        """
        evidence = ctx.evidence_dir
        if test_patch.strip() and apply:
            applied = ws.apply_patch(test_patch, name=f"test_patch{tag}")
            _write(evidence, f"test_patch{tag}.apply.log", applied.log)
            if not applied.ok and candidate and hasattr(ws, "applies_at_base"):
                at_base, log = ws.applies_at_base(test_patch)
                _write(evidence, f"test_patch{tag}.base_check.log", log)
                if at_base:
                    raise CandidateFailure(
                        Reason.TEST_PATCH_CONFLICT,
                        apply_failure_detail(applied.log).replace(
                            "see model_patch.apply.log", f"see test_patch{tag}.apply.log"
                        ),
                    )
            if not applied.ok:
                raise InfraError(
                    InfraKind.TEST_PATCH_APPLY_FAILED, "the instance's test patch does not apply", log=applied.log
                )
        if (probes := harness_probes(instance.framework)) and hasattr(ws, "list_ahead"):
            ws.list_ahead(probes)  # the harness's probes are listed with the planning files: one find, not two
        plan = self._plan(ws, instance, test_patch)
        plan = harden_plan(plan, ws.results_root)  # own results outside the repo, runner without a package manager
        _write(evidence, f"cleared_results{tag}.txt", "".join(f"{n}\n" for n in ws.clear_files(plan.result_globs)))
        timeout = float(instance.timeout_s or ctx.options.get("mb_instance_timeout") or 1800)
        harness = jest_harness_for(ws, plan)
        planted = None if harness else canary_for(ws, plan, self._test_files(instance, test_patch))
        command = harness.command if harness else planted[1] if planted else plan.command
        if planted is not None:
            atomic_write_json(evidence / f"canary{tag}.json", planted[0].to_dict())
        ctx.progress(f"{instance.instance_id}: running the tests{tag and f' ({tag[1:]})'}; command: {command}")
        _write(evidence, f"commands{tag}.txt", command + "\n")
        refused: str | None = None
        if harness is not None and ctx.options.get("mb_oracle", "on") == "off":  # no recorder (docs/oracle.md)
            harness = jest_harness.with_oracle(harness, on=False)
        if harness is not None:  # launcher, canaries, harness runner, keyed channel (frameworks.react_native.harness)
            run, refused = run_harnessed(ws, harness, evidence, tag=tag, timeout_s=timeout)
        else:
            run = ws.run(command, timeout_s=timeout, network=False)
        _write(evidence, f"test_output{tag}.log", run.output)
        root_dir = str(getattr(ws, "root", "") or "") or None
        limit = grading.time_limit_words(timeout, from_instance=bool(instance.timeout_s))
        atomic_write_json(
            evidence / f"run{tag}.json",
            {**run.to_dict(), "output": None, "plan": plan.to_dict(), "root_dir": root_dir, "time_limit": limit},
        )
        if refused:  # the launcher's status, written before any code of the project ran: the harness's failure
            raise InfraError(InfraKind.RUNNER_HARNESS_FAILED, refused, log=run.output[-4000:])
        files = ws.read_files(plan.result_globs)
        for rel, data in files.items():
            write_under(evidence / f"results{tag}", rel, data)
        parsed, built = parse_run(instance.framework, plan, run.output, files, root_dir=root_dir)
        tampered = cross_check_run(plan.parser, run.exit_code, parsed, run.output)
        if harness is not None:  # the canaries are the harness's tests, never graded
            parsed = jest_harness.without_canaries(parsed, harness.to_dict())
        if planted is not None:
            parsed = without_ids(parsed, planted[0].ids)
        atomic_write_json(
            evidence / f"parsed{tag}.json",
            {
                **parsed.to_dict(),
                "production_built": built,
                "cross_check": tampered,
                "rejected_names": [dataclasses.asdict(r) for r in getattr(ws, "rejected", [])],
            },
        )
        return run, parsed, built, tampered

    def _finish(
        self,
        instance: IssueInstance,
        base: dict[str, Any],
        outcome: grading.RunOutcome,
        gold_patch: str | None,
        info: PatchInfo | None,
    ) -> dict[str, Any]:
        verdict, id_matching = verdict_of(instance, outcome)  # the one grading step (judge.verdict_of)
        gold, _ = dialects.gold_for_run(instance, outcome.tests)
        if id_matching:
            base = {**base, "id_matching": id_matching}
        gold_info = _safe_parse(gold_patch)
        gold_files = sorted(gold_info.paths) if gold_info else []
        pred_files = sorted(info.paths) if info else []
        loc = grading.localization(gold_files, pred_files) if gold_files else None
        counts = verdict.to_dict().get("counts", {})
        properties: dict[str, Any] = {
            "verdict": verdict.reason.value,
            "f2p_passed": counts.get("FAIL_TO_PASS", {}).get("passed", 0),
            "f2p_total": len(gold["FAIL_TO_PASS"]),
            "n2p_passed": counts.get("NONE_TO_PASS", {}).get("passed", 0),
            "n2p_total": len(gold["NONE_TO_PASS"]),
            "p2p_passed": counts.get("PASS_TO_PASS", {}).get("passed", 0),
            "p2p_total": len(gold["PASS_TO_PASS"]),
            "p2f": len(verdict.failing.get("PASS_TO_PASS", [])),
            "flags": ",".join(base["flags"]),
        }
        if "integrity_findings" in base:  # the static audit ran (a patch that parsed and reached a workspace)
            properties["integrity_count"] = len(base["integrity_findings"])
        if loc is not None:
            properties.update(
                loc_precision=round(loc.precision, 6), loc_recall=round(loc.recall, 6), loc_f1=round(loc.f1, 6)
            )
        if gold_info is not None:
            properties["gold_files"] = len(gold_info.files)
            properties["gold_lines"] = gold_info.lines_changed
            artifacts = sorted({f.artifact.value for f in gold_info.files})
            properties["gold_artifacts"] = "+".join(artifacts)
        detail = grading.lead_with_cause(verdict, base.get("detail"))
        return {
            **base,
            "detail": detail,
            "reason": verdict.reason.value,
            "passed": verdict.resolved,
            "retryable": verdict.reason.is_infra,
            "verdict": verdict.to_dict(),
            "failing": {k: [f"{t} ({s.value})" for t, s in v.items()] for k, v in verdict.failing.items() if v},
            "localization": {"gold_files": gold_files, "pred_files": pred_files, **(loc.to_dict() if loc else {})},
            "properties": properties,
        }

    # ------------------------------------------------------------------------------------- validate

    def _validate(
        self, instance: IssueInstance, prediction: Prediction | None, ctx: EvalContext, base: dict[str, Any]
    ) -> dict[str, Any]:
        """Run base / test / fix configurations (with the gold patch) and propose the gold lists."""
        repos = repo_cache(ctx.options, ctx.run_id)
        gold_patch, test_patch = resolve_patches(instance, repos)
        _write(ctx.evidence_dir, "gold_patch.diff", gold_patch)
        _write(ctx.evidence_dir, "test_patch.diff", test_patch)
        runtime = runtime_for(ctx, trusted=True)  # the benchmark's own gold patch
        base["runtime"] = runtime.name
        spec = workspace_spec(instance, ctx)
        runs = max(1, int(ctx.options.get("mb_validate_runs") or 1))
        configs: dict[str, list[grading.RunStates]] = {"base": [], "test": [], "fix": []}
        for attempt in range(runs):
            for config in ("base", "test", "fix"):
                tag = f".{config}.{attempt + 1}"
                ws = runtime.prepare(spec, log_dir=ctx.evidence_dir)
                try:
                    if config == "fix":
                        applied = ws.apply_patch(gold_patch, name=f"gold_patch{tag}")
                        if not applied.ok:
                            raise InfraError(
                                InfraKind.GOLD_PATCH_APPLY_FAILED, "the gold patch does not apply", log=applied.log
                            )
                    # at base the test patch's files are targeted without applying it: absent tests are NONE
                    run, parsed, built, _ = self._run_tests(
                        ws, instance, test_patch, ctx, tag=tag, apply=config != "base"
                    )
                finally:
                    _release(ws)  # this configuration's evidence is written: removed in the background
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
        transitions = grading.transitions(final["test"].tests, final["fix"].tests)
        report = {
            "instance_id": instance.instance_id,
            "valid": validation.valid,
            "problems": list(validation.problems),
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
            "reason": Reason.RESOLVED.value if validation.valid else Reason.UNRESOLVED.value,
            "passed": validation.valid,
            "retryable": False,
            "validation": report,
            "detail": "; ".join(validation.problems),
            "properties": {
                "valid": validation.valid,
                "f2p": len(validation.fail_to_pass),
                "n2p": len(validation.none_to_pass),
                "p2p": len(validation.pass_to_pass),
                "p2f": len(validation.pass_to_fail),
                "flaky": len(flaky),
                "transitions": json.dumps(counts, sort_keys=True),
            },
        }

    # ------------------------------------------------------------------------------------- summary

    def summarize(
        self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The suite's tables (:func:`.summary.summarize`)."""
        from pytest_mobilebench.suites.issue_resolution.summary import summarize

        return summarize(results, options=options)


def _safe_parse(text: str | None) -> PatchInfo | None:
    if not text or not text.strip():
        return None
    try:
        return parse_patch(text)
    except PatchError:
        return None


def regrade(instance: IssueInstance, evidence_dir: Path) -> dict[str, Any]:
    """Re-grade a finished evaluation from its evidence folder, running nothing: :func:`.judge.judge`,
    the live run's own grading step, policy included. Returns the verdict's plain dict.

    Raises:
        FileNotFoundError: the evidence folder lacks the files the live run writes before grading.
    """
    return judge(instance, evidence_dir).verdict.to_dict()


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


def _planning_files(ws: Workspace, fw: frameworks.Framework) -> dict[str, bytes]:
    """The framework's planning files in ``ws``: those whose presence alone the plan reads (the optional
    ``presence_files``, e.g. lockfiles) only listed where the workspace can (``list_files``), as ``b""``."""
    presence = tuple(getattr(fw, "presence_files", ()))
    lister = getattr(ws, "list_files", None)
    if not presence or lister is None:
        return dict(ws.read_files(fw.planning_files))
    files = dict(ws.read_files([p for p in fw.planning_files if p not in presence]))
    return {**files, **{name: b"" for name in lister(presence) if name not in files}}


def _release(ws: Workspace) -> None:
    """Close ``ws`` once nothing reads it again: its container is removed in the background where the
    runtime can (``close_later``: :mod:`pytest_mobilebench.runtime.removals`), else now (``close``)."""
    getattr(ws, "close_later", ws.close)()


def _read_base_config(fw: frameworks.Framework, ws: Workspace) -> dict[str, bytes]:
    """The framework's configuration files at base, read twice (a read that raced the container's start
    once came back empty): the union, or ``InfraError`` when the two reads disagree on a file's bytes."""
    first = frameworks.read_config(fw, ws.read_files)
    getattr(ws, "forget_reads", lambda: None)()  # the second read lists and copies afresh
    second = frameworks.read_config(fw, ws.read_files)
    if any(first[k] != second[k] for k in set(first) & set(second)):
        raise InfraError(InfraKind.WORKSPACE_ERROR, "two reads of the base configuration disagree")
    return {**first, **second}


@final
@dataclasses.dataclass(frozen=True)
class _Applied:
    """What applying the candidate left: whether it applied, the apply log, the policy's violations."""

    ok: bool
    log: str
    violations: tuple[str, ...]


EVALUATOR = IssueResolutionEvaluator()
