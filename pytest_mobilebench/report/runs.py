"""Runs that share one machine and one reports folder (issue 7, item 6).

* Each run writes under ``<reports>/<run_id>/`` (summary, incremental results, evidence); nothing of
  another run is ever deleted. ``<reports>/latest`` is a symbolic link to the last run's folder, replaced
  atomically.
* :func:`not_run_and_unmatched` keeps an interrupted run honest: selected items without a result are
  ``not_run``; only predictions for ids that were never selected are ``unmatched``.
* :func:`write_summary` turns a full disk into one clear sentence and leaves the previous summary intact
  (the write goes through a temporary file that is dropped on failure).
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_mobilebench.files import atomic_write_json

if TYPE_CHECKING:
    from pytest_mobilebench.runtime.provider import ProviderRegistry

__all__ = [
    "REPORTS_DISK_FULL_EXIT",
    "reports_space_problem",
    "LATEST",
    "ReportsDiskFull",
    "finish_run",
    "instance_of_nodeid",
    "is_disk_full",
    "not_run_and_unmatched",
    "point_latest",
    "run_files",
    "selected_instances",
    "start_run",
    "write_summary",
]

#: name of the link to the last run's folder
LATEST = "latest"


class ReportsDiskFull(OSError):
    """The reports folder's file system is full; the message says what was not written and what is intact."""


def run_files(reports_dir: Path, run_id: str, summary: Path | None = None) -> tuple[Path, Path]:
    """``(summary.json, results.jsonl)`` of a run: both under ``<reports>/<run_id>/`` unless ``summary`` is
    given explicitly (the incremental file always stays in the run's own folder)."""
    folder = reports_dir / run_id
    return (summary or folder / "summary.json"), folder / "results.jsonl"


def point_latest(reports_dir: Path, run_id: str) -> Path:
    """Make ``<reports>/latest`` a relative symbolic link to ``<run_id>`` (atomic replace); return it.

    A real folder already named ``latest`` (not a link) is left alone and ``OSError`` is raised.
    """
    link = reports_dir / LATEST
    if link.exists() and not link.is_symlink():
        raise OSError(errno.EEXIST, f"{link} exists and is not a link; not replacing it")
    reports_dir.mkdir(parents=True, exist_ok=True)
    tmp = reports_dir / f".{LATEST}.{os.urandom(8).hex()}"
    os.symlink(run_id, tmp)
    os.replace(tmp, link)
    return link


_PARAM = re.compile(r"\[[^\]]*\]$")


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is ENOSPC / EDQUOT (a full disk or quota), anywhere in its cause chain."""
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def start_run(providers: ProviderRegistry, options: Mapping[str, Any], run_id: str) -> list[str]:
    """Controller, once per evaluating run: every registered runtime provider sweeps what dead runs left
    (:meth:`~pytest_mobilebench.runtime.provider.ProviderRegistry.sweep_all`; also when every result will come
    from the cache and no runtime is ever made). Never stops a run: returns what failed, in words."""
    return providers.sweep_all(options, run_id)


def finish_run(reports_dir: Path, run_id: str) -> list[str]:
    """Controller, after the run's summary is written: point ``latest`` at the run. Returns what could
    not be done, in words (a run that evaluated nothing leaves ``latest`` where it was)."""
    try:
        point_latest(reports_dir, run_id)
    except OSError as exc:
        return [f"{reports_dir / LATEST} not updated: {exc}"]
    return []


#: suffixes of the files whose items are benchmark instances (manifests, datasets)
_INSTANCE_FILES = (".yaml", ".yml", ".json", ".jsonl")


def selected_instances(nodeids: Iterable[str]) -> set[str]:
    """Instance ids of the benchmark items among collected node ids (other tests are ignored)."""
    return {instance_of_nodeid(n) for n in nodeids if "::" in n and n.split("::", 1)[0].endswith(_INSTANCE_FILES)}


def instance_of_nodeid(nodeid: str) -> str:
    """``"cases/x.yaml::owner__repo-1[model]"`` -> ``"owner__repo-1"``."""
    return _PARAM.sub("", nodeid.rsplit("::", 1)[-1])


def not_run_and_unmatched(
    selected: Iterable[str], evaluated: Iterable[str], predicted: Iterable[str]
) -> tuple[list[str], list[str]]:
    """``(selected ids without a result, predicted ids never selected)``, both sorted and distinct.

    An interrupted run leaves selected items without a result: they are ``not_run`` (resume by running
    again), never "predictions matching no selected instance".
    """
    chosen = set(selected)
    done = set(evaluated)
    return sorted(chosen - done), sorted(set(predicted) - chosen - done)


def write_summary(path: Path, summary: Mapping[str, Any]) -> None:
    """:func:`atomic_write_json` of the summary; on ENOSPC / EDQUOT raise :class:`ReportsDiskFull`.

    The previous summary at ``path`` is untouched then: the new one was being written to a temporary
    file beside it, which is removed.
    """
    try:
        atomic_write_json(path, summary)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise ReportsDiskFull(
            exc.errno,
            f"the reports disk is full: {path} was not written (the previous summary there is intact); "
            "free space and re-run: finished results are cached and are not evaluated again",
        ) from exc


#: the exit status of a run whose reports disk was full (sysexits' EX_TEMPFAIL: free space and try again)
REPORTS_DISK_FULL_EXIT = 75

#: bytes a run must be able to write before it starts (the workers' selection, the first evidence)
_START_BYTES = 64 << 10


def reports_space_problem(reports_dir: Path, *, need_bytes: int = _START_BYTES) -> str | None:
    """None when ``need_bytes`` can be written and synced under ``reports_dir``, else why not (ENOSPC /
    EDQUOT: "the reports disk is full ..."). The probe file is removed again; other errors are raised.

    Raises:
        OSError: the folder cannot be created or written for another reason (permissions ...).
    """
    probe = reports_dir / f".space-probe-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        reports_dir.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as fh:
            fh.write(b"\0" * need_bytes)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        return (
            f"the reports disk is full: {reports_dir} cannot take {need_bytes // 1024} KiB; nothing was run. "
            "Free space (or name another --mb-reports-dir) and re-run: finished results are cached"
        )
    finally:
        probe.unlink(missing_ok=True)
    return None
