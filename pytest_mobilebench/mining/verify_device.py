"""``dataset check --verify`` for device-repair manifests: each record's verifier leak on (simulated) devices.

The device suite has no ``--mb-audit``; its verifier is the record's ONE target test plus the regression
tests, run on a device by the suite's own grading. For one ``cases/device_repair/*.yaml`` manifest
(:func:`verify_device_manifest`):

* **gold**: ``--predictions=gold`` (S_bug: the test patch alone, then S_fix: the test and fix patches); gold
  must be *accepted* (the record's own check: the target fails on S_bug and passes on S_fix).
* **empty**: the S_bug state of the gold run *is* the empty patch with the test patch; the empty patch
  "resolves" when its target passed there (``s_bug_q == "passed"``: the record is rejected then).
* **mutants** of the fix patch, each graded as a candidate patch exactly as a model's would be
  (``--predictions=FILE``, one row per mutant, ``model_name_or_path = "mutant.<id>"``): each hunk dropped
  (:func:`~pytest_mobilebench.suites.issue_resolution.hunks.without_hunk`; dropping the only hunk leaves an
  empty patch, which never resolves) and the semantic mutants of
  :func:`~pytest_mobilebench.suites.issue_resolution.mutants.mutants` (its lexer covers Java and Kotlin:
  comments, strings, character literals and Kotlin's triple-quoted strings are never mutated).

A mutant *survives* when its item's verdict is ``resolved``; one with an infrastructure verdict has no
verdict and is left out. The leak is
:func:`~pytest_mobilebench.suites.issue_resolution.verifier.leak_of` (``survived / judged``). Each surviving
mutant's patch is written to the gold item's evidence as ``mutant.<id>.diff``. Verdicts are read from the
runs' ``summary.json`` (never from the subprocesses' output). Rows have the shape of
:func:`pytest_mobilebench.mining.verify._row`, so the report, ``--strict`` and the distribution are shared.

Devices are given as for any device run, through ``--pytest-args`` (``--mb-devices SERIAL --mb-adb-server
HOST:PORT`` or ``--mb-avd NAME``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.mining._harness import read_json
from pytest_mobilebench.files import atomic_write_text
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.records import LoadedRecord, ManifestError
from pytest_mobilebench.suites.issue_resolution.hunks import gold_hunks, without_hunk
from pytest_mobilebench.suites.issue_resolution.mutants import mutants
from pytest_mobilebench.suites.issue_resolution.verifier import leak_of

__all__ = ["MUTANT_PREFIX", "is_device_manifest", "mutant_rows", "verify_device_manifest"]

#: ``model_name_or_path`` of a mutant's prediction row: ``mutant.<id>``
MUTANT_PREFIX = "mutant."


def is_device_manifest(path: Path) -> bool:
    """Whether ``path`` is a YAML manifest whose top-level ``suite`` is ``device_repair`` (unreadable: False)."""
    if not path.is_file() or path.suffix not in (".yaml", ".yml"):
        return False
    try:
        return read_yaml(path).data.get("suite") == "device_repair"
    except Exception:  # noqa: BLE001 - a broken file is dataset check's finding, not ours
        return False


def mutant_rows(instance_id: str, fix: str, *, per_hunk: int, seed: int) -> list[dict[str, Any]]:
    """The fix patch's near misses (pure): each hunk dropped, then the seeded semantic mutants. Each row
    ``{"id", "kind", "hunk", "file", "line", "before", "after", "patch"}`` (``patch``: the whole mutated fix)."""
    rows = [
        {
            "id": f"h{h.index}.drop",
            "kind": "hunk_dropped",
            "hunk": h.index,
            "file": h.file,
            "line": None,
            "before": h.header,
            "after": "",
            "patch": without_hunk(fix, h.index),
        }
        for h in gold_hunks(fix)
    ]
    for m in mutants(fix, per_hunk=per_hunk, seed=seed, key=instance_id):
        rows.append({"id": m.id, "kind": m.kind, "hunk": m.hunk, "file": m.file, "line": m.line, "before": m.before,
                     "after": m.after, "patch": m.patch})  # fmt: skip
    return rows


def _pytest(path: Path, predictions: str, reports: Path, run_id: str, opts: Any) -> list[str]:
    workers = ["-n", str(opts.workers)] if opts.workers else []
    return [
        sys.executable,
        "-m",
        "pytest",
        str(path),
        f"--predictions={predictions}",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / run_id / 'summary.json'}",
        f"--mb-runtime={opts.runtime}",
        f"--mb-run-id={run_id}",
        "-p",
        "no:cacheprovider",
        f"--rootdir={path.parent}",
        "-q",
        *workers,
        *opts.pytest_args,
    ]


def _run(command: Sequence[str], cwd: Path, log_path: Path) -> int:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w", encoding="utf-8") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        return subprocess.run(list(command), stdout=out, stderr=subprocess.STDOUT, cwd=cwd, check=False).returncode


def _entries(summary_path: Path) -> dict[tuple[str, str], Mapping[str, Any]]:
    """``(instance_id, model_name_or_path) -> entry`` of a run's device-repair results."""
    summary = read_json(summary_path)
    entries = (summary or {}).get("instances", {}) if isinstance(summary, Mapping) else {}
    return {(str(e.get("instance_id")), str(e.get("model_name_or_path"))): e for e in entries.values()
            if isinstance(e, Mapping) and e.get("suite") == "device_repair"}  # fmt: skip


