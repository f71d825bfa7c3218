"""The Debian base image every layered image starts from, made locally when no registry answers.

Order of attempts in :func:`ensure_base_image`:

1. the image already exists in the daemon -> use it;
2. ``docker pull`` -> use it when it works;
3. build it here: ``debootstrap --variant=minbase <suite> <dir> <mirror>`` with the mirror read from the
   host's own apt sources (``/etc/apt/sources.list.d/*.sources`` in deb822 form, or ``sources.list``), then
   ``tar -C <dir> -c . | docker import``. The root file system tarball is cached under
   :func:`cache_root` so a second import (after ``docker image rm`` or on a fresh daemon) takes seconds.

No host name is written here: the mirror is whatever the host's apt already uses.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from filelock import FileLock

from pytest_mobilebench.files import cache_root
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.heal import healed
from pytest_mobilebench.runtime.owners import session_labels
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:  # the docker SDK is an optional dependency
    import docker

__all__ = [
    "DEFAULT_BASE_IMAGE",
    "AptSource",
    "cache_root",
    "ensure_base_image",
    "host_apt_mirror",
    "parse_deb822_sources",
    "parse_sources_list",
]

#: the image every layered image starts from unless the runtime is told otherwise
DEFAULT_BASE_IMAGE: Final[str] = "debian:bookworm-slim"

#: image name -> Debian suite that debootstrap can build for it
_SUITE_OF_TAG: Final[dict[str, str]] = {
    "bookworm": "bookworm",
    "bookworm-slim": "bookworm",
    "12": "bookworm",
    "12-slim": "bookworm",
    "trixie": "trixie",
    "trixie-slim": "trixie",
    "bullseye": "bullseye",
    "bullseye-slim": "bullseye",
}

Progress = Callable[[str], None]


class AptSource(NamedTuple):
    """One apt source. ``types``: ``("deb",)`` / ``("deb-src",)``; ``uris``: archive URIs as written;
    ``suites``: ``("bookworm", "bookworm-updates")`` ..."""

    types: tuple[str, ...]
    uris: tuple[str, ...]
    suites: tuple[str, ...]


def parse_deb822_sources(text: str) -> list[AptSource]:
    """Parse a deb822 ``.sources`` file (stanzas separated by blank lines) into :class:`AptSource` s.

    Comment lines (``#``) are ignored; ``Enabled: no`` stanzas are dropped; continuation lines are not
    needed for the three fields read here. Format: ``man 5 sources.list``, "DEB822-STYLE FORMAT".
    """
    sources: list[AptSource] = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if not line.strip() or line.lstrip().startswith("#") or line[:1].isspace():
                continue
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip().lower()] = value.strip()
        if fields.get("enabled", "yes").lower() == "no":
            continue
        if "uris" in fields and "suites" in fields:
            sources.append(
                AptSource(
                    tuple(fields.get("types", "deb").split()),
                    tuple(fields["uris"].split()),
                    tuple(fields["suites"].split()),
                )
            )
    return sources


def parse_sources_list(text: str) -> list[AptSource]:
    """Parse one-line-style ``sources.list`` text: ``deb [options] URI suite [component...]``."""
    sources: list[AptSource] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        line = re.sub(r"\[[^\]]*\]", " ", line)
        parts = line.split()
        if len(parts) >= 3 and parts[0] in {"deb", "deb-src"}:
            sources.append(AptSource((parts[0],), (parts[1],), (parts[2],)))
    return sources


def host_apt_mirror(
    suite: str = "bookworm",
    *,
    sources_dir: Path = Path("/etc/apt/sources.list.d"),
    sources_list: Path = Path("/etc/apt/sources.list"),
) -> str:
    """The archive URI the host's apt uses for ``suite`` (a ``deb`` source listing that exact suite).

    Reads ``<sources_dir>/*.sources`` (deb822), then ``<sources_dir>/*.list`` and ``sources_list``.

    Raises:
        InfraError("base_image_unavailable"): no host source names ``suite``.
    """
    found: list[AptSource] = []
    for path in sorted(glob.glob(str(sources_dir / "*.sources"))):
        found += parse_deb822_sources(Path(path).read_text(encoding="utf-8", errors="replace"))
    list_files: Iterable[str] = sorted(glob.glob(str(sources_dir / "*.list")))
    for path in [*list_files, str(sources_list)]:
        if os.path.isfile(path):
            found += parse_sources_list(Path(path).read_text(encoding="utf-8", errors="replace"))
    for source in found:
        if "deb" in source.types and suite in source.suites and source.uris:
            return source.uris[0]
    raise InfraError(
        InfraKind.BASE_IMAGE_UNAVAILABLE,
        f"no apt source for suite {suite!r} in {sources_dir}/*.sources or {sources_list}; "
        f"add one, or load an image with `docker load -i <debian {suite} image>.tar`",
    )


def _image_exists(client: docker.DockerClient, name: str) -> bool:
    import docker.errors

    try:
        client.images.get(name)
    except docker.errors.ImageNotFound:
        return False
    return True


def _try_pull(client: docker.DockerClient, name: str, progress: Progress) -> bool:
    import docker.errors
    import requests

    repository, _, tag = name.partition(":")
    progress(f"pulling {name}")
    try:
        client.images.pull(repository, tag=tag or "latest")
    except (docker.errors.APIError, requests.RequestException) as exc:
        progress(f"pull of {name} failed: {str(exc).splitlines()[0][:200]}")
        return False
    return True


def _rootfs_tarball(suite: str, mirror: str, progress: Progress) -> Path:
    """Build (or reuse) ``<cache>/rootfs/debian-<suite>-minbase.tar``, checked against its size and digest
    record before use (:func:`~pytest_mobilebench.runtime.heal.healed`: a damaged tarball is removed, named,
    and built again once)."""
    tarball = cache_root() / "rootfs" / f"debian-{suite}-minbase.tar"
    return healed(
        tarball,
        lambda: _debootstrap(suite, mirror, tarball, progress),
        progress,
        f"the Debian {suite} root file system",
    )


def _debootstrap(suite: str, mirror: str, tarball: Path, progress: Progress) -> Path:
    """``debootstrap`` the root file system of ``suite`` and pack it into ``tarball``."""
    out_dir = tarball.parent
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise InfraError(
            InfraKind.BASE_IMAGE_UNAVAILABLE,
            f"no registry answered and debootstrap is not installed, so the {suite} base image cannot be "
            "built here. Fix: `apt-get install -y debootstrap` (then rerun), or load an image yourself: "
            f"`docker load -i debian-{suite}-slim.tar`",
        )
    work = Path(tempfile.mkdtemp(prefix=f"debootstrap-{suite}-", dir=out_dir))
    rootfs = work / "rootfs"
    try:
        command = [debootstrap, "--variant=minbase", suite, str(rootfs), mirror]
        progress("$ " + " ".join(command))
        started = time.monotonic()
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        tail: list[str] = []
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-60:]
            progress(line.rstrip())
        if proc.wait() != 0:
            log = "\n".join(tail)
            kind = InfraKind.DISK_FULL if "no space left on device" in log.lower() else InfraKind.BASE_IMAGE_UNAVAILABLE
            raise InfraError(kind, f"debootstrap {suite} from {mirror} failed (exit {proc.returncode})", log=log)
        progress(f"debootstrap finished in {time.monotonic() - started:.0f} s")
        # the same trims the official slim images make: no package caches, no apt lists
        for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (rootfs / sub).glob("*"):
                if entry.is_file() and entry.name != "lock":
                    entry.unlink()
        partial = tarball.with_suffix(".tar.partial")
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), "."],
            check=True,
            capture_output=True,
        )
        partial.replace(tarball)
    except subprocess.CalledProcessError as exc:
        err = (exc.stderr or b"").decode("utf-8", "replace")
        kind = InfraKind.DISK_FULL if "no space left" in err.lower() else InfraKind.BASE_IMAGE_UNAVAILABLE
        raise InfraError(kind, f"packing the {suite} root file system failed", log=err) from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tarball


def ensure_base_image(
    client: docker.DockerClient,
    name: str = DEFAULT_BASE_IMAGE,
    *,
    progress: Progress | None = None,
    mirror: str | None = None,
) -> str:
    """Make sure image ``name`` exists in the daemon; return its image id (``sha256:...``).

    Args:
        client: a connected docker client.
        name: ``repository:tag``; only Debian tags in :data:`_SUITE_OF_TAG` can be built locally.
        progress: called with human-readable progress lines (debootstrap's output included).
        mirror: archive URI for debootstrap; default: :func:`host_apt_mirror` for the suite.

    Raises:
        InfraError("base_image_unavailable"): not present, not pullable, and not buildable here (the
            message says how to fix it: install debootstrap, or ``docker load`` an image).
        InfraError("disk_full"): the disk filled up while building.

    Steps 2 and 3 run under a per-image :class:`filelock.FileLock` in ``<cache>/locks``, so concurrent
    runs and xdist workers import the image once (the others wait and reuse it).
    """
    report: Progress = progress or (lambda _line: None)
    if _image_exists(client, name):
        return str(client.images.get(name).id)
    # one importer per machine: xdist workers and concurrent runs wait, then find the image made
    lock_dir = cache_root() / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_dir / ("base-image-" + re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".lock"))):
        if _image_exists(client, name):
            return str(client.images.get(name).id)
        return _pull_or_import(client, name, mirror, report)


def _pull_or_import(client: docker.DockerClient, name: str, mirror: str | None, report: Progress) -> str:
    """Steps 2 and 3 of :func:`ensure_base_image` (called under its lock)."""
    if _try_pull(client, name, report):
        return str(client.images.get(name).id)
    repository, _, tag = name.partition(":")
    suite = _SUITE_OF_TAG.get(tag or "latest")
    if repository not in {"debian", "library/debian", "docker.io/library/debian"} or suite is None:
        raise InfraError(
            InfraKind.BASE_IMAGE_UNAVAILABLE,
            f"image {name} is not in the daemon, cannot be pulled, and only Debian images "
            f"({', '.join(sorted(_SUITE_OF_TAG))}) can be built locally; `docker load` it first",
        )
    tarball = _rootfs_tarball(suite, mirror or host_apt_mirror(suite), report)
    report(f"importing {tarball} as {name}")
    try:
        client.api.import_image_from_file(
            str(tarball),
            repository=repository,
            tag=tag,
            changes=['CMD ["bash"]', "ENV LANG=C.UTF-8", *(f'LABEL {k}="{v}"' for k, v in session_labels().items())],
        )
    except Exception as exc:  # docker.errors.APIError, requests errors: all mean the import failed
        text = str(exc)
        kind = InfraKind.DISK_FULL if "no space left" in text.lower() else InfraKind.BASE_IMAGE_UNAVAILABLE
        raise InfraError(kind, f"docker import of {tarball} as {name} failed: {text}") from exc
    return str(client.images.get(name).id)
