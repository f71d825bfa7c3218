"""Live progress on the controller: a status line under ``-n``, and ``finished`` lines in ``progress.log``.

What a user sees while a run goes on:

* on a terminal (TTY) under ``-n``, one status line redrawn in place every second::

      mobilebench 3/10 | passed 2 | infra 0 | cached 1 | gw0: counter-2: running the tests | gw1: counter-3 | 1m12s |
      ETA 2m48s

  and one permanent ``finished <id>: <reason> (<s>)`` line per item above it;
* without a TTY (CI logs, pipes), the same facts as one plain line per finished item;
* under ``-q`` nothing (the final headlines still print);
* always, for every suite, ``finished <id>: <reason> (<s>)`` in ``reports/<run>/progress.log`` beside the
  workers' own progress lines (``HH:MM:SS [gwN] message``), which the status line reads to say what each
  worker is building or running: the step only (:func:`step_of`); a message's details (``; log: <path>``,
  ``; command: <command>``, ``; path: <folder>``) stay in the log.

ETA = remaining items x elapsed / finished items (the run's own throughput, so parallelism and cache hits are
in it); unknown before the first item finishes. Item ids, reasons and worker messages pass through
:func:`.terminal.printable`: a candidate's output cannot move the cursor or overprint the status.
"""

from __future__ import annotations

import dataclasses
import datetime
import errno
import os
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.report.headline import is_infra
from pytest_mobilebench.report.terminal import printable

__all__ = [
    "Board",
    "LiveProgress",
    "Running",
    "append_worker_line",
    "finished_line",
    "fmt_seconds",
    "item_seconds",
    "status_line",
    "step_of",
]

_LOG_LINE = re.compile(r"^\d\d:\d\d:\d\d \[(?P<worker>[^\]]+)\] (?P<message>.*)$")


def fmt_seconds(seconds: float) -> str:
    """``"42s"``, ``"3m05s"``, ``"1h02m"``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def item_seconds(result: Mapping[str, Any], fallback: float) -> float:
    """The seconds an evaluation took when it ran: the plugin's ``elapsed_s``, else the suite's own
    ``duration_s`` / ``eval_seconds``, else ``fallback`` (pytest's call duration)."""
    props = result.get("properties") or {}
    for value in (
        result.get("elapsed_s"),
        result.get("duration_s"),
        props.get("duration_s"),
        props.get("eval_seconds"),
    ):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return float(fallback)


def finished_line(name: str, reason: str, seconds: float, *, cached_from: float | None = None) -> str:
    """``finished <id>: <reason> (<s>)``, with ``cached, originally <s>`` for a cache hit."""
    note = f"{seconds:.1f} s" if cached_from is None else f"cached, originally {cached_from:.1f} s"
    return f"finished {printable(name, 200)}: {printable(reason, 60)} ({note})"


#: where a progress message's details begin (a log file, the test command, a folder): kept in progress.log,
#: left off the status line, which shows the step (``counter-2: running the tests``)
_DETAIL = re.compile(r"; (?:log|command|path): .*$", re.S)


def step_of(message: str) -> str:
    """The step a worker's progress message names, without its details (``"...; log: /reports/..."``,
    ``"...; command: node_modules/.bin/jest ..."``): what the status line shows of it."""
    return _DETAIL.sub("", message)


def _instance_of(name: str) -> str:
    """``acme-1[model-a]`` -> ``acme-1``: the id the suites' progress messages start with."""
    return name.split("[", 1)[0] if name.endswith("]") else name


@dataclasses.dataclass
class Running:
    """What each worker is running now: ``worker -> (item name, latest activity)``.

    Only running items are kept, at most one per worker (a worker runs one item at a time): :meth:`start` at a
    passed setup, :meth:`finish` at the item's result (the worker's entry is dropped), :meth:`note` for each
    progress message. A message that starts with the item's own id (``counter-2: npm ci``) is shown without
    it, so the id appears once; a message naming an item that finished (and that the worker is not running
    again) is dropped, so a finished item never comes back. A worker's message before any item started on it
    (session fixtures building images) is shown without an item. The log and the reports travel apart, so an
    item's first message can be read before its setup report arrives: it is kept (``early``) for that item's
    :meth:`start`.
    """

    items: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    finished: set[str] = dataclasses.field(default_factory=set)
    early: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)

    def start(self, worker: str, name: str) -> None:
        early = self.early.pop(worker, None)
        self.items[worker] = (name, early[1] if early and early[0] == _instance_of(name) else "")

    def finish(self, worker: str, name: str) -> None:
        self.finished.add(_instance_of(name))
        if self.items.get(worker, ("", ""))[0] in (name, ""):
            self.items.pop(worker, None)

    def note(self, worker: str, message: str) -> None:
        message = step_of(message)  # the step, never a path or command (those stay in progress.log)
        name = self.items.get(worker, ("", ""))[0]
        own = _instance_of(name) if name else ""
        head = message.split(":", 1)[0].split(" ", 1)[0]
        if own and message.startswith(own + ": "):
            message = message[len(own) + 2 :]
        elif head != own and head in self.finished:
            return
        elif head and message.startswith(head + ": "):  # another item's line, read before its setup report came
            self.early[worker] = (head, message[len(head) + 2 :])
        self.items[worker] = (name, message)

    def shown(self) -> list[str]:
        """``["gw0: counter-2: npm ci", "gw1: counter-3"]``, sorted by worker."""
        return [
            ": ".join(part for part in (w, printable(n, 80), printable(a, 60)) if part)
            for w, (n, a) in sorted(self.items.items())
        ]


