"""The Docker daemon as the container runtime sees it: connecting, its clock, its errors, what a sweep may remove.

``connect`` answers ``InfraError("daemon_unreachable")`` when no daemon answers; :func:`docker_errors`
translates what the docker SDK raises into named infrastructure kinds (issue 7, item 5); :func:`sweepable` says
which containers belong to dead runs (owner label: host:pid:start time). The ground floor of the Docker provider:
it imports none of the modules built on it (the run-level sweep is
:func:`pytest_mobilebench.runtime.docker.sweep_dead_runs`).
"""

from __future__ import annotations

import contextlib
import datetime
import re
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.images import BUILD_STEP_MARK, LABEL_RUN
from pytest_mobilebench.runtime.owners import LABEL_OWNER, owner_alive
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    import docker

__all__ = [
    "API_TIMEOUT_S",
    "HOST_ATTR",
    "UNVERSIONED_ATTR",
    "answers",
    "container_events",
    "connect",
    "host_url",
    "require_answer",
    "daemon_clock_offset",
    "docker_errors",
    "is_disk_full",
    "parse_bytes",
    "rfc3339_ns",
    "sweepable",
]

#: an ownerless stopped container (a build step of a dead builder) this old is swept
_ORPHAN_AGE_S: Final[float] = 600.0


def parse_bytes(size: str) -> int:
    """Docker size units (``"512m"``, ``"10g"``) in bytes."""
    from docker.utils import parse_bytes

    return int(parse_bytes(size))


def is_disk_full(text: str) -> bool:
    lowered = text.lower()
    return "no space left on device" in lowered or "enospc" in lowered


#: attribute of a docker client naming the daemon URL it was made for (set by ``runtime.hosts.connect_host``)
HOST_ATTR: Final[str] = "_mobilebench_host"
#: attribute set on a client made without asking the daemon's API version (``connect_host(ping=False)``)
UNVERSIONED_ATTR: Final[str] = "_mobilebench_unversioned"


