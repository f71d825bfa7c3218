"""Shared pieces of the environment recipes: the recipe record, its error, evidence lines, versions.

A recipe is inferred from a repository checked out at its base commit (MobileDev-Bench, Section 3.3
"Phase 3: Environment Runtime Setup" and Appendix A.5): build files, lockfiles and CI workflows are read,
nothing is executed. Everything here is pure over a directory.

Each framework's recipe lives with the framework (:mod:`.android.recipe`, :mod:`.flutter.recipe`,
:mod:`.react_native.recipe`); :func:`infer_recipe` dispatches to it. What a recipe must give the container
runtime (the build-context contract, the test-user hand-over) is declared by the runtime,
:mod:`pytest_mobilebench.runtime.recipe`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final, final

import yaml

from pytest_mobilebench.runtime.recipe import HOST_CA_CONTEXT_FILE, UserHandover

__all__ = [
    "BASE_IMAGE_PREAMBLE",
    "HOST_CA_DOCKERFILE_LINES",
    "EnvRecipe",
    "RecipeError",
    "Version",
    "WorkflowStep",
    "evidence",
    "infer_recipe",
    "iter_workflow_steps",
    "line_of",
    "lower_bound",
    "parse_range",
    "parse_version",
    "read_text",
    "satisfies",
    "walk_files",
]

#: First lines of every environment Dockerfile: the base image is a build argument.
BASE_IMAGE_PREAMBLE: Final[str] = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"

#: Dockerfile lines installing the host CA bundle (after ``ca-certificates`` is installed by apt).
HOST_CA_DOCKERFILE_LINES: Final[str] = (
    f"COPY {HOST_CA_CONTEXT_FILE} /usr/local/share/ca-certificates/host-ca.crt\nRUN update-ca-certificates\n"
)

#: Directories never descended into when scanning a repository.
_PRUNED_DIRS: Final[frozenset[str]] = frozenset(
    {".git", ".gradle", ".idea", "build", "node_modules", ".dart_tool", ".pub-cache", "Pods", ".cxx", ".kotlin"}
)


class RecipeError(ValueError):
    """A toolchain version could not be inferred; the message names the file(s) and the missing value."""


@final
@dataclasses.dataclass(frozen=True)
class EnvRecipe:
    """The environment layer of one repository (and toolchain version).

    Attributes:
        framework: ``"android"`` | ``"flutter"`` | ``"react-native"``.
        toolchain: toolchain key -> exact version string (``{"node": "20.11.1", ...}``).
        sources: toolchain key -> ``"relative/file:line"`` it was inferred from, or ``"default: why"`` /
            ``"override"``.
        dockerfile: the environment Dockerfile; its first lines are ``ARG BASE_IMAGE`` and
            ``FROM ${BASE_IMAGE}``; it installs the toolchain only (no repository files).
        context_files: extra build-context files the Dockerfile COPYs, name -> bytes (besides
            :data:`HOST_CA_CONTEXT_FILE` and the npm tarballs of ``context_packages``).
        install_command: the dependency installation run in the instance layer, at the repository root,
            after the repository is copied at its base commit.
        context_packages: build-context file name -> npm package spec (``"npm.tgz": "npm@10.9.4"``) the
            docker runtime packs on the host (``npm pack``) into the environment build context; empty when
            the Dockerfile needs none.
        test_user: how the instance layer hands the image to the unprivileged test user, or None: tests
            run as root (with every capability dropped), e.g. in a manifest's own environment layer whose
            layout the recipe does not know.
    """

    framework: str
    toolchain: Mapping[str, str]
    sources: Mapping[str, str]
    dockerfile: str
    context_files: Mapping[str, bytes] = dataclasses.field(default_factory=dict)
    install_command: str = ""
    context_packages: Mapping[str, str] = dataclasses.field(default_factory=dict)
    test_user: UserHandover | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (context files as SHA-256 hex digests, so the dict stays JSON-able and small)."""
        return {
            "framework": self.framework,
            "toolchain": dict(sorted(self.toolchain.items())),
            "sources": dict(sorted(self.sources.items())),
            "dockerfile": self.dockerfile,
            "context_files": {
                name: hashlib.sha256(data).hexdigest() for name, data in sorted(self.context_files.items())
            },
            "install_command": self.install_command,
            "context_packages": dict(sorted(self.context_packages.items())),
            "test_user": self.test_user.to_dict() if self.test_user else None,
        }

    def key(self) -> str:
        """SHA-256 hex digest of the canonical JSON of :meth:`to_dict` (sorted keys, no spaces).

        Used as the content hash in environment image tags: two recipes with the same key build the
        same image.
        """
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def with_environment_layer(self, dockerfile: str) -> EnvRecipe:
        """This recipe with another environment layer (a manifest's ``recipe`` or ``image``).

        The new layer brings no context files and no host-packed packages, and no test user: the
        hand-over relies on the inferred layer's layout (where the tool caches are, that ``useradd``
        exists), which another layer need not have, so its tests run as root.
        """
        return dataclasses.replace(self, dockerfile=dockerfile, context_files={}, context_packages={}, test_user=None)


