"""Validation of mined candidates through the harness's own validation mode, in a pytest subprocess.

The candidates' manifest is run as ``python -m pytest MANIFEST --predictions=gold --mb-validate
--mb-validate-runs=N -n W`` (the three configurations base / test / fix of SPEC section 1, repeated N
times, flaky tests dropped), with the reports and the result cache under ``<out>/reports``: a second
``mine`` of the same candidates is answered from the cache, and an infrastructure result (never cached)
is run again. The verdicts are read back from the run's summary and each instance's evidence, never from
the subprocess's output.

An instance is kept iff its validation says valid (SPEC section 1: at least one F2P or N2P, no P2F, base
and fix built and executed tests; flaky tests are in no gold list). With ``audit``, the kept instances go
through ``--mb-audit`` once more (gold resolves in every run, gold ids reported, test adequacy per hunk).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench.mining._harness import read_json
from pytest_mobilebench.states import Reason

__all__ = ["ValidationInterrupted", "Verdict", "read_verdicts", "run_pytest"]


@final
@dataclasses.dataclass(frozen=True)
class Verdict:
    """What the validation run found for one instance.

    Attributes:
        status: ``valid``, ``invalid``, ``flaky`` (invalid, with flaky tests dropped), ``infra_error``,
            ``environment_unavailable`` (a dependency this machine cannot fetch: ``detail`` names it),
            ``gold_refused`` (invalid: the live grade's policy refuses the gold patch, so no grade of gold could
            resolve it: ``detail`` and ``problems`` name the findings) or ``not_run`` (absent from the summary).
        gold: the proposed ``FAIL_TO_PASS`` / ``NONE_TO_PASS`` / ``PASS_TO_PASS`` lists.
        states: configuration (``base``, ``test``, ``fix``) -> test id -> state, as validated.
        flaky: tests dropped as flaky. problems: why invalid. cached: answered from the result cache.
        test_s: seconds the test commands ran; setup_s: the rest of the item's time (workspace, image,
            dependency installation).
    """

    status: str
    gold: Mapping[str, Sequence[str]]
    states: Mapping[str, Mapping[str, str]]
    flaky: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    cached: bool = False
    test_s: float = 0.0
    setup_s: float = 0.0
    detail: str = ""

    @property
    def kept(self) -> bool:
        """SPEC section 1's rule, as the validation mode computed it."""
        return self.status == "valid"


#: seconds an interrupted validation run gets to end as pytest does (its summary written, its containers
#: removed) before it is killed; a second Ctrl-C kills it at once
INTERRUPT_GRACE_S = 300.0


class ValidationInterrupted(KeyboardInterrupt):
    """Ctrl-C reached ``mine`` while a validation run ran; the run was interrupted in turn and has ended.

    Attributes:
        status: the run's exit status (2, pytest's "interrupted", when it ended cleanly).
        summary: where the run wrote its summary (the items that finished; absent when none had started).
    """

    def __init__(self, status: int, summary: Path) -> None:
        super().__init__(f"validation run interrupted (exit {status})")
        self.status = status
        self.summary = summary


