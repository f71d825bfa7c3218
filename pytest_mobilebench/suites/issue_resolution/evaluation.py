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

``--mb-validate`` with ``--predictions=gold`` runs the three configurations of MobileDev-Bench through this
module's test step and proposes the gold lists (:mod:`.validation`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, final

from pytest_mobilebench import frameworks
from pytest_mobilebench.suites.issue_resolution import grading
from pytest_mobilebench.suites.issue_resolution import base_memo, dialects
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance, invalid_source
from pytest_mobilebench.frameworks.react_native import harness as jest_harness
from pytest_mobilebench.frameworks.react_native.harness import without_ids
from pytest_mobilebench.parsers import ParseResult
from pytest_mobilebench.patch import PatchError, PatchInfo, parse_patch, select_sections
from pytest_mobilebench.suites.issue_resolution.policy import PatchLimits, review, size_findings, withheld_finding
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.files import atomic_write_json, atomic_write_text, write_under
from pytest_mobilebench.runtime.base import (
    ApplyResult,
    EnvironmentUnavailable,
    InfraError,
    NotInRepository,
    RunResult,
    Workspace,
)
from pytest_mobilebench.runtime.provider import repo_cache
from pytest_mobilebench.states import Reason
from pytest_mobilebench.trust import cross_check_run, harden_plan
from pytest_mobilebench.records import EvalContext, LoadedRecord
from pytest_mobilebench.suites.declared import issue_resolution as surface
from pytest_mobilebench.suites.issue_resolution.rates import headline, infra_callouts
from pytest_mobilebench.suites.issue_resolution.unavailable import unavailable_result
from pytest_mobilebench.suites.issue_resolution.audit import audit_instance
from pytest_mobilebench.suites.issue_resolution.validation import validate
from pytest_mobilebench.suites.issue_resolution.workspaces import release, resolve_patches, runtime_for, workspace_spec
from pytest_mobilebench.suites.issue_resolution.attribution import (
    CANDIDATE_FAILURE,
    RESOURCE_KINDS,
    CandidateFailure,
    apply_failure_detail,
    attribute_exhaustion,
    canary_for,
    harness_probes,
    jest_harness_for,
    unharnessed_flags,
    run_harnessed,
)
from pytest_mobilebench.suites.issue_resolution.judge import (
    base_status,
    judge,
    parse_run,
    ungradable,
    ungradable_detail,
    save_policy_inputs,
    verdict_of,
)
from pytest_mobilebench.states import InfraKind

T = TypeVar("T")

