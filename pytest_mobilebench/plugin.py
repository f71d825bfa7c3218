"""pytest hooks of pytest-mobilebench: options, collection, items, xdist / junit / html glue, summary.

One benchmark instance is one pytest item. Manifests (YAML files whose top-level ``suite:`` names a
registered suite) and ``--dataset`` files are collected; each record becomes one item per model found in
``--predictions``, with node id ``<manifest path>::<instance_id>`` (``::<instance_id>[<model>]`` when the
predictions hold several models). The item asks its suite to evaluate the candidate, attaches the verdict
as junit ``user_properties`` (plain builtins, so they cross xdist), writes the instance's evidence, and
fails when the candidate is not resolved. The controller gathers every result, appends it to
``<summary>.jsonl`` as it arrives, and writes the summary once, atomically, at the end.

Plugin state lives in ``config.stash``; hooks of the optional plugins pytest-xdist and pytest-html are
registered only when those plugins are active.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import datetime
import importlib
import re
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar, final

import pytest

from pytest_mobilebench.cache import result_key, result_path
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.options import apply_env_defaults, warn_outer_timeout
from pytest_mobilebench.predictions import Prediction, PredictionsError, load_predictions
from pytest_mobilebench.report.files import append_jsonl, atomic_write_json, read_json
from pytest_mobilebench.report.junit import add_junit_properties
from pytest_mobilebench.report.names import folder_name
from pytest_mobilebench.report.terminal import printable
from pytest_mobilebench.report.runs import (
    REPORTS_DISK_FULL_EXIT,
    ReportsDiskFull,
    finish_run,
    is_disk_full,
    run_files,
    reports_space_problem,
    start_run,
    write_summary,
)
from pytest_mobilebench.report.progress import append_worker_line
from pytest_mobilebench.report.summary import make_summary, write_model_reports
from pytest_mobilebench.report.terminal import headline_lines, nothing_selected_line
from pytest_mobilebench.runtime.provider import ProviderRegistry, RuntimeProvider
from pytest_mobilebench.state import RESULT, STATE, MobileBenchState
from pytest_mobilebench.suites import AGENT_OPTIONS, SuiteRegistry, builtin_registry
from pytest_mobilebench.suites.base import (
    ItemResult,
    LoadedRecord,
    ManifestError,
    Option,
    Suite,
)

__all__ = ["InstanceItem", "InvalidInstanceItem", "ManifestFile", "MobileBenchState"]

T = TypeVar("T")

#: The plugin's own options that reach suites in ``ctx.options`` (suite options are declared by the suites).
_PLUGIN_OPTIONS: tuple[str, ...] = ("mb_reports_dir", "mb_rerun")

#: the registry made for each pytest run while options are declared (keyed by its plugin manager)
_REGISTRIES: weakref.WeakKeyDictionary[Any, SuiteRegistry] = weakref.WeakKeyDictionary()
#: the runtime providers made for each pytest run while options are declared (keyed by its plugin manager)
_PROVIDERS: weakref.WeakKeyDictionary[Any, ProviderRegistry] = weakref.WeakKeyDictionary()


@final


# --------------------------------------------------------------------------------------------- options


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_mobilebench import hooks

    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup("mobilebench", "pytest-mobilebench: mobile-development benchmarks")
    group.addoption(
        "--predictions",
        action="append",
        default=[],
        metavar="PATH|gold|empty|live",
        help="predictions file (JSONL, JSON list or JSON dict keyed by instance_id); repeatable. "
        "'gold' and 'empty' are pseudo-predictions for validating instances; 'live' lets a suite with a live "
        "mode produce the candidate itself from a model endpoint given by that suite's options.",
    )
    group.addoption(
        "--dataset",
        action="append",
        default=[],
        metavar="PATH",
        help="a benchmark release (JSON/JSONL rows) collected as manifests by the suite that reads its dialect",
    )
    group.addoption("--mb-summary", default=None, help="where the controller writes the run summary (default: <reports>/<run_id>/summary.json)")
    group.addoption("--mb-reports-dir", default="reports", help="root of evidence folders and the result cache")
    group.addoption("--mb-run-id", default=None, help="run id (default: UTC timestamp + random suffix)")
    group.addoption("--mb-rerun", action="store_true", help="ignore cached results and evaluate again")
    group.addoption("--mb-regrade", default=None, metavar="RUN_DIR",
                    help="re-grade the run in RUN_DIR (<reports>/<run_id>) from its evidence; runs nothing")

    def declare(owner: Suite | RuntimeProvider) -> None:
        for option in owner.options:
            group.addoption(*option.flags, **option.addoption_kwargs())

    from pytest_mobilebench.frameworks import workspace_recipe
    from pytest_mobilebench.runtime.provider import COMMON_OPTIONS, builtin_providers

    for option in (*COMMON_OPTIONS, *AGENT_OPTIONS):  # the runtime layer's and the live agents', declared once
        group.addoption(*option.flags, **option.addoption_kwargs())
    providers = builtin_providers(recipe_factory=workspace_recipe, on_add=declare)
    _PROVIDERS[pluginmanager] = providers
    registry = builtin_registry(on_add=declare)
    _REGISTRIES[pluginmanager] = registry
    # historic: a conftest.py or plugin registered later still gets the call, before the command line is parsed
    pluginmanager.hook.pytest_mobilebench_register_runtimes.call_historic(kwargs={"registry": providers})
    pluginmanager.hook.pytest_mobilebench_register_suites.call_historic(kwargs={"registry": registry})


# ------------------------------------------------------------------------------------------ configure


def _new_run_id() -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:6]}"


def pytest_configure(config: pytest.Config) -> None:
    suites = _REGISTRIES.get(config.pluginmanager)
    if suites is None:  # the plugin was registered after option parsing (e.g. -p on an old pytest): no suites' options
        raise pytest.UsageError("pytest-mobilebench was loaded too late to declare its suites' options")
    providers = _PROVIDERS[config.pluginmanager]
    apply_env_defaults(config, [*suites.options(), *providers.options()])
    choice = config.getoption("mb_runtime")
    if choice != "auto" and choice not in providers:
        raise pytest.UsageError(f"--mb-runtime={choice}: no such runtime provider (auto, {', '.join(providers)})")
    for suite in suites.values():
        for name, doc in suite.markers.items():
            config.addinivalue_line("markers", f"{name}: {doc}")
    config.pluginmanager.register(importlib.import_module("pytest_mobilebench.fixtures"), "mobilebench-fixtures")
    for suite in suites.values():
        if suite.fixture_module and not config.pluginmanager.has_plugin(f"mobilebench-fixtures-{suite.name}"):
            config.pluginmanager.register(importlib.import_module(suite.fixture_module), f"mobilebench-fixtures-{suite.name}")
    workerinput = getattr(config, "workerinput", None)
    run_id = (workerinput or {}).get("mobilebench_run_id") or config.getoption("mb_run_id") or _new_run_id()
    rootdir = Path(config.invocation_params.dir)
    predictions = None
    if config.getoption("predictions"):
        try:
            predictions = load_predictions(config.getoption("predictions"), base_dir=rootdir, suites=suites.values(),
                                           options={o.dest: config.getoption(o.dest) for o in suites.options()})
        except PredictionsError as exc:
            raise pytest.UsageError(f"--predictions: {exc}") from exc
    reports_dir = Path(config.getoption("mb_reports_dir"))
    summary = Path(config.getoption("mb_summary") or "")
    state = MobileBenchState(
        run_id=run_id,
        reports_dir=reports_dir if reports_dir.is_absolute() else rootdir / reports_dir,
        summary_path=run_files(reports_dir if reports_dir.is_absolute() else rootdir / reports_dir, run_id,
                               (summary if summary.is_absolute() else rootdir / summary) if summary.name else None)[0],
        predictions=predictions,
        suites=suites,
        is_controller=workerinput is None,
        providers=providers,
    )
    config.stash[STATE] = state
    warn_outer_timeout(config, [*suites.options(), *providers.options()])
    datasets = config.getoption("dataset")
    if datasets and config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        config.args[:] = []  # `pytest --dataset=x.jsonl` evaluates the dataset, not the ini's testpaths
    for dataset in datasets:
        if dataset not in config.args:
            config.args.append(dataset)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "mobilebench-xdist")
    if workerinput is not None or config.pluginmanager.hasplugin("xdist"):
        from pytest_mobilebench.remote import (
            RemoteWorkers,  # workers on other machines: docs/scale-out.md
        )

        config.pluginmanager.register(RemoteWorkers(config), "mobilebench-remote")
    if config.pluginmanager.hasplugin("html"):
        from pytest_mobilebench.report.html import HtmlHooks

        config.pluginmanager.register(HtmlHooks(), "mobilebench-html")
    if state.is_controller:
        config.pluginmanager.register(_Controller(config), "mobilebench-controller")
        if config.getoption("mb_regrade"):  # docs/datasets.md "Re-grading a run"
            from pytest_mobilebench.regrade_run import RegradeHooks

            if config.getoption("numprocesses", None):
                raise pytest.UsageError("--mb-regrade runs nothing and needs no workers: drop -n")
            regrade_dir = Path(config.getoption("mb_regrade"))
            config.pluginmanager.register(
                RegradeHooks(regrade_dir if regrade_dir.is_absolute() else rootdir / regrade_dir, state.results, suites),
                "mobilebench-regrade",
            )
        if predictions is not None and not config.option.collectonly:
            start_run()  # containers of dead runs swept; this run writes only under reports/<run_id>/
            from pytest_mobilebench.report.progress import LiveProgress

            live = bool(config.getoption("numprocesses", None)) and config.getoption("dist", "no") != "no"
            progress = LiveProgress(config, state.reports_dir / run_id / "progress.log", live=live)
            config.pluginmanager.register(progress, "mobilebench-progress")


class _XdistHooks:
    """Hooks that exist only with pytest-xdist: hand the controller's run id to every worker."""

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["mobilebench_run_id"] = node.config.stash[STATE].run_id

    @pytest.hookimpl
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Workers cannot stop the run with a usage error: the controller does, from what they selected."""
        state = node.config.stash[STATE]
        if state.predictions is None and not node.config.option.collectonly and read_json(_collected_path(state)):
            # pytest prints an Exit as "! _pytest.outcomes.Exit: <msg> !": the full usage text goes first, plainly
            reporter = node.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"ERROR: {NO_PREDICTIONS}", red=True, bold=True)
            pytest.exit("usage error: no --predictions given (see above)", returncode=pytest.ExitCode.USAGE_ERROR)


# ------------------------------------------------------------------------------------------ collection


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    datasets = {str(Path(d).resolve()) for d in config.getoption("dataset")}
    if str(file_path.resolve()) in datasets:
        return DatasetFile.from_parent(parent, path=file_path)
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    try:
        head = file_path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    match = re.search(r"(?m)^suite:\s*['\"]?([A-Za-z0-9_-]+)", head)
    if not match or match.group(1) not in config.stash[STATE].suites:
        return None
    manifest = ManifestFile.from_parent(parent, path=file_path)
    manifest.suite_name = match.group(1)
    return manifest


NO_PREDICTIONS = (
    "benchmark instances were selected but no --predictions was given; use one of:\n"
    "  --predictions=gold    the instances' own fixes (validates the instances)\n"
    "  --predictions=empty   no change at all (every instance must fail)\n"
    "  --predictions=live    the suite asks a model endpoint for the candidate (suites with a live mode only)\n"
    "  --predictions=PATH    a predictions file (JSON lines, a JSON list or a JSON object keyed by instance_id)"
)


def _collected_path(state: MobileBenchState) -> Path:
    """``reports/<run>/collected.json``: the selected items, written by xdist workers for the controller."""
    return state.reports_dir / state.run_id / "collected.json"


@pytest.hookimpl(tryfirst=True)  # before xdist starts its workers
def pytest_sessionstart(session: pytest.Session) -> None:
    """A full reports disk ends the run before anything runs, with its own exit status (75)."""
    state = session.config.stash.get(STATE, None)
    if state is not None and state.is_controller and not session.config.option.collectonly:
        problem = reports_space_problem(state.reports_dir)
        if problem is not None:
            pytest.exit(problem, returncode=REPORTS_DISK_FULL_EXIT)


@pytest.hookimpl(trylast=True)  # after -k / -m deselection
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Record the selected benchmark items per suite; refuse to evaluate them without predictions."""
    state = config.stash[STATE]
    state.collected = {
        it.nodeid: (it.record.suite, it.record.instance_id) if isinstance(it, InstanceItem)
        else (it.suite, it.error.instance_id or it.name)
        for it in items if isinstance(it, (InstanceItem, InvalidInstanceItem))
    }
    if not state.is_controller and not config.option.collectonly:
        try:
            atomic_write_json(_collected_path(state), state.collected)  # read by the controller (_XdistHooks)
        except OSError as exc:  # the disk filled since the controller's probe: counts fall back to results
            if not is_disk_full(exc):
                raise
    elif state.collected and state.predictions is None and not config.option.collectonly and not config.getoption("mb_regrade"):
        raise pytest.UsageError(NO_PREDICTIONS)


