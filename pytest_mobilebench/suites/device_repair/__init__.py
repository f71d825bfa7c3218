"""The on-device repair protocol (AppEval; SPEC section 2): ONE target method, two states, locked devices.

Records: :mod:`.records` (``cases/device_repair/*.yaml``). Grading contract: :mod:`.contract`. One item:
:mod:`.flow` (locks, states, retries, attribution) -> :mod:`.execution` (workspace, build, device,
evidence files) -> :mod:`.grading` (the verdict, from the evidence folder). Summary: :mod:`.summary`.
Devices: the ``mb_device_pool`` fixture (:mod:`.fixtures`) over :mod:`pytest_mobilebench.devices`.
Documentation: ``docs/device-repair.md``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench.devices.android import DeviceError
from pytest_mobilebench.devices.baseline import Guard
from pytest_mobilebench.manifest.yamlfile import YamlDocument
from pytest_mobilebench.metrics import hit_at_k, recall_at_k
from pytest_mobilebench.patch import PatchError, parse_patch
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.runtime.base import InfraError, Runtime
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.records import EvalContext, LoadedRecord, ManifestError
from pytest_mobilebench.suites.base import LiveCandidate, SuiteBase
from pytest_mobilebench.suites.declared.device_repair import COLUMNS, MARKERS, OPTIONS, SURFACE
from pytest_mobilebench.suites.device_repair import flow, workroot
from pytest_mobilebench.suites.device_repair.contract import Reason
from pytest_mobilebench.suites.device_repair.grading import check_record, grade_evidence
from pytest_mobilebench.suites.device_repair.records import (
    DeviceRecord,
    canonical_bytes,
    load_manifest,
    record_hash,
)
from pytest_mobilebench.suites.device_repair.summary import K_VALUES, summarize
from pytest_mobilebench.states import InfraKind

__all__ = ["SUITE", "DeviceRepairSuite"]


def localization(ranked: Any, defect_files: Sequence[str]) -> dict[str, float] | None:
    """Hit@k / Recall@k of a prediction's ``ranked_files`` against F (None when it gives none)."""
    if not isinstance(ranked, list) or not all(isinstance(p, str) for p in ranked):
        return None
    out: dict[str, float] = {}
    for k in K_VALUES:
        out[f"hit@{k}"] = float(hit_at_k(ranked, defect_files, k))
        out[f"recall@{k}"] = round(recall_at_k(ranked, defect_files, k), 6)
    return out


def _runtime(record: DeviceRecord, ctx: EvalContext, repos: RepoCache, *, trusted: bool) -> Runtime:
    """``jvm`` plans build on the host (``javac -proc:none`` runs no candidate code) in work trees under the
    process's run folder (:mod:`.workroot`: swept by the next run when this one is killed); ``gradle`` plans run
    the build (the candidate's code) where the run's runtime provider says (the ``mb_runtime`` fixture).

    Raises:
        InfraError: ``platform_unavailable`` for plan kinds without a runtime here; the provider's refusal.
    """
    if record.plan.kind == "jvm":
        from pytest_mobilebench.runtime.local import LocalRuntime

        return ctx.resource(
            "device_repair:local",
            lambda: LocalRuntime(repos, workdir=workroot.claim(ctx.run_id)),
            lambda runtime: workroot.release(runtime.workdir),
        )
    if record.plan.kind == "gradle":
        return ctx.fixture("mb_runtime").get(trusted=trusted)  # type: ignore[no-any-return]
    raise InfraError(
        InfraKind.PLATFORM_UNAVAILABLE, f"plan kind {record.plan.kind!r} needs a macOS / DevEco host, not wired here"
    )


