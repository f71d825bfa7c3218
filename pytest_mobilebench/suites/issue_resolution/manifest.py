"""Typed records of the issue-resolution suite (MobileDev-Bench; SPEC section 1).

Two sources produce the same :class:`IssueInstance`:

* a manifest, ``cases/issue_resolution/<owner>__<repo>.yaml``: top-level ``suite: issue_resolution``,
  shared fields (``repo``, ``framework``, ``environment``, ``test_command`` ...) and ``instances``, a list
  whose entries override the shared fields. Unknown keys are errors (they are usually typos).
* a dataset release in SWE-bench row form, ``--dataset release.jsonl`` (JSON list or JSON lines), where
  ``FAIL_TO_PASS`` and friends may be JSON-encoded strings and unknown columns are ignored.

``environment_setup_commit`` (optional, SWE-bench's field): the commit whose install inputs (dependency
manifests, lockfiles and the files the install reads) the instance's environment is installed from; the
repository itself stays at ``base_commit``. Absent (or equal to ``base_commit``): installed at the base.

An instance gives ``patch`` and ``test_patch`` inline, or ``fix_commit``: the merged upstream commit, from
which both are derived at evaluation time (``test_patch`` = the diff base..fix restricted to test files by
the framework's rule, ``patch`` = the rest).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pytest_mobilebench import frameworks
from pytest_mobilebench.runtime.environment import Environment
from pytest_mobilebench.manifest.yamlfile import YamlDocument, charge_file_problem, unknown_top_keys, validation_problem
from pytest_mobilebench.records import LoadedRecord, ManifestError

__all__ = [
    "Environment",
    "IssueInstance",
    "invalid_source",
    "load_dataset",
    "load_manifest",
    "record_for",
]

Difficulty = Literal["easy", "medium", "hard"]
Category = Literal["bug_fix", "new_feature", "feature_optimization"]
TimeLabel = Literal["<15m", "15m-1h", "1-4h", ">4h"]

_ID_RE = re.compile(r"^[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-[A-Za-z0-9_.-]+$")
_COMMIT_RE = re.compile(r"^[0-9a-fA-F]{7,40}$")
#: MobileDev-Bench Appendix B.2: the four time labels and the three difficulty classes they fall into.
TIME_LABEL_DIFFICULTY: dict[str, str] = {"<15m": "easy", "15m-1h": "medium", "1-4h": "hard", ">4h": "hard"}


def _listify(value: Any) -> Any:
    """SWE-bench releases store test lists as JSON-encoded strings; accept both forms."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"expected a list of test ids or a JSON-encoded list, got {value[:60]!r}") from exc
        return decoded
    return value


