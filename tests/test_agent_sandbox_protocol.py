"""``AgentSandbox`` is a protocol implemented over any workspace (issue 32, item 1): the harness takes the agent's
patch with root's commands and its own copy of the git directory, so a workspace must declare
``Capability.ROOT_EXEC``; one that does not is refused by name. Here a host work tree stands in for a provider's
workspace (its "root" commands are the harness's own, run outside the agent's command); the Docker one is
``tests/test_agent_sandbox_docker.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fake_workspaces import BareWorkspace

from pytest_mobilebench.runtime.agent_sandbox import AgentSandbox, WorkspaceAgentSandbox
from pytest_mobilebench.runtime.base import Capability, MissingCapability
from pytest_mobilebench.runtime.conformance import APP, kit_repository
from pytest_mobilebench.runtime.local import LocalRuntime
from pytest_mobilebench.runtime.repos import RepoCache


class HarnessCommands(BareWorkspace):
    """A work tree whose harness commands run apart from the agent's (``root_exec``: this process's user)."""

    capabilities = frozenset({Capability.ROOT_EXEC})

    def root_exec(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        done = subprocess.run(argv, cwd=self.root, capture_output=True, check=False, timeout=120)
        return done.returncode, done.stdout, done.stderr


def _prepare(tmp_path: Path):
    spec = kit_repository(tmp_path)
    runtime = LocalRuntime(RepoCache(tmp_path / "mirrors", run_id="agent"), workdir=tmp_path)
    return lambda: runtime.prepare(spec)


def test_a_workspace_without_root_commands_hosts_no_agent(tmp_path: Path) -> None:
    ws = _prepare(tmp_path)()
    try:
        with pytest.raises(MissingCapability) as info:
            WorkspaceAgentSandbox(ws, instance_id="kit-1")
        assert info.value.kind == "provider_lacks_capability" and info.value.capability == "root_exec"
    finally:
        ws.close()


def test_an_agent_sandbox_over_any_workspace_takes_the_patch_with_its_own_git_directory(tmp_path: Path) -> None:
    removed: list[str] = []
    ws = HarnessCommands(_prepare(tmp_path)())
    sandbox = WorkspaceAgentSandbox(ws, instance_id="kit-1", on_close=lambda: removed.append("relay"))
    assert isinstance(sandbox, AgentSandbox) and sandbox.workdir == str(ws.root)
    with sandbox:
        run = sandbox.run(f"sed -i 's/line 2/LINE 2/' {APP} && echo new > added.txt && echo done", timeout_s=60)
        assert run.exit_code == 0 and "done" in run.output
        # the agent rewrites its git directory: the base tag now names its own commit, the index is gone
        tamper = "git add -A && git -c user.name=a -c user.email=a@b commit -qm mine && git tag -f mobilebench-base"
        assert sandbox.run(tamper + " && rm -f .git/index", timeout_s=60).exit_code == 0
        slow = sandbox.run("sleep 30", timeout_s=1)
        assert slow.timed_out and slow.duration_s < 20
        taken = sandbox.take_patch()
        assert "+LINE 2" in taken.patch and "+++ b/added.txt" in taken.patch and not taken.error
        assert sandbox.take_patch(max_bytes=10).too_large
    sandbox.close()  # twice: nothing more
    assert removed == ["relay"] and not Path(ws.root).exists()
