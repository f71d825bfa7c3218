"""``python -m pytest_mobilebench mine REPO``: history -> static filters -> candidates -> validation -> output.

1. The first-parent history from the tip (``--since``, or the ``--commits`` given) is read newest first;
   each commit is checked by :func:`.scan.static_reason` on its ``--numstat`` (cheap), then split,
   planned and its environment inferred (:mod:`.split`); every commit that does not make a candidate is a
   counted :class:`.scan.Reason`. ``--limit N`` stops after N candidates.
2. The candidates are written as a manifest, ``<out>/candidates/<owner>__<repo>.yaml``; unless
   ``--no-validate`` it runs through the validation mode (:mod:`.validate`).
3. ``<out>/<owner>__<repo>.yaml`` holds the kept instances with their gold lists and provenance (under
   ``--no-validate`` nothing but the candidates is written, and the terminal says their test lists are
   empty); ``--format swe-bench|mobiledev-bench`` adds ``<out>/<owner>__<repo>.<format>.jsonl`` (beside the
   candidates under ``--no-validate``); ``<out>/report.json`` the report (:mod:`.report`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench.mining import report as report_mod
from pytest_mobilebench.mining._harness import (
    GitError,
    PatchError,
    atomic_write_json,
    atomic_write_text,
)
from pytest_mobilebench.mining.gitsource import Commit, MiningError, Source, open_source
from pytest_mobilebench.mining.progress import Progress
from pytest_mobilebench.mining.rank import evidence, ranked
from pytest_mobilebench.mining.records import (
    Candidate,
    IssueIndex,
    instance_id_for,
    manifest_text,
    mobiledev_bench_row,
    pr_number,
    problem_statement,
    swe_bench_row,
)
from pytest_mobilebench.mining.scan import (
    _SYNC_MERGE,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_LINES,
    FRAMEWORK_FILES,
    ROLLUP_COMMITS,
    Reason,
    infer_framework,
    static_reason,
)
from pytest_mobilebench.mining.split import (
    environment_at,
    planned_command,
    split_change,
    test_rule_at,
    unread_snapshots,
)
from pytest_mobilebench.mining.validate import (
    ValidationInterrupted,
    Verdict,
    read_audit,
    read_verdicts,
    run_pytest,
)

__all__ = ["MineOptions", "Rejection", "mine"]

FORMATS = ("swe-bench", "mobiledev-bench")


@final
@dataclasses.dataclass(frozen=True)
class MineOptions:
    """The ``mine`` command line (see ``python -m pytest_mobilebench mine --help``)."""

    repo: str
    out: Path
    name: str | None = None
    ref: str | None = None
    framework: str | None = None
    since: str | None = None
    commits: tuple[str, ...] = ()
    limit: int | None = None
    validate: bool = True
    runs: int = 2
    workers: int = 0
    runtime: str = "auto"
    audit: bool = True
    issues: Path | None = None
    formats: tuple[str, ...] = ()
    max_files: int = DEFAULT_MAX_FILES
    max_lines: int = DEFAULT_MAX_LINES
    progress: bool = False
    #: ``--environment FILE``: environment fields (``install``, ``install_env``, ``registry_replacements``, pins...)
    #: set on every candidate over the inferred ones, so its validation runs with them
    environment: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    environment_file: Path | None = None


@final
@dataclasses.dataclass(frozen=True)
class Rejection:
    """A commit that is not an instance, and why."""

    commit: str
    subject: str
    reason: Reason
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        """Plain builtins for the report."""
        return {"commit": self.commit, "subject": self.subject, "reason": self.reason.value, "detail": self.detail}


def _examine(source: Source, commit: Commit, framework: str, opts: MineOptions, issues: IssueIndex | None,
             taken: set[str]) -> Candidate | Rejection:  # fmt: skip
    """One commit through the static filters, the split, the plan and the environment inference; an object
    git cannot read (a mirror lacking blobs) makes it an ``unreadable_object`` rejection with git's message."""
    if not commit.parents:
        return Rejection(commit.sha, commit.subject, Reason.ROOT_COMMIT)
    try:
        return _examine_readable(source, commit, framework, opts, issues, taken)
    except GitError as exc:
        return Rejection(commit.sha, commit.subject, Reason.UNREADABLE, _git_message(exc))


def _git_message(exc: GitError) -> str:
    """The git command and its own message, at most 600 characters."""
    text = str(exc)
    return text if len(text) <= 600 else text[:597] + "..."