# --------------------------------------------------------------------------------------------------- files


def read_text(path: Path) -> str:
    """Read a repository file as UTF-8 (invalid bytes replaced). ``RecipeError`` if it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise RecipeError(f"{path}: cannot be read: {exc}") from exc


def walk_files(root: Path, *, max_depth: int = 12) -> Iterator[Path]:
    """Yield files under ``root`` (sorted, depth-first), skipping build outputs and VCS folders.

    ``root`` may be an in-memory tree (:class:`pytest_mobilebench.frameworks.tree.TreePath`, which has
    ``walk()``); a host folder is walked with ``os.walk``.
    """
    root_depth = len(root.parts)
    walker = root.walk() if hasattr(root, "walk") else ((Path(d), n, f) for d, n, f in os.walk(root))
    for dirpath, dirnames, filenames in walker:
        depth = len(dirpath.parts) - root_depth
        dirnames[:] = sorted(d for d in dirnames if d not in _PRUNED_DIRS and depth < max_depth)
        for name in sorted(filenames):
            yield dirpath / name


def line_of(text: str, pattern: str) -> int | None:
    """1-based line number of the first match of the regex ``pattern`` in ``text`` (multiline), or None."""
    match = re.search(pattern, text, flags=re.MULTILINE)
    if match is None:
        return None
    return text.count("\n", 0, match.start()) + 1


def evidence(repo_dir: Path, path: Path, line: int | None) -> str:
    """``"relative/path:line"`` (or just the relative path when the line is unknown)."""
    try:
        rel = path.relative_to(repo_dir).as_posix()
    except ValueError:
        rel = path.as_posix()
    return f"{rel}:{line}" if line else rel


# ------------------------------------------------------------------------------------------------ versions

_VERSION_RE: Final = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-.]?([0-9A-Za-z.+-]*?))?\s*$")


@final
@dataclasses.dataclass(frozen=True, order=True)
class Version:
    """A dotted version ``major.minor.patch[-pre]`` ordered as SemVer 2.0.0 section 11.

    ``pre`` is a tuple of identifiers (numbers compare numerically, below strings); a release (empty
    ``pre``) sorts after its pre-releases, which is encoded by ``release_rank``.
    """

    major: int
    minor: int
    patch: int
    release_rank: int  # 1 for a release, 0 for a pre-release
    pre: tuple[tuple[int, int | str], ...] = ()
    text: str = dataclasses.field(default="", compare=False)

    @property
    def is_prerelease(self) -> bool:
        """True when the version carries pre-release identifiers."""
        return self.release_rank == 0

    def __str__(self) -> str:
        return self.text or f"{self.major}.{self.minor}.{self.patch}"


def parse_version(text: str) -> Version | None:
    """Parse ``"20"``, ``"v20.11.1"``, ``"3.46.0-1.0.pre-413"`` into a :class:`Version`; None if not one.

    Missing minor/patch parts read as 0. Build metadata (``+...``) is ignored.
    """
    raw = text.strip()
    match = _VERSION_RE.match(raw.split("+", 1)[0])
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    pre_ids: list[tuple[int, int | str]] = []
    if pre:
        for part in re.split(r"[.-]", pre):
            if not part:
                continue
            pre_ids.append((0, int(part)) if part.isdigit() else (1, part))
    return Version(
        int(major),
        int(minor or 0),
        int(patch or 0),
        0 if pre_ids else 1,
        tuple(pre_ids),
        raw.lstrip("v"),
    )


# ----------------------------------------------------------------------------------------------- workflows


@final
@dataclasses.dataclass(frozen=True)
class WorkflowStep:
    """One ``uses:`` step of a GitHub Actions workflow or composite action.

    ``with_`` values are the raw strings, with ``${{ env.X }}`` and ``${{ matrix.X }}`` expanded:
    a matrix reference expands to every value of that matrix axis, so each value is a tuple.
    """

    file: Path
    text: str
    uses: str
    with_: Mapping[str, tuple[str, ...]]
    run: str = ""

    def line_of_key(self, key: str) -> int | None:
        """Line of the first ``key:`` after this step's ``uses:`` line in the file (evidence), or None."""
        uses = re.search(rf"^\s*-?\s*uses\s*:\s*['\"]?{re.escape(self.uses)}", self.text, flags=re.MULTILINE)
        start = uses.end() if uses else 0
        match = re.compile(rf"^\s*{re.escape(key)}\s*:", flags=re.MULTILINE).search(self.text, start)
        if match is None:
            return None
        return self.text.count("\n", 0, match.start()) + 1


