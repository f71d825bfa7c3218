"""The local runtime: a temporary git work tree on the host.

Used where Docker is not wanted (``--mb-runtime=local``, which needs ``--mb-trust-candidates``): fast,
but the instance's toolchain must already be on the host, and the candidate's code runs UNISOLATED with
the user's rights: it can read and write the user's files and reach the network (README "Threat
model"). Only the environment is scrubbed and result files are read without following links. The test
command runs in its own process group; on timeout the whole group is killed.
"""

from __future__ import annotations

import glob
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import final

from pytest_mobilebench.runtime.base import (
    ApplyResult,
    Capability,
    InfraError,
    RunResult,
    Workspace,
    WorkspaceSpec,
)
from pytest_mobilebench.runtime.channel import glob_root
from pytest_mobilebench.runtime.git import BASE_REF
from pytest_mobilebench.runtime.patching import (
    CHECKPOINT,
    DIFF,
    RESET,
    apply_with_fallbacks,
    input_file_name,
    restore_script,
    strategies_for,
)
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.trust import scrubbed_environment
from pytest_mobilebench.states import InfraKind

__all__ = ["UNISOLATED", "LocalRuntime", "LocalWorkspace", "local_refusal", "run_process_group"]

#: said once per process whenever candidates run in the local runtime
UNISOLATED = (
    "--mb-runtime=local: candidates run UNISOLATED on this host, with your user's rights, files and network "
    "(see README 'Threat model')"
)


def local_refusal(choice: str, *, daemon: bool, trusted: bool) -> InfraError | None:
    """Why a candidate may not run in the local runtime, or None when it may (issue 7, item 4).

    Args:
        choice: ``--mb-runtime`` (``auto``, ``docker`` or ``local``); call only when Docker is not used.
        daemon: whether a Docker daemon answered.
        trusted: the code is the benchmark's own (gold patch, validation) or ``--mb-trust-candidates``.

    ``auto`` never falls back to the local runtime for a real candidate; ``local`` needs trust.
    """
    if trusted:
        return None
    if choice == "auto" and not daemon:
        return InfraError(
            InfraKind.DAEMON_UNREACHABLE,
            "no Docker daemon answers, and a candidate is never run unisolated on this host: start dockerd "
            "(or set DOCKER_HOST), or pass --mb-runtime=local --mb-trust-candidates to accept the risk",
        )
    if choice == "local":
        return InfraError(
            InfraKind.UNTRUSTED_LOCAL_RUN,
            "--mb-runtime=local runs candidates unisolated on this host: add --mb-trust-candidates to accept "
            "that, or use --mb-runtime=docker",
        )
    return None


def run_process_group(command: str, *, cwd: Path, timeout_s: float, env: dict[str, str] | None = None) -> RunResult:
    """Run ``command`` with ``bash -c`` in a new session; kill the whole process group on timeout.

    Args:
        command: shell command line.
        cwd: working directory.
        timeout_s: wall-clock limit in seconds.
        env: full environment (default: the current one).

    Returns:
        RunResult; ``exit_code`` is None and ``timed_out`` True when the limit was hit.
    """
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        timed_out = False
        try:
            code: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            code = None
        # children that outlived a finished leader are killed too: nothing of the run survives it
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        out.seek(0)
        output = out.read().decode("utf-8", errors="replace")
    return RunResult(
        command=command,
        exit_code=code,
        output=output,
        duration_s=round(time.monotonic() - start, 3),
        timed_out=timed_out,
    )


