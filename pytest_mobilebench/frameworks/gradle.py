"""Gradle knowledge shared by every Gradle-built framework (Android, Kotlin Multiplatform, JVM) and the
device suite's Gradle plans, read without running Gradle.

- build files: :func:`collect_build_files` (scripts, build logic of ``buildSrc`` and ``includeBuild``
  builds, ``gradle.properties``), :func:`strip_comments`, the version catalogs (:func:`read_catalogs`);
- the wrapper: :func:`gradle_version` (``gradle-wrapper.properties``) and :func:`gradle_wrapper_dist_dir`;
- modules: :func:`settings_modules` (the settings declarations, MobileDev-Bench Appendix A.7) and
  :func:`module_for_file`;
- a run's output: :data:`GRADLE_FLAGS` and :func:`compile_failed_modules` (``--console=plain`` task lines).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final, final

from pytest_mobilebench.frameworks.recipe import RecipeError, evidence, line_of, read_text, walk_files

__all__ = [
    "BUILD_FILES",
    "GRADLE_FLAGS",
    "BuildFiles",
    "Catalog",
    "CompileFailures",
    "balanced",
    "catalog_version",
    "collect_build_files",
    "compile_failed_modules",
    "gradle_version",
    "gradle_wrapper_dist_dir",
    "included_builds",
    "module_for_file",
    "read_catalogs",
    "settings_modules",
    "strip_comments",
]

#: Flags of every Gradle test run: ``--no-daemon`` (one Gradle run per container, no daemon left behind),
#: ``--continue`` (one module's failure does not stop the other modules' tests), ``--console=plain``
#: (task lines ``> Task :m:x FAILED`` that :func:`compile_failed_modules` reads).
GRADLE_FLAGS: Final[str] = "--no-daemon --continue --console=plain"

#: A module's build file names, Kotlin DSL first.
BUILD_FILES: Final[tuple[str, ...]] = ("build.gradle.kts", "build.gradle")
_TEST_TASK_NAMES: Final = re.compile(r"^(test\w*UnitTest|test|allTests|jvmTest|\w+Test)$")
_TEST_COMPILE: Final = re.compile(
    r"^(?:compile|ksp|kapt|kaptGenerateStubs)\w*(?:UnitTest|Test)\w*(?:Kotlin|Java|JavaWithJavac|Groovy)\w*$"
    r"|^compileTest\w*$"
)
_PROD_COMPILE: Final = re.compile(r"^(?:compile|ksp|kapt|kaptGenerateStubs)\w*(?:Kotlin|Java|JavaWithJavac|Groovy)\w*$")


@dataclass(frozen=True)
class BuildFiles:
    """The texts the inference reads: relative path -> text, per kind.

    ``gradle``: ``*.gradle`` / ``*.gradle.kts`` anywhere (outside build outputs); ``logic``: ``*.kt`` /
    ``*.java`` / ``*.groovy`` under ``buildSrc`` and the included builds; ``properties``:
    ``gradle.properties`` files (root first).
    """

    root: Path
    gradle: Mapping[str, str]
    logic: Mapping[str, str]
    properties: Mapping[str, str]

    def all_code(self) -> Iterable[tuple[str, str]]:
        """(relative path, text) of build scripts then build logic."""
        yield from self.gradle.items()
        yield from self.logic.items()


def _settings_file(repo_dir: Path) -> Path | None:
    for name in ("settings.gradle.kts", "settings.gradle"):
        if (repo_dir / name).is_file():
            return repo_dir / name
    return None


def strip_comments(text: str) -> str:
    """Remove ``//`` line comments and ``/* */`` block comments, keeping line numbers and strings."""
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if text.startswith(quote, i):
                out.append(text[i + 1 : i + len(quote)])
                i += len(quote)
                quote = None
                continue
            i += 1
            continue
        if text.startswith('"""', i) or text.startswith("'''", i):
            quote = text[i : i + 3]
            out.append(quote)
            i += 3
            continue
        if ch in "\"'":
            quote = ch
            out.append(ch)
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            block = text[i : (n if j < 0 else j + 2)]
            out.append("\n" * block.count("\n"))
            i = n if j < 0 else j + 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def included_builds(repo_dir: Path) -> list[Path]:
    """Directories of ``includeBuild("...")`` in the root settings file, plus ``buildSrc`` if present."""
    dirs: list[Path] = []
    settings = _settings_file(repo_dir)
    if settings is not None:
        text = strip_comments(read_text(settings))
        for match in re.finditer(r"includeBuild\s*\(?\s*[\"']([^\"']+)[\"']", text):
            path = (repo_dir / match.group(1)).resolve()
            if path.is_dir() and path not in dirs:
                dirs.append(path)
    if (repo_dir / "buildSrc").is_dir():
        dirs.append((repo_dir / "buildSrc").resolve())
    return dirs


