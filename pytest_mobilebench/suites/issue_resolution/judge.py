"""The one grading path of issue resolution: evidence folder -> run facts -> verdict.

The live run writes everything the verdict depends on into the evidence folder and then grades by
calling :func:`judge` on that folder; :func:`pytest_mobilebench.suites.issue_resolution.regrade` calls
the same function later. So the policy (:func:`pytest_mobilebench.suites.issue_resolution.policy.review`, re-run on the
saved patch and configuration snapshots), the parsers and the grading rules are applied the same way both
times: a re-grade of a patch that changed ``jest.config.js`` is a ``policy_violation``, never resolved.

Evidence files read (written by the live run, see :func:`save_policy_inputs`):

* ``model_patch.diff``: the candidate patch as given;
* ``policy/inputs.json``: ``{"ignored": [...], "tracked": [...], "plan_command": "...", "integrity": "report" |
  "strict"}`` (the ``--mb-integrity`` mode of the live run: a re-grade decides as it did); ``policy/before/<path>`` and
  ``policy/after/<path>``: the framework's configuration files at base and with the candidate applied;
* ``apply.json``: ``{"ok": bool, "method": str | None}`` of the candidate's apply;
* ``run.json`` (with ``plan``), ``test_output.log`` and ``results/``: present when the tests ran (they run
  after the tool sections were dropped and the runner configuration restored, so a policy violation still
  shows the tests' states).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench import frameworks, integrity
from pytest_mobilebench.suites.issue_resolution import grading, policy
from pytest_mobilebench.frameworks import TestPlan, canaries
from pytest_mobilebench.frameworks.react_native import harness as jest_harness
from pytest_mobilebench.frameworks.react_native import oracle_verdict
from pytest_mobilebench.suites.issue_resolution import dialects
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance
from pytest_mobilebench.parsers import ParseError, ParseResult, get_parser
from pytest_mobilebench.patch import PatchError, parse_patch
from pytest_mobilebench.states import TestState
from pytest_mobilebench.files import atomic_write_json
from pytest_mobilebench.runtime.base import InfraError, Workspace
from pytest_mobilebench.trust import cross_check_run
from pytest_mobilebench.states import InfraKind

__all__ = [
    "RUNNER_COMPROMISED",
    "Judgement",
    "base_status",
    "judge",
    "parse_run",
    "read_tree",
    "run_findings",
    "save_policy_inputs",
    "ungradable",
    "ungradable_detail",
    "verdict_of",
]


def parse_run(
    framework: str,
    plan: TestPlan,
    output: str,
    files: Mapping[str, bytes],
    *,
    root_dir: str | None = None,
) -> tuple[ParseResult, bool]:
    """Parse one run's output and result files (pure). Returns ``(parsed, production_built)``.

    ``root_dir`` is the repository folder as the test process saw it (``/testbed`` in a container), so
    that ids built from absolute paths come out repository-relative. A parser error yields an empty
    result with the error as a warning: no tests ran, never passed.
    """
    try:
        parsed = get_parser(plan.parser)(output, files, root_dir=root_dir)
    except ParseError as exc:
        parsed = ParseResult(tests={}, messages={}, warnings=(f"parser {plan.parser}: {exc}",))
    return parsed, frameworks.get(framework).production_built(output, plan)


def base_status(ws: Workspace, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(ignored, tracked)``: which of ``names`` the repository ignores at base (``git check-ignore``:
    ``.gitignore`` files and the ``.git/info/exclude`` list of what the dependency install created) and
    which it tracks (``git ls-files``). Run before the candidate touches the workspace, so the answers
    are the base's.

    Raises:
        InfraError: ``workspace_error`` when git cannot answer.
    """
    if not names:
        return [], []
    listing = shlex.quote(ws.put_input("names.nul", b"".join(n.encode("utf-8") + b"\0" for n in names)))
    # the names travel in a file: any number of them (a command line overflows at 128 KiB, E2BIG)
    commands = (
        (f"git check-ignore -z --stdin < {listing}", (0, 1)),
        (f"xargs -0 -r -a {listing} git ls-files -z --", (0,)),
    )
    wanted = set(names)
    answers = []
    for command, ok in commands:
        result = ws.run(command, timeout_s=120, network=False)
        if result.exit_code not in ok:
            raise InfraError(
                InfraKind.WORKSPACE_ERROR, f"`{command[:60]}` failed (exit {result.exit_code})", log=result.output
            )
        answers.append(sorted({part for part in result.output.split("\0") if part in wanted}))
    return answers[0], answers[1]


