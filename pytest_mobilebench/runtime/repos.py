"""Where repositories come from: one bare mirror per repository, fetched once per run.

``--mb-repo-url-template`` decides the source: ``https://github.com/{owner}/{name}`` by default, or an
offline mirror such as ``file:///srv/mirrors/{owner}+{name}/repo`` (a bare git directory works too).
Mirrors live under the cache root; a file lock per repository keeps xdist workers from fetching the same
repository at once, and a marker file with the run id makes the fetch happen once per run.

A local source that lacks some objects (a partial mirror without some large blobs) cannot be cloned whole: the
cache then holds a blob-less partial clone of it (``--filter=blob:none``, the source's ``upload-pack`` told to
allow filters and any object id), and :meth:`RepoCache.ensure` fetches exactly the blobs of the commits asked
for. A commit whose own tree lacks an object fails with ``mirror_incomplete``, naming the paths.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, final

from filelock import FileLock

from pytest_mobilebench.files import cache_root
from pytest_mobilebench.runtime.base import InfraError, NotInRepository
from pytest_mobilebench.runtime.git import BASE_REF, GitError, run_git
from pytest_mobilebench.states import InfraKind

__all__ = ["DEFAULT_URL_TEMPLATE", "RepoCache", "read_blobs", "repo_url", "source_absent"]

DEFAULT_URL_TEMPLATE: Final = "https://github.com/{owner}/{name}"


def repo_url(template: str, repo: str) -> str:
    """Expand a URL template for ``owner/name``: ``{owner}``, ``{name}`` and ``{repo}`` are replaced.

    Raises:
        ValueError: ``repo`` is not of the form ``owner/name``.
    """
    owner, sep, name = repo.partition("/")
    if not sep or not owner or not name or "/" in name:
        raise ValueError(f"repository {repo!r} is not of the form 'owner/name'")
    return template.format(owner=owner, name=name, repo=repo)


#: what git says when a remote answered that it has no such repository (never a network failure)
_NO_REPOSITORY = re.compile(
    r"(?i)repository '[^']*' not found|remote: repository not found|does not appear to be a git repository"
)


def source_absent(url: str, stderr: str, *, own: bool) -> bool:
    """True when a failed clone or fetch of ``url`` is the data's fault: a remote that answered it has no such
    repository, or, for an instance's own ``repo_url`` (``own``), a local path (plain or ``file://``) that does
    not exist or holds no repository. A local mirror folder of ``--mb-repo-url-template`` that lacks the
    repository is the set-up's, and network, TLS, authentication and daemon failures are infrastructure: False."""
    local = (
        url[len("file://") :]
        if url.startswith("file://")
        else (url if "://" not in url and ":" not in url.split("/")[0] else None)
    )
    if local is not None:
        if not own:
            return False
        path = Path(local)
        return not path.exists() or not ((path / "HEAD").is_file() or (path / ".git").exists())
    return bool(_NO_REPOSITORY.search(stderr))