def collect_build_files(repo_dir: Path) -> BuildFiles:
    """Read the build scripts, build-logic sources and ``gradle.properties`` files of a repository."""
    root = repo_dir.resolve()
    gradle: dict[str, str] = {}
    properties: dict[str, str] = {}
    for path in walk_files(root):
        rel = path.relative_to(root).as_posix()
        if path.name.endswith((".gradle", ".gradle.kts")):
            gradle[rel] = strip_comments(read_text(path))
        elif path.name == "gradle.properties":
            properties[rel] = read_text(path)
    logic: dict[str, str] = {}
    for build in included_builds(root):
        for path in walk_files(build):
            if path.suffix in (".kt", ".java", ".groovy"):
                logic[path.relative_to(root).as_posix()] = strip_comments(read_text(path))
    ordered_props = dict(sorted(properties.items(), key=lambda kv: (kv[0] != "gradle.properties", kv[0])))
    return BuildFiles(root, gradle, logic, ordered_props)


# ------------------------------------------------------------------------------------------------ catalogs


@dataclass(frozen=True)
class Catalog:
    """One version catalog file: ``versions`` (key -> version), ``plugins`` / ``libraries`` (raw tables)."""

    path: str
    text: str
    versions: Mapping[str, str]
    plugins: Mapping[str, Any]
    libraries: Mapping[str, Any]

    def version_of(self, entry: Any) -> str | None:
        """The version of a plugin/library entry (``version.ref`` resolved, ``"a:b:1.0"`` parsed)."""
        if isinstance(entry, str):
            parts = entry.split(":")
            return parts[2] if len(parts) == 3 else None
        if not isinstance(entry, dict):
            return None
        version = entry.get("version")
        if isinstance(version, str):
            return version
        if isinstance(version, dict):
            if "ref" in version:
                return self.versions.get(str(version["ref"]))
            for key in ("strictly", "require", "prefer"):
                if isinstance(version.get(key), str):
                    return str(version[key])
        if "version.ref" in entry:
            return self.versions.get(str(entry["version.ref"]))
        return None


def _catalog_key(name: str) -> str:
    return re.sub(r"[-_.]", ".", name).lower()


def read_catalogs(repo_dir: Path) -> list[Catalog]:
    """Parse ``gradle/*.versions.toml`` (``libs.versions.toml`` first). Invalid TOML -> RecipeError."""
    catalogs: list[Catalog] = []
    folder = repo_dir / "gradle"
    paths = sorted(folder.glob("*.versions.toml"), key=lambda p: (p.name != "libs.versions.toml", p.name))
    for path in paths:
        text = read_text(path)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RecipeError(f"{path}: invalid TOML: {exc}") from exc
        versions: dict[str, str] = {}
        for key, value in (data.get("versions") or {}).items():
            if isinstance(value, str):
                versions[key] = value
            elif isinstance(value, dict):
                for sub in ("strictly", "require", "prefer"):
                    if isinstance(value.get(sub), str):
                        versions[key] = value[sub]
                        break
        catalogs.append(
            Catalog(
                path.relative_to(repo_dir).as_posix(),
                text,
                versions,
                data.get("plugins") or {},
                data.get("libraries") or {},
            )
        )
    return catalogs


