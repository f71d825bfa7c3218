"""Foreign dataset releases read as they are, and their test ids matched against ours (``docs/datasets.md``).

Two row dialects are detected per file (the first JSON object row decides):

* ``swe-bench``: rows with ``instance_id`` and ``base_commit`` (SWE-bench form; our own ids). Loaded by
  :func:`pytest_mobilebench.suites.issue_resolution.manifest.load_dataset`.
* ``multi-swe-bench``: rows with ``org``, ``repo``, ``number``, ``base`` {``sha``, ...}, ``fix_patch``,
  ``test_patch`` and the gold dicts ``f2p_tests`` / ``p2p_tests`` / ``n2p_tests`` / ``s2p_tests`` keyed by
  test id. MobileDev-Bench releases are this shape (its harness is a Multi-SWE-bench fork); a row with
  ``problem_statement`` or ``test_command`` is reported as ``mobiledev-bench``. ``base``, ``resolved_issues``
  and the gold dicts may be JSON-encoded strings (double encoding seen in the release); ``test_command``
  may be NaN.

Gold ids of the ``multi-swe-bench`` dialect are the harness's own console-parser names, which are not our
ids. They are matched, per run, against *test records* (file, class, name) of the tests our parser found,
by the rules of :data:`ID_DIALECTS` (facts taken from the MobileDev-Bench harness's per-repository
``parse_log`` functions, see ``docs/datasets.md``). A gold id matching no test stays as it is (its state is
then ``NONE``, so it can never pass); one matching several tests requires all of them; both are reported.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final
from xml.sax.saxutils import escape as xml_escape

from pydantic import ValidationError

from pytest_mobilebench import frameworks
from pytest_mobilebench.suites.issue_resolution.manifest import (
    IssueInstance,
    _dataset_rows,
    _errors_to_manifest_error,
    record_for,
)
from pytest_mobilebench.suites.issue_resolution.manifest import (
    load_dataset as load_swe_bench_rows,
)
from pytest_mobilebench.records import LoadedRecord, ManifestError

__all__ = [
    "ID_DIALECTS",
    "ForeignIssueInstance",
    "IdMatch",
    "TestRecord",
    "detect_row_dialect",
    "gold_for_run",
    "load_dataset",
    "match_gold_id",
    "records_from_ids",
    "row_to_instance",
]

#: Multi-SWE-bench / MobileDev-Bench ``lang`` -> our framework (the harness's ``repos/<lang>/`` folders).
LANG_FRAMEWORK: Final[dict[str, str]] = {
    "kotlin": "android",
    "java": "android",
    "dart": "flutter",
    "typescript": "react-native",
    "javascript": "react-native",
}
#: Row fields that may arrive JSON-encoded as a string.
_MAYBE_ENCODED: Final = ("base", "resolved_issues", "f2p_tests", "p2p_tests", "n2p_tests", "s2p_tests")
#: Foreign gold dict -> our gold list. ``s2p`` (skipped before, passing after) must pass like ``f2p``.
_GOLD_MAP: Final = (
    ("f2p_tests", "FAIL_TO_PASS"),
    ("s2p_tests", "FAIL_TO_PASS"),
    ("n2p_tests", "NONE_TO_PASS"),
    ("p2p_tests", "PASS_TO_PASS"),
)


class ForeignIssueInstance(IssueInstance):
    """An instance loaded from a foreign release: gold ids are in ``id_dialect``, not ours.

    Attributes:
        id_dialect: key of :data:`ID_DIALECTS` (``"mobiledev"``).
        row_dialect: ``"multi-swe-bench"`` or ``"mobiledev-bench"``.
        foreign_id: the release's own id (``org/repo:pr-N``).
    """

    id_dialect: str = "mobiledev"
    row_dialect: str = "multi-swe-bench"
    foreign_id: str | None = None


# ----------------------------------------------------------------------------------------- test records


@dataclasses.dataclass(frozen=True)
class TestRecord:
    """One test our parser reported, in structured form.

    Attributes:
        test_id: our id (``docs/test-ids.md``).
        file: the test file (jest, flutter), repository-relative; None for JUnit.
        classname: the JUnit ``classname``; None otherwise.
        name: JUnit ``name``; flutter full name (group names and test name, space-joined by the test
            package); jest ``ancestorTitles + [title]`` joined by ``" > "``.
    """

    __test__ = False  # not a pytest test class

    test_id: str
    file: str | None
    classname: str | None
    name: str


def records_from_ids(framework: str, ids: Iterable[str]) -> list[TestRecord]:
    """Structured records of our ids by the parser's id grammar (``docs/test-ids.md``).

    JUnit ids are ``classname#name`` (a class name never holds ``#``); flutter and jest ids are
    ``file::name`` (a path never holds ``::``), so splitting at the first separator is exact.

    Raises:
        ValueError: unknown framework (``FrameworkError``), or an id without its separator (not produced by
            our parser).
    """
    parser = frameworks.get(framework).parser
    sep = "#" if parser == "junit" else "::"
    out = []
    for test_id in ids:
        head, found, tail = test_id.partition(sep)
        if not found:
            raise ValueError(f"test id {test_id!r} is not a {parser} id (no {sep!r})")
        if parser == "junit":
            out.append(TestRecord(test_id, None, head, tail))
        else:
            out.append(TestRecord(test_id, head, None, tail))
    return out


# ----------------------------------------------------------------------------------------- id dialects


def _junit_names(record: TestRecord) -> set[str]:
    # MobileDev-Bench android/java parsers: f"{classname}.{name}" read by regex from the XML text, so
    # attribute values keep their XML escapes; Gradle console lines "Class > method PASSED" give the same.
    names = {f"{record.classname}.{record.name}"}
    names.add(f"{record.classname}.{xml_escape(record.name, {chr(34): '&quot;'})}")
    return names


def _flutter_matches(gold_id: str, record: TestRecord) -> bool:
    # Expanded reporter "MM:SS +N -M: <description>", description = full test name, prefixed by
    # "<suite path>: " when several test files ran (the path as the runner printed it).
    if gold_id == record.name:
        return True
    prefix, sep, rest = gold_id.rpartition(": " + record.name)
    if not sep or rest or not record.file:
        return False
    return prefix == record.file or prefix.endswith("/" + record.file)


def _jest_matches(gold_id: str, record: TestRecord) -> bool:
    # Verbose console reporter: "✓ <test title> (N ms)" gives the test's own title only (describe
    # titles are separate heading lines); the harness strips surrounding whitespace.
    title_path = record.name
    return title_path.strip() == gold_id or title_path.endswith(" > " + gold_id)


def _jest_file(gold_id: str, record: TestRecord) -> bool:
    # "PASS <path>" / "FAIL <path>" suite lines become ids too: the test file as jest printed it.
    return record.file == gold_id


def _junit_matches(gold_id: str, record: TestRecord) -> bool:
    return gold_id in _junit_names(record)


@dataclasses.dataclass(frozen=True)
class IdDialect:
    """How one source names a test: a per-framework test-level rule and an optional file-level rule."""

    name: str
    test_rule: Mapping[str, Callable[[str, TestRecord], bool]]
    file_rule: Mapping[str, Callable[[str, TestRecord], bool]]


#: id dialect name -> rules. ``native`` ids are ours and never translated.
ID_DIALECTS: Final[dict[str, IdDialect]] = {
    "mobiledev": IdDialect(
        name="mobiledev",
        test_rule={"android": _junit_matches, "flutter": _flutter_matches, "react-native": _jest_matches},
        file_rule={"react-native": _jest_file},
    ),
}


@dataclasses.dataclass(frozen=True)
class IdMatch:
    """What one foreign gold id became.

    Attributes:
        gold_id: the id as the release wrote it.
        kind: ``"test"`` (exactly one test), ``"file"`` (a test file: all of its tests),
            ``"ambiguous"`` (several tests: all are required) or ``"none"`` (kept as is: state NONE).
        ids: our ids it stands for (``[gold_id]`` for ``"none"``).
    """

    gold_id: str
    kind: str
    ids: tuple[str, ...]


def match_gold_id(dialect: str, framework: str, gold_id: str, records: Sequence[TestRecord]) -> IdMatch:
    """Match one gold id against the run's test records (pure).

    Raises:
        KeyError: unknown dialect.
    """
    rules = ID_DIALECTS[dialect]
    test_rule = rules.test_rule.get(framework)
    file_rule = rules.file_rule.get(framework)
    hits = [r.test_id for r in records if test_rule and test_rule(gold_id, r)]
    if len(hits) == 1:
        return IdMatch(gold_id, "test", tuple(hits))
    if hits:
        return IdMatch(gold_id, "ambiguous", tuple(sorted(hits)))
    members = [r.test_id for r in records if file_rule and file_rule(gold_id, r)]
    if members:
        return IdMatch(gold_id, "file", tuple(sorted(members)))
    return IdMatch(gold_id, "none", (gold_id,))


def gold_for_run(instance: IssueInstance, test_ids: Iterable[str]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """The instance's gold lists in our ids for one run, and the matching report.

    Native instances are returned unchanged with an empty report. For a foreign instance each gold id is
    matched by :func:`match_gold_id` against the tests this run reported; an id that stays unmatched
    keeps its foreign spelling, so grading sees it as ``NONE`` (never passing). An id of ours both in
    ``PASS_TO_PASS`` and in a fail/none list is kept in the latter only.

    Returns:
        ``({"FAIL_TO_PASS": [...], "NONE_TO_PASS": [...], "PASS_TO_PASS": [...]}, report)`` where
        ``report`` is ``{"id_dialect", "unmatched": {list: [gold id]}, "ambiguous": {gold id: [ids]},
        "file_level": {gold id: n tests}}`` (empty dict for native instances).
    """
    lists = {
        "FAIL_TO_PASS": list(instance.FAIL_TO_PASS),
        "NONE_TO_PASS": list(instance.NONE_TO_PASS),
        "PASS_TO_PASS": list(instance.PASS_TO_PASS),
    }
    dialect = getattr(instance, "id_dialect", None)
    if dialect is None:
        return lists, {}
    records = records_from_ids(instance.framework, sorted(test_ids))
    report: dict[str, Any] = {"id_dialect": dialect, "unmatched": {}, "ambiguous": {}, "file_level": {}}
    out: dict[str, list[str]] = {}
    for list_name, gold_ids in lists.items():
        ids: list[str] = []
        for gold_id in gold_ids:
            match = match_gold_id(dialect, instance.framework, gold_id, records)
            ids.extend(match.ids)
            if match.kind == "none":
                report["unmatched"].setdefault(list_name, []).append(gold_id)
            elif match.kind == "ambiguous":
                report["ambiguous"][gold_id] = list(match.ids)
            elif match.kind == "file":
                report["file_level"][gold_id] = len(match.ids)
        out[list_name] = sorted(set(ids))
    must = set(out["FAIL_TO_PASS"]) | set(out["NONE_TO_PASS"])
    out["PASS_TO_PASS"] = [i for i in out["PASS_TO_PASS"] if i not in must]
    return out, report


# ----------------------------------------------------------------------------------------- row dialects


def detect_row_dialect(row: Mapping[str, Any]) -> str | None:
    """``"swe-bench"``, ``"mobiledev-bench"``, ``"multi-swe-bench"`` or None (not a release row)."""
    if "org" in row and "number" in row and "fix_patch" in row and "base" in row:
        return "mobiledev-bench" if ("problem_statement" in row or "test_command" in row) else "multi-swe-bench"
    if "instance_id" in row and "base_commit" in row:
        return "swe-bench"
    return None


def _decoded(row: Mapping[str, Any]) -> dict[str, Any]:
    data = dict(row)
    for key in _MAYBE_ENCODED:
        value = data.get(key)
        if isinstance(value, str) and value.strip()[:1] in ("{", "["):
            try:
                data[key] = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{key}: JSON-encoded string does not decode: {exc.msg}") from exc
    command = data.get("test_command")
    if isinstance(command, float) and math.isnan(command):
        data["test_command"] = None
    return data


def _problem_statement(data: Mapping[str, Any]) -> str:
    if isinstance(data.get("problem_statement"), str):
        return data["problem_statement"]
    issues = data.get("resolved_issues") or []
    parts = [f"{i.get('title', '')}\n{i.get('body') or ''}".strip() for i in issues if isinstance(i, Mapping)]
    return "\n\n".join(p for p in parts if p) or f"{data.get('title', '')}\n{data.get('body') or ''}".strip()


def row_to_instance(row: Mapping[str, Any], *, row_dialect: str, default_framework: str | None) -> ForeignIssueInstance:
    """One Multi-SWE-bench / MobileDev-Bench row as an instance (pure).

    The row's ``test_command`` is not used: it is the harness's console command, whose output our
    parsers do not read; our framework plan runs the same tests with machine-readable results.

    Raises:
        ValueError: a field named in the message is missing, mistyped or undecodable.
        pydantic.ValidationError: the resulting instance is invalid (the field is named).
    """
    data = _decoded(row)
    for key in ("org", "repo", "number", "fix_patch", "test_patch"):
        if data.get(key) in (None, ""):
            raise ValueError(f"{key}: missing")
    base = data.get("base")
    if not isinstance(base, Mapping) or not isinstance(base.get("sha"), str):
        raise ValueError("base: expected an object with 'sha'")  # noqa: TRY004 - a field error, reported as such
    framework = default_framework or LANG_FRAMEWORK.get(str(data.get("lang") or "").lower())
    if framework is None:
        raise ValueError(f"lang: {data.get('lang')!r} names no framework; pass --dataset-framework")
    gold: dict[str, list[str]] = {"FAIL_TO_PASS": [], "NONE_TO_PASS": [], "PASS_TO_PASS": []}
    for key, list_name in _GOLD_MAP:
        tests = data.get(key) or {}
        if not isinstance(tests, (Mapping, list)):
            raise ValueError(f"{key}: expected an object keyed by test id")  # noqa: TRY004 - a field error, reported as such
        gold[list_name].extend(str(t) for t in tests)
    org, repo, number = str(data["org"]), str(data["repo"]), data["number"]
    return ForeignIssueInstance.model_validate(
        {
            "instance_id": f"{org}__{repo}-{number}",
            "foreign_id": f"{org}/{repo}:pr-{number}",
            "row_dialect": row_dialect,
            "repo": f"{org}/{repo}",
            "base_commit": base["sha"],
            "framework": framework,
            "problem_statement": _problem_statement(data),
            "patch": data["fix_patch"],
            "test_patch": data["test_patch"],
            **gold,
        }
    )


def load_dataset(path: Path, options: Mapping[str, Any]) -> list[LoadedRecord | ManifestError] | None:
    """Load a release file in whichever row dialect it is written; None when it is none of them.

    ``options["dataset_framework"]`` (``--dataset-framework``) is the framework of rows that name none.
    A broken row becomes a :class:`ManifestError` naming the file, line, instance and field; the other
    rows load.
    """
    framework = options.get("dataset_framework")
    try:
        rows = list(_dataset_rows(path))
    except ManifestError as exc:
        return [exc]
    except (OSError, UnicodeDecodeError) as exc:
        return [ManifestError(path, f"cannot read dataset: {exc}")]
    first = next((r for _, r in rows if isinstance(r, Mapping)), None)
    dialect = detect_row_dialect(first) if first is not None else None
    if dialect is None:
        return None
    if dialect == "swe-bench":
        return load_swe_bench_rows(path, default_framework=framework)
    out: list[LoadedRecord | ManifestError] = []
    for line, row in rows:
        out.append(_load_row(path, line, row, dialect, framework))
    return out


def _load_row(path: Path, line: int, row: Any, dialect: str, framework: str | None) -> LoadedRecord | ManifestError:
    if isinstance(row, ManifestError):
        return row
    if not isinstance(row, Mapping):
        return ManifestError(path, "row is not a JSON object", line=line)
    guess = f"{row.get('org')}__{row.get('repo')}-{row.get('number')}"
    try:
        instance = row_to_instance(row, row_dialect=dialect, default_framework=framework)
    except ValidationError as exc:
        return _errors_to_manifest_error(exc, path, guess, lambda _f: line)
    except ValueError as exc:
        field, _, message = str(exc).partition(": ")
        return ManifestError(path, message or str(exc), line=line, instance_id=guess, field=field)
    return record_for(instance, path, line)
