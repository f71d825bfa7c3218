"""``--mb-regrade RUN_DIR``: grade a whole finished run again from its evidence, running nothing.

``RUN_DIR`` is ``<reports>/<run_id>``; each evaluated item left ``<model>/<instance>/result.json`` there. The
re-grade's items are real pytest items, one per (instance, model, trial) the run evaluated, named as the run
named them: each :class:`RegradeItem` passes or fails by its new verdict, its JUnit case carries the same
properties as a live one, the run's exit status is a normal run's (1 when an item fails) and every result is
appended to the new run's ``results.jsonl``. An item grades through its suite's ``regrade(record,
evidence_dir)`` (the same grading step as the live run, with today's parsers and rules), checked against the
result contract (:class:`pytest_mobilebench.suites.base.ItemResult`) like a live one. The summary is a live
run's, with ``regraded_from``, ``regrade_problems`` (one sentence per item not re-graded, saying why) and
``regrade`` added::

    "regrade": {"from": str, "regraded": int, "kept": int, "not_used": [{"instance_id", "model", "suite", "why"}]}

An item whose evidence is gone or incomplete keeps its live result (``regraded: false``, counted in ``kept``),
and passes or fails by it. A selected instance the run has no result for is skipped (``not run`` in the
summary). An item whose instance is not among the collected items (another suite's run, a manifest left out of
the command, a ``-k`` that deselected it) is NOT used: it stays out of the results and is listed in
``not_used`` with the suite its result names.

Exit status: pytest's own (0 all passed, 1 an item failed, 2 interrupted ...), except that a re-grade where no
selected item had a result in ``RUN_DIR`` exits 5 (``NO_TESTS_COLLECTED``: nothing was graded); the summary's
``exitstatus`` is that status (:meth:`RegradeHooks.pytest_sessionfinish` sets it before the summary is written).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.items import InstanceItem, item_name
from pytest_mobilebench.state import STATE
from pytest_mobilebench.suites.base import ItemResult, RegradeUnsupported
from pytest_mobilebench.records import LoadedRecord

__all__ = ["RegradeHooks", "RegradeItem", "evidence_results", "regrade_exitstatus", "regrade_one"]

#: ``(evidence folder or None when gone, live result)`` of one item of the earlier run
Entry = tuple[Path | None, dict[str, Any]]


def _read_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    if not isinstance(data, dict) or "instance_id" not in data:
        raise ValueError(f"{path}: not an item result (no 'instance_id')")
    return data


def evidence_results(run_dir: Path) -> Iterator[Entry]:
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
        yield (
            (folder, _read_result(folder / "result.json"))
            if (folder / "result.json").is_file()
            else (None, dict(entry))
        )


def _not_used(folder: Path | None, live: Mapping[str, Any], collected_suites: set[str]) -> dict[str, Any]:
    suite = str(live.get("suite") or "unknown")
    hint = (
        f"its suite {suite!r} is not among the collected suites ({', '.join(sorted(collected_suites)) or 'none'}): "
        f"collect that suite's manifests"
        if suite not in collected_suites
        else "its manifest is not among the collected files (or -k / -m deselected it)"
    )
    return {
        "instance_id": str(live["instance_id"]),
        "model": str(live.get("model_name_or_path")),
        "suite": suite,
        "why": f"instance {live['instance_id']!r} is not among the collected items; {hint}",
        "folder": str(folder),
    }


def regrade_one(suite: Any, record: LoadedRecord, entry: Entry) -> tuple[dict[str, Any], str | None]:
    """The new result of one item of the earlier run, and the sentence saying why it was not re-graded (None
    when it was): ``suite.regrade(record, folder)`` checked against the result contract; the live result
    kept (``regraded: False``) when the folder is gone or the suite cannot read it."""
    folder, live = entry
    if folder is None:
        return {
            **live,
            "regraded": False,
        }, f"{live.get('evidence_dir')}: evidence of cached item {live['instance_id']!r} is gone; kept as it was"
    try:
        return ItemResult.from_suite(suite, suite.regrade(record, folder)).to_dict(), None
    except (OSError, ValueError, KeyError, RegradeUnsupported) as exc:
        return {**live, "regraded": False}, f"{folder}: cannot re-grade: {type(exc).__name__}: {exc}; kept as it was"


def regrade_exitstatus(exitstatus: int, used: int) -> int:
    """The exit status of a re-grade: 5 when no selected item had a result in the run (whatever pytest thought:
    skipped items alone end 0), else pytest's own, as for a normal run."""
    if used == 0 and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        return int(pytest.ExitCode.NO_TESTS_COLLECTED)
    return int(exitstatus)