def catalog_version(catalogs: list[Catalog], accessor: str) -> tuple[str, str] | None:
    """Resolve ``libs.versions.a.b`` (accessor ``a.b``) to (value, "file:line")."""
    wanted = _catalog_key(accessor)
    for catalog in catalogs:
        for key, value in catalog.versions.items():
            if _catalog_key(key) == wanted:
                line = line_of(catalog.text, rf"^\s*{re.escape(key)}\s*=")
                return value, f"{catalog.path}:{line}" if line else catalog.path
    return None


# ------------------------------------------------------------------------------------- value resolution


# ------------------------------------------------------------------------------------------------ wrapper


def gradle_version(repo_dir: Path) -> tuple[str, str, str | None, str]:
    """(version, distribution URL, sha256 or None, evidence)."""
    path = repo_dir / "gradle" / "wrapper" / "gradle-wrapper.properties"
    if not path.is_file():
        raise RecipeError(f"{path}: missing; cannot infer the Gradle version (set overrides['gradle'])")
    text = read_text(path)
    match = re.search(r"^\s*distributionUrl\s*[=:]\s*(\S+)\s*$", text, flags=re.MULTILINE)
    if match is None:
        raise RecipeError(f"{path}: no distributionUrl; cannot infer the Gradle version")
    url = match.group(1).replace("\\:", ":").replace("\\=", "=")
    version = re.search(r"gradle-([\w.+-]+?)-(?:bin|all)\.zip$", url)
    if version is None:
        raise RecipeError(f"{path}: distributionUrl {url!r} does not name gradle-<version>-(bin|all).zip")
    sha = re.search(r"^\s*distributionSha256Sum\s*[=:]\s*([0-9a-fA-F]{64})\s*$", text, flags=re.MULTILINE)
    return (
        version.group(1),
        url,
        sha.group(1).lower() if sha else None,
        evidence(repo_dir, path, line_of(text, r"^\s*distributionUrl")),
    )


def gradle_wrapper_dist_dir(url: str) -> str:
    """Folder (relative to ``$GRADLE_USER_HOME``) where the Gradle wrapper unpacks ``url``.

    ``wrapper/dists/<zip name without .zip>/<hash>``, hash = MD5 of the URL text read as an unsigned big
    integer written in base 36 (``org.gradle.wrapper.PathAssembler``).
    """
    name = url.rsplit("/", 1)[-1]
    if name.endswith(".zip"):
        name = name[:-4]
    digest = int.from_bytes(hashlib.md5(url.encode("utf-8")).digest(), "big")  # noqa: S324 - Gradle's scheme
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    chars = ""
    while digest:
        digest, rem = divmod(digest, 36)
        chars = alphabet[rem] + chars
    return f"wrapper/dists/{name}/{chars or '0'}"


# ------------------------------------------------------------------------------------------------ settings


def _settings_text(repo_dir: Path) -> tuple[Path, str] | None:
    for name in ("settings.gradle.kts", "settings.gradle"):
        path = repo_dir / name
        if path.is_file():
            return path, strip_comments(read_text(path))
    return None


def _path_to_dir(gradle_path: str) -> str:
    return "/".join(part for part in gradle_path.split(":") if part)


def _normal_path(raw: str) -> str | None:
    if "$" in raw:
        return None
    raw = raw.strip()
    if not raw:
        return None
    return raw if raw.startswith(":") else f":{raw}"


def balanced(text: str, open_index: int) -> int:
    """Index just past the bracket matching ``text[open_index]`` (``(`` or ``{``), or len(text)."""
    pairs = {"(": ")", "{": "}"}
    opening = text[open_index]
    closing = pairs[opening]
    depth = 0
    i = open_index
    quote: str | None = None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def _function_defs(text: str) -> dict[str, tuple[int, int, str]]:
    """Settings-local functions: name -> (start, end, body) for ``fun name(...)`` / ``def name(...)``."""
    defs: dict[str, tuple[int, int, str]] = {}
    for match in re.finditer(r"\b(?:fun|def|void)\s+(\w+)\s*\(", text):
        params_end = balanced(text, match.end() - 1)
        brace = text.find("{", params_end)
        if brace < 0:
            continue
        end = balanced(text, brace)
        defs[match.group(1)] = (match.start(), end, text[match.start() : end])
    return defs


