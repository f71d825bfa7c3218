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

Start-up does nothing but declare: importing this module (the ``pytest11`` entry point) imports the options,
the state and the suites' surfaces; a suite's implementation, the item classes (:mod:`pytest_mobilebench.items`)
and the reports are imported when a benchmark file is collected or a run has results (docs/performance.md).
The package's own modules are not assertion-rewritten (PYTEST_DONT_REWRITE: pytest would otherwise rewrite
every module of a ``pytest11`` distribution; see :func:`pytest_addhooks`).
"""

from __future__ import annotations

import datetime
import re
import sys
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_mobilebench.options import apply_env_defaults, parse_duration, warn_outer_timeout
from pytest_mobilebench.state import RESULT, STATE, MobileBenchState
from pytest_mobilebench.suites import AGENT_OPTIONS, SuiteRegistry, builtin_registry

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import Predictions
    from pytest_mobilebench.runtime.provider import ProviderRegistry, RuntimeProvider
    from pytest_mobilebench.suites.base import Suite

__all__ = ["MobileBenchState"]  # and, through __getattr__, the item classes of items.py

#: the registry made for each pytest run while options are declared (keyed by its plugin manager)
_REGISTRIES: weakref.WeakKeyDictionary[Any, SuiteRegistry] = weakref.WeakKeyDictionary()
#: the runtime providers made for each pytest run while options are declared (keyed by its plugin manager)
_PROVIDERS: weakref.WeakKeyDictionary[Any, ProviderRegistry] = weakref.WeakKeyDictionary()


def __getattr__(name: str) -> Any:
    """The item classes, re-exported from :mod:`pytest_mobilebench.items` (imported on first use)."""
    if name in ("InstanceItem", "InvalidInstanceItem", "ManifestFile"):
        from pytest_mobilebench import items

        return getattr(items, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------------- options


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_mobilebench import hooks

    pluginmanager.add_hookspecs(hooks)
    _no_rewrite(pluginmanager)


def _no_rewrite(pluginmanager: pytest.PytestPluginManager) -> None:
    """Take the package off pytest's assertion-rewrite list (it is on it as a ``pytest11`` distribution).

    The package's asserts state invariants, never test outcomes; rewriting would send each of its modules
    through pytest's AST rewriter (and without a writable ``__pycache__``, rewrite them again on every run).
    Modules imported before this hook (this one and its few imports) stay as they were loaded. The rewrite
    hook keeps its list in a private set; if a pytest version has none, nothing changes.
    """
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and __package__ in marked:
        marked.discard(__package__)
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


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
        "--mb-patch-field",
        default=None,
        metavar="FIELD",
        help="read each prediction's patch from FIELD (e.g. 'patch') instead of 'model_patch'",
    )
    group.addoption(
        "--dataset",
        action="append",
        default=[],
        metavar="PATH",
        help="a benchmark release (JSON/JSONL rows) collected as manifests by the suite that reads its dialect",
    )
    group.addoption(
        "--mb-summary",
        default=None,
        help="where the controller writes the run summary (default: <reports>/<run_id>/summary.json)",
    )
    group.addoption("--mb-reports-dir", default="reports", help="root of evidence folders and the result cache")
    group.addoption("--mb-run-id", default=None, help="run id (default: UTC timestamp + random suffix)")
    group.addoption("--mb-rerun", action="store_true", help="ignore cached results and evaluate again")
    group.addoption(
        "--mb-run-budget",
        default=None,
        type=parse_duration,
        metavar="DURATION",
        help="stop starting items after DURATION (90s, 30m, 2h, 1h30m); the rest are 'not run' and a "
        "re-run resumes them (exit status 2 when it ran out)",
    )
    group.addoption(
        "--mb-regrade",
        default=None,
        metavar="RUN_DIR",
        help="re-grade the run in RUN_DIR (<reports>/<run_id>) from its evidence; runs nothing",
    )

    def declare(owner: Suite | RuntimeProvider) -> None:
        for option in owner.options:
            group.addoption(*option.flags, **option.addoption_kwargs())

    from pytest_mobilebench.runtime.provider import COMMON_OPTIONS, builtin_providers

    for option in (*COMMON_OPTIONS, *AGENT_OPTIONS):  # the runtime layer's and the live agents', declared once
        group.addoption(*option.flags, **option.addoption_kwargs())
    providers = builtin_providers(recipe_factory=_workspace_recipe, on_add=declare)
    _PROVIDERS[pluginmanager] = providers
    registry = builtin_registry(on_add=declare)
    _REGISTRIES[pluginmanager] = registry
    # historic: a conftest.py or plugin registered later still gets the call, before the command line is parsed
    pluginmanager.hook.pytest_mobilebench_register_runtimes.call_historic(kwargs={"registry": providers})
    pluginmanager.hook.pytest_mobilebench_register_suites.call_historic(kwargs={"registry": registry})


def _workspace_recipe(*args: Any, **kwargs: Any) -> Any:
    """:func:`pytest_mobilebench.frameworks.workspace_recipe`, imported when the Docker runtime first builds."""
    from pytest_mobilebench.frameworks import workspace_recipe

    return workspace_recipe(*args, **kwargs)


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
    # the surfaces' markers; a suite's other markers and its fixture module come with its first file (items.py)
    for suite in suites.declared().values() if not config.option.markers else suites.values():
        for name, doc in suite.markers.items():
            config.addinivalue_line("markers", f"{name}: {doc}")
    from pytest_mobilebench import fixtures

    config.pluginmanager.register(fixtures, "mobilebench-fixtures")
    workerinput = getattr(config, "workerinput", None)
    run_id = (workerinput or {}).get("mobilebench_run_id") or config.getoption("mb_run_id") or _new_run_id()
    rootdir = Path(config.invocation_params.dir)
    predictions = _load_predictions(config, suites, rootdir)
    state = _new_state(config, run_id, rootdir, predictions, suites, providers, is_controller=workerinput is None)
    config.stash[STATE] = state
    warn_outer_timeout(config, [*suites.options(), *providers.options()])
    if (
        workerinput is None
        and predictions is not None
        and predictions.pseudo is not None
        and predictions.pseudo.value == "live"
        and not config.option.collectonly
    ):
        _check_endpoint(config, {o.dest: config.getoption(o.dest) for o in suites.options()})
    _add_datasets(config)
    _register_session_plugins(config, workerinput)
    if state.is_controller:
        _register_controller_plugins(config, state, rootdir)


def _load_predictions(config: pytest.Config, suites: SuiteRegistry, rootdir: Path) -> Predictions | None:
    """The ``--predictions`` sources loaded (:func:`pytest_mobilebench.predictions.load_predictions`), or None
    without the option. A bad source is a usage error naming it."""
    if not config.getoption("predictions"):
        return None
    from pytest_mobilebench.predictions import (
        LIVE,
        PredictionsError,
        load_predictions,
    )

    specs = config.getoption("predictions")
    try:  # the suites are read (so imported) only for `live`
        return load_predictions(
            specs,
            base_dir=rootdir,
            suites=suites.values() if LIVE in specs else (),
            options={o.dest: config.getoption(o.dest) for o in suites.options()},
            patch_field=config.getoption("mb_patch_field"),
        )
    except PredictionsError as exc:
        raise pytest.UsageError(f"--predictions: {exc}") from exc


def _new_state(
    config: pytest.Config,
    run_id: str,
    rootdir: Path,
    predictions: Predictions | None,
    suites: SuiteRegistry,
    providers: ProviderRegistry,
    *,
    is_controller: bool,
) -> MobileBenchState:
    """The run's plugin state: its reports folder and summary path resolved against ``rootdir``
    (:func:`pytest_mobilebench.report.runs.run_files`)."""
    from pytest_mobilebench.report.runs import run_files

    reports_dir = Path(config.getoption("mb_reports_dir"))
    reports_dir = reports_dir if reports_dir.is_absolute() else rootdir / reports_dir
    summary = Path(config.getoption("mb_summary") or "")
    return MobileBenchState(
        run_id=run_id,
        reports_dir=reports_dir,
        summary_path=run_files(
            reports_dir, run_id, (summary if summary.is_absolute() else rootdir / summary) if summary.name else None
        )[0],
        predictions=predictions,
        suites=suites,
        is_controller=is_controller,
        providers=providers,
    )


def _add_datasets(config: pytest.Config) -> None:
    """``--dataset`` files become the run's arguments (``pytest --dataset=x.jsonl`` evaluates the dataset, not
    the ini's testpaths)."""
    datasets = config.getoption("dataset")
    if datasets and config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        config.args[:] = []
    for dataset in datasets:
        if dataset not in config.args:
            config.args.append(dataset)


