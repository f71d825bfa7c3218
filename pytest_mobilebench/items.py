"""Benchmark items and the files they come from: manifests and ``--dataset`` releases -> one pytest item per
(record, model).

Imported by the plugin when pytest meets the first manifest or dataset, so a run that has none never imports
it. Items are as cheap as pytest's own parametrized functions: a file's records are parsed once by their
suite, each item holds a reference to its :class:`~pytest_mobilebench.records.LoadedRecord`, the items of
a file share one fixture closure (as the functions of one ``parametrize`` do) and the ``Mark`` objects of
equal marker sets, and the result-cache key is computed when the item runs.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from pytest_mobilebench.state import RESULT, STATE, MobileBenchState, options_of
from pytest_mobilebench.suites import LazySuite
from pytest_mobilebench.suites.base import ItemResult, LiveCandidate, Suite
from pytest_mobilebench.records import LoadedRecord, ManifestError

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import Prediction

__all__ = [
    "DatasetFile",
    "InstanceItem",
    "InstanceNotResolved",
    "InvalidInstanceItem",
    "ManifestFile",
    "announce",
    "selected",
]

T = TypeVar("T")

#: suites whose markers and fixture module this process has declared (on their first collected file)
_PREPARED = pytest.StashKey[set[str]]()

_XDIST_GROUP = "the instances of one repository or app share a group (pytest-xdist --dist loadgroup)"
#: what the items of one (marker names, xdist group) share: their marks and their keywords
_Marks = tuple[list[Any], dict[str, Any]]


def _prepare(config: pytest.Config, suite: Suite) -> None:
    """Before a suite's first items: declare all its markers (those computed by the implementation too) and
    register its fixture module, once per process."""
    prepared = config.stash.setdefault(_PREPARED, set())
    if suite.name in prepared:
        return
    prepared.add(suite.name)
    declared = {line.split(":")[0].split("(")[0].strip() for line in config.getini("markers")}
    for name, doc in {**suite.markers, "xdist_group": _XDIST_GROUP}.items():  # xdist declares its own when present
        if name not in declared:
            config.addinivalue_line("markers", f"{name}: {doc}")
    if suite.fixture_module and not config.pluginmanager.has_plugin(f"mobilebench-fixtures-{suite.name}"):
        import importlib

        config.pluginmanager.register(
            importlib.import_module(suite.fixture_module), f"mobilebench-fixtures-{suite.name}"
        )


class _RecordCollector(pytest.File, abc.ABC):
    """Shared by manifest and dataset files: records -> items, broken records -> error items."""

    #: the suite whose records the file holds ("unknown" until a suite recognises a dataset)
    suite_name: str = "unknown"

    @abc.abstractmethod
    def _records(self) -> list[LoadedRecord | ManifestError]:
        """The file's records, a broken one as a ManifestError in its place."""

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[STATE]
        rel = (
            self.path.relative_to(self.config.rootpath) if self.path.is_relative_to(self.config.rootpath) else self.path
        )
        models: list[str | None] = list(state.predictions.models) if state.predictions is not None else [None]
        if not models:
            models = [None]
        marks: dict[tuple[str, tuple[str, ...], str], _Marks] = {}
        fixtureinfo: dict[str, Any] = {}  # suite name -> the closure its items share (one file, one node id prefix)
        regrade = self.config.pluginmanager.get_plugin("mobilebench-regrade")
        for index, entry in enumerate(self._records()):
            if isinstance(entry, ManifestError):
                name = entry.instance_id or f"entry-{index + 1}"
                yield InvalidInstanceItem.from_parent(self, name=name, error=entry)
                continue
            first = state.seen_ids.setdefault(entry.instance_id, f"{rel}:{entry.line or '?'}")
            if first != f"{rel}:{entry.line or '?'}":
                error = ManifestError(
                    entry.source,
                    f"duplicate instance_id, first defined at {first}",
                    line=entry.line,
                    instance_id=entry.instance_id,
                )
                yield InvalidInstanceItem.from_parent(self, name=f"{entry.instance_id}[duplicate]", error=error)
                continue
            suite = state.suites[entry.suite]
            key = (entry.suite, entry.markers, entry.group)
            if key not in marks:
                marks[key] = _marks_of(suite, entry)
            if (
                regrade is not None
            ):  # --mb-regrade: the earlier run's items of this record (pytest_mobilebench.regrade_run)
                yield from regrade.items_for(self, entry, marks=marks[key], fixtureinfo=fixtureinfo.get(entry.suite))
                continue
            per_item = bool(getattr(suite, "item_trials", False))
            for model in models:
                trials = state.predictions.trials(entry.instance_id, model, per_item=per_item) if model else [None]
                for trial in trials:
                    item = InstanceItem.from_parent(
                        self,
                        name=item_name(entry.instance_id, model, len(models), trial),
                        record=entry,
                        model=model,
                        trial=trial,
                        marks=marks[key],
                        fixtureinfo=fixtureinfo.get(entry.suite),
                    )
                    fixtureinfo.setdefault(entry.suite, item._fixtureinfo)
                    yield item


