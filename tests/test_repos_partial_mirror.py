"""The repository cache from a source that lacks a blob (a partial mirror): a commit whose tree does not need it
checks out (the cache holds a blob-less clone and fetches the commit's blobs), one that needs it fails with
``mirror_incomplete`` naming the path; a whole source is still cloned whole (no filter)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.checkout import export_tree, shallow_checkout
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.states import InfraKind

_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=_ENV | {"PATH": "/usr/bin:/bin"}
    )
    return proc.stdout.strip()


def _source(tmp_path: Path) -> tuple[Path, str, str, str]:
    """A bare repository with loose objects: (path, old commit with ``big.bin``, new commit without it, the blob)."""
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / "a.txt").write_text("one\n")
    (work / "big.bin").write_bytes(b"a large blob the mirror lost\n")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "old")
    old, blob = _git(work, "rev-parse", "HEAD"), _git(work, "rev-parse", "HEAD:big.bin")
    _git(work, "rm", "-q", "big.bin")
    (work / "a.txt").write_text("two\n")
    _git(work, "commit", "-q", "-am", "new")
    new = _git(work, "rev-parse", "HEAD")
    bare = tmp_path / "src.git"
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    _git(work, "push", "-q", str(bare), "main")  # a push of a few objects leaves them loose
    return bare, old, new, blob


def _cache(tmp_path: Path) -> RepoCache:
    return RepoCache(root=tmp_path / "cache", url_template=str(tmp_path / "{name}.git"), run_id="r1")


def test_a_commit_that_does_not_need_the_lost_blob_checks_out(tmp_path: Path) -> None:
    bare, old, new, blob = _source(tmp_path)
    (bare / "objects" / blob[:2] / blob[2:]).unlink()
    cache = _cache(tmp_path)
    dest = cache.checkout("o/src", new, tmp_path / "ws")
    assert (dest / "a.txt").read_text() == "two\n"
    assert _git(dest, "status", "--porcelain") == ""
    mirror = cache.mirror_path("o/src")
    assert _git(mirror, "config", "remote.origin.promisor") == "true"  # the blob-less fallback was taken
    assert export_tree(mirror, new, tmp_path / "tree") == new  # the Docker runtime's two reads of the tree
    assert (tmp_path / "tree" / "a.txt").read_text() == "two\n"
    assert shallow_checkout(mirror, new, tmp_path / "testbed") == new
    assert (tmp_path / "testbed" / "a.txt").read_text() == "two\n"
    assert cache.diff("o/src", new, new) == ""


def test_a_commit_that_needs_the_lost_blob_is_named_mirror_incomplete(tmp_path: Path) -> None:
    bare, old, new, blob = _source(tmp_path)
    (bare / "objects" / blob[:2] / blob[2:]).unlink()
    cache = _cache(tmp_path)
    with pytest.raises(InfraError) as caught:
        cache.checkout("o/src", old, tmp_path / "ws", standalone=True)
    assert caught.value.kind == InfraKind.MIRROR_INCOMPLETE
    assert f"lacks 1 object(s) of the commit's tree: big.bin ({blob[:12]})" in str(caught.value)
    assert old in str(caught.value)
    assert cache.checkout("o/src", new, tmp_path / "ws2").joinpath("a.txt").read_text() == "two\n"  # no harm done


def test_a_whole_source_is_still_cloned_whole(tmp_path: Path) -> None:
    bare, old, _new, _blob = _source(tmp_path)
    cache = _cache(tmp_path)
    dest = cache.checkout("o/src", old, tmp_path / "ws")
    assert (dest / "big.bin").read_bytes() == b"a large blob the mirror lost\n"
    with pytest.raises(subprocess.CalledProcessError):  # no partial-clone configuration: the mirror is whole
        _git(cache.mirror_path("o/src"), "config", "remote.origin.promisor")


def test_a_partial_cache_mirror_fetches_again_in_the_next_run(tmp_path: Path) -> None:
    bare, _old, new, blob = _source(tmp_path)
    (bare / "objects" / blob[:2] / blob[2:]).unlink()
    _cache(tmp_path).ensure("o/src", [new])
    work = tmp_path / "work"
    (work / "a.txt").write_text("three\n")
    _git(work, "commit", "-q", "-am", "newer")
    _git(work, "push", "-q", str(bare), "main")
    newer = _git(work, "rev-parse", "HEAD")
    later = RepoCache(root=tmp_path / "cache", url_template=str(tmp_path / "{name}.git"), run_id="r2")
    assert later.checkout("o/src", newer, tmp_path / "ws").joinpath("a.txt").read_text() == "three\n"


def test_a_whole_cache_mirror_turns_blob_less_when_the_source_loses_a_blob(tmp_path: Path) -> None:
    """The cache was made whole; the source then gains a branch whose blob it lacks: the next run's fetch cannot
    be whole, so the mirror fetches blob-less from then on, and a commit that needs no lost blob checks out."""
    work, bare = tmp_path / "work", tmp_path / "src.git"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / "a.txt").write_text("one\n")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "first")
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    _git(work, "push", "-q", str(bare), "main")
    first = _git(work, "rev-parse", "HEAD")
    RepoCache(root=tmp_path / "cache", url_template=str(tmp_path / "{name}.git"), run_id="r1").ensure("o/src", [first])
    _git(work, "checkout", "-q", "-b", "side")
    (work / "big.bin").write_bytes(b"a large blob the mirror lost\n")
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "side")
    side, blob = _git(work, "rev-parse", "HEAD"), _git(work, "rev-parse", "HEAD:big.bin")
    _git(work, "checkout", "-q", "main")
    (work / "a.txt").write_text("two\n")
    _git(work, "commit", "-q", "-am", "second")
    second = _git(work, "rev-parse", "HEAD")
    _git(work, "push", "-q", str(bare), "main", "side")
    (bare / "objects" / blob[:2] / blob[2:]).unlink()
    later = RepoCache(root=tmp_path / "cache", url_template=str(tmp_path / "{name}.git"), run_id="r2")
    assert later.checkout("o/src", second, tmp_path / "ws").joinpath("a.txt").read_text() == "two\n"
    assert _git(later.mirror_path("o/src"), "config", "remote.origin.promisor") == "true"
    with pytest.raises(InfraError, match=f"big.bin \\({blob[:12]}\\)"):
        later.ensure("o/src", [side])