@final
class LocalWorkspace(Workspace):
    """A work tree at ``root`` checked out at the base commit (tag ``mobilebench-base``).

    Of the :class:`~pytest_mobilebench.runtime.base.Capability` set only the base check: the candidate's code
    runs with the user's rights (no file it cannot change, no channel it cannot open, the network on), so a
    suite refuses untrusted candidates here or records trusted runs as unharnessed.
    """

    capabilities = frozenset({Capability.BASE_CHECK})

    def __init__(self, root: Path, owned_dir: Path) -> None:
        self.root = root
        self._owned = owned_dir
        self.results_root = str(owned_dir / f"results-{secrets.token_hex(8)}")

    def _sh(self, command: str, timeout_s: float = 600) -> tuple[int, str]:
        result = run_process_group(command, cwd=self.root, timeout_s=timeout_s)
        return (result.exit_code if result.exit_code is not None else 124), result.output

    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.apply_patch`."""
        code, out = self._sh(CHECKPOINT)
        if code != 0:
            raise InfraError(InfraKind.WORKSPACE_ERROR, f"cannot checkpoint the work tree before {name}: {out}")
        patch_file = self._owned / f"{name}.diff"
        patch_file.write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
        return apply_with_fallbacks(
            self._sh, str(patch_file), lambda: self._sh(RESET) and None, strategies=strategies_for(patch)
        )

    def applies_at_base(self, patch: str) -> tuple[bool, str]:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.applies_at_base` (a scratch index read from
        :data:`~pytest_mobilebench.runtime.git.BASE_REF`; the work tree is not touched)."""
        name = self.put_input(
            f"check-{secrets.token_hex(8)}.diff", (patch if patch.endswith("\n") else patch + "\n").encode()
        )
        index = shlex.quote(str(self._owned / f"index-{secrets.token_hex(8)}"))
        code, out = self._sh(
            f"GIT_INDEX_FILE={index} git read-tree {BASE_REF} && GIT_INDEX_FILE={index} git apply --cached --check "
            f"{shlex.quote(name)}; code=$?; rm -f {index}; exit $code"
        )
        return code == 0, out

    def restore_paths(self, paths: Sequence[str]) -> None:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.restore_paths`."""
        if not paths:
            return
        code, out = self._sh(f"sh {shlex.quote(self.put_input('restore.sh', restore_script(paths)))}")
        if code != 0:
            raise InfraError(InfraKind.WORKSPACE_ERROR, f"cannot restore {len(paths)} path(s) {list(paths)[:5]}: {out}")

    def put_input(self, name: str, data: bytes) -> str:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.put_input` (in the workspace's own folder)."""
        target = self._owned / input_file_name(name)
        target.write_bytes(data)
        return str(target)

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.run` (``network`` is not enforced locally;
        the environment is scrubbed with :func:`pytest_mobilebench.trust.scrubbed_environment`)."""
        return run_process_group(command, cwd=self.root, timeout_s=timeout_s, env=scrubbed_environment(os.environ))

    def _matches(self, patterns: Sequence[str]) -> list[tuple[Path, str]]:
        """``(path, key)`` of regular files (not links) matching ``patterns``, never outside their folder."""
        out: list[tuple[Path, str]] = []
        for pattern in patterns:
            absolute = pattern.startswith("/")
            for match in sorted(glob.glob(pattern if absolute else str(self.root / pattern), recursive=True)):
                path = Path(match)
                base = Path(glob_root(pattern)) if absolute else self.root
                if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(base.resolve()):
                    continue
                out.append((path, match.lstrip("/") if absolute else path.relative_to(self.root).as_posix()))
        return out

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.read_files`."""
        return {key: path.read_bytes() for path, key in self._matches(patterns)}

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.clear_files`."""
        matches = self._matches(patterns)
        for path, _key in matches:
            path.unlink(missing_ok=True)
        shutil.rmtree(self.results_root, ignore_errors=True)
        Path(self.results_root).mkdir(mode=0o700, parents=True)
        return sorted({key for _, key in matches})

    def diff(self) -> str:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.diff`."""
        return self._sh(DIFF)[1]

    def close(self) -> None:
        """Delete the work tree."""
        shutil.rmtree(self._owned, ignore_errors=True)


@final
class LocalRuntime:
    """Workspaces as temporary git work trees; repositories from a :class:`RepoCache`.

    Args:
        repos: where repositories are mirrored and checked out from.
        workdir: parent folder of the temporary work trees (default: the system temp folder).
        setup_command: run once after checkout when the environment record names an ``install`` command.
    """

    name = "local"

    def __init__(self, repos: RepoCache, workdir: Path | None = None) -> None:
        self.repos = repos
        self.workdir = workdir

    def prepare(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> LocalWorkspace:
        """Check out the repository and run the environment's ``install`` command if it has one.

        Raises:
            InfraError: clone failure, the install command failing (``install_failed``), or an environment
                this runtime cannot honour (``environment_unsupported``: ``recipe`` / ``image`` need images).
        """
        from pytest_mobilebench.runtime.environment import (
            Environment,
            local_unsupported,
        )

        unsupported = local_unsupported(Environment.from_mapping(spec.environment))
        if unsupported:
            fields = ", ".join(f"environment.{f}" for f in unsupported)
            raise InfraError(
                InfraKind.ENVIRONMENT_UNSUPPORTED, f"{spec.instance_id}: {fields} needs --mb-runtime=docker"
            )
        owned = Path(tempfile.mkdtemp(prefix=f"mb-{spec.instance_id[:40]}-", dir=self.workdir))
        root = owned / "repo"
        try:
            self.repos.checkout(spec.repo, spec.base_commit, root, url=spec.repo_url or None)
            workspace = LocalWorkspace(root, owned)
            install = spec.environment.get("install")
            if install:
                result = workspace.run(str(install), timeout_s=float(spec.environment.get("install_timeout", 1800)))
                if log_dir is not None:
                    log_dir.mkdir(parents=True, exist_ok=True)
                    (log_dir / "install.log").write_text(f"$ {install}\n{result.output}", encoding="utf-8")
                if result.exit_code != 0:
                    raise InfraError(
                        InfraKind.INSTALL_FAILED, f"`{install}` failed (exit {result.exit_code})", log=result.output
                    )
        except BaseException:
            shutil.rmtree(owned, ignore_errors=True)
            raise
        return workspace