def _scan(repo_dir: Path, directory: Path, prefix: str, max_depth: int) -> dict[str, str]:
    """element-x-style directory scan: a child dir with a build file is a project; else recurse."""
    found: dict[str, str] = {}
    if not directory.is_dir():
        return found
    for child in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if child.name in ("build", "src"):
            continue
        path = f"{prefix}:{child.name}"
        if any((child / name).is_file() for name in BUILD_FILES):
            found[path] = child.relative_to(repo_dir).as_posix()
        elif max_depth > 0:
            found.update(_scan(repo_dir, child, path, max_depth - 1))
    return found


_DIR_ARG: Final = re.compile(
    r"(?:File|file)\s*\(\s*(?:rootDir|settingsDir|rootProject\.projectDir)\s*,\s*[\"']([^\"'$]+)[\"']\s*\)"
    r"|(?:new\s+File|File)\s*\(\s*(?:rootDir|settingsDir)\s*,\s*[\"']([^\"'$]+)[\"']\s*\)"
    r"|\bfile\s*\(\s*[\"']([^\"'$]+)[\"']\s*\)"
    r"|(?:rootDir|settingsDir)\.resolve\s*\(\s*[\"']([^\"'$]+)[\"']\s*\)"
)


def _dir_of(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g is not None).strip("/")


def settings_modules(repo_dir: Path) -> dict[str, str]:
    """Gradle project path -> repository-relative directory, from ``settings.gradle(.kts)``.

    Understands: ``include(":a:b")``, ``include ':a', ':b'`` (Groovy, continued over lines after a
    comma), multi-line ``include(...)`` blocks, bare names (``include 'app'`` = ``:app``),
    ``project(":x").projectDir = file("dir")`` / ``File(rootDir, "dir")``, and projects included by a
    directory scan: a settings-local function whose body lists directories and calls ``include``
    (element-x-android's ``includeProjects(File(rootDir, "features"), ":features")``), or an inline
    ``file("dir").listFiles()...include(...)`` chain. A scan includes every directory below the scanned
    root that holds ``build.gradle(.kts)``, not descending into it, to the function's ``maxDepth``
    (default parameter value, or the call's argument; unbounded -> 6 levels). The root project is
    ``":"`` -> ``""`` when the root has a build file.

    Raises:
        RecipeError: no settings file (a single-project build still gets ``{":": ""}`` when the root has
            a build file).
    """
    modules: dict[str, str] = {}
    if any((repo_dir / name).is_file() for name in BUILD_FILES):
        modules[":"] = ""
    settings = _settings_text(repo_dir)
    if settings is None:
        if modules:
            return modules
        raise RecipeError(f"{repo_dir}: no settings.gradle(.kts) and no root build file")
    _, text = settings
    defs = _function_defs(text)
    spans = [(start, end) for start, end, _ in defs.values()]

    def outside_defs(index: int) -> bool:
        return not any(start <= index < end for start, end in spans)

    for found in (
        _literal_includes(text, outside_defs),
        _function_scans(repo_dir, text, defs, outside_defs),
        _inline_scans(repo_dir, text, outside_defs),
    ):
        for path, rel in found.items():
            modules.setdefault(path, rel)
    modules.update(_project_dirs(text))
    return modules


def _include_region(text: str, match: re.Match[str]) -> str:
    """The arguments of the ``include`` at ``match``: its parenthesised block, or (Groovy) the rest of its line
    and of every following line while a line ends with a comma."""
    if match.group(1):
        return text[match.end() - 1 : balanced(text, match.end() - 1)]
    end = match.end()
    while True:
        nl = text.find("\n", end)
        line_end = len(text) if nl < 0 else nl
        if text[end:line_end].rstrip().endswith(",") and nl >= 0:
            end = nl + 1
            continue
        return text[match.end() : line_end]