_EXPR_RE: Final = re.compile(r"\$\{\{\s*(env|matrix|vars)\.([A-Za-z0-9_-]+)\s*\}\}")


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _scalar_strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [s for item in value for s in _scalar_strings(item)]
    if isinstance(value, dict):
        return []
    return [str(value)]


def _expand(value: str, env: Mapping[str, Any], matrix: Mapping[str, Any]) -> tuple[str, ...]:
    match = _EXPR_RE.fullmatch(value.strip())
    if match is None:
        return (value,)
    scope, name = match.groups()
    if scope == "env" and name in env:
        return tuple(_scalar_strings(env[name]))
    if scope == "matrix":
        values = _scalar_strings(matrix.get(name, []))
        for extra in matrix.get("include", []) if isinstance(matrix.get("include"), list) else []:
            if isinstance(extra, dict) and name in extra:
                values.extend(_scalar_strings(extra[name]))
        return tuple(values)
    return ()


def _load_yaml(path: Path) -> Any:
    try:
        # BaseLoader keeps every scalar a string: "18.10" must not become the float 18.1.
        return yaml.load(read_text(path), Loader=yaml.BaseLoader)  # noqa: S506 - BaseLoader builds no objects
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: invalid YAML: {exc}") from exc


def iter_workflow_steps(repo_dir: Path) -> Iterator[WorkflowStep]:
    """Yield the steps of ``.github/workflows/*.y(a)ml`` and ``.github/actions/**/action.y(a)ml``.

    Files are read in sorted order; env is merged workflow < job < step; matrix comes from
    ``jobs.<id>.strategy.matrix``. A file that is not valid YAML raises :class:`RecipeError`.
    """
    github = repo_dir / ".github"
    files = sorted(
        [p for pat in ("workflows/*.yml", "workflows/*.yaml") for p in github.glob(pat)]
        + [p for pat in ("actions/**/action.yml", "actions/**/action.yaml") for p in github.glob(pat)]
    )
    for path in files:
        doc = _load_yaml(path)
        if not isinstance(doc, dict):
            continue
        text = read_text(path)
        top_env = _as_dict(doc.get("env"))
        step_lists: list[tuple[list[Any], dict[str, Any], dict[str, Any]]] = []
        jobs = doc.get("jobs")
        if isinstance(jobs, dict):
            for job in jobs.values():
                if not isinstance(job, dict) or not isinstance(job.get("steps"), list):
                    continue
                job_env = {**top_env, **_as_dict(job.get("env"))}
                matrix = _as_dict(_as_dict(job.get("strategy")).get("matrix"))
                step_lists.append((job["steps"], job_env, matrix))
        runs = doc.get("runs")
        if isinstance(runs, dict) and isinstance(runs.get("steps"), list):
            step_lists.append((runs["steps"], dict(top_env), {}))
        for steps, env, matrix in step_lists:
            for step in steps:
                if not isinstance(step, dict):
                    continue
                step_env = {**env, **_as_dict(step.get("env"))}
                with_raw = _as_dict(step.get("with"))
                with_: dict[str, tuple[str, ...]] = {}
                for key, value in with_raw.items():
                    expanded: list[str] = []
                    for item in _scalar_strings(value):
                        for line in item.splitlines() or [item]:
                            if line.strip():
                                expanded.extend(_expand(line.strip(), step_env, matrix))
                    with_[str(key)] = tuple(expanded)
                yield WorkflowStep(
                    file=path,
                    text=text,
                    uses=str(step.get("uses", "")),
                    with_=with_,
                    run=str(step.get("run", "")),
                )