@final
class RepoCache:
    """Bare mirrors of repositories under ``root``.

    Args:
        root: cache folder (``<cache>/repos`` by default).
        url_template: see :func:`repo_url`.
        run_id: fetch each repository at most once for this run id.
    """

    def __init__(
        self,
        root: Path | None = None,
        url_template: str = DEFAULT_URL_TEMPLATE,
        run_id: str = "adhoc",
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.root = Path(root) if root else cache_root() / "repos"
        self.url_template = url_template
        self.run_id = run_id
        #: receives the line naming a damaged mirror that was removed and cloned afresh (the runtime sets it)
        self.progress = progress

    def mirror_path(self, repo: str) -> Path:
        """The bare mirror folder of ``owner/name``."""
        return self.root / (repo.replace("/", "+") + ".git")

    def ensure(self, repo: str, commits: Sequence[str] = (), *, url: str | None = None) -> Path:
        """Make sure the mirror exists and holds ``commits``; return its path.

        ``url`` overrides the template (an instance's own ``repo_url``). The first call of a run clones or fetches;
        later calls of the same run (any worker) only check that the commits are present, fetching again only for a
        commit still missing.

        Raises:
            InfraError: ``clone_failed`` when the source cannot be reached (network, git failing).
            NotInRepository: the source answered and lacks a commit, or there is no repository at it.
        """
        own, url = url is not None, url or repo_url(self.url_template, repo)
        mirror = self.mirror_path(repo)
        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(mirror) + ".lock", timeout=3600):
            marker = mirror / "mobilebench-fetched-run"
            try:
                if not (mirror / "HEAD").exists():
                    self._clone(mirror, url, "it holds no repository (a clone that never finished)")
                elif not marker.exists() or marker.read_text() != self.run_id:
                    self._fetch_or_heal(mirror, url)
                marker.write_text(self.run_id)
                missing = self._missing(mirror, commits)
                if not missing:
                    _complete_trees(repo, url, mirror, commits)
            except subprocess.CalledProcessError as exc:
                said = (exc.stderr or "").strip().splitlines()
                if source_absent(url, exc.stderr or "", own=own):
                    raise NotInRepository(repo, url, detail=said[-1] if said else "") from exc
                raise InfraError(
                    InfraKind.CLONE_FAILED, f"cannot fetch {repo} from {url}: {exc.stderr.strip()}"
                ) from exc
            if missing:  # fetched in this run, and the commit is not there: the data's fault
                raise NotInRepository(repo, url, tuple(missing))
        return mirror

    def _fetch_or_heal(self, mirror: Path, url: str) -> None:
        """Fetch into the mirror, then check it (``git fsck --connectivity-only``). A mirror that fails the
        check (also after a failed fetch) is damaged: removed, named, and cloned afresh once. A fetch that fails
        on a sound mirror is the source's failure (raised as it is), unless the source is a local repository and
        the mirror a whole one: it then becomes blob-less for what it fetches (:func:`_make_partial`), once."""
        fetch = ["fetch", "--quiet", "--prune", "origin", "+refs/*:refs/*"]
        try:
            run_git(["remote", "set-url", "origin", url], cwd=mirror)
            run_git(fetch, cwd=mirror)
        except subprocess.CalledProcessError:
            damaged = _damage(mirror)
            if damaged is None:
                if _local_repository(url) is None or _partial(mirror):
                    raise
                _make_partial(mirror)  # the source may lack blobs no asked commit needs
                run_git(fetch, cwd=mirror)
                return
            self._clone(mirror, url, damaged)
            return
        damaged = _damage(mirror)
        if damaged is not None:
            self._clone(mirror, url, damaged)

    def _clone(self, mirror: Path, url: str, damaged: str) -> None:
        """``git clone --mirror`` into ``mirror``; a folder already there is the damaged mirror (``damaged``
        says why): removed first, named in a progress line and, when the clone or its check fails, in the error.
        When the whole clone of a local repository fails (or its copy fails the check), a blob-less partial
        clone of it is made instead (:func:`_clone_partial`).

        Raises:
            subprocess.CalledProcessError: the clone failed, or the fresh clone is damaged too.
        """
        removed = mirror.exists()
        if removed:
            if self.progress is not None:
                self.progress(f"the repository mirror {mirror} is damaged ({damaged}); removed, cloning it again")
            shutil.rmtree(mirror)
        try:
            _clone_whole(mirror, url)
        except subprocess.CalledProcessError as exc:
            if removed:
                exc.stderr = f"{(exc.stderr or '').strip()} (the damaged mirror {mirror} was removed: {damaged})"
            source = _local_repository(url)
            if source is None:
                raise
            shutil.rmtree(mirror, ignore_errors=True)
            try:  # a local source that cannot be cloned whole: it may lack blobs that no asked commit needs
                _clone_partial(mirror, source)
            except subprocess.CalledProcessError as partial:
                shutil.rmtree(mirror, ignore_errors=True)
                exc.stderr = f"{(exc.stderr or '').strip()}; a blob-less clone failed too: {partial.stderr.strip()}"
                raise exc from partial

    @staticmethod
    def _missing(mirror: Path, commits: Sequence[str]) -> list[str]:
        missing = []
        for commit in commits:
            try:
                run_git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=mirror)
            except subprocess.CalledProcessError:
                missing.append(commit)
        return missing

    def checkout(self, repo: str, commit: str, dest: Path, *, standalone: bool = False, url: str | None = None) -> Path:
        """Create a work tree of ``repo`` at ``commit`` in ``dest`` (a new folder) with its own ``.git``.

        By default the clone borrows objects from the mirror (``--shared``), so it is fast and small;
        ``standalone=True`` copies the objects instead, for a tree that is moved elsewhere (a Docker build
        context). The checked-out commit is tagged :data:`~pytest_mobilebench.runtime.git.BASE_REF` so resets and
        diffs can name it.

        Raises:
            InfraError: ``clone_failed`` when the commit cannot be checked out.
        """
        mirror = self.ensure(repo, [commit], url=url)
        try:
            share = "--no-hardlinks" if standalone else "--shared"
            run_git(["clone", "--quiet", share, "--no-checkout", str(mirror), str(dest)])
            run_git(["-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", commit], cwd=dest)
            run_git(["tag", "-f", BASE_REF], cwd=dest)
        except subprocess.CalledProcessError as exc:
            raise InfraError(InfraKind.CLONE_FAILED, f"cannot check out {repo}@{commit}: {exc.stderr.strip()}") from exc
        return dest

    def diff(self, repo: str, base: str, head: str, *, url: str | None = None) -> str:
        """``git diff --binary base head`` of the mirror (used to derive patches from ``fix_commit``)."""
        mirror = self.ensure(repo, [base, head], url=url)
        return run_git(["diff", "--binary", "--no-color", "--no-ext-diff", base, head], cwd=mirror)

    def read_files(self, repo: str, commit: str, paths: Sequence[str], *, url: str | None = None) -> dict[str, bytes]:
        """``{path: bytes}`` of the given repository-relative paths at ``commit`` (absent paths left out);
        exact paths, no globs. Used to read a framework's configuration at the base commit.

        Raises:
            InfraError: ``clone_failed`` when the mirror or the commit cannot be fetched.
        """
        mirror = self.ensure(repo, [commit], url=url)
        return read_blobs(mirror, commit, paths)


