"""The dependency layer: between environment and instance images, one install per distinct set of manifests.

Instances of one repository often differ only in source files: two jellyfin-expo bases have
byte-identical ``package.json`` and ``package-lock.json``, yet each instance image ran its own
``npm ci``. Here the install runs once per *dependency key*

    ``sha256("deps", env image id, install command, sorted (path, sha256(content)) of the manifests)``

into ``mobilebench/deps.<repo slug>:<key12>``; the instance layer then starts ``FROM`` it, copies the
full checkout over ``/testbed`` (``node_modules`` and the like stay: the checkout has none) and skips
the install. Manifests (:func:`manifest_files`): npm / yarn / pnpm manifests and lockfiles, their rc
files (without credential lines), ``patches/`` (patch-package), ``.yarn/`` releases, plugins and patches,
``pnpm-workspace.yaml`` and ``.pnpmfile.cjs``, and the files the project's lifecycle scripts (``preinstall``,
``postinstall``, ``prepare``...) name (:mod:`pytest_mobilebench.runtime.install_inputs`); the Gradle wrapper,
settings and build files, ``gradle/`` (version catalogue); ``pubspec.yaml`` / ``pubspec.lock``; ``.nvmrc``. Nested ones
(workspaces, Gradle modules) count too. ``node_modules`` and ``.git`` are never read.

The install runs in a container (not ``docker build``): the checkout's manifests are put into
``/testbed`` through the API, the named volume ``mobilebench-pkgcache`` is mounted at
``/mobilebench-cache`` and npm / yarn / pnpm are pointed at it (``npm_config_cache``,
``YARN_CACHE_FOLDER``, ``npm_config_store_dir``), then the container is committed. The volume is not
part of the committed image, so the package cache survives across builds and instances without adding
a byte to any image. Gradle and pub keep their caches where the tools expect them (the dependencies
*are* those caches), so for them the layer shares the install but not a cache volume.

Deadlines (issue 13, item 5): the install is killed after ``deadline_s`` seconds, or after
``silence_s`` seconds without a line of output; either is ``InfraError("build_hung")`` with the log.

When the install fails with only the manifests present (a lifecycle script that needs the sources),
:func:`ensure_deps` returns None and the caller builds the instance image the classic way (under the lockfile's
memo, :func:`classic_memo`); the failed attempt's log is kept. A dependency this machine cannot fetch raises
``EnvironmentUnavailable`` and is remembered for the lockfile: no instance of it runs a full install again in
this run. Infra errors (daemon gone, disk full, hang) propagate.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import tarfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final


from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.daemon import host_url
from pytest_mobilebench.runtime.deadlines import shared_step, watch_output
from pytest_mobilebench.runtime.install_inputs import (
    INSTALL_INPUT_DIRS,
    INSTALL_INPUT_NAMES,
    lifecycle_files,
    scrub_secrets,
)
from pytest_mobilebench.runtime.install_log import REGISTRY_PROBE
from pytest_mobilebench.runtime.install_memo import failed_install, remembered, unavailable_memo
from pytest_mobilebench.runtime.reaper import ensure_reaper
from pytest_mobilebench.runtime.images import (
    LABEL_INPUTS,
    LABEL_LEVEL,
    LABEL_RUN,
    TESTBED,
    BuiltImage,
    ImageBuilder,
    content_hash,
    docker_name,
)
from pytest_mobilebench.runtime.owners import LABEL_OWNER, owner_label, session_labels
from pytest_mobilebench.states import InfraKind

__all__ = ["CACHE_MOUNT", "CACHE_VOLUME", "classic_memo", "deps_key", "ensure_deps", "manifest_files"]

#: named volume holding package-manager caches on every daemon
CACHE_VOLUME: Final[str] = "mobilebench-pkgcache"
CACHE_MOUNT: Final[str] = "/mobilebench-cache"

_NAMES: Final[frozenset[str]] = INSTALL_INPUT_NAMES
_DIRS: Final[tuple[str, ...]] = INSTALL_INPUT_DIRS
_SKIP: Final[frozenset[str]] = frozenset({"node_modules", ".git"})
_CACHE_ENV: Final[str] = (
    f"export npm_config_cache={CACHE_MOUNT}/npm YARN_CACHE_FOLDER={CACHE_MOUNT}/yarn "
    f"npm_config_store_dir={CACHE_MOUNT}/pnpm; "
    # a fresh volume is empty: the folders exist before any install, whichever tool runs first
    f"mkdir -p {CACHE_MOUNT}/npm {CACHE_MOUNT}/yarn {CACHE_MOUNT}/pnpm; "
)


def manifest_files(tree: Path) -> dict[str, bytes]:
    """``{posix path relative to tree: bytes}`` of the dependency manifests under ``tree`` (see module), rc files
    without credential lines, plus the files the lifecycle scripts name
    (:func:`~pytest_mobilebench.runtime.install_inputs.lifecycle_files`)."""
    found: dict[str, bytes] = {}
    stack = [tree]
    while stack:
        folder = stack.pop()
        for entry in sorted(folder.iterdir()):
            rel = entry.relative_to(tree).as_posix()
            if entry.is_symlink() or entry.name in _SKIP:
                continue
            if entry.is_dir():
                if entry.name in _DIRS:
                    found.update(
                        {
                            p.relative_to(tree).as_posix(): p.read_bytes()
                            for p in sorted(entry.rglob("*"))
                            if p.is_file() and not p.is_symlink()
                        }
                    )
                else:
                    stack.append(entry)
            elif entry.name in _NAMES:
                found[rel] = scrub_secrets(rel, entry.read_bytes())
    found.update(lifecycle_files(tree, found))
    return found


def classic_memo(builder: ImageBuilder, tree: Path, deps: BuiltImage | None) -> Path | None:
    """The lockfile memo an instance build of ``tree`` running its own install reads and writes
    (:func:`~pytest_mobilebench.runtime.install_memo.guarded`); None when the shared layer ``deps`` installed."""
    return None if deps is not None else unavailable_memo(builder.lock_dir, builder.run_id, manifest_files(tree))


def deps_key(env_image_id: str, install_command: str, files: Mapping[str, bytes]) -> str:
    """The dependency key (sha256 hex; formula in the module docstring)."""
    return content_hash(
        "deps",
        env_image_id,
        install_command,
        *(f"{p}\0{hashlib.sha256(d).hexdigest()}" for p, d in sorted(files.items())),
    )


def ensure_deps(
    builder: ImageBuilder,
    env: BuiltImage,
    tree: Path,
    install_command: str,
    *,
    repo: str,
    log_dir: Path | None = None,
    deadline_s: float = 3600,
    silence_s: float = 900,
) -> BuiltImage | None:
    """The dependency image for ``tree``'s manifests on ``env``; None when there is nothing to share
    (no install command, no manifest) or the install needs more than the manifests (classic build then).

    Raises:
        InfraError: ``build_hung`` (a deadline passed; log attached), ``disk_full``, ``daemon_unreachable``.
    """
    files = manifest_files(tree)
    if not install_command.strip() or not files:
        return None
    inputs = deps_key(env.image_id, install_command, files)
    tag = f"mobilebench/deps.{docker_name(repo)}:{inputs[:12]}"
    started = time.monotonic()
    found = _labelled(builder.client, tag, inputs)
    if found is None:
        builder.lock_dir.mkdir(parents=True, exist_ok=True)
        memo = unavailable_memo(builder.lock_dir, builder.run_id, files)
        with shared_step(builder.lock_dir / (re.sub(r"[^A-Za-z0-9._-]", "_", tag) + ".lock")):
            found = _labelled(builder.client, tag, inputs)
            if found is None and builder.hooks is not None:
                found = builder.hooks.supply(tag, inputs)
            if found is None:
                remembered(memo, builder.progress)  # raises: this run's install of that lockfile failed so
                log_path = (log_dir or builder.log_dir) / (tag.replace("/", "_").replace(":", "_") + ".build.log")
                found = _install_and_commit(
                    builder, env, files, install_command, tag, inputs, log_path, deadline_s, silence_s, memo
                )
                if found is None:
                    return None
                if builder.hooks is not None:
                    builder.hooks.added(tag, found)
                return BuiltImage(tag, found, built=True, seconds=time.monotonic() - started, log_path=log_path)
    if builder.hooks is not None:
        builder.hooks.used(found)
    return BuiltImage(tag, found, built=False, seconds=time.monotonic() - started)


def _labelled(client: Any, tag: str, inputs: str) -> str | None:
    import docker.errors

    try:
        info = client.api.inspect_image(tag)
    except docker.errors.NotFound:
        return None
    labels = (info.get("Config") or {}).get("Labels") or {}
    return str(info["Id"]) if labels.get(LABEL_INPUTS) == inputs else None


def _manifest_tar(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{TESTBED.strip('/')}/{path}")
            info.size, info.mtime = len(data), 0
            # gradlew and scripts a lifecycle script runs as ``./x.sh`` keep their execute bit (a ``#!`` line)
            info.mode = 0o755 if path.rsplit("/", 1)[-1] == "gradlew" or data.startswith(b"#!") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _ensure_cache_volume(api: Any) -> None:
    """Create the package-cache volume with :func:`session_labels` when it does not exist yet (a bind of
    a missing named volume would create it unlabelled, and a test session could not tell it was its own)."""
    import docker

    try:
        api.inspect_volume(CACHE_VOLUME)
    except docker.errors.NotFound:
        with contextlib.suppress(docker.errors.APIError):  # made meanwhile by another worker
            api.create_volume(CACHE_VOLUME, labels=session_labels())


def _install_and_commit(
    builder: ImageBuilder,
    env: BuiltImage,
    files: Mapping[str, bytes],
    install_command: str,
    tag: str,
    inputs: str,
    log_path: Path,
    deadline_s: float,
    silence_s: float,
    memo: Path,
) -> str | None:
    """Run the install in a container with the cache volume, commit it as ``tag``; None when it failed for
    want of the sources (:func:`failed_install` says which failures raise instead)."""

    api = builder.client.api
    log_path.parent.mkdir(parents=True, exist_ok=True)
    builder.progress(f"installing dependencies for {tag} (shared layer); log: {log_path}")
    _ensure_cache_volume(api)
    ensure_reaper(host_url(builder.client), owner_label())  # a killed process's install goes with it
    container = api.create_container(
        env.image_id,
        command=["/bin/bash", "-c", "set -e; " + _CACHE_ENV + REGISTRY_PROBE + install_command],
        working_dir=TESTBED,
        labels={LABEL_RUN: builder.run_id, LABEL_OWNER: owner_label()},
        host_config=api.create_host_config(binds={CACHE_VOLUME: {"bind": CACHE_MOUNT, "mode": "rw"}}),
    )["Id"]
    try:
        api.put_archive(container, "/", _manifest_tar(files))
        api.start(container)
        lines = watch_output(
            (chunk.decode("utf-8", "replace") for chunk in api.logs(container, stream=True, follow=True)),
            deadline_s=deadline_s,
            silence_s=silence_s,
            on_expiry=lambda: api.kill(container),
        )
        hung: InfraError | None = None
        with log_path.open("w", encoding="utf-8") as log:
            log.write(f"# tag {tag}\n# inputs {inputs}\n# files {sorted(files)}\n$ {install_command}\n")
            try:
                for line in lines:
                    log.write(line)
            except InfraError as exc:
                log.write(f"ERROR: {exc.message}\n")
                hung = exc
        if hung is not None:
            text = log_path.read_text(encoding="utf-8", errors="replace")
            raise InfraError(hung.kind, f"{hung.message} installing dependencies for {tag} (log: {log_path})", log=text)
        code = int(api.wait(container, timeout=60).get("StatusCode", 1))
        if code != 0:
            text = log_path.read_text(encoding="utf-8", errors="replace")
            if "no space left on device" in text.lower():
                raise InfraError(
                    InfraKind.DISK_FULL, f"installing dependencies for {tag}: no space left (log: {log_path})", log=text
                )
            failure = failed_install(text, f"installing dependencies for {tag} (exit {code}, log: {log_path})", memo)
            shown = "\n    ".join(failure.lines)
            builder.progress(
                f"{tag}: the install needs more than the manifests ({failure.describe()}, exit {code}); "
                f"building the classic way; the log says:\n    {shown}"
            )
            return None
        session = " ".join(f'{k}="{v}"' for k, v in session_labels().items())
        label = (
            f'LABEL {LABEL_INPUTS}={inputs} {LABEL_LEVEL}=deps {LABEL_RUN}={builder.run_id} {LABEL_OWNER}="" {session}'
        )
        changes = ['CMD ["bash"]', f"WORKDIR {TESTBED}", label]
        repository, _, name_tag = tag.rpartition(":")
        return str(api.commit(container, repository=repository, tag=name_tag, changes=changes)["Id"])
    finally:
        api.remove_container(container, force=True, v=False)