# ---------------------------------------------------------------------------------------- version ranges

_PARTIAL_RE: Final = re.compile(
    r"^v?(?P<maj>\d+|[xX*])(?:\.(?P<min>\d+|[xX*]))?(?:\.(?P<pat>\d+|[xX*]))?(?P<pre>[-+][0-9A-Za-z.+-]*)?$"
)
_COMPARATOR_RE: Final = re.compile(r"^(?P<op><=|>=|<|>|=|~>|~|\^)?\s*(?P<ver>\S+)$")

Comparator = tuple[str, Version]


def _release(major: int, minor: int, patch: int) -> Version:
    return Version(major, minor, patch, 1, (), f"{major}.{minor}.{patch}")


def _floor(major: int, minor: int, patch: int) -> Version:
    """The lowest version of ``major.minor.patch``, below all of its pre-releases (``-0``)."""
    return Version(major, minor, patch, 0, ((0, 0),), f"{major}.{minor}.{patch}-0")


def _desugar(op: str, text: str, source: str) -> list[Comparator]:
    match = _PARTIAL_RE.match(text)
    if match is None:
        raise RecipeError(f"{source}: {text!r} is not a version")
    parts = [match.group("maj"), match.group("min"), match.group("pat")]
    wild = [p is None or p in "xX*" for p in parts]
    if wild[0]:
        return [] if op in ("", "=", ">=", "<=", "~", "^", "~>") else [("<", _floor(0, 0, 0))]
    nums = [0 if w else int(p) for p, w in zip(parts, wild, strict=True)]
    major, minor, patch = nums
    exact_text = text.lstrip("v=")
    full = not any(wild)
    if full:
        exact = parse_version(exact_text)
        assert exact is not None
    else:
        exact = _release(major, minor, patch)
    if op in ("", "="):
        if full:
            return [("=", exact)]
        upper = _floor(major + 1, 0, 0) if wild[1] else _floor(major, minor + 1, 0)
        return [(">=", _floor(major, minor, patch)), ("<", upper)]
    if op in ("~", "~>"):
        upper = _floor(major + 1, 0, 0) if wild[1] else _floor(major, minor + 1, 0)
        return [(">=", exact if full else _floor(major, minor, patch)), ("<", upper)]
    if op == "^":
        if major > 0 or wild[1]:
            upper = _floor(major + 1, 0, 0)
        elif minor > 0 or wild[2]:
            upper = _floor(0, minor + 1, 0)
        else:
            upper = _floor(0, 0, patch + 1)
        return [(">=", exact if full else _floor(major, minor, patch)), ("<", upper)]
    if op == ">":
        if full:
            return [(">", exact)]
        return [(">=", _floor(major + 1, 0, 0) if wild[1] else _floor(major, minor + 1, 0))]
    if op == ">=":
        return [(">=", exact if full else _floor(major, minor, patch))]
    if op == "<":
        return [("<", exact if full else _floor(major, minor, patch))]
    if op == "<=":
        if full:
            return [("<=", exact)]
        return [("<", _floor(major + 1, 0, 0) if wild[1] else _floor(major, minor + 1, 0))]
    raise RecipeError(f"{source}: unknown operator {op!r}")