@final
class DeviceRepairSuite(SuiteBase):
    """The ``device_repair`` suite (implements :class:`pytest_mobilebench.suites.base.Suite`)."""

    name = SURFACE.name
    reasons = Reason
    options = OPTIONS
    markers = MARKERS
    columns = COLUMNS
    plots_module = SURFACE.plots
    fixtures = SURFACE.fixtures
    fixture_module = SURFACE.fixture_module
    item_trials = True  # --predictions=live --mb-trials K: one item per trial (report/trials.py)

    def load(self, path: Path, document: Any) -> list[LoadedRecord | ManifestError]:
        """Load one ``cases/device_repair/*.yaml`` (see :mod:`.records`)."""
        if not isinstance(document, YamlDocument):
            document = YamlDocument(path=path, data=dict(document), key_lines={}, item_lines={})
        return load_manifest(document)

    def cache_material(self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]) -> Any:
        """The record's content (evidence is reused only for the same record), without where its repository
        is cloned from (:func:`pytest_mobilebench.records.record_material`); ``--mb-integrity=strict`` is part of it."""
        from pytest_mobilebench.records import record_material

        material = record_material(record.record)
        if prediction is not None and prediction.is_live():
            from pytest_mobilebench.suites.device_repair.live import material as agent_material

            material = {"record": material, "agent": agent_material(options)}
        if options.get("mb_integrity") == "strict":  # declared by issue resolution; strict changes the verdict
            return {"material": material, "integrity": "strict"}
        return material

    def live_model(self, options: Mapping[str, Any]) -> str:
        """The model of ``--predictions=live`` (:func:`.live.live_model`: an agent edits the record's repository
        in a container sandbox; the device is never the agent's).

        Raises:
            ValueError: an agent option or the prompt template is unusable (the message names it).
        """
        from pytest_mobilebench.suites.device_repair.live import live_model

        return live_model(options)

    def summarize(
        self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """See :mod:`.summary`."""
        return summarize(results)

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        """Grade again from ``evidence_dir`` through :func:`.grading.grade_evidence` (the live run's function).

        The item's context (repository, flags, fix size, localization, attempts) comes from its ``result.json``;
        an item that never reached a device (missing / empty / unparsable prediction, infrastructure before
        the first state) has nothing measured to re-grade and keeps its verdict.

        Raises:
            RecordMismatch: the evidence belongs to other record bytes.
            FileNotFoundError: the folder has no ``result.json``.
        """
        live = json.loads((evidence_dir / "result.json").read_text(encoding="utf-8"))
        if not (evidence_dir / "grading.json").is_file():
            check_record(record.record, evidence_dir)
            return {k: v for k, v in live.items() if k in _VERDICT or k in _CONTEXT}
        result = {**{k: live[k] for k in _CONTEXT if k in live}, **grade_evidence(record.record, evidence_dir)}
        result["properties"] = _properties(result)
        return result

    # ------------------------------------------------------------------ evaluate

    def evaluate(self, loaded: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        """Evaluate one prediction (see :mod:`.flow`). Never raises for the candidate's or a device's fault. A
        live item's candidate was made before (:meth:`produce_live`): it comes here as its file prediction."""
        record: DeviceRecord = loaded.record
        started = time.monotonic()
        base = _base_fields(record, ctx.evidence_dir)
        try:
            result = self._evaluate(record, prediction, ctx, base)
        except (InfraError, DeviceError) as exc:
            result = _infra_result(base, exc, ctx.evidence_dir)
        return _closed(result, started, ctx.evidence_dir)

    def produce_live(
        self, loaded: LoadedRecord, prediction: Prediction, ctx: EvalContext
    ) -> LiveCandidate | dict[str, Any]:
        """``--predictions=live``: the agent's patch, from its own sandbox (never the device), as the file
        prediction the run's predictions file holds (:func:`.live.run_agent`); the item's infrastructure result
        when the sandbox, the runtime or the endpoint failed."""
        from pytest_mobilebench.suites.device_repair.live import run_agent

        record: DeviceRecord = loaded.record
        evidence = ctx.evidence_dir
        started = time.monotonic()
        try:
            live = run_agent(record, ctx, prediction.model_name_or_path, prediction.trial)
        except (InfraError, DeviceError) as exc:
            return _closed(_infra_result(_base_fields(record, evidence), exc, evidence), started, evidence)

        def attach(result: dict[str, Any]) -> dict[str, Any]:
            out = live.attach(result, evidence)
            atomic_write_json(evidence / "result.json", out)
            return out

        return LiveCandidate(live.prediction, attach)

    def _evaluate(
        self, record: DeviceRecord, prediction: Prediction | None, ctx: EvalContext, base: dict[str, Any]
    ) -> dict[str, Any]:
        if prediction is None:
            return {
                **base,
                "reason": Reason.MISSING_PREDICTION.value,
                "passed": False,
                "retryable": False,
                "detail": "no prediction for this record",
            }
        raw = prediction.model_patch
        gold = prediction.kind is PredictionKind.GOLD
        loc = localization(prediction.get("ranked_files"), record.defect_files)
        if loc is not None:
            base["localization"] = loc
        if not gold and not str(raw or "").strip():  # a withheld patch (over the sandbox's bound) has no text either
            detail = (
                "the prediction's model_patch is empty"
                if prediction.withheld is None
                else f"the taken patch has over {prediction.withheld.max_bytes} bytes (withheld)"
            )
            return {
                **base,
                "reason": Reason.EMPTY_PATCH.value,
                "passed": False,
                "retryable": False,
                "detail": detail,
                "cause": "no_production_edit",
            }
        repos = RepoCache(
            url_template=ctx.options.get("mb_repo_url_template") or "https://github.com/{owner}/{name}",
            run_id=ctx.run_id,
        )
        p_t, p_f = flow.resolve_patches(record, repos)
        base["fix_lines"] = parse_patch(p_f, name="fix_patch").lines_changed
        flow.write_patches(ctx.evidence_dir, test_patch=p_t, fix_patch=p_f)
        candidate = None
        if not gold:
            flow.write_patches(ctx.evidence_dir, candidate=str(raw))
            try:
                candidate = flow.Candidate(record, str(raw))
            except PatchError as exc:
                return {
                    **base,
                    "reason": Reason.PATCH_APPLY_FAILED.value,
                    "passed": False,
                    "retryable": False,
                    "detail": str(exc),
                    "cause": "build_regression",
                    "patch_valid": False,
                }
            base["flags"] = candidate.flags
        if record.platform != "android":
            raise InfraError(InfraKind.PLATFORM_UNAVAILABLE, f"{record.platform} records need a macOS / DevEco host")
        pool = ctx.fixture("mb_device_pool")
        if pool is None:
            raise InfraError(InfraKind.NO_DEVICE, "no device pool: give --mb-devices SERIAL,... or --mb-avd NAME[xN]")
        owner = f"{ctx.run_id}/{record.instance_id}/{prediction.model_name_or_path or 'unnamed'}"
        return self._on_device(record, candidate, p_t, p_f, pool, owner, ctx, base)

    def _on_device(
        self,
        record: DeviceRecord,
        candidate: flow.Candidate | None,
        p_t: str,
        p_f: str,
        pool: Any,
        owner: str,
        ctx: EvalContext,
        base: dict[str, Any],
    ) -> dict[str, Any]:
        evidence = ctx.evidence_dir
        timeout = float(ctx.options.get("mb_lease_timeout") or 1800)
        repos = RepoCache(
            url_template=ctx.options.get("mb_repo_url_template") or "https://github.com/{owner}/{name}",
            run_id=ctx.run_id,
        )
        runtime = _runtime(record, ctx, repos, trusted=candidate is None)
        spec = flow.workspace_spec(record, ctx.options, ctx.run_id)
        commands = evidence / "device_commands.log"
        with pool.repository(record.repo, timeout_s=timeout), pool.lease(owner, timeout_s=timeout) as device:
            device.log = lambda line: _append(commands, line)
            guard = Guard()
            runner = flow.StateRunner(
                record,
                runtime=runtime,
                spec=spec,
                device=device,
                evidence=evidence,
                retries=int(ctx.options.get("mb_device_retries", 2)),
                progress=ctx.progress,
                baseline=guard,
            )
            if candidate is None:
                flow.gold_states(runner, p_t, p_f)
                mode, extra = "gold", {}
            else:
                flow.candidate_state(runner, candidate, p_t, p_f)
                mode = "candidate"
                extra = {
                    "candidate": {"sha256": candidate.sha256, "lines": candidate.lines, "classes": candidate.classes}
                }
            base["device"] = device.serial
            if guard.baseline is not None:
                atomic_write_json(evidence / "device_baseline.json", guard.baseline.to_dict())
            if runner.quarantine is not None:
                base["quarantine"] = {**runner.quarantine, "owner": owner}
                _quarantine(pool, device.serial, base["quarantine"])
        finals = {a["state"]: a["folder"] for a in runner.attempts}
        extra["integrity"] = str(ctx.options.get("mb_integrity") or "report")
        atomic_write_json(
            evidence / "grading.json",
            {"mode": mode, "finals": finals, "shadowing": runner.shadowing, "quarantine": runner.quarantine, **extra},
        )
        graded = grade_evidence(record, evidence)
        damage = sorted({d for a in runner.attempts if a["state"] == "candidate" for d in a.get("device_damage", [])})
        if damage:
            base["flags"] = [*base["flags"], "left_device_damage"]
            base["device_damage"] = damage
        if runner.shadowing:
            base["flags"] = [*base["flags"], "shadows_test_stack"]
        from pytest_mobilebench.suites.device_repair import flake

        state = flake.decisive_state(mode)
        flaky = flake.passed_flaky(bool(graded["passed"]), runner.attempts, state)
        if flaky:
            base["flags"] = [*base["flags"], "passed_flaky"]
        return {
            **base,
            **graded,
            "attempts": len(runner.attempts),
            "attempt_log": runner.attempts,
            "test_attempts": flake.attempts_per_test(runner.attempts, state, record.target),
            "passed_flaky": flaky,
        }


#: result fields that describe the item rather than grade it (kept by a re-grade)
_CONTEXT = (
    "instance_id",
    "suite",
    "model_name_or_path",
    "evidence_dir",
    "repo",
    "construction",
    "platform",
    "record_sha256",
    "flags",
    "fix_lines",
    "localization",
    "device",
    "attempts",
    "attempt_log",
    "duration_s",
    "cause",
    "patch_valid",
    "test_attempts",
    "passed_flaky",
    "quarantine",
    "device_damage",
)
_VERDICT = ("reason", "passed", "retryable", "infra_kind", "policy_kind", "detail", "properties")


def _quarantine(pool: Any, serial: str, info: Mapping[str, Any]) -> None:
    """Take ``serial`` out of the pool for the rest of the run (a pool a conftest brings may not support it)."""
    mark = getattr(pool, "quarantine", None)
    if mark is not None:
        mark(serial, info)


def _append(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def _properties(result: Mapping[str, Any]) -> dict[str, Any]:
    """The flat junit properties of a result."""
    props: dict[str, Any] = {
        "verdict": result["reason"],
        "q_outcome": result.get("q_outcome", "not_run"),
        "fail_to_pass": bool(result.get("fail_to_pass", False)),
        "regression_safe": bool(result.get("regression_safe", False)),
        "patch_valid": bool(result.get("patch_valid", False)),
        "attempts": int(result.get("attempts", 0)),
        "passed_flaky": bool(result.get("passed_flaky", False)),
        "construction": result.get("construction", ""),
        "flags": ",".join(result.get("flags") or []),
        "duration_s": result.get("duration_s", 0.0),
    }
    if isinstance(result.get("integrity_findings"), list):
        props["integrity_count"] = len(result["integrity_findings"])
    for key in ("infra_kind", "policy_kind", "cause", "device", "fix_lines", "accepted"):
        if result.get(key) is not None:
            props[key] = result[key]
    for key, value in (result.get("localization") or {}).items():
        props[key] = value
    return props


def _base_fields(record: DeviceRecord, evidence: Path) -> dict[str, Any]:
    """The fields every result of ``record`` starts with; the record and its hash written to the evidence."""
    atomic_write_text(evidence / "record.json", canonical_bytes(record).decode())
    atomic_write_text(evidence / "record.sha256", record_hash(record) + "\n")
    return {
        "repo": record.repo,
        "construction": record.construction,
        "platform": record.platform,
        "record_sha256": record_hash(record),
        "flags": [],
    }


def _infra_result(base: dict[str, Any], exc: InfraError | DeviceError, evidence: Path) -> dict[str, Any]:
    """An infrastructure failure (runtime, sandbox, endpoint or device) as the item's retryable result."""
    atomic_write_text(evidence / "infra_error.log", f"{exc}\n\n{getattr(exc, 'log', '')}")
    return {
        **base,
        "reason": Reason.INFRA_ERROR.value,
        "passed": False,
        "retryable": True,
        "infra_kind": exc.kind,
        "detail": str(exc),
        "cause": "external_infrastructure",
    }


def _closed(result: dict[str, Any], started: float, evidence: Path) -> dict[str, Any]:
    """``result`` with its duration (seconds since ``started``) and properties, written as ``result.json``."""
    result["duration_s"] = round(time.monotonic() - started, 3)
    result["properties"] = _properties(result)
    atomic_write_json(evidence / "result.json", result)
    return result


SUITE = DeviceRepairSuite()