class _RecordCollector(pytest.File, abc.ABC):
    """Shared by manifest and dataset files: records -> items, broken records -> error items."""

    #: the suite whose records the file holds ("unknown" until a suite recognises a dataset)
    suite_name: str = "unknown"

    @abc.abstractmethod
    def _records(self) -> list[LoadedRecord | ManifestError]:
        """The file's records, a broken one as a ManifestError in its place."""

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[STATE]
        rel = self.path.relative_to(self.config.rootpath) if self.path.is_relative_to(self.config.rootpath) else self.path
        for index, entry in enumerate(self._records()):
            if isinstance(entry, ManifestError):
                name = entry.instance_id or f"entry-{index + 1}"
                yield InvalidInstanceItem.from_parent(self, name=name, error=entry)
                continue
            first = state.seen_ids.setdefault(entry.instance_id, f"{rel}:{entry.line or '?'}")
            if first != f"{rel}:{entry.line or '?'}":
                error = ManifestError(
                    entry.source, f"duplicate instance_id, first defined at {first}", line=entry.line,
                    instance_id=entry.instance_id,
                )
                yield InvalidInstanceItem.from_parent(self, name=f"{entry.instance_id}[duplicate]", error=error)
                continue
            models: list[str | None] = list(state.predictions.models) if state.predictions is not None else [None]
            if not models:
                models = [None]
            for model in models:
                name = entry.instance_id if len(models) == 1 else f"{entry.instance_id}[{model}]"
                item = InstanceItem.from_parent(self, name=name, record=entry, model=model)
                for marker in entry.markers:
                    item.add_marker(marker)
                item.add_marker(pytest.mark.xdist_group(name=entry.group))
                yield item