def _write_tree(root: Path, files: Mapping[str, bytes]) -> None:
    for rel, data in files.items():
        target = root / rel
        if root.resolve() not in target.resolve().parents:
            continue  # configuration names come from the framework, never from outside the folder
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def read_tree(root: Path) -> dict[str, bytes]:
    """``{relative path: bytes}`` of every file under ``root`` (empty when it does not exist)."""
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def save_policy_inputs(
    folder: Path,
    *,
    before: Mapping[str, bytes],
    after: Mapping[str, bytes],
    ignored: Collection[str],
    plan_command: str,
    tracked: Collection[str] = (),
    integrity_mode: str = "report",
) -> None:
    """Write what :func:`pytest_mobilebench.suites.issue_resolution.policy.review` (and the integrity audit's
    mode, ``--mb-integrity``) reads into ``folder/policy/``."""
    _write_tree(folder / "policy" / "before", before)
    _write_tree(folder / "policy" / "after", after)
    inputs = {
        "ignored": sorted(ignored),
        "tracked": sorted(tracked),
        "plan_command": plan_command,
        "integrity": integrity_mode,
    }
    atomic_write_json(folder / "policy" / "inputs.json", inputs)


@final
@dataclasses.dataclass(frozen=True)
class Judgement:
    """The facts of one evaluation read back from its evidence, and the verdict they give.

    Attributes:
        outcome: the run facts :func:`pytest_mobilebench.suites.issue_resolution.grading.grade` takes.
        verdict: ``grading.grade`` of ``outcome`` against the instance's gold lists.
        review: the policy's findings (None when the patch did not parse).
        detail: what the evidence adds to the verdict's own sentence (e.g. which result file was expected).
        integrity: the static audit's findings on the patch's production files (:mod:`pytest_mobilebench.integrity`);
            under ``--mb-integrity=strict`` each is also in ``outcome.policy_violation``.
    """

    outcome: grading.RunOutcome
    verdict: grading.Verdict
    review: policy.Review | None
    detail: str = ""
    integrity: tuple[integrity.Finding, ...] = ()


def verdict_of(instance: IssueInstance, outcome: grading.RunOutcome) -> tuple[grading.Verdict, dict[str, Any]]:
    """:func:`pytest_mobilebench.suites.issue_resolution.grading.grade` of ``outcome`` against the instance's gold
    lists, foreign gold ids matched to this run's ids first
    (:func:`pytest_mobilebench.suites.issue_resolution.dialects.gold_for_run`). Returns ``(verdict, id matching
    report)``; the live run, :func:`judge` and re-grading all call it."""
    gold, id_matching = dialects.gold_for_run(instance, outcome.tests)
    verdict = grading.grade(
        fail_to_pass=gold["FAIL_TO_PASS"],
        none_to_pass=gold["NONE_TO_PASS"],
        pass_to_pass=gold["PASS_TO_PASS"],
        outcome=outcome,
    )
    return verdict, id_matching


def _grade(instance: IssueInstance, outcome: grading.RunOutcome) -> grading.Verdict:
    return verdict_of(instance, outcome)[0]


def _run_facts(instance: IssueInstance, folder: Path, tag: str = "") -> tuple[dict[str, Any], ParseResult, bool, str]:
    run = json.loads((folder / f"run{tag}.json").read_text(encoding="utf-8"))
    output = (folder / f"test_output{tag}.log").read_text(encoding="utf-8", errors="replace")
    files = read_tree(folder / f"results{tag}")
    plan = TestPlan.from_dict(run["plan"])
    parsed, built = parse_run(instance.framework, plan, output, files, root_dir=run.get("root_dir"))
    detail = ""
    if not parsed.tests and not run.get("timed_out"):  # a run cut off by its time limit wrote none: no advice
        found = ", ".join(sorted(files)) or "none"
        detail = (f"expected test results in {', '.join(plan.result_globs)} (files found: {found}); "
                  "a test_command must write its results there or name them in test_results")  # fmt: skip
    return run, parsed, built, detail


#: the policy-violation kind of a run whose runner or results the candidate reached (issue 17)
RUNNER_COMPROMISED = "runner_compromised"


def _candidate_failure(folder: Path) -> dict[str, Any] | None:
    """The counted failure the live run recorded (``candidate_failure.json``), or None."""
    path = folder / "candidate_failure.json"
    if not path.is_file():
        return None
    found = json.loads(path.read_text(encoding="utf-8"))
    return found if found.get("reason") in ("test_patch_conflict", "resource_exhausted") else None


