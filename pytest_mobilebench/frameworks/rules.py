"""Path rules shared by the frameworks: the tools and outputs no candidate may touch, and small readers.

Issue 7 item 2 ("the candidate edits the project, not the tools"): installed dependencies, build outputs
and tool caches belong to the harness. A directory named here anywhere in a path (``app/build/x``,
``packages/a/node_modules/b``) makes the path a tool path, whatever the repository ignores.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any, Final

__all__ = [
    "SOURCE_LIKE_TOOL_DIRS",
    "TOOL_DIRS",
    "gradle_entry_point",
    "json_of",
    "path_parts",
    "strings_in",
    "tool_dir_of",
]

#: Directory names of installed dependencies, build outputs and tool caches, for every framework.
TOOL_DIRS: Final[frozenset[str]] = frozenset(
    {"node_modules", ".gradle", "build", ".dart_tool", ".pub-cache", "Pods", ".git", ".kotlin", ".cxx", ".fvm",
     ".mobilebench"}
)  # fmt: skip


#: Tool directory names some projects also use for tracked sources: a file the repository tracks at base
#: there is project source (installed dependencies and caches are never exempt).
SOURCE_LIKE_TOOL_DIRS: Final[frozenset[str]] = frozenset({"build"})


def path_parts(path: str) -> tuple[str, ...]:
    """The components of a repository-relative POSIX path (``./`` and backslashes normalised)."""
    return PurePosixPath(posixpath.normpath(path.replace("\\", "/"))).parts


#: File names of the Gradle entry point, at any depth (an Android app, or the ``android/`` folder of a
#: React-Native or Flutter project).
GRADLE_ENTRY_NAMES: Final[frozenset[str]] = frozenset({"gradlew", "gradlew.bat"})


def gradle_entry_point(path: str) -> str | None:
    """Why ``path`` is the Gradle entry point (``gradlew``, ``gradlew.bat``, anything under a
    ``gradle/wrapper/`` folder) at any depth, or None. Every framework refuses these (issue 7 item 2):
    whoever runs Gradle, a candidate's wrapper would run instead of the harness's."""
    parts = path_parts(path)
    in_wrapper = any(parts[k : k + 2] == ("gradle", "wrapper") for k in range(len(parts) - 1))
    if parts[-1] in GRADLE_ENTRY_NAMES or in_wrapper:
        return f"{path} is the Gradle entry point or its wrapper"
    return None


def tool_dir_of(path: str, extra: Iterable[str] = ()) -> str | None:
    """The first directory of ``path`` named in :data:`TOOL_DIRS` (or ``extra``), or None."""
    names = TOOL_DIRS | frozenset(extra)
    return next((part for part in path_parts(path)[:-1] if part in names), None)


def json_of(data: bytes | None) -> Any:
    """Parsed JSON of ``data``, or None when absent or not JSON."""
    if data is None:
        return None
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None


def strings_in(value: Any) -> list[str]:
    """Every string inside a parsed JSON value (keys excluded), depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []
