"""The exec-and-events half of a Docker workspace: commands in the container, the daemon's events about it,
the harness's own root commands and the result channel (issue 32, item 4: split from
:mod:`pytest_mobilebench.runtime.docker_workspace`, which keeps the files: patches, inputs, reads, clean-up).

:class:`ContainerExec` is a mixin of :class:`~pytest_mobilebench.runtime.docker_workspace.DockerWorkspace`; it
holds no state of its own: the attributes it reads are declared below and set by the workspace's ``__init__``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import shlex
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.runtime.base import InfraError, RunResult
from pytest_mobilebench.runtime.channel import Rejected, archived_file
from pytest_mobilebench.runtime.daemon import (
    container_events,
    docker_errors,
    host_url,
    is_disk_full,
)
from pytest_mobilebench.runtime.images import TESTBED, BuiltImage
from pytest_mobilebench.runtime.inbox import INBOX as _INBOX
from pytest_mobilebench.runtime.inbox import root_files_archive
from pytest_mobilebench.runtime.limits import LimitWatch
from pytest_mobilebench.runtime.output import BoundedOutput
from pytest_mobilebench.runtime.read_memo import ReadMemo
from pytest_mobilebench.runtime.stall import HealthProbe
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.trust import SCRUBBED_NAMES

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container


__all__ = ["ContainerExec"]

#: seconds for housekeeping commands (checkpoint, reset, diff, listing files)
HOUSEKEEPING_TIMEOUT_S: Final[float] = 600.0
#: every exec gets these: the runner's start-up variables blanked (trust.SCRUBBED_NAMES), CI mode on
_EXEC_ENV: Final[dict[str, str]] = {**{name: "" for name in sorted(SCRUBBED_NAMES)}, "CI": "true"}
#: free KiB under which the harness measures a file system as full
_FULL_BELOW_KIB: Final[int] = 32 * 1024
#: seconds the container's state and events are asked again after an exec ended as an outside kill
#: leaves it (exit 137, SIGKILL, or no status): the daemon records the kill a moment after the exec ends
_SETTLE_S: Final[float] = 3.0


class ContainerExec:
    """Commands in one running container (see :class:`~pytest_mobilebench.runtime.docker_workspace.DockerWorkspace`
    for what each attribute holds)."""

    _client: docker.DockerClient
    _container: Container
    _user: str | None
    _clock_offset: float
    _started_at: Any
    _disk_limit: int | None
    _limits: LimitWatch
    _memo: ReadMemo
    _lock: threading.Lock
    _closed: bool
    _killed: bool
    container_id: str
    instance_id: str
    image: BuiltImage
    rejected: list[Rejected]

    def _state(self) -> dict[str, Any]:
        self._container.reload()
        return dict(self._container.attrs.get("State") or {})

    def _create_exec(self, argv: list[str], *, as_root: bool = False, trusted: bool = False) -> str:
        """Create an exec (scrubbed environment; the test user unless ``as_root``); a stopped container
        is ``container_died``. It touches the read memo unless ``trusted`` (the harness's own fixed program
        as a non-root test user, who cannot replace it: it starts nothing and changes nothing)."""
        import docker.errors

        if not (trusted and self._user and not as_root):
            self._memo.touch()
        try:
            return str(
                self._client.api.exec_create(
                    self.container_id,
                    argv,
                    workdir=TESTBED,
                    stdout=True,
                    stderr=True,
                    environment=_EXEC_ENV,
                    user="0:0" if as_root else self._user or "",
                )["Id"]
            )
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # "container ... is not running": stopped from outside
                raise InfraError(InfraKind.CONTAINER_DIED, f"{self.instance_id}: the container stopped: {exc}") from exc
            raise

    def _exec_stream(self, argv: list[str], *, as_root: bool = False) -> tuple[str, Iterator[bytes]]:
        exec_id = self._create_exec(argv, as_root=as_root)
        return exec_id, self._client.api.exec_start(exec_id, stream=True)

    def _exit_code(self, exec_id: str) -> int | None:
        deadline = time.monotonic() + 10
        while True:
            info = self._client.api.exec_inspect(exec_id)
            if not info.get("Running") or time.monotonic() > deadline:
                code = info.get("ExitCode")
                return int(code) if code is not None else None
            time.sleep(0.02)

    def _network(self, on: bool) -> None:
        bridge = self._client.networks.get("bridge")
        if on:
            bridge.connect(self.container_id)
        else:
            bridge.disconnect(self.container_id, force=True)

    def _events_since(self, since: float, actions: tuple[str, ...]) -> set[str]:
        """Which of ``actions`` the daemon logged for this container since wall-clock ``since``
        (:func:`.daemon.container_events`)."""
        return container_events(
            self._client,
            self.container_id,
            since,
            actions,
            clock_offset=self._clock_offset,
            started_at=self._started_at,
        )

    def _oom_killed(self, since: float) -> bool:
        """Whether the kernel's OOM killer struck any process of this container since wall-clock ``since``.

        ``State.OOMKilled`` is only set when the container's main process dies (cgroup v1, Docker 20.10),
        so the daemon's ``oom`` events of the container since ``since`` are asked too.
        """
        return bool(self._state().get("OOMKilled")) or bool(self._events_since(since, ("oom",)))

    def _check_alive(self, since: float, code: int | None) -> None:
        """``container_died`` when the container stopped or was restarted behind the harness's back, or was
        killed / stopped from outside since wall-clock ``since``. A ``docker kill`` ends the exec (``code``
        137) before the daemon records it in the state and the events, so after 137 or no status they are
        asked again for up to :data:`_SETTLE_S` (a candidate's own ``kill -9 $$`` costs only that wait)."""
        settle = time.monotonic() + (_SETTLE_S if code in (None, 137) else 0.0)
        while not self._stopped_outside(since):
            if time.monotonic() >= settle:
                return
            time.sleep(0.1)
        state = self._state()
        raise InfraError(
            InfraKind.CONTAINER_DIED,
            f"{self.instance_id}: the container was stopped or killed during the run without a harness "
            f"timeout (status {state.get('Status')}, exit {state.get('ExitCode')}, finished {state.get('FinishedAt')})",
        )

    def _stopped_outside(self, since: float) -> bool:
        state = self._state()
        outside = ("kill", "die", "stop", "restart")
        return (
            not state.get("Running")
            or state.get("StartedAt") != self._started_at
            or bool(self._events_since(since, outside))
        )

    def _ensure_running(self) -> None:
        """After the harness's own kill the container is stopped; start it again (still offline) to read files."""
        if self._closed:
            raise InfraError(InfraKind.WORKSPACE_ERROR, f"{self.instance_id}: the workspace is closed")
        if self._killed:
            self._memo.touch()
            if not self._state().get("Running"):
                self._container.start()
                self._limits.restarted()
            self._started_at = self._state().get("StartedAt")
            self._killed = False

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.run`.

        ``bash -c command`` runs in ``/testbed`` as the container's user, with the runner's start-up
        variables blanked (:data:`pytest_mobilebench.trust.SCRUBBED_NAMES`). On timeout the container is
        killed (every process in it), ``exit_code`` is None and ``timed_out`` True; the workspace can
        still be read (:meth:`read_files`, :meth:`diff` restart the stopped container, offline) and closed.

        Raises:
            InfraError: ``oom_killed`` (any process of the container, whatever the exit status),
                ``container_died`` (stopped or restarted from outside), ``daemon_unreachable``,
                ``disk_full`` (ENOSPC in a failed run's output and measured full by the harness, or the
                writable layer grew past the limit where the daemon has no quota: the container is killed),
                ``pids_limit``; the limits are measured once more when the command ends (:mod:`.limits`).
        """
        with self._lock, docker_errors(self._client, self.instance_id, f"running {command!r}"):
            run = self._run_locked(command, timeout_s=timeout_s, network=network)
        return self._disk_checked(run)

    def _disk_checked(self, run: RunResult) -> RunResult:
        """``run``, or ``disk_full`` when it failed saying ENOSPC AND the harness's own measurement
        agrees (:meth:`disk_measured_full`): a candidate printing the message is no disk problem."""
        if run.exit_code not in (0, None) and is_disk_full(run.output) and self.disk_measured_full():
            raise InfraError(
                InfraKind.DISK_FULL,
                f"{self.instance_id}: {run.command!r} ran out of disk space (measured by the harness)",
                log=run.output[-20000:],
            )
        return run

    def disk_measured_full(self) -> bool:
        """Whether the container's file systems are full by the harness's own measurement: under
        :data:`_FULL_BELOW_KIB` free on ``/testbed``, ``/tmp`` or ``/var/tmp`` (``/bin/df`` of the image,
        root's, run after the test user's processes were stopped), or the writable layer at 95% of the
        limit where the daemon has no quota."""
        self._quiesce()
        if self._disk_limit and self._limits.layer_bytes() >= self._disk_limit * 0.95:
            return True
        code, out, _err = self._stdout(["/bin/df", "-Pk", TESTBED, "/tmp", _INBOX], trusted=True)
        free = [
            int(cols[3])
            for cols in (line.split() for line in out.decode(errors="replace").splitlines()[1:])
            if len(cols) >= 6 and cols[3].isdigit()
        ]
        return code == 0 and bool(free) and min(free) < _FULL_BELOW_KIB

    def _run_locked(self, command: str, *, timeout_s: float, network: bool, as_root: bool = False) -> RunResult:
        import docker.errors
        import requests
        import urllib3.exceptions

        self._ensure_running()
        started = time.monotonic()
        wall_start = time.time()
        output = BoundedOutput()
        failure: list[BaseException] = []

        def pump(stream: Iterator[bytes]) -> None:
            try:
                for chunk in stream:
                    output.add(chunk)
            except (
                OSError,
                requests.RequestException,
                urllib3.exceptions.HTTPError,
                docker.errors.DockerException,
            ) as exc:
                failure.append(exc)  # the stream breaks when the container is killed: expected then

        try:
            if network:
                self._network(True)
            exec_id, stream = self._exec_stream(["/bin/bash", "-c", command], as_root=as_root)
            reader = threading.Thread(target=pump, args=(stream,), name=f"exec-{exec_id[:12]}", daemon=True)
            reader.start()
            with HealthProbe(self._client) as probe:  # its own connection: is the daemon answering at all?
                timed_out, over_disk = self._limits.wait(reader, timeout_s)
                ended = self._limits.ended()  # the final state decides too, before any kill (runtime/limits.py)
                over_disk = over_disk or (ended.layer_bytes or 0) > (self._disk_limit or 0)
            code: int | None = None
            if timed_out or over_disk:
                with contextlib.suppress(docker.errors.APIError):
                    self._container.kill()
                self._killed = True
                self._memo.touch()
                reader.join(30)
            else:
                code = self._exit_code(exec_id)
                self._check_alive(wall_start, code)
        finally:
            if network:  # also after a kill: a restarted container must come back offline
                with contextlib.suppress(docker.errors.APIError, requests.RequestException):
                    self._network(False)
        if timed_out and probe.stalled:  # the deadline took in the daemon's hang: not the candidate's timeout
            raise InfraError(
                InfraKind.DAEMON_STALLED,
                f"{self.instance_id}: the Docker daemon at {host_url(self._client)} answered no ping for "
                f"{probe.stalled_s:.0f} s while {command!r} ran into its {timeout_s:.0f} s limit",
                log=output.text()[-20000:],
            )
        if ended.oom_kills or self._oom_killed(wall_start):
            raise InfraError(
                InfraKind.OOM_KILLED,
                f"{self.instance_id}: the OOM killer struck during {command!r}",
                log=output.text()[-20000:],
            )
        if over_disk:
            raise InfraError(
                InfraKind.DISK_FULL,
                f"{self.instance_id}: {command!r} wrote more than {self._disk_limit} bytes to the container's "
                "writable layer; the container was killed",
                log=output.text()[-20000:],
            )
        if ended.pids_refused:
            raise InfraError(
                InfraKind.PIDS_LIMIT,
                f"{self.instance_id}: the container's process limit refused "
                f"{ended.pids_refused} fork(s) during {command!r}",
                log=output.text()[-20000:],
            )
        if failure and not timed_out and code is None:
            raise InfraError(InfraKind.DAEMON_UNREACHABLE, f"{self.instance_id}: output stream failed: {failure[0]}")
        text = output.text()
        return RunResult(
            command=command,
            exit_code=code,
            output=text,
            duration_s=round(time.monotonic() - started, 3),
            timed_out=timed_out,
            oom_killed=False,
        )

    def run_with_channel(
        self, command: str, *, files: Mapping[str, bytes], key: bytes, timeout_s: float
    ) -> tuple[RunResult, bytes, bytes | None]:
        """Run ``command`` as the test user with a result channel it cannot open by name (issue 17, item 2).

        ``files`` (absolute path -> bytes) are written root-owned, mode 0644 (new folders 0755), before
        the run. A folder ``/var/tmp/mb-channel-<random>`` (root, 0700) holds ``key`` (0600), the channel and a
        status file. A root shell opens the channel for appending as fd 3, the key as fd 4, the status as fd 5 (the
        harness's launcher writes it before any project code runs), then drops to the test user (``setpriv``, no
        new privileges) and runs ``command``, offline. After the
        run every process the test user left is stopped (:meth:`_quiesce`) and only then is the channel
        copied out by the daemon. Without a test user (root images) the channel is no stronger than a file.

        Returns:
            ``(run, channel bytes, status bytes)``; ``b""`` when the channel is missing, None when the status is.

        Raises:
            InfraError: as :meth:`run`.
        """
        channel = f"{_INBOX}/mb-channel-{secrets.token_hex(16)}"
        self.write_root_files({**files, f"{channel}/key": key}, private=channel)
        user = self._user or "0:0"
        uid, _, gid = user.partition(":")
        wrapper = (
            f"exec 3>>{channel}/channel.jsonl 4<{channel}/key 5>{channel}/status || exit 96\n"
            f"home=$(getent passwd {shlex.quote(uid)} | cut -d: -f6)\n"
            f"exec /usr/bin/setpriv --reuid={shlex.quote(uid)} --regid={shlex.quote(gid or uid)} --init-groups "
            f'--no-new-privs -- /usr/bin/env HOME="${{home:-/tmp}}" /bin/bash -c {shlex.quote(command)}'
        )
        with self._lock, docker_errors(self._client, self.instance_id, f"running {command!r}"):
            run = self._run_locked(wrapper, timeout_s=timeout_s, network=False, as_root=True)
        run = dataclasses.replace(run, command=command)
        self._quiesce()
        return self._disk_checked(run), self._fetch(f"{channel}/channel.jsonl") or b"", self._fetch(f"{channel}/status")

    def write_root_files(self, files: Mapping[str, bytes], *, private: str) -> None:
        """Write ``files`` (absolute paths) root-owned through the daemon; ``private`` becomes a 0700
        folder and its files 0600; other new folders are made 0755 (existing ones are left as they are)."""
        archive = root_files_archive(files, private=private)
        self._ensure_running()
        self._memo.touch()
        with docker_errors(self._client, self.instance_id, "writing the harness's files"):
            if not self._container.put_archive("/", archive):
                raise InfraError(InfraKind.WORKSPACE_ERROR, f"{self.instance_id}: cannot write the harness's files")

    def _sh(self, command: str) -> tuple[int, str]:
        """``(exit code, output)`` of a housekeeping command (124 when it timed out)."""
        result = self.run(command, timeout_s=HOUSEKEEPING_TIMEOUT_S)
        return (result.exit_code if result.exit_code is not None else 124), result.output

    def _stdout(
        self, argv: list[str], *, as_root: bool = False, trusted: bool = False, locked: bool = False
    ) -> tuple[int, bytes, bytes]:
        """``(exit code, stdout, stderr)`` of a short command, kept apart (binary-safe); ``trusted``: see
        :meth:`_create_exec`; ``locked``: the caller holds the workspace's lock already."""
        with (
            contextlib.nullcontext() if locked else self._lock,
            docker_errors(self._client, self.instance_id, f"running {argv[0]}"),
        ):
            self._ensure_running()
            exec_id = self._create_exec(argv, as_root=as_root, trusted=trusted)
            out, err = self._client.api.exec_start(exec_id, demux=True)
            code = self._exit_code(exec_id)
        return (code if code is not None else 124), out or b"", err or b""

    def stop_leftovers(self) -> None:
        """Stop every process a command left behind (:meth:`_quiesce`)."""
        self._quiesce()

    def root_exec(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        """``(exit code, stdout, stderr)`` of a harness command run as root after what the candidate left
        running was stopped (:meth:`_quiesce`). Its output is held in memory: the command must bound it."""
        self._quiesce()
        return self._stdout(argv, as_root=True)

    def _quiesce(self) -> None:
        """Stop what the candidate left running (a background process waiting to rewrite a report).

        The daemon lists the container's processes (``docker top``: the host's ``ps``, nothing run in
        the container); beyond its init and ``sleep infinity``, the container is killed and started
        again, offline, with its files as they are.
        """
        if self._closed or self._killed or self._memo.quiet:  # quiet: nothing ran since the last look
            return
        with docker_errors(self._client, self.instance_id, "listing the container's processes"):
            gen = self._memo.gen
            processes = self._client.api.top(self.container_id).get("Processes") or []
            if len(processes) > 2:
                self._container.kill()
                self._killed = True
                self._ensure_running()
                gen = self._memo.gen  # started again: its init and sleep only
            self._memo.mark_quiet(gen)

    def _fetch(self, path: str) -> bytes | None:
        """One regular file copied out by the daemon, or None (gone, refused: see :attr:`rejected`)."""
        import docker.errors

        with docker_errors(self._client, self.instance_id, f"copying {path} out"):
            try:
                stream, stat = self._client.api.get_archive(self.container_id, path)
            except docker.errors.NotFound:
                return None
            data, refused = archived_file(stream, int(stat.get("size") or 0), path)
        self.rejected += refused
        return data