class ManifestFile(_RecordCollector):
    """A YAML manifest whose ``suite:`` names a registered suite."""

    def _records(self) -> list[LoadedRecord | ManifestError]:
        try:
            doc = read_yaml(self.path)
        except ManifestError as exc:
            return [exc]
        suite_name = str(doc.data.get("suite"))
        suite = self.config.stash[STATE].suites[suite_name]
        try:
            return list(suite.load(self.path, doc))
        except ManifestError as exc:
            return [exc]


class DatasetFile(_RecordCollector):
    """A ``--dataset`` release: the first suite whose ``load_dataset`` recognises the file's dialect reads it."""

    def _records(self) -> list[LoadedRecord | ManifestError]:
        state = self.config.stash[STATE]
        options = options_of(self.config)
        for suite in state.suites.values():
            records = suite.load_dataset(self.path, options)
            if records is not None:
                self.suite_name = str(suite.name)
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
    """:class:`pytest_mobilebench.suites.base.EvalContext` for one item."""

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
    if reporter is not None and not on_worker:
        reporter.write_line(f"[mobilebench] {message}")
    append_worker_line(state.reports_dir / state.run_id / "progress.log", message)


def announce(config: pytest.Config, message: str) -> None:
    """A progress line outside any item (a runtime provider building images), shown as items' lines are."""
    _say(config.stash[STATE], config.pluginmanager.get_plugin("terminalreporter"), hasattr(config, "workerinput"), message)