def item_name(instance_id: str, model: str | None, models: int, trial: int | None) -> str:
    """An item's name: the instance id, ``[model]`` when several models ran, ``[t<k>]`` for trial k of K
    (``[model-t<k>]`` with both), as pytest names parametrized functions."""
    parts = [*([str(model)] if models > 1 else []), *([f"t{trial}"] if trial is not None else [])]
    return f"{instance_id}[{'-'.join(parts)}]" if parts else instance_id


def evidence_folder(instance_id: str, trial: int | None) -> str:
    """The item's folder under ``<run>/<model>/``: the instance's :func:`_safe` name, plus ``%t<k>`` for trial k
    (``%`` followed by ``t`` never occurs in an encoded name, so no instance's folder is a trial's)."""
    return _safe(instance_id) + ("" if trial is None else f"%t{trial}")


def selected(items: list[pytest.Item]) -> dict[str, tuple[str, str]]:
    """``{node id: (suite, instance id)}`` of the benchmark items among ``items`` (valid or not)."""
    out: dict[str, tuple[str, str]] = {}
    for it in items:
        if isinstance(it, InstanceItem):
            out[it.nodeid] = (it.record.suite, it.record.instance_id)
        elif isinstance(it, InvalidInstanceItem):
            out[it.nodeid] = (it.suite, it.error.instance_id or it.name)
    return out


def _marks_of(suite: Suite, record: LoadedRecord) -> _Marks:
    """The marks of a record's items, in order (the suite's fixtures, the record's markers, its xdist group),
    and their keywords: built once per distinct (marker names, group), shared by those items."""
    decorators = [pytest.mark.usefixtures(*suite.fixtures)] if suite.fixtures else []  # pytest refuses an empty one
    decorators += [getattr(pytest.mark, name) for name in record.markers]  # --strict-markers checks here
    decorators.append(pytest.mark.xdist_group(name=record.group))
    return [d.mark for d in decorators], {d.name: d for d in decorators}


class ManifestFile(_RecordCollector):
    """A YAML manifest whose ``suite:`` names a registered suite."""

    def _records(self) -> list[LoadedRecord | ManifestError]:
        from pytest_mobilebench.manifest.yamlfile import read_yaml

        cache = getattr(self.config, "cache", None)  # pytest's cache folder, unless -p no:cacheprovider
        try:
            doc = read_yaml(self.path, cache.mkdir("mobilebench-manifests") if cache is not None else None)
        except ManifestError as exc:
            return [exc]
        suite_name = str(doc.data.get("suite"))
        suite = self.config.stash[STATE].suites[suite_name]
        _prepare(self.config, suite)
        try:
            return list(suite.load(self.path, doc))
        except ManifestError as exc:
            return [exc]