def _literal_includes(text: str, outside_defs: Callable[[int], bool]) -> dict[str, str]:
    """Gradle path -> directory of every literal ``include`` outside settings-local functions."""
    out: dict[str, str] = {}
    for match in re.finditer(r"\binclude\b(?!Build|Flat)\s*(\(?)", text):
        if not outside_defs(match.start()):
            continue
        for string in re.finditer(r"\"([^\"]*)\"|'([^']*)'", _include_region(text, match)):
            path = _normal_path(string.group(1) if string.group(1) is not None else string.group(2))
            if path:
                out.setdefault(path, _path_to_dir(path))
    return out


def _scan_depth(args: str, default_depth: int | None) -> int:
    """The depth of one call of a scanning function: its ``...Depth = N`` argument, else its last positional
    number, else the function's default, else 6."""
    depth_arg = re.search(r"\w*[Dd]epth\w*\s*=\s*(\d+)", args)
    if depth_arg:
        return int(depth_arg.group(1))
    positional = re.findall(r",\s*(\d+)\s*(?=[,)])", args)
    if positional:
        return int(positional[-1])
    return default_depth if default_depth is not None else 6


def _scan_call(args: str) -> tuple[str, str] | None:
    """``(directory, Gradle path prefix)`` a call of a scanning function names, None when it names no
    directory."""
    dir_match = _DIR_ARG.search(args)
    strings = [s for s in re.findall(r"[\"']([^\"'$]*)[\"']", args)]
    prefix = next((s for s in strings if s.startswith(":")), None)
    if dir_match is None:
        plain = [s for s in strings if not s.startswith(":")]
        if not plain:
            return None
        directory = plain[0].strip("/")
    else:
        directory = _dir_of(dir_match)
    return directory, prefix if prefix is not None else ":" + directory.replace("/", ":")


def _function_scans(
    repo_dir: Path, text: str, defs: dict[str, tuple[int, int, str]], outside_defs: Callable[[int], bool]
) -> dict[str, str]:
    """Gradle path -> directory of the projects included by the calls of settings-local functions that list
    directories and call ``include``."""
    out: dict[str, str] = {}
    for name, (_start, _end, body) in defs.items():
        if "include" not in body or not re.search(r"listFiles|walk|eachDir|eachFile|list\(\)", body):
            continue
        depth_param = re.search(r"(\w*[Dd]epth\w*)\s*(?::\s*Int)?\s*=\s*(\d+)", body.split("{", 1)[0])
        default_depth = int(depth_param.group(2)) if depth_param else None
        for call in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", text):
            if not outside_defs(call.start()):
                continue
            args = text[call.end() - 1 : balanced(text, call.end() - 1)]
            named = _scan_call(args)
            if named is None:
                continue
            directory, prefix = named
            depth = _scan_depth(args, default_depth)
            for path, rel in _scan(repo_dir, repo_dir / directory, prefix.rstrip(":"), depth).items():
                out.setdefault(path, rel)
    return out


def _inline_scans(repo_dir: Path, text: str, outside_defs: Callable[[int], bool]) -> dict[str, str]:
    """Gradle path -> directory of the projects an inline ``file("dir").listFiles() ... include(...)`` chain
    includes (``listFiles`` / ``eachDir``: one level; ``walk``: 6)."""
    out: dict[str, str] = {}
    for match in re.finditer(
        r"(?:(?:new\s+)?File\s*\(\s*(?:rootDir|settingsDir)\s*,\s*|\bfile\s*\(\s*)[\"']([^\"'$]+)[\"']\s*\)"
        r"\s*\.\s*(listFiles|walk\w*|eachDir)",
        text,
    ):
        if not outside_defs(match.start()) or "include" not in text[match.end() : match.end() + 400]:
            continue
        directory = match.group(1).strip("/")
        depth = 0 if match.group(2) in ("listFiles", "eachDir") else 6
        for path, rel in _scan(repo_dir, repo_dir / directory, ":" + directory.replace("/", ":"), depth).items():
            out.setdefault(path, rel)
    return out