def _safe(name: str) -> str:
    """The evidence folder of a model name or instance id (:func:`pytest_mobilebench.report.names.folder_name`)."""
    return folder_name(name)


def options_of(config: pytest.Config) -> dict[str, Any]:
    """The plugin's, every suite's and every runtime provider's options as plain builtins (``ctx.options``)."""
    state = config.stash[STATE]
    names = [*_PLUGIN_OPTIONS, *(o.dest for o in state.suites.options()),
             *(o.dest for o in (state.providers.options() if state.providers is not None else ()))]
    opts = {name: config.getoption(name) for name in names}
    opts["_xdist_worker"] = hasattr(config, "workerinput")
    opts["_rootdir"] = str(config.invocation_params.dir)
    return opts


def _checked_evaluate(suite: Suite, record: LoadedRecord, prediction: Prediction | None, ctx: _Context) -> dict[str, Any]:
    """``suite.evaluate`` checked against the result contract; a raise or a broken result is recorded as an
    infrastructure result with the traceback in ``harness_error.log``, never lost and never cached."""
    try:
        checked = ItemResult.from_suite(suite, suite.evaluate(record, prediction, ctx))
    except Exception as exc:  # noqa: BLE001 - a harness bug is recorded as infra, never lost
        import traceback

        with contextlib.suppress(OSError):  # the disk may be full
            (ctx.evidence_dir / "harness_error.log").write_text(traceback.format_exc(), encoding="utf-8")
        kind = "disk_full" if is_disk_full(exc) else "harness_error"
        checked = ItemResult.harness_error(f"{kind.replace('_', ' ')}: {type(exc).__name__}: {exc}", kind)
    return checked.to_dict()


