"""One running container as a :class:`~pytest_mobilebench.runtime.base.Workspace` (see
:mod:`pytest_mobilebench.runtime.docker` for the flow, networking, timeouts and confinement)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import posixpath
import secrets
import shlex
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, final

from pytest_mobilebench.runtime.base import ApplyResult, Capability, InfraError, Workspace
from pytest_mobilebench.runtime.channel import MAX_TOTAL_BYTES, Rejected, glob_regex, glob_root
from pytest_mobilebench.runtime.channel import PRUNED, find_group, split_listing
from pytest_mobilebench.runtime.container_exec import ContainerExec
from pytest_mobilebench.runtime.git import BASE_REF
from pytest_mobilebench.runtime.deadlines import Deadlines, within
from pytest_mobilebench.runtime.daemon import daemon_clock_offset, docker_errors
from pytest_mobilebench.runtime.images import TESTBED, BuiltImage
from pytest_mobilebench.runtime.inbox import INBOX as _INBOX
from pytest_mobilebench.runtime.inbox import input_archive, patch_input
from pytest_mobilebench.runtime.limits import COUNTER_FILES, LimitWatch
from pytest_mobilebench.runtime.read_memo import ReadMemo
from pytest_mobilebench.runtime.removals import remove_later
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

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container


__all__ = ["DockerWorkspace"]

#: exit status meaning "the checkpoint before a patch failed" (never a git / patch status)
_CHECKPOINT_FAILED: Final[int] = 97
#: what a workspace with the image's unprivileged test user can do; a root container (no test user) lacks the
#: result channel and root-owned files: its tests run as root and could rewrite both
_WITH_TEST_USER: Final = frozenset(Capability)
_AS_ROOT: Final = frozenset({Capability.BASE_CHECK, Capability.ROOT_EXEC, Capability.NETWORK_OFF})


@final
class DockerWorkspace(ContainerExec, Workspace):
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

    root: Final[str] = TESTBED  # type: ignore[misc]

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

    @property
    def capabilities(self) -> frozenset[Capability]:  # type: ignore[override]
        """Every :class:`~pytest_mobilebench.runtime.base.Capability` with a test user; without one (tests run as
        root) no result channel and no root-owned files: the tests could rewrite both."""
        return _WITH_TEST_USER if self._user else _AS_ROOT

    def forget_reads(self) -> None:
        """Make the next read list, copy and check for leftover processes afresh (nothing kept)."""
        self._memo.touch()

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

    def put_tree(self, archive: bytes) -> None:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.put_tree`: extracted at ``/`` by the daemon
        (``put_archive``), owners and modes as the archive gives them.

        Raises:
            InfraError: the daemon refused it.
        """
        self._ensure_running()
        self._memo.touch()
        with docker_errors(self._client, self.instance_id, "copying a tree in"):
            if not self._container.put_archive("/", archive):
                raise InfraError(InfraKind.WORKSPACE_ERROR, f"{self.instance_id}: cannot copy the tree in")

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
        :func:`~.channel.shares_find`): one ``find``, its untrusted answer split and checked by
        :func:`~.channel.split_listing`.
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