def _project_dirs(text: str) -> dict[str, str]:
    """Gradle path -> directory of every ``project(":x").projectDir = file("dir")`` override (``..`` and ``.``
    resolved)."""
    out: dict[str, str] = {}
    for match in re.finditer(r"project\s*\(\s*[\"']([^\"'$]+)[\"']\s*\)\s*\.\s*projectDir\s*=\s*([^\n;]+)", text):
        path = _normal_path(match.group(1))
        target = _DIR_ARG.search(match.group(2))
        if path and target:
            parts: list[str] = []
            for part in PurePosixPath(_dir_of(target)).parts:
                if part == "..":
                    if parts:
                        parts.pop()
                elif part != ".":
                    parts.append(part)
            out[path] = "/".join(parts)
    return out


def module_for_file(path: str, modules: Mapping[str, str]) -> str | None:
    """The Gradle path of the module whose directory is the nearest ancestor of ``path``, else None.

    ``path`` is repository-relative (POSIX). The root project (directory ``""``) matches last.
    """
    by_dir = {directory: gradle_path for gradle_path, directory in modules.items()}
    parent = PurePosixPath(path).parent
    while True:
        key = "" if str(parent) == "." else parent.as_posix()
        if key in by_dir:
            return by_dir[key]
        if key == "":
            return None
        parent = parent.parent


# ------------------------------------------------------------------------------------------- module kind


@final
@final
@dataclasses.dataclass(frozen=True)
class CompileFailures:
    """What failed to compile in a Gradle run (SPEC section 1 "Test states"; MobileDev-Bench A.6).

    Attributes:
        test_sources: targeted modules whose unit-test sources failed to compile
            (``compile*UnitTestKotlin``, ``compile*UnitTestJavaWithJavac``, ``compileTestKotlin`` ...):
            their tests do not exist in this configuration, state NONE.
        production: modules whose production sources failed to compile (``compileDebugKotlin``,
            ``compileKotlin``, ``compileJava`` ...): the run's build failed.
        other_tasks: other failed task paths that are neither compilation nor test execution
            (resource merging, code generation ...): also a build failure.
    """

    test_sources: frozenset[str]
    production: frozenset[str]
    other_tasks: frozenset[str] = frozenset()

    @property
    def build_failed(self) -> bool:
        """True when production code (or another non-test task) failed: the run is a build failure."""
        return bool(self.production or self.other_tasks)


def _failed_tasks(output: str) -> list[str]:
    tasks: list[str] = []
    patterns = (
        r"^> Task (:[\w:.-]+) FAILED\s*$",
        r"Execution failed for task '(:[\w:.-]+)'",
        r"^(:[\w:.-]+) FAILED\s*$",
    )
    for pattern in patterns:
        for match in re.finditer(pattern, output, flags=re.MULTILINE):
            if match.group(1) not in tasks:
                tasks.append(match.group(1))
    return tasks


def compile_failed_modules(output: str, modules: Iterable[str]) -> CompileFailures:
    """Classify the failed tasks of a Gradle run's output (``--console=plain``).

    Args:
        output: the run's stdout+stderr.
        modules: the targeted module paths (``plan.modules``); test-source failures outside them are
            ignored (their tests were not asked for).

    Returns:
        A :class:`CompileFailures`; test-execution task failures (``testDebugUnitTest`` with failing
        tests) appear in none of its sets.
    """
    targeted = set(modules)
    test_sources: set[str] = set()
    production: set[str] = set()
    other: set[str] = set()
    for task_path in _failed_tasks(output):
        module, _, task = task_path.rpartition(":")
        module = module or ":"
        if _TEST_COMPILE.match(task):
            if module in targeted or not targeted:
                test_sources.add(module)
        elif _PROD_COMPILE.match(task):
            production.add(module)
        elif _TEST_TASK_NAMES.match(task):
            continue
        else:
            other.add(task_path)
    return CompileFailures(frozenset(test_sources), frozenset(production), frozenset(other))