class InstanceItem(pytest.Item):
    """One benchmark instance evaluated for one model's prediction."""

    def __init__(self, *, record: LoadedRecord, model: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.record = record
        self.model = model
        suite = self.config.stash[STATE].suites[record.suite]
        # request the suite's resources the way a test function requests fixtures (a conftest can override them)
        if suite.fixtures:  # pytest refuses an empty usefixtures()
            self.add_marker(pytest.mark.usefixtures(*suite.fixtures))
        self._fixtureinfo = self.session._fixturemanager.getfixtureinfo(node=self, func=None, cls=None)
        self.fixturenames = self._fixtureinfo.names_closure
        self.funcargs: dict[str, Any] = {}

    def setup(self) -> None:
        from _pytest.fixtures import TopRequest

        self._request = TopRequest(self, _ispytest=True)  # type: ignore[arg-type]
        self._request._fillfixtures()

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, (self.record.line - 1 if self.record.line else None), f"{self.record.suite}: {self.name}"

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        if state.predictions is None:
            pytest.skip("no --predictions given (use a predictions file, or 'gold' / 'empty' / 'live')")
        assert self.model is not None
        try:
            prediction = state.predictions.get(self.record.instance_id, self.model, self.record.suite)
        except PredictionsError as exc:  # --predictions=live for a suite that cannot run live
            pytest.fail(str(exc), pytrace=False)
        suite = state.suites[self.record.suite]
        options = options_of(self.config)
        key = result_key(suite, self.record, self.model, prediction, options,
                         runtime_options=state.providers.keyed_for(suite.fixtures) if state.providers else ())
        cache_file = result_path(state.reports_dir, key)
        cached = None if options["mb_rerun"] else read_json(cache_file)
        if cached is not None:
            result = {**cached, "cached": True}
        else:
            evidence = state.reports_dir / state.run_id / _safe(self.model) / _safe(self.record.instance_id)
            evidence.mkdir(parents=True, exist_ok=True)
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            ctx = _Context(state.run_id, evidence, options, state, reporter, self.funcargs)
            started = time.monotonic()
            result = _checked_evaluate(suite, self.record, prediction, ctx)
            result["elapsed_s"] = round(time.monotonic() - started, 3)  # shown beside later cache hits
            result.setdefault("instance_id", self.record.instance_id)
            result.setdefault("suite", self.record.suite)
            result["model_name_or_path"] = self.model
            result["evidence_dir"] = str(evidence)
            result["cache_key"] = key
            result["group"] = self.record.group
            used = getattr(self.funcargs.get("mb_runtime"), "used", None)
            if used:  # the controller finishes each provider the run used (image cleanup)
                result["runtimes"] = [str(name) for name in used]
            try:
                atomic_write_json(evidence / "result.json", result)
                if not result.get("retryable"):
                    atomic_write_json(cache_file, result)
            except OSError as exc:  # a full disk: the verdict stands, unsaved and uncached; said at the end
                if not is_disk_full(exc):
                    raise
                state.report_errors.append(f"the reports disk is full: {self.record.instance_id} was not saved ({exc})")
        self.stash[RESULT] = result
        for name, value in sorted(result.get("properties", {}).items()):
            self.user_properties.append((name, value))
        if "verdict" not in result.get("properties", {}):
            self.user_properties.append(("verdict", result.get("reason")))
        for name in ("reason", "passed"):
            self.user_properties.append((name, result.get(name)))
        self.user_properties.append(("resolved", bool(result.get("passed"))))
        if not result.get("passed"):
            raise InstanceNotResolved(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, InstanceNotResolved):
            r = excinfo.value.result  # candidate text (details, test ids, model names): escaped
            lines = [printable(f"{r.get('instance_id')} [{r.get('model_name_or_path')}]: {r.get('reason')}")]
            if r.get("detail"):
                lines.append(printable(r["detail"], limit=4000))
            for name, tests in sorted((r.get("failing") or {}).items()):
                for test in tests[:20]:
                    lines.append(printable(f"  {name}: {test}"))
                if len(tests) > 20:
                    lines.append(f"  {name}: ... {len(tests) - 20} more")
            lines.append(printable(f"evidence: {r.get('evidence_dir')}", limit=1000))
            return "\n".join(lines)
        return super().repr_failure(excinfo)


# ------------------------------------------------------------------------------- reports and summary


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and isinstance(item, InstanceItem) and RESULT in item.stash:
        report.mobilebench_result = item.stash[RESULT]
    elif call.when == "call" and isinstance(item, InvalidInstanceItem):
        report.mobilebench_manifest_error = str(item.error)
        report.mobilebench_suite = item.suite
    return report


def _partial_path(state: MobileBenchState) -> Path:
    return run_files(state.reports_dir, state.run_id)[1]


_SUMMARY = pytest.StashKey[dict[str, Any]]()


@final
class _Controller:
    """Result gathering on the controller (or the only process): incremental log, summary, terminal."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        state = self.config.stash[STATE]
        error = getattr(report, "mobilebench_manifest_error", None)
        if error is not None:
            state.invalid[report.nodeid] = str(getattr(report, "mobilebench_suite", "unknown"))
            if error not in state.manifest_errors:
                state.manifest_errors.append(error)
        result = getattr(report, "mobilebench_result", None)
        if result is None:
            return
        state.results.append(result)
        try:
            append_jsonl(_partial_path(state), result)
        except OSError as exc:  # a full reports disk: said at the end, the run goes on
            if not is_disk_full(exc):
                raise
            state.report_errors.append(f"the reports disk is full: {_partial_path(state)} lacks results ({exc})")
        self.config.hook.pytest_mobilebench_result(config=self.config, result=result)

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes its file (the headlines go into it)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._write_outputs(session)
        if any("reports disk is full" in e for e in self.config.stash[STATE].report_errors):
            session.exitstatus = REPORTS_DISK_FULL_EXIT  # results were lost: the run must be repeated

    def _write_outputs(self, session: pytest.Session) -> None:
        state = self.config.stash[STATE]
        exitstatus = int(session.exitstatus)  # as a re-grade set it: the summary says what the process exits with
        if not state.collected:
            state.collected = {k: tuple(v) for k, v in (read_json(_collected_path(state)) or {}).items()}
        nothing = not (state.results or state.collected or state.invalid)
        regrade = bool(self.config.getoption("mb_regrade"))  # a re-grade that used nothing still says so
        if self.config.option.collectonly or nothing or (state.predictions is None and not state.results and not regrade):
            return  # nothing was selected or evaluated: an earlier run's summary stays as it is
        options = options_of(self.config)
        summary = make_summary(state, options)
        summary["interrupted"] = exitstatus == pytest.ExitCode.INTERRUPTED
        summary["exitstatus"] = int(exitstatus)
        for name in sorted({str(r.get("suite")) for r in state.results}):
            suite = state.suites.get(name)
            if suite is not None:
                try:
                    suite.finish_run(options, state.run_id, [r for r in state.results if r.get("suite") == name])
                except Exception as exc:  # noqa: BLE001 - cleanup must not cost the summary
                    summary.setdefault("cleanup_errors", []).append(f"{name}: {type(exc).__name__}: {exc}")
        if state.providers is not None:  # each runtime provider the results name removes what the run made
            errors, notes = state.providers.finish_used(state.results, options, state.run_id)
            if errors:
                summary.setdefault("cleanup_errors", []).extend(errors)
            if notes:
                summary["kept"] = notes  # what stays on the machine (kept images and their size), said at the end
        self.config.hook.pytest_mobilebench_summary(config=self.config, summary=summary)
        try:
            write_summary(state.summary_path, summary)
        except ReportsDiskFull as exc:
            state.report_errors.append(exc.strerror)
            return
        state.report_errors += finish_run(state.reports_dir, state.run_id)  # reports/latest -> this run
        state.report_errors += write_model_reports(summary, state.reports_dir / state.run_id)
        self.config.stash[_SUMMARY] = summary
        add_junit_properties(self.config, summary)
        page = None
        try:
            from pytest_mobilebench.report.page import write_run_page

            page = write_run_page(summary, state.results, state.suites, state.reports_dir, summary_path=state.summary_path)
        except Exception as exc:  # noqa: BLE001 - the page must never cost the summary; the terminal says why
            summary.setdefault("report_errors", []).append(f"run page: {type(exc).__name__}: {exc}")
            if is_disk_full(exc):
                state.report_errors.append(f"the reports disk is full: the run page was not written ({exc})")
        from pytest_mobilebench.report.html import RUN_OUTPUT

        self.config.stash[RUN_OUTPUT] = (summary, page)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(STATE, None)
    if state is not None:
        state.close_resources()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The mobilebench section: per-suite headlines (:mod:`pytest_mobilebench.report.terminal`)."""
    for problem in config.stash[STATE].report_errors if STATE in config.stash else ():
        terminalreporter.write_line(f"mobilebench: {problem}", red=True)
    summary = config.stash.get(_SUMMARY, None)
    state = config.stash.get(STATE, None)
    full = state is not None and any("reports disk is full" in e for e in state.report_errors)
    if full:
        terminalreporter.write_line(f"mobilebench: exit status {REPORTS_DISK_FULL_EXIT}: free space and re-run "
                                    "(items whose results were saved are answered from the cache)", red=True)
    if summary is None:
        if not full and state is not None and state.is_controller and state.predictions is not None and not config.option.collectonly:
            terminalreporter.section("mobilebench")
            terminalreporter.write_line(nothing_selected_line(state.summary_path, state.reports_dir))
        return
    from pytest_mobilebench.report.html import RUN_OUTPUT

    page = (config.stash.get(RUN_OUTPUT, None) or (None, None))[1]
    terminalreporter.section("mobilebench")
    for line in headline_lines(summary, summary_path=str(config.stash[STATE].summary_path), page_path=str(page or "")):
        terminalreporter.write_line(line)
    for error in summary.get("report_errors", []):
        terminalreporter.write_line(f"report error: {error}")
