"""The container runtime: one Docker container per workspace, from a layered instance image.

Flow of :meth:`DockerRuntime.prepare` (MobileDev-Bench SPEC section 1 "Environment images"; the same
base -> environment -> instance layering as SWE-bench's harness):

1. connect to the daemon (``InfraError("daemon_unreachable")`` when it does not answer);
2. make sure the Debian image exists (:func:`~pytest_mobilebench.runtime.baseimage.ensure_base_image`),
   then the base layer (:class:`~pytest_mobilebench.runtime.images.ImageBuilder`);
3. fetch the repository's bare mirror once per run (:class:`~pytest_mobilebench.runtime.repos.RepoCache`)
   and make a shallow (depth 1) checkout of the base commit on the host; infer its environment recipe;
4. ensure the environment and instance images (content-hash tags; reused when unchanged; per-tag file
   lock); dependencies are installed while building the instance image, where the network is on;
5. start a fresh container from the instance image, labelled ``mobilebench.run_id``,
   ``mobilebench.instance`` and ``mobilebench.owner`` (host:pid:process start time, for :meth:`sweep`).

Networking while tests run: the container is created on the default bridge and disconnected from it
before it starts, so it has only a loopback interface (the same isolation as ``network_mode="none"``).
Unlike ``none`` mode this lets a single command ask for the network (``run(..., network=True)``): the
bridge is connected for that command only and disconnected again afterwards.

Timeouts are enforced from the host: the command's output is read in a thread; when the wall-clock limit
passes, the whole container is killed (every process in it dies) and the result has ``timed_out``.
Infrastructure is named, never the candidate's fault (issue 7): an OOM event of any process in the
container (whatever the exit status) raises ``InfraError("oom_killed")``, a container stopped or restarted
from outside ``container_died``, a daemon that stops answering ``daemon_unreachable``, ENOSPC or a
writable layer past its limit ``disk_full``. Results come back only through the daemon (``get_archive``),
names checked by :mod:`pytest_mobilebench.runtime.channel`; containers run with every capability dropped,
``no-new-privileges`` and as the unprivileged user of the image when its recipe declares one
(``recipe.test_user``: the inferred Node, Gradle and Flutter images).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar, final

from pytest_mobilebench.runtime.agent_sandbox import AgentSandbox, open_sandbox
from pytest_mobilebench.runtime.base import InfraError, WorkspaceSpec
from pytest_mobilebench.runtime.baseimage import DEFAULT_BASE_IMAGE, cache_root
from pytest_mobilebench.runtime.checkout import export_tree, shallow_checkout
from pytest_mobilebench.runtime.daemon import (
    connect,
    daemon_clock_offset,
    docker_errors,
    host_url,
    parse_bytes,
    sweepable,
)
from pytest_mobilebench.runtime.deadlines import Deadlines, within
from pytest_mobilebench.runtime.reaper import ensure_reaper
from pytest_mobilebench.runtime.removals import drain
from pytest_mobilebench.runtime.deplayer import classic_memo, ensure_deps, manifest_files
from pytest_mobilebench.runtime.docker_workspace import DockerWorkspace
from pytest_mobilebench.runtime.hosts import host_key
from pytest_mobilebench.runtime.budget import remove_superseded
from pytest_mobilebench.runtime.images import LABEL_INSTANCE, LABEL_RUN, LABEL_USER, TESTBED
from pytest_mobilebench.runtime.images import CACHE_LEVELS, BuiltImage, ImageBuilder
from pytest_mobilebench.runtime.leases import Leases
from pytest_mobilebench.runtime.owners import LABEL_OWNER, owner_label
from pytest_mobilebench.runtime.recipe import EnvRecipeLike, NodePackages, RecipeFactory
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.runtime.docker_sandbox import DockerSandboxes
from pytest_mobilebench.runtime.sandbox import SandboxLimits, SandboxSpec
from pytest_mobilebench.runtime.setup_inputs import SetupInputs
from pytest_mobilebench.states import InfraKind

_Layer = TypeVar("_Layer", BuiltImage, BuiltImage | None)

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

    from pytest_mobilebench.runtime.egress import ModelForwarder

__all__ = [
    "DEFAULT_CA_BUNDLE",
    "DockerRuntime",
    "default_node_packages",
    "no_recipe",
    "sweep_dead_runs",
]

#: the host bundle injected into images by default (when the file exists)
DEFAULT_CA_BUNDLE: Final[Path] = Path("/etc/ssl/certs/ca-certificates.crt")
#: seconds a reading of the daemon's clock offset serves the workspaces started after it
_CLOCK_MAX_AGE_S: Final[float] = 60.0


def no_recipe(repo_dir: Path, spec: WorkspaceSpec) -> EnvRecipeLike:
    """The recipe factory of a runtime given none: the runtime names no framework, so the caller (a suite,
    :func:`pytest_mobilebench.frameworks.workspace_recipe`) must resolve recipes.

    Raises:
        InfraError("image_build_failed"): always, naming the instance.
    """
    raise InfraError(InfraKind.IMAGE_BUILD_FAILED, f"{spec.instance_id}: the runtime was given no recipe factory")


def _close(workspace: DockerWorkspace) -> None:
    """Remove the container of a workspace made after its caller gave up (:func:`.deadlines.within`)."""
    workspace.close()


def default_node_packages(recipe: EnvRecipeLike) -> Mapping[str, str]:
    """npm tarballs the host packs into the env build context: the recipe's own ``context_packages``
    (``{context file name: "npmpkg@version"}``; empty for a recipe that needs none)."""
    return dict(recipe.context_packages)


@final
class DockerRuntime:
    """Workspaces as containers from layered, content-hashed images.

    Args:
        run_id: labels containers and images of this run (``mobilebench.run_id``).
        cache_level: what :meth:`cleanup` keeps (SWE-bench's levels): ``"none"``, ``"base"``, ``"env"``
            (default) or ``"instance"``.
        force_rebuild: rebuild every image once in this run.
        ca_bundle: host CA bundle (PEM) injected into every image; default :data:`DEFAULT_CA_BUNDLE`
            (skipped silently when the host has none); ``None`` for none.
        mem_limit: container memory limit (docker units, ``"4g"``); swap is not added on top.
        cpus: CPU limit in CPUs (converted to ``nano_cpus``); ``nano_cpus`` sets it directly.
        pids_limit: maximum number of processes in the container; None for docker's default.
        disk_limit: bound of a container's writable layer (docker units, ``"10g"``); None for none.
        base_image: the Debian image under the base layer.
        repos: where repositories come from (default: ``RepoCache(run_id=run_id)``).
        recipe_factory: ``(host checkout, spec) -> recipe`` (:data:`~.recipe.RecipeFactory`), resolved by the
            caller (framework knowledge: :func:`pytest_mobilebench.frameworks.workspace_recipe`); default
            :func:`no_recipe`.
        node_packages: ``recipe -> {context file: "npmpkg@version"}``; default :func:`default_node_packages`.
        log_dir: default folder of ``<tag>.build.log`` files (``prepare(log_dir=...)`` overrides it).
        progress: receives progress lines of long builds (throttled).
        client: an already connected docker client (tests); default: from the environment.

    Raises:
        ValueError: unknown ``cache_level``; a ``ca_bundle`` given explicitly that is not a file.
    """

    name = "docker"

    def __init__(
        self,
        *,
        run_id: str = "adhoc",
        cache_level: str = "env",
        force_rebuild: bool = False,
        ca_bundle: Path | str | None = DEFAULT_CA_BUNDLE,
        mem_limit: str | None = "4g",
        cpus: float | None = None,
        nano_cpus: int | None = None,
        pids_limit: int | None = None,
        disk_limit: str | None = "10g",
        base_image: str = DEFAULT_BASE_IMAGE,
        repos: RepoCache | None = None,
        recipe_factory: RecipeFactory | None = None,
        node_packages: NodePackages | None = None,
        log_dir: Path | None = None,
        progress: Callable[[str], None] | None = None,
        client: docker.DockerClient | None = None,
        deadlines: Deadlines | None = None,
    ) -> None:
        if cache_level not in CACHE_LEVELS:
            raise ValueError(f"cache_level must be one of {CACHE_LEVELS}, got {cache_level!r}")
        self.run_id = run_id
        self.cache_level = cache_level
        self.force_rebuild = force_rebuild
        self.ca_bundle: Path | None = None
        if ca_bundle is not None:
            bundle = Path(ca_bundle)
            if bundle.is_file():
                self.ca_bundle = bundle
            elif bundle != DEFAULT_CA_BUNDLE:
                raise ValueError(f"ca_bundle {bundle} is not a file")
        self.mem_limit = mem_limit
        self.nano_cpus = nano_cpus if nano_cpus is not None else (int(cpus * 1e9) if cpus else None)
        self.pids_limit = pids_limit
        self.disk_limit = disk_limit
        self._quota: bool | None = None  # does the storage driver take a size quota? (asked on first start)
        self.base_image = base_image
        self.repos = repos or RepoCache(run_id=run_id)
        self.recipe_factory: RecipeFactory = recipe_factory or no_recipe
        self.node_packages: NodePackages = node_packages or default_node_packages
        self.log_dir = log_dir
        self.progress = progress
        if getattr(self.repos, "progress", "") is None:  # a damaged mirror healed is said where builds are
            self.repos.progress = progress
        self.deadlines = deadlines or Deadlines()
        self._client = client
        self._builder: ImageBuilder | None = None
        self._memo: dict[str, BuiltImage] = {}
        self._owner = owner_label()
        self._sandboxes: DockerSandboxes | None = None  # made on first use
        self._leases: Leases | None = None
        self._users: dict[str, str | None] = {}  # image id -> its test user (runtime._image_user)
        self._offset: tuple[float, float] | None = None  # (daemon clock offset s, asked at monotonic s)

    # ------------------------------------------------------------------------------------ plumbing

    @property
    def client(self) -> docker.DockerClient:
        """The connected docker client (connects on first use).

        Raises:
            InfraError("daemon_unreachable"): see :func:`connect`.
        """
        if self._client is None:
            self._client = connect()
        return self._client

    @property
    def builder(self) -> ImageBuilder:
        """The image builder for this runtime's options."""
        if self._builder is None:
            self._builder = ImageBuilder(
                self.client,
                run_id=self.run_id,
                base_image=self.base_image,
                ca_bundle=self.ca_bundle,
                force_rebuild=self.force_rebuild,
                log_dir=self.log_dir,
                lock_dir=cache_root() / "locks",
                progress=self.progress,
            )
            self._builder.build_deadline_s = self.deadlines.build_s
            self._builder.build_silence_s = self.deadlines.build_silence_s
        return self._builder

    @property
    def owner(self) -> str:
        """This process's owner label (``mobilebench.owner`` of its containers)."""
        return self._owner

    def agent_sandbox(
        self, spec: WorkspaceSpec, *, log_dir: Path | None = None, forwarder: ModelForwarder | None = None
    ) -> AgentSandbox:
        """An agent's sandbox of ``spec`` (:func:`pytest_mobilebench.runtime.agent_sandbox.open_sandbox`)."""
        return open_sandbox(self, spec, log_dir=log_dir, forwarder=forwarder)

    @property
    def leases(self) -> Leases:
        """This run's leases on the daemon's layers (:mod:`pytest_mobilebench.runtime.leases`)."""
        if self._leases is None:
            self._leases = Leases(
                cache_root() / "image-leases" / host_key(host_url(self.client)), self.run_id, self._owner
            )
        return self._leases

    # ------------------------------------------------------------------------------------- images

    def ensure_instance_image(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> BuiltImage:
        """THE instance layer: the repository at ``spec``'s base commit in ``/testbed`` with its
        dependencies installed, owned by the test user, baseline tagged (base, environment, dependency and
        instance images, built when missing or stale). Every consumer that needs "the instance at the base
        commit" (a candidate's workspace: :meth:`prepare`; an agent's sandbox; an export) starts its
        container from this image with :meth:`start`; the image is never written to, so each container
        begins from the same bytes.

        Memoised per process on (repo, base commit, environment): a further candidate of the instance
        (another model, a validation configuration) pays one image lookup. Each layer (base, environment,
        dependencies, instance) is leased for this run (:attr:`leases`) as soon as it is found or built, and
        looked up again once leased (:meth:`_held`): another run's clean-up keeps them while this run goes on.

        Raises:
            InfraError: ``daemon_unreachable``, ``clone_failed``, ``base_image_unavailable``,
                ``image_build_failed`` (log attached), ``disk_full``.
        """
        import docker.errors

        setup_commit = spec.environment_setup_commit
        memo_key = json.dumps(
            [spec.repo, spec.base_commit, dict(spec.environment), setup_commit], sort_keys=True, default=str
        )
        cached = self._memo.get(memo_key)
        if cached is not None:
            started = time.monotonic()
            try:
                if self.client.images.get(cached.tag).id == cached.image_id:
                    self.leases.take(cached.image_id)
                    return dataclasses.replace(cached, built=False, seconds=time.monotonic() - started, log_path=None)
            except docker.errors.ImageNotFound:
                pass
        builder = self.builder
        base = self._held(lambda: builder.ensure_base(log_dir=log_dir))
        commits = [spec.base_commit, *([setup_commit] if setup_commit else [])]
        mirror = self.repos.ensure(spec.repo, commits, url=spec.repo_url or None)
        with tempfile.TemporaryDirectory(prefix="mobilebench-checkout-") as tmp:
            tree = Path(tmp) / "tree"
            sha = export_tree(mirror, spec.base_commit, tree)
            inputs_tree, setup = _setup_tree(mirror, tree, sha, setup_commit, Path(tmp) / "setup")
            recipe = self.recipe_factory(tree, spec)
            env = self._held(
                lambda: builder.ensure_env(
                    recipe, spec.repo, node_packages=self.node_packages(recipe), base=base, log_dir=log_dir
                )
            )
            deps = self._held(
                lambda: ensure_deps(
                    builder,
                    env,
                    inputs_tree,
                    recipe.install_command,
                    repo=spec.repo,
                    log_dir=log_dir,
                    deadline_s=self.deadlines.install_s,
                    silence_s=self.deadlines.install_silence_s,
                )
            )
            own_install = setup is not None and deps is None  # the instance installs at the setup's inputs itself

            def checkout() -> Path:  # only when the instance image must be built
                shallow_checkout(mirror, sha, Path(tmp) / "testbed")
                if own_install:
                    setup.overlay(Path(tmp) / "testbed")
                return Path(tmp) / "testbed"

            instance = builder.ensure_instance(
                spec.instance_id,
                env,
                repo=spec.repo,
                base_commit=sha,
                install_command=setup.install_command(recipe.install_command)
                if own_install
                else recipe.install_command,
                checkout_dir=checkout,
                log_dir=log_dir,
                test_user=recipe.test_user,
                deps=deps,
                memo=classic_memo(builder, inputs_tree, deps),
                setup_key=setup.key if setup is not None else "",
            )
        self.leases.take(instance.image_id)
        self._memo[memo_key] = instance
        return instance

    def _held(self, ensure: Callable[[], _Layer]) -> _Layer:
        """``ensure()``'s layer, leased for this run and still there once leased.

        A layer found by its tag can be removed by another run's clean-up before this run builds on it (that
        run built it, and nothing held it yet): the lease is taken first, then the tag looked up again, and a
        layer gone in between is ensured (built) again. ``ensure()`` returning None (no dependency layer) is
        passed through.
        """
        import docker.errors

        layer = ensure()
        for attempt in range(3):
            if layer is None:
                return layer
            self.leases.take(layer.image_id)
            try:
                if attempt == 2 or self.client.api.inspect_image(layer.tag)["Id"] == layer.image_id:
                    return layer
            except docker.errors.ImageNotFound:
                pass
            layer = ensure()
        return layer

    # ---------------------------------------------------------------------------------- workspaces

    def prepare(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> DockerWorkspace:
        """A fresh, offline container of ``spec``'s instance image, ready at ``/testbed``.

        Raises:
            InfraError: see :meth:`ensure_instance_image`; ``disk_full`` when the container cannot be
                created for lack of space; ``image_timeout`` / ``create_timeout`` past the image / create
                phase's deadline (``deadlines.image_s`` / ``create_s``, :func:`~.deadlines.within`).
        """
        with docker_errors(self.client, spec.instance_id, "preparing the instance image"):
            image = within(
                self.deadlines.image_s,
                InfraKind.IMAGE_TIMEOUT,
                f"{spec.instance_id}: making its image",
                lambda: self.ensure_instance_image(spec, log_dir=log_dir),
            )
        return within(
            self.deadlines.create_s,
            InfraKind.CREATE_TIMEOUT,
            f"{spec.instance_id}: creating its container from {image.tag}",
            lambda: self.start(image, spec.instance_id),
            late=_close,
        )

    def sandbox(self, spec: SandboxSpec, instance_id: str, *, log_dir: Path | None = None) -> Any:
        """A fresh build sandbox of ``spec``: this runtime is a
        :class:`~pytest_mobilebench.runtime.sandbox.SandboxRuntime`; see that module."""
        if self._sandboxes is None:
            self._sandboxes = DockerSandboxes(self)
        return self._sandboxes.open(spec, instance_id, log_dir=log_dir)

    def with_limits(self, limits: SandboxLimits) -> DockerRuntime:
        """A sibling runtime (same client, run id, cache level, CA bundle, base image, progress, deadlines) whose
        containers carry ``limits`` instead of this runtime's (a build sandbox's)."""
        return DockerRuntime(
            client=self.client,
            run_id=self.run_id,
            cache_level=self.cache_level,
            ca_bundle=self.ca_bundle,
            mem_limit=limits.mem,
            cpus=limits.cpus,
            pids_limit=limits.pids,
            disk_limit=limits.disk,
            base_image=self.base_image,
            progress=self.progress,
            deadlines=self.deadlines,
        )

    def start(
        self,
        image: BuiltImage,
        instance_id: str,
        *,
        network_mode: str | None = None,
        labels: Mapping[str, str] | None = None,
        cap_add: tuple[str, ...] = (),
    ) -> DockerWorkspace:
        """Create and start a labelled, offline, confined container from an already built ``image``.

        ``network_mode``: None (default) creates it on the bridge and disconnects it before it starts (a
        command may then ask for the network); ``"none"`` or ``"container:<id>"`` fixes its network for
        good (the agent sandboxes of :mod:`~pytest_mobilebench.runtime.agent_sandbox`). ``labels`` are added;
        ``cap_add`` adds capabilities that only the harness's root execs hold (the test user's have none).

        Confinement (issue 7, item 3): the image's :data:`~pytest_mobilebench.runtime.images.LABEL_USER`
        when it has one (else root), every capability dropped, ``no-new-privileges``, the memory / CPU /
        process limits, and the writable layer bounded by ``disk_limit``: a ``storage_opt`` quota where
        the daemon's storage driver has one, else the workspace kills the run when the layer outgrows it.

        Raises:
            InfraError: ``daemon_unreachable``, ``disk_full``, ``docker_error``.
        """
        import docker.errors

        client = self.client
        with docker_errors(client, instance_id, f"starting a container from {image.tag}"):
            user = self._image_user(image.image_id)
            bridge = bool(client.api.networks(names=["bridge"]))
            options = self._container_options(instance_id, bridge=bridge)
            options["labels"] = {**options["labels"], **(labels or {})}
            options["cap_add"] = [*options["cap_add"], *cap_add]
            if network_mode is not None:
                options["network_mode"] = network_mode
            ensure_reaper(host_url(client), self._owner)  # this process killed: its containers go in seconds
            container = self._create(image, options)
            try:
                # offline while tests run: leave the default bridge before the first process starts
                # (a daemon without a bridge network, --bridge=none, created it offline already)
                if network_mode is None and bridge:
                    client.api.disconnect_container_from_network(container.id, "bridge", force=True)
                container.start()
            except BaseException:
                with contextlib.suppress(docker.errors.DockerException):
                    container.remove(force=True)
                raise
        limit = None if self._quota or not self.disk_limit else parse_bytes(self.disk_limit)
        return DockerWorkspace(
            client,
            container,
            image,
            instance_id,
            disk_limit_bytes=limit,
            user=user,
            clock_offset=self._clock_offset(),
            read_deadline_s=self.deadlines.grade_s,
        )

    def _image_user(self, image_id: str) -> str | None:
        """The image's :data:`~pytest_mobilebench.runtime.images.LABEL_USER` (None: root), asked once per image id
        (an id names the image's content, labels included)."""
        if image_id not in self._users:
            labels = self.client.api.inspect_image(image_id).get("Config", {}).get("Labels") or {}
            self._users[image_id] = labels.get(LABEL_USER)
        return self._users[image_id]

    def _clock_offset(self) -> float:
        """Seconds the daemon's clock is ahead of this machine's (:func:`daemon_clock_offset`), asked again
        when the last answer is older than :data:`_CLOCK_MAX_AGE_S`."""
        now = time.monotonic()
        if self._offset is None or now - self._offset[1] > _CLOCK_MAX_AGE_S:
            self._offset = (daemon_clock_offset(self.client), now)
        return self._offset[0]

    def _container_options(self, instance_id: str, *, bridge: bool = True) -> dict[str, Any]:
        """Options of a test container: root's ``sleep infinity`` under docker-init (commands run as the
        image's test user through each exec, :class:`DockerWorkspace`), no capabilities but root's SETUID / SETGID (to
        drop to the test user), no new privileges."""
        options: dict[str, Any] = {
            "command": ["sleep", "infinity"],
            "detach": True,
            "init": True,
            "working_dir": TESTBED,
            "labels": {LABEL_RUN: self.run_id, LABEL_INSTANCE: instance_id, LABEL_OWNER: self._owner},
            "cap_drop": ["ALL"],
            # only the harness's root execs hold these: they hand a result channel to the test user
            # (DockerWorkspace.run_with_channel); the test user's processes have no capabilities and,
            # under no-new-privileges, gain none
            "cap_add": ["SETUID", "SETGID"],
            "security_opt": ["no-new-privileges"],
        }
        if not bridge:  # a daemon without a bridge network (--bridge=none)
            options["network_mode"] = "none"
        if self.mem_limit:
            options["mem_limit"] = self.mem_limit
            options["memswap_limit"] = self.mem_limit
        if self.nano_cpus:
            options["nano_cpus"] = self.nano_cpus
        if self.pids_limit:
            options["pids_limit"] = self.pids_limit
        return options

    def _create(self, image: BuiltImage, options: dict[str, Any]) -> Container:
        """Create the container, with a ``storage_opt`` size quota when the daemon supports one (asked once)."""
        import docker.errors

        if self.disk_limit and self._quota is not False:
            try:
                container = self.client.containers.create(
                    image.image_id, storage_opt={"size": self.disk_limit}, **options
                )
                self._quota = True
                return container
            except docker.errors.APIError as exc:
                if "storage-opt" not in str(exc) and "storage_opt" not in str(exc):
                    raise
                self._quota = False  # e.g. overlay2 over ext4: "supported only for overlay over xfs with 'pquota'"
        return self.client.containers.create(image.image_id, **options)

    # -------------------------------------------------------------------------------------- hygiene

    def sweep(self, run_id: str | None = None) -> list[str]:
        """Remove leftover containers whose owning run is dead (and those of ``run_id`` when given).

        A container's owner is the ``mobilebench.owner`` label (``host:pid:start time``); containers of
        live processes (other xdist workers, other sessions) and of other hosts are kept. A container
        with a mobilebench label but no owner (a build step inheriting its parent image's labels, left
        by a builder or daemon that died) is removed once stopped and older than 10 minutes.

        Returns:
            The removed container ids.
        """
        removed: list[str] = []
        # low-level listing (no per-container re-read that a concurrent removal could break)
        for entry in self.client.api.containers(all=True):  # unlabelled build steps too (daemon.sweepable)
            if sweepable(entry, own=self._owner, run_id=run_id):
                with contextlib.suppress(Exception):  # gone already, or removal in progress elsewhere
                    self.client.api.remove_container(entry["Id"], force=True, v=True)
                    removed.append(str(entry["Id"]))
        return removed

    def cleanup(self, cache_level: str | None = None, *, clean: bool = False) -> list[str]:
        """Wait for this process's background removals (:func:`~pytest_mobilebench.runtime.removals.drain`), remove
        its containers and the images above ``cache_level`` (SWE-bench semantics),
        but for those another live run holds a lease on (their removal is owed: the last run out removes
        them); then release this run's leases and remove the owed images no run holds any more.

        Args:
            cache_level: default: the runtime's ``cache_level``.
            clean: also remove such images that existed before this run (default: only those this
                run built, by their ``mobilebench.run_id`` label).

        Returns:
            Removed container ids, then removed image tags.

        Raises:
            ValueError: unknown ``cache_level``.
        """
        import docker.errors

        drain()  # removals handed to the background first: none of them races the listing below
        removed: list[str] = []
        for entry in self.client.api.containers(all=True, filters={"label": f"{LABEL_OWNER}={self._owner}"}):
            with contextlib.suppress(docker.errors.NotFound):
                self.client.api.remove_container(entry["Id"], force=True, v=True)
                removed.append(str(entry["Id"]))
        leases = self.leases
        removed += self.builder.remove_images(
            keep_level=cache_level or self.cache_level,
            only_run=None if clean else self.run_id,
            spare=leases.held_elsewhere,
        )
        removed += remove_superseded(self.client, spare=leases.held_elsewhere)  # tags a later build moved on
        removed += remove_superseded(self.client, spare=leases.held_elsewhere)
        for image_id in leases.settle():  # owed by runs that ended while this one used them
            try:
                self.client.api.remove_image(image_id, force=False, noprune=False)
                removed.append(image_id)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # still used by a container: owed to the next clean-up
                    raise
                continue
            leases.forget(image_id)
        return removed


def sweep_dead_runs(timeout_s: float = 3) -> list[str]:
    """Sweep the containers of dead runs when a daemon answers within ``timeout_s`` (else nothing).

    Called once per run by the controller (the Docker provider's run-level sweep), so leftovers are removed even
    when every result of the run comes from the cache and no runtime is ever made. Returns the removed container ids.
    """
    try:
        client = connect(timeout_s=timeout_s)
    except InfraError:
        return []
    try:
        return DockerRuntime(client=client, ca_bundle=None).sweep()
    except Exception:  # noqa: BLE001 - housekeeping never stops a run
        return []
    finally:
        client.close()


def _setup_tree(
    mirror: Path, tree: Path, base_sha: str, setup_commit: str | None, dest: Path
) -> tuple[Path, SetupInputs | None]:
    """``(the tree the install inputs come from, the two commits' inputs)``: ``(tree, None)`` when there is no
    setup commit or it is the base; else the setup commit exported into ``dest`` and its :class:`SetupInputs`.

    Raises:
        InfraError("clone_failed"): the setup commit cannot be read from ``mirror``.
    """
    if not setup_commit:
        return tree, None
    setup_sha = export_tree(mirror, setup_commit, dest)
    if setup_sha == base_sha:
        return tree, None
    return dest, SetupInputs(base=manifest_files(tree), setup=manifest_files(dest))
