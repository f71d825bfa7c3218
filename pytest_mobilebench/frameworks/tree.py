"""A repository given as file contents, read through the ``pathlib`` calls the Gradle readers make.

:func:`tree_root` returns the root of a read-only, in-memory tree built from ``{relative path: bytes}``;
``/``, ``is_file``, ``is_dir``, ``exists``, ``iterdir``, ``glob`` (one level), ``read_text``,
``read_bytes``, ``resolve`` and ``walk`` work on it and never touch the host's file system, so a test plan
is made from what the workspace handed back, without a temporary folder.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath
from typing import Any, ClassVar

__all__ = ["TreePath", "tree_root"]

#: Where in-memory trees are rooted (an absolute name no host path is compared with).
ROOT = "/mobilebench-tree"


class TreePath(PurePosixPath):
    """A path inside one in-memory tree (the tree is a class attribute of the subclass made per tree)."""

    _files: ClassVar[Mapping[str, bytes]] = {}
    _dirs: ClassVar[frozenset[str]] = frozenset()

    def _key(self) -> str | None:
        text = posixpath.normpath(str(self))
        if text == ROOT:
            return ""
        return text[len(ROOT) + 1 :] if text.startswith(ROOT + "/") else None

    def is_file(self) -> bool:
        return self._key() in self._files

    def is_dir(self) -> bool:
        return self._key() in self._dirs

    def exists(self) -> bool:
        return self.is_file() or self.is_dir()

    def resolve(self, strict: bool = False) -> TreePath:
        del strict
        return type(self)(posixpath.normpath(str(self)))

    def iterdir(self) -> Iterator[TreePath]:
        key = self._key()
        if key not in self._dirs:
            raise FileNotFoundError(str(self))
        prefix = f"{key}/" if key else ""
        names = {
            p[len(prefix) :].split("/", 1)[0] for p in (*self._files, *self._dirs) if p.startswith(prefix) and p != key
        }
        return iter(self / n for n in sorted(names) if n)

    def glob(self, pattern: str) -> Iterator[TreePath]:
        if not self.is_dir():
            return iter(())
        if "/" in pattern:
            head, rest = pattern.split("/", 1)
            return (p for d in self.glob(head) if d.is_dir() for p in d.glob(rest))
        return (p for p in self.iterdir() if fnmatch.fnmatchcase(p.name, pattern))

    def read_bytes(self) -> bytes:
        key = self._key()
        if key not in self._files:
            raise FileNotFoundError(str(self))
        return bytes(self._files[key])

    def read_text(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self.read_bytes().decode(encoding, errors)

    def walk(self) -> Iterator[tuple[TreePath, list[str], list[str]]]:
        """``os.walk`` for the tree: ``(folder, sub-folder names, file names)``, top-down; callers may
        prune the sub-folder list in place."""
        subdirs = [p.name for p in self.iterdir() if p.is_dir()]
        files = [p.name for p in self.iterdir() if p.is_file()]
        yield self, subdirs, files
        for name in subdirs:  # after the caller pruned it
            yield from (self / name).walk()


def tree_root(files: Mapping[str, bytes]) -> TreePath:
    """The root of an in-memory tree holding ``files`` (repository-relative POSIX paths -> bytes)."""
    clean = {posixpath.normpath(k): v for k, v in files.items() if not k.startswith("/") and not k.startswith("..")}
    dirs = {""} | {posixpath.dirname(k) for k in clean}
    for d in list(dirs):
        while d:
            d = posixpath.dirname(d)
            dirs.add(d)
    attrs: dict[str, Any] = {"_files": dict(clean), "_dirs": frozenset(dirs)}
    return type("Tree", (TreePath,), attrs)(ROOT)
