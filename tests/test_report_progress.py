"""The live status line shows only running items, each once, and drops an item the moment it finishes."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401 - the in-process run draws the run page; pytester drops modules it imports
import pytest

from pytest_mobilebench.report.progress import Board, LiveProgress, Running, append_worker_line, status_line


def test_running_items_show_once_and_leave_when_finished() -> None:
    running = Running()
    running.start("gw0", "counter-2")
    running.note("gw0", "counter-2: npm ci")
    running.start("gw1", "acme-1[model-b]")
    running.note("gw1", "acme-1: preparing workspace (docker)")
    assert running.shown() == ["gw0: counter-2: npm ci", "gw1: acme-1[model-b]: preparing workspace (docker)"]
    running.finish("gw0", "counter-2")
    assert running.shown() == ["gw1: acme-1[model-b]: preparing workspace (docker)"]
    running.note("gw0", "counter-2: removing container")  # a late line of the finished item
    assert running.shown() == ["gw1: acme-1[model-b]: preparing workspace (docker)"]
    running.note("gw0", "building mb-env:abc (env layer)")  # the next item's setup, no item yet
    assert running.shown()[0] == "gw0: building mb-env:abc (env layer)"
    running.start("gw0", "counter-2[model-b]")  # the same instance for another model runs again
    running.note("gw0", "counter-2: npm test")
    assert running.shown()[0] == "gw0: counter-2[model-b]: npm test"


def test_a_message_read_before_its_items_setup_report_is_kept_for_that_item() -> None:
    """Under ``-n`` the worker writes ``progress.log`` at once while its reports queue on the controller."""
    running = Running()
    running.start("gw1", "acme-1")
    running.note("gw1", "acme-2: preparing workspace")  # acme-1's result and acme-2's setup report still queued
    running.finish("gw1", "acme-1")
    running.start("gw1", "acme-2")
    assert running.shown() == ["gw1: acme-2: preparing workspace"]
    running.finish("gw1", "acme-2")
    running.note("gw1", "acme-3: npm ci")  # no item on the worker when read
    assert running.shown() == ["gw1: acme-3: npm ci"]
    running.start("gw1", "acme-3[model-b]")
    assert running.shown() == ["gw1: acme-3[model-b]: npm ci"]
    running.finish("gw1", "acme-3[model-b]")
    running.note("gw1", "acme-4: npm ci")
    running.start("gw1", "acme-5")  # a line for an item that did not start next is not carried over
    assert running.shown() == ["gw1: acme-5"]


def test_a_candidate_message_cannot_draw_on_the_status_line() -> None:
    board = Board(started=0.0, total=2)
    board.running.start("gw0", "a-1")
    board.running.note("gw0", "a-1: \x1b[2J\rfinished a-2: resolved\n")
    line = status_line(board, now=1.0, width=500)
    assert "\x1b" not in line and "\r" not in line and "\n" not in line


class _Tw:
    fullwidth = 400
    width_of_current_line = 0


class _Terminal:
    """What LiveProgress needs of pytest's terminal reporter; keeps what was written."""

    isatty = True

    def __init__(self) -> None:
        self._tw = _Tw()
        self.out: list[str] = []

    def write(self, text: str, **_: Any) -> None:
        self.out.append(text)

    def write_line(self, text: str) -> None:
        self.out.append(text + "\n")


def _report(worker: str, nodeid: str, when: str, outcome: str = "passed") -> Any:
    node = types.SimpleNamespace(gateway=types.SimpleNamespace(id=worker))
    return types.SimpleNamespace(
        node=node,
        nodeid=nodeid,
        when=when,
        outcome=outcome,
        passed=outcome == "passed",
        duration=0.1,
        mobilebench_result={"reason": "resolved", "passed": True},
    )


def _status(term: _Terminal) -> str:
    """The status line as last drawn."""
    drawn = [t for t in term.out if t.startswith("\r") and "mobilebench " in t]
    return drawn[-1]