def _examine_readable(source: Source, commit: Commit, framework: str, opts: MineOptions, issues: IssueIndex | None,
                      taken: set[str]) -> Candidate | Rejection:  # fmt: skip
    def reject(reason: Reason, detail: str = "") -> Rejection:
        return Rejection(commit.sha, commit.subject, reason, detail)

    base = commit.parents[0]
    side = source.side_commits(commit) if len(commit.parents) > 1 and not _SYNC_MERGE.match(commit.subject) else 0
    rule = test_rule_at(source, framework, base)
    stats = source.numstat(base, commit.sha)
    reason = static_reason(commit, stats, rule, max_files=opts.max_files, max_lines=opts.max_lines, side_commits=side)
    if reason is not None:
        return reject(reason, _static_detail(reason, commit, side))
    lacking = source.missing(base, commit.sha)
    if lacking:  # the harness checks out the whole tree: from this repository it cannot
        return reject(Reason.UNREADABLE, _missing_detail(lacking))
    try:
        split = split_change(source.diff(base, commit.sha), rule, name=commit.sha[:10])
    except PatchError as exc:
        return reject(Reason.UNPARSEABLE_DIFF, str(exc))
    names = source.names(base)
    unread = unread_snapshots(framework, split.test_files, {*names, *split.test_files})  # tests it adds count
    if unread:
        return reject(Reason.SNAPSHOT_WITHOUT_TEST, "; ".join(unread))
    try:
        command = planned_command(source, framework, base, split.test_files, names)
    except ValueError as exc:  # PlanError
        return reject(Reason.NO_RUNNABLE_TESTS, str(exc))
    try:
        environment, env_sources = environment_at(
            source, framework, base, as_of=source.commit(base).committed_at, names=names
        )
    except ValueError as exc:  # RecipeError
        return reject(Reason.NO_ENVIRONMENT, str(exc))
    if opts.environment:  # mine --environment FILE: the given fields over the inferred ones
        environment = {**environment, **opts.environment}
        env_sources = {**env_sources, **{key: f"override: {opts.environment_file}" for key in opts.environment}}
    pr = pr_number(commit)
    text, text_source, linked = problem_statement(commit, issues, pr)
    iid = instance_id_for(source.repo, commit, taken)
    taken.add(iid)
    found = evidence(commit, [f for f in stats if not rule(f.path)])
    return Candidate(iid, source.repo, framework, commit, split, text, text_source, tuple(linked), environment,
                     env_sources, command, found)  # fmt: skip


def _missing_detail(lacking: Mapping[str, str], shown: int = 3) -> str:
    """``the base or fix tree lacks 3 object(s) this repository does not hold: <path> (<id>), ...``."""
    named = [f"{path or '?'} ({oid[:12]})" for oid, path in sorted(lacking.items(), key=lambda kv: kv[1])]
    more = f", and {len(named) - shown} more" if len(named) > shown else ""
    return (
        f"the base or fix tree lacks {len(named)} object(s) this repository does not hold (a checkout needs every "
        f"file; git rev-list --objects --missing=print): {', '.join(named[:shown])}{more}"
    )


def _static_detail(reason: Reason, commit: Commit, side: int) -> str:
    """What a static rejection rests on, for the report."""
    if reason is Reason.ROLLUP:
        return f"a merge bringing {side} commits (more than {ROLLUP_COMMITS}): a roll-up, not one fix"
    if reason is Reason.RELEASE:
        return f"release / version-bump subject: {commit.subject[:120]!r}"
    if reason is Reason.MERGE_NOISE:
        return "a merge syncing branches, or one that changes nothing on the first parent"
    return ""


def scan(source: Source, framework: str, opts: MineOptions,
         progress: Progress | None = None) -> tuple[int, list[Candidate], list[Rejection]]:  # fmt: skip
    """``(commits scanned, candidates ranked by bug-fix evidence (:mod:`.rank`), rejections)`` of the history
    the options select; ``progress`` is told after each commit. A commit git cannot read is an
    ``unreadable_object`` rejection, and the scan goes on."""
    shas = [source.resolve(c) for c in opts.commits] if opts.commits else source.first_parent(opts.since)
    issues = IssueIndex.load(opts.issues) if opts.issues else None
    candidates: list[Candidate] = []
    rejections: list[Rejection] = []
    taken: set[str] = set()
    scanned = 0
    for sha in shas:
        if opts.limit is not None and len(candidates) >= opts.limit:
            break
        scanned += 1
        try:
            commit = source.commit(sha)
        except GitError as exc:
            rejections.append(Rejection(sha, "", Reason.UNREADABLE, _git_message(exc)))
        else:
            found = _examine(source, commit, framework, opts, issues, taken)
            (candidates if isinstance(found, Candidate) else rejections).append(found)  # type: ignore[arg-type]
        if progress is not None:
            progress.update(scanned, len(shas), len(candidates))
    if progress is not None:
        progress.done(scanned, len(candidates))
    return scanned, ranked(candidates, [c.evidence.score for c in candidates]), rejections


