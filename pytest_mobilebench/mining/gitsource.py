"""The repository being mined: where its git objects are, its ``owner/name``, and the git reads the miner makes.

``REPO`` is a local work tree or bare directory (a mirror such as ``<owner>+<name>/repo``), used in
place; or a git bundle file or a clone URL, cloned once into a temporary :class:`RepoCache` (removed by
:meth:`Source.close`). All reads are ``git`` subprocesses on that directory; nothing is checked out.
"""

from __future__ import annotations

import dataclasses
import io
import re
import shutil
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import final

from pytest_mobilebench.mining._harness import GitError, RepoCache, read_blobs, run_git

__all__ = ["Commit", "FileStat", "MiningError", "Source", "open_source"]

_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://|^[^/\s]+@[^/\s]+:")


class MiningError(ValueError):
    """A usage problem the miner cannot work around (unknown repository, bad ref or date, no framework)."""


@final
@dataclasses.dataclass(frozen=True)
class Commit:
    """One commit of the scanned history.

    Attributes:
        sha: full commit id. parents: parent ids, first parent first.
        committed_at: committer date, ISO 8601 with offset. message: the full message.
    """

    sha: str
    parents: tuple[str, ...]
    committed_at: str
    message: str

    @property
    def subject(self) -> str:
        """The first line of the message."""
        return self.message.strip().splitlines()[0] if self.message.strip() else ""


@final
@dataclasses.dataclass(frozen=True)
class FileStat:
    """One changed path of ``git diff --numstat`` (renames appear as a deletion and an addition).

    ``added`` / ``removed`` are line counts, 0 for binary files (``binary`` True)."""

    path: str
    added: int
    removed: int
    binary: bool


@final
@dataclasses.dataclass
class Source:
    """An opened repository.

    Attributes:
        git_dir: where the git commands run. repo: ``owner/name``. repo_url: what manifests clone from
        (the path or URL given). tip: the commit the first-parent history starts from.
    """

    git_dir: Path
    repo: str
    repo_url: str
    tip: str
    _temp: Path | None = None

    def git(self, *args: str) -> str:
        """``git <args>`` in :attr:`git_dir`; :class:`GitError` on failure."""
        return run_git(list(args), cwd=self.git_dir)

    def first_parent(self, since: str | None) -> list[str]:
        """Commit ids on the first-parent chain from :attr:`tip`, newest first (``--since`` applied)."""
        args = ["rev-list", "--first-parent", *([f"--since={since}"] if since else []), self.tip]
        return self.git(*args).split()

    def resolve(self, ref: str) -> str:
        """The full commit id of ``ref``. Raises MiningError when it names no commit."""
        try:
            return self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
        except GitError as exc:
            raise MiningError(f"{ref!r} is not a commit of {self.repo}") from exc

    def commit(self, sha: str) -> Commit:
        """Parents, committer date and message of ``sha``."""
        out = self.git("show", "-s", "--format=%H%x00%P%x00%cI%x00%B", sha)
        full, parents, date, message = out.split("\0", 3)
        return Commit(full.strip(), tuple(parents.split()), date.strip(), message.rstrip("\n"))

    def numstat(self, base: str, head: str) -> list[FileStat]:
        """The paths ``base..head`` changes, with line counts (``--no-renames``)."""
        out = self.git("diff", "--numstat", "-z", "--no-renames", base, head)
        stats = []
        for entry in out.split("\0"):
            if not entry.strip():
                continue
            added, removed, path = entry.split("\t", 2)
            binary = added == "-"
            stats.append(FileStat(path, 0 if binary else int(added), 0 if binary else int(removed), binary))
        return stats

    def diff(self, base: str, head: str) -> str:
        """``git diff --binary`` of ``base..head``: the same command the suite derives patches with."""
        return self.git("diff", "--binary", "--no-color", "--no-ext-diff", base, head)

    def names(self, commit: str) -> list[str]:
        """Every tracked path at ``commit``."""
        return self.git("ls-tree", "-r", "--name-only", "-z", commit).split("\0")[:-1]

    def missing(self, *commits: str) -> dict[str, str]:
        """``{object id: path}`` of the objects of these commits' whole trees that the repository lacks (a
        partial mirror without some large blobs), ``{}`` when every one is present. One ``git rev-list
        --objects --no-walk --missing=print`` (tens of milliseconds on a tree of 6,000 files); the paths come
        from ``ls-tree`` only when something is missing. A checkout of such a commit cannot be made."""
        out = self.git("rev-list", "--objects", "--no-walk", "--missing=print", *commits)
        lacking = {line[1:].strip() for line in out.splitlines() if line.startswith("?")}
        if not lacking:
            return {}
        paths: dict[str, str] = dict.fromkeys(sorted(lacking), "")
        for commit in commits:
            for entry in self.git("ls-tree", "-r", "-z", commit).split("\0"):
                meta, _, path = entry.partition("\t")
                oid = meta.split()[-1] if meta else ""
                if oid in paths and not paths[oid]:
                    paths[oid] = path
        return paths

    def read(self, commit: str, paths: Sequence[str]) -> dict[str, bytes]:
        """``{path: bytes}`` of the paths present at ``commit``."""
        return dict(read_blobs(self.git_dir, commit, paths))

    def export(self, commit: str, dest: Path, paths: Sequence[str] | None = None) -> Path:
        """The tree of ``commit`` (only ``paths`` when given: the rest is never read) written under ``dest``
        (``git archive``), through tarfile's ``data`` filter: a member that would land outside ``dest`` (a
        link pointing out, an absolute name) is left out.

        Raises:
            GitError: git cannot read the commit or one of the objects exported (a mirror lacking blobs);
                its message is git's own.
        """
        if paths is not None and not paths:
            return dest
        data = run_git(
            ["archive", "--format=tar", commit, *(["--", *paths] if paths else [])], cwd=self.git_dir, text=False
        )
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, filter=_inside)
        return dest

    def side_commits(self, merge: Commit) -> int:
        """How many commits a merge brings in besides its first parent (``rev-list --count P1..P2...``)."""
        if len(merge.parents) < 2:
            return 0
        return int(self.git("rev-list", "--count", *merge.parents[1:], f"^{merge.parents[0]}").strip() or 0)

    def close(self) -> None:
        """Remove the temporary clone, if one was made."""
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None


