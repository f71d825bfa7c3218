"""One device-repair item end to end: patches, locks, states with retries, attribution, verdict.

* gold prediction: the acceptance contract, S_bug = base + p_t and S_fix = base + p_t + p_f on ONE leased
  device (the device lock is held around both states); the item passes when the record is accepted.
* a candidate: base + candidate (its test-file edits restored to base and flagged), then privately
  p_t; build, install, run q then Q. An infrastructure outcome is retried (``--mb-device-retries``, at
  most 2) with the SAME candidate bytes, each attempt in a new folder. A candidate-reachable outcome
  (crash, deadline, install failure, ``INSTRUMENTATION_FAILED``: :data:`~.contract.CANDIDATE_REACHABLE`) that survives
  the retries is checked against the reference state S_fix on the same device: if the reference passes, the outcome
  is the candidate's and counts in Pass@1's denominator; otherwise it stays infrastructure.
* after every attempt the device is restored to the lease's baseline (:mod:`pytest_mobilebench.devices.baseline`),
  so a retry, the reference run and the next item never run on what a candidate left; an attempt after which
  the device cannot be restored ends the item there (``StateRunner.quarantine``), charged to that attempt.

The repository lock is taken before the device lock (:class:`~pytest_mobilebench.devices.pool.DevicePool`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.devices.android import AndroidDevice
from pytest_mobilebench.devices.baseline import Guard
from pytest_mobilebench.artifacts import Artifact, artifact_type
from pytest_mobilebench.patch import parse_patch, split_patch
from pytest_mobilebench.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.runtime.base import Runtime, WorkspaceSpec
from pytest_mobilebench.runtime.repos import RepoCache, repo_url
from pytest_mobilebench.suites.device_repair.contract import (
    CANDIDATE_REACHABLE,
    StateOutcome,
    TargetOutcome,
    state_infra_kind,
)
from pytest_mobilebench.suites.device_repair.execution import (
    Built,
    Patch,
    run_state,
    shadowing_entries,
)
from pytest_mobilebench.suites.device_repair.records import DeviceRecord

__all__ = [
    "Candidate",
    "StateRunner",
    "candidate_state",
    "classify_paths",
    "gold_states",
    "resolve_patches",
    "workspace_spec",
    "write_patches",
]

MAX_RETRIES = 2
#: toolchain keys of the plan that the runtimes' environment record pins (the others are documentation)
TOOLCHAIN_PINS = ("jdk", "android_sdk", "build_tools", "gradle")


def resolve_patches(record: DeviceRecord, repos: RepoCache) -> tuple[str, str]:
    """``(p_t, p_f)``: inline, or ``git diff base fix_commit`` split by the record's test roots.

    Raises:
        pytest_mobilebench.runtime.base.InfraError: the repository or a commit cannot be fetched.
    """
    if record.test_patch is not None and record.fix_patch is not None:
        return record.test_patch, record.fix_patch
    assert record.fix_commit is not None
    diff = repos.diff(record.repo, record.base_commit, record.fix_commit, url=record.repo_url)
    fix, tests = split_patch(diff, record.is_test_path, name=f"fix_commit of {record.instance_id}")
    return tests, fix


def _matches(path: str, fragments: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f) or f in path or path.endswith(f) for f in fragments)


def classify_paths(record: DeviceRecord, paths: Sequence[str]) -> dict[str, list[str]]:
    """Split touched paths into ``tests``, ``build_config``, ``generated``, ``docs`` (the artifact taxonomy's
    documentation, :func:`pytest_mobilebench.artifacts.artifact_type`) and ``production`` (the rest)."""
    out: dict[str, list[str]] = {"tests": [], "build_config": [], "generated": [], "docs": [], "production": []}
    for path in sorted(set(paths)):
        if record.is_test_path(path):
            out["tests"].append(path)
        elif _matches(path, record.build_config):
            out["build_config"].append(path)
        elif _matches(path, record.plan.generated):
            out["generated"].append(path)
        elif artifact_type(path) is Artifact.DOCS:
            out["docs"].append(path)
        else:
            out["production"].append(path)
    return out


class Candidate:
    """A candidate patch, parsed once: its bytes' hash, touched paths and their classes.

    Raises:
        PatchError: the text is not a patch (the caller reports ``patch_apply_failed``).
    """

    def __init__(self, record: DeviceRecord, text: str) -> None:
        self.text = text
        self.sha256 = hashlib.sha256(text.encode()).hexdigest()
        info = parse_patch(text, name=f"candidate patch of {record.instance_id}")
        self.paths = sorted(info.paths)
        self.lines = info.lines_changed
        self.classes = classify_paths(record, self.paths)

    @property
    def flags(self) -> list[str]:
        """Policy flags: the candidate edits tests, build configuration or generated files."""
        names = {"tests": "edits_tests", "build_config": "edits_build_config", "generated": "edits_generated_files"}
        return [flag for key, flag in names.items() if self.classes[key]]


class StateRunner:
    """Runs states of one record on one leased device, with retries, into ``evidence/states/<state>/attempt-N``.

    A retry after a device-side failure reuses the artefacts its state already built (the same candidate's
    bytes; ``facts.json`` says ``build_reused_from``); a retry after a build-side failure builds again."""

    def __init__(
        self,
        record: DeviceRecord,
        *,
        runtime: Runtime,
        spec: WorkspaceSpec,
        device: AndroidDevice,
        evidence: Path,
        retries: int,
        progress: Callable[[str], None],
        baseline: Guard | None = None,
    ) -> None:
        self.record, self.runtime, self.spec, self.device = record, runtime, spec, device
        self.evidence, self.progress = evidence, progress
        self.retries = max(0, min(MAX_RETRIES, retries))
        self.attempts: list[dict[str, Any]] = []
        self.shadowing: list[str] = []
        self.baseline = baseline
        #: the attempt after which the device could not be restored (it then runs nothing more): ``{"state",
        #: "attempt", "folder", "damage", "remaining"}``, else None
        self.quarantine: dict[str, Any] | None = None

    def run(self, state: str, patches: Sequence[Patch], *, reference: bool) -> StateOutcome:
        """Run ``state``, retrying infrastructure outcomes up to ``retries`` times with the same patches."""
        digest = hashlib.sha256("\0".join(p.text for p in patches).encode()).hexdigest()
        outcome: StateOutcome | None = None
        built: Built | None = None
        for attempt in range(1, self.retries + 2):
            out = self.evidence / "states" / state / f"attempt-{attempt}"
            outcome, built = run_state(
                state,
                self.record,
                patches,
                runtime=self.runtime,
                spec=self.spec,
                device=self.device,
                out=out,
                progress=self.progress,
                prebuilt=built,
                baseline=self.baseline,
            )
            if built is not None:
                self.shadowing = sorted(
                    set(self.shadowing) | set(shadowing_entries(built.artefacts["app"], built.artefacts["test"]))
                )
            kind = state_infra_kind(outcome, reference=reference)
            folder = out.relative_to(self.evidence).as_posix()
            restored = (
                json.loads((out / "restore.json").read_text(encoding="utf-8"))
                if (out / "restore.json").is_file()
                else {}
            )
            self.attempts.append(
                {
                    **outcome.to_dict(),
                    "state": state,
                    "attempt": attempt,
                    "patches_sha256": digest,
                    "infra_kind": kind,
                    "folder": folder,
                    "device_damage": restored.get("damage", []),
                }
            )
            atomic_write_json(self.evidence / "attempts.json", self.attempts)
            if restored.get("remaining") or restored.get("unhealthy"):
                self.quarantine = {
                    "state": state,
                    "attempt": attempt,
                    "folder": folder,
                    "serial": self.device.serial,
                    "damage": restored["damage"],
                    "remaining": restored["remaining"],
                    "unhealthy": restored.get("unhealthy", []),
                }
                self.progress(
                    f"{self.record.instance_id}: {state} attempt {attempt}: device {self.device.serial} "
                    "could not be restored: quarantined"
                )
                break
            if kind is None:
                break
            self.progress(f"{self.record.instance_id}: {state} attempt {attempt}: infrastructure ({kind})")
        assert outcome is not None
        return outcome


def workspace_spec(record: DeviceRecord, options: Mapping[str, Any], run_id: str) -> WorkspaceSpec:
    """The runtime's view of a record."""
    url = record.repo_url or repo_url(
        options.get("mb_repo_url_template") or "https://github.com/{owner}/{name}", record.repo
    )
    pins = {k: v for k, v in record.plan.toolchain.items() if k in TOOLCHAIN_PINS}
    return WorkspaceSpec(
        instance_id=record.instance_id,
        repo=record.repo,
        base_commit=record.base_commit,
        repo_url=url,
        environment={"framework": record.platform, **pins},
        run_id=run_id,
    )