def parse_range(text: str, *, source: str = "range") -> list[list[Comparator]]:
    """Parse an npm/pub-style version range into a disjunction of comparator conjunctions.

    Grammar (node-semver "Ranges" / pub "Version constraints"): ``||`` alternatives, each a hyphen range
    ``A - B`` or whitespace-separated comparators ``[op]version`` with ``op`` in ``< <= > >= = ~ ^``;
    partial versions and ``x``/``*`` wildcards desugar as in node-semver (``^1.2`` = ``>=1.2.0 <2.0.0-0``).
    ``any``, ``*`` and the empty range match everything. ``source`` names the file for errors.

    Raises:
        RecipeError: a part is not a version.
    """
    alternatives: list[list[Comparator]] = []
    for alt in text.split("||"):
        alt = alt.strip()
        if alt in ("", "*", "any", "x", "X", "latest", "lts"):
            alternatives.append([])
            continue
        hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", alt)
        if hyphen:
            low = _desugar(">=", hyphen.group(1), source)
            high = _desugar("<=", hyphen.group(2), source)
            alternatives.append(low + high)
            continue
        alt = re.sub(r"(<=|>=|<|>|=|~>|~|\^)\s+", r"\1", alt)
        comparators: list[Comparator] = []
        for token in alt.split():
            match = _COMPARATOR_RE.match(token)
            if match is None:
                raise RecipeError(f"{source}: {token!r} is not a version comparator")
            comparators.extend(_desugar(match.group("op") or "", match.group("ver"), source))
        alternatives.append(comparators)
    return alternatives


def _holds(version: Version, comparator: Comparator) -> bool:
    op, bound = comparator
    if op == "=":
        return version == bound
    if op == ">":
        return version > bound
    if op == ">=":
        return version >= bound
    if op == "<":
        return version < bound
    return version <= bound


def satisfies(version: Version, range_text: str, *, source: str = "range") -> bool:
    """Whether ``version`` is in the range (see :func:`parse_range`); pre-releases compare by SemVer order."""
    return any(all(_holds(version, c) for c in alt) for alt in parse_range(range_text, source=source))


def lower_bound(range_text: str, *, source: str = "range") -> Version | None:
    """The smallest ``>=``/``=`` bound over all alternatives of the range, or None when unbounded below.

    The version keeps its written text (``">=3.46.0-1.0.pre-413"`` -> ``3.46.0-1.0.pre-413``).
    """
    bounds: list[Version] = []
    for alt in parse_range(range_text, source=source):
        lows = [v for op, v in alt if op in (">=", "=", ">")]
        if not lows:
            return None
        bounds.append(max(lows))
    return min(bounds) if bounds else None


def infer_recipe(repo_dir: Path, framework: str, *, overrides: Mapping[str, Any] | None = None) -> EnvRecipe:
    """Infer the environment recipe of a repository checked out at its base commit.

    Args:
        repo_dir: the repository root (a work tree or an export of the base commit).
        framework: a registered framework (:func:`pytest_mobilebench.frameworks.names`).
        overrides: recipe override keys (:func:`pytest_mobilebench.runtime.environment.recipe_overrides`
            maps the typed environment to them); each given key replaces the inferred value (and its
            source reads ``"override"``). ``install_command`` replaces the dependency install command.

    Returns:
        The recipe; see :mod:`.react_native.recipe`, :mod:`.android.recipe` and :mod:`.flutter.recipe` for the
        precedence of sources.

    Raises:
        RecipeError: unknown framework, unreadable/invalid build files, or a version that cannot be inferred
            (the message names the file and the value).
    """
    from pytest_mobilebench import frameworks  # the registry imports this module

    repo = Path(repo_dir)
    if not repo.is_dir():
        raise RecipeError(f"{repo}: not a directory")
    try:
        fw = frameworks.get(framework)
    except frameworks.FrameworkError as exc:
        raise RecipeError(f"framework {framework!r} is not one of {', '.join(frameworks.names())}") from exc
    return fw.infer_recipe(repo, dict(overrides or {}))
