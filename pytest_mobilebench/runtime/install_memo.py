"""What a failed install means, and a dependency this machine cannot fetch remembered per lockfile for the run
(issue 30, item 3).

:func:`failed_install` turns a failed install's log (:func:`pytest_mobilebench.runtime.install_log.classify`)
into: :class:`~pytest_mobilebench.runtime.base.EnvironmentUnavailable` (a package or host this machine cannot
fetch; written to the run's memo first), ``InfraError("install_failed")`` (the registry's trouble of the
moment: retried like any infra), or the finding itself (a lifecycle script that needs more than the manifests:
the caller builds the classic way).

The memo is one small JSON file per (run id, lockfile) under the builder's lock folder:
``<lock_dir>/unavailable/<run id>.<lockfile key 16>.json`` with ``{"cause", "subject", "lines", "message"}``;
the lockfile key is :func:`lockfile_key`. Every worker of the run (xdist) sees it, so the instances sharing the
lockfile are ``environment_unavailable`` at once (:func:`remembered`) and none installs it again; the next run
(another run id) tries again. The shared dependency layer writes it when its install fails so
(:func:`failed_install`); an instance image's own full install (the classic build) reads it before it runs and
writes it when it fails so (:func:`guarded`, called by
:meth:`~pytest_mobilebench.runtime.images.ImageBuilder.ensure_instance`): after the shared layer failed for want
of a dependency, no instance of that lockfile runs a full install again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Final, TypeVar

from pytest_mobilebench.runtime.base import EnvironmentUnavailable, InfraError
from pytest_mobilebench.runtime.naming import content_hash
from pytest_mobilebench.runtime.install_log import InstallFailure, classify
from pytest_mobilebench.states import InfraKind

__all__ = [
    "LOCKFILES", "failed_install", "instance_install_failed", "lockfile_key", "message_of", "guarded",
    "remember", "remembered", "unavailable_memo",
]  # fmt: skip

T = TypeVar("T")

LOCKFILES: Final[frozenset[str]] = frozenset(
    {"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml"}
)


def lockfile_key(files: Mapping[str, bytes]) -> str:
    """sha256 hex over the lockfiles among ``files`` (``{posix path: bytes}``, any depth), or over the
    ``package.json`` files when there is no lockfile (what the install resolves then)."""
    chosen = [p for p in files if PurePosixPath(p).name in LOCKFILES]
    chosen = chosen or [p for p in files if PurePosixPath(p).name == "package.json"]
    return content_hash("lockfile", *(part for p in sorted(chosen) for part in (p, files[p])))


def unavailable_memo(lock_dir: Path, run_id: str, files: Mapping[str, bytes]) -> Path:
    """The memo file of ``files``' lockfile for run ``run_id`` (see module)."""
    return lock_dir / "unavailable" / f"{re.sub(r'[^A-Za-z0-9._-]', '_', run_id)}.{lockfile_key(files)[:16]}.json"


def _raise(record: Mapping[str, object], log: str = "") -> None:
    lines = [str(line) for line in record.get("lines") or []]  # type: ignore[union-attr]
    raise EnvironmentUnavailable(str(record["cause"]), str(record["subject"]), lines, str(record["message"]), log=log)


def remembered(memo: Path, progress: Callable[[str], None] | None = None) -> None:
    """Raise this run's :class:`EnvironmentUnavailable` for the lockfile of ``memo`` when there is one.

    Raises:
        EnvironmentUnavailable: the memo exists (its message says it was remembered).
    """
    try:
        record = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    record["message"] = f"{record['message']} (remembered for this run: the install of this lockfile failed so)"
    if progress is not None:
        progress(f"{record['subject']}: not installing again, {record['message']}")
    _raise(record)


def _write(memo: Path, record: Mapping[str, object]) -> None:
    memo.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=memo.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(record, out)
    os.replace(tmp, memo)


def remember(memo: Path, exc: EnvironmentUnavailable) -> None:
    """Record ``exc`` (an install of ``memo``'s lockfile that this machine cannot do) for the rest of the run: an
    instance image's own full install that failed so (the classic build, after the shared layer gave way to
    it) is not run again for another instance of that lockfile (:func:`remembered`). A full disk is ignored."""
    record = {"cause": exc.cause, "subject": exc.subject, "lines": list(exc.lines), "message": exc.message}
    with contextlib.suppress(OSError):
        _write(memo, record)


def guarded(
    memo: Path | None, exists: bool, ensure: Callable[[], T], progress: Callable[[str], None] | None = None
) -> T:
    """``ensure()`` of an image whose build runs the install itself (the classic instance build), under the
    lockfile's ``memo`` (None: no memo, ``ensure()`` as it is): unless the image ``exists``, a memo of this run
    refuses at once (:func:`remembered`: no second full install); an :class:`EnvironmentUnavailable` it raises
    is recorded (:func:`remember`) for the next instance of the lockfile.

    Raises:
        EnvironmentUnavailable: remembered, or the build's own.
    """
    if memo is None:
        return ensure()
    if not exists:
        remembered(memo, progress)
    try:
        return ensure()
    except EnvironmentUnavailable as exc:
        remember(memo, exc)
        raise


def message_of(failure: InstallFailure, what: str) -> str:
    """``"<cause>: <subject> (<what>)"`` then the log's lines, indented (a verdict's detail: the cause first, so a
    one-line view such as ``mine``'s table shows what is missing before the image tag and the log's path)."""
    shown = "".join(f"\n    {line}" for line in failure.lines)
    return f"{failure.describe()} ({what}){shown}"


def failed_install(log: str, what: str, memo: Path | None) -> InstallFailure:
    """Classify the failed install ``log``; ``what`` names it (``installing dependencies for <tag> ...``).

    Returns:
        The finding, when the failure is neither unavailable nor transient.

    Raises:
        EnvironmentUnavailable: a package or host this machine cannot fetch (recorded in ``memo`` first).
        InfraError: ``install_failed`` for a transient registry failure (5xx, a timeout, a reset).
    """
    failure = classify(log)
    message = message_of(failure, what)
    if failure.unavailable:
        record = {"cause": failure.cause, "subject": failure.subject, "lines": list(failure.lines), "message": message}
        if memo is not None:
            with contextlib.suppress(OSError):  # a full disk must not hide the finding itself
                _write(memo, record)
        _raise(record, log)
    if failure.cause == "registry_transient":
        raise InfraError(InfraKind.INSTALL_FAILED, message, log=log)
    return failure


def instance_install_failed(text: str, tag: str, log_path: Path, error: str) -> None:
    """Raise for the instance image build (the classic way) whose log is ``text``: the cause and the failing lines
    of the install's own output after the build's ``error`` (first 200 characters; the RUN line it names is not
    the cause).

    Raises:
        EnvironmentUnavailable: a dependency this machine cannot fetch.
        InfraError: ``install_failed`` (transient registry trouble), else ``image_build_failed`` with the lines.
    """
    output = text.split("\n# ---\n", 1)[-1]
    what = f"building {tag} failed ({error.strip()[:200]}; log: {log_path})"
    raise InfraError(InfraKind.IMAGE_BUILD_FAILED, message_of(failed_install(output, what, None), what), log=text)