def _status(gold: Mapping[str, Any] | None, leak: float | None) -> str:
    if gold is None:
        return "not_run"
    if gold.get("retryable") or gold.get("reason") == "infra_error":
        return "infra_error"
    if gold.get("s_bug_q") == "passed":
        return "empty_resolves"
    if not gold.get("passed"):
        return "gold_not_resolving"
    return "measured" if leak is not None else "not_measured"


def _record_row(
    iid: str,
    gold: Mapping[str, Any] | None,
    draws: Sequence[Mapping[str, Any]],
    results: Mapping[tuple[str, str], Mapping[str, Any]],
    threshold: float,
) -> dict[str, Any]:
    """One record's verify row (the shape of :func:`pytest_mobilebench.mining.verify._row`)."""
    evidence = Path(str((gold or {}).get("evidence_dir") or "."))
    rows = []
    for m in draws:
        entry = results.get((iid, MUTANT_PREFIX + m["id"]))
        judged = entry is not None and not entry.get("retryable") and entry.get("reason") != "infra_error"
        resolves = entry.get("reason") == "resolved" if judged and entry is not None else None
        diff = None
        if resolves and gold is not None:
            diff = str(evidence / f"mutant.{m['id']}.diff")
            atomic_write_text(Path(diff), m["patch"])
        rows.append({**{k: m[k] for k in ("id", "kind", "file", "line", "before", "after")},
                     "applied": None if entry is None else entry.get("reason") != "patch_apply_failed",
                     "resolves": resolves, "diff": diff})  # fmt: skip
    status = _status(gold, leak_of(rows))
    leak = leak_of(rows) if status == "measured" else None
    judged_rows = [r for r in rows if isinstance(r["resolves"], bool)]
    return {
        "instance_id": iid,
        "verifier_leak": leak,
        "status": status,
        "weak": leak is not None and leak > threshold,
        "empty_resolves": None if gold is None or gold.get("s_bug_q") is None else gold.get("s_bug_q") == "passed",
        "judged": len(judged_rows),
        "survived": sum(1 for r in judged_rows if r["resolves"]),
        "surviving": [
            {k: r[k] for k in ("id", "kind", "file", "line", "before", "after", "diff")}
            for r in rows
            if r["resolves"] is True
        ],
        "mutants": [
            {k: r[k] for k in ("id", "kind", "file", "line", "before", "after", "applied", "resolves")} for r in rows
        ],
        "evidence_dir": str(evidence),
        "detail": str((gold or {}).get("detail") or ""),
    }


