"""What a :class:`~pytest_mobilebench.runtime.docker_workspace.DockerWorkspace` read since its container
last could change (issue 23, item 3: a candidate's reads at one moment list each folder and copy each file
once, and the leftover-process check runs once, not once per read).

The container's files change only through something the harness does: an exec (every process in the
container is one, or a child of one), a file copied in, a (re)start. Each of these *touches* the memo
(:attr:`ReadMemo.gen` goes up) and everything kept is forgotten. Two exceptions, decided by the workspace:
its own fixed programs (``/usr/bin/find``, ``/bin/df``, its clean-up shell) run as a non-root test user,
who cannot replace them, do not touch it; the clean-up then says which files it deleted
(:meth:`ReadMemo.forget_files`).

A listing or a file is kept only when taken while the container was *quiet*: the daemon's process list
showed nothing but its init and ``sleep`` at this generation (:meth:`ReadMemo.mark_quiet`), so no
process is left that could change the tree under what was kept. Shapes: a listing is ``(relative names,
rejections)``, a file ``(bytes or None, rejections)``; rejections are replayed to the workspace's
``rejected`` on each use, as a fresh read would add them.

A folder under a kept folder is answered from that folder's listing (its names under it) unless a pruned
folder (:data:`~pytest_mobilebench.runtime.channel.PRUNED`) lies between them or the listing stopped at
:data:`~pytest_mobilebench.runtime.channel.MAX_FILES` names. Such an answer never follows a symbolic link
on the way down (the kept listing did not); a ``find`` started below a link would. Folders a workspace
expects to read at this moment (:meth:`ReadMemo.expect`) are listed with the next ``find`` of the moment.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import final

from pytest_mobilebench.runtime.channel import MAX_FILES, Rejected, pruned_between

__all__ = ["ReadMemo"]


def _under(path: str, trees: Iterable[str]) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in trees)


@final
class ReadMemo:
    """Listings and file contents of one container at one generation, and whether it is quiet.

    Attributes:
        gen: the generation (starts at 0: the container as the image made it, nothing run in it yet).
    """

    def __init__(self) -> None:
        self.gen = 0
        self._quiet_at: int | None = None
        self._at = 0
        self._listings: dict[str, tuple[list[str], list[Rejected]]] = {}
        self._contents: dict[str, tuple[bytes | None, list[Rejected]]] = {}
        self._expected: list[str] = []
        self._full: set[str] = set()  # kept listings that stopped at MAX_FILES names: nothing derived from them

    def touch(self) -> None:
        """The container may change (an exec, a copy in, a restart): forget everything, not quiet."""
        self.gen += 1

    def _sync(self) -> None:
        if self._at != self.gen:
            self._at = self.gen
            self._listings.clear()
            self._contents.clear()
            self._expected.clear()
            self._full.clear()

    @property
    def quiet(self) -> bool:
        """Whether the process list showed nothing of the candidate's at this generation."""
        return self._quiet_at == self.gen

    def mark_quiet(self, gen: int) -> None:
        """The process list taken at generation ``gen`` showed only the container's init and ``sleep``."""
        self._quiet_at = gen

    def listing(self, folder: str) -> tuple[list[str], list[Rejected]] | None:
        """The kept listing of ``folder`` at this generation, its part of a kept folder above it (see the
        module docstring), or None."""
        self._sync()
        if (kept := self._listings.get(folder)) is not None:
            return kept
        for outer, (names, rejected) in self._listings.items():
            if (
                folder.startswith(outer.rstrip("/") + "/")
                and not pruned_between(outer, folder)
                and outer not in self._full
            ):
                prefix = folder[len(outer.rstrip("/")) + 1 :] + "/"
                return (
                    [n[len(prefix) :] for n in names if n.startswith(prefix)],
                    [r for r in rejected if r.name.startswith(folder.rstrip("/") + "/")],
                )
        return None

    def expect(self, folders: Iterable[str]) -> None:
        """Folders a read at this generation will list: :meth:`expected` hands them to the next ``find``."""
        self._sync()
        self._expected += [f for f in folders if f not in self._expected]

    def expected(self) -> list[str]:
        """The folders :meth:`expect` named at this generation and not listed yet (handed over once)."""
        self._sync()
        out = [f for f in self._expected if self.listing(f) is None]
        self._expected.clear()
        return out

    def keep_listing(self, gen: int, folder: str, names: list[str], rejected: list[Rejected]) -> None:
        """Keep a listing taken at ``gen`` (ignored unless the container is quiet at ``gen`` still)."""
        self._sync()
        if self.quiet and gen == self.gen:
            self._listings[folder] = (list(names), list(rejected))
            if len(names) >= MAX_FILES:
                self._full.add(folder)

    def content(self, path: str) -> tuple[bytes | None, list[Rejected]] | None:
        """The kept copy of ``path`` at this generation, or None (never copied)."""
        self._sync()
        return self._contents.get(path)

    def keep_content(self, gen: int, path: str, data: bytes | None, rejected: list[Rejected]) -> None:
        """Keep a copy taken at ``gen`` (ignored unless the container is quiet at ``gen`` still)."""
        self._sync()
        if self.quiet and gen == self.gen:
            self._contents[path] = (data, list(rejected))

    def forget_files(self, paths: Iterable[str], trees: Iterable[str]) -> None:
        """The harness deleted the files ``paths`` and the folders ``trees`` (absolute), and nothing else:
        they leave every kept listing; listings inside a tree and copies of what was deleted are dropped."""
        self._sync()
        gone, trees = set(paths), list(trees)
        for folder in list(self._listings):
            names, rejected = self._listings[folder]
            if _under(folder, trees):
                del self._listings[folder]
                continue
            kept = [n for n in names if (full := posixpath.join(folder, n)) not in gone and not _under(full, trees)]
            self._listings[folder] = (kept, rejected)
        for path in list(self._contents):
            if path in gone or _under(path, trees):
                del self._contents[path]