def _url_for(source: Source, manifest_dir: Path) -> str:
    """The manifest's ``repo_url``: a local source relative to the manifest's folder, a URL as given."""
    path = Path(source.repo_url)
    if path.is_absolute() and path.exists():
        return os.path.relpath(path, manifest_dir.resolve())
    return source.repo_url


def _write_manifest(
    path: Path, source: Source, framework: str, entries: Sequence[Mapping[str, Any]], header: str
) -> Path:
    text = manifest_text(source.repo, framework, _url_for(source, path.parent), entries, header)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path


def _validation_provenance(run_id: str, opts: MineOptions, verdict: Verdict) -> dict[str, Any]:
    return {
        "validation": {
            "run_id": run_id,
            "runs": opts.runs,
            "status": verdict.status,
            "cached": verdict.cached,
            "flaky_dropped": list(verdict.flaky),
            "setup_s": verdict.setup_s,
            "test_s": verdict.test_s,
        }
    }


def _validate(
    manifest: Path, candidates: Sequence[Candidate], opts: MineOptions, run_id: str
) -> tuple[dict[str, Verdict], dict[str, Any]]:
    """Run the validation mode on the candidates' manifest: each candidate's verdict, and the run's exit
    status and log file (where to look when instances are ``not_run``)."""
    reports = opts.out / "reports"
    args = [f"--mb-validate-runs={max(1, opts.runs)}", "--mb-validate", f"--mb-runtime={opts.runtime}"]
    args += ["-n", str(opts.workers)] if opts.workers > 0 else []
    log = opts.out / "logs" / f"{run_id}.log"
    try:
        status, summary = run_pytest(manifest, reports, run_id, args, log)
    except ValidationInterrupted as stop:  # Ctrl-C: what finished is read from the run's own summary
        status, summary, interrupted = stop.status, stop.summary, True
    else:
        interrupted = False
    info = {"exit_status": status, "log": str(log), **({"interrupted": True} if interrupted else {})}
    return read_verdicts(summary, [c.instance_id for c in candidates]), info


def _audit(manifest: Path, opts: MineOptions, run_id: str) -> dict[str, Any]:
    """The audit table of the kept instances; ``{"interrupted": True, ...}`` (what the run wrote) on Ctrl-C."""
    args = ["--mb-audit", f"--mb-runtime={opts.runtime}", *(["-n", str(opts.workers)] if opts.workers > 0 else [])]
    try:
        _, summary = run_pytest(manifest, opts.out / "reports", run_id, args, opts.out / "logs" / f"{run_id}.log")
    except ValidationInterrupted as stop:
        return {**read_audit(stop.summary), "interrupted": True}
    return read_audit(summary)


def _write_dialects(
    out: Path, slug: str, formats: Sequence[str], kept: Sequence[Candidate], verdicts: Mapping[str, Verdict]
) -> list[Path]:
    """``<out>/<slug>.<format>.jsonl`` per format (``out`` is ``<out>/candidates`` for unvalidated rows)."""
    written = []
    for fmt in formats:
        rows = []
        for c in kept:
            verdict = verdicts.get(c.instance_id)
            gold = verdict.gold if verdict else {}
            rows.append(
                swe_bench_row(c, gold)
                if fmt == "swe-bench"
                else mobiledev_bench_row(c, gold, verdict.states if verdict else {})
            )
        path = out / f"{slug}.{fmt}.jsonl"
        atomic_write_text(path, "".join(json.dumps(r, sort_keys=False) + "\n" for r in rows))
        written.append(path)
    return written


