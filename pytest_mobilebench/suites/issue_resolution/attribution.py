"""Who a failure belongs to, from the harness's own evidence (issue 17, item 3), and the jest harness seam.

* :class:`CandidateFailure` / :data:`CANDIDATE_FAILURE`: a counted failure the run itself shows
  (``test_patch_conflict``), recorded in the evidence and read back by :mod:`.judge`.
* :func:`attribute_exhaustion`: memory, disk or processes ran out under the candidate; the reference fix runs
  under the same limits on the same runtime, once per instance, kind and process.
* :func:`jest_harness_for`: the harnessed jest run of a plan
  (:mod:`pytest_mobilebench.frameworks.react_native.harness`); :func:`run_harnessed` runs it and writes its evidence.
* :func:`harnessed`: the capability a harness rests on (:class:`~pytest_mobilebench.runtime.base.Capability`):
  an untrusted candidate on a workspace without it is refused, trusted code runs unharnessed and recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_mobilebench import frameworks
from pytest_mobilebench.frameworks import canaries
from pytest_mobilebench.frameworks.react_native import oracle_verdict
from pytest_mobilebench.frameworks.react_native import harness as jest_harness
from pytest_mobilebench.files import atomic_write_json, atomic_write_text
from pytest_mobilebench.runtime.base import Capability, InfraError, RunResult, Workspace
from pytest_mobilebench.states import InfraKind, Reason
from pytest_mobilebench.records import EvalContext

__all__ = [
    "CANDIDATE_FAILURE",
    "RESOURCE_KINDS",
    "CandidateFailure",
    "apply_failure_detail",
    "attribute_exhaustion",
    "UNHARNESSED",
    "canary_for",
    "harness_probes",
    "harnessed",
    "jest_harness_for",
    "run_harnessed",
    "unharnessed_flags",
]

#: the evidence file of a counted failure the run itself shows (``{"reason", "detail"}``), read by :mod:`.judge`
CANDIDATE_FAILURE = "candidate_failure.json"
#: the evidence file of a run of trusted code without the capability its runner's harness needs
#: (``{"capabilities": [...], "detail"}``, with the run's tag: ``unharnessed.json``, ``unharnessed.fix.1.json``)
UNHARNESSED = "unharnessed"
#: infrastructure kinds a candidate can cause itself by exhausting a limit
RESOURCE_KINDS = frozenset({InfraKind.OOM_KILLED.value, InfraKind.DISK_FULL.value, InfraKind.PIDS_LIMIT.value})


class CandidateFailure(Exception):
    """A counted failure of the candidate found before the tests ran (``test_patch_conflict``)."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def apply_failure_detail(log: str) -> str:
    """One line for a patch that no strategy applied: the first attempt's first error (``git apply``'s
    message names the file and line; later attempts' ``.rej`` files are gone after the reset)."""
    errors = [
        line.strip()
        for line in log.splitlines()
        if line.strip().startswith(("error:", "fatal:")) and not line.strip().endswith("while searching for:")
    ]
    attempts = sum(1 for line in log.splitlines() if line.startswith("$ "))
    first = errors[0] if errors else "no strategy applied the patch"
    return f"the patch does not apply ({attempts} strategies tried; first error: {first}); see model_patch.apply.log"


def harnessed(ws: Workspace, capability: Capability, what: str, *, untrusted: bool, evidence: Path, tag: str) -> bool:
    """Whether the run gets its harness, which rests on ``capability`` (issue 32, item 1): True when the workspace
    declares it. Trusted code (the gold patch, validation, ``--mb-trust-candidates``) on a workspace without it
    runs unharnessed, recorded in ``evidence / unharnessed<tag>.json`` (False); an untrusted candidate is refused.

    Raises:
        MissingCapability: ``untrusted`` and the workspace lacks ``capability`` (``provider_lacks_capability``:
            the provider's, never the candidate's).
    """
    if ws.has(capability):
        return True
    if untrusted:
        ws.require(capability, f"{what} of an untrusted candidate")
    detail = f"{what} needs {capability.value!r}, which the {type(ws).__name__} workspace lacks: the run is unharnessed"
    atomic_write_json(evidence / f"{UNHARNESSED}{tag}.json", {"capabilities": [capability.value], "detail": detail})
    return False


