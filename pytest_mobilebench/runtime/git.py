"""The one git helper of the harness: run git on the host, and the name of the base ref.

Used by the repository mirrors (:mod:`.repos`) and the Docker runtime's checkouts (:mod:`.docker`).
Prompts and LFS downloads are off, so an unreachable or private remote fails fast instead of hanging.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["BASE_REF", "GitError", "run_git"]

#: The tag naming a workspace's base tree (the base commit, after dependency installation in Docker);
#: resets, restores and diffs name it.
BASE_REF: Final[str] = "mobilebench-base"


class GitError(subprocess.CalledProcessError):
    """git exited non-zero; ``str()`` gives the command and git's own message (stderr)."""

    def __str__(self) -> str:
        return f"{self.cmd} failed (exit {self.returncode}): {(self.stderr or '').strip()}"


def run_git(args: Sequence[str], *, cwd: Path | None = None, timeout: float = 1800, text: bool = True) -> str:
    """Run ``git <args>`` in ``cwd`` and return its stdout (decoded with replacement when ``text``).

    Raises:
        GitError: non-zero exit (stdout and stderr attached).
        subprocess.TimeoutExpired: after ``timeout`` seconds.
    """
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=text,
        errors="replace" if text else None,
        timeout=timeout,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1"},
        check=False,
    )
    if proc.returncode != 0:
        stderr = proc.stderr if text else proc.stderr.decode("utf-8", "replace")
        raise GitError(proc.returncode, "git " + " ".join(shlex.quote(a) for a in args), proc.stdout, stderr)
    return proc.stdout