#: how the cache's partial mirrors ask a local source for objects: filters and any object id allowed (given as
#: the remote's ``uploadpack`` program, since git does not pass ``-c`` settings to a local transport)
_UPLOAD_PACK: Final = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"


def _local_repository(url: str) -> Path | None:
    """The folder of a local source (a plain path or ``file://``) that holds a repository, else None."""
    local = url[len("file://") :] if url.startswith("file://") else url
    if "://" in local or ":" in local.split("/")[0]:
        return None
    path = Path(local)
    return path if (path / "HEAD").is_file() or (path / ".git").exists() else None


def _clone_whole(mirror: Path, url: str) -> None:
    """``git clone --mirror``, then the check of :func:`_damage` (raised as a :class:`GitError`)."""
    run_git(["clone", "--mirror", "--quiet", url, str(mirror)])
    again = _damage(mirror)
    if again is not None:
        raise GitError(1, f"git fsck {mirror}", "", f"the fresh clone is damaged too: {again}")


def _clone_partial(mirror: Path, source: Path) -> None:
    """A blob-less mirror (``--filter=blob:none``) of the local repository ``source``; its remote keeps
    :data:`_UPLOAD_PACK`, so later fetches (refs, and the blobs of :func:`_complete_trees`) work too."""
    uri = source.resolve().as_uri()
    run_git(["clone", "--mirror", "--quiet", "--filter=blob:none", "--upload-pack", _UPLOAD_PACK, uri, str(mirror)])
    run_git(["config", "remote.origin.uploadpack", _UPLOAD_PACK], cwd=mirror)


def _partial(mirror: Path) -> bool:
    """Whether ``mirror`` is a partial clone (its ``origin`` a promisor remote)."""
    return run_git(["config", "--get", "--default=false", "remote.origin.promisor"], cwd=mirror).strip() == "true"


def _make_partial(mirror: Path) -> None:
    """Turn a whole mirror into a blob-less one for what it fetches from now on (what it holds stays)."""
    for key, value in (
        ("remote.origin.promisor", "true"),
        ("remote.origin.partialclonefilter", "blob:none"),
        ("remote.origin.uploadpack", _UPLOAD_PACK),
    ):
        run_git(["config", key, value], cwd=mirror)