def _validate_and_write(
    source: Source, framework: str, candidates: Sequence[Candidate], opts: MineOptions, run_id: str, header: str
) -> tuple[dict[str, Verdict], dict[str, Any], dict[str, Any], list[Path]]:
    """Write the candidates, validate them (and audit the kept ones), write the outputs; an output of an
    earlier run that this run does not rewrite is removed (it would describe other instances).

    Under ``--no-validate`` only the candidates are written (``<out>/candidates/``: the manifest, and the
    ``--format`` rows, their test lists empty); a final manifest, whose lists are a validation's, is neither
    written nor removed.

    Returns ``(verdicts, the validation run's exit status and log, the audit table, files written)``."""
    slug = source.repo.replace("/", "__")
    outputs: list[Path] = []
    verdicts: dict[str, Verdict] = {}
    run_info: dict[str, Any] = {}
    audit: dict[str, Any] = {}
    drafts = opts.out / "candidates"
    stale = [drafts / f"{slug}.yaml", *(drafts / f"{slug}.{f}.jsonl" for f in FORMATS)]
    if opts.validate:
        stale += [opts.out / f"{slug}.yaml", *(opts.out / f"{slug}.{f}.jsonl" for f in FORMATS)]
    if candidates:
        cand_path = _write_manifest(
            stale[0], source, framework, [c.entry() for c in candidates], header + " Not validated."
        )
        outputs.append(cand_path)
        if opts.validate:
            verdicts, run_info = _validate(cand_path, candidates, opts, run_id)
            if run_info.get("interrupted"):  # no manifest from half a validation; earlier outputs stay as they were
                return verdicts, run_info, audit, outputs
        else:
            outputs += _write_dialects(drafts, slug, opts.formats, candidates, {})
    kept = [c for c in candidates if verdicts[c.instance_id].kept] if verdicts else []
    entries = [
        c.entry(verdicts[c.instance_id].gold, _validation_provenance(run_id, opts, verdicts[c.instance_id]))
        if c.instance_id in verdicts
        else c.entry(None, {"validation": None})
        for c in kept
    ]
    if entries:
        state = f"{len(kept)} valid of {len(candidates)} (validation run {run_id})."
        final = _write_manifest(opts.out / f"{slug}.yaml", source, framework, entries, header + " " + state)
        outputs.append(final)
        if verdicts and opts.audit:
            audit = _audit(final, opts, run_id + "-audit")
        outputs += _write_dialects(opts.out, slug, opts.formats, kept, verdicts)
    for path in stale:
        if path not in outputs:
            path.unlink(missing_ok=True)
    return verdicts, run_info, audit, outputs


def mine(opts: MineOptions) -> dict[str, Any]:
    """Run the pipeline of the module docstring; return the report (also written to ``<out>/report.json``).

    Ctrl-C during the validation or the audit interrupts that run cleanly (:func:`.validate.run_pytest`); the
    report then says ``"interrupted": "validation"`` (no manifest written; the instances not finished are
    ``not_run``) or ``"audit"``, and a re-run resumes from the result cache. Ctrl-C elsewhere (the scan) is a
    plain ``KeyboardInterrupt``: nothing was written but the candidates.

    Raises:
        MiningError: the repository, a ref, a date, the framework or the issue export is unusable.
    """
    unknown = sorted(set(opts.formats) - set(FORMATS))
    if unknown:
        raise MiningError(f"--format {unknown[0]!r}: expected one of {', '.join(FORMATS)}")
    started = time.monotonic()
    source = open_source(opts.repo, repo=opts.name, ref=opts.ref)
    try:
        framework = opts.framework or infer_framework(source.read(source.tip, FRAMEWORK_FILES))
        scanned, candidates, rejections = scan(source, framework, opts, Progress(sys.stderr) if opts.progress else None)
        scan_s = time.monotonic() - started
        header = (f"Mined by `python -m pytest_mobilebench mine` from {source.repo} at {source.tip[:12]} "
                  f"({framework}): {len(candidates)} candidate(s).")  # fmt: skip
        run_id = time.strftime("mine-%Y%m%dT%H%M%SZ-", time.gmtime()) + os.urandom(3).hex()
        verdicts, run_info, audit, outputs = _validate_and_write(source, framework, candidates, opts, run_id, header)
        result = report_mod.build(
            source=source, framework=framework, scanned=scanned, candidates=candidates, rejections=rejections,
            verdicts=verdicts, validated=opts.validate, run_id=run_id if verdicts else None,
            audit=audit, outputs=outputs, scan_s=scan_s, total_s=time.monotonic() - started,
        )  # fmt: skip
        if result["validation"]:
            result["validation"].update(run_info)
        if run_info.get("interrupted") or audit.get("interrupted"):
            result["interrupted"] = "validation" if run_info.get("interrupted") else "audit"
        atomic_write_json(opts.out / "report.json", result)
        return result
    finally:
        source.close()
