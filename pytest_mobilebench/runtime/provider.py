"""Where candidates' code runs: runtime providers, registered by name, and the per-process runtime source.

A *provider* makes :class:`~pytest_mobilebench.runtime.base.Runtime` objects (workspace factories) of one
kind: ``"docker"`` (a container per workspace) and ``"local"`` (a git work tree on this host, for trusted
code) are built in; a plugin or a ``conftest.py`` adds others (a Kubernetes pod, a cloud sandbox, a macOS
host) through the ``pytest_mobilebench_register_runtimes`` hook, the way inspect_ai registers sandbox
environments by name. ``--mb-runtime=NAME`` picks one; ``auto`` takes the first registered provider whose
:meth:`RuntimeProvider.available` says yes (``docker`` when a daemon answers, else ``local``).

Life cycle, per provider actually used:

* :meth:`RuntimeProvider.sweep` once per run on the controller, for EVERY registered provider, before the
  first item (also when every result comes from the cache and no runtime is ever made): what dead runs left
  (:meth:`ProviderRegistry.sweep_all`, called by :func:`pytest_mobilebench.report.runs.start_run`);
* :meth:`RuntimeProvider.start` once per pytest process (each xdist worker) before its first runtime;
* :meth:`RuntimeProvider.make` once per process and trust level (``trusted``: the benchmark's own code,
  gold patch or validation, or ``--mb-trust-candidates``);
* :meth:`RuntimeProvider.finish` once per run on the controller, after the last item: the image cleanup
  above ``--mb-cache-level`` (the controller learns which providers were used from the results'
  ``runtimes`` field).

Suites never choose a runtime themselves: they request the session fixture ``mb_runtime``
(:mod:`pytest_mobilebench.fixtures`), whose value is a :class:`RuntimeSource`, and call
``ctx.fixture("mb_runtime").get(trusted=...)``. A runtime that also implements
:class:`~pytest_mobilebench.runtime.agent_sandbox.AgentSandboxRuntime` (``agent_sandbox``) hosts live agents
(issue resolution's ``--predictions=live``); a live suite checks for it and never imports a runtime itself.
The one way to replace the runtime is the firstresult hook ``pytest_mobilebench_make_runtime(config, options,
run_id, trusted)``: the plugin's own implementation runs last and answers with the registry's choice
(:meth:`RuntimeSource.choose`), so a plugin answering first replaces it for every suite.

This module imports nothing from ``frameworks/`` or ``suites/``: framework knowledge (the recipe factory
of the Docker provider) is handed in by the plugin when it builds the registry.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, final, runtime_checkable

from pytest_mobilebench.options import Option
from pytest_mobilebench.runtime.base import InfraError, Runtime
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    from pytest_mobilebench.runtime.recipe import RecipeFactory
    from pytest_mobilebench.runtime.repos import RepoCache

__all__ = [
    "COMMON_OPTIONS",
    "DockerProvider",
    "LocalProvider",
    "ProviderContext",
    "ProviderContractError",
    "ProviderRegistry",
    "RuntimeProvider",
    "RuntimeSource",
    "builtin_providers",
    "check_provider",
    "repo_cache",
    "used_providers",
]

DEFAULT_REPO_URL_TEMPLATE: Final[str] = "https://github.com/{owner}/{name}"


def _hosts_option(text: str) -> str:
    """``--mb-docker-hosts``' argparse ``type``: :func:`~pytest_mobilebench.runtime.hosts.hosts_option`, imported
    when a value is converted (start-up imports no Docker helper)."""
    from pytest_mobilebench.runtime.hosts import hosts_option

    return hosts_option(text)


def _budget_option(text: str) -> str:
    """``--mb-image-budget``' argparse ``type``: :func:`~pytest_mobilebench.runtime.budget.budget_option`,
    imported when a value is converted (start-up imports no filelock)."""
    from pytest_mobilebench.runtime.budget import budget_option

    return budget_option(text)


def url_template_option(text: str) -> str:
    """``--mb-repo-url-template``' argparse ``type`` (stdlib only: argparse converts the default at start-up):
    ``text`` when :func:`~pytest_mobilebench.runtime.repos.repo_url` can expand it (only the fields ``{owner}``,
    ``{name}``, ``{repo}``; literal braces doubled), else a usage error naming the option, once at start-up
    instead of a harness error of every instance.

    Raises:
        argparse.ArgumentTypeError: a stray brace or an unknown field, with Python's message.
    """
    try:
        text.format(owner="owner", name="name", repo="owner/name")
    except (ValueError, KeyError, IndexError, AttributeError) as exc:
        raise argparse.ArgumentTypeError(
            f"--mb-repo-url-template {text!r} is not a URL template with {{owner}}, {{name}} or {{repo}}: {exc!r}"
        ) from exc
    return text


#: options of the runtime layer as a whole (every provider reads them; the plugin declares them once)
COMMON_OPTIONS: Final[tuple[Option, ...]] = (
    Option(
        ("--mb-runtime",),
        "mb_runtime",
        "where candidates' code runs: a registered runtime provider (built in: docker, local); auto = docker "
        "when a daemon answers (never local for real predictions); local needs --mb-trust-candidates",
        default="auto",
        keyed=True,
    ),
    Option(
        ("--mb-trust-candidates",),
        "mb_trust_candidates",
        "allow --mb-runtime=local to run real candidates UNISOLATED on this host (gold / empty need none)",
        default=False,
        action="store_true",
    ),
    Option(
        ("--mb-repo-url-template",),
        "mb_repo_url_template",
        "clone URL template, e.g. file:///srv/mirrors/{owner}+{name}.git for offline mirrors",
        default=DEFAULT_REPO_URL_TEMPLATE,
        env="MOBILEBENCH_REPO_URL_TEMPLATE",
        type=url_template_option,
    ),  # not keyed: commits are content
)

#: the Docker provider's own options
DOCKER_OPTIONS: Final[tuple[Option, ...]] = (
    Option(
        ("--mb-docker-hosts",),
        "mb_docker_hosts",
        "Docker daemons for the workers: URL[*slots],... (unix://, tcp://[?tls=DIR], ssh://); worker gwN "
        "takes slot N of the interleaved slot table (docs/scale-out.md)",
        type=_hosts_option,
        env="MOBILEBENCH_DOCKER_HOSTS",
    ),
    Option(
        ("--mb-registry",),
        "mb_registry",
        "host:port of a registry: images a daemon lacks are pulled from it, images built are pushed to it",
    ),
    Option(
        ("--mb-image-budget",),
        "mb_image_budget",
        "bytes of harness images kept per daemon (50G, 800M): least recently used evicted beyond it",
        type=_budget_option,
    ),
    Option(
        ("--mb-cache-level",),
        "mb_cache_level",
        "which Docker images are kept after the run",
        default="env",
        choices=("none", "base", "env", "instance"),
    ),
    Option(
        ("--mb-force-rebuild",),
        "mb_force_rebuild",
        "rebuild Docker images even when their hash matches",
        default=False,
        action="store_true",
    ),
    Option(("--mb-ca-bundle",), "mb_ca_bundle", "CA bundle injected into images (default: the system bundle)"),
    Option(("--mb-mem-limit",), "mb_mem_limit", "memory limit of instance containers", default="4g"),
    Option(("--mb-cpus",), "mb_cpus", "CPU limit of instance containers (CPUs)", default=2.0, type=float),
    Option(("--mb-pids-limit",), "mb_pids_limit", "process limit of instance containers", default=4096, type=int),
    Option(
        ("--mb-install-deadline",),
        "mb_install_deadline",
        "seconds the shared dependency install may run (default 3600); then build_hung, infrastructure",
        type=float,
    ),
    Option(
        ("--mb-install-silence",),
        "mb_install_silence",
        "seconds the dependency install may print nothing (default 900)",
        type=float,
    ),
    Option(
        ("--mb-image-build-deadline",),
        "mb_image_build_deadline",
        "seconds one image build may run (default 7200)",
        type=float,
    ),
    Option(
        ("--mb-image-build-silence",),
        "mb_image_build_silence",
        "seconds an image build may print nothing (default 1800)",
        type=float,
    ),
    Option(
        ("--mb-acquire-deadline",),
        "mb_acquire_deadline",
        "seconds acquiring a Docker host may take (default 300); then acquire_timeout, infrastructure",
        type=float,
    ),
    Option(
        ("--mb-image-deadline",),
        "mb_image_deadline",
        "seconds making an item's image may take as a whole, pulled or built in layers (default 14400); then "
        "image_timeout",
        type=float,
    ),
    Option(
        ("--mb-create-deadline",),
        "mb_create_deadline",
        "seconds creating and starting an item's container may take (default 300); then create_timeout",
        type=float,
    ),
    Option(
        ("--mb-grade-deadline",),
        "mb_grade_deadline",
        "seconds one read of an item's files back from its container may take (default 1800); then grade_timeout",
        type=float,
    ),
)


@final
@dataclasses.dataclass(frozen=True)
class ProviderContext:
    """What a provider gets in one pytest process.

    Attributes:
        options: the run's ``--mb-*`` options as plain builtins (``options[dest]``).
        run_id: the run's id (the same on every xdist worker).
        progress: receives progress lines (image builds), shown on the terminal and in ``progress.log``.
        fixture: the value of a session fixture by name (``"mb_docker_client"``), resolved lazily by pytest,
            so a ``conftest.py`` overriding that fixture reaches the provider.
    """

    options: Mapping[str, Any]
    run_id: str
    progress: Callable[[str], None]
    fixture: Callable[[str], Any]


@runtime_checkable
class RuntimeProvider(Protocol):
    """One kind of runtime, registered under ``name`` (every member required; checked at registration)."""

    name: str
    #: the provider's own command-line options (declared once by the plugin; values in ``ctx.options``)
    options: tuple[Option, ...]

    def available(self, ctx: ProviderContext) -> bool:
        """Whether ``--mb-runtime=auto`` may pick this provider in this process (a daemon answers ...)."""

    def start(self, ctx: ProviderContext) -> None:
        """Once per process before its first runtime (the Docker provider sweeps its worker's daemon here)."""

    def sweep(self, options: Mapping[str, Any], run_id: str) -> None:
        """Once per run on the controller before the first item, whichever provider the run then uses: remove
        what dead runs left behind (containers, pods, temporary hosts). Housekeeping: it never stops a run (the
        registry reports what it raises as a warning)."""

    def make(self, ctx: ProviderContext, trusted: bool) -> Runtime:
        """A runtime for this process (called once per trust level).

        Raises:
            InfraError: the backend is unreachable, or it refuses untrusted code (``untrusted_local_run``).
        """

    def finish(self, options: Mapping[str, Any], run_id: str, cache_level: str | None) -> str | None:
        """Once per run on the controller after the last item: remove what the run made above ``cache_level``.

        Returns:
            One line for the user about what stays behind (the kept images and their size), or None.
        """


_REQUIRED: Final = (
    ("name", False),
    ("options", False),
    ("available", True),
    ("start", True),
    ("sweep", True),
    ("make", True),
    ("finish", True),
)


class ProviderContractError(TypeError):
    """A provider does not implement :class:`RuntimeProvider` (the message names every missing member)."""


def check_provider(provider: Any) -> None:
    """Check ``provider`` against :class:`RuntimeProvider`, as pluggy checks hook implementations.

    Raises:
        ProviderContractError: a member is missing or not callable, ``name`` is not a non-empty str other
            than ``"auto"``, or ``options`` does not hold :class:`~pytest_mobilebench.options.Option` objects.
    """
    problems = [f"missing {attr!r}" for attr, _ in _REQUIRED if not hasattr(provider, attr)]
    problems += [
        f"{attr!r} is not callable"
        for attr, method in _REQUIRED
        if method and hasattr(provider, attr) and not callable(getattr(provider, attr))
    ]
    if not problems:
        if not isinstance(provider.name, str) or not provider.name or provider.name == "auto":
            problems.append(f"'name' must be a non-empty str other than 'auto', got {provider.name!r}")
        if isinstance(provider.options, str) or not all(isinstance(o, Option) for o in provider.options):
            problems.append("'options' must be a tuple of pytest_mobilebench.options.Option")
    if problems:
        raise ProviderContractError(
            f"runtime provider {getattr(provider, 'name', provider)!r} does not implement "
            "RuntimeProvider: " + "; ".join(problems)
        )


class ProviderRegistry(dict[str, RuntimeProvider]):
    """``{name: provider}`` in registration order (the order ``auto`` tries them); checked when added.

    ``on_add`` (set by the plugin) declares each added provider's options.

    Raises:
        ProviderContractError: on ``registry[name] = provider`` for a provider that breaks the contract.
        ValueError: a name already taken, a key other than the provider's name, or an option ``dest``
            another provider (or the common options) declared.
    """

    def __init__(self, on_add: Callable[[RuntimeProvider], None] | None = None) -> None:
        super().__init__()
        self.on_add = on_add

    def __setitem__(self, name: str, provider: RuntimeProvider) -> None:
        check_provider(provider)
        if name != provider.name:
            raise ValueError(f"runtime provider registered as {name!r} but its name is {provider.name!r}")
        if name in self:
            raise ValueError(f"a runtime provider named {name!r} is already registered ({self[name]!r})")
        taken = {o.dest for o in self.options()}
        clash = sorted(o.dest for o in provider.options if o.dest in taken)
        if clash:
            raise ValueError(f"runtime provider {name!r} declares options already declared: {', '.join(clash)}")
        super().__setitem__(name, provider)
        if self.on_add is not None:
            self.on_add(provider)

    def register(self, provider: RuntimeProvider) -> None:
        """Add ``provider`` under its own name."""
        self[provider.name] = provider

    def options(self) -> list[Option]:
        """The common options, then every registered provider's own."""
        return [*COMMON_OPTIONS, *(o for p in self.values() for o in p.options)]

    def keyed_for(self, fixtures: Sequence[str]) -> list[Option]:
        """The runtime options that enter the cache key of a suite requesting ``fixtures`` (``mb_runtime``)."""
        return [o for o in self.options() if o.keyed] if "mb_runtime" in fixtures else []

    def finish_used(
        self, results: Iterable[Mapping[str, Any]], options: Mapping[str, Any], run_id: str
    ) -> tuple[list[str], list[str]]:
        """``finish`` of every registered provider the results name (:func:`used_providers`), once each, on the
        controller; returns ``(errors, notes)``: what failed, in words (cleanup never costs the summary), and
        each provider's line about what it kept. A hook's runtime of a kind no provider is registered for is the
        hook's to clean."""
        errors: list[str] = []
        notes: list[str] = []
        for name in used_providers(results):
            if name in self:
                try:
                    note = self[name].finish(options, run_id, options.get("mb_cache_level"))
                except Exception as exc:  # noqa: BLE001 - housekeeping
                    errors.append(f"runtime {name}: {type(exc).__name__}: {exc}")
                else:
                    notes += [str(note)] if note else []
        return errors, notes

    def sweep_all(self, options: Mapping[str, Any], run_id: str) -> list[str]:
        """:meth:`RuntimeProvider.sweep` of every registered provider, in registration order, on the controller;
        returns what failed, in words (housekeeping never stops a run)."""
        errors: list[str] = []
        for name, provider in self.items():
            try:
                provider.sweep(options, run_id)
            except Exception as exc:  # noqa: BLE001 - housekeeping
                errors.append(f"runtime {name}: sweep: {type(exc).__name__}: {exc}")
        return errors

    def notices(self, results: Iterable[Mapping[str, Any]]) -> list[str]:
        """The warning each provider the results name gives about its use (an optional ``notice`` member: the
        local runtime's "candidates run UNISOLATED"), for the run's end on the terminal and in the summary."""
        return [
            str(note)
            for name in used_providers(results)
            if name in self
            if (note := getattr(self[name], "notice", None))
        ]

    def choose(self, choice: str, ctx: ProviderContext) -> RuntimeProvider:
        """The provider ``--mb-runtime`` names; for ``auto`` the first one :meth:`~RuntimeProvider.available`.

        Raises:
            InfraError("harness_error"): an unknown name (the plugin refuses it at start already).
        """
        if choice != "auto":
            if choice not in self:
                raise InfraError(
                    InfraKind.HARNESS_ERROR,
                    f"--mb-runtime={choice}: no such runtime provider (registered: {', '.join(self)})",
                )
            return self[choice]
        for provider in self.values():
            if provider.available(ctx):
                return provider
        raise InfraError(InfraKind.DAEMON_UNREACHABLE, "--mb-runtime=auto: no registered runtime provider is available")


@final
class RuntimeSource:
    """The ``mb_runtime`` fixture's value: ``get(trusted=...)`` gives this process's runtime.

    Asks the ``pytest_mobilebench_make_runtime`` hook (``hook(trusted)``): a plugin's runtime, else the hook's
    default implementation, :meth:`choose` (the registry's provider for ``--mb-runtime``, started once and made
    once per trust level). ``used`` lists the
    runtime names handed out in this process (the plugin copies it into each result as ``runtimes``).
    """

    def __init__(
        self, registry: ProviderRegistry, ctx: ProviderContext, hook: Callable[[bool], Runtime | None] | None = None
    ) -> None:
        self.registry = registry
        self.ctx = ctx
        self.hook = hook
        self.used: list[str] = []
        self._started: set[str] = set()
        self._made: dict[tuple[str, bool], Runtime] = {}

    def get(self, *, trusted: bool = False) -> Runtime:
        """The runtime for code of this trust level: the hook's answer (whose default implementation is
        :meth:`choose`), else :meth:`choose`.

        Raises:
            InfraError: no provider can serve it (see :meth:`RuntimeProvider.make`).
        """
        trusted = trusted or bool(self.ctx.options.get("mb_trust_candidates"))
        runtime = self.hook(trusted) if self.hook is not None else None
        if runtime is None:
            runtime = self.choose(trusted)
        if runtime.name not in self.used:
            self.used.append(runtime.name)
        return runtime

    def choose(self, trusted: bool) -> Runtime:
        """The registry's runtime for ``--mb-runtime`` (``trusted`` as :meth:`get` resolved it): its provider
        started once in this process and made once per trust level. The plugin's ``trylast`` implementation of
        ``pytest_mobilebench_make_runtime`` answers with it, so a plugin's own answer comes first.

        Raises:
            InfraError: no provider can serve it (see :meth:`RuntimeProvider.make`).
        """
        provider = self.registry.choose(str(self.ctx.options.get("mb_runtime") or "auto"), self.ctx)
        if provider.name not in self._started:
            provider.start(self.ctx)
            self._started.add(provider.name)
        key = (provider.name, trusted)
        if key not in self._made:
            self._made[key] = provider.make(self.ctx, trusted)
        return self._made[key]


def repo_cache(options: Mapping[str, Any], run_id: str) -> RepoCache:
    """The run's repository mirrors, cloned from ``--mb-repo-url-template``."""
    from pytest_mobilebench.runtime.repos import RepoCache

    return RepoCache(url_template=options.get("mb_repo_url_template") or DEFAULT_REPO_URL_TEMPLATE, run_id=run_id)


@final
class DockerProvider:
    """``docker``: :class:`~pytest_mobilebench.runtime.docker.DockerRuntime` on the client of the
    ``mb_docker_client`` fixture (this worker's daemon of ``--mb-docker-hosts``).

    Args:
        recipe_factory: ``(host checkout, spec) -> recipe``; the plugin passes
            :func:`pytest_mobilebench.frameworks.workspace_recipe` (framework knowledge stays above this layer).
    """

    name = "docker"
    options = DOCKER_OPTIONS

    def __init__(self, recipe_factory: RecipeFactory | None = None) -> None:
        self.recipe_factory = recipe_factory

    def available(self, ctx: ProviderContext) -> bool:
        return ctx.fixture("mb_docker_client") is not None

    def start(self, ctx: ProviderContext) -> None:
        self.runtime(ctx.options, ctx.run_id, client=self._client(ctx)).sweep()

    def sweep(self, options: Mapping[str, Any], run_id: str) -> None:
        """Remove the containers of dead runs on the daemon this machine reaches (``DOCKER_HOST``), when one
        answers within 3 s (:func:`~pytest_mobilebench.runtime.docker.sweep_dead_runs`); each worker's own
        daemon of ``--mb-docker-hosts`` is swept by :meth:`start`."""
        from pytest_mobilebench.runtime.docker import sweep_dead_runs

        sweep_dead_runs()

    def make(self, ctx: ProviderContext, trusted: bool) -> Runtime:
        return self.runtime(ctx.options, ctx.run_id, client=self._client(ctx), progress=ctx.progress)

    def finish(self, options: Mapping[str, Any], run_id: str, cache_level: str | None) -> str | None:
        """Remove the run's images above ``cache_level`` on every daemon of the run; say what is kept.

        Returns:
            ``"docker: 7 harness images kept on the daemon (1.02 GB ...), 2 of them built by this run; ... remove this
            run's with docker image rm ..."`` (:func:`~pytest_mobilebench.runtime.budget.kept_note`), or None.
        """
        from pytest_mobilebench.runtime.hosts import each_client
        from pytest_mobilebench.runtime.budget import kept_images, kept_note

        count, size, own = 0, 0, 0
        for client in each_client(options.get("mb_docker_hosts")):
            self.runtime(options, run_id, client=client).cleanup(cache_level)
            n, b = kept_images(client)
            count, size, own = count + n, size + b, own + kept_images(client, run_id)[0]
        return kept_note(count, size, own, cache_level, run_id) if count else None

    @staticmethod
    def _client(ctx: ProviderContext) -> Any:
        """The fixture's client once its daemon answers (a dead host of ``--mb-docker-hosts`` gives each item
        ``daemon_unreachable`` naming the host: :func:`pytest_mobilebench.runtime.daemon.require_answer`)."""
        from pytest_mobilebench.runtime.daemon import host_url, require_answer
        from pytest_mobilebench.runtime.deadlines import Deadlines, within

        client = ctx.fixture("mb_docker_client")
        if client is None:
            raise InfraError(
                InfraKind.DAEMON_UNREACHABLE,
                "--mb-runtime=docker: no Docker daemon answers "
                "(start dockerd, set DOCKER_HOST or give --mb-docker-hosts)",
            )
        within(
            Deadlines.from_options(ctx.options).acquire_s,
            InfraKind.ACQUIRE_TIMEOUT,
            f"acquiring the Docker host {host_url(client)}",
            lambda: require_answer(client),
        )
        return client

    def runtime(self, options: Mapping[str, Any], run_id: str, *, client: Any, progress: Any = None) -> Runtime:
        """A :class:`~pytest_mobilebench.runtime.docker.DockerRuntime` configured from the Docker options."""
        from pytest_mobilebench.runtime.deadlines import Deadlines
        from pytest_mobilebench.runtime.docker import DEFAULT_CA_BUNDLE, DockerRuntime

        return DockerRuntime(
            client=client,
            run_id=run_id,
            cache_level=options.get("mb_cache_level") or "env",
            force_rebuild=bool(options.get("mb_force_rebuild")),
            ca_bundle=options.get("mb_ca_bundle") or DEFAULT_CA_BUNDLE,
            mem_limit=options.get("mb_mem_limit") or "4g",
            cpus=options.get("mb_cpus"),
            pids_limit=options.get("mb_pids_limit"),
            repos=repo_cache(options, run_id),
            recipe_factory=self.recipe_factory,
            progress=progress,
            deadlines=Deadlines.from_options(options),
        )


@final
class LocalProvider:
    """``local``: :class:`~pytest_mobilebench.runtime.local.LocalRuntime`, a work tree on this host.

    Runs a real candidate only with ``--mb-trust-candidates`` (:func:`~pytest_mobilebench.runtime.local.local_refusal`);
    under ``auto`` it is reached only when no provider before it is available.
    """

    name = "local"
    options: tuple[Option, ...] = ()

    def available(self, ctx: ProviderContext) -> bool:
        return True

    def start(self, ctx: ProviderContext) -> None:
        """Nothing to sweep: work trees live in per-process temporary folders."""

    def sweep(self, options: Mapping[str, Any], run_id: str) -> None:
        """Nothing run-wide: a dead run's work trees are in the system's temporary folder."""

    @property
    def notice(self) -> str:
        """Said at the run's end when results ran here (:meth:`ProviderRegistry.notices`): a progress line
        during an item is captured with it, or lands on a worker, and never reaches the terminal."""
        from pytest_mobilebench.runtime.local import UNISOLATED

        return UNISOLATED

    def make(self, ctx: ProviderContext, trusted: bool) -> Runtime:
        from pytest_mobilebench.runtime.local import UNISOLATED, LocalRuntime, local_refusal

        refusal = local_refusal(str(ctx.options.get("mb_runtime") or "auto"), daemon=False, trusted=trusted)
        if refusal is not None:
            raise refusal
        ctx.progress(UNISOLATED)
        return LocalRuntime(repo_cache(ctx.options, ctx.run_id))

    def finish(self, options: Mapping[str, Any], run_id: str, cache_level: str | None) -> None:
        """Nothing run-wide: each work tree is removed when its workspace closes; nothing is kept."""
        return None


def builtin_providers(
    *, recipe_factory: RecipeFactory | None = None, on_add: Callable[[RuntimeProvider], None] | None = None
) -> ProviderRegistry:
    """A fresh registry with ``docker`` then ``local`` (the order ``auto`` tries them)."""
    registry = ProviderRegistry(on_add)
    registry.register(DockerProvider(recipe_factory))
    registry.register(LocalProvider())
    return registry


def used_providers(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """The provider names the results say were used (their ``runtimes`` field), in first-seen order."""
    names: dict[str, None] = {}
    for result in results:
        for name in result.get("runtimes") or ():
            names.setdefault(str(name), None)
    return list(names)
