"""What a candidate may not change, read from the parsed patch (SPEC section 1; issues 7 and 8).

Three kinds of finding, pure over the parsed patch (:class:`~pytest_mobilebench.patch.PatchInfo`: every
name a section touches, its ``+`` / ``-`` lines as unidiff parsed them) and file contents; the rules
are the framework's (:mod:`pytest_mobilebench.frameworks`):

* **tools**: a section touching installed dependencies, build outputs, tool caches, the runner's entry
  points and package-manager configuration (:meth:`Framework.tool_path`), anything the repository ignores
  at base, a symbolic link into one of those, or any name that goes through a symbolic link the patch
  itself creates. ``policy_violation``; the section is never applied.
* **runner configuration**: a section changing how the tests run or report (:meth:`Framework.runner_config`:
  jest configuration and the files it names, babel, root mocks, Gradle test tasks, dependency
  substitution, sources declaring a test framework's package, pubspec ``dependency_overrides`` ...).
  ``policy_violation``; the files are restored to base and flagged ``runner_config_touched``.
* **test files** (the runner's own discovery rule under the base configuration): flagged
  ``test_files_touched`` and restored to base before the test patch; the verdict still stands.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, final

from pytest_mobilebench.frameworks import Framework
from pytest_mobilebench.frameworks.rules import SOURCE_LIKE_TOOL_DIRS, tool_dir_of
from pytest_mobilebench.patch import FileChange, PatchInfo

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import OversizedPatch

__all__ = [
    "PatchLimits",
    "Review",
    "link_findings",
    "review",
    "size_findings",
    "tool_findings",
    "touched_test_files",
    "withheld_finding",
]


@dataclasses.dataclass(frozen=True)
class PatchLimits:
    """How large a candidate patch may be (``--mb-max-patch-files``, ``-bytes``, ``-lines``; issue 24).

    The size of a patch is the candidate's doing: one over a limit is ``policy_violation``
    (``patch_too_large``), decided before anything runs and counted against the candidate, never an
    infrastructure error that would take the item out of the denominator. The defaults are far above
    any fix (MobileDev-Bench gold patches: median 4 files; a lockfile rewrite: ~30,000 lines).

    Attributes:
        files: most file sections; bytes: most bytes of the patch text (UTF-8); lines: most ``+``/``-``
            lines over all sections.
    """

    files: int = 5_000
    bytes: int = 64 << 20
    lines: int = 1_000_000

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> PatchLimits:
        """The limits named by the options (a missing or None option keeps the default)."""
        given = {
            "files": options.get("mb_max_patch_files"),
            "bytes": options.get("mb_max_patch_bytes"),
            "lines": options.get("mb_max_patch_lines"),
        }
        return cls(**{k: int(v) for k, v in given.items() if v is not None})


def size_findings(text: str, info: PatchInfo | None, limits: PatchLimits) -> list[str]:
    """Why the patch is too large (empty when it is not): ``patch_too_large: <what> > <option> <limit>``.

    ``info`` None checks the bytes only (done before parsing, so a huge text is never parsed).
    """
    found = []
    size = len(text.encode("utf-8"))
    if size > limits.bytes:
        found.append(f"patch_too_large: {size:,} bytes > --mb-max-patch-bytes {limits.bytes:,}")
    if info is not None and len(info.files) > limits.files:
        found.append(f"patch_too_large: {len(info.files):,} files > --mb-max-patch-files {limits.files:,}")
    if info is not None and info.lines_changed > limits.lines:
        found.append(f"patch_too_large: {info.lines_changed:,} changed lines > --mb-max-patch-lines {limits.lines:,}")
    return found


def withheld_finding(withheld: OversizedPatch) -> str:
    """Why a withheld patch (a live run's diff over the sandbox's bound, :attr:`Prediction.withheld
    <pytest_mobilebench.predictions.Prediction.withheld>`) is refused: ``patch_too_large: the taken patch has
    over <max_bytes> bytes``; the same text live and on a re-grade of the written row."""
    return f"patch_too_large: the taken patch has over {withheld.max_bytes} bytes"


def touched_test_files(info: PatchInfo, is_test: Callable[[str], bool]) -> list[str]:
    """Names of test files the candidate added, changed, deleted, renamed or copied (sorted)."""
    return sorted({p for p in info.paths if is_test(p)})


def _tool_reason(framework: Framework, path: str, ignored: Collection[str], tracked: Collection[str]) -> str | None:
    why = framework.tool_path(path)
    if why is not None and path in tracked and tool_dir_of(path) in SOURCE_LIKE_TOOL_DIRS:
        why = None  # a tracked file of a source folder that happens to be called build/
    if why is None and path in ignored:
        why = f"{path} is ignored by the repository at base (installed or generated, not project source)"
    return why


def tool_findings(
    change: FileChange, framework: Framework, ignored: Collection[str], tracked: Collection[str] = ()
) -> list[str]:
    """Why ``change`` touches the runner's tools (empty when it does not); a link is judged by its target.
    ``tracked``: names the repository tracks at base (a tracked file under ``build/`` is project source)."""
    names = list(change.paths)
    if change.symlink_target is not None:
        names.append(posixpath.normpath(posixpath.join(posixpath.dirname(change.path), change.symlink_target)))
    return [why for name in names if (why := _tool_reason(framework, name, ignored, tracked))]


def link_findings(change: FileChange, links: Collection[str]) -> list[str]:
    """Why ``change`` writes through a symbolic link (one of ``links``, those the patch itself creates):
    ``foo -> gradle`` then ``foo/wrapper/...`` would reach the Gradle wrapper under a name no rule knows
    (``git apply`` refuses it, the ``patch`` fallback does not)."""
    found = []
    for name in change.paths:
        parts = posixpath.normpath(name).split("/")
        through = next(("/".join(parts[:k]) for k in range(1, len(parts)) if "/".join(parts[:k]) in links), None)
        if through is not None:
            found.append(f"{name} goes through the symbolic link {through} the patch creates")
    return found


@final
@dataclasses.dataclass(frozen=True)
class Review:
    """The policy's findings on one candidate patch.

    Attributes:
        tools: ``(section line, message)`` of sections that touch tools; never applied.
        runner_config: ``(names of the section, message)`` of runner-configuration changes; restored to base.
        test_files: names of test files touched; restored to base.
    """

    tools: tuple[tuple[int, str], ...]
    runner_config: tuple[tuple[tuple[str, ...], str], ...]
    test_files: tuple[str, ...]

    @property
    def violations(self) -> list[str]:
        """Every ``policy_violation`` message, tools first."""
        return [m for _, m in self.tools] + [m for _, m in self.runner_config]

    @property
    def restore(self) -> list[str]:
        """Paths to restore to base after the candidate is applied (test files, runner configuration)."""
        return sorted(set(self.test_files) | {p for paths, _ in self.runner_config for p in paths})

    @property
    def flags(self) -> list[str]:
        """``test_files_touched`` / ``runner_config_touched`` / ``tools_touched`` as they apply."""
        named = (("test_files_touched", self.test_files), ("runner_config_touched", self.runner_config),
                 ("tools_touched", self.tools))  # fmt: skip
        return [flag for flag, found in named if found]

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins for evidence."""
        return {
            "tools": [{"line": line, "message": m} for line, m in self.tools],
            "runner_config": [{"paths": list(p), "message": m} for p, m in self.runner_config],
            "test_files": list(self.test_files),
            "violations": self.violations,
            "flags": self.flags,
        }


