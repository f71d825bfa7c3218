"""The one-way result channel: what comes back from a candidate's container, checked before use.

Pure functions (no docker, no I/O beyond the byte streams handed in), used by
:meth:`pytest_mobilebench.runtime.docker_workspace.DockerWorkspace.read_files` (issue 7, item 1):

* :func:`safe_relpath` - a member or listing name that stays inside its destination: not absolute,
  no ``..``, no empty or NUL name; anything else raises :class:`ChannelError`.
* :func:`glob_regex` - the ``glob.glob(recursive=True)`` pattern language (``**``, ``*``, ``?``, ``[...]``)
  as one anchored regular expression over POSIX paths, so names are matched on the host, not in the
  container.
* :func:`read_tar_files` - regular files of a tar stream (the daemon's ``get_archive``), every name
  through :func:`safe_relpath`, links / devices / directories rejected, each file and the total bounded;
  :func:`archived_file` - the one file of the daemon's archive of a file path.
"""

from __future__ import annotations

import dataclasses
import io
import posixpath
import re
import tarfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

__all__ = [
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "PRUNED",
    "ChannelError",
    "Rejected",
    "archived_file",
    "find_group",
    "glob_regex",
    "glob_root",
    "nested",
    "pruned_between",
    "read_tar_files",
    "safe_relpath",
    "shares_find",
    "split_listing",
]

#: one result file may not exceed this (bytes); a larger one is rejected, never truncated
MAX_FILE_BYTES: Final[int] = 64 << 20
#: all result files of one read together (bytes)
MAX_TOTAL_BYTES: Final[int] = 256 << 20
#: result files of one read
MAX_FILES: Final[int] = 20_000
#: folder names a listing never enters (a workspace's ``find`` prunes them)
PRUNED: Final[tuple[str, ...]] = ("node_modules", ".git")


class ChannelError(ValueError):
    """A name or archive from the container that the harness refuses (the message says which and why)."""


@dataclasses.dataclass(frozen=True)
class Rejected:
    """One refused archive member or listed name: ``name`` as received, ``why`` in words."""

    name: str
    why: str


def safe_relpath(name: str) -> str:
    """``name`` normalised to a relative POSIX path that cannot leave its destination folder.

    ``"./a/b.xml"`` -> ``"a/b.xml"``. Raises :class:`ChannelError` for an absolute name, any ``..``
    component (even one that would normalise away), an empty name, a NUL or a backslash.
    """
    if not name or "\x00" in name or "\\" in name:
        raise ChannelError(f"unsafe name {name!r}: empty, NUL or backslash")
    if name.startswith("/"):
        raise ChannelError(f"unsafe name {name!r}: absolute")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ChannelError(f"unsafe name {name!r}: '..' component")
    if not parts:
        raise ChannelError(f"unsafe name {name!r}: names no file")
    return "/".join(parts)


def nested(a: str, b: str) -> bool:
    """Whether folder ``a`` is ``b`` or one holds the other (absolute POSIX folders)."""
    return a == b or b.startswith(a.rstrip("/") + "/") or a.startswith(b.rstrip("/") + "/")


def pruned_between(outer: str, inner: str) -> bool:
    """Whether ``inner`` (a folder under ``outer``) lies in or under a folder named as in :data:`PRUNED`
    below ``outer``: a listing of ``outer`` never reaches it (nor holds a name under it)."""
    rest = inner[len(outer.rstrip("/")) + 1 :]
    return any(part in PRUNED for part in rest.split("/"))


def shares_find(a: str, b: str) -> bool:
    """Whether folders ``a`` and ``b`` can be listed by one ``find`` (:func:`split_listing` telling their
    names apart): neither holds the other, or a pruned folder lies between them."""
    if not nested(a, b):
        return True
    outer, inner = sorted((a, b), key=len)
    return a != b and pruned_between(outer, inner)


def find_group(folders: Sequence[str], ahead: Sequence[str] = ()) -> list[str]:
    """The folders of ONE ``find``: ``folders`` in order as long as each shares it with those taken
    (:func:`shares_find`; the first is always taken), then those of ``ahead`` (folders to list for a
    later read) that share it too."""
    group: list[str] = []
    for folder in [*folders, *ahead]:
        if folder not in group and (not group or all(shares_find(folder, other) for other in group)):
            group.append(folder)
    return group


def split_listing(out: bytes, folders: Sequence[str]) -> dict[str, tuple[list[str], list[Rejected]]]:
    """``{folder: (relative names, rejections)}`` from the untrusted ``find <folders...> -print0`` output
    ``out`` (``folders`` pairwise :func:`shares_find`: a name belongs to the deepest folder holding it).

    Every name must be under one of ``folders`` and a :func:`safe_relpath` there, else it is rejected
    (on the first folder's list when under none); a folder stops at :data:`MAX_FILES` names."""
    split: dict[str, tuple[list[str], list[Rejected]]] = {f: ([], []) for f in folders}
    full: set[str] = set()
    for raw in out.split(b"\0"):
        name = raw.decode("utf-8", errors="surrogateescape")
        folder = max((f for f in folders if name.startswith(f.rstrip("/") + "/")), key=len, default=None)
        if not name or (folder or folders[0]) in full:
            continue
        names, rejected = split[folder or folders[0]]
        try:
            if folder is None:
                raise ChannelError(f"listed name {name!r} is not under {' or '.join(folders)}")
            names.append(safe_relpath(name[len(folder.rstrip("/")) + 1 :]))
        except ChannelError as exc:
            rejected.append(Rejected(name, str(exc)))
        if folder is not None and len(names) >= MAX_FILES:
            rejected.append(Rejected(folder, f"more than {MAX_FILES} files: the rest is not read"))
            full.add(folder)
    return split


