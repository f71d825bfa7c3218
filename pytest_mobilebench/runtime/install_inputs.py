"""What a dependency install reads besides the manifests: lifecycle scripts' files, and rc files without secrets.

Pure functions over a checkout (issue 30, item 3), used by :func:`pytest_mobilebench.runtime.deplayer.manifest_files`:

* :func:`lifecycle_files` - every ``package.json`` (the root's and each workspace's) may run scripts during the
  install: ``preinstall``, ``install``, ``postinstall``, ``prepare`` and their ``pre``/``post`` forms
  (npm's "Life Cycle Scripts"; yarn and pnpm run the same names). A script's inputs cannot be known in
  general, so the rule is conservative: every word of the command that names an existing path of the checkout
  (relative to that ``package.json``'s folder, or to the root) is taken, a folder with all its files; and every
  script *file* taken is read for the paths it names in turn (string literals such as ``'./lib/x'``,
  ``'../config'`` or ``'config/a.json'``, resolved against the file's folder and the root, with the extensions
  node tries), to a fixed point. A path the install reads that no word or literal names (one built from
  pieces at run time) is missed: the install then fails with the manifests alone and the instance falls back
  to its own full install (:func:`~pytest_mobilebench.runtime.deplayer.ensure_deps` returns None).
* :func:`scrub_secrets` - ``.npmrc`` / ``.yarnrc`` / ``.yarnrc.yml`` lose every line setting a credential
  (``_authToken``, ``_auth``, ``_password``, ``npmAuthToken``, ``npmAuthIdent``, ``npmPassword``): no secret
  is ever put into an image, and a line such as ``//host/:_authToken=${NPM_TOKEN}`` no longer fails the install
  for want of the variable.

``node_modules`` and ``.git`` are never read; symbolic links are not followed.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Final

__all__ = [
    "INSTALL_INPUT_DIRS",
    "INSTALL_INPUT_NAMES",
    "LIFECYCLE_SCRIPTS",
    "is_install_input",
    "lifecycle_files",
    "scrub_secrets",
]

#: file names a dependency install reads wherever they sit (manifests, lockfiles, rc files, toolchain pins)
INSTALL_INPUT_NAMES: Final[frozenset[str]] = frozenset(
    {
        "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", ".yarnrc", ".yarnrc.yml",
        ".npmrc", "pnpm-lock.yaml", "pnpm-workspace.yaml", ".pnpmfile.cjs", ".nvmrc", ".node-version",
        "gradlew", "gradle.properties", "settings.gradle", "settings.gradle.kts", "build.gradle",
        "build.gradle.kts", "pubspec.yaml", "pubspec.lock",
    }
)  # fmt: skip
#: folders whose every file the install reads (patch-package's ``patches/``, yarn's ``.yarn/``, Gradle's ``gradle/``)
INSTALL_INPUT_DIRS: Final[tuple[str, ...]] = ("patches", ".yarn", "gradle")

#: the package.json scripts a dependency install runs (the project's own; its dependencies' run in node_modules)
LIFECYCLE_SCRIPTS: Final[tuple[str, ...]] = (
    "preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare", "prepublish",
)  # fmt: skip
_SKIP: Final[frozenset[str]] = frozenset({"node_modules", ".git"})
_SCRIPT_SUFFIXES: Final[frozenset[str]] = frozenset({".js", ".cjs", ".mjs", ".ts", ".sh", ".py", ".json"})
_NODE_EXTENSIONS: Final[tuple[str, ...]] = ("", ".js", ".cjs", ".mjs", ".json", "/index.js")
_LITERAL: Final[re.Pattern[str]] = re.compile(r"""(['"`])([^'"`\s${}]{1,200})\1""")
_SECRET_RC: Final[frozenset[str]] = frozenset({".npmrc", ".yarnrc", ".yarnrc.yml"})
_SECRET_LINE: Final[re.Pattern[str]] = re.compile(
    r"(^|[:/\s])(_authToken|_auth|_password|npmAuthToken|npmAuthIdent|npmPassword)\s*[=:]", re.IGNORECASE
)
#: a folder named by a script larger than this (files) is not copied whole (the root, ``src``): too broad to key on
_MAX_FOLDER_FILES: Final[int] = 2000


def is_install_input(path: str) -> bool:
    """Whether the posix ``path`` (relative to the repository root) is a dependency manifest, lockfile, rc file
    or a file of an install folder (:data:`INSTALL_INPUT_NAMES`, :data:`INSTALL_INPUT_DIRS`), never one under
    ``node_modules`` or ``.git``. Files a lifecycle script names are not known from a path alone (False).
    Example: ``"app/package.json"`` -> True, ``"src/App.tsx"`` -> False."""
    parts = PurePosixPath(path).parts
    if not parts or any(part in _SKIP for part in parts):
        return False
    return parts[-1] in INSTALL_INPUT_NAMES or any(part in INSTALL_INPUT_DIRS for part in parts[:-1])


def scrub_secrets(path: str, data: bytes) -> bytes:
    """``data`` of the rc file at ``path`` (posix, relative) without credential lines (see module);
    other files unchanged. Example: ``b"registry=x\\n//x/:_authToken=abc\\n"`` -> ``b"registry=x\\n"``."""
    if PurePosixPath(path).name not in _SECRET_RC:
        return data
    kept = [line for line in data.splitlines(keepends=True) if not _SECRET_LINE.search(line.decode("utf-8", "replace"))]
    return b"".join(kept)


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(command, comments=False, posix=True)
    except ValueError:  # an unbalanced quote: plain whitespace split
        words = command.split()
    out: list[str] = []
    for word in words:
        out.extend(part for part in re.split(r"[;&|()<>=,]+", word) if part)
    return out


def _inside(tree: Path, candidate: Path) -> str | None:
    """``candidate``'s posix path relative to ``tree`` when it exists inside it (no link, no skipped folder)."""
    try:
        resolved = candidate.resolve(strict=True)
        rel = resolved.relative_to(tree.resolve())
    except (OSError, ValueError):
        return None
    if not rel.parts or any(part in _SKIP for part in rel.parts):
        return None
    return rel.as_posix()


def _expand(tree: Path, rel: str) -> Iterator[str]:
    """``rel`` when a file; a folder's files (none when it holds more than :data:`_MAX_FOLDER_FILES`)."""
    path = tree / rel
    if path.is_file():
        yield rel
        return
    files: list[str] = []
    for found in sorted(path.rglob("*")):
        if found.is_symlink() or not found.is_file():
            continue
        relative = found.relative_to(tree)
        if any(part in _SKIP for part in relative.parts):
            continue
        files.append(relative.as_posix())
        if len(files) > _MAX_FOLDER_FILES:
            return
    yield from files


def _named(tree: Path, names: list[str], bases: list[Path], *, node: bool) -> set[str]:
    found: set[str] = set()
    for name in names:
        if name.startswith(("-", "http:", "https:", "/")) or name in {".", ".."}:
            continue
        for base in bases:
            for ext in _NODE_EXTENSIONS if node else ("",):
                rel = _inside(tree, base / (name + ext))
                if rel is not None:
                    found.add(rel)
                    break
            else:
                continue
            break
    return found


def lifecycle_files(tree: Path, manifests: Mapping[str, bytes]) -> dict[str, bytes]:
    """``{posix path: bytes}`` of the files the lifecycle scripts of ``manifests``' ``package.json`` files
    name, directly or through the script files they run (rule in the module docstring). Unreadable JSON
    names nothing (the install reports it)."""
    pending: list[str] = []
    for rel, data in manifests.items():
        if PurePosixPath(rel).name != "package.json":
            continue
        try:
            scripts = json.loads(data.decode("utf-8", "replace")).get("scripts") or {}
        except (ValueError, AttributeError):
            continue
        folder = (tree / rel).parent
        for name in LIFECYCLE_SCRIPTS:
            command = scripts.get(name) if isinstance(scripts, dict) else None
            if isinstance(command, str):
                for hit in _named(tree, _words(command), [folder, tree], node=False):
                    pending.append(hit)
    taken: dict[str, bytes] = {}
    seen: set[str] = set()
    while pending:
        rel = pending.pop()
        if rel in seen:
            continue
        seen.add(rel)
        for file_rel in _expand(tree, rel):
            if file_rel in taken or file_rel in manifests:
                continue
            data = (tree / file_rel).read_bytes()
            taken[file_rel] = data
            if PurePosixPath(file_rel).suffix in _SCRIPT_SUFFIXES and len(data) < 1_000_000:
                literals = [m.group(2) for m in _LITERAL.finditer(data.decode("utf-8", "replace"))]
                bases = [(tree / file_rel).parent, tree]
                pending.extend(_named(tree, literals, bases, node=True) - seen)
    return taken