def _register_session_plugins(config: pytest.Config, workerinput: dict[str, Any] | None) -> None:
    """The hooks every process of the run needs: xdist's, the run budget, remote workers, pytest-html's."""
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "mobilebench-xdist")
    budget = config.getoption("mb_run_budget")
    if budget and not config.option.collectonly:  # docs: run_budget.py
        from pytest_mobilebench.run_budget import PLUGIN_NAME, WORKER_KEY, RunBudget

        left = (workerinput or {}).get(WORKER_KEY, budget)
        config.pluginmanager.register(RunBudget(budget, float(left)), PLUGIN_NAME)
    if workerinput is not None or config.pluginmanager.hasplugin("xdist"):
        from pytest_mobilebench.remote import (
            RemoteWorkers,  # workers on other machines: docs/scale-out.md
        )

        config.pluginmanager.register(RemoteWorkers(config), "mobilebench-remote")
    if config.pluginmanager.hasplugin("html"):
        from pytest_mobilebench.report.html import HtmlHooks

        config.pluginmanager.register(HtmlHooks(), "mobilebench-html")


def _register_controller_plugins(config: pytest.Config, state: MobileBenchState, rootdir: Path) -> None:
    """The controller's hooks: the run's reports, ``--mb-regrade`` (docs/datasets.md "Re-grading a run"), and for
    a run that evaluates predictions the sweep of dead runs' containers and the live progress log."""
    from pytest_mobilebench.report.controller import Controller

    config.pluginmanager.register(Controller(config), "mobilebench-controller")
    if config.getoption("mb_regrade"):
        from pytest_mobilebench.regrade_run import RegradeHooks

        if config.getoption("numprocesses", None):
            raise pytest.UsageError("--mb-regrade runs nothing and needs no workers: drop -n")
        regrade_dir = Path(config.getoption("mb_regrade"))
        config.pluginmanager.register(
            RegradeHooks(regrade_dir if regrade_dir.is_absolute() else rootdir / regrade_dir, state.results),
            "mobilebench-regrade",
        )
    if state.predictions is not None and not config.option.collectonly:
        from pytest_mobilebench.report.runs import start_run

        sweep_options = {o.dest: config.getoption(o.dest) for o in state.providers.options()}
        for problem in start_run(state.providers, sweep_options, state.run_id):  # every provider sweeps dead runs
            config.issue_config_time_warning(pytest.PytestConfigWarning(problem), stacklevel=2)
        from pytest_mobilebench.report.progress import LiveProgress

        live = bool(config.getoption("numprocesses", None)) and config.getoption("dist", "no") != "no"
        progress = LiveProgress(config, state.reports_dir / state.run_id / "progress.log", live=live)
        config.pluginmanager.register(progress, "mobilebench-progress")