__all__ = [
    "base_fields",
    "guarded",
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


def base_fields(instance: IssueInstance, model: str) -> dict[str, Any]:
    """The fields every result of ``instance`` starts with (``flags`` empty, ``model_name_or_path`` ``model``)."""
    return {
        "instance_id": instance.instance_id,
        "suite": surface.SURFACE.name,
        "model_name_or_path": model,
        "repo": instance.repo,
        "framework": instance.framework,
        "difficulty": instance.difficulty,
        "category": instance.category,
        "flags": [],
    }


def guarded(record: LoadedRecord, base: dict[str, Any], ctx: EvalContext, step: Callable[[], T]) -> T | dict[str, Any]:
    """``step()``, its failures turned into results: the environment unavailable (:func:`.unavailable_result`),
    an infrastructure error (``infra_error``, retryable), each with its log in the evidence folder.

    Raises:
        ManifestError: a commit the repository lacks: the instance is invalid, never infra (issue 33, item 3).
    """
    evidence = ctx.evidence_dir
    try:
        return step()
    except NotInRepository as exc:
        raise invalid_source(record, exc) from exc
    except EnvironmentUnavailable as exc:  # neither the candidate's nor infra to retry (issue 30, item 3)
        _write(evidence, "environment_unavailable.log", f"{exc}\n\n{exc.log}")
        return unavailable_result(base, exc)
    except InfraError as exc:
        _write(evidence, "infra_error.log", f"{exc}\n\n{exc.log}")
        return {
            **base,
            "reason": Reason.INFRA_ERROR.value,
            "passed": False,
            "retryable": True,
            "detail": str(exc),
            "infra_kind": exc.kind,
            "properties": {"infra_error": exc.kind},
        }


@final
class IssueResolutionEvaluator:
    """What :class:`~pytest_mobilebench.suites.issue_resolution.IssueResolutionSuite` delegates to: ``evaluate``,
    ``summarize`` and the steps the live, audit and re-grading modules share (``_grade_candidate``,
    ``_run_tests``, ``_finish``). Stateless; one instance, :data:`EVALUATOR`."""

    name = surface.SURFACE.name

    # ------------------------------------------------------------------------------------- evaluate

    def evaluate(self, record: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        """Evaluate one prediction; see the module docstring. Never raises for the candidate's fault. A live
        item's candidate was made before (:func:`.live.produce_live`): it comes here as its file prediction."""
        instance: IssueInstance = record.record
        started = time.monotonic()
        base = base_fields(instance, prediction.model_name_or_path if prediction is not None else "")
        result = guarded(record, base, ctx, lambda: self._dispatch(instance, prediction, ctx, base))
        result["duration_s"] = round(time.monotonic() - started, 3)
        result["properties"]["duration_s"] = result["duration_s"]
        return result

    def _dispatch(
        self, instance: IssueInstance, prediction: Prediction | None, ctx: EvalContext, base: dict[str, Any]
    ) -> dict[str, Any]:
        if ctx.options.get("mb_audit"):
            return audit_instance(self, instance, ctx, base)
        if ctx.options.get("mb_validate"):
            return validate(self, instance, ctx, base)
        return self._grade_candidate(instance, prediction, ctx, base)

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
            release(ws)  # after the evidence and the verdict (or an error): removed in the background
        base["flags"] = [*base["flags"], *unharnessed_flags(evidence)]  # trusted code run without its harness
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
                untrusted = not gold and not ctx.options.get("mb_trust_candidates")
                self._run_tests(
                    ws, instance, test_patch, ctx, tag="", candidate=True, untrusted=untrusted, reference=gold
                )
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
        if kept.strip() and test_patch.strip():
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
        untrusted: bool = False,
        reference: bool = False,
    ) -> tuple[RunResult, ParseResult, bool, str | None]:
        """Apply the test patch (unless ``apply`` is False), run the plan that targets its test files, parse.

        Returns ``(run, parsed, production built, why the report disagrees with the runner or None)``.
        ``untrusted``: a real candidate's run, refused on a workspace without the capability its runner's harness
        needs; trusted code runs there unharnessed, recorded (:func:`.attribution.harnessed`). ``reference``: the
        candidate is the benchmark's own fix (``--predictions=gold``): like the runs of validation (not
        ``candidate``), a run the live grade could not grade is the harness's failure, never a verdict on it.

        Raises:
            CandidateFailure: ``test_patch_conflict`` (``candidate`` runs): the test patch does not apply
                after the candidate's patch but applies at base.
            MissingCapability: ``provider_lacks_capability``: the harness (``untrusted``) or the base check
                (``candidate``) rests on a capability the workspace lacks.
            InfraError: the test patch does not apply at base either, and the runtime's kinds.
        """
        evidence = ctx.evidence_dir
        if test_patch.strip() and apply:
            applied = ws.apply_patch(test_patch, name=f"test_patch{tag}")
            _write(evidence, f"test_patch{tag}.apply.log", applied.log)
            if not applied.ok and candidate:  # whose failure rests on the base check: a workspace without it refuses
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
        if probes := harness_probes(instance.framework):
            ws.list_ahead(probes)  # the harness's probes are listed with the planning files: one find, not two
        plan = self._plan(ws, instance, test_patch)
        plan = harden_plan(plan, ws.results_root)  # own results outside the repo, runner without a package manager
        _write(evidence, f"cleared_results{tag}.txt", "".join(f"{n}\n" for n in ws.clear_files(plan.result_globs)))
        timeout = float(instance.timeout_s or ctx.options.get("mb_instance_timeout") or 1800)
        gate = {"untrusted": untrusted, "evidence": evidence, "tag": tag}  # a missing capability: refused or recorded
        harness = jest_harness_for(ws, plan, **gate)
        planted = None if harness else canary_for(ws, plan, self._test_files(instance, test_patch), **gate)
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
        root_dir = str(ws.root or "") or None
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
                "rejected_names": [dataclasses.asdict(r) for r in ws.rejected],
            },
        )
        if (reference or not candidate) and (ungraded := ungradable(instance, evidence, tag)):  # the benchmark's own
            raise InfraError(InfraKind.RUNNER_HARNESS_FAILED, ungradable_detail(tag, ungraded), log=run.output[-4000:])
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


def _planning_files(ws: Workspace, fw: frameworks.Framework) -> dict[str, bytes]:
    """The framework's planning files in ``ws``: those whose presence alone the plan reads (the optional
    ``presence_files``, e.g. lockfiles) only listed (:meth:`~pytest_mobilebench.runtime.base.Workspace.list_files`),
    as ``b""``."""
    presence = tuple(getattr(fw, "presence_files", ()))
    if not presence:
        return dict(ws.read_files(fw.planning_files))
    files = dict(ws.read_files([p for p in fw.planning_files if p not in presence]))
    return {**files, **{name: b"" for name in ws.list_files(presence) if name not in files}}


def _read_base_config(fw: frameworks.Framework, ws: Workspace) -> dict[str, bytes]:
    """The framework's configuration files at base, read twice (a read that raced the container's start
    once came back empty): the union, or ``InfraError`` when the two reads disagree on a file's bytes."""
    first = frameworks.read_config(fw, ws.read_files)
    ws.forget_reads()  # the second read lists and copies afresh
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