@dataclasses.dataclass
class Board:
    """The counts behind the status line (controller only)."""

    started: float
    total: int | None = None
    done: int = 0
    passed: int = 0
    infra: int = 0
    cached: int = 0
    running: Running = dataclasses.field(default_factory=Running)

    def eta(self, now: float) -> float | None:
        """Seconds left by the run's throughput so far; None before the first finished item."""
        if not self.done or self.total is None:
            return None
        return max(0, self.total - self.done) * (now - self.started) / self.done


def status_line(board: Board, now: float, width: int = 120) -> str:
    """The one-line status, cut to ``width`` characters."""
    total = "?" if board.total is None else str(board.total)
    parts = [
        f"mobilebench {board.done}/{total}",
        f"passed {board.passed}",
        f"infra {board.infra}",
        f"cached {board.cached}",
    ]
    parts += board.running.shown()
    eta = board.eta(now)
    parts += [fmt_seconds(now - board.started), "ETA " + ("?" if eta is None else fmt_seconds(eta))]
    line = " | ".join(parts)
    return line if len(line) <= width else line[: max(0, width - 3)] + "..."


def _worker_of(report: Any) -> str:
    node = getattr(report, "node", None)
    gateway = getattr(node, "gateway", None)
    return str(getattr(gateway, "id", None) or "main")


def _stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S")