def _check_endpoint(config: pytest.Config, options: dict[str, Any]) -> None:
    """One request to the live endpoint before anything runs (:func:`pytest_mobilebench.agents.options.check_endpoint`):
    a wrong configuration is a usage error naming it; a failure that may pass is a warning."""
    from pytest_mobilebench.agents.options import check_endpoint

    try:
        note = check_endpoint(options)
    except ValueError as exc:
        raise pytest.UsageError(f"--predictions=live: endpoint check: {exc}") from None
    if note is not None:
        config.issue_config_time_warning(pytest.PytestConfigWarning(f"--predictions=live: {note}"), stacklevel=2)


@pytest.hookimpl(trylast=True)
def pytest_mobilebench_make_runtime(config: pytest.Config, trusted: bool) -> Any:
    """The hook's default implementation: the registry's choice for ``--mb-runtime``
    (:meth:`~pytest_mobilebench.runtime.provider.RuntimeSource.choose` of this process's ``mb_runtime`` source);
    any plugin's own answer comes first (firstresult). None before the fixture made a source."""
    source = config.stash[STATE].runtime_source
    return None if source is None else source.choose(trusted)


class _XdistHooks:
    """Hooks that exist only with pytest-xdist: hand the controller's run id to every worker."""

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["mobilebench_run_id"] = node.config.stash[STATE].run_id

    @pytest.hookimpl
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Workers cannot stop the run with a usage error: the controller does, from what they selected."""
        from pytest_mobilebench.report.controller import collected_path
        from pytest_mobilebench.files import read_json

        state = node.config.stash[STATE]
        if state.predictions is None and not node.config.option.collectonly and read_json(collected_path(state)):
            # pytest prints an Exit as "! _pytest.outcomes.Exit: <msg> !": the full usage text goes first, plainly
            reporter = node.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"ERROR: {NO_PREDICTIONS}", red=True, bold=True)
            pytest.exit("usage error: no --predictions given (see above)", returncode=pytest.ExitCode.USAGE_ERROR)


# ------------------------------------------------------------------------------------------ collection


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A ``--dataset`` file, or a YAML file whose ``suite:`` (read from its head) names a registered suite;
    the item classes (:mod:`pytest_mobilebench.items`) are imported at the first such file."""
    config = parent.config
    datasets = config.getoption("dataset")
    if datasets and str(file_path.resolve()) in {str(Path(d).resolve()) for d in datasets}:
        from pytest_mobilebench.items import DatasetFile

        return DatasetFile.from_parent(parent, path=file_path)
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    try:
        head = file_path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    match = _SUITE_LINE.search(head)
    if not match or match.group(1) not in config.stash[STATE].suites:
        return None
    from pytest_mobilebench.items import ManifestFile

    manifest = ManifestFile.from_parent(parent, path=file_path)
    manifest.suite_name = match.group(1)
    return manifest


