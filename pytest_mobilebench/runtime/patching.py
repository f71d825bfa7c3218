"""Applying a unified diff with fallbacks, the same way in every runtime.

The three strategies of the harness, in order (SWE-bench's harness uses the same ladder):

1. ``git apply --verbose --whitespace=nowarn``
2. ``git apply --verbose --3way`` (uses blob ids in the ``index`` lines to merge)
3. ``patch --batch --forward --fuzz=5 -p1``

The tree is reset between attempts so a half-applied attempt never leaks into the next one, and the
output of every attempt is kept: the first real error is the one users need to see.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from typing import Final

from pytest_mobilebench.runtime.base import ApplyResult
from pytest_mobilebench.runtime.git import BASE_REF

__all__ = [
    "CHECKPOINT",
    "DIFF",
    "GIT_IDENTITY",
    "RESET",
    "STRATEGIES",
    "apply_with_fallbacks",
    "restore_command",
    "restore_script",
    "strategies_for",
    "input_file_name",
]

#: (strategy name, shell command template; ``{patch}`` is the patch file path inside the workspace)
STRATEGIES: Final[tuple[tuple[str, str], ...]] = (
    ("git apply", "git apply --verbose --whitespace=nowarn {patch}"),
    ("git apply --3way", "git apply --verbose --3way {patch}"),
    ("patch --fuzz", "patch --batch --forward --fuzz=5 -p1 -i {patch}"),
)


_BINARY_RE: Final = re.compile(r"^(GIT binary patch|Binary files .* differ)$", re.M)


def strategies_for(patch: str) -> tuple[tuple[str, str], ...]:
    """The strategies that may apply ``patch``: git only (no ``patch --fuzz``) when it carries binary files
    or a section whose ``---`` and ``+++`` name different files outside a git rename.

    GNU patch skips binary hunks and still exits 0, which would silently drop part of the candidate; and
    it edits whichever of two differing names exists, so ``--- a/Test.kt`` / ``+++ b/Main.kt`` could change
    a test file that every check reads as ``Main.kt``. ``git apply`` always writes the ``+++`` name.
    An unparseable patch keeps every strategy (the apply then fails on its own and says why).
    """
    from pytest_mobilebench.patch import PatchError, parse_patch

    if _BINARY_RE.search(patch):
        return tuple(s for s in STRATEGIES if s[0] != "patch --fuzz")
    try:
        differ = any(f.names_differ for f in parse_patch(patch).files)
    except PatchError:
        differ = False
    return tuple(s for s in STRATEGIES if s[0] != "patch --fuzz") if differ else STRATEGIES


def apply_with_fallbacks(
    execute: Callable[[str], tuple[int, str]],
    patch_path: str,
    reset: Callable[[], None],
    *,
    strategies: tuple[tuple[str, str], ...] = STRATEGIES,
) -> ApplyResult:
    """Try each strategy (default :data:`STRATEGIES`) until one succeeds.

    Args:
        execute: runs a shell command at the repository root and returns ``(exit code, output)``.
        patch_path: path of the patch file as seen by ``execute`` (shell-quoted by the caller if needed).
        reset: restores the tree to its state before the first attempt (called after each failed attempt).
        strategies: the ladder to use; :func:`strategies_for` drops the fuzzy fallback for binary patches.

    Returns:
        ApplyResult with ``ok``, the winning ``method`` and the log of every attempt.
    """
    log: list[str] = []
    for name, template in strategies:
        command = template.format(patch=patch_path)
        code, output = execute(command)
        log.append(f"$ {command}\n{output.rstrip()}\n[exit {code}]")
        if code == 0:
            return ApplyResult(ok=True, method=name, log="\n".join(log))
        reset()
    return ApplyResult(ok=False, method=None, log="\n".join(log))


#: Shell snippets shared by the runtimes, run at the repository root. The base commit is tagged
#: :data:`~pytest_mobilebench.runtime.git.BASE_REF` when the workspace is prepared.
GIT_IDENTITY: Final = "-c user.name=mobilebench -c user.email=mobilebench@localhost -c commit.gpgsign=false"
#: Records the current tree (candidate patch applied, say) so that a failed attempt resets to it.
CHECKPOINT: Final = f"git add -A && git {GIT_IDENTITY} commit -q --allow-empty --no-verify -m mobilebench-checkpoint"
#: Throws away a half-applied attempt (ignored files such as node_modules are kept).
RESET: Final = "git reset -q --hard HEAD && git clean -fdq"
#: The whole change against the base commit, new files included, binary-safe.
DIFF: Final = f"git add -A && git diff --cached --binary --no-color --no-ext-diff {BASE_REF}"


def restore_command(path: str) -> str:
    """Shell command restoring one repository-relative path to the base commit (removing it if absent there)."""
    q = shlex.quote(path)
    return (
        f"if git cat-file -e {BASE_REF}:{q} 2>/dev/null; then git checkout -q {BASE_REF} -- {q}; else rm -rf -- {q}; fi"
    )


def restore_script(paths: Sequence[str]) -> bytes:
    """A ``sh`` script restoring every path (:func:`restore_command` each, stopping at the first failure):
    run as a file, so the number of paths is not bounded by the kernel's limit on one argument."""
    lines = ["set -e", *(restore_command(path) for path in paths)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def input_file_name(name: str) -> str:
    """The file name a workspace gives a harness input ``name`` (:meth:`Workspace.put_input`): ``mobilebench-``
    plus ``name`` with every character outside ``[A-Za-z0-9._-]`` as ``_`` (never a separator)."""
    return "mobilebench-" + ("".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "input")