def test_live_status_line_under_two_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "progress.log"
    term = _Terminal()
    live = LiveProgress(types.SimpleNamespace(), log, live=True)  # type: ignore[arg-type]
    live._tr, live._live, live._tty = term, True, True
    live.board.total = 3

    def worker_says(worker: str, message: str) -> None:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        append_worker_line(log, message)

    def report(worker: str, nodeid: str, when: str) -> str:
        live.pytest_runtest_logreport(_report(worker, nodeid, when))
        live.pytest_runtest_logreport_last(_report(worker, nodeid, when))
        return _status(term)

    report("gw0", "m.yaml::a-1", "setup")
    worker_says("gw0", "a-1: npm ci")
    line = report("gw1", "m.yaml::a-2", "setup")
    assert "gw0: a-1: npm ci | gw1: a-2 |" in line and line.count("a-1") == 1
    worker_says("gw0", "a-1: npx jest")
    worker_says("gw1", "a-2: npm ci")
    line = report("gw0", "m.yaml::a-1", "call")
    assert "a-1" not in line and "| gw1: a-2: npm ci |" in line and "mobilebench 1/3" in line
    assert any(t == "\r\x1b[Kfinished a-1: resolved (0.1 s)\n" for t in term.out)
    worker_says("gw0", "a-1: removing container")  # teardown, after the item's result
    line = report("gw0", "m.yaml::a-1", "teardown")
    assert "a-1" not in line and "gw0" not in line
    report("gw0", "m.yaml::a-3", "setup")
    report("gw1", "m.yaml::a-2", "call")
    line = report("gw0", "m.yaml::a-3", "call")
    assert not re.search(r"gw\d", line) and "mobilebench 3/3" in line


@pytest.mark.e2e
def test_plain_lines_under_xdist_list_only_the_items_still_running(pytester: pytest.Pytester) -> None:
    """A real ``-n 2`` run (no TTY): each ``finished`` line lists what still runs, never the item just finished."""
    pytester.makefile(
        ".yaml",
        app="suite: issue_resolution\nrepo: acme/app\nframework: android\ninstances:\n"
        + "".join(
            f"  - instance_id: acme__app-{i}\n    base_commit: abcdef1\n    test_patch: ''\n    patch: ''\n"
            "    FAIL_TO_PASS: ['t#a']\n"
            for i in range(1, 7)
        ),
    )
    pytester.makeconftest("""
import os, time
import pytest

FIRST = []

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    from pytest_mobilebench.report.progress import append_worker_line
    from pytest_mobilebench.state import STATE
    state = item.config.stash[STATE]
    log = state.reports_dir / state.run_id / "progress.log"
    append_worker_line(log, item.name + ": working")
    deadline = time.monotonic() + 60
    while not FIRST and time.monotonic() < deadline:  # both workers inside a call at once, however loaded
        text = log.read_text()
        if "[gw0] acme__app-" in text and "[gw1] acme__app-" in text:
            break
        time.sleep(0.05)
    FIRST.append(item.name)
    time.sleep(0.3)
    return (yield)
""")
    result = pytester.runpytest("-n", "2", "--predictions=empty", "--mb-run-id=p2", "-p", "no:cacheprovider")
    lines = [line for line in result.stdout.lines if "] finished acme__app-" in line]
    assert len(lines) == 6
    for line in lines:
        name = line.split("finished ", 1)[1].split(":", 1)[0]
        running = re.findall(r"gw\d: (acme__app-\d+)", line)
        assert name not in running and len(running) == len(set(running)) <= 1, line
        assert all(line.count(r) == 1 for r in running), line
    assert "working" in " ".join(lines)  # the workers' own messages reach the status, once per item


def test_the_status_shows_the_step_and_not_internal_paths() -> None:
    """Issue 33: the status line showed the harness's test command (its folders under /opt, the results folder)
    and the image build log's path; it shows the step, and progress.log keeps the details."""
    from pytest_mobilebench.report.progress import step_of

    running = Running()
    running.start("gw0", "counter-2")
    running.note(
        "gw0",
        "counter-2: running the tests; command: cd /testbed && node_modules/.bin/jest --ci "
        "--testRunner /opt/mobilebench-harness/runner.js --outputFile /tmp/mb-results-1/out.json",
    )
    running.note("gw1", "building mobilebench/env.acme (env layer); log: /home/u/reports/r1/build/env.acme.log")
    assert running.shown() == ["gw0: counter-2: running the tests", "gw1: building mobilebench/env.acme (env layer)"]
    assert (
        step_of("installing the Vite scaffold (once per machine); path: /root/.cache/x")
        == "installing the Vite scaffold (once per machine)"
    )
    assert step_of("counter-2: preparing workspace (docker)") == "counter-2: preparing workspace (docker)"