def review(
    info: PatchInfo,
    framework: Framework,
    *,
    before: Mapping[str, bytes],
    after: Mapping[str, bytes],
    ignored: Collection[str] = (),
    tracked: Collection[str] = (),
    plan_command: str = "",
) -> Review:
    """Review a candidate patch (see the module docstring).

    Args:
        info: the parsed candidate patch.
        framework: the instance's framework (its rules).
        before: ``framework.config_paths`` files at base (the test rule reads these: never the candidate's).
        after: the same files with the candidate applied (what the runner would see).
        ignored: names of the patch that the repository ignores at base (``git check-ignore``).
        tracked: names of the patch that the repository tracks at base (``git ls-files``).
        plan_command: the test command the plan runs (which package.json scripts matter).
    """
    is_test = framework.test_rule(before)
    links = {posixpath.normpath(c.path) for c in info.files if c.symlink_target is not None}
    tools = [
        (c.line, why)
        for c in info.files
        for why in (*tool_findings(c, framework, ignored, tracked), *link_findings(c, links))
    ]
    runner = [(c.paths, m) for c in info.files for m in framework.runner_config(c, before, after, plan_command)]
    return Review(
        tools=tuple(tools),
        runner_config=tuple(runner),
        test_files=tuple(touched_test_files(info, is_test)),
    )