def _interrupt(proc: subprocess.Popen[bytes]) -> int:
    """Interrupt the run as a terminal's Ctrl-C does (SIGINT to its whole process group: pytest, its xdist
    workers and their tools) and wait for it to end on its own; a second Ctrl-C, or the grace period passing,
    kills the group. Returns the run's exit status."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.wait(timeout=INTERRUPT_GRACE_S)
    except (KeyboardInterrupt, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def run_pytest(manifest: Path, reports: Path, run_id: str, args: Sequence[str], log: Path) -> tuple[int, Path]:
    """Run the harness on ``manifest`` with ``args``; return ``(exit status, summary path)``.

    The output goes to ``log``; ``reports`` holds the evidence and the result cache. Paths are made
    absolute: the run's working folder is the manifest's. The run is a process group of its own, so Ctrl-C
    reaches it once, from here: on ``KeyboardInterrupt`` it is interrupted as pytest at a terminal would be,
    and given time to write its summary (:func:`_interrupt`).

    Raises:
        ValidationInterrupted: Ctrl-C (SIGINT) reached this process; the run has ended, its summary written.
    """
    manifest, reports = manifest.resolve(), reports.resolve()
    summary = reports / run_id / "summary.json"
    command = [
        sys.executable, "-m", "pytest", str(manifest), "--predictions=gold", f"--mb-reports-dir={reports}",
        f"--mb-summary={summary}", f"--mb-run-id={run_id}", "-p", "no:cacheprovider", f"--rootdir={manifest.parent}",
        "-q", *args,
    ]  # fmt: skip
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=manifest.parent, start_new_session=True
        )
        with _passing_on(proc, (signal.SIGTERM, signal.SIGHUP)):
            try:
                status = proc.wait()
            except KeyboardInterrupt:
                raise ValidationInterrupted(_interrupt(proc), summary) from None
    return status, summary


@contextlib.contextmanager
def _passing_on(proc: subprocess.Popen[bytes], signals: Sequence[signal.Signals]) -> Iterator[None]:
    """While the run is waited for, a SIGTERM or SIGHUP that ends ``mine`` (a CI timeout, a closed terminal)
    ends the run's process group too: it is a session of its own, which no terminal signal reaches. Outside
    the main thread (no handler can be set there) nothing changes."""

    def pass_on(signum: int, _frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # then end as the signal would have ended this process

    try:
        previous = {sig: signal.signal(sig, pass_on) for sig in signals}
    except ValueError:
        previous = {}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _seconds(evidence: str | None, total: float) -> tuple[float, float]:
    """``(test seconds, setup seconds)`` of one item from its ``run*.json`` evidence files."""
    if not evidence or not Path(evidence).is_dir():
        return 0.0, round(total, 3)
    tests = 0.0
    for path in Path(evidence).glob("run*.json"):
        data = read_json(path)
        if isinstance(data, Mapping) and isinstance(data.get("duration_s"), (int, float)):
            tests += float(data["duration_s"])
    return round(tests, 3), round(max(0.0, total - tests), 3)


def _verdict(entry: Mapping[str, Any]) -> Verdict:
    total = float(entry.get("elapsed_s") or entry.get("duration_s") or 0.0)
    test_s, setup_s = _seconds(entry.get("evidence_dir"), total)
    common = {
        "cached": bool(entry.get("cached")),
        "test_s": test_s,
        "setup_s": setup_s,
        "detail": str(entry.get("detail") or ""),
    }
    report = entry.get("validation")
    if entry.get("reason") == Reason.ENVIRONMENT_UNAVAILABLE.value:  # a dependency this machine cannot fetch
        return Verdict("environment_unavailable", {}, {}, **common)
    if entry.get("retryable") or not isinstance(report, Mapping):
        return Verdict("infra_error" if entry.get("retryable") else "invalid", {}, {}, **common)
    flaky = tuple(report.get("flaky") or ())
    status = "valid" if report.get("valid") else ("flaky" if flaky else "invalid")
    if report.get("policy_violations"):
        status = "gold_refused"
    gold = {k: list(report.get(k) or []) for k in ("FAIL_TO_PASS", "NONE_TO_PASS", "PASS_TO_PASS")}
    states = {k: dict(v) for k, v in (report.get("states") or {}).items()}
    return Verdict(status, gold, states, flaky, tuple(report.get("problems") or ()), **common)


def read_verdicts(summary_path: Path, instance_ids: Sequence[str]) -> dict[str, Verdict]:
    """Each instance's :class:`Verdict` from a validation run's summary (``not_run`` when absent)."""
    summary = read_json(summary_path)
    instances = summary.get("instances", {}) if isinstance(summary, Mapping) else {}
    out = {}
    for iid in instance_ids:
        entry = instances.get(iid)
        out[iid] = _verdict(entry) if isinstance(entry, Mapping) else Verdict("not_run", {}, {})
    return out


def read_audit(summary_path: Path) -> dict[str, Any]:
    """The audit table of an ``--mb-audit`` run's summary (``{}`` when absent)."""
    summary = read_json(summary_path)
    if not isinstance(summary, Mapping):
        return {}
    table = summary.get("suite_tables", {}).get("issue_resolution", {}).get("audit")
    return json.loads(json.dumps(table)) if isinstance(table, Mapping) else {}


__all__ += ["read_audit"]