def host_url(client: Any) -> str:
    """The daemon URL a client talks to: the ``--mb-docker-hosts`` entry, else ``DOCKER_HOST`` or the
    default socket (the SDK's own ``base_url`` reads ``http+docker://localhost`` for every unix socket)."""
    import os

    named = getattr(client, HOST_ATTR, None)
    return str(named or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock")


def require_answer(client: Any, *, timeout_s: float = 10) -> None:
    """Return when ``client``'s daemon answers ``ping`` within ``timeout_s``.

    Raises:
        InfraError("daemon_unreachable"): no answer; the message names the daemon URL, so each item a
            dead host was meant to run carries the host in its result.
    """
    api = getattr(client, "api", None)
    saved = getattr(api, "timeout", None)
    try:
        if api is not None:
            api.timeout = timeout_s
        client.ping()
        if getattr(client, UNVERSIONED_ATTR, False) and api is not None:  # the host came back: its real version
            api._version = api._retrieve_server_version()
            setattr(client, UNVERSIONED_ATTR, False)
    except Exception as exc:  # noqa: BLE001 - any failure of ping means "no daemon"
        raise InfraError(
            InfraKind.DAEMON_UNREACHABLE,
            f"no Docker host could run this item: the daemon at {host_url(client)} does not answer ({exc})",
        ) from exc
    finally:
        if api is not None and saved is not None:
            api.timeout = saved


#: seconds a working client waits for one API answer (a busy daemon commits large layers slowly)
API_TIMEOUT_S: Final[float] = 600.0


def connect(client: docker.DockerClient | None = None, *, timeout_s: float = 60) -> docker.DockerClient:
    """A docker client that answered ``ping`` within ``timeout_s``.

    The returned client (when none is given) waits :data:`API_TIMEOUT_S` for each later answer: the
    short ``timeout_s`` only decides whether a daemon is there, it never turns a slow answer of a busy
    daemon into an error.

    Raises:
        InfraError("daemon_unreachable"): the SDK is missing or the daemon does not answer (the message
            says how to start it).
    """
    try:
        import docker
    except ImportError as exc:  # the SDK is the optional extra ``docker``
        raise InfraError(
            InfraKind.DAEMON_UNREACHABLE, "the docker SDK is not installed: pip install 'pytest-mobilebench[docker]'"
        ) from exc
    try:
        if client is not None:
            client.ping()
            return client
        probe = docker.from_env(timeout=max(1, int(timeout_s)))
        try:
            probe.ping()
        finally:
            probe.close()
        return docker.from_env(timeout=int(max(timeout_s, API_TIMEOUT_S)))
    except Exception as exc:  # DockerException, requests ConnectionError, socket errors: all mean "no daemon"
        raise InfraError(
            InfraKind.DAEMON_UNREACHABLE,
            f"the Docker daemon does not answer ({exc}); start it (`dockerd &` or `systemctl start docker`) "
            "or set DOCKER_HOST",
        ) from exc


def daemon_clock_offset(client: docker.DockerClient, samples: int = 3) -> float:
    """Seconds the daemon's clock is ahead of this machine's, never less than the truth (0.0 when it cannot
    be read). Event windows are asked in the daemon's time: on a ``tcp://`` host with a skewed clock, a
    window in local time would take in the harness's own earlier kill, or block until it came.

    Each sample is ``SystemTime`` of ``docker info`` minus the moment it was asked; the least of ``samples``
    is kept. The daemon stamps that time early in its answer (before it runs ``runc --version`` and more), so
    the stamp is never before the asking: the estimate is over by the request's way to the stamp (the
    events query waits that long for its window's end), never under. Against the answer's midpoint it came
    out short by up to half the call, under load hundreds of ms, and a window then ended before the OOM a
    run had just met (CI: ``oom_killed`` missed once)."""
    try:
        found = []
        for _ in range(samples):
            asked = time.time()
            stamp = rfc3339_ns(str(client.api.info().get("SystemTime") or ""))
            if stamp is None:
                return 0.0
            found.append(stamp / 1e9 - asked)
        return min(found)
    except Exception:  # noqa: BLE001 - no reading: assume one clock
        return 0.0


def container_events(
    client: docker.DockerClient,
    container_id: str,
    since: float,
    actions: tuple[str, ...],
    *,
    clock_offset: float = 0.0,
    started_at: str | None = None,
) -> set[str]:
    """Which of ``actions`` (``oom``, ``kill``, ``die``, ...) the daemon logged for the container since
    wall-clock ``since`` (this machine's seconds; ``clock_offset``: :func:`daemon_clock_offset`, the window
    is asked in the daemon's time). The query ends now, so it returns at once.

    ``started_at`` (the container's ``State.StartedAt``): events before it are not counted. The offset is
    measured with an error (``SystemTime`` is stamped before ``docker info`` is done), so a window can open
    early; what precedes the current start (the harness's own kill before a restart) is the daemon's own
    clock's answer, not that estimate's."""
    since += clock_offset
    now = time.time() + clock_offset + 0.001
    not_before = rfc3339_ns(started_at or "") or 0
    events = client.api.events(
        since=f"{int(since)}.{int((since % 1) * 1e9):09d}",
        until=f"{int(now)}.{int((now % 1) * 1e9):09d}",
        filters={"container": container_id, "event": list(actions)},
        decode=True,
    )
    try:
        return {
            str(action)
            for event in events
            if (action := event.get("Action") or event.get("status")) in actions
            and int(event.get("timeNano") or 0) >= not_before
        }
    finally:
        events.close()


def rfc3339_ns(text: str) -> int | None:
    """Nanoseconds since the epoch of a daemon time stamp (``2026-12-03T14:12:15.123456789Z``, any offset,
    up to 9 fraction digits); None when ``text`` is not one (Docker's zero time ``0001-01-01T00:00:00Z`` is
    negative)."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)", text)
    if match is None:
        return None
    whole = datetime.datetime.fromisoformat(match[1] + ("+00:00" if match[3] == "Z" else match[3]))
    return int(whole.timestamp()) * 1_000_000_000 + int((match[2] or "").ljust(9, "0"))


def sweepable(entry: Mapping[str, Any], *, own: str, run_id: str | None) -> bool:
    """Whether a listed container (``docker ps -a`` entry) belongs to a dead run (see :meth:`DockerRuntime.sweep`)."""
    labels = entry.get("Labels") or {}
    if LABEL_RUN not in labels:  # an unlabelled build step of an older harness, found by its command
        return _build_leftover(entry)
    owner = labels.get(LABEL_OWNER, "")
    if owner == own:
        return False
    if run_id is not None and labels.get(LABEL_RUN) == run_id:
        return True
    if not owner:
        return entry.get("State") != "running" and time.time() - float(entry.get("Created") or 0) > _ORPHAN_AGE_S
    return owner_alive(owner) is False


def _build_leftover(entry: Mapping[str, Any]) -> bool:
    """A stopped, unlabelled container older than 10 minutes whose command is one of this harness's
    build steps (left by a builder or daemon that died before step containers were labelled)."""
    old = time.time() - float(entry.get("Created") or 0) > _ORPHAN_AGE_S
    return (
        entry.get("State") not in ("running", "paused", "restarting")
        and old
        and BUILD_STEP_MARK in str(entry.get("Command") or "")
    )


@contextlib.contextmanager
def docker_errors(client: docker.DockerClient, instance_id: str, what: str) -> Iterator[None]:
    """Translate what the docker SDK raises into named :class:`InfraError` kinds (issue 7, item 5).

    ENOSPC in the message -> ``disk_full``; the container gone or not running -> ``container_died``; a
    daemon that no longer answers ``ping`` -> ``daemon_unreachable``; another API error -> ``docker_error``.
    """
    import docker.errors
    import requests
    import urllib3.exceptions

    try:
        yield
    except InfraError:
        raise
    except (docker.errors.DockerException, requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        text = str(exc)
        if is_disk_full(text):
            raise InfraError(InfraKind.DISK_FULL, f"{instance_id}: {what}: {text}") from exc
        if not answers(client):
            raise InfraError(
                InfraKind.DAEMON_UNREACHABLE,
                f"{instance_id}: {what}: the daemon at {host_url(client)} stopped answering ({text})",
            ) from exc
        if isinstance(exc, docker.errors.NotFound) or "is not running" in text or "is restarting" in text:
            raise InfraError(
                InfraKind.CONTAINER_DIED, f"{instance_id}: {what}: the container is gone ({text})"
            ) from exc
        raise InfraError(InfraKind.DOCKER_ERROR, f"{instance_id}: {what}: {text}") from exc


def answers(client: docker.DockerClient) -> bool:
    try:
        client.ping()
    except Exception:  # noqa: BLE001 - any failure of ping means "no daemon"
        return False
    return True
