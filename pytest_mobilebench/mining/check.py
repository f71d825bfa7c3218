"""``python -m pytest_mobilebench dataset check FILE...``: the linter for issue-resolution manifests and releases.

Reads what the harness reads: manifest YAML (``suite: issue_resolution``; a folder is searched for
``*.yaml``) and releases in any dialect ``--dataset`` accepts (SWE-bench, Multi-SWE-bench, MobileDev-Bench
JSON / JSON lines). Every finding names the file, line, instance and field. Findings:

* the loader's own errors (unknown keys, malformed ids or commits, a test in two gold lists ...);
* ``instance_id`` used twice (across all files given);
* no ``FAIL_TO_PASS`` and no ``NONE_TO_PASS`` test (SPEC section 1: such an instance is never valid);
* an inline ``test_patch`` touching files that are not tests, an inline ``patch`` touching test files (the
  framework's default test rule; instances with ``fix_commit`` are split by that rule when evaluated);
* missing environment facts: react-native ``node`` and ``package_manager``, android ``jdk``, flutter
  ``flutter`` (or, with ``recipe`` / ``image``, an ``install``);
* ``--cutoff DATE``: ``created_at`` before it, or absent (training-data contamination);
* ``--run RUN_DIR``: gold ids that no run of the instance in that folder reported (its ``parsed*.json``
  evidence); instances without evidence there are counted as unchecked. Ids of a foreign dialect
  (``id_dialect``) are matched at grading time and are not checked here;
* ``--repo [OWNER/NAME=]PATH``: a ``base_commit`` / ``fix_commit`` the local copy of the instance's repository
  (work tree, mirror or bundle: :mod:`.commits`) lacks; instances of other repositories are listed unchecked;
* release rows that name no framework, checked without ``--framework``: the finding names that option.

A file that cannot be read (missing, not a manifest nor a release) is a finding of the file, not an instance.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final

from pytest_mobilebench.mining._harness import (
    IssueInstance,
    ManifestError,
    PatchError,
    frameworks,
    load_manifest,
    load_release,
    parse_patch,
    read_json,
    read_yaml,
)
from pytest_mobilebench.mining.commits import open_repos
from pytest_mobilebench.mining.commits import unchecked as unchecked_commits

__all__ = ["CheckOptions", "Finding", "check", "render"]

#: Environment facts each framework's instances must state (a ``recipe`` / ``image`` needs ``install``).
REQUIRED_FACTS: Final[Mapping[str, tuple[str, ...]]] = {
    "react-native": ("node", "package_manager"),
    "android": ("jdk",),
    "flutter": ("flutter",),
}
_BOTH_LISTS: Final = re.compile(r"is in both (\w+) and (\w+)")


@final
@dataclasses.dataclass(frozen=True)
class Finding:
    """One problem, at ``path:line``, of ``instance`` (None: the file), in ``field`` (None: the entry)."""

    path: str
    line: int | None
    instance: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.path + (f":{self.line}" if self.line else "")
        parts = [
            where,
            f"instance {self.instance!r}" if self.instance else None,
            f"field {self.field!r}" if self.field else None,
        ]
        return ": ".join([p for p in parts if p] + [self.message])


@final
@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """``files``: manifests, folders or releases; ``runs``: run folders; ``cutoff``: ``YYYY-MM-DD``."""

    files: tuple[Path, ...]
    runs: tuple[Path, ...] = ()
    cutoff: str | None = None
    framework: str | None = None
    repos: tuple[str, ...] = ()  # ``[OWNER/NAME=]PATH`` local copies to look commits up in


@final
@dataclasses.dataclass(frozen=True)
class _Entry:
    """A loaded instance and how to find the line of one of its fields."""

    instance: IssueInstance
    path: str
    line: int | None
    field_lines: Mapping[str, int]

    def at(self, field: str | None, message: str) -> Finding:
        key = (field or "").split(".")[0]
        return Finding(self.path, self.field_lines.get(key, self.line), self.instance.instance_id, field, message)


#: said of a release row without a framework when none was given on the command line
NO_FRAMEWORK: Final = (
    "the release names no framework: give --framework android|flutter|react-native, as pytest's --dataset-framework"
)


def _from_error(exc: ManifestError, field_lines: Mapping[str, int] | None = None, *, release: bool = False) -> Finding:
    field, line = exc.field, exc.line
    both = _BOTH_LISTS.search(exc.message)
    if both and not field:
        field = both.group(2)
        line = (field_lines or {}).get(field, line)
    message = exc.message.removeprefix("Value error, ")
    if release and (field == "framework" or "field 'framework'" in message):
        message += f" ({NO_FRAMEWORK})"
    return Finding(exc.path, line, exc.instance_id, field, message)


def _files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        else:
            yield path


def _load(path: Path, framework: str | None) -> tuple[list[_Entry], list[Finding]]:
    """The instances of one file and the findings of loading it."""
    if not path.is_file():
        return [], [Finding(str(path), None, None, None, "no such file")]
    if path.suffix in (".yaml", ".yml"):
        try:
            doc = read_yaml(path)
        except ManifestError as exc:
            return [], [_from_error(exc)]
        if doc.data.get("suite") == "device_repair":  # its own loader's errors; --verify measures it on devices
            from pytest_mobilebench.suites.device_repair import SUITE as DEVICE_REPAIR

            return [], [_from_error(e) for e in DEVICE_REPAIR.load(path, doc) if isinstance(e, ManifestError)]
        if doc.data.get("suite") != "issue_resolution":
            return [], [
                Finding(
                    str(path),
                    doc.line_of("suite") or 1,
                    None,
                    "suite",
                    f"suite {doc.data.get('suite')!r}: dataset check lints issue_resolution manifests",
                )
            ]
        loaded = load_manifest(doc)
        entries = doc.data.get("instances") if isinstance(doc.data.get("instances"), list) else []
        lines = [doc.item_lines.get("instances", [])[i][1] if i < len(doc.item_lines.get("instances", [])) else {}
                 for i in range(len(loaded))] if len(loaded) == len(entries) else [{} for _ in loaded]  # fmt: skip
    else:
        release = load_release(path, {"dataset_framework": framework})
        if release is None:
            return [], [Finding(str(path), 1, None, None, "not a manifest nor a release row dialect the harness reads")]
        loaded, lines = release, [{} for _ in release]
    good: list[_Entry] = []
    found: list[Finding] = []
    for item, field_lines in zip(loaded, lines):
        if isinstance(item, ManifestError):
            found.append(
                _from_error(item, field_lines, release=framework is None and path.suffix not in (".yaml", ".yml"))
            )
        else:
            good.append(_Entry(item.record, str(path), item.line, field_lines))
    return good, found


def _reported(runs: Sequence[Path]) -> dict[str, set[str]]:
    """instance id -> every test id any ``parsed*.json`` of its evidence in ``runs`` reports."""
    folders: dict[str, set[Path]] = {}
    for run in runs:
        summary = read_json(run / "summary.json")
        for entry in (summary or {}).get("instances", {}).values() if isinstance(summary, Mapping) else ():
            if isinstance(entry, Mapping) and entry.get("evidence_dir"):
                folders.setdefault(str(entry["instance_id"]), set()).add(Path(entry["evidence_dir"]))
        for result in run.glob("*/*/result.json"):
            data = read_json(result)
            if isinstance(data, Mapping) and data.get("instance_id"):
                folders.setdefault(str(data["instance_id"]), set()).add(result.parent)
    reported: dict[str, set[str]] = {}
    for iid, dirs in folders.items():
        for folder in dirs:
            for parsed in folder.glob("parsed*.json"):
                data = read_json(parsed)
                if isinstance(data, Mapping) and isinstance(data.get("tests"), Mapping):
                    reported.setdefault(iid, set()).update(map(str, data["tests"]))
    return reported


def _patch_findings(e: _Entry) -> list[Finding]:
    inst = e.instance
    if inst.patch is None or inst.test_patch is None:
        return []
    rule = frameworks.default_test_rule(inst.framework)
    out = []
    for field, text, wrong in (("test_patch", inst.test_patch, False), ("patch", inst.patch, True)):
        try:
            info = parse_patch(text, name=field)
        except PatchError as exc:
            out.append(e.at(field, str(exc)))
            continue
        bad = [p for p in info.paths if rule(p) is wrong]
        if bad:
            what = "test files (the test patch's)" if wrong else "files that are not tests"
            out.append(e.at(field, f"touches {what}: {', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''}"))
    return out


def _environment_findings(e: _Entry) -> list[Finding]:
    env = e.instance.environment
    if env.recipe or env.image:
        return [] if env.install else [e.at("environment.install", "a recipe or image without 'install'")]
    needed = REQUIRED_FACTS.get(e.instance.framework, ())
    return [e.at(f"environment.{fact}", "missing environment fact") for fact in needed if getattr(env, fact) is None]


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _instance_findings(e: _Entry, opts: CheckOptions, reported: Mapping[str, set[str]]) -> list[Finding]:
    inst = e.instance
    out = _patch_findings(e) + _environment_findings(e)
    if not inst.FAIL_TO_PASS and not inst.NONE_TO_PASS:
        out.append(e.at("FAIL_TO_PASS", "no FAIL_TO_PASS and no NONE_TO_PASS test: the instance can never be valid"))
    if opts.cutoff:
        created = _date(inst.created_at) if inst.created_at else None
        if created is None:
            out.append(
                e.at("created_at", f"no usable created_at ({inst.created_at!r}): cannot check --cutoff {opts.cutoff}")
            )
        elif created < _date(opts.cutoff):  # type: ignore[operator]
            out.append(e.at("created_at", f"created {created}, before the cut-off {opts.cutoff} (contamination)"))
    seen = reported.get(inst.instance_id)
    if seen is not None and not getattr(inst, "id_dialect", None):
        for name in ("FAIL_TO_PASS", "NONE_TO_PASS", "PASS_TO_PASS"):
            missing = [t for t in getattr(inst, name) if t not in seen]
            if missing:
                out.append(e.at(name, f"{len(missing)} test(s) no run reported: {', '.join(map(repr, missing[:3]))}"
                                      f"{' ...' if len(missing) > 3 else ''}"))  # fmt: skip
    return out


def check(opts: CheckOptions) -> tuple[list[Finding], dict[str, Any]]:
    """All findings of the files (see the module docstring), and ``{"files", "instances", "unchecked_runs"}``.

    Raises:
        ValueError: ``cutoff`` is not a ``YYYY-MM-DD`` date; a ``--repo`` cannot be opened (a
            :class:`~pytest_mobilebench.mining.gitsource.MiningError` naming it).
    """
    if opts.cutoff and _date(opts.cutoff) is None:
        raise ValueError(f"--cutoff {opts.cutoff!r} is not a YYYY-MM-DD date")
    reported = _reported(opts.runs)
    repos = open_repos(opts.repos)
    findings: list[Finding] = []
    first: dict[str, _Entry] = {}
    files = list(_files(opts.files))
    instances = 0
    try:
        for path in files:
            entries, errors = _load(path, opts.framework)
            findings += errors
            instances += len(entries) + sum(
                1 for f in errors if f.instance or f.field
            )  # a file's own problem is no instance
            for e in entries:
                iid = e.instance.instance_id
                if iid in first:
                    findings.append(
                        e.at("instance_id", f"duplicate instance id (first at {first[iid].path}:{first[iid].line})")
                    )
                else:
                    first[iid] = e
                findings += _instance_findings(e, opts, reported)
                findings += [e.at(field, message) for field, message in repos.findings(e.instance)]
    finally:
        repos.close()
    unchecked = sorted(set(first) - set(reported)) if opts.runs else []
    order = {str(path): n for n, path in enumerate(files)}
    findings.sort(key=lambda f: (order.get(f.path, len(order)), f.line or 0))
    return findings, {
        "files": len(files),
        "instances": instances,
        "unchecked_runs": unchecked,
        "unchecked_commits": unchecked_commits(repos, {k: e.instance for k, e in first.items()}),
    }


def render(findings: Sequence[Finding], stats: Mapping[str, Any]) -> str:
    """One line per finding, then a count line."""
    lines = [str(f) for f in findings]
    tail = f"{len(findings)} finding(s)" if findings else "no finding"
    lines.append(f"dataset check: {stats['instances']} instance(s) in {stats['files']} file(s): {tail}")
    if stats.get("unchecked_runs"):
        lines.append(f"  not in the run(s), gold ids unchecked: {', '.join(stats['unchecked_runs'])}")
    if stats.get("unchecked_commits"):
        lines.append(f"  no --repo for their repository, commits unchecked: {', '.join(stats['unchecked_commits'])}")
    return "\n".join(lines) + "\n"
