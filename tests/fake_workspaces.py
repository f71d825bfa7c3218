"""Workspaces and a runtime provider made for tests, each a subclass of the one base
(:class:`pytest_mobilebench.runtime.base.Workspace`), so a member a suite calls is never missing.

* :class:`FilesWorkspace`: files in a dict, nothing runs (unit tests of what a suite reads and decides).
* :class:`BareWorkspace` / :class:`BareProvider` (``--mb-runtime=bare``): a third provider, in-process, that
  declares NO capability (no result channel, no root-owned files, no base check, no network control). It
  checks out a git work tree on this host like the local runtime and hands out the base's defaults for
  everything else: the conformance kit runs on it, and a suite must refuse untrusted candidates on it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.runtime.base import (
    ApplyResult,
    Capability,
    RunResult,
    Workspace,
    WorkspaceSpec,
)

__all__ = ["BareProvider", "BareRuntime", "BareWorkspace", "FilesWorkspace"]


class FilesWorkspace(Workspace):
    """``{relative name: bytes}`` as a workspace: reads match names with ``fnmatch``; ``run`` answers
    ``exit_code`` 0 and records the command; patches and restores are refused loudly (not used here)."""

    root = "/testbed"
    results_root = "/var/tmp/mb-results-test"

    def __init__(self, files: Mapping[str, bytes], *, capabilities: frozenset[Capability] = frozenset()) -> None:
        self.files = dict(files)
        self.capabilities = capabilities
        self.commands: list[str] = []
        self.closed = 0

    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        raise AssertionError(f"FilesWorkspace applies no patch ({name})")

    def restore_paths(self, paths: Sequence[str]) -> None:
        raise AssertionError(f"FilesWorkspace restores nothing ({list(paths)[:3]})")

    def put_input(self, name: str, data: bytes) -> str:
        self.files[f"var/tmp/{name}"] = data
        return f"/var/tmp/{name}"

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        self.commands.append(command)
        return RunResult(command=command, exit_code=0, output="", duration_s=0.0)

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        return {name: data for name, data in self.files.items() if any(fnmatch.fnmatch(name, p) for p in patterns)}

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        gone = sorted(self.read_files(patterns))
        for name in gone:
            del self.files[name]
        return gone

    def diff(self) -> str:
        return ""

    def close(self) -> None:
        self.closed += 1


class BareWorkspace(Workspace):
    """A git work tree on this host behind the base's required members only (delegated to a
    :class:`~pytest_mobilebench.runtime.local.LocalWorkspace`); ``capabilities`` is empty, every time saver is
    the base's default."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.root = inner.root
        self.results_root = inner.results_root

    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        return self._inner.apply_patch(patch, name=name)

    def restore_paths(self, paths: Sequence[str]) -> None:
        self._inner.restore_paths(paths)

    def put_input(self, name: str, data: bytes) -> str:
        return self._inner.put_input(name, data)

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        return self._inner.run(command, timeout_s=timeout_s, network=network)

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        return self._inner.read_files(patterns)

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        return self._inner.clear_files(patterns)

    def diff(self) -> str:
        return self._inner.diff()

    def close(self) -> None:
        self._inner.close()


class BareRuntime:
    """Workspaces of :class:`BareWorkspace` (``name`` ``"bare"``)."""

    name = "bare"

    def __init__(self, options: Mapping[str, Any], run_id: str) -> None:
        from pytest_mobilebench.runtime.local import LocalRuntime
        from pytest_mobilebench.runtime.provider import repo_cache

        self._local = LocalRuntime(repo_cache(options, run_id))

    def prepare(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> BareWorkspace:
        return BareWorkspace(self._local.prepare(spec, log_dir=log_dir))


class BareProvider:
    """``bare``: a provider serving trusted and untrusted code alike; what a suite may do with its workspaces
    is decided by their (empty) capabilities, never by the provider's name."""

    name = "bare"
    options: tuple[Any, ...] = ()

    def __init__(self) -> None:
        self.swept: list[str] = []

    def available(self, ctx: Any) -> bool:
        return False  # never chosen by auto

    def start(self, ctx: Any) -> None:
        """Nothing to sweep per process."""

    def sweep(self, options: Mapping[str, Any], run_id: str) -> None:
        self.swept.append(run_id)

    def make(self, ctx: Any, trusted: bool) -> BareRuntime:
        return BareRuntime(ctx.options, ctx.run_id)

    def finish(self, options: Mapping[str, Any], run_id: str, cache_level: str | None) -> None:
        return None