def _inside(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's ``data`` filter, skipping (not raising on) what it refuses."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


def repo_name(spec: str) -> str | None:
    """``owner/name`` read off a path or URL: a ``<owner>+<name>`` component (mirror and bundle naming,
    a trailing ``/repo`` or ``.git`` / ``.bundle`` dropped), else the URL's last two path components."""
    text = spec.rstrip("/")
    for suffix in ("/repo", ".git", ".bundle"):
        text = text.removesuffix(suffix)
    last = re.split(r"[/:]", text)[-1]
    if "+" in last:
        owner, _, name = last.partition("+")
        return f"{owner}/{name}" if owner and name else None
    if _URL_RE.match(spec):
        parts = [p for p in re.split(r"[/:]", text) if p]
        if len(parts) >= 2:
            return f"{parts[-2]}/{parts[-1]}"
    return None


def _default_tip(git_dir: Path) -> str:
    for ref in ("HEAD", "refs/heads/main", "refs/heads/master"):
        try:
            return run_git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=git_dir).strip()
        except GitError:
            continue
    heads = run_git(["for-each-ref", "--format=%(objectname)", "refs/heads"], cwd=git_dir).split()
    if not heads:
        raise MiningError(f"{git_dir}: no branch to scan (pass --ref)")
    return heads[0]


def open_source(spec: str, *, repo: str | None = None, ref: str | None = None) -> Source:
    """Open ``spec`` (a path, a mirror, a bundle or a clone URL) for mining.

    Raises:
        MiningError: a path that does not exist (named); ``owner/name`` cannot be read off ``spec`` and
            ``repo`` is not given; the path is not a git repository; the clone fails; ``ref`` names no commit.
    """
    if not _URL_RE.match(spec) and not Path(spec).exists():
        raise MiningError(
            f"{spec}: no such file or folder (REPO is a work tree, a bare mirror, a git bundle or a clone URL)"
        )
    name = repo or repo_name(spec)
    if name is None or name.count("/") != 1:
        raise MiningError(f"cannot tell the repository's owner/name from {spec!r}: pass --repo-name OWNER/NAME")
    path = Path(spec)
    temp: Path | None = None
    if path.is_dir():
        try:
            git_dir = Path(run_git(["rev-parse", "--absolute-git-dir"], cwd=path).strip())
        except GitError as exc:
            raise MiningError(f"{spec}: not a git repository") from exc
        url = str(path.resolve())
    else:
        url = str(path.resolve()) if path.is_file() else spec
        temp = Path(tempfile.mkdtemp(prefix="mobilebench-mine-"))
        try:
            git_dir = RepoCache(root=temp, run_id="mine").ensure(name, url=url)
        except Exception as exc:  # InfraError, with git's message
            shutil.rmtree(temp, ignore_errors=True)
            raise MiningError(f"cannot clone {spec}: {exc}") from exc
    source = Source(git_dir=git_dir, repo=name, repo_url=url, tip="", _temp=temp)
    try:
        source.tip = source.resolve(ref) if ref else _default_tip(git_dir)
    except MiningError:
        source.close()
        raise
    return source
