"""The controller's side of a run (or the only process's): every item's result appended to
``<summary>.jsonl`` as it arrives, the summary, run page and model reports written once at session end, and
the terminal section. Registered by the plugin on the controller; the report modules are imported when there
is something to report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, final

import pytest

from pytest_mobilebench.files import append_jsonl, read_json
from pytest_mobilebench.report.runs import (
    REPORTS_DISK_FULL_EXIT,
    ReportsDiskFull,
    is_disk_full,
    run_files,
)
from pytest_mobilebench.state import STATE, MobileBenchState, options_of

__all__ = ["Controller", "collected_path", "deselected_path", "terminal_summary"]


def collected_path(state: MobileBenchState) -> Path:
    """``reports/<run>/collected.json``: the selected items, written by xdist workers for the controller."""
    return state.reports_dir / state.run_id / "collected.json"


def deselected_path(state: MobileBenchState) -> Path:
    """``reports/<run>/deselected.json``: the instance ids ``-k`` / ``-m`` deselected, written by xdist workers."""
    return state.reports_dir / state.run_id / "deselected.json"


def _partial_path(state: MobileBenchState) -> Path:
    return run_files(state.reports_dir, state.run_id)[1]


_SUMMARY = pytest.StashKey[dict[str, Any]]()


@final
class Controller:
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
        if getattr(report, "mobilebench_not_started", None):  # --mb-run-budget ran out before it started
            state.not_started.append(report.nodeid)
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
        interrupted = session.exitstatus == pytest.ExitCode.INTERRUPTED  # Ctrl-C (before the budget's status)
        if self.config.stash[STATE].not_started:
            session.exitstatus = pytest.ExitCode.INTERRUPTED  # the run budget ran out: the benchmark is incomplete
        self._write_outputs(session, interrupted)
        if any("reports disk is full" in e for e in self.config.stash[STATE].report_errors):
            session.exitstatus = REPORTS_DISK_FULL_EXIT  # results were lost: the run must be repeated

    def _write_outputs(self, session: pytest.Session, interrupted: bool) -> None:
        state = self.config.stash[STATE]
        exitstatus = int(session.exitstatus)  # as a re-grade set it: the summary says what the process exits with
        if not state.collected:
            state.collected = {k: tuple(v) for k, v in (read_json(collected_path(state)) or {}).items()}
            state.deselected = {str(i) for i in read_json(deselected_path(state)) or ()}
        nothing = not (state.results or state.collected or state.invalid)
        regrade = bool(self.config.getoption("mb_regrade"))  # a re-grade that used nothing still says so
        if (
            self.config.option.collectonly
            or nothing
            or (state.predictions is None and not state.results and not regrade)
        ):
            return  # nothing was selected or evaluated: an earlier run's summary stays as it is
        from pytest_mobilebench.report.junit import add_junit_properties
        from pytest_mobilebench.report.runs import finish_run, write_summary
        from pytest_mobilebench.report.summary import make_summary, write_model_reports

        options = options_of(self.config)
        summary = make_summary(state, options)
        summary["interrupted"] = interrupted
        summary["exitstatus"] = int(exitstatus)
        if self.config.getoption("mb_run_budget"):
            from pytest_mobilebench.run_budget import budget_summary

            summary["run_budget"] = budget_summary(self.config.getoption("mb_run_budget"), len(state.not_started))
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
            if warnings := state.providers.notices(state.results):
                summary["runtime_warnings"] = warnings  # the local runtime's UNISOLATED, said at the end
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
            from pytest_mobilebench.report.run_list import write_run_entry, write_runs_index

            write_run_entry(state.reports_dir, summary)  # this run's line on the runs page (reports/index.html)
            page = write_run_page(
                summary, state.results, state.suites, state.reports_dir, summary_path=state.summary_path
            )
            write_runs_index(state.reports_dir)
        except Exception as exc:  # noqa: BLE001 - the page must never cost the summary; the terminal says why
            summary.setdefault("report_errors", []).append(f"run page: {type(exc).__name__}: {exc}")
            if is_disk_full(exc):
                state.report_errors.append(f"the reports disk is full: the run page was not written ({exc})")
        from pytest_mobilebench.report.html import RUN_OUTPUT

        self.config.stash[RUN_OUTPUT] = (summary, page)


def terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The mobilebench section: per-suite headlines (:mod:`pytest_mobilebench.report.terminal`, imported when
    there is something to show)."""
    for problem in config.stash[STATE].report_errors if STATE in config.stash else ():
        terminalreporter.write_line(f"mobilebench: {problem}", red=True)
    summary = config.stash.get(_SUMMARY, None)
    state = config.stash.get(STATE, None)
    full = state is not None and any("reports disk is full" in e for e in state.report_errors)
    if full:
        terminalreporter.write_line(
            f"mobilebench: exit status {REPORTS_DISK_FULL_EXIT}: free space and re-run "
            "(items whose results were saved are answered from the cache)",
            red=True,
        )
    if summary is None:
        if (
            not full
            and state is not None
            and state.is_controller
            and state.predictions is not None
            and not config.option.collectonly
        ):
            from pytest_mobilebench.report.terminal import nothing_selected_line

            terminalreporter.section("mobilebench")
            terminalreporter.write_line(nothing_selected_line(state.summary_path, state.reports_dir))
        return
    from pytest_mobilebench.report.html import RUN_OUTPUT
    from pytest_mobilebench.report.terminal import headline_lines

    page = (config.stash.get(RUN_OUTPUT, None) or (None, None))[1]
    terminalreporter.section("mobilebench")
    for line in headline_lines(summary, summary_path=str(config.stash[STATE].summary_path), page_path=str(page or "")):
        terminalreporter.write_line(line)
    for error in summary.get("report_errors", []):
        terminalreporter.write_line(f"report error: {error}")