def _json_of(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _harness_of(folder: Path) -> dict[str, Any] | None:
    return _json_of(folder / "harness.json")


def _launch_refused(folder: Path, tag: str = "") -> list[str]:
    """:func:`.harness.launch_problems` of the run's launcher status; ``[]`` for evidence written before the
    launcher existed (no ``harness_status.json``)."""
    status = folder / f"harness_status{tag}.json"
    return jest_harness.launch_problems(status.read_bytes()) if status.is_file() else []


def run_findings(
    folder: Path,
    run: Mapping[str, Any],
    parsed: ParseResult,
    output: str,
    *,
    tag: str = "",
    changed: frozenset[str] | None = None,
) -> list[str]:
    """Why the results of the run tagged ``tag`` in ``folder`` cannot be taken as the runner's; ``[]`` when none.

    The report disagreeing with the runner (:func:`~pytest_mobilebench.trust.cross_check_run`); the harness's
    channel (:func:`.harness.findings`: empty, unsigned, out of sequence, canaries off ...) unless the run was
    cut off by its time limit or its launcher refused (that is ``runner_harness_failed``); a planted JUnit /
    Flutter canary off its known answer. ``parsed`` still holds the jest canaries. The one check the live grade
    (:func:`judge`: a policy violation of the candidate) and validation (:func:`ungradable`: the harness's
    failure) both make. ``changed``: the paths whose tripwire touches count (:func:`.harness.touch_findings`;
    None: every touch).
    """
    tampered = cross_check_run(str(run["plan"]["parser"]), run.get("exit_code"), parsed, output)
    found = [f"report and runner disagree: {tampered}"] if tampered else []
    harness = _json_of(folder / f"harness{tag}.json")
    if harness is not None and not run.get("timed_out") and not _launch_refused(folder, tag):
        channel_file = folder / f"channel{tag}.jsonl"
        channel = channel_file.read_bytes() if channel_file.is_file() else b""
        root = run.get("root_dir") or "/testbed"
        found += [
            f"{RUNNER_COMPROMISED}: {f}"
            for f in jest_harness.findings(harness, channel, parsed.tests, output, root=root, changed=changed)
        ]
    canary = _json_of(folder / f"canary{tag}.json")
    if canary is not None and not run.get("timed_out"):  # JUnit / Flutter known-answer canary (frameworks.canaries)
        tests = jest_harness.without_canaries(parsed, harness).tests
        found += [f"{RUNNER_COMPROMISED}: {f}" for f in canaries.canary_findings(tests, canary["ids"])]
    return found


def ungradable_detail(tag: str, found: Sequence[str]) -> str:
    """The detail of a run of the benchmark's own patches (validation, audit, a reference run) that
    :func:`ungradable` refused: which run, and the first findings (at most 800 characters)."""
    which = tag.strip(".") or "test"
    why = "; ".join(found)[:800]
    return (f"the {which} run cannot be graded as the live grade grades a candidate (its gold would be "
            f"{RUNNER_COMPROMISED}): the harness's failure, never the instance's: {why}")  # fmt: skip


def ungradable(instance: IssueInstance, folder: Path, tag: str) -> list[str]:
    """:func:`run_findings` of the run tagged ``tag`` (a validation configuration ``.fix.1`` ...), read back from
    its evidence as :func:`judge` reads a candidate's: why the live grade could not grade that run; ``[]`` when
    it could (or no test run was recorded under ``tag``)."""
    if not (folder / f"run{tag}.json").is_file():
        return []
    run, parsed, _, _ = _run_facts(instance, folder, tag)
    output = (folder / f"test_output{tag}.log").read_text(encoding="utf-8", errors="replace")
    return run_findings(folder, run, parsed, output, tag=tag, changed=frozenset())  # the base's own touches: evidence


def judge(instance: IssueInstance, folder: Path) -> Judgement:
    """Grade an evaluation from its evidence folder (see the module docstring); runs nothing.

    Raises:
        FileNotFoundError: the folder lacks ``model_patch.diff`` or ``apply.json``, or the run files when
            the policy found nothing (the evaluation did not reach the tests).
    """
    text = (folder / "model_patch.diff").read_text(encoding="utf-8")
    try:
        info = parse_patch(text, name=f"model_patch of {instance.instance_id}")
    except PatchError as exc:
        outcome = grading.RunOutcome(applied=False, built=False, tests={})
        return Judgement(outcome, _grade(instance, outcome), None, str(exc))
    inputs = json.loads((folder / "policy" / "inputs.json").read_text(encoding="utf-8"))
    review = policy.review(
        info,
        frameworks.get(instance.framework),
        before=read_tree(folder / "policy" / "before"),
        after=read_tree(folder / "policy" / "after"),
        ignored=inputs.get("ignored", ()),
        tracked=inputs.get("tracked", ()),
        plan_command=inputs.get("plan_command", ""),
    )
    applied = bool(json.loads((folder / "apply.json").read_text(encoding="utf-8")).get("ok"))
    rule = frameworks.get(instance.framework).test_rule(read_tree(folder / "policy" / "before"))
    restored = set(review.restore)  # test files and runner configuration (root mocks ...): back to base, never run

    def is_test(path: str) -> bool:
        return rule(path) or path in restored or "__mocks__" in path.split("/")  # jest's mocks: test machinery

    found_integrity = tuple(integrity.audit(text, is_test))
    violations = [*review.violations, *integrity.violations(found_integrity, str(inputs.get("integrity") or "report"))]
    # the candidate's files as they ran (restored ones run as at base): their tripwire touches count
    changed = frozenset(p for f in info.files for p in f.paths) - restored
    judged = _judge_run(instance, folder, review, applied, violations, changed)
    return dataclasses.replace(judged, integrity=found_integrity)


def _judge_run(
    instance: IssueInstance,
    folder: Path,
    review: policy.Review,
    applied: bool,
    violations: list[str],
    changed: frozenset[str] | None = None,
) -> Judgement:
    """:func:`judge` past the policy: the counted failures, the run's facts, the harness's and canaries' findings
    (``changed``: the paths the candidate's patch touches, whose tripwire touches count)."""
    failure = _candidate_failure(folder)
    if applied and failure is not None:  # test_patch_conflict / resource_exhausted: the run shows it, counted
        outcome = grading.RunOutcome(
            applied=True,
            built=False,
            tests={},
            policy_violation="; ".join(violations) or None,
            **{failure["reason"]: str(failure.get("detail") or failure["reason"])},
        )
        return Judgement(outcome, _grade(instance, outcome), review)
    if not applied or (violations and not (folder / "run.json").is_file()):
        outcome = grading.RunOutcome(
            applied=applied, built=False, tests={}, policy_violation="; ".join(violations) or None
        )
        return Judgement(outcome, _grade(instance, outcome), review)
    run, parsed, built, detail = _run_facts(instance, folder)
    output = (folder / "test_output.log").read_text(encoding="utf-8", errors="replace")
    violations += run_findings(folder, run, parsed, output, changed=changed)
    harness = _harness_of(folder)
    refused = _launch_refused(folder) if harness is not None else []
    if harness is not None and not run.get("timed_out") and not refused:  # a cut-off run proves nothing either way
        channel = (folder / "channel.jsonl").read_bytes() if (folder / "channel.jsonl").is_file() else b""
        hollow = jest_harness.hollow_passes(
            parsed.tests, jest_harness.assertion_counts(harness, channel), instance.assertions
        )
        if hollow:  # passed without executing an assertion the validated fix executes: not a pass
            parsed = dataclasses.replace(
                parsed,
                tests={**parsed.tests, **{t: TestState.FAIL for t in hollow}},
                passed_on_retry=parsed.passed_on_retry - set(hollow),
            )
            detail = "; ".join(
                x
                for x in (detail, f"passed without an assertion (the validated fix has some): {', '.join(hollow)}")
                if x
            )
        # every recorded assertion re-decided out of realm (docs/oracle.md): a contradicted test cannot pass
        parsed, found, note = oracle_verdict.graded(
            harness, channel, parsed, folder, root=run.get("root_dir") or "/testbed"
        )
        violations += [f"{RUNNER_COMPROMISED}: {f}" for f in found]
        detail = "; ".join(x for x in (detail, note) if x)
    parsed = jest_harness.without_canaries(parsed, harness)
    canary = _json_of(folder / "canary.json")
    if canary is not None:  # JUnit / Flutter known-answer canary (frameworks.canaries): its findings are above
        parsed = jest_harness.without_ids(parsed, canary["ids"])
    outcome = grading.RunOutcome(
        applied=True,
        built=built,
        timed_out=bool(run.get("timed_out")),
        time_limit=str(run["time_limit"]) if run.get("time_limit") else None,
        infra_error=(
            "oom_killed" if run.get("oom_killed") else InfraKind.RUNNER_HARNESS_FAILED.value if refused else None
        ),
        tests=parsed.tests,
        policy_violation="; ".join(violations) or None,
    )
    return Judgement(outcome, _grade(instance, outcome), review, detail)