def unharnessed_flags(evidence: Path) -> list[str]:
    """``["unharnessed:<capability>", ...]`` of the graded run's :data:`UNHARNESSED` evidence (none: ``[]``), for the
    result's ``flags`` and the headline's count."""
    path = evidence / f"{UNHARNESSED}.json"
    if not path.is_file():
        return []
    return [f"unharnessed:{c}" for c in json.loads(path.read_text(encoding="utf-8")).get("capabilities", [])]


def canary_for(
    ws: Workspace,
    plan: frameworks.TestPlan,
    test_files: list[str],
    *,
    untrusted: bool = False,
    evidence: Path | None = None,
    tag: str = "",
) -> tuple[canaries.Canary, str] | None:
    """A JUnit (Gradle) or Flutter canary for ``plan`` (:mod:`pytest_mobilebench.frameworks.canaries`),
    written root-owned next to the first graded test file, and the command that runs it; None for other
    runners, custom commands, or a workspace without root-owned files (:func:`harnessed`: an untrusted candidate
    is refused there, trusted code runs unharnessed and recorded in ``evidence``).

    Raises:
        MissingCapability: ``untrusted`` on a workspace without :attr:`Capability.ROOT_FILES`.
    """
    if plan.parser not in canaries.CANARY_PARSERS or not test_files:
        return None
    first = test_files[0]
    text = ws.read_files([first]).get(first, b"").decode("utf-8", "replace")
    canary = canaries.junit_canary(first, text) if plan.parser == "junit" else canaries.flutter_canary(first, text)
    command = (
        plan.command
        if plan.parser == "junit"
        else canaries.with_flutter_canary(plan.command, canary)
        if canary
        else None
    )
    if canary is None or command is None:
        return None
    if evidence is None:
        ws.require(Capability.ROOT_FILES, "the canary")  # no evidence folder to record an unharnessed run
    elif not harnessed(ws, Capability.ROOT_FILES, "the canary", untrusted=untrusted, evidence=evidence, tag=tag):
        return None
    ws.write_root_files({f"{ws.root}/{canary.path}": canary.source.encode()}, private="")
    return canary, command


def harness_probes(framework: str) -> tuple[str, ...]:
    """The files :func:`jest_harness_for` reads first when the framework's runs report through jest
    (:data:`.harness.RUNNER_PROBES`), else none: a workspace lists their folders with the plan's."""
    return jest_harness.RUNNER_PROBES if frameworks.get(framework).parser == "jest" else ()


def jest_harness_for(
    ws: Workspace,
    plan: frameworks.TestPlan,
    *,
    untrusted: bool = False,
    evidence: Path | None = None,
    tag: str = "",
) -> jest_harness.JestHarness | None:
    """The harnessed jest run of ``plan`` (:func:`.harness.prepare`), or None: not jest, a custom command,
    a project whose jest runner the harness cannot wrap (:func:`.harness.jest_runner`: another ``testRunner``,
    or the runner's package not installed at the root; the run goes unharnessed, as documented), or trusted
    code on a workspace without a result channel (:func:`harnessed`, recorded in ``evidence``). The installed
    packages are read at the root, else where node finds them from the project (:func:`_linked_probes`: a pnpm
    layout).

    Raises:
        MissingCapability: ``untrusted`` on a workspace without :attr:`Capability.RESULT_CHANNEL`.
    """
    if plan.parser != "jest":
        return None
    probes = ws.read_files(list(jest_harness.RUNNER_PROBES))
    probes = {**probes, **ws.read_files(jest_harness.preset_probes(probes))}
    runner = jest_harness.jest_runner(probes) or jest_harness.jest_runner({**probes, **_linked_probes(ws, probes)})
    if runner is None:
        return None
    environment = jest_harness.jest_environment(probes)  # named as a package: resolved by the harness (issue 31)
    if evidence is None:
        ws.require(Capability.RESULT_CHANNEL, "the jest harness")  # no evidence folder to record an unharnessed run
    elif not harnessed(
        ws, Capability.RESULT_CHANNEL, "the jest harness", untrusted=untrusted, evidence=evidence, tag=tag
    ):
        return None
    return jest_harness.prepare(plan.command, runner=runner, environment=environment)


