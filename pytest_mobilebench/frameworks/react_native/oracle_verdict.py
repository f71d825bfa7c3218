"""The oracle's decision wired into a jest run's verdict (issue 31, item 1; ``docs/oracle.md``).

The harness's runner records every matcher call of the run's tests (``assertion`` records of the keyed channel,
:mod:`.harness_js.recorder`). :func:`decide` groups them by test id and has each test's records decided again by
``pytest_mobilebench.oracle.decide_test``, in this process, where no candidate code ran:

* a record whose in-realm outcome the oracle contradicts is a finding (``runner_compromised``: a forged matcher,
  a patched builtin the realm's ``expect`` uses) and its test cannot pass;
* matchers the oracle cannot decide (a repository's or a library's custom ones) are named per test and left to
  the in-realm result, which the frozen matcher table protects (:mod:`.harness_js.shared`).

A record that failed in realm and fails out of realm agrees (a test that catches an assertion error of its own
keeps its outcome), except for a matcher that never throws: jest's snapshot matchers (:data:`UNCATCHABLE`) put
their failure in the state's ``suppressedErrors`` (``dontThrow``) and jest fails the test when it ends, so no test
body can catch it. A test holding such a failed record that is reported passing (and is no ``test.failing``, whose
outcome jest inverts) had its failure cleared in its realm, e.g. by an ``afterEach`` hook production code pushed
onto jest-circus's state that empties ``suppressedErrors`` and the test's errors (found on NMF-earth/nmf-app #418,
``tests/test_real_repositories_attacks_docker.py``): a finding, and the test fails. The live run and a re-grade both
reach it through :func:`..suites.issue_resolution.judge.judge`. Pure but for the decider it is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, final

from pytest_mobilebench.frameworks.react_native.harness import ChannelReport, JestHarness, command_paths, read_channel
from pytest_mobilebench.oracle.protocol import Decider, SnapshotSource
from pytest_mobilebench.parsers import ParseResult
from pytest_mobilebench.parsers.jest import jest_test_id
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind, TestState

__all__ = [
    "OracleVerdict",
    "SNAPSHOT_FOLDER",
    "UNCATCHABLE",
    "assertion_records",
    "decide",
    "decide_report",
    "decider",
    "failing_tests",
    "graded",
    "keep_snapshots",
    "read_snapshots",
    "snapshot_paths",
    "snapshot_source",
    "uncaught_findings",
]

#: evidence folder (``snapshots<tag>/<repository path>``) of the ``.snap`` files read before the run
SNAPSHOT_FOLDER: Final = "snapshots"
#: matchers that never throw (jest's ``dontThrow``): a failure of theirs cannot be caught by the test's body
UNCATCHABLE: Final[frozenset[str]] = frozenset(
    {"toMatchSnapshot", "toMatchInlineSnapshot", "toThrowErrorMatchingSnapshot", "toThrowErrorMatchingInlineSnapshot"}
)


@final
@dataclasses.dataclass(frozen=True)
class OracleVerdict:
    """What the oracle changes in one run's grading.

    Attributes:
        findings: ``runner_compromised`` sentences (without the prefix), one per contradicted test.
        failed: test ids that cannot pass (a record the oracle contradicts).
        unrecorded: ``{test id: matcher names}`` left to the in-realm result.
        undecided: test ids whose records the oracle could not decide (a cut value, an unknown shape).
        uncaught: ``{test id: "<matcher> (seq N)"}``, the first record of an :data:`UNCATCHABLE` matcher that failed
            in realm and was not contradicted: the test cannot pass (:func:`graded` checks the report).
    """

    findings: tuple[str, ...]
    failed: tuple[str, ...]
    unrecorded: Mapping[str, tuple[str, ...]]
    undecided: tuple[str, ...]
    uncaught: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def detail(self) -> str:
        """One sentence for the verdict's detail naming the custom matchers (``""`` when none)."""
        names = sorted({m for ms in self.unrecorded.values() for m in ms})
        if not names:
            return ""
        return (
            f"oracle: matchers left to the in-realm result (custom): {', '.join(names)} in {len(self.unrecorded)} tests"
        )