def gold_states(runner: StateRunner, p_t: str, p_f: str) -> tuple[StateOutcome, StateOutcome | None]:
    """S_bug and S_fix (reference states: a build failure there is infrastructure). S_fix is not run
    (None) when S_bug stayed infrastructure through its retries: the item is infrastructure anyway."""
    s_bug = runner.run("S_bug", [Patch("test_patch", p_t)], reference=True)
    if state_infra_kind(s_bug, reference=True) or runner.quarantine:
        return s_bug, None
    s_fix = runner.run("S_fix", [Patch("test_patch", p_t), Patch("fix_patch", p_f)], reference=True)
    return s_bug, s_fix


def candidate_state(runner: StateRunner, candidate: Candidate, p_t: str, p_f: str) -> tuple[StateOutcome, bool]:
    """The candidate state, and whether a persisting candidate-reachable outcome was attributed to it."""
    patches = [Patch("candidate", candidate.text, restore=tuple(candidate.classes["tests"])), Patch("test_patch", p_t)]
    outcome = runner.run("candidate", patches, reference=False)
    kind = state_infra_kind(outcome, reference=False)
    if kind not in CANDIDATE_REACHABLE or runner.quarantine:  # a device that could not be restored runs nothing more
        return outcome, False
    reference = runner.run("reference", [Patch("test_patch", p_t), Patch("fix_patch", p_f)], reference=True)
    healthy = state_infra_kind(reference, reference=True) is None and reference.target is TargetOutcome.PASSED
    return outcome, healthy


def write_patches(evidence: Path, **patches: str) -> None:
    """Keep the item's patches in its evidence folder."""
    for name, text in patches.items():
        atomic_write_text(evidence / f"{name}.diff", text)