def _complete_trees(repo: str, url: str, mirror: Path, commits: Sequence[str]) -> None:
    """Fetch into a partial mirror the objects of ``commits``' trees it lacks (nothing to do in a whole one).

    Raises:
        InfraError: ``mirror_incomplete`` when the source lacks some of them, naming the paths and objects.
    """
    if not _partial(mirror):
        return
    for commit in commits:
        listing = run_git(["rev-list", "--objects", "--no-walk", "--missing=print", commit], cwd=mirror)
        absent = [line[1:] for line in listing.splitlines() if line.startswith("?")]
        if not absent:
            continue
        try:
            run_git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin", *absent], cwd=mirror)
        except subprocess.CalledProcessError as exc:
            raise InfraError(InfraKind.MIRROR_INCOMPLETE, _incomplete(repo, url, mirror, commit, absent, exc)) from exc


def _incomplete(repo: str, url: str, mirror: Path, commit: str, absent: Sequence[str], exc: GitError) -> str:
    """The message of ``mirror_incomplete``: which of ``absent`` the source lacks (asked of a local source,
    else the ids git named), with their paths at ``commit`` (at most 5 named)."""
    source = _local_repository(url)
    if source is not None:
        said = _objects_present(source, absent)
        lacking = [oid for oid in absent if oid not in said]
    else:
        lacking = [oid for oid in absent if oid in (exc.stderr or "")] or list(absent)
    paths: dict[str, str] = {}
    for line in run_git(["ls-tree", "-r", "--full-tree", commit], cwd=mirror).splitlines():
        meta, _, path = line.partition("\t")
        paths.setdefault(meta.split()[-1], path)
    named = ", ".join(f"{paths.get(oid, '?')} ({oid[:12]})" for oid in lacking[:5])
    more = f" and {len(lacking) - 5} more" if len(lacking) > 5 else ""
    lines = (exc.stderr or "").strip().splitlines()
    said = [line for line in lines if "not our ref" in line or "unable to read" in line] or lines
    return (
        f"{repo}@{commit}: the source {url} lacks {len(lacking)} object(s) of the commit's tree: {named}{more} "
        f"(a partial mirror: fetch those objects into it, or use another source); git said: {said[0] if said else ''}"
    )


def _objects_present(git_dir: Path, oids: Sequence[str]) -> set[str]:
    """Which of ``oids`` the repository ``git_dir`` holds (``git cat-file --batch-check``, nothing fetched)."""
    proc = subprocess.run(
        ["git", "cat-file", "--batch-check"], cwd=git_dir, input="".join(f"{o}\n" for o in oids).encode(),
        capture_output=True, check=False, env={**os.environ, "GIT_NO_LAZY_FETCH": "1"},
    )  # fmt: skip
    return {
        line.split()[0] for line in proc.stdout.decode(errors="replace").splitlines() if not line.endswith("missing")
    }


def _damage(mirror: Path) -> str | None:
    """What ``git fsck --connectivity-only`` finds wrong with a mirror (its first error lines), or None when it
    exits 0 without an ``error:`` line (a pack that no longer matches its index is said on stderr only)."""
    proc = subprocess.run(
        ["git", "fsck", "--connectivity-only", "--no-dangling", "--no-progress"],
        cwd=mirror,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=600,
        check=False,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )
    lines = proc.stderr.splitlines()
    errors = list(dict.fromkeys(line.strip() for line in lines if line.startswith(("error:", "fatal:"))))
    if proc.returncode == 0 and not errors:
        return None
    return "git fsck: " + ("; ".join(errors[:3]) if errors else f"exit {proc.returncode}")


def read_blobs(git_dir: Path, commit: str, paths: Sequence[str]) -> Mapping[str, bytes]:
    """The blobs of ``paths`` at ``commit`` in a repository (absent paths left out), one ``git cat-file``."""
    wanted = [p for p in dict.fromkeys(paths) if p and "\n" not in p]
    if not wanted:
        return {}
    proc = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=git_dir, input="".join(f"{commit}:{p}\n" for p in wanted).encode(),
        capture_output=True, check=False,
    )  # fmt: skip
    out, found, pos = proc.stdout, {}, 0
    for path in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 3:  # "<sha> <type> <size>", then the content and a newline
            size = int(header[2])
            if header[1] == b"blob":
                found[path] = out[pos : pos + size]
            pos += size + 1
    return found
