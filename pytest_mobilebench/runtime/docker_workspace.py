"""One running container as a :class:`~pytest_mobilebench.runtime.base.Workspace` (see
:mod:`pytest_mobilebench.runtime.docker` for the flow, networking, timeouts and confinement)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import posixpath
import secrets
import shlex
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, final

from pytest_mobilebench.runtime.base import ApplyResult, InfraError, RunResult
from pytest_mobilebench.runtime.channel import MAX_TOTAL_BYTES, Rejected, archived_file, glob_regex, glob_root
from pytest_mobilebench.runtime.channel import PRUNED, find_group, split_listing
from pytest_mobilebench.runtime.git import BASE_REF
from pytest_mobilebench.runtime.deadlines import Deadlines, within
from pytest_mobilebench.runtime.daemon import (
    container_events,
    daemon_clock_offset,
    docker_errors,
    host_url,
    is_disk_full,
)
from pytest_mobilebench.runtime.images import TESTBED, BuiltImage
from pytest_mobilebench.runtime.inbox import INBOX as _INBOX
from pytest_mobilebench.runtime.inbox import input_archive, patch_input, root_files_archive
from pytest_mobilebench.runtime.limits import COUNTER_FILES, LimitWatch
from pytest_mobilebench.runtime.output import BoundedOutput
from pytest_mobilebench.runtime.read_memo import ReadMemo
from pytest_mobilebench.runtime.removals import remove_later
from pytest_mobilebench.runtime.stall import HealthProbe
from pytest_mobilebench.runtime.patching import (
    CHECKPOINT,
    DIFF,
    RESET,
    apply_with_fallbacks,
    input_file_name,
    restore_script,
    strategies_for,
)
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.trust import SCRUBBED_NAMES

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container


__all__ = ["DockerWorkspace"]

#: seconds for housekeeping commands (checkpoint, reset, diff, listing files)
_HOUSEKEEPING_TIMEOUT_S: Final[float] = 600.0
#: exit status meaning "the checkpoint before a patch failed" (never a git / patch status)
_CHECKPOINT_FAILED: Final[int] = 97


#: every exec gets these: the runner's start-up variables blanked (trust.SCRUBBED_NAMES), CI mode on
_EXEC_ENV: Final[dict[str, str]] = {**{name: "" for name in sorted(SCRUBBED_NAMES)}, "CI": "true"}
#: free KiB under which the harness measures a file system as full
_FULL_BELOW_KIB: Final[int] = 32 * 1024
#: seconds the container's state and events are asked again after an exec ended as an outside kill
#: leaves it (exit 137, SIGKILL, or no status): the daemon records the kill a moment after the exec ends
_SETTLE_S: Final[float] = 3.0


@final
class DockerWorkspace:
    """One running container with the repository at ``/testbed`` (tag ``mobilebench-base`` = base tree).

    Created by :meth:`DockerRuntime.start`; implements :class:`~pytest_mobilebench.runtime.base.Workspace`.
    Files come back only through the daemon (``get_archive``), never through a program in the container;
    every name is checked by :mod:`pytest_mobilebench.runtime.channel` and refused names are kept in
    :attr:`rejected` for the evidence.

    Attributes:
        container_id: the container's id.
        image: the instance image it runs.
        instance_id: the benchmark instance.
        results_root: a folder outside the repository, random per workspace, emptied by :meth:`clear_files`.
        rejected: names refused by the last :meth:`read_files` (absolute, ``..``, links, too large).
    """

    root: Final[str] = TESTBED

    def __init__(
        self,
        client: docker.DockerClient,
        container: Container,
        image: BuiltImage,
        instance_id: str,
        *,
        disk_limit_bytes: int | None = None,
        user: str | None = None,
        clock_offset: float | None = None,
        read_deadline_s: float = Deadlines.grade_s,
    ) -> None:
        self._client = client
        self._container = container
        #: every command runs as this user (the image's test user; None: root). The container's own
        #: process (``sleep infinity`` under docker-init) stays root's, so a test cannot end the container
        #: and turn its own failure into ``container_died``.
        self._user = user
        #: seconds the daemon's clock is ahead (given by the runtime, which asks once a minute; else asked here)
        self._clock_offset = daemon_clock_offset(client) if clock_offset is None else clock_offset
        self.container_id: str = str(container.id)
        self.image = image
        self.instance_id = instance_id
        self.results_root = f"{_INBOX}/mb-results-{secrets.token_hex(16)}"
        self.rejected: list[Rejected] = []
        self._disk_limit = disk_limit_bytes
        self._read_deadline_s = read_deadline_s  # one read_files as a whole (--mb-grade-deadline)
        #: the disk poll during a command and the final look at disk, memory and processes (runtime/limits.py)
        self._limits = LimitWatch(
            client,
            self.container_id,
            disk_limit_bytes,
            lambda: self._stdout(["/bin/grep", "-sH", "", *COUNTER_FILES], as_root=True, trusted=True, locked=True)[1],
        )
        self._closed = False
        self._killed = False
        self._lock = threading.Lock()
        #: listings, copies and the quiet check since the container last could change (runtime/read_memo.py)
        self._memo = ReadMemo()
        self._results_made = False
        #: input files :meth:`stage_patches` copied in and no put_input used yet: {file name: sha256 of its bytes}
        self._staged: dict[str, bytes] = {}
        self._started_at = self._state().get("StartedAt")

    @property
    def pristine_image_id(self) -> str | None:
        """The image id while nothing has run in the container and nothing was copied in (its files are the
        image's, byte for byte: what any container of that image holds), else None."""
        return self.image.image_id if self._memo.gen == 0 else None

    def forget_reads(self) -> None:
        """Make the next read list, copy and check for leftover processes afresh (nothing kept)."""
        self._memo.touch()

    # ------------------------------------------------------------------------------------ execution

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
        """Which of ``actions`` the daemon logged for this container since wall-clock ``since`` (:func:`.daemon.container_events`)."""
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
        result = self.run(command, timeout_s=_HOUSEKEEPING_TIMEOUT_S)
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

    # ---------------------------------------------------------------------------- workspace protocol

    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.apply_patch`.

        The tree is checkpointed (``patching.CHECKPOINT``, in the same exec as the first attempt),
        the patch is copied to
        ``/var/tmp/mobilebench-<name>.diff`` and :func:`~pytest_mobilebench.runtime.patching.apply_with_fallbacks`
        runs its ladder inside the container, resetting (``patching.RESET``) between attempts.

        Raises:
            InfraError("workspace_error"): the checkpoint commit failed.
        """
        patch_path = self.put_input(*patch_input(patch, name))
        checkpointed = False

        def execute(command: str) -> tuple[int, str]:
            # the checkpoint rides on the first attempt's exec (one container exec less per patch)
            nonlocal checkpointed
            if checkpointed:
                return self._sh(command)
            checkpointed = True
            code, out = self._sh(
                f"{{ {CHECKPOINT} ; }} >/tmp/mobilebench-checkpoint.log 2>&1 || "
                f"{{ cat /tmp/mobilebench-checkpoint.log; exit {_CHECKPOINT_FAILED}; }}\n{command}"
            )
            if code == _CHECKPOINT_FAILED:
                raise InfraError(
                    InfraKind.WORKSPACE_ERROR, f"{self.instance_id}: cannot checkpoint the tree before {name}: {out}"
                )
            return code, out

        return apply_with_fallbacks(
            execute, shlex.quote(patch_path), lambda: self._sh(RESET) and None, strategies=strategies_for(patch)
        )

    def applies_at_base(self, patch: str) -> tuple[bool, str]:
        """Whether ``patch`` applies to the base tree (``git apply --cached --check`` against a scratch
        index read from :data:`~pytest_mobilebench.runtime.git.BASE_REF`; the work tree is not touched).
        Returns ``(applies, git's output)``: a test patch that applies at base but not after the
        candidate's patch is the candidate's conflict (issue 17, item 3)."""
        name = f"{_INBOX}/mb-check-{secrets.token_hex(8)}.diff"
        self.write_root_files({name: (patch if patch.endswith("\n") else patch + "\n").encode()}, private="")
        index = f"/tmp/mb-index-{secrets.token_hex(8)}"
        code, out = self._sh(
            f"GIT_INDEX_FILE={index} git read-tree {BASE_REF} && GIT_INDEX_FILE={index} git apply --cached --check "
            f"{shlex.quote(name)}; code=$?; rm -f {index}; exit $code"
        )
        return code == 0, out

    def restore_paths(self, paths: Sequence[str]) -> None:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.restore_paths` (one exec for all paths).

        Raises:
            InfraError("workspace_error"): git could not restore a path.
        """
        if not paths:
            return
        code, out = self._sh(f"sh {shlex.quote(self.put_input('restore.sh', restore_script(paths)))}")
        if code != 0:
            raise InfraError(
                InfraKind.WORKSPACE_ERROR,
                f"{self.instance_id}: cannot restore {len(paths)} path(s) {list(paths)[:5]}: {out}",
            )

    def put_input(self, name: str, data: bytes) -> str:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.put_input`: ``/var/tmp/mobilebench-<name>``,
        copied in through the daemon (``put_archive``, root's file, mode 0644), unless :meth:`stage_patches`
        copied in these very bytes under this name already (once: a second put copies again)."""
        file_name = input_file_name(name)
        if self._staged.pop(file_name, None) == hashlib.sha256(data).digest():
            return f"{_INBOX}/{file_name}"
        self._copy_inputs({file_name: data})
        return f"{_INBOX}/{file_name}"

    def stage_patches(self, patches: Mapping[str, str]) -> None:
        """Copy the input files of the later :meth:`apply_patch` calls ``{name: patch}`` in now, in ONE copy
        (one tar): each of those calls then copies nothing. The files are root's (mode 0644, in the sticky
        ``/var/tmp``): the test user can neither change nor replace them before they are applied."""
        files = dict(patch_input(patch, name) for name, patch in patches.items())
        self._copy_inputs({input_file_name(name): data for name, data in files.items()})
        self._staged.update({input_file_name(name): hashlib.sha256(data).digest() for name, data in files.items()})

    def _copy_inputs(self, files: Mapping[str, bytes]) -> None:
        """Copy ``{file name: bytes}`` into :data:`~.inbox.INBOX` through the daemon, one tar (root's, 0644)."""
        self._ensure_running()
        self._memo.touch()
        with docker_errors(self._client, self.instance_id, f"copying {', '.join(files)} in"):
            self._container.put_archive(_INBOX, input_archive(files))

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.read_files`; absolute patterns are allowed
        too (their keys are the path without the leading ``/``).

        The one-way channel (issue 7, item 1): processes the candidate left behind are stopped first
        (:meth:`_quiesce`); names are listed with ``/usr/bin/find`` (its answer is
        untrusted: every name is checked, matched against the glob on the host and must stay under the
        glob's folder), then each file is copied out by the daemon (``get_archive``) and only a regular
        file of the expected name and bounded size is kept (:func:`~pytest_mobilebench.runtime.channel.read_tar_files`).
        Refused names go to :attr:`rejected`. Reads with nothing run or copied in between list each
        folder, copy each file and check for leftover processes once (:mod:`~pytest_mobilebench.runtime.read_memo`).

        Raises:
            InfraError: ``daemon_unreachable``, ``container_died``, ``docker_error``; ``grade_timeout`` when the
                read as a whole outlasts ``read_deadline_s`` (:func:`~.deadlines.within`).
        """
        return within(
            self._read_deadline_s,
            InfraKind.GRADE_TIMEOUT,
            f"{self.instance_id}: reading {', '.join(patterns)[:200]} back",
            lambda: self._read_files(patterns),
        )

    def _read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        self.rejected = []
        self._quiesce()
        found: dict[str, bytes] = {}
        total = 0
        for path, key in self._matches(patterns):
            data = None if key in found else self._copy_out(path)
            if data is None:
                continue
            if total + len(data) > MAX_TOTAL_BYTES:
                self.rejected.append(Rejected(path, f"over the total of {MAX_TOTAL_BYTES} bytes per read"))
                continue
            total += len(data)
            found[key] = data
        return found

    def list_files(self, patterns: Sequence[str]) -> list[str]:
        """The keys :meth:`read_files` would give for ``patterns`` (listed the same way, after the same
        process check), copying nothing: for files whose presence alone matters. Refused names are added
        to :attr:`rejected`."""
        self._quiesce()
        return list(dict.fromkeys(key for _, key in self._matches(patterns)))

    def list_ahead(self, patterns: Sequence[str]) -> None:
        """Name files a read at this moment (nothing run or copied in before it) will want: their folders
        join the moment's next ``find`` (:meth:`_listing`), so that read lists nothing more."""
        self._memo.expect(glob_root(p if p.startswith("/") else f"{TESTBED}/{p}") for p in patterns)

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

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        """Delete every file matching ``patterns`` and make :attr:`results_root` a fresh empty folder.

        Called before the test run, so a result file planted by the candidate's patch is never read as
        this run's. Returns the deleted keys (as :meth:`read_files` names them). Globs under
        :attr:`results_root` are not listed before its first making (its name is random, chosen on the
        host: nothing is there); the deletions and the folder's making are one exec (``/bin/sh`` with the
        names as arguments, never in the script), plus one ``rm`` per further 500 names.

        Raises:
            InfraError: the deletion failed, or a daemon error.
        """
        root = self.results_root
        fresh = [p for p in patterns if not self._results_made and (glob_root(p) + "/").startswith(root + "/")]
        matches = self._matches([p for p in patterns if p not in fresh])
        paths = [path for path, _ in matches]
        script = 'r=$1; shift; /bin/rm -rf -- "$r" && /bin/rm -f -- "$@" && /bin/mkdir -m 700 -p -- "$r"'
        for argv in (
            *(["/bin/rm", "-f", "--", *paths[i : i + 500]] for i in range(500, len(paths), 500)),
            ["/bin/sh", "-c", script, "sh", root, *paths[:500]],
        ):
            code, _out, err = self._stdout(argv, trusted=True)
            if code != 0:
                self._memo.touch()
                raise InfraError(
                    InfraKind.WORKSPACE_ERROR,
                    f"{self.instance_id}: cannot empty result files or make {root}: {err.decode(errors='replace')}",
                )
        self._results_made = True
        self._memo.forget_files(paths, [root])  # what the trusted clean-up changed, and nothing else
        return sorted({key for _, key in matches})

    def _matches(self, patterns: Sequence[str]) -> list[tuple[str, str]]:
        """``(absolute path in the container, key)`` of the listed files that match ``patterns``.

        Each distinct folder is listed once per call, folders that do not hold one another in one ``find``
        (a framework's planning files are a dozen patterns under ``/testbed``; the jest probes name four
        ``node_modules`` packages), a folder listed at this generation not again (:meth:`_listing`)."""
        out: list[tuple[str, str]] = []
        wanted = [(pattern, pattern if pattern.startswith("/") else f"{TESTBED}/{pattern}") for pattern in patterns]
        listed = self._listing(list(dict.fromkeys(glob_root(full) for _, full in wanted)))
        for pattern, full in wanted:
            folder, regex = glob_root(full), glob_regex(full.lstrip("/"))
            for rel in listed[folder]:
                path = posixpath.join(folder, rel)
                if regex.match(path.lstrip("/")):
                    key = path.lstrip("/") if pattern.startswith("/") else posixpath.relpath(path, TESTBED)
                    out.append((path, key))
        return out

    def _listing(self, folders: list[str]) -> dict[str, list[str]]:
        """``{folder: names}``: kept listings (their rejections replayed), the rest by :meth:`_list`, as few
        ``find`` calls as :func:`~.channel.find_group` allows, the first one also listing the folders
        :meth:`list_ahead` named for this moment (kept for a later read, nothing copied)."""
        listed: dict[str, list[str]] = {}
        todo, first = list(folders), True
        while todo:
            for folder in list(todo):
                if (kept := self._memo.listing(folder)) is not None:  # kept, or part of a kept folder
                    self.rejected += kept[1]
                    listed[folder] = list(kept[0])
                    todo.remove(folder)
            if not todo:
                break
            group, gen = find_group(todo, self._memo.expected() if first else ()), self._memo.gen
            first = False
            for folder, (names, rejected) in self._list(group).items():
                self._memo.keep_listing(gen, folder, names, rejected)
                if folder in todo:
                    self.rejected += rejected
                    listed[folder] = names
                    todo.remove(folder)
        return listed

    def _copy_out(self, path: str) -> bytes | None:
        """:meth:`_fetch`, or the copy kept at this generation (its rejections replayed)."""
        kept = self._memo.content(path)
        if kept is not None:
            self.rejected += kept[1]
            return kept[0]
        gen, before = self._memo.gen, len(self.rejected)
        data = self._fetch(path)
        self._memo.keep_content(gen, path, data, self.rejected[before:])
        return data

    def _list(self, folders: list[str]) -> dict[str, tuple[list[str], list[Rejected]]]:
        """Regular files under each of ``folders`` (not in ``node_modules`` or ``.git``; the folders pairwise
        :func:`~.channel.shares_find`): one ``find``, its untrusted answer split and checked by :func:`~.channel.split_listing`.
        find exits 1 for a missing folder: no file, not an error."""
        _code, out, _err = self._stdout(
            [
                "/usr/bin/find",
                *folders,
                "(",
                "-name",
                PRUNED[0],
                "-o",
                "-name",
                PRUNED[1],
                ")",
                "-prune",
                "-o",
                "-type",
                "f",
                "-print0",
            ],
            trusted=True,
        )
        return split_listing(out, folders)

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

    def diff(self) -> str:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.diff` (``patching.DIFF``, stdout only).

        Raises:
            InfraError("workspace_error"): git failed.
        """
        code, out, err = self._stdout(["/bin/bash", "-c", DIFF])
        if code != 0:
            raise InfraError(
                InfraKind.WORKSPACE_ERROR, f"{self.instance_id}: git diff failed: {err.decode(errors='replace')}"
            )
        return out.decode("utf-8", errors="replace")

    def close(self) -> None:
        """Remove the container (killing what still runs). Safe after a timeout, after the daemon went
        away (the container is then left for the next run's sweep) and safe to call twice."""
        if not self._closed:
            self._closed = True
            _remove(self._container)

    def close_later(self) -> None:
        """Close the workspace now and remove the container in the background (:mod:`.removals`: killed
        and removed as :meth:`close` does, while the caller goes on). For a caller that has read
        everything it needs (evidence written, verdict judged); the run's end waits for the removal
        (:func:`~pytest_mobilebench.runtime.removals.drain`). Safe to call twice, and after :meth:`close`."""
        if not self._closed:
            self._closed = True
            remove_later(functools.partial(_remove, self._container))


def _remove(container: Container) -> None:
    """Kill and remove ``container`` with its anonymous volumes; a daemon error leaves it to the sweep."""
    import docker.errors
    import requests

    with contextlib.suppress(docker.errors.DockerException, requests.RequestException, OSError):
        container.remove(force=True, v=True)