class RegradeItem(InstanceItem):
    """One item of the earlier run, graded again from its evidence (``entry``), or, with ``entry`` None, a
    selected instance the run has no result for (skipped: ``not run``). Sets up no fixture: nothing runs."""

    def __init__(self, *, entry: Entry | None, hooks: RegradeHooks, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entry = entry
        self.hooks = hooks

    def setup(self) -> None:
        """No fixture: a re-grade runs no candidate, so it needs none of the suite's resources."""
        self.check_run_budget()

    def runtest(self) -> None:
        if self.entry is None:
            pytest.skip(f"{self.record.instance_id}: no result in {self.hooks.run_dir} (not run)")
        suite = self.config.stash[STATE].suites[self.record.suite]
        result, problem = regrade_one(suite, self.record, self.entry)
        if problem is not None:
            self.hooks.problems.append(problem)
        self.hooks.used += 1
        self.record_result(result)


class RegradeHooks:
    """pytest hooks of ``--mb-regrade``, registered on the controller: the collected records select which items
    of ``run_dir`` become :class:`RegradeItem` s (:meth:`items_for`, called by the collectors).

    Args:
        run_dir: ``<reports>/<run_id>`` of the earlier run.
        results: the run state's result list, which the summary is made from (read, not written).

    Raises:
        pytest.UsageError: ``run_dir`` is not a run folder, or one of its results is not JSON.
    """

    def __init__(self, run_dir: Path, results: list[dict[str, Any]]) -> None:
        self.run_dir = run_dir
        self.results = results
        self.problems: list[str] = []
        self.not_used: list[dict[str, Any]] = []
        self.used = 0  # items graded from (or kept as) the run's results
        self.entries: dict[str, list[Entry]] = {}
        try:
            for folder, live in evidence_results(run_dir):
                self.entries.setdefault(str(live["instance_id"]), []).append((folder, live))
        except (FileNotFoundError, ValueError) as exc:
            raise pytest.UsageError(str(exc)) from exc
        self.models = len({str(live.get("model_name_or_path")) for group in self.entries.values() for _, live in group})

    def items_for(self, parent: pytest.Collector, record: LoadedRecord, **kwargs: Any) -> Iterator[RegradeItem]:
        """The items of ``record``: one per result of the run (its model and trial, named as the run named it),
        or one that is skipped when the run has none."""
        entries = self.entries.get(record.instance_id)
        if not entries:
            yield RegradeItem.from_parent(
                parent,
                name=item_name(record.instance_id, None, 1, None),
                record=record,
                model=None,
                entry=None,
                hooks=self,
                **kwargs,
            )
            return
        for entry in entries:
            live = entry[1]
            model, trial = str(live.get("model_name_or_path")), live.get("trial")
            trial = int(trial) if isinstance(trial, int) else None
            yield RegradeItem.from_parent(
                parent,
                name=item_name(record.instance_id, model, self.models, trial),
                record=record,
                model=model,
                trial=trial,
                entry=entry,
                hooks=self,
                **kwargs,
            )

    @pytest.hookimpl(wrapper=True)  # after every other implementation: -k / -m have deselected
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> Any:
        yield
        kept = {id(item.entry) for item in items if isinstance(item, RegradeItem) and item.entry is not None}
        suites = {item.record.suite for item in items if isinstance(getattr(item, "record", None), LoadedRecord)}
        for group in self.entries.values():
            for entry in group:
                if id(entry) not in kept:
                    self.not_used.append(_not_used(entry[0], entry[1], suites))
                    self.problems.append(f"{entry[0]}: not used: {self.not_used[-1]['why']}")
        return None

    @pytest.hookimpl
    def pytest_mobilebench_summary(self, config: pytest.Config, summary: dict[str, Any]) -> None:
        kept = sum(1 for r in self.results if r.get("regraded") is False)
        summary["regraded_from"] = str(self.run_dir)
        summary["regrade_problems"] = list(self.problems)
        summary["regrade"] = {
            "from": str(self.run_dir),
            "regraded": len(self.results) - kept,
            "kept": kept,
            "not_used": list(self.not_used),
        }

    @pytest.hookimpl(tryfirst=True)  # before the plugin's controller writes the summary with the exit status
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        session.exitstatus = regrade_exitstatus(int(session.exitstatus), self.used)