class DatasetFile(_RecordCollector):
    """A ``--dataset`` release: the first suite whose ``load_dataset`` recognises the file's dialect reads it (a
    built-in suite is asked only when its surface's ``datasets`` patterns match the file name)."""

    def _records(self) -> list[LoadedRecord | ManifestError]:
        state = self.config.stash[STATE]
        options = options_of(self.config)
        for name, declared in state.suites.declared().items():
            if isinstance(declared, LazySuite) and not declared.reads_dataset(self.path):
                continue
            suite = state.suites[name]
            records = suite.load_dataset(self.path, options)
            if records is not None:
                self.suite_name = str(suite.name)
                _prepare(self.config, suite)
                return list(records)
        return [ManifestError(self.path, f"no suite reads this dataset (suites: {', '.join(state.suites)})")]


class InvalidInstanceItem(pytest.Item):
    """Stands for one broken manifest entry: it errors alone, with the file, line and field in the message."""

    def __init__(self, *, error: ManifestError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    @property
    def suite(self) -> str:
        """The suite of the file the broken entry is in (``unknown`` for an unrecognised dataset)."""
        return str(getattr(self.parent, "suite_name", "unknown"))

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ManifestError):
            return f"invalid benchmark instance: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, (self.error.line - 1 if self.error.line else None), f"invalid instance {self.name}"


class InstanceNotResolved(Exception):
    """Raised by an item whose candidate was not resolved; carries the result for the failure text."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        super().__init__(result.get("reason"))
        self.result = result


@dataclasses.dataclass
class _Context:
    """:class:`pytest_mobilebench.records.EvalContext` for one item."""

    run_id: str
    evidence_dir: Path
    options: dict[str, Any]
    _state: MobileBenchState
    _reporter: Any
    _fixtures: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def fixture(self, name: str) -> Any:
        """The value of a fixture the suite declared in ``Suite.fixtures`` (resolved by pytest at item setup)."""
        if name not in self._fixtures:
            raise KeyError(f"fixture {name!r} is not among the suite's declared fixtures ({', '.join(self._fixtures)})")
        return self._fixtures[name]

    def resource(self, key: str, factory: Callable[[], T], close: Callable[[T], None] | None = None) -> T:
        return self._state.resource(key, factory, close)

    def progress(self, message: str) -> None:
        _say(self._state, self._reporter, bool(self.options.get("_xdist_worker")), message)


def _say(state: MobileBenchState, reporter: Any, on_worker: bool, message: str) -> None:
    """Show a progress line: on the terminal without xdist, and always in ``<run>/progress.log``
    (``tail -f`` it to follow image builds on xdist workers)."""
    from pytest_mobilebench.report.progress import append_worker_line

    if reporter is not None and not on_worker:
        reporter.write_line(f"[mobilebench] {message}")
    append_worker_line(state.reports_dir / state.run_id / "progress.log", message)


def announce(config: pytest.Config, message: str) -> None:
    """A progress line outside any item (a runtime provider building images), shown as items' lines are."""
    _say(
        config.stash[STATE],
        config.pluginmanager.get_plugin("terminalreporter"),
        hasattr(config, "workerinput"),
        message,
    )


def _safe(name: str) -> str:
    """The evidence folder of a model name or instance id (:func:`pytest_mobilebench.report.names.folder_name`)."""
    from pytest_mobilebench.report.names import folder_name

    return folder_name(name)