def decider() -> Decider:
    """``pytest_mobilebench.oracle.decide_test`` (helper d's package).

    Raises:
        ImportError: the package is not installed with the harness (a harness failure, never the candidate's).
    """
    from pytest_mobilebench.oracle import decide_test  # type: ignore[attr-defined]

    return decide_test  # type: ignore[no-any-return]


def snapshot_source(files: Mapping[str, bytes]) -> SnapshotSource:
    """The decider's view (``pytest_mobilebench.oracle.SnapFiles``) of the ``.snap`` files read before the run.

    Raises:
        ImportError: the decider's package is not installed.
    """
    from pytest_mobilebench.oracle import SnapFiles  # type: ignore[attr-defined]

    return SnapFiles({path: data.decode("utf-8", "replace") for path, data in files.items()})  # type: ignore[no-any-return]


def _rel(path: str, root: str) -> str:
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def assertion_records(report: ChannelReport, root: str) -> dict[str, list[dict[str, Any]]]:
    """``{test id: its assertion records in seq order}`` from the verified channel (ids as the jest parser
    names them)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for entry in report.of_type("assertion"):
        record = entry.get("record")
        titles = entry.get("titles")
        if not isinstance(record, dict) or not isinstance(titles, list):
            continue
        test_id = jest_test_id(_rel(str(entry.get("path", "")), root), [str(t) for t in titles])
        grouped.setdefault(test_id, []).append(dict(record))
    for records in grouped.values():
        records.sort(key=lambda r: r.get("seq") if isinstance(r.get("seq"), int) else -1)
    return grouped


def snapshot_paths(test_files: list[str]) -> list[str]:
    """The default ``.snap`` path of each test file (``<dir>/__snapshots__/<name>.snap``), repository-relative."""
    out = []
    for path in test_files:
        folder, _, name = path.rpartition("/")
        out.append(f"{folder + '/' if folder else ''}__snapshots__/{name}.snap")
    return out


def decide(
    harness: Mapping[str, Any],
    channel: bytes,
    snapshots: SnapshotSource,
    *,
    root: str = "/testbed",
    decide_test: Callable[..., Any] | None = None,
) -> OracleVerdict:
    """Each test's records decided out of realm (see the module docstring).

    Args:
        harness: :meth:`.harness.JestHarness.to_dict` of the run (its key verifies the channel).
        channel: the channel's bytes.
        snapshots: the ``.snap`` files read before the run (repository path -> bytes).
        decide_test: the decider (default :func:`decider`'s).
    """
    report = read_channel(channel, bytes.fromhex(str(harness["key"])))
    return decide_report(report, snapshots, root=root, decide_test=decide_test)


def decide_report(
    report: ChannelReport,
    snapshots: SnapshotSource,
    *,
    root: str = "/testbed",
    decide_test: Callable[..., Any] | None = None,
) -> OracleVerdict:
    """:func:`decide` on a channel already read and verified (``report``)."""
    grouped = assertion_records(report, root)
    decide_one = (decide_test or decider()) if grouped else None
    findings: list[str] = []
    failed: list[str] = []
    undecided: list[str] = []
    unrecorded: dict[str, tuple[str, ...]] = {}
    uncaught: dict[str, str] = {}
    for test_id, records in sorted(grouped.items()):
        failed_snapshot = next(
            (r for r in records if r.get("matcher") in UNCATCHABLE and r.get("inrealm") == "fail"), None
        )
        if failed_snapshot is not None:
            uncaught[test_id] = f"{failed_snapshot['matcher']} (seq {failed_snapshot.get('seq')})"
        decision = decide_one(records, snapshots)  # type: ignore[misc]
        if decision.unrecorded_matchers:
            unrecorded[test_id] = tuple(sorted({str(m) for m in decision.unrecorded_matchers}))
        if decision.disagreements:
            first = str(decision.disagreements[0])[:300]
            findings.append(
                f"{test_id}: the oracle contradicts {len(decision.disagreements)} in-realm assertion outcome(s) "
                f"(a matcher or what it uses was forged in the test's realm): {first}"
            )
            failed.append(test_id)
        elif decision.holds is None:
            undecided.append(test_id)
    return OracleVerdict(tuple(findings), tuple(failed), unrecorded, tuple(undecided), uncaught)


def failing_tests(report: ChannelReport, root: str) -> set[str]:
    """Ids of the tests the harness's runner saw registered as ``test.failing`` (jest inverts their outcome)."""
    found = set()
    for record in report.of_type("file"):
        path = _rel(str(record.get("path", "")), root)
        for test in record.get("tests") or []:
            if isinstance(test, dict) and test.get("failing") is True:
                found.add(jest_test_id(path, [str(t) for t in test.get("titles") or []]))
    return found


def uncaught_findings(verdict: OracleVerdict, parsed: ParseResult, report: ChannelReport, root: str) -> dict[str, str]:
    """``{test id: finding}`` of the tests reported passing that hold an uncaught failure (:data:`UNCATCHABLE`); a
    ``test.failing`` and a test that passed on a retry (``jest.retryTimes``: the failed attempt's records stay) are
    left as reported."""
    inverted = failing_tests(report, root)
    return {
        test_id: (
            f"{test_id}: {what} failed and that matcher never throws, so no test body can catch it, yet the test "
            "was reported passing: its failure was cleared in the test's realm"
        )
        for test_id, what in sorted(verdict.uncaught.items())
        if parsed.tests.get(test_id) is TestState.PASS and test_id not in inverted | parsed.passed_on_retry
    }


def read_snapshots(folder: Path) -> dict[str, bytes]:
    """The ``.snap`` files of the evidence folder ``folder/snapshots`` (repository path -> bytes); ``{}`` when none."""
    base = folder / SNAPSHOT_FOLDER
    if not base.is_dir():
        return {}
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*.snap")) if p.is_file()}


def graded(
    harness: Mapping[str, Any], channel: bytes, parsed: ParseResult, folder: Path, *, root: str = "/testbed"
) -> tuple[ParseResult, list[str], str]:
    """``(parsed with contradicted tests failed, findings, detail)`` of one run's evidence ``folder``; the run as
    it was when its harness recorded nothing (``harness["oracle"]`` false: ``--mb-oracle=off``).

    Raises:
        InfraError: ``runner_harness_failed`` when the decider is not installed or fails (the harness's fault).
    """
    if not harness.get("oracle"):
        return parsed, [], ""
    report = read_channel(channel, bytes.fromhex(str(harness["key"])))
    if not report.of_type("assertion"):
        return parsed, [], ""  # nothing recorded (an empty channel, a file that never loaded): nothing to decide
    try:
        verdict = decide_report(report, snapshot_source(read_snapshots(folder)), root=root)
    except ImportError as exc:
        raise InfraError(InfraKind.RUNNER_HARNESS_FAILED, f"the oracle's decider is not installed: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - the decider's own fault: the harness's, shown, never a verdict
        raise InfraError(InfraKind.RUNNER_HARNESS_FAILED, f"the oracle's decider failed: {exc!r}") from exc
    cleared = uncaught_findings(verdict, parsed, report, root)
    failed = set(verdict.failed) | set(cleared)
    tests = {t: TestState.FAIL if t in failed else s for t, s in parsed.tests.items()}
    parsed = dataclasses.replace(parsed, tests=tests, passed_on_retry=parsed.passed_on_retry - failed)
    return parsed, [*verdict.findings, *cleared.values()], verdict.detail()


def keep_snapshots(ws: Any, harness: JestHarness, evidence: Path, *, tag: str = "") -> dict[str, bytes]:
    """Read the graded files' ``.snap`` files (:func:`snapshot_paths` of the command's test paths) from the
    workspace ``ws`` before the run, and keep them in ``evidence/snapshots<tag>/`` (what :func:`read_snapshots`
    reads back, live and on re-grade); ``{}`` and nothing written when the recorder is off.

    Called before any candidate code runs: a candidate cannot rewrite what the oracle compares with. Names that
    are absolute or climb out of the folder are never written (the workspace never returns such names).
    """
    if not harness.oracle:
        return {}
    found = ws.read_files(snapshot_paths(command_paths(harness.command) or []))
    base = evidence / f"{SNAPSHOT_FOLDER}{tag}"
    for rel, data in found.items():
        if rel.startswith("/") or ".." in rel.split("/"):
            continue
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dict(found)