def _linked_probes(ws: Workspace, probes: dict[str, bytes]) -> dict[str, bytes]:
    """The installed probe files node finds from the project when they are not at the root (pnpm's links into
    ``node_modules/.pnpm``): :func:`.harness.probe_command` run offline, its paths read as regular files and
    keyed as the probes (:func:`.harness.resolved_probes`); ``{}`` when it finds none."""
    root = ws.root
    run = ws.run(jest_harness.probe_command(probes), timeout_s=120, network=False)
    paths = jest_harness.resolved_probes(run.output, probes, root=root) if run.exit_code == 0 else {}
    found = ws.read_files(sorted(set(paths.values()))) if paths else {}
    return {key: found[path.lstrip("/")] for key, path in paths.items() if path.lstrip("/") in found}


def attribute_exhaustion(
    exc: InfraError,
    instance: Any,
    ctx: EvalContext,
    gold_patch: str,
    prepare: Callable[[], Workspace],
    run_tests: Callable[[Workspace], object],
) -> None:
    """Memory or disk ran out under the candidate (``exc``): the reference fix (``gold_patch``) runs in a
    fresh workspace (``prepare``) through ``run_tests`` under the same limits on the same runtime, once per
    instance, kind and process (evidence ``*.reference*``). When it does not exhaust them,
    :data:`CANDIDATE_FAILURE` records ``resource_exhausted`` (counted); else ``exc`` is raised.

    Raises:
        InfraError: ``exc`` when the reference exhausts the limits too or does not apply; the reference
            run's own other infrastructure errors.
    """

    def reference_exhausts() -> bool:
        ws = prepare()
        try:
            if not ws.apply_patch(gold_patch, name="reference_patch").ok:
                return True  # cannot tell: infrastructure
            run_tests(ws)
        except InfraError as ref:
            if ref.kind in RESOURCE_KINDS:
                return True
            raise
        finally:
            ws.close()
        return False

    if ctx.resource(f"reference-exhausts:{instance.instance_id}:{exc.kind}", reference_exhausts):
        raise exc
    detail = (f"{exc.kind} under the candidate ({exc}); the reference fix ran under the same limits on the "
              "same runtime without exhausting them (evidence: *.reference*)")  # fmt: skip
    atomic_write_json(
        ctx.evidence_dir / CANDIDATE_FAILURE, {"reason": Reason.RESOURCE_EXHAUSTED.value, "detail": detail}
    )


def run_harnessed(
    ws: Workspace, harness: jest_harness.JestHarness, evidence: Path, *, tag: str, timeout_s: float
) -> tuple[RunResult, str | None]:
    """Run ``harness.command`` with its result channel; ``(run, why the harness's launcher did not start jest)``.

    Writes ``harness<tag>.json`` (:meth:`~.harness.JestHarness.to_dict`), ``channel<tag>.jsonl`` and
    ``harness_status<tag>.json`` (the launcher's status line, empty when it wrote none) to ``evidence``. The
    second element (None when it did) is one sentence of :func:`.harness.launch_problems` of the status: the
    harness failed before any code of the project ran (``runner_harness_failed``), never the candidate.

    Raises:
        InfraError: as the workspace's ``run_with_channel``.
    """
    oracle_verdict.keep_snapshots(ws, harness, evidence, tag=tag)  # read before any candidate code runs
    atomic_write_json(evidence / f"harness{tag}.json", harness.to_dict())
    run, channel, status = ws.run_with_channel(
        harness.command, files=harness.files, key=harness.key, timeout_s=timeout_s
    )
    atomic_write_text(evidence / f"channel{tag}.jsonl", channel.decode("ascii", "replace"))
    atomic_write_text(evidence / f"harness_status{tag}.json", (status or b"").decode("utf-8", "replace"))
    refused = jest_harness.launch_problems(status)
    return run, f"the harness did not start jest with its result channel: {'; '.join(refused)}" if refused else None