def _checked_evaluate(
    suite: Suite, record: LoadedRecord, prediction: Prediction | None, ctx: _Context
) -> dict[str, Any]:
    """``suite.evaluate`` checked against the result contract; a raise or a broken result is recorded as an
    infrastructure result with the traceback in ``harness_error.log``, never lost and never cached.

    Raises:
        ManifestError: the instance's data is wrong (the suite's own, or a commit its repository lacks): the
            item is ``invalid``, as a broken manifest entry is.
    """
    from pytest_mobilebench.runtime.base import NotInRepository

    try:
        checked = ItemResult.from_suite(suite, _evaluate(suite, record, prediction, ctx))
    except ManifestError:
        raise
    except NotInRepository as exc:  # a suite that does not name the field itself
        raise ManifestError(record.source, str(exc), line=record.line, instance_id=record.instance_id) from exc
    except Exception as exc:  # noqa: BLE001 - a harness bug is recorded as infra, never lost
        import traceback

        with contextlib.suppress(OSError):  # the disk may be full
            (ctx.evidence_dir / "harness_error.log").write_text(traceback.format_exc(), encoding="utf-8")
        from pytest_mobilebench.report.runs import is_disk_full

        kind = "disk_full" if is_disk_full(exc) else "harness_error"
        checked = ItemResult.harness_error(f"{kind.replace('_', ' ')}: {type(exc).__name__}: {exc}", kind)
    return checked.to_dict()


def _evaluate(suite: Suite, record: LoadedRecord, prediction: Prediction | None, ctx: _Context) -> dict[str, Any]:
    """``suite.evaluate`` of ``prediction``; a live one is first made a file prediction by the suite's agent
    (:class:`~pytest_mobilebench.suites.base.LiveCandidate`), then evaluated like any other, and the agent's
    record attached to the result. A dict from ``produce_live`` is the item's result (no candidate was made). A
    suite without ``produce_live`` (an interactive one, whose agent acts in the evaluated episode itself) gets
    the live prediction in ``evaluate``."""
    produce = getattr(suite, "produce_live", None)  # absent: the agent acts inside the evaluation (the planner)
    if prediction is None or not prediction.is_live() or produce is None:
        return suite.evaluate(record, prediction, ctx)
    made = produce(record, prediction, ctx)
    if not isinstance(made, LiveCandidate):
        return made
    return made.attach(suite.evaluate(record, made.prediction, ctx))


def keep_prediction(evidence: Path, reports_dir: Path, key: str) -> None:
    """Keep the prediction row the item wrote (its evidence folder's ``prediction.json``, a live agent's:
    :func:`pytest_mobilebench.agents.records.record_prediction`) beside its cached result
    (:func:`pytest_mobilebench.cache.prediction_path`); nothing when it wrote none.

    Raises:
        OSError: the copy failed (a full disk is the caller's to report).
    """
    from pytest_mobilebench.agents.records import PREDICTION_FILE
    from pytest_mobilebench.cache import prediction_path
    from pytest_mobilebench.files import atomic_write_text

    row = evidence / PREDICTION_FILE
    if row.is_file():
        atomic_write_text(prediction_path(reports_dir, key), row.read_text(encoding="utf-8"))


def carry_prediction(reports_dir: Path, key: str, run_folder: Path) -> None:
    """A cache hit of an item that wrote a prediction row: the very row that produced the cached verdict is
    written to this run's predictions file too (:func:`pytest_mobilebench.agents.records.append_prediction`),
    so ``--predictions`` of the new run's file re-grades every item of it. Nothing for an item without one.

    Raises:
        OSError: the predictions file could not be written.
    """
    from pytest_mobilebench.agents.records import append_prediction
    from pytest_mobilebench.cache import prediction_path
    from pytest_mobilebench.files import read_json

    row = read_json(prediction_path(reports_dir, key))
    if isinstance(row, dict):
        run_folder.mkdir(parents=True, exist_ok=True)
        append_prediction(run_folder, row)


