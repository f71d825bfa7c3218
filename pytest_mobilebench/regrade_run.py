"""``--mb-regrade RUN_DIR``: grade a whole finished run again from its evidence, running nothing.

``RUN_DIR`` is ``<reports>/<run_id>``; each evaluated item left ``<model>/<instance>/result.json`` there.
Every such item whose instance is among the collected records is re-graded by its suite's
``regrade(record, evidence_dir)`` (the same grading step as the live run, with today's parsers and
rules); the results then make a new summary exactly like a live run's, with ``regraded_from`` and
``regrade_problems`` added. Items whose instance is not collected, or whose evidence is incomplete, keep
their live result and are listed in ``problems``. Every re-graded result is checked against the result
contract (:class:`pytest_mobilebench.suites.base.ItemResult`) like a live one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.suites.base import ItemResult, LoadedRecord

__all__ = ["RegradeHooks", "evidence_results", "regrade_run"]


def _read_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    if not isinstance(data, dict) or "instance_id" not in data:
        raise ValueError(f"{path}: not an item result (no 'instance_id')")
    return data


def evidence_results(run_dir: Path) -> Iterator[tuple[Path | None, dict[str, Any]]]:
    """``(evidence folder, live result)`` of every item of the run: the folders under ``run_dir`` in path
    order, then the items of ``run_dir/summary.json`` whose evidence lies elsewhere (results the run took
    from the cache keep the folder of the run that evaluated them); ``None`` when that folder is gone.

    Raises:
        FileNotFoundError: ``run_dir`` is not a folder.
        ValueError: a ``result.json`` is not a JSON object (the message names it).
    """
    if not run_dir.is_dir():
        raise FileNotFoundError(f"--mb-regrade: {run_dir} is not a run folder (<reports>/<run_id>)")
    seen: set[Path] = set()
    for path in sorted(run_dir.glob("*/*/result.json")):
        seen.add(path.parent.resolve())
        yield path.parent, _read_result(path)
    summary = run_dir / "summary.json"
    instances = (json.loads(summary.read_text(encoding="utf-8")).get("instances") or {}) if summary.is_file() else {}
    for entry in instances.values():
        folder = Path(str(entry.get("evidence_dir") or ""))
        if not entry.get("evidence_dir") or folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        yield (folder, _read_result(folder / "result.json")) if (folder / "result.json").is_file() else (None, dict(entry))


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
        if folder is None:
            problems.append(f"{live.get('evidence_dir')}: evidence of cached item {live['instance_id']!r} is gone; kept as it was")
            results.append({**live, "regraded": False})
            continue
        if record is None:
            problems.append(f"{folder}: instance {live['instance_id']!r} is not among the collected manifests; kept as it was")
            results.append({**live, "regraded": False})
            continue
        suite = suites[record.suite]
        try:
            results.append(ItemResult.from_suite(suite, suite.regrade(record, folder)).to_dict())
        except (OSError, ValueError, KeyError) as exc:
            problems.append(f"{folder}: cannot re-grade: {type(exc).__name__}: {exc}; kept as it was")
            results.append({**live, "regraded": False})
    return results, problems


class RegradeHooks:
    """pytest hooks of ``--mb-regrade``, registered on the controller: the collected items are not run; their
    records select how each evidence folder of ``run_dir`` is re-graded, and the results go to the summary.

    Args:
        run_dir: ``<reports>/<run_id>`` of the earlier run.
        results: the run state's result list, which the summary is made from (extended in place).
        suites: the run's suites by name.
    """

    def __init__(self, run_dir: Path, results: list[dict[str, Any]], suites: Mapping[str, Any]) -> None:
        self.run_dir = run_dir
        self.results = results
        self.suites = suites
        self.problems: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
        records = {item.record.instance_id: item.record for item in items if isinstance(getattr(item, "record", None), LoadedRecord)}
        try:
            results, self.problems = regrade_run(self.run_dir, records, self.suites)
        except (FileNotFoundError, ValueError) as exc:
            raise pytest.UsageError(str(exc)) from exc
        self.results.extend(results)
        config.hook.pytest_deselected(items=list(items))
        items[:] = []

    @pytest.hookimpl
    def pytest_mobilebench_summary(self, config: pytest.Config, summary: dict[str, Any]) -> None:
        summary["regraded_from"] = str(self.run_dir)
        summary["regrade_problems"] = list(self.problems)

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.results:
            session.exitstatus = pytest.ExitCode.OK  # every item was re-graded rather than run
