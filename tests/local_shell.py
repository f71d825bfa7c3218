"""A :class:`~pytest_mobilebench.agents.shell.Shell` over a folder of this machine, for unit tests ONLY.

The product never runs an agent's commands on the host: a runtime's shell runs them in the item's container.
Here, in tests, the scripted "agent" is the test's own script, and its commands run with bash in a temp folder
(own process group, killed at the timeout; output bounded while it streams; the API key variable removed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from pytest_mobilebench.agents.shell import OutputBound, ShellResult

__all__ = ["LocalShell"]


class LocalShell:
    """Runs each command as ``bash -c`` in ``root``; keeps at most ``output_limit`` characters of its output."""

    def __init__(self, root: Path, output_limit: int = 50_000) -> None:
        self.root = Path(root)
        self.output_limit = output_limit
        self.commands: list[str] = []

    def run(self, command: str, timeout_s: float) -> ShellResult:
        self.commands.append(command)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILEBENCH_AGENT")}
        start = time.monotonic()
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        bound = OutputBound(self.output_limit)
        assert proc.stdout is not None
        reader = threading.Thread(
            target=lambda: [bound.feed(c) for c in iter(lambda: proc.stdout.read1(65536), b"")], daemon=True
        )
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # background children left by the command
        except ProcessLookupError:
            pass
        reader.join(timeout=5)
        proc.stdout.close()
        return ShellResult(None if timed_out else proc.returncode, bound.text(), timed_out, time.monotonic() - start)
