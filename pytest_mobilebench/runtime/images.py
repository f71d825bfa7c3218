"""Layered Docker images for the container runtime: base -> environment -> instance.

Tags (content-addressed, so an unchanged input reuses the image and a changed one builds a new tag):

- base: ``mobilebench/base:<h12>`` with ``h = sha256(base Dockerfile, id of the Debian image, CA bundle)``:
  the Debian image + ``git ca-certificates patch python3 build-essential`` + the host's CA bundle.
- environment: ``mobilebench/env.<repo slug>:<h12>`` with ``h =`` :func:`~.dockerfiles.env_key` (the recipe's
  Dockerfile, context files and packed packages: not the install command) built from the recipe's Dockerfile
  (``ARG BASE_IMAGE`` / ``FROM ${BASE_IMAGE}``) on top of the base image; one per repository and toolchain.
- instance: ``mobilebench/inst.<instance id>:<h12>`` with
  ``h = sha256(env tag, repo, base commit, install command)``: the repository at its base commit in
  ``/testbed`` (with its ``.git``) and its dependencies installed.

The Dockerfiles' text is :mod:`pytest_mobilebench.runtime.dockerfiles`. Layering as in MobileDev-Bench (SPEC
section 1, "Environment images") and SWE-bench's harness.
Beyond the tag, every image carries the label ``mobilebench.inputs`` = the full hash of its inputs
*including its parent's image id*; a tag whose label does not match (parent rebuilt, tag prefix
collision) is rebuilt. A :class:`filelock.FileLock` per tag makes concurrent builders (xdist workers)
build once: the second waits, re-checks and reuses.

CA bundle: the host's bundle is copied into every base image
(``/usr/local/share/ca-certificates/mobilebench-host-ca.crt``, then ``update-ca-certificates``) and
``NODE_EXTRA_CA_CERTS`` / ``REQUESTS_CA_BUNDLE`` / ``SSL_CERT_FILE`` / ``PIP_CERT`` / ``CURL_CA_BUNDLE``
/ ``GIT_SSL_CAINFO`` point at the system bundle, so npm, pip, apt, curl, git and Gradle (through
``ca-certificates-java`` when a JDK comes from apt) work behind a TLS-intercepting proxy.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Protocol, final

from pytest_mobilebench.runtime.naming import content_hash, docker_name
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.baseimage import DEFAULT_BASE_IMAGE, cache_root, ensure_base_image
from pytest_mobilebench.runtime.deadlines import Deadlines, close_stream, shared_step, watch_output
from pytest_mobilebench.runtime.dockerfiles import BASELINE_REF, BASELINE_SCRIPT, BUILD_STEP_MARK, CA_NAME
from pytest_mobilebench.runtime.dockerfiles import LABEL_USER, TESTBED, base_dockerfile, env_key
from pytest_mobilebench.runtime.dockerfiles import instance_dockerfile, labelled_dockerfile
from pytest_mobilebench.runtime.install_memo import guarded, instance_install_failed
from pytest_mobilebench.runtime.owners import LABEL_OWNER, owner_label, session_labels
from pytest_mobilebench.runtime.packs import npm_pack
from pytest_mobilebench.runtime.recipe import (
    HOST_CA_CONTEXT_FILE,
    TEST_USER,
    EnvRecipeLike,
    UserHandover,
)
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    import docker

__all__ = [
    "BASELINE_REF",
    "CACHE_LEVELS",
    "HOOKS_ATTR",
    "BUILD_STEP_MARK",
    "LABEL_BUILD",
    "LABEL_INPUTS",
    "LABEL_LEVEL",
    "LABEL_RUN",
    "LABEL_USER",
    "TEST_USER",
    "TESTBED",
    "BuiltImage",
    "EnvRecipeLike",
    "ImageHooks",
    "ImageBuilder",
    "npm_pack",
]

#: SWE-bench's cache levels, from keeping nothing to keeping every image
CACHE_LEVELS: Final[tuple[str, ...]] = ("none", "base", "env", "instance")

LABEL_INPUTS: Final[str] = "mobilebench.inputs"
LABEL_LEVEL: Final[str] = "mobilebench.level"
LABEL_RUN: Final[str] = "mobilebench.run_id"
#: the benchmark instance a container serves (workspaces, agent sandboxes and their relays)
LABEL_INSTANCE: Final[str] = "mobilebench.instance"
#: the tag a build-step container was building (its leftovers are found by the sweep)
LABEL_BUILD: Final[str] = "mobilebench.build"

_PROGRESS_INTERVAL_S: Final[float] = 2.0
_ANSI: Final[re.Pattern[str]] = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

Progress = Callable[[str], None]

#: attribute of a docker client carrying its :class:`ImageHooks` (set by ``runtime.hosts.attach_policy``)
HOOKS_ATTR: Final[str] = "mobilebench_image_hooks"


class ImageHooks(Protocol):
    """Per-daemon image policy (issue 13; :class:`pytest_mobilebench.runtime.hosts.ImagePolicy`):
    ``supply`` a missing image from a registry or peer daemon (its id, or None to build), note an image
    ``used`` or ``added``, restate a build error (``failed``: the disk budget)."""

    def supply(self, tag: str, inputs: str | None) -> str | None: ...  # noqa: D102
    def used(self, image_id: str) -> None: ...  # noqa: D102
    def added(self, tag: str, image_id: str) -> None: ...  # noqa: D102
    def failed(self, error: InfraError) -> InfraError: ...  # noqa: D102


@dataclasses.dataclass(frozen=True)
class BuiltImage:
    """An image the builder ensured.

    Attributes:
        tag: ``repository:tag``.
        image_id: ``sha256:...``.
        built: True when this call built it, False when an existing image was reused.
        seconds: wall-clock seconds spent in this call (waiting for another builder's lock included).
        log_path: the build log written for it (``<log_dir>/<tag>.build.log``), None when reused.
    """

    tag: str
    image_id: str
    built: bool
    seconds: float
    log_path: Path | None = None


def _tar_add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def _is_disk_full(text: str) -> bool:
    return "no space left on device" in text.lower() or "enospc" in text.lower()


@final
class ImageBuilder:
    """Ensures base, environment and instance images exist; builds what is missing or stale.

    Args:
        client: connected docker client.
        run_id: recorded as label ``mobilebench.run_id`` on images this run builds.
        base_image: the Debian image under everything (made by :func:`ensure_base_image` if absent).
        ca_bundle: host CA bundle injected into the base layer; None -> an empty file in its place (the Dockerfile
            COPY still finds one).
        force_rebuild: rebuild every image once in this run (images built by this run are reused).
        log_dir: where ``<tag>.build.log`` files go (``/`` and ``:`` in tags become ``_``);
            default ``<cache>/build-logs``.
        lock_dir: where per-tag lock files go; default ``<cache>/locks``.
        progress: receives build output lines, at most one every 2 s (plus step headers).
    """

    def __init__(
        self,
        client: docker.DockerClient,
        *,
        run_id: str = "adhoc",
        base_image: str = DEFAULT_BASE_IMAGE,
        ca_bundle: Path | None = None,
        force_rebuild: bool = False,
        log_dir: Path | None = None,
        lock_dir: Path | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.base_image = base_image
        self.ca_bundle = ca_bundle
        self.force_rebuild = force_rebuild
        self.log_dir = log_dir or cache_root() / "build-logs"
        self.lock_dir = lock_dir or cache_root() / "locks"
        self.progress: Progress = progress or (lambda _line: None)
        self.hooks: ImageHooks | None = getattr(client, HOOKS_ATTR, None)
        #: a build running longer, or silent longer, is killed as ``build_hung`` (runtime.deadlines)
        self.build_deadline_s, self.build_silence_s = Deadlines().build_s, Deadlines().build_silence_s

    # ---------------------------------------------------------------------------------------- layers

    def ensure_base(self, *, log_dir: Path | None = None) -> BuiltImage:
        """The base layer (``mobilebench/base:<h12>``).

        Raises:
            InfraError: ``base_image_unavailable``, ``image_build_failed``, ``disk_full``.
        """
        if self.hooks is not None:
            self.hooks.supply(self.base_image, None)
        debian_id = ensure_base_image(self.client, self.base_image, progress=self.progress)
        ca = self.ca_bundle.read_bytes() if self.ca_bundle is not None else b""
        dockerfile = base_dockerfile()
        inputs = content_hash("base", dockerfile, debian_id, ca)
        tag = f"mobilebench/base:{inputs[:12]}"

        def context(tar: tarfile.TarFile) -> None:
            _tar_add_bytes(tar, CA_NAME, ca)

        return self._ensure(tag, "base", inputs, dockerfile, context, {"BASE_IMAGE": self.base_image}, log_dir)

    def ensure_env(
        self,
        recipe: EnvRecipeLike,
        repo: str,
        *,
        node_packages: Mapping[str, str] | None = None,
        base: BuiltImage | None = None,
        log_dir: Path | None = None,
    ) -> BuiltImage:
        """The environment layer for ``repo`` (``mobilebench/env.<slug>:<env_key()[:12]>``).

        Args:
            recipe: the environment recipe (Dockerfile, context files, install command).
            repo: ``owner/name``, used for the image name.
            node_packages: ``{context file name: "npmpkg@version"}`` packed on the host with
                :func:`npm_pack` and added to the build context under that name.
            base: the base layer when already ensured.
            log_dir: where this build's log goes (default: the builder's ``log_dir``).

        Raises:
            InfraError: ``image_build_failed`` (with the build log), ``disk_full``.
        """
        base = base or self.ensure_base(log_dir=log_dir)
        packages = dict(node_packages or {})
        files = {name: _as_bytes(data) for name, data in recipe.context_files.items()}
        # every environment Dockerfile may COPY the host CA bundle (runtime.recipe.HOST_CA_CONTEXT_FILE)
        files.setdefault(HOST_CA_CONTEXT_FILE, self.ca_bundle.read_bytes() if self.ca_bundle is not None else b"")
        key = env_key(recipe.dockerfile, packages, files)
        inputs = content_hash("env", key, base.image_id)
        tag = f"mobilebench/env.{docker_name(repo)}:{key[:12]}"
        packed = {
            name: npm_pack(spec, cache_root() / "npm-pack", progress=self.progress) for name, spec in packages.items()
        }

        def context(tar: tarfile.TarFile) -> None:
            for name, data in sorted(files.items()):
                _tar_add_bytes(tar, name, data, 0o755 if name.endswith(".sh") else 0o644)
            for name, path in sorted(packed.items()):
                tar.add(str(path), arcname=name)

        return self._ensure(tag, "env", inputs, recipe.dockerfile, context, {"BASE_IMAGE": base.tag}, log_dir)

    def ensure_instance(
        self,
        instance_id: str,
        env: BuiltImage,
        *,
        repo: str,
        base_commit: str,
        install_command: str,
        checkout_dir: Path | Callable[[], Path],
        log_dir: Path | None = None,
        test_user: UserHandover | None = None,
        deps: BuiltImage | None = None,
        memo: Path | None = None,
        setup_key: str = "",
    ) -> BuiltImage:
        """The instance layer (``mobilebench/inst.<id>:<h12>``).

        Args:
            instance_id: benchmark instance id (lower-cased into the image name).
            env: the environment layer.
            repo, base_commit, install_command: hashed into the tag.
            checkout_dir: the repository at ``base_commit`` with a self-contained ``.git`` (copied into
                the build context as ``testbed/`` only when a build is needed), or a function making
                it, called only then.
            log_dir: where this build's log goes (default: the builder's ``log_dir``).
            test_user: the recipe's hand-over to :data:`TEST_USER`, or None: root (see :func:`instance_dockerfile`).
            deps: the shared dependency layer (:func:`pytest_mobilebench.runtime.deplayer.ensure_deps`):
                the image starts from it and skips ``install_command``, which it already ran.
            memo: the lockfile's memo of this run, for a build running ``install_command`` itself (:func:`.guarded`).
            setup_key: the content key of the install inputs of an ``environment_setup_commit`` other than the
                base (:attr:`~pytest_mobilebench.runtime.setup_inputs.SetupInputs.key`), hashed into the tag;
                empty: the base's own inputs (the tag is then what it always was).

        Raises:
            InfraError: ``image_build_failed`` (the install command failed: log attached), ``disk_full``.
        """
        parent = deps or env
        dockerfile = instance_dockerfile(parent.tag, "" if deps else install_command, test_user=test_user)
        tag_hash = content_hash(env.tag, repo, base_commit, install_command, *([setup_key] if setup_key else []))
        inputs = content_hash("instance", tag_hash, parent.image_id, dockerfile)
        tag = f"mobilebench/inst.{docker_name(instance_id)}:{tag_hash[:12]}"

        def context(tar: tarfile.TarFile) -> None:
            folder = checkout_dir if isinstance(checkout_dir, Path) else checkout_dir()
            tar.add(str(folder), arcname="testbed")
            _tar_add_bytes(tar, "mobilebench-baseline.sh", BASELINE_SCRIPT.encode("utf-8"), 0o755)

        exists = memo is not None and self._existing(tag, inputs) is not None
        ensure = lambda: self._ensure(tag, "instance", inputs, dockerfile, context, {}, log_dir)  # noqa: E731
        return guarded(memo, exists, ensure, self.progress)

    # ------------------------------------------------------------------------------------ machinery

    def _existing(self, tag: str, inputs: str) -> str | None:
        import docker.errors

        try:
            image = self.client.images.get(tag)
        except docker.errors.ImageNotFound:
            return None
        labels = image.labels or {}
        if labels.get(LABEL_INPUTS) != inputs:
            return None
        if self.force_rebuild and labels.get(LABEL_RUN) != self.run_id:
            return None
        return str(image.id)

    def _ensure(
        self,
        tag: str,
        level: str,
        inputs: str,
        dockerfile: str,
        add_context: Callable[[tarfile.TarFile], None],
        buildargs: Mapping[str, str],
        log_dir: Path | None,
    ) -> BuiltImage:
        started = time.monotonic()
        existing = self._existing(tag, inputs)
        if existing is not None:
            if self.hooks is not None:
                self.hooks.used(existing)
            return BuiltImage(tag, existing, built=False, seconds=time.monotonic() - started)
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        with shared_step(self.lock_dir / (re.sub(r"[^A-Za-z0-9._-]", "_", tag) + ".lock")):
            existing = self._existing(tag, inputs)
            if existing is None and self.hooks is not None and not self.force_rebuild:
                existing = self.hooks.supply(tag, inputs)
            if existing is not None:
                return BuiltImage(tag, existing, built=False, seconds=time.monotonic() - started)
            try:
                log_path = self._build(tag, level, inputs, dockerfile, add_context, buildargs, log_dir or self.log_dir)
            except InfraError as exc:
                raise (self.hooks.failed(exc) if self.hooks is not None else exc) from exc
            image_id = str(self.client.images.get(tag).id)
            if self.hooks is not None:
                self.hooks.added(tag, image_id)
        return BuiltImage(tag, image_id, built=True, seconds=time.monotonic() - started, log_path=log_path)

    def _build(
        self,
        tag: str,
        level: str,
        inputs: str,
        dockerfile: str,
        add_context: Callable[[tarfile.TarFile], None],
        buildargs: Mapping[str, str],
        log_dir: Path,
    ) -> Path:
        import docker.errors
        import requests

        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / (tag.replace("/", "_").replace(":", "_") + ".build.log")
        self.progress(f"building {tag} ({level} layer); log: {log_path}")
        with tempfile.TemporaryFile() as ctx, log_path.open("w", encoding="utf-8") as log:
            with tarfile.open(fileobj=ctx, mode="w") as tar:
                # every build-step container carries the run's labels from its first step (the sweep finds it),
                # and every step's image its level: a build killed early leaves images remove_images finds
                step_labels = {LABEL_RUN: self.run_id, LABEL_OWNER: owner_label(), LABEL_BUILD: tag, LABEL_LEVEL: level}
                _tar_add_bytes(tar, "Dockerfile", labelled_dockerfile(dockerfile, step_labels).encode("utf-8"))
                add_context(tar)
            ctx.seek(0)
            log.write(f"# tag {tag}\n# inputs {inputs}\n# build args {dict(buildargs)}\n{dockerfile}\n# ---\n")
            error: str | None = None
            hung = False
            try:
                # on expiry the build's connection is closed: the daemon cancels a build whose client left
                stream = self._stream_build(ctx, tag, level, inputs, buildargs)
                for line in watch_output(
                    stream,
                    deadline_s=self.build_deadline_s,
                    silence_s=self.build_silence_s,
                    on_expiry=lambda: close_stream(stream),
                ):
                    log.write(line + "\n")
                    if line.startswith("ERROR: "):
                        error = line[len("ERROR: ") :]
            except (docker.errors.APIError, requests.RequestException) as exc:
                error = str(exc)
                log.write(f"ERROR: {error}\n")
            except InfraError as exc:  # a deadline of runtime.deadlines passed
                error, hung = exc.message, True
                log.write(f"ERROR: {error}\n")
        if error is not None:
            text = log_path.read_text(encoding="utf-8", errors="replace")
            kind = (
                InfraKind.DISK_FULL
                if _is_disk_full(error) or _is_disk_full(text[-4000:])
                else InfraKind.IMAGE_BUILD_FAILED
            )
            kind = InfraKind.BUILD_HUNG if hung else kind
            if kind == InfraKind.IMAGE_BUILD_FAILED and level == "instance":  # the install's own lines, not RUN's
                instance_install_failed(text, tag, log_path, error)
            raise InfraError(kind, f"building {tag} failed: {error.strip()[:500]} (log: {log_path})", log=text)
        return log_path

    def _stream_build(
        self, ctx: IO[bytes], tag: str, level: str, inputs: str, buildargs: Mapping[str, str]
    ) -> Iterator[str]:
        """Yield the build's output lines; a failure becomes a line ``ERROR: <message>``."""
        last_progress = 0.0
        stream = self.client.api.build(
            fileobj=ctx,
            custom_context=True,
            tag=tag,
            buildargs=dict(buildargs),
            # the image keeps no owner: a container made from it later names its own (or none)
            labels={
                LABEL_INPUTS: inputs,
                LABEL_LEVEL: level,
                LABEL_RUN: self.run_id,
                LABEL_OWNER: "",
                **session_labels(),
            },
            rm=True,
            forcerm=True,
            nocache=self.force_rebuild,
            decode=True,
        )
        pending = ""
        for chunk in stream:
            chunk = dict(chunk) if isinstance(chunk, dict) else {"stream": str(chunk)}
            if "error" in chunk or "errorDetail" in chunk:
                detail: Any = chunk.get("errorDetail") or {}
                message = str(chunk.get("error") or detail.get("message") or chunk)
                yield "ERROR: " + message
                continue
            text = str(chunk.get("stream") or chunk.get("status") or "")
            if not text:
                continue
            pending += text
            while "\n" in pending:
                line, pending = pending.split("\n", 1)
                line = _ANSI.sub("", line).rstrip("\r")
                yield line
                now = time.monotonic()
                if line.startswith("Step ") or now - last_progress >= _PROGRESS_INTERVAL_S:
                    last_progress = now
                    self.progress(f"[{tag}] {line}")
        if pending:
            yield pending

    # ------------------------------------------------------------------------------------- cleanup

    def remove_images(
        self, *, keep_level: str, only_run: str | None, spare: Callable[[str], bool] | None = None
    ) -> list[str]:
        """Remove mobilebench images of levels above ``keep_level`` (see :data:`CACHE_LEVELS`).

        Args:
            keep_level: ``none`` removes base, env and instance images; ``base`` keeps base; ``env``
                keeps base and env; ``instance`` removes nothing.
            only_run: when given, only images built by that run id are removed (SWE-bench keeps images
                that existed before the run unless told to clean).
            spare: ``image id -> True`` keeps that image (another run uses it: ``Leases.held_elsewhere``).

        Returns:
            The removed tags. Images still used by a container are skipped.

        Raises:
            ValueError: unknown ``keep_level``.
        """
        import docker.errors

        if keep_level not in CACHE_LEVELS:
            raise ValueError(f"cache_level must be one of {CACHE_LEVELS}, got {keep_level!r}")
        keep_rank = CACHE_LEVELS.index(keep_level)
        removed: list[str] = []
        # instance first, then env, then base: children before parents; shared dependency layers
        # (runtime.deplayer) go with the instance level
        for level in ("instance", "deps", "env", "base"):
            if CACHE_LEVELS.index("instance" if level == "deps" else level) <= keep_rank:
                continue
            filters: dict[str, Any] = {"label": [f"{LABEL_LEVEL}={level}"]}
            if only_run is not None:
                filters["label"].append(f"{LABEL_RUN}={only_run}")
            # the low-level listing: the high-level one re-reads each image and fails on one that a
            # concurrent cleanup (another xdist worker) removed in between
            for image in self.client.api.images(filters=filters):
                if spare is not None and spare(str(image["Id"])):
                    continue
                tags = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"]
                for tag in tags or [image["Id"]]:
                    try:
                        self.client.images.remove(tag, noprune=False)
                        removed.append(tag)
                    except docker.errors.ImageNotFound:
                        continue
                    except docker.errors.APIError as exc:
                        if exc.status_code == 409:  # used by a container
                            continue
                        raise
        return removed


def _as_bytes(data: bytes | str | os.PathLike[str]) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    return Path(data).read_bytes()