class IssueInstance(BaseModel):
    """One issue-resolution instance (SPEC section 1 "Instance fields").

    Raises (through pydantic): ValidationError naming the field for a missing ``base_commit``, a
    malformed ``instance_id`` or commit id, neither ``patch``/``test_patch`` nor ``fix_commit``, an
    unknown framework, or a test id present in two gold lists.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    instance_id: str
    repo: str
    base_commit: str
    framework: str
    problem_statement: str = ""
    patch: str | None = None
    test_patch: str | None = None
    fix_commit: str | None = None
    #: the commit the install inputs come from (module docstring); None: ``base_commit``
    environment_setup_commit: str | None = None
    repo_url: str | None = None
    FAIL_TO_PASS: tuple[str, ...] = ()
    NONE_TO_PASS: tuple[str, ...] = ()
    PASS_TO_PASS: tuple[str, ...] = ()
    test_command: str | None = None
    test_targets: tuple[str, ...] = ()
    test_results: tuple[str, ...] = ()
    environment: Environment = Environment()
    difficulty: Difficulty | None = None
    time_label: TimeLabel | None = None
    category: Category | None = None
    created_at: str | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    #: executed assertions per FAIL_TO_PASS / NONE_TO_PASS test in the validated fix run (``--mb-validate``
    #: proposes them, jest only): a candidate's pass with none where this says some is not a pass (issue 17)
    assertions: dict[str, int] = Field(default_factory=dict)
    #: how the instance was made (``python -m pytest_mobilebench mine``: fix commit, mining rule, problem
    #: statement source, validation run id, timings); plain data, never read by grading
    provenance: dict[str, Any] | None = None

    @field_validator("FAIL_TO_PASS", "NONE_TO_PASS", "PASS_TO_PASS", "test_targets", "test_results", mode="before")
    @classmethod
    def _decode_lists(cls, value: Any) -> Any:
        return _listify(value)

    @field_validator("created_at", mode="before")
    @classmethod
    def _stringify_dates(cls, value: Any) -> Any:
        return None if value is None else str(value)

    @field_validator("framework")
    @classmethod
    def _check_framework(cls, value: str) -> str:
        frameworks.get(value)  # FrameworkError (a ValueError) names the known frameworks
        return value

    @field_validator("instance_id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError(f"{value!r} is not of the form 'owner__repo-NUMBER'")
        return value

    @field_validator("repo")
    @classmethod
    def _check_repo(cls, value: str) -> str:
        owner, sep, name = value.partition("/")
        if not sep or not owner or not name or "/" in name:
            raise ValueError(f"{value!r} is not of the form 'owner/name'")
        return value

    @field_validator("environment_setup_commit", mode="before")
    @classmethod
    def _blank_setup_commit(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("base_commit", "fix_commit", "environment_setup_commit")
    @classmethod
    def _check_commit(cls, value: str | None) -> str | None:
        if value is not None and not _COMMIT_RE.match(value):
            raise ValueError(f"{value!r} is not a commit id (7 to 40 hex digits)")
        return value

    @model_validator(mode="after")
    def _check_sources(self) -> IssueInstance:
        if self.fix_commit is None and (self.patch is None or self.test_patch is None):
            raise ValueError("give either 'patch' and 'test_patch', or 'fix_commit'")
        seen: dict[str, str] = {}
        for name in ("FAIL_TO_PASS", "NONE_TO_PASS", "PASS_TO_PASS"):
            for test_id in getattr(self, name):
                if test_id in seen:
                    raise ValueError(f"test {test_id!r} is in both {seen[test_id]} and {name}")
                seen[test_id] = name
        if self.difficulty is None and self.time_label is not None:
            object.__setattr__(self, "difficulty", TIME_LABEL_DIFFICULTY[self.time_label])
        return self

    @property
    def owner_repo_slug(self) -> str:
        """``owner__name``, the manifest file stem and the xdist group."""
        return self.repo.replace("/", "__")


def _errors_to_manifest_error(
    exc: ValidationError, path: Path, instance_id: str | None, line_of: Any, skip_missing: frozenset[str] = frozenset()
) -> ManifestError | None:
    """Every error of ``exc`` in one ManifestError (:func:`validation_problem`); None when only fields of
    ``skip_missing`` are missing (the file's unknown top-level key already explains it)."""
    found = validation_problem(exc, known=_ALL_KEYS, skip_missing=skip_missing)
    if found is None:
        return None
    field, message = found
    return ManifestError(
        path, message, line=line_of(field.split(".")[0] if field else None), instance_id=instance_id, field=field
    )


def record_for(instance: IssueInstance, path: Path, line: int | None) -> LoadedRecord:
    """Wrap an instance as a :class:`LoadedRecord` with its markers and xdist group."""
    markers = ["issue_resolution", instance.framework, *frameworks.get(instance.framework).markers]
    for extra in (instance.difficulty, instance.category):
        if extra:
            markers.append(extra)
    return LoadedRecord(
        suite="issue_resolution",
        instance_id=instance.instance_id,
        source=path,
        line=line,
        record=instance,
        group=instance.owner_repo_slug,
        markers=tuple(markers),
    )


_SHARED_KEYS = frozenset(IssueInstance.model_fields) - {
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "fix_commit",
    "environment_setup_commit",
}
#: every key a manifest may use (instance and environment fields), for "did you mean" on a typo
_ALL_KEYS = frozenset(IssueInstance.model_fields) | frozenset(Environment.model_fields)


def _absolute_url(url: Any, manifest: Path) -> Any:
    """A ``repo_url`` that is a plain relative path is taken relative to the manifest's folder.

    Plain paths stay paths (git clones a bundle file from a path, not from a ``file://`` URL).
    """
    if isinstance(url, str) and "://" not in url and not url.startswith("/") and ":" not in url.split("/")[0]:
        return str((manifest.parent / url).resolve())
    return url


def load_manifest(doc: YamlDocument) -> list[LoadedRecord | ManifestError]:
    """Load an issue-resolution manifest; each broken entry becomes a ManifestError of its own.

    Shared top-level keys (any instance field except the per-instance ones) are defaults for every entry;
    ``environment`` mappings are merged key by key. ``repo_url`` (clone source overriding
    ``--mb-repo-url-template``) may be a path relative to the manifest.
    """
    data = doc.data
    path = doc.path
    problem, suggested = unknown_top_keys(doc, _SHARED_KEYS | {"suite", "instances"}, _ALL_KEYS)
    entries = data.get("instances")
    if not isinstance(entries, list) or not entries:
        return charge_file_problem(
            [ManifestError(path, "'instances' must be a non-empty list", line=doc.line_of("instances") or 1)], problem
        )
    shared = {k: v for k, v in data.items() if k in _SHARED_KEYS}
    out: list[LoadedRecord | ManifestError] = []
    for index, entry in enumerate(entries):
        line = doc.line_of("instances", index)
        if not isinstance(entry, Mapping):
            out.append(ManifestError(path, f"instance entry #{index + 1} is not a mapping", line=line))
            continue
        merged: dict[str, Any] = {**shared, **entry}
        if "repo_url" in merged:
            merged["repo_url"] = _absolute_url(merged["repo_url"], path)
        if isinstance(shared.get("environment"), Mapping) and isinstance(entry.get("environment"), Mapping):
            merged["environment"] = {**shared["environment"], **entry["environment"]}
        instance_id = entry.get("instance_id")
        try:
            instance = IssueInstance.model_validate(merged)
        except ValidationError as exc:

            def line_of(field: str | None, _i: int = index) -> int | None:
                if field is None:
                    return doc.line_of("instances", _i)
                got = doc.line_of("instances", _i, field)
                if got == doc.line_of("instances", _i) and field in doc.key_lines:
                    return doc.key_lines[field]
                return got

            iid = str(instance_id) if instance_id else None
            out.append(
                _errors_to_manifest_error(exc, path, iid, line_of, suggested)
                or ManifestError(
                    path,
                    problem.message if problem else str(exc),
                    line=problem.line if problem else line,
                    instance_id=iid,
                )
            )
            continue
        out.append(record_for(instance, path, line))
    return charge_file_problem(out, problem)


class _RepeatedKey(ValueError):
    """A JSON object names one key twice (``json`` would keep the last value without a word)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # the rare case: find the first repeated key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(f"key {key!r} occurs twice in one object (JSON keeps only the last)")
            seen.add(key)
    return out


def _dataset_rows(path: Path) -> Iterator[tuple[int, Any]]:
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            rows = json.loads(text, object_pairs_hook=_unique_keys)
        except _RepeatedKey as exc:
            raise ManifestError(path, str(exc)) from exc
        except json.JSONDecodeError as exc:
            raise ManifestError(path, f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from exc
        for i, row in enumerate(rows):
            yield i + 1, row  # entry number, not line: JSON lists carry no per-row line
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line, object_pairs_hook=_unique_keys)
        except _RepeatedKey as exc:
            yield lineno, ManifestError(path, str(exc), line=lineno)
        except json.JSONDecodeError as exc:
            yield lineno, ManifestError(path, f"line is not valid JSON: {exc.msg} (column {exc.colno})", line=lineno)


def load_dataset(path: Path, *, default_framework: str | None = None) -> list[LoadedRecord | ManifestError]:
    """Load a SWE-bench-style release (JSON list or JSON lines) without converting it.

    Unknown columns (``version``, ``hints_text`` ...) are ignored; ``environment_setup_commit`` is read (an
    empty one is the base);
    ``framework`` may be absent when ``default_framework`` is given.
    """
    allowed = set(IssueInstance.model_fields)
    out: list[LoadedRecord | ManifestError] = []
    try:
        rows = list(_dataset_rows(path))
    except ManifestError as exc:
        return [exc]
    except (OSError, UnicodeDecodeError) as exc:
        return [ManifestError(path, f"cannot read dataset: {exc}")]
    for lineno, row in rows:
        if isinstance(row, ManifestError):
            out.append(row)
            continue
        if not isinstance(row, Mapping):
            out.append(ManifestError(path, "row is not a JSON object", line=lineno))
            continue
        data = {k: v for k, v in row.items() if k in allowed}
        if "framework" not in data and default_framework:
            data["framework"] = default_framework
        try:
            instance = IssueInstance.model_validate(data)
        except ValidationError as exc:
            out.append(
                _errors_to_manifest_error(exc, path, row.get("instance_id"), lambda _f, _l=lineno: _l)
                or ManifestError(path, str(exc), line=lineno)
            )
            continue
        out.append(record_for(instance, path, lineno))
    return out


def gold_lists(instance: IssueInstance) -> Mapping[str, Sequence[str]]:
    """The three gold lists by name."""
    return {
        "FAIL_TO_PASS": instance.FAIL_TO_PASS,
        "NONE_TO_PASS": instance.NONE_TO_PASS,
        "PASS_TO_PASS": instance.PASS_TO_PASS,
    }


def invalid_source(record: LoadedRecord, exc: Any) -> ManifestError:
    """The invalid-instance error of an instance whose repository lacks a commit it names (or does not exist),
    naming the file, line, instance, the field that names the commit, and the commit. ``exc``: a
    :class:`pytest_mobilebench.runtime.base.NotInRepository` (its ``commits`` and message)."""
    instance: IssueInstance = record.record
    names = ("base_commit", "fix_commit", "environment_setup_commit")
    fields = [name for name in names if getattr(instance, name, None) in exc.commits]
    what = "; ".join(f"{name} {getattr(instance, name)} is not in the repository" for name in fields) or str(exc)
    return ManifestError(
        record.source,
        f"{what} ({exc})",
        line=record.line,
        instance_id=instance.instance_id,
        field=fields[0] if len(fields) == 1 else ("repo_url" if not exc.commits else None),
    )