def append_worker_line(log_path: Path, message: str) -> None:
    """Append ``HH:MM:SS [<worker>] <message>`` (worker: ``$PYTEST_XDIST_WORKER`` or ``main``) to
    ``progress.log``; :class:`LiveProgress` reads these lines to say what each worker is doing."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", encoding="utf-8") as fh:
        fh.write(f"{_stamp()} [{worker}] {message}\n")


class LiveProgress:
    """Controller plugin: counts finished items, writes ``finished`` lines and draws the status line.

    Args:
        config: the controller's config.
        log_path: ``reports/<run>/progress.log``.
        live: draw the status line (the plugin passes True under ``-n``).
    """

    def __init__(self, config: pytest.Config, log_path: Path, *, live: bool) -> None:
        self.config = config
        self.log_path = log_path
        self.board = Board(started=time.monotonic())
        self._offset = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False
        self._want_live = live
        self._tr: Any = None
        self._live = self._tty = False

    # ---------------------------------------------------------------------------- pytest hooks

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Pick the output mode once the terminal reporter exists: live (TTY), plain lines, or quiet (-q)."""
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        self._tr = tr if (tr is not None and self.config.get_verbosity() >= 0) else None
        self._live = self._want_live and self._tr is not None
        self._tty = bool(self._live and getattr(self._tr, "isatty", False))

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.board.total is None and session.items:
            self.board.total = len(session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.board.total = len(ids)

    @pytest.hookimpl
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if self._tty and self._thread is None:
            self._thread = threading.Thread(target=self._tick, name="mobilebench-progress", daemon=True)
            self._thread.start()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self._tty:
            self._erase()

    @pytest.hookimpl(trylast=True, specname="pytest_runtest_logreport")
    def pytest_runtest_logreport_last(self, report: pytest.TestReport) -> None:
        worker = _worker_of(report)
        with self._lock:  # the worker's lines so far belong to what it ran until this report
            self._read_workers()
            if report.when == "setup" and report.passed:
                self.board.running.start(worker, report.nodeid.rsplit("::", 1)[-1])
            elif report.when == "call" or (report.when == "setup" and not report.passed):
                self.board.running.finish(worker, report.nodeid.rsplit("::", 1)[-1])
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self._finished(report, worker)
        if self._tty:
            self._draw()

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._tty:
            self._erase()

    # ---------------------------------------------------------------------------------- parts

    def _finished(self, report: pytest.TestReport, worker: str) -> None:
        result = getattr(report, "mobilebench_result", None) or {}
        name = report.nodeid.rsplit("::", 1)[-1]
        if getattr(report, "mobilebench_manifest_error", None) is not None:
            reason = "invalid_instance"
        else:
            reason = str(result.get("reason") or report.outcome)
        cached = bool(result.get("cached"))
        seconds = item_seconds(result, report.duration) if not cached else report.duration
        line = finished_line(name, reason, seconds, cached_from=item_seconds(result, 0.0) if cached else None)
        b = self.board
        b.done += 1
        b.passed += int(result.get("passed") is True and not is_infra(result))
        b.infra += int(bool(result) and is_infra(result))
        b.cached += int(cached)
        self._append_log(f"{_stamp()} [{worker}] {line}\n")
        if self._tr is None or not self._live:
            return
        if self._tty:
            self._tr.write("\r\x1b[K" + line + "\n", flush=True)  # over pytest's progress letter
        else:
            if getattr(getattr(self._tr, "_tw", None), "width_of_current_line", 0):
                self._tr.write("\n")  # after pytest's progress letters
            self._tr.write_line(
                f"[{b.done}/{'?' if b.total is None else b.total}] {line} | "
                + status_line(b, time.monotonic(), 10_000).split(" | ", 1)[1]
            )

    def _append_log(self, text: str) -> None:
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:  # a full reports disk costs the log line, never the run (issue 7)
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise

    def _read_workers(self) -> None:
        """Take each worker's latest progress message from the new part of ``progress.log``."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read(1 << 20)
        except OSError:
            return
        cut = chunk.rfind(b"\n") + 1
        self._offset += cut
        for raw in chunk[:cut].decode("utf-8", "replace").splitlines():
            match = _LOG_LINE.match(raw)
            if match and not match["message"].startswith("finished ") and match["worker"] != "main":
                self.board.running.note(match["worker"], match["message"])  # main runs no item under -n

    def _width(self) -> int:
        tw = getattr(self._tr, "_tw", None)
        return max(20, int(getattr(tw, "fullwidth", 80)) - 1)

    def _draw(self) -> None:
        with self._lock:
            self._read_workers()
            self._tr.write("\r" + status_line(self.board, time.monotonic(), self._width()) + "\x1b[K", flush=True)
            self._drawn = True

    def _erase(self) -> None:
        with self._lock:
            if self._drawn:
                self._tr.write("\r\x1b[K", flush=True)
                self._drawn = False

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self._draw()