def _draws(
    records: Sequence[LoadedRecord], opts: Any, run_id: str
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """Each record's mutant rows, and the records whose fix patch could not be read (id -> why)."""
    from pytest_mobilebench.suites.device_repair.flow import resolve_patches

    repos = RepoCache(run_id=run_id)
    draws: dict[str, list[dict[str, Any]]] = {}
    problems: dict[str, str] = {}
    for loaded in records:
        iid = loaded.record.instance_id
        try:
            _, fix = resolve_patches(loaded.record, repos)
        except (InfraError, ValueError) as exc:
            problems[iid] = f"the fix patch cannot be read: {exc}"
            continue
        draws[iid] = mutant_rows(iid, fix, per_hunk=opts.per_hunk, seed=opts.seed)
    return draws, problems


def verify_device_manifest(
    path: Path, opts: Any, reports: Path, run_id: str, log: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    """Measure every record of one device-repair manifest; ``opts`` is a
    :class:`pytest_mobilebench.mining.verify.VerifyOptions`; each pytest run is passed to ``log`` as
    ``{"file", "exit", "summary", "log"}``. Returns the records' verify rows; a record the manifest refuses
    or whose fix cannot be read is a row with status ``not_run`` and the reason in ``detail``."""
    loaded = _load(path)
    records = [r for r in loaded if isinstance(r, LoadedRecord)]
    draws, problems = _draws(records, opts, run_id)
    gold_id, mutant_id = f"{run_id}-gold", f"{run_id}-mutants"
    code = _run(_pytest(path, "gold", reports, gold_id, opts), path.parent, reports / f"{gold_id}.log")
    log(
        {
            "file": str(path),
            "exit": code,
            "summary": str(reports / gold_id / "summary.json"),
            "log": str(reports / f"{gold_id}.log"),
        }
    )
    gold = _entries(reports / gold_id / "summary.json")
    results: dict[tuple[str, str], Mapping[str, Any]] = {}
    rows = [{"instance_id": iid, "model_name_or_path": MUTANT_PREFIX + m["id"], "model_patch": m["patch"]}
            for iid, ms in draws.items() if (gold.get((iid, "gold")) or {}).get("passed") for m in ms]  # fmt: skip
    if rows:
        predictions = reports / mutant_id / "mutants.jsonl"
        atomic_write_text(predictions, "".join(json.dumps(r) + "\n" for r in rows))
        code = _run(
            _pytest(path, str(predictions), reports, mutant_id, opts), path.parent, reports / f"{mutant_id}.log"
        )
        log({"file": str(path), "exit": code, "summary": str(reports / mutant_id / "summary.json"),
             "log": str(reports / f"{mutant_id}.log")})  # fmt: skip
        results = _entries(reports / mutant_id / "summary.json")
    out = []
    for record in records:
        iid = record.record.instance_id
        row = _record_row(iid, gold.get((iid, "gold")), draws.get(iid, []), results, opts.threshold)
        if iid in problems:
            row = {**row, "status": "not_run", "verifier_leak": None, "weak": False, "detail": problems[iid]}
        out.append(row)
    for error in (e for e in loaded if isinstance(e, ManifestError)):
        out.append(_refused(error))
    return out


def _refused(error: ManifestError) -> dict[str, Any]:
    return {"instance_id": str(getattr(error, "instance_id", None) or "?"), "verifier_leak": None, "status": "not_run",
            "weak": False, "empty_resolves": None, "judged": 0, "survived": 0, "surviving": [], "mutants": [],
            "evidence_dir": "", "detail": str(error)}  # fmt: skip


def _load(path: Path) -> list[LoadedRecord | ManifestError]:
    """The manifest's records through the suite's loader."""
    from pytest_mobilebench.suites.device_repair import SUITE

    return SUITE.load(path, read_yaml(path))
