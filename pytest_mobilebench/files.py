"""Writing results so that nothing finished is ever lost: atomic replaces and append-only logs (ground floor:
the standard library only, so the runtime, the devices, the suites and the reports all write through it)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "ENCODING_ERRORS",
    "append_jsonl",
    "atomic_write_json",
    "atomic_write_text",
    "cache_root",
    "read_json",
    "write_under",
]

#: how evidence text is encoded: UTF-8 cannot hold a lone surrogate, which untrusted JSON (a jest report, the
#: runner's channel) decodes to; ``backslashreplace`` writes it as ``\\ud800``, inside a JSON string literal
#: the very escape ``json.loads`` reads back to the same string (lossless), in a log a readable escape
ENCODING_ERRORS = "backslashreplace"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    A reader sees the old content or the new one, never a half-written file; a crash leaves the old one.
    A lone surrogate (a test title the candidate's code registered as ``'\\ud800'``: JSON reports decode to
    such strings) is written as its ``\\udXXX`` escape (:data:`ENCODING_ERRORS`), never an error that would
    turn the candidate's run into a harness error.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=ENCODING_ERRORS) as fh:
            os.fchmod(fh.fileno(), 0o644)  # an output file, readable by a CI artifact server (mkstemp gives 0600)
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_json(path: Path, data: Any) -> None:
    """:func:`atomic_write_text` of ``data`` as indented, key-sorted JSON."""
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def append_jsonl(path: Path, data: Any) -> None:
    """Append one JSON line and flush it to disk (the run's incremental result log; lone surrogates escaped
    as in :func:`atomic_write_text`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", errors=ENCODING_ERRORS) as fh:
        fh.write(json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_json(path: Path) -> Any | None:
    """Parse a JSON file; None when it is absent or unreadable (a cache miss, never an error)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_under(folder: Path, name: str, data: bytes) -> Path:
    """Write ``data`` to ``folder / name`` only when that path stays inside ``folder``.

    ``name`` comes from untrusted places (a container's result files): an absolute name, a ``..``
    component or a symbolic link already in ``folder`` that leads out of it raises ``ValueError``
    naming the file; nothing is written then. Returns the written path.
    """
    root = folder.resolve()
    target = (folder / name).resolve()
    if Path(name).is_absolute() or ".." in Path(name).parts or not target.is_relative_to(root) or target == root:
        raise ValueError(f"refusing to write {name!r}: it leaves {folder}")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        raise ValueError(f"refusing to write {name!r}: {target} is a symbolic link")
    target.write_bytes(data)
    return target


def cache_root() -> Path:
    """``$PYTEST_MOBILEBENCH_CACHE`` when set, else ``$XDG_CACHE_HOME/pytest-mobilebench``, else
    ``~/.cache/pytest-mobilebench``. Created on first use."""
    explicit = os.environ.get("PYTEST_MOBILEBENCH_CACHE")
    if explicit:
        root = Path(explicit)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "pytest-mobilebench"
    root.mkdir(parents=True, exist_ok=True)
    return root