#: a manifest's ``suite:`` line, looked for in its first 4 KiB
_SUITE_LINE = re.compile(r"(?m)^suite:\s*['\"]?([A-Za-z0-9_-]+)")

NO_PREDICTIONS = (
    "benchmark instances were selected but no --predictions was given; use one of:\n"
    "  --predictions=gold    the instances' own fixes (validates the instances)\n"
    "  --predictions=empty   no change at all (every instance must fail)\n"
    "  --predictions=live    the suite asks a model endpoint for the candidate (suites with a live mode only)\n"
    "  --predictions=PATH    a predictions file (JSON lines, a JSON list or a JSON object keyed by instance_id)"
)


@pytest.hookimpl(tryfirst=True)  # before xdist starts its workers
def pytest_sessionstart(session: pytest.Session) -> None:
    """A full reports disk ends the run before anything runs, with its own exit status (75)."""
    state = session.config.stash.get(STATE, None)
    if state is not None and state.is_controller and not session.config.option.collectonly:
        from pytest_mobilebench.report.runs import (
            REPORTS_DISK_FULL_EXIT,
            reports_space_problem,
        )

        problem = reports_space_problem(state.reports_dir)
        if problem is not None:
            pytest.exit(problem, returncode=REPORTS_DISK_FULL_EXIT)


@pytest.hookimpl
def pytest_deselected(items: list[pytest.Item]) -> None:
    """Remember the benchmark instances ``-k`` / ``-m`` deselected: a prediction for one of them is no typo."""
    found = sys.modules.get("pytest_mobilebench.items")
    state = items[0].config.stash.get(STATE, None) if items else None
    if found is not None and state is not None:
        state.deselected.update(iid for _, iid in found.selected(items).values())


@pytest.hookimpl(trylast=True)  # after -k / -m deselection
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Record the selected benchmark items per suite; refuse to evaluate them without predictions."""
    state = config.stash[STATE]
    found = sys.modules.get("pytest_mobilebench.items")  # imported with the first benchmark file, else none
    state.collected = {} if found is None else found.selected(items)
    if not state.is_controller and not config.option.collectonly:
        from pytest_mobilebench.report.controller import collected_path, deselected_path
        from pytest_mobilebench.files import atomic_write_json
        from pytest_mobilebench.report.runs import is_disk_full

        try:
            atomic_write_json(collected_path(state), state.collected)  # read by the controller (_XdistHooks)
            atomic_write_json(deselected_path(state), sorted(state.deselected))
        except OSError as exc:  # the disk filled since the controller's probe: counts fall back to results
            if not is_disk_full(exc):
                raise
    elif (
        state.collected
        and state.predictions is None
        and not config.option.collectonly
        and not config.getoption("mb_regrade")
    ):
        raise pytest.UsageError(NO_PREDICTIONS)


# ------------------------------------------------------------------------------- reports and summary


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    found = sys.modules.get("pytest_mobilebench.items") if call.when == "call" else None
    if found is None:
        return report
    if isinstance(item, found.InstanceItem) and RESULT in item.stash:
        report.mobilebench_result = item.stash[RESULT]
    elif isinstance(item, found.InvalidInstanceItem):
        report.mobilebench_manifest_error = str(item.error)
        report.mobilebench_suite = item.suite
    elif (
        isinstance(item, found.InstanceItem)
        and call.excinfo is not None
        and isinstance(call.excinfo.value, found.ManifestError)
    ):
        report.mobilebench_manifest_error = str(call.excinfo.value)  # invalid data found when the item ran
        report.mobilebench_suite = item.record.suite
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(STATE, None)
    if state is not None:
        state.close_resources()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The mobilebench section (:func:`pytest_mobilebench.report.controller.terminal_summary`)."""
    if STATE in config.stash:
        from pytest_mobilebench.report.controller import terminal_summary

        terminal_summary(terminalreporter, config)
