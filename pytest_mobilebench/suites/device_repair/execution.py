"""Side effects of one state attempt: workspace, patches, build, artefacts, device, evidence files.

One attempt of one state writes, in its own fresh folder (nothing is ever overwritten)::

    apply.<name>.log        each patch's apply log          build.log    both build commands' output
    artifacts.json          sha256 / size of app and test   facts.json   applied, built, infra kind, device
    instrument.<i>.txt      each method's raw output        runs.json    [{method, file, timed_out, ...}]
    logcat.<i>.txt          logcat after each method        outcome.json the graded StateOutcome
    canaries.json           the build's known-answer canaries (nonce, per graded method its pair; :mod:`.canaries`)
    restore.json            the device brought back to the lease's baseline: damage found, what remains

After every patch the harness applies its own ``canaries`` patch (two canary methods per graded method,
written into that method's test class); each method then runs as ONE ``am instrument`` call selecting it
and its two canaries. A class whose test source cannot take them is infrastructure (``canary_unplaced``).

:func:`outcome_from_dir` grades a folder from those files alone; the live run calls it too, so a
re-grade (:func:`pytest_mobilebench.suites.device_repair.regrade`) goes through the same function.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shlex
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from pytest_mobilebench.devices.android import AndroidDevice, DeviceError, Requirements
from pytest_mobilebench.devices.baseline import Guard, restore, uids_of
from pytest_mobilebench.parsers.instrumentation import parse_instrumentation
from pytest_mobilebench.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.runtime.base import Runtime, Workspace, WorkspaceSpec
from pytest_mobilebench.suites.device_repair.canaries import (
    CanaryPlan,
    PlantError,
    make_plan,
    plant,
    source_candidates,
)
from pytest_mobilebench.suites.device_repair.contract import (
    StateOutcome,
    classify_target,
)
from pytest_mobilebench.suites.device_repair.records import DeviceRecord

__all__ = ["Built", "Patch", "outcome_from_dir", "run_state", "shadowing_entries"]

#: Class-name prefixes of the test stack. An app artefact that ships classes under them would replace
#: the assertions the target test calls (``org/junit/Assert.class`` with a no-op ``assertEquals``).
TEST_STACK_PREFIXES: Final = (
    "org/junit/",
    "junit/",
    "org/hamcrest/",
    "androidx/test/",
    "android/support/test/",
    "com/google/common/truth/",
    "org/opentest4j/",
    "kotlin/test/",
    "MbInstrumentationRunner",
)


@dataclasses.dataclass(frozen=True)
class Patch:
    """One patch to apply in order. ``restore``: test paths restored to base right after it (the
    candidate's test edits, flagged elsewhere)."""

    name: str
    text: str
    restore: tuple[str, ...] = ()


def _class_entries(jar_bytes: bytes) -> set[str]:
    try:
        with zipfile.ZipFile(io.BytesIO(jar_bytes)) as jar:
            return {n for n in jar.namelist() if n.endswith((".class", ".dex"))}
    except zipfile.BadZipFile:
        return set()


def shadowing_entries(app: bytes, test: bytes = b"") -> list[str]:
    """Classes of the app artefact that would replace what the test runs: the test stack
    (:data:`TEST_STACK_PREFIXES`), or any class the test artefact itself ships (a production source file
    named like the test class, with a passing method of its own). The app's classes win at run time, so
    either one makes the target test run the candidate's code instead of the record's."""
    app_classes = _class_entries(app)
    stack = {n for n in app_classes if n.startswith(TEST_STACK_PREFIXES)}
    return sorted(stack | (app_classes & _class_entries(test)))


def _facts(out: Path, **facts: Any) -> None:
    atomic_write_json(out / "facts.json", facts)


def _build(ws: Workspace, record: DeviceRecord, out: Path) -> tuple[bool, str | None, str, dict[str, bytes]]:
    """Build both artefacts. Returns ``(built, infra kind, detail, {"app": bytes, "test": bytes})``."""
    plan = record.plan
    paths = {"app": plan.app_artifact, "test": plan.test_artifact}
    log: list[str] = []
    ws.run("rm -rf -- " + " ".join(shlex.quote(p) for p in paths.values()), timeout_s=60)
    for label, command in zip(("app", "test"), plan.build_commands()):
        run = ws.run(command, timeout_s=plan.timeouts.build_s)
        log.append(f"$ {command}\n{run.output}\n[exit {run.exit_code}, {run.duration_s}s]\n")
        atomic_write_text(out / "build.log", "".join(log))
        if run.timed_out:
            return False, "build_timeout", f"{label} build exceeded {plan.timeouts.build_s:.0f}s", {}
        if run.exit_code != 0:
            return False, None, f"{label} build failed (exit {run.exit_code}); see build.log", {}
    files = ws.read_files(list(paths.values()))
    found = {label: files[path] for label, path in paths.items() if path in files}
    atomic_write_json(
        out / "artifacts.json",
        {
            label: {"path": paths[label], "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            for label, data in found.items()
        },
    )
    missing = sorted(set(paths) - set(found))
    if missing:
        return False, None, f"artefact(s) missing after the build: {', '.join(paths[m] for m in missing)}", {}
    return True, None, "", found


def _device_runs(
    device: AndroidDevice, record: DeviceRecord, built: Built, out: Path, uids: dict[str, int], guard: Guard | None
) -> dict[str, Any]:
    """Prepare the device, install, run q then each of Q, one ``am instrument`` each (the method and its
    two canaries). Returns device facts; ``uids`` gets the packages' uids once they are installed."""
    artefacts = built.artefacts
    plan = record.plan
    packages = [plan.app_package, plan.test_package]
    device.ensure_online()
    waited = device.wait_boot(timeout_s=plan.timeouts.boot_s, settle_s=plan.settle_s)
    info = device.check(Requirements(plan.device.min_api, plan.device.max_api, plan.device.abis))
    device.wake_and_unlock()
    device.uninstall(packages)
    if guard is not None:
        guard.ensure(device)
    device.install(artefacts["app"], "mb-app.apk", timeout_s=plan.timeouts.install_s)
    device.install(artefacts["test"], "mb-test.apk", timeout_s=plan.timeouts.install_s)
    uids.update({p: u for p, u in uids_of(device.shell("pm list packages -U")[1]).items() if p in packages})
    runs = []
    try:
        for index, method in enumerate((record.target, *record.regression)):
            device.clear(packages)
            device.clear_logcat()
            run = device.instrument(
                built.canaries.pairs[method].selection,
                plan.component,
                wall_s=plan.timeouts.test_s,
                no_output_s=plan.timeouts.no_output_s,
                stop_packages=packages,
            )
            atomic_write_text(out / f"instrument.{index}.txt", run.output)
            atomic_write_text(out / f"logcat.{index}.txt", device.logcat())
            runs.append({"method": method, "file": f"instrument.{index}.txt", **run.to_dict()})
            atomic_write_json(out / "runs.json", runs)
            if run.timed_out:  # the state is already infrastructure (or the candidate's); spare the deadlines
                break
    finally:
        device.uninstall(packages)
    return {"serial": device.serial, "boot_wait_s": round(waited, 3), **info}


@dataclasses.dataclass(frozen=True)
class Built:
    """A state's artefacts from the attempt that built them (reused by its retries: same candidate, same
    bytes, same canaries)."""

    artefacts: dict[str, bytes]
    folder: str
    canaries: CanaryPlan


def _plant_canaries(ws: Workspace, record: DeviceRecord, out: Path) -> CanaryPlan | str:
    """Write the canaries into the workspace (the ``canaries`` patch). Returns the plan, or why not."""
    targets = (record.target, *record.regression)
    try:
        plan = make_plan(targets)
        patterns = sorted({p for t in targets for p in source_candidates(t.split("#", 1)[0])})
        diff = plant(plan, ws.read_files(patterns), record.is_test_path)
    except PlantError as exc:
        return str(exc)
    applied = ws.apply_patch(diff, name="canaries")
    atomic_write_text(out / "apply.canaries.log", applied.log)
    return plan if applied.ok else "the canaries patch does not apply; see apply.canaries.log"


def _workspace_and_build(
    state: str,
    record: DeviceRecord,
    patches: Sequence[Patch],
    *,
    runtime: Runtime,
    spec: WorkspaceSpec,
    out: Path,
    progress: Callable[[str], None],
) -> Built | None:
    """Patches and build in a fresh workspace; None (and ``facts.json`` written) when either failed."""
    progress(f"{record.instance_id}: {state}: workspace")
    ws = runtime.prepare(spec, log_dir=out)
    try:
        for patch in patches:
            applied = ws.apply_patch(patch.text, name=patch.name)
            atomic_write_text(out / f"apply.{patch.name}.log", applied.log)
            if not applied.ok:
                # only the candidate's own patch failing is the candidate's fault; the record's patches are infra
                kind = None if patch.name == "candidate" else f"{patch.name}_apply_failed"
                _facts(out, state=state, applied=False, built=False, failed_patch=patch.name, infra_kind=kind)
                return None
            if patch.restore:
                ws.restore_paths(list(patch.restore))
        canaries = _plant_canaries(ws, record, out)
        if isinstance(canaries, str):
            _facts(out, state=state, applied=True, built=False, infra_kind="canary_unplaced", detail=canaries)
            return None
        progress(f"{record.instance_id}: {state}: build")
        built, kind, detail, artefacts = _build(ws, record, out)
    finally:
        ws.close()
    if not built:
        _facts(out, state=state, applied=True, built=False, infra_kind=kind, detail=detail)
        return None
    return Built(artefacts, out.name, canaries)


def run_state(
    state: str,
    record: DeviceRecord,
    patches: Sequence[Patch],
    *,
    runtime: Runtime,
    spec: WorkspaceSpec,
    device: AndroidDevice,
    out: Path,
    progress: Callable[[str], None],
    prebuilt: Built | None = None,
    baseline: Guard | None = None,
) -> tuple[StateOutcome, Built | None]:
    """One attempt of one state. Returns ``(outcome, the build)``; with ``prebuilt`` (an earlier attempt's
    artefacts of the same patches) the workspace and build are skipped and ``facts.json`` names that attempt.
    With ``baseline`` (the lease's), the device is restored to it after the runs and ``restore.json`` says
    what the attempt left and what could not be repaired.

    Never raises for the code's or the device's fault: those become the outcome.

    Raises:
        InfraError: the workspace could not be prepared (clone, checkout).
    """
    out.mkdir(parents=True, exist_ok=True)
    built = prebuilt or _workspace_and_build(
        state, record, patches, runtime=runtime, spec=spec, out=out, progress=progress
    )
    if built is None:
        return outcome_from_dir(out), None
    reused = {"build_reused_from": built.folder} if prebuilt else {}
    atomic_write_json(out / "canaries.json", built.canaries.to_dict())
    progress(f"{record.instance_id}: {state}: device {device.serial}")
    uids: dict[str, int] = {}
    try:
        info = _device_runs(device, record, built, out, uids, baseline)
    except DeviceError as exc:
        atomic_write_text(out / "device_error.log", f"{exc}\n\n{exc.log}")
        _facts(
            out,
            state=state,
            applied=True,
            built=True,
            infra_kind=exc.kind,
            detail=str(exc),
            serial=device.serial,
            **reused,
        )
        return outcome_from_dir(out), built
    finally:
        _restore(device, record, baseline, uids, out)
    _facts(out, state=state, applied=True, built=True, device=info, **reused)
    return outcome_from_dir(out), built


def _restore(device: AndroidDevice, record: DeviceRecord, guard: Guard | None, uids: dict[str, int], out: Path) -> None:
    """Bring the device back to the lease's baseline and write ``restore.json``
    (:mod:`~pytest_mobilebench.devices.baseline`); nothing when the attempt's packages never got installed (nothing of
    it ran on the device)."""
    if guard is None or guard.baseline is None or not uids:
        return
    done = restore(device, guard.baseline, [record.plan.app_package, record.plan.test_package], uids)
    atomic_write_json(out / "restore.json", {**done.to_dict(), "uids": uids})


def outcome_from_dir(out: Path) -> StateOutcome:
    """Grade one attempt folder from its files (``facts.json``, ``runs.json``, ``instrument.*.txt``,
    ``canaries.json``: evidence without it, from before the canaries, is graded without them) and
    write ``outcome.json``. Pure apart from reading and that one write.

    Raises:
        FileNotFoundError: the folder has no ``facts.json`` (not an attempt folder).
    """
    facts = json.loads((out / "facts.json").read_text(encoding="utf-8"))
    runs = json.loads((out / "runs.json").read_text(encoding="utf-8")) if (out / "runs.json").is_file() else []
    plan = (
        CanaryPlan.from_dict(json.loads((out / "canaries.json").read_text(encoding="utf-8")))
        if (out / "canaries.json").is_file()
        else None
    )
    graded = []
    for run in runs:
        parsed = parse_instrumentation((out / run["file"]).read_text(encoding="utf-8"))
        pair = plan.pairs.get(run["method"]) if plan else None
        graded.append((run["method"], *classify_target(parsed, run["method"], run.get("timed_out"), pair)))
    target = graded[0] if graded else None
    outcome = StateOutcome(
        state=str(facts["state"]),
        applied=bool(facts["applied"]),
        built=bool(facts["built"]),
        infra_kind=facts.get("infra_kind"),
        target=target[1] if target else None,
        target_detail=target[2] if target else "",
        regression={method: result for method, result, _ in graded[1:]},
        detail=str(
            facts.get("detail")
            or (f"patch {facts['failed_patch']} does not apply" if facts.get("failed_patch") else "")
        ),
    )
    atomic_write_json(out / "outcome.json", outcome.to_dict())
    return outcome