class InstanceItem(pytest.Item):
    """One benchmark instance evaluated for one model's prediction."""

    def __init__(
        self,
        *,
        record: LoadedRecord,
        model: str | None,
        trial: int | None = None,
        marks: _Marks | None = None,
        fixtureinfo: Any = None,
        **kwargs: Any,
    ) -> None:
        """``marks``: shared ``(marks, keywords)`` (:func:`_marks_of`); ``fixtureinfo``: the closure of an earlier
        item of the same suite in the same file, or None to compute it."""
        super().__init__(**kwargs)
        self.record = record
        self.model = model
        self.trial = trial  # one of K trials (1..K), None for a single attempt
        if marks is None:
            marks = _marks_of(self.config.stash[STATE].suites[record.suite], record)
        # request the suite's resources the way a test function requests fixtures (a conftest can override them)
        self.own_markers.extend(marks[0])
        self.keywords.update(marks[1])
        self._fixtureinfo = fixtureinfo or self.session._fixturemanager.getfixtureinfo(node=self, func=None, cls=None)
        self.fixturenames = self._fixtureinfo.names_closure
        self.funcargs: dict[str, Any] = {}

    def setup(self) -> None:
        from _pytest.fixtures import TopRequest

        self.check_run_budget()
        self._request = TopRequest(self, _ispytest=True)  # type: ignore[arg-type]
        self._request._fillfixtures()

    def check_run_budget(self) -> None:
        """``--mb-run-budget``: skip this item when the budget ran out, before any fixture is made."""
        from pytest_mobilebench.run_budget import PLUGIN_NAME

        budget = self.config.pluginmanager.get_plugin(PLUGIN_NAME)
        if budget is not None:
            budget.refuse_start(self)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, (self.record.line - 1 if self.record.line else None), f"{self.record.suite}: {self.name}"

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        if state.predictions is None:
            pytest.skip("no --predictions given (use a predictions file, or 'gold' / 'empty' / 'live')")
        assert self.model is not None
        from pytest_mobilebench.predictions import PredictionsError

        try:
            prediction = state.predictions.get(self.record.instance_id, self.model, self.record.suite, self.trial)
        except PredictionsError as exc:  # --predictions=live for a suite that cannot run live
            pytest.fail(str(exc), pytrace=False)
        from pytest_mobilebench.agents.records import PREDICTION_FILE, RUN_ROW_FILE
        from pytest_mobilebench.cache import CacheRead, EntryOwner, cache_entry, read_cached, result_key, result_path
        from pytest_mobilebench.files import atomic_write_json
        from pytest_mobilebench.report.runs import is_disk_full

        suite = state.suites[self.record.suite]
        options = options_of(self.config)
        key = result_key(
            suite,
            self.record,
            self.model,
            prediction,
            options,
            runtime_options=state.providers.keyed_for(suite.fixtures) if state.providers else (),
        )
        owner = EntryOwner(key, self.record.instance_id, self.record.suite, self.model, self.trial)
        read = CacheRead(None) if options["mb_rerun"] else read_cached(state.reports_dir, owner, suite)
        if read.result is not None:
            result = read.result
            try:
                carry_prediction(state.reports_dir, key, state.reports_dir / state.run_id)
            except OSError as exc:  # a full disk: the verdict stands, its row unwritten; said at the end
                if not is_disk_full(exc):
                    raise
                state.report_errors.append(
                    f"the reports disk is full: {self.record.instance_id}'s prediction was "
                    f"not written to this run's predictions file ({exc})"
                )
        else:
            evidence = (
                state.reports_dir
                / state.run_id
                / _safe(self.model)
                / evidence_folder(self.record.instance_id, self.trial)
            )
            evidence.mkdir(parents=True, exist_ok=True)
            for name in (PREDICTION_FILE, RUN_ROW_FILE):  # only this evaluation's row is kept with its verdict
                (evidence / name).unlink(missing_ok=True)
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            ctx = _Context(state.run_id, evidence, options, state, reporter, self.funcargs)
            started = time.monotonic()
            result = _checked_evaluate(suite, self.record, prediction, ctx)
            result["elapsed_s"] = round(time.monotonic() - started, 3)  # shown beside later cache hits
            result.setdefault("instance_id", self.record.instance_id)
            result.setdefault("suite", self.record.suite)
            result["model_name_or_path"] = self.model
            if self.trial is not None:
                result["trial"] = self.trial
            result["evidence_dir"] = str(evidence)
            result["cache_key"] = key
            result["group"] = self.record.group
            used = getattr(self.funcargs.get("mb_runtime"), "used", None)
            if used:  # the controller finishes each provider the run used (image cleanup)
                result["runtimes"] = [str(name) for name in used]
            try:
                atomic_write_json(evidence / "result.json", result)
                if not result.get("retryable"):
                    for at in (key, *self._candidate_key(prediction, evidence, options)):
                        keep_prediction(evidence, state.reports_dir, at)  # first: a cached verdict has its row
                        atomic_write_json(result_path(state.reports_dir, at), cache_entry({**result, "cache_key": at}))
            except OSError as exc:  # a full disk: the verdict stands, unsaved and uncached; said at the end
                if not is_disk_full(exc):
                    raise
                state.report_errors.append(f"the reports disk is full: {self.record.instance_id} was not saved ({exc})")
            if read.dropped is not None:  # this run's note only: neither in result.json nor in the new entry
                result["cache_dropped"] = read.dropped
        self.record_result(result)

    def record_result(self, result: dict[str, Any]) -> None:
        """The item's outcome from its ``result``: stashed for the report, its properties on the JUnit case, and a
        failure (:class:`InstanceNotResolved`) unless it passed."""
        self.stash[RESULT] = result
        for name, value in sorted(result.get("properties", {}).items()):
            self.user_properties.append((name, value))
        if "verdict" not in result.get("properties", {}):
            self.user_properties.append(("verdict", result.get("reason")))
        for name in ("reason", "passed"):
            self.user_properties.append((name, result.get(name)))
        self.user_properties.append(("model", self.model))  # JUnit cases name their model (several run side by side)
        self.user_properties.append(("resolved", bool(result.get("passed"))))
        if self.trial is not None:
            self.user_properties.append(("trial", self.trial))
        if not result.get("passed"):
            raise InstanceNotResolved(result)

    def _candidate_key(self, prediction: Any, evidence: Path, options: Mapping[str, Any]) -> list[str]:
        """A live item's candidate key (:func:`pytest_mobilebench.cache.candidate_key` of the row it wrote to the
        run's predictions file), so a re-grade of that file is answered from the cache; [] for another item."""
        from pytest_mobilebench.agents.records import PREDICTION_FILE, RUN_ROW_FILE
        from pytest_mobilebench.cache import candidate_key
        from pytest_mobilebench.files import read_json

        if prediction is None or not prediction.is_live():
            return []
        state = self.config.stash[STATE]
        row = read_json(evidence / RUN_ROW_FILE) or read_json(evidence / PREDICTION_FILE)
        if not isinstance(row, dict) or not {"instance_id", "model_name_or_path"} <= row.keys():
            return []
        suite = state.suites[self.record.suite]
        return [
            candidate_key(
                suite,
                self.record,
                row,
                state.reports_dir / state.run_id,
                options,
                runtime_options=state.providers.keyed_for(suite.fixtures) if state.providers else (),
            )
        ]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ManifestError):  # found when it ran (a commit its repository lacks)
            return f"invalid benchmark instance: {excinfo.value}"
        if isinstance(excinfo.value, InstanceNotResolved):
            from pytest_mobilebench.report.terminal import printable

            r = excinfo.value.result  # candidate text (details, test ids, model names): escaped
            # the cause first: pytest's short summary (`FAILED <node id> - <first line>`) shows this line, and the
            # node id beside it already names the item
            detail = f": {r['detail']}" if r.get("detail") else ""
            lines = [
                printable(f"{r.get('reason')}{detail}", limit=4000),
                printable(f"item: {r.get('instance_id')} [{r.get('model_name_or_path')}]"),
            ]
            for name, tests in sorted((r.get("failing") or {}).items()):
                for test in tests[:20]:
                    lines.append(printable(f"  {name}: {test}"))
                if len(tests) > 20:
                    lines.append(f"  {name}: ... {len(tests) - 20} more")
            lines.append(printable(f"evidence: {r.get('evidence_dir')}", limit=1000))
            return "\n".join(lines)
        return super().repr_failure(excinfo)
