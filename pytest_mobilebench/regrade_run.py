"""``--mb-regrade RUN_DIR``: grade a whole finished run again from its evidence, running nothing.

``RUN_DIR`` is ``<reports>/<run_id>``; each evaluated item left ``<model>/<instance>/result.json`` there.
Every such item whose instance is among the collected records is re-graded by its suite's
``regrade(record, evidence_dir)`` (the same grading step as the live run, with today's parsers and
rules); the results then make a new summary exactly like a live run's, with ``regraded_from``,
``regrade_problems`` (one sentence per item not re-graded, saying why) and ``regrade`` added::

    "regrade": {"from": str, "regraded": int, "kept": int, "not_used": [{"instance_id", "model", "suite", "why"}]}

An item whose evidence is gone or incomplete keeps its live result (``regraded: false``, counted in
``kept``). An item whose instance is not among the collected ones (another suite's run, a manifest left
out of the command) is NOT used: it stays out of the results and is listed in ``not_used`` with the suite
its result names. Every re-graded result is checked against the result contract
(:class:`pytest_mobilebench.suites.base.ItemResult`) like a live one.

Exit status: a re-grade that re-graded nothing exits 5 (``NO_TESTS_COLLECTED``: nothing was graded), one that
re-graded at least one item exits 0; the summary's ``exitstatus`` is that status (the plugin writes
``session.exitstatus``, which :meth:`RegradeHooks.pytest_sessionfinish` sets first).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.suites.base import ItemResult, LoadedRecord

__all__ = ["RegradeHooks", "evidence_results", "regrade_exitstatus", "regrade_run"]


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


def _not_used(folder: Path, live: Mapping[str, Any], collected_suites: set[str]) -> dict[str, Any]:
    suite = str(live.get("suite") or "unknown")
    hint = (f"its suite {suite!r} is not among the collected suites ({', '.join(sorted(collected_suites)) or 'none'}): "
            f"collect that suite's manifests" if suite not in collected_suites
            else "its manifest is not among the collected files (or -k / -m deselected it)")
    return {"instance_id": str(live["instance_id"]), "model": str(live.get("model_name_or_path")), "suite": suite,
            "why": f"instance {live['instance_id']!r} is not among the collected items; {hint}", "folder": str(folder)}


def regrade_run(
    run_dir: Path, records: Mapping[str, LoadedRecord], suites: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]:
    """Re-grade every item of ``run_dir``; returns ``(results, problems, not_used)``.

    Args:
        run_dir: ``<reports>/<run_id>``.
        records: the collected records by instance id.
        suites: suite name -> suite object (with ``regrade``).

    Returns:
        the results (re-graded, or kept as they were with ``regraded: False``), one sentence per item not
        re-graded, and the items not used at all (see the module docstring).
    """
    results: list[dict[str, Any]] = []
    problems: list[str] = []
    not_used: list[dict[str, Any]] = []
    collected_suites = {r.suite for r in records.values()}
    for folder, live in evidence_results(run_dir):
        record = records.get(live["instance_id"])
        if folder is None:
            problems.append(f"{live.get('evidence_dir')}: evidence of cached item {live['instance_id']!r} is gone; kept as it was")
            results.append({**live, "regraded": False})
            continue
        if record is None:
            not_used.append(_not_used(folder, live, collected_suites))
            problems.append(f"{folder}: not used: {not_used[-1]['why']}")
            continue
        suite = suites[record.suite]
        try:
            results.append(ItemResult.from_suite(suite, suite.regrade(record, folder)).to_dict())
        except (OSError, ValueError, KeyError) as exc:
            problems.append(f"{folder}: cannot re-grade: {type(exc).__name__}: {exc}; kept as it was")
            results.append({**live, "regraded": False})
    return results, problems, not_used


def regrade_exitstatus(exitstatus: int, regraded: int) -> int:
    """The exit status of a re-grade: 5 when nothing was re-graded (whatever pytest thought), 0 instead of
    pytest's "no tests collected" when something was, any other status (interrupted, usage error) as it is."""
    if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.TESTS_FAILED):
        return int(exitstatus)
    return int(pytest.ExitCode.NO_TESTS_COLLECTED) if regraded == 0 else int(pytest.ExitCode.OK)


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
        self.not_used: list[dict[str, Any]] = []

    @pytest.hookimpl(wrapper=True)  # after every other implementation: the plugin has recorded the selection
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> Any:
        yield
        records = {item.record.instance_id: item.record for item in items if isinstance(getattr(item, "record", None), LoadedRecord)}
        try:
            results, self.problems, self.not_used = regrade_run(self.run_dir, records, self.suites)
        except (FileNotFoundError, ValueError) as exc:
            raise pytest.UsageError(str(exc)) from exc
        self.results.extend(results)
        config.hook.pytest_deselected(items=list(items))
        items[:] = []
        return None

    @pytest.hookimpl
    def pytest_mobilebench_summary(self, config: pytest.Config, summary: dict[str, Any]) -> None:
        summary["regraded_from"] = str(self.run_dir)
        summary["regrade_problems"] = list(self.problems)
        summary["regrade"] = {"from": str(self.run_dir), "regraded": self.regraded, "not_used": list(self.not_used),
                              "kept": sum(1 for r in self.results if r.get("regraded") is False)}

    @property
    def regraded(self) -> int:
        """Items re-graded from their evidence (not kept as they were)."""
        return sum(1 for r in self.results if r.get("regraded") is not False)

    @pytest.hookimpl(tryfirst=True)  # before the plugin's controller writes the summary with the exit status
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        session.exitstatus = regrade_exitstatus(int(session.exitstatus), self.regraded)