def glob_root(pattern: str) -> str:
    """The literal folder a glob starts from: ``"build/test-results/**/TEST-*.xml"`` -> ``"build/test-results"``,
    ``"**/x.xml"`` -> ``""``, ``"/tmp/r/j.json"`` -> ``"/tmp/r"``."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if re.search(r"[*?\[]", part):
            break
        literal.append(part)
    return "/".join(literal) if literal != [""] else "/"


def glob_regex(pattern: str) -> re.Pattern[str]:
    """An anchored regex matching what ``glob.glob(pattern, recursive=True)`` matches (POSIX paths).

    ``**`` as a whole component matches zero or more folders; ``*`` and ``?`` never cross ``/``; like
    glob, wildcards do not match a leading ``.`` of a component.
    """
    out: list[str] = []
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(r"(?:(?!\.)[^/]*/)*" if not last else r"(?:(?!\.)[^/]*(?:/|$))*")
            continue
        token = "(?!\\.)" if part[:1] in ("*", "?", "[") else ""
        i = 0
        while i < len(part):
            char = part[i]
            if char == "*":
                token += "[^/]*"
            elif char == "?":
                token += "[^/]"
            elif char == "[" and part.find("]", i + 2) != -1:
                end = part.find("]", i + 2)
                body = part[i + 1 : end].replace("\\", "\\\\")
                token += "[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]"
                i = end
            else:
                token += re.escape(char)
            i += 1
        out.append(token + ("" if last else "/"))
    return re.compile("".join(out) + r"\Z")


class _Capped(io.RawIOBase):
    """A readable file over an iterator of chunks that refuses to deliver more than ``limit`` bytes."""

    def __init__(self, chunks: Iterable[bytes], limit: int) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buffer = b""
        self._limit = limit
        self.delivered = 0

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(target), len(self._buffer))
        if self.delivered + size > self._limit:
            raise ChannelError(f"the archive exceeds {self._limit} bytes")
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        self.delivered += size
        return size


def read_tar_files(
    chunks: Iterable[bytes],
    *,
    prefix: str = "",
    max_file_bytes: int = MAX_FILE_BYTES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
) -> tuple[dict[str, bytes], list[Rejected]]:
    """The regular files of an uncompressed tar stream, ``{prefix/safe name: bytes}``, and what was refused.

    Every member name goes through :func:`safe_relpath`; symbolic and hard links, devices, FIFOs and
    files over ``max_file_bytes`` are refused (listed in the second value, never followed or
    truncated). The stream as a whole may not exceed ``max_total_bytes`` plus tar framing.

    Raises:
        ChannelError: the stream is larger than allowed or is not a tar archive.
    """
    found: dict[str, bytes] = {}
    rejected: list[Rejected] = []
    raw = _Capped(chunks, max_total_bytes + (64 << 10))  # plus tar headers, padding and blocking
    try:
        with tarfile.open(fileobj=io.BufferedReader(raw, 1 << 16), mode="r|") as tar:
            for member in tar:
                try:
                    name = safe_relpath(member.name)
                except ChannelError as exc:
                    rejected.append(Rejected(member.name, str(exc)))
                    continue
                if member.isdir():
                    continue
                if not member.isreg():
                    rejected.append(Rejected(member.name, "not a regular file (link, device or FIFO)"))
                    continue
                if member.size > max_file_bytes:
                    rejected.append(Rejected(member.name, f"{member.size} bytes, over {max_file_bytes}"))
                    continue
                handle = tar.extractfile(member)
                if handle is not None:
                    found[posixpath.join(prefix, name) if prefix else name] = handle.read()
    except tarfile.TarError as exc:
        raise ChannelError(f"not a tar stream: {exc}") from exc
    return found, rejected


def archived_file(chunks: Iterable[bytes], size: int, path: str) -> tuple[bytes | None, list[Rejected]]:
    """The regular file ``path`` from the daemon's archive of it (``get_archive``: the tar ``chunks`` and the
    ``size`` its stat gave), or None, and the rejections: a file over :data:`MAX_FILE_BYTES` (its stream left
    unread), a stream :func:`read_tar_files` refuses, any member but the file itself."""
    if size > MAX_FILE_BYTES:
        return None, [Rejected(path, f"{size} bytes, over {MAX_FILE_BYTES}")]
    try:
        files, rejected = read_tar_files(chunks, max_total_bytes=MAX_FILE_BYTES)
    except ChannelError as exc:
        return None, [Rejected(path, str(exc))]
    expected = posixpath.basename(path)
    rejected += [Rejected(name, f"unexpected member in the archive of {path}") for name in files if name != expected]
    return files.get(expected), rejected
