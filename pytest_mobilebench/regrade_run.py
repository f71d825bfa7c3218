"""``--mb-regrade RUN_DIR``: grade a whole finished run again from its evidence, running nothing.

``RUN_DIR`` is ``<reports>/<run_id>``; each evaluated item left ``<model>/<instance>/result.json`` there.
Every such item whose instance is among the collected records is re-graded by its suite's
``regrade(record, evidence_dir)`` (the same grading step as the live run, with today's parsers and
rules); the results then make a new summary exactly like a live run's. Items whose instance is not
collected, or whose evidence is incomplete, keep their live result and are listed in ``problems``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_mobilebench.suites.base import LoadedRecord

__all__ = ["evidence_results", "regrade_run"]


def evidence_results(run_dir: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """``(evidence folder, live result)`` of every item of the run, in path order.

    Raises:
        FileNotFoundError: ``run_dir`` is not a folder.
        ValueError: a ``result.json`` is not a JSON object (the message names it).
    """
    if not run_dir.is_dir():
        raise FileNotFoundError(f"--mb-regrade: {run_dir} is not a run folder (<reports>/<run_id>)")
    for path in sorted(run_dir.glob("*/*/result.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
        if not isinstance(data, dict) or "instance_id" not in data:
            raise ValueError(f"{path}: not an item result (no 'instance_id')")
        yield path.parent, data


def regrade_run(
    run_dir: Path, records: Mapping[str, LoadedRecord], suites: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Re-grade every item of ``run_dir``; returns ``(results, problems)``.

    Args:
        run_dir: ``<reports>/<run_id>``.
        records: the collected records by instance id.
        suites: suite name -> suite object (with ``regrade``).
    """
    results: list[dict[str, Any]] = []
    problems: list[str] = []
    for folder, live in evidence_results(run_dir):
        record = records.get(live["instance_id"])
        if record is None:
            problems.append(f"{folder}: instance {live['instance_id']!r} is not among the collected manifests; kept as it was")
            results.append({**live, "regraded": False})
            continue
        try:
            results.append(suites[record.suite].regrade(record, folder))
        except (OSError, ValueError, KeyError) as exc:
            problems.append(f"{folder}: cannot re-grade: {type(exc).__name__}: {exc}; kept as it was")
            results.append({**live, "regraded": False})
    return results, problems
