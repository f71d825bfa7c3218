"""Several Docker daemons for one run: ``--mb-docker-hosts URL[*slots],...`` and image supply between them.

Each pytest process (xdist worker ``gwN``) talks to one daemon: the slot table interleaves the hosts by
their slot counts (``A*2,B`` -> ``A, B, A``) and worker ``gwN`` takes slot ``N mod len(table)``; when that
daemon does not answer, the next slots are tried in order (a dead host costs its slots, not the run).

Nothing here reads the daemon's file system: build contexts, archives and image tarballs travel through
the Engine API, so a daemon on another machine behaves like the local one. An image a host lacks comes, in
order, from (1) ``--mb-registry`` (pulled, label-checked), (2) a peer daemon of the run that has it with
the same ``mobilebench.inputs`` label, streamed ``GET /images/<tag>/get`` -> ``POST /images/load``
through this process (an image id is the digest of its config, so a shipped image keeps its id and its
children's content hashes still match), else (3) it is built on this host as before. A built image is
pushed to the registry when one is named.

URL forms (the Docker CLI's): ``unix:///path/docker.sock``, ``tcp://host:2375``, ``tcp://host:2376`` with
TLS, ``ssh://user@host``. TLS for a tcp host: ``tcp://host:2376?tls=/dir`` names a folder with
``ca.pem``, ``cert.pem`` and ``key.pem`` (the CLI's ``DOCKER_CERT_PATH`` layout); without ``?tls=``,
``DOCKER_TLS_VERIFY=1`` + ``DOCKER_CERT_PATH`` apply to every tcp host, as for the CLI.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.runtime.daemon import HOST_ATTR, UNVERSIONED_ATTR

if TYPE_CHECKING:
    import docker

__all__ = [
    "DockerHost",
    "HostImages",
    "ImagePolicy",
    "attach_policy",
    "connect_host",
    "each_client",
    "host_key",
    "hosts_option",
    "local_host",
    "parse_hosts",
    "slot_table",
    "worker_client",
    "worker_index",
]

_SCHEMES: Final[frozenset[str]] = frozenset({"unix", "tcp", "ssh"})
_CERT_FILES: Final[tuple[str, ...]] = ("ca.pem", "cert.pem", "key.pem")
_CHUNK: Final[int] = 1 << 20

Progress = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class DockerHost:
    """One ``--mb-docker-hosts`` entry.

    Attributes:
        url: the daemon's URL without the slot count and the ``?tls=`` query (``tcp://10.0.0.2:2375``).
        slots: how many workers it takes in each round of the slot table (``URL*4`` -> 4).
        tls_dir: folder with ``ca.pem``/``cert.pem``/``key.pem`` for a TLS tcp host, else None.
    """

    url: str
    slots: int = 1
    tls_dir: str | None = None


def parse_hosts(text: str, *, option: str = "--mb-docker-hosts") -> tuple[DockerHost, ...]:
    """Parse ``URL[*N],URL[*N],...`` into hosts.

    Raises:
        ValueError: an empty list, an unknown scheme, a host-less tcp/ssh URL, a slot count that is not a
            positive integer, a ``?tls=`` folder missing a certificate file; the message names the option
            and the entry.
    """
    hosts: list[DockerHost] = []
    for raw in [part.strip() for part in text.split(",")]:
        if not raw:
            continue
        hosts.append(_parse_entry(raw, option))
    if not hosts:
        raise ValueError(f"{option}: no host given in {text!r}")
    return tuple(hosts)


def _parse_entry(raw: str, option: str) -> DockerHost:
    url, star, count = raw.rpartition("*") if re.search(r"\*\d*$", raw) else (raw, "", "")
    if star and (not count.isdigit() or int(count) < 1):
        raise ValueError(f"{option}: entry {raw!r}: slot count {count!r} is not a positive integer")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in _SCHEMES:
        raise ValueError(f"{option}: entry {raw!r}: scheme must be one of {sorted(_SCHEMES)}, got {parsed.scheme!r}")
    if parsed.scheme in {"tcp", "ssh"} and not parsed.hostname:
        raise ValueError(f"{option}: entry {raw!r}: no host name")
    if parsed.scheme == "unix" and not parsed.path:
        raise ValueError(f"{option}: entry {raw!r}: no socket path")
    tls = urllib.parse.parse_qs(parsed.query).get("tls", [None])[0]
    if tls is not None:
        missing = [name for name in _CERT_FILES if not (Path(tls) / name).is_file()]
        if parsed.scheme != "tcp" or missing:
            raise ValueError(f"{option}: entry {raw!r}: ?tls= needs a tcp URL and {', '.join(missing) or 'a folder'}")
    return DockerHost(url.split("?", 1)[0], int(count) if star else 1, tls)


def hosts_option(text: str) -> str:
    """argparse ``type`` of ``--mb-docker-hosts``: the text unchanged when :func:`parse_hosts` accepts it.

    Raises:
        argparse.ArgumentTypeError: with :func:`parse_hosts`' message (pytest shows it as a usage error).
    """
    import argparse

    try:
        parse_hosts(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def local_host() -> DockerHost:
    """The controller machine's own daemon: ``DOCKER_HOST`` or ``unix:///var/run/docker.sock``."""
    return _parse_entry(os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock", "DOCKER_HOST")


def slot_table(hosts: Sequence[DockerHost]) -> list[DockerHost]:
    """Hosts interleaved by slot count: ``[A*2, B*1]`` -> ``[A, B, A]`` (round-robin while slots remain)."""
    table: list[DockerHost] = []
    for round_ in range(max((h.slots for h in hosts), default=0)):
        table += [h for h in hosts if h.slots > round_]
    return table


def worker_index(worker_id: str | None) -> int:
    """``"gw3"`` -> 3; the controller / a run without xdist (``None``, ``"master"``) -> 0."""
    match = re.fullmatch(r"gw(\d+)", worker_id or "")
    return int(match.group(1)) if match else 0


def host_key(url: str) -> str:
    """A short stable name of a daemon URL for lock and bookkeeping file names (12 hex digits)."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]


def _tls_config(host: DockerHost) -> Any:
    import docker.tls

    folder = host.tls_dir
    if folder is None and host.url.startswith("tcp://") and os.environ.get("DOCKER_TLS_VERIFY") == "1":
        folder = os.environ.get("DOCKER_CERT_PATH") or str(Path.home() / ".docker")
    if folder is None:
        return None
    ca, cert, key = (str(Path(folder) / name) for name in _CERT_FILES)
    return docker.tls.TLSConfig(client_cert=(cert, key), ca_cert=ca, verify=True)


def connect_host(
    host: DockerHost, *, timeout_s: float = 10, io_timeout_s: float = 600, ping: bool = True
) -> docker.DockerClient:
    """A client of ``host``, pinged within ``timeout_s`` unless ``ping=False``.

    ``ping=False`` never talks to the daemon (the oldest API version the SDK speaks is named, not asked;
    :func:`pytest_mobilebench.runtime.daemon.require_answer` asks it once the daemon answers), so a client of a dead
    host exists and each item using it gets its own ``daemon_unreachable`` result.

    ``io_timeout_s`` then bounds every later API read (a ``docker save`` of a large image may take
    minutes before its first byte); build and exec streams pass no timeout and are bounded elsewhere.

    Raises:
        InfraError("daemon_unreachable"): the SDK is missing or the daemon does not answer (names the URL).
    """
    try:
        import docker
    except ImportError as exc:
        raise InfraError(
            InfraKind.DAEMON_UNREACHABLE, "the docker SDK is not installed: pip install 'pytest-mobilebench[docker]'"
        ) from exc
    try:
        client = docker.DockerClient(
            base_url=host.url,
            tls=_tls_config(host) or False,
            timeout=int(timeout_s),
            use_ssh_client=host.url.startswith("ssh://"),
            # the SDK asks the API version when none is given: an unpinged client names the oldest one it speaks
            **({} if ping else {"version": docker.constants.MINIMUM_DOCKER_API_VERSION}),
        )
        if ping:
            client.ping()
    except Exception as exc:  # DockerException, requests errors, socket errors: all mean "no daemon"
        raise InfraError(
            InfraKind.DAEMON_UNREACHABLE, f"the Docker daemon at {host.url} does not answer ({exc})"
        ) from exc
    client.api.timeout = io_timeout_s
    setattr(client, HOST_ATTR, host.url)
    if not ping:  # the version was named, not asked: daemon.require_answer asks it once the daemon answers
        setattr(client, UNVERSIONED_ATTR, True)
    return client


def worker_client(
    hosts: Sequence[DockerHost], worker_id: str | None, *, timeout_s: float = 10
) -> tuple[DockerHost, Any]:
    """This worker's host and a pinged client: slot ``worker_index mod len(table)``, else the next slots.

    Raises:
        InfraError("daemon_unreachable"): no host of the list answers (the message names each URL's error).
    """
    table = slot_table(hosts)
    start = worker_index(worker_id) % len(table)
    errors: list[str] = []
    tried: set[str] = set()
    for host in table[start:] + table[:start]:
        if host.url in tried:
            continue
        tried.add(host.url)
        try:
            return host, connect_host(host, timeout_s=timeout_s)
        except InfraError as exc:
            errors.append(exc.message)
    raise InfraError(InfraKind.DAEMON_UNREACHABLE, "no Docker host answers: " + "; ".join(errors))


def each_client(spec: str | None, *, timeout_s: float = 10) -> Iterator[Any]:
    """A pinged client of every daemon of the run (each ``--mb-docker-hosts`` URL once, else the local
    daemon), closed after use; a daemon that does not answer is skipped (housekeeping never stops a run)."""
    named = parse_hosts(spec) if spec else (local_host(),)
    for host in {h.url: h for h in named}.values():
        try:
            client = connect_host(host, timeout_s=timeout_s)
        except InfraError:
            continue
        try:
            yield client
        finally:
            client.close()


@dataclasses.dataclass
class HostImages:
    """Supplies images a daemon lacks from a registry or a peer daemon; pushes what it builds.

    ``ImageBuilder`` calls :meth:`supply` under its per-tag lock before building, and :meth:`added`
    after a build (see ``ImageHooks`` in :mod:`pytest_mobilebench.runtime.images`).

    Attributes:
        client: this host's client.
        peers: functions returning a client of another daemon of the run (called lazily, at most once
            each; one that raises ``InfraError`` is skipped for the rest of the process).
        registry: ``host:port`` of a registry (``--mb-registry``), or None.
        progress: receives one line per shipped / pulled / pushed image.
    """

    client: Any
    peers: Sequence[Callable[[], Any]] = ()
    registry: str | None = None
    progress: Progress = lambda _line: None
    _peer_clients: dict[int, Any] = dataclasses.field(default_factory=dict)

    def supply(self, tag: str, inputs: str | None) -> str | None:
        """Put ``tag`` on this host from the registry or a peer; its image id, or None (build it here).

        ``inputs`` is the expected ``mobilebench.inputs`` label (None: any image of that name will do,
        e.g. the Debian base). An image whose label differs is never taken.
        """
        present = _image_id(self.client, tag, inputs)
        if present is not None:
            return present
        if self.registry and self._pull(tag, inputs):
            return _image_id(self.client, tag, inputs)
        for peer in self._peers():
            if _image_id(peer, tag, inputs) is not None:
                self._ship(peer, tag)
                found = _image_id(self.client, tag, inputs)
                if found is not None:
                    return found
        return None

    def added(self, tag: str) -> None:
        """After a build on this host: push ``tag`` to the registry (when one is named).

        Raises:
            InfraError("registry_push_failed"): the registry refused it (the message names it).
        """
        if not self.registry:
            return
        remote = f"{self.registry}/{tag}"
        self.client.api.tag(tag, remote)
        self.progress(f"pushing {remote}")
        for line in self.client.api.push(remote, stream=True, decode=True):
            if isinstance(line, dict) and line.get("error"):
                raise InfraError(InfraKind.REGISTRY_PUSH_FAILED, f"push of {remote} failed: {line['error']}")

    def _peers(self) -> Iterator[Any]:
        for index, make in enumerate(self.peers):
            if index not in self._peer_clients:
                try:
                    self._peer_clients[index] = make()
                except InfraError:
                    self._peer_clients[index] = None
            if self._peer_clients[index] is not None:
                yield self._peer_clients[index]

    def _ship(self, peer: Any, tag: str) -> None:
        """Stream ``docker save`` from ``peer`` into ``docker load`` here (chunked, never whole in memory)."""
        self.progress(f"shipping {tag} from {peer.api.base_url} to {self.client.api.base_url}")
        stream = peer.api.get_image(tag, chunk_size=_CHUNK)
        for line in self.client.api.load_image(stream):
            if isinstance(line, dict) and line.get("error"):
                raise InfraError(
                    InfraKind.IMAGE_SHIP_FAILED, f"loading {tag} into {self.client.api.base_url}: {line['error']}"
                )

    def _pull(self, tag: str, inputs: str | None) -> bool:
        import docker.errors

        remote = f"{self.registry}/{tag}"
        repository, _, name_tag = remote.rpartition(":")
        try:
            self.client.api.pull(repository, tag=name_tag)
        except docker.errors.APIError:
            return False
        if _image_id(self.client, remote, inputs) is None:
            self.client.api.remove_image(remote)
            return False
        self.client.api.tag(remote, tag)
        self.progress(f"pulled {remote}")
        return True


def _image_id(client: Any, tag: str, inputs: str | None) -> str | None:
    """The id of ``tag`` on ``client`` when its ``mobilebench.inputs`` label is ``inputs`` (any when None)."""
    import docker.errors

    from pytest_mobilebench.runtime.images import LABEL_INPUTS

    try:
        info = client.api.inspect_image(tag)
    except docker.errors.NotFound:
        return None
    labels = (info.get("Config") or {}).get("Labels") or {}
    if inputs is not None and labels.get(LABEL_INPUTS) != inputs:
        return None
    return str(info["Id"])


@dataclasses.dataclass
class ImagePolicy:
    """A daemon's image policy for ``ImageBuilder`` (the ``ImageHooks`` protocol of ``runtime.images``):
    supply from a registry / peers, push after builds, and the disk budget. Either part may be None."""

    images: HostImages | None = None
    budget: Any = None  # runtime.budget.ImageBudget

    def supply(self, tag: str, inputs: str | None) -> str | None:
        """See :meth:`HostImages.supply`; a supplied image counts as used and may trigger eviction."""
        found = self.images.supply(tag, inputs) if self.images is not None else None
        if found is not None and self.budget is not None:
            self.budget.touch(found)
            self.budget.enforce(protect={found})
        return found

    def used(self, image_id: str) -> None:
        """An existing image was reused: record it for LRU and evict others over the budget."""
        if self.budget is not None:
            self.budget.touch(image_id)
            self.budget.enforce(protect={image_id})

    def added(self, tag: str, image_id: str) -> None:
        """An image was built here: push it, record it, evict down to the budget (never this one)."""
        if self.images is not None:
            self.images.added(tag)
        if self.budget is not None:
            self.budget.touch(image_id)
            self.budget.enforce(protect={image_id})

    def failed(self, error: InfraError) -> InfraError:
        """A build failed: a disk-full error names the budget."""
        return self.budget.explain(error) if self.budget is not None else error


def attach_policy(
    client: Any,
    *,
    url: str,
    peers: Sequence[DockerHost] = (),
    registry: str | None = None,
    budget: str | None = None,
    progress: Progress | None = None,
) -> Any:
    """Give ``client`` an :class:`ImagePolicy` (read by ``ImageBuilder`` through ``images.HOOKS_ATTR``).

    Args:
        client: this host's client.
        url: this host's URL (names its usage file under ``<cache>/image-use/``).
        peers: the other daemons of the run, asked for images this one lacks.
        registry: ``--mb-registry``; budget: ``--mb-image-budget`` text (``"50G"``); images touched less
            than ``MOBILEBENCH_IMAGE_BUDGET_GRACE_S`` seconds ago (default 30) are never evicted.

    Returns:
        ``client``. Nothing is attached when there is nothing to do (no peer, registry or budget).

    Raises:
        ValueError: a malformed budget.
    """
    from pytest_mobilebench.files import cache_root
    from pytest_mobilebench.runtime.budget import ImageBudget, parse_size
    from pytest_mobilebench.runtime.images import HOOKS_ATTR, LABEL_LEVEL

    report: Progress = progress or (lambda _line: None)
    policy = ImagePolicy()
    if peers or registry:
        makers = [lambda peer=peer: connect_host(peer) for peer in peers]
        policy.images = HostImages(client, makers, registry, report)
    if budget:
        usage = cache_root() / "image-use" / f"{host_key(url)}.json"
        grace = float(os.environ.get("MOBILEBENCH_IMAGE_BUDGET_GRACE_S") or 30)
        policy.budget = ImageBudget(
            client, parse_size(budget), usage_file=usage, label=LABEL_LEVEL, grace_s=grace, progress=report
        )
    if policy.images is not None or policy.budget is not None:
        setattr(client, HOOKS_ATTR, policy)
    return client
