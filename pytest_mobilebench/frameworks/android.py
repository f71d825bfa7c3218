"""Android (Gradle) test plans: modules from the settings file, per-module unit-test tasks, JUnit XML results.

MobileDev-Bench Appendix A.7 ("Multi-Module Gradle Test Targeting"): the test patch's files are mapped to
their enclosing Gradle module via the settings declarations, and only those modules' unit-test tasks run,
Debug variant. Instrumentation tests (``androidTest/``) are not run (SPEC section 1).

Module kind heuristics (from the module's build file, read without running Gradle):

- the plugin ids it applies: ``plugins { id("x") / id 'x' / alias(libs.plugins.x) / kotlin("android") /
  `java-library` }`` and ``apply plugin: 'x'``; an id given as a Kotlin constant
  (``id(ThunderbirdPlugins.Library.jvm)``) is resolved in the build logic (``object`` path, then
  ``const val``); catalog aliases through ``gradle/*.versions.toml``;
- convention plugins are expanded recursively: a precompiled script plugin ``<id>.gradle(.kts)`` or a
  ``gradlePlugin { id = ...; implementationClass = ... }`` class anywhere in the build logic, whose own
  applied ids are read the same way;
- ``android``: it applies ``com.android.application`` / ``library`` / ``test`` / ``dynamic-feature`` ->
  task ``testDebugUnitTest`` (``test<Flavor>DebugUnitTest`` when the build file declares product flavors:
  the first declared flavor of each dimension);
- ``kmp``: Kotlin Multiplatform without an Android application/library plugin -> ``allTests``;
- ``jvm``: anything else (``java``, ``java-library``, ``org.jetbrains.kotlin.jvm``) -> ``test``;
- when no id can be resolved at all: an id or constant naming ``android`` -> android, naming
  ``multiplatform``/``kmp`` -> kmp; an ``android {`` block in the build file -> android; else jvm.

Command: ``./gradlew --no-daemon --continue --console=plain <tasks>``. ``--no-daemon``: one Gradle run per
container, no daemon left behind; ``--continue``: one module's failure does not stop the other modules'
tests; ``--console=plain``: task lines (``> Task :m:x FAILED``) that :func:`compile_failed_modules` reads.
No ``--offline``: the instance layer warmed the caches, but a test-only dependency may still be fetched.
Results: ``<module dir>/build/test-results/**/TEST-*.xml`` (JUnit XML, parser ``"junit"``).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final, final

if TYPE_CHECKING:
    from pytest_mobilebench.patch import FileChange
    from pytest_mobilebench.runtime.recipes.common import EnvRecipe

from pytest_mobilebench.frameworks.environment import Environment
from pytest_mobilebench.frameworks.plan import PlanError, TestPlan
from pytest_mobilebench.frameworks.rules import gradle_entry_point, path_parts, tool_dir_of
from pytest_mobilebench.frameworks.tree import tree_root
from pytest_mobilebench.runtime.recipes.android import Catalog, included_builds, read_catalogs, strip_comments
from pytest_mobilebench.runtime.recipes.common import RecipeError, read_text, walk_files

__all__ = [
    "ANDROID",
    "GRADLE_FLAGS",
    "Android",
    "PLANNING_FILES",
    "CompileFailures",
    "compile_failed_modules",
    "module_for_file",
    "module_kind",
    "plan_android",
    "settings_modules",
    "unit_test_task",
]

#: Flags of every Gradle test run (see the module docstring for why each).
GRADLE_FLAGS: Final[str] = "--no-daemon --continue --console=plain"

#: Repository files the planner reads (globs for ``Workspace.read_files``): settings, build scripts,
#: catalogs, properties and the Kotlin/Java sources of the usual build-logic folders.
PLANNING_FILES: Final[tuple[str, ...]] = (
    "settings.gradle",
    "settings.gradle.kts",
    "**/build.gradle",
    "**/build.gradle.kts",
    "**/*.gradle.kts",
    "**/*.gradle",
    "gradle/*.versions.toml",
    "gradle.properties",
    "buildSrc/**/*.kt",
    "buildSrc/**/*.java",
    "build-logic/**/*.kt",
    "build-plugin/**/*.kt",
    "build-plugins/**/*.kt",
    "plugins/src/**/*.kt",
    "gradle/plugins/**/*.kt",
    "gradle/build-logic/**/*.kt",
)

_BUILD_FILES: Final[tuple[str, ...]] = ("build.gradle.kts", "build.gradle")
_ANDROID_IDS: Final[frozenset[str]] = frozenset(
    {"com.android.application", "com.android.library", "com.android.test", "com.android.dynamic-feature"}
)
_KMP_IDS: Final[frozenset[str]] = frozenset(
    {"org.jetbrains.kotlin.multiplatform", "com.android.kotlin.multiplatform.library"}
)
_KOTLIN_SHORT: Final[dict[str, str]] = {
    "android": "org.jetbrains.kotlin.android",
    "jvm": "org.jetbrains.kotlin.jvm",
    "multiplatform": "org.jetbrains.kotlin.multiplatform",
}
_LEGACY_IDS: Final[dict[str, str]] = {
    "kotlin-android": "org.jetbrains.kotlin.android",
    "kotlin-multiplatform": "org.jetbrains.kotlin.multiplatform",
    "kotlin": "org.jetbrains.kotlin.jvm",
    "android": "com.android.application",
    "android-library": "com.android.library",
}
_TEST_TASK_NAMES: Final = re.compile(r"^(test\w*UnitTest|test|allTests|jvmTest|\w+Test)$")
_TEST_COMPILE: Final = re.compile(
    r"^(?:compile|ksp|kapt|kaptGenerateStubs)\w*(?:UnitTest|Test)\w*(?:Kotlin|Java|JavaWithJavac|Groovy)\w*$"
    r"|^compileTest\w*$"
)
_PROD_COMPILE: Final = re.compile(r"^(?:compile|ksp|kapt|kaptGenerateStubs)\w*(?:Kotlin|Java|JavaWithJavac|Groovy)\w*$")


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


def _balanced(text: str, open_index: int) -> int:
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
        params_end = _balanced(text, match.end() - 1)
        brace = text.find("{", params_end)
        if brace < 0:
            continue
        end = _balanced(text, brace)
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
        if any((child / name).is_file() for name in _BUILD_FILES):
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
    if any((repo_dir / name).is_file() for name in _BUILD_FILES):
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

    # literal includes
    for match in re.finditer(r"\binclude\b(?!Build|Flat)\s*(\(?)", text):
        if not outside_defs(match.start()):
            continue
        if match.group(1):
            region = text[match.end() - 1 : _balanced(text, match.end() - 1)]
        else:
            end = match.end()
            while True:
                nl = text.find("\n", end)
                line_end = len(text) if nl < 0 else nl
                if text[end:line_end].rstrip().endswith(",") and nl >= 0:
                    end = nl + 1
                    continue
                region = text[match.end() : line_end]
                break
        for string in re.finditer(r"\"([^\"]*)\"|'([^']*)'", region):
            path = _normal_path(string.group(1) if string.group(1) is not None else string.group(2))
            if path:
                modules.setdefault(path, _path_to_dir(path))

    # directory scans through settings-local functions
    for name, (_start, _end, body) in defs.items():
        if "include" not in body or not re.search(r"listFiles|walk|eachDir|eachFile|list\(\)", body):
            continue
        default_depth = None
        depth_param = re.search(r"(\w*[Dd]epth\w*)\s*(?::\s*Int)?\s*=\s*(\d+)", body.split("{", 1)[0])
        if depth_param:
            default_depth = int(depth_param.group(2))
        for call in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", text):
            if not outside_defs(call.start()):
                continue
            args = text[call.end() - 1 : _balanced(text, call.end() - 1)]
            dir_match = _DIR_ARG.search(args)
            strings = [s for s in re.findall(r"[\"']([^\"'$]*)[\"']", args)]
            prefix = next((s for s in strings if s.startswith(":")), None)
            if dir_match is None:
                plain = [s for s in strings if not s.startswith(":")]
                if not plain:
                    continue
                directory = plain[0].strip("/")
            else:
                directory = _dir_of(dir_match)
            if prefix is None:
                prefix = ":" + directory.replace("/", ":")
            depth_arg = re.search(r"\w*[Dd]epth\w*\s*=\s*(\d+)", args)
            positional = re.findall(r",\s*(\d+)\s*(?=[,)])", args)
            depth = (
                int(depth_arg.group(1))
                if depth_arg
                else int(positional[-1])
                if positional
                else default_depth
                if default_depth is not None
                else 6
            )
            for path, rel in _scan(repo_dir, repo_dir / directory, prefix.rstrip(":"), depth).items():
                modules.setdefault(path, rel)

    # inline scans: file("dir").listFiles() ... include(...)
    for match in re.finditer(
        r"(?:(?:new\s+)?File\s*\(\s*(?:rootDir|settingsDir)\s*,\s*|\bfile\s*\(\s*)[\"']([^\"'$]+)[\"']\s*\)"
        r"\s*\.\s*(listFiles|walk\w*|eachDir)",
        text,
    ):
        if not outside_defs(match.start()):
            continue
        tail = text[match.end() : match.end() + 400]
        if "include" not in tail:
            continue
        directory = match.group(1).strip("/")
        depth = 0 if match.group(2) in ("listFiles", "eachDir") else 6
        for path, rel in _scan(repo_dir, repo_dir / directory, ":" + directory.replace("/", ":"), depth).items():
            modules.setdefault(path, rel)

    # projectDir overrides
    for match in re.finditer(
        r"project\s*\(\s*[\"']([^\"'$]+)[\"']\s*\)\s*\.\s*projectDir\s*=\s*([^\n;]+)", text
    ):
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
            modules[path] = "/".join(parts)
    return modules


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
@dataclasses.dataclass
class _Logic:
    """The build-logic index: precompiled script plugins and registered plugin classes by id."""

    scripts: dict[str, str]  # plugin id -> script text
    classes: dict[str, str]  # plugin id -> implementation class source
    sources: list[tuple[str, str]]  # (rel, stripped text) of build-logic Kotlin/Java/Groovy sources
    catalogs: list[Catalog]


def _build_logic(repo_dir: Path) -> _Logic:
    """Index the build logic: the builds named by ``includeBuild`` in the settings and ``buildSrc``."""
    scripts: dict[str, str] = {}
    sources: list[tuple[str, str]] = []
    root = repo_dir.resolve()
    for build in included_builds(root):
        for path in walk_files(build):
            rel = path.relative_to(root).as_posix()
            name = path.name
            if name.endswith((".gradle.kts", ".gradle")) and "/src/" in f"/{rel}":
                plugin_id = name.removesuffix(".kts").removesuffix(".gradle")
                scripts[plugin_id] = strip_comments(read_text(path))
            elif path.suffix in (".kt", ".java", ".groovy"):
                sources.append((rel, strip_comments(read_text(path))))
    classes: dict[str, str] = {}
    class_files = {PurePosixPath(rel).stem: text for rel, text in sources}
    registrations = [p for b in included_builds(root) for p in walk_files(b) if p.name in _BUILD_FILES]
    for path in registrations:
        text = strip_comments(read_text(path))
        if "gradlePlugin" not in text:
            continue
        for reg in re.finditer(
            r"id\s*=\s*[\"']([^\"']+)[\"'][^}]*?implementationClass\s*=\s*[\"']([\w.]+)[\"']", text, flags=re.S
        ):
            cls = reg.group(2).rsplit(".", 1)[-1]
            if cls in class_files:
                classes[reg.group(1)] = class_files[cls]
    try:
        catalogs = read_catalogs(repo_dir)
    except RecipeError:
        catalogs = []
    return _Logic(scripts, classes, sources, catalogs)


def _const_string(reference: str, logic: _Logic) -> str | None:
    """Resolve ``A.B.c`` to the string of ``const val c = "..."`` inside ``object A { object B {...} }``."""
    segments = reference.split(".")
    last = segments[-1]
    value_re = re.compile(rf"\bva[lr]\s+{re.escape(last)}\s*(?::\s*String)?\s*=\s*\"([^\"]+)\"")
    for _rel, text in logic.sources:
        region = text
        ok = True
        for segment in segments[:-1]:
            match = re.search(rf"\b(?:object|class)\s+{re.escape(segment)}\b[^{{]*\{{", region)
            if match is None:
                ok = False
                break
            region = region[match.end() - 1 : _balanced(region, match.end() - 1)]
        if ok:
            found = value_re.search(region)
            if found:
                return found.group(1)
    if len(segments) == 1:
        for _rel, text in logic.sources:
            found = value_re.search(text)
            if found:
                return found.group(1)
    return None


def _catalog_plugin(alias: str, logic: _Logic) -> str | None:
    wanted = re.sub(r"[-_.]", ".", alias).lower()
    for catalog in logic.catalogs:
        for key, entry in catalog.plugins.items():
            if re.sub(r"[-_.]", ".", key).lower() == wanted:
                if isinstance(entry, str):
                    return entry.split(":")[0]
                if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                    return str(entry["id"])
    return None


def _applied_ids(text: str, logic: _Logic) -> tuple[set[str], set[str]]:
    """(resolved plugin ids, unresolved references) applied by a build script or plugin class."""
    ids: set[str] = set()
    unresolved: set[str] = set()
    blocks = [text[m.end() - 1 : _balanced(text, m.end() - 1)] for m in re.finditer(r"\bplugins\s*\{", text)]
    for block in blocks:
        for match in re.finditer(r"\bid\s*\(?\s*[\"']([^\"']+)[\"']", block):
            ids.add(match.group(1))
        for match in re.finditer(r"\bid\s*\(\s*([A-Za-z_][\w.]*)\s*\)", block):
            value = _const_string(match.group(1), logic)
            (ids.add(value) if value else unresolved.add(match.group(1)))
        for match in re.finditer(r"\balias\s*\(\s*libs\.plugins\.([\w.]+)\s*\)", block):
            value = _catalog_plugin(match.group(1), logic)
            (ids.add(value) if value else unresolved.add(match.group(1)))
        for match in re.finditer(r"\bkotlin\s*\(\s*[\"'](\w+)[\"']\s*\)", block):
            ids.add(_KOTLIN_SHORT.get(match.group(1), f"org.jetbrains.kotlin.{match.group(1)}"))
        for match in re.finditer(r"`([\w.-]+)`|^\s*(java|application|java-library)\s*$", block, flags=re.M):
            ids.add(match.group(1) or match.group(2))
    for match in re.finditer(
        r"apply\s*\(?\s*plugin\s*[:=]\s*[\"']([^\"']+)[\"']"
        r"|(?:pluginManager|plugins)\s*\.\s*apply\s*\(\s*[\"']([^\"']+)[\"']"
        r"|\bapply\s*\(\s*[\"']([^\"']+)[\"']\s*\)",
        text,
    ):
        ids.add(next(g for g in match.groups() if g))
    for match in re.finditer(r"(?:pluginManager|plugins)\s*\.\s*apply\s*\(\s*libs\.plugins\.([\w.]+)", text):
        value = _catalog_plugin(match.group(1), logic)
        (ids.add(value) if value else unresolved.add(match.group(1)))
    return {_LEGACY_IDS.get(i, i) for i in ids}, unresolved


def _expand(ids: set[str], logic: _Logic, seen: set[str]) -> tuple[set[str], set[str]]:
    all_ids = set(ids)
    unresolved: set[str] = set()
    for plugin_id in ids:
        if plugin_id in seen:
            continue
        seen.add(plugin_id)
        text = logic.scripts.get(plugin_id) or logic.classes.get(plugin_id)
        if text is None:
            continue
        more, more_unresolved = _applied_ids(text, logic)
        unresolved |= more_unresolved
        expanded, expanded_unresolved = _expand(more, logic, seen)
        all_ids |= expanded
        unresolved |= expanded_unresolved
    return all_ids, unresolved


def _module_kind_with(repo_dir: Path, module_dir: str, logic: _Logic) -> str:
    build = next(
        (repo_dir / module_dir / name for name in _BUILD_FILES if (repo_dir / module_dir / name).is_file()), None
    )
    if build is None:
        return "jvm"
    text = strip_comments(read_text(build))
    ids, unresolved = _applied_ids(text, logic)
    ids, more_unresolved = _expand(ids, logic, set())
    unresolved |= more_unresolved
    if ids & _ANDROID_IDS:
        return "android"
    if ids & _KMP_IDS:
        return "kmp"
    names = " ".join(sorted(unresolved | ids)).lower()
    if "android" in names and not ids & {"java", "java-library", "org.jetbrains.kotlin.jvm"}:
        return "android"
    if "multiplatform" in names or "kmp" in names:
        return "kmp"
    if not ids and re.search(r"^\s*android\s*\{", text, flags=re.MULTILINE):
        return "android"
    return "jvm"


def module_kind(repo_dir: Path, module_dir: str) -> str:
    """``"android"`` | ``"kmp"`` | ``"jvm"`` for the module in ``module_dir`` (heuristics: module docstring)."""
    return _module_kind_with(repo_dir, module_dir, _build_logic(repo_dir))


def _first_flavors(text: str) -> list[str]:
    match = re.search(r"\bproductFlavors\s*\{", text)
    if match is None:
        return []
    block = text[match.end() - 1 : _balanced(text, match.end() - 1)]
    inner = block[1:-1]
    names: list[tuple[str, str]] = []  # (name, dimension)
    for flavor in re.finditer(
        r"(?:create|register|maybeCreate)\s*\(\s*[\"'](\w+)[\"']\s*\)\s*\{|^\s*(\w+)\s*\{", inner, flags=re.M
    ):
        name = flavor.group(1) or flavor.group(2)
        body = inner[flavor.end() - 1 : _balanced(inner, flavor.end() - 1)]
        dim_match = re.search(r"dimension\s*[=(]?\s*[\"'](\w+)[\"']", body)
        names.append((name, dim_match.group(1) if dim_match else ""))
    dims_line = re.search(r"flavorDimensions[^\n]*", text)
    dims_order = re.findall(r"[\"'](\w+)[\"']", dims_line.group(0)) if dims_line else []
    chosen: dict[str, str] = {}
    for name, dim in names:
        chosen.setdefault(dim, name)
    order = dims_order or list(chosen)
    return [chosen[d] for d in order if d in chosen] or list(chosen.values())[:1]


def unit_test_task(repo_dir: Path, gradle_path: str, module_dir: str, kind: str) -> str:
    """The unit-test task path for one module (``:m:testDebugUnitTest``, ``:m:test``, ``:m:allTests``)."""
    prefix = "" if gradle_path == ":" else gradle_path
    if kind == "jvm":
        return f"{prefix}:test"
    if kind == "kmp":
        return f"{prefix}:allTests"
    build = next(
        (repo_dir / module_dir / name for name in _BUILD_FILES if (repo_dir / module_dir / name).is_file()), None
    )
    flavors = _first_flavors(strip_comments(read_text(build))) if build else []
    variant = "".join(f[:1].upper() + f[1:] for f in flavors)
    return f"{prefix}:test{variant}DebugUnitTest"


def _runs_as_unit_test(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return "androidTest" not in parts and not any(p.startswith("androidTest") or p.endswith("AndroidTest") for p in parts[:-1])


def plan_android(
    repo_dir: Path,
    test_files: Sequence[str],
    *,
    test_command: str | None = None,
    test_targets: Sequence[str] = (),
) -> TestPlan:
    """Plan the Gradle run for the test patch's files (see the module docstring).

    ``test_targets`` (manifest) are Gradle task paths or arguments used verbatim instead of the derived
    tasks; ``test_command`` replaces the whole command. In both cases the modules are read from the
    task paths (``:a:b:task`` -> ``:a:b``) and the result globs cover those modules (or every module's
    ``build/test-results`` when none can be read).

    Raises:
        PlanError: no test file maps to a module (or all are instrumentation tests).
        RecipeError: no settings file and no root build file.
    """
    modules = settings_modules(repo_dir)
    if test_command or test_targets:
        text = test_command or " ".join(test_targets)
        targeted = sorted(
            {m.group(1) or ":" for m in re.finditer(r"(?<![\w-])((?::[\w.-]+)*):[A-Za-z]\w*(?=\s|$)", text)}
        )
        targeted = [m for m in targeted if m in modules] or []
        globs = tuple(_glob_for(modules[m]) for m in targeted) or ("**/build/test-results/**/TEST-*.xml",)
        command = test_command or "./gradlew " + GRADLE_FLAGS + " " + " ".join(shlex.quote(t) for t in test_targets)
        return TestPlan(command, globs, "junit", tuple(targeted))
    targeted_set: set[str] = set()
    unmapped: list[str] = []
    for path in test_files:
        if not _runs_as_unit_test(path):
            continue
        module = module_for_file(path, modules)
        if module is None:
            unmapped.append(path)
        else:
            targeted_set.add(module)
    if not targeted_set:
        raise PlanError(
            f"{repo_dir}: none of the test files {list(test_files)!r} lies in a Gradle module of the settings "
            "file outside androidTest/"
            + (f" (unmapped: {unmapped})" if unmapped else "")
        )
    logic = _build_logic(repo_dir)
    targeted = sorted(targeted_set)
    tasks = [unit_test_task(repo_dir, m, modules[m], _module_kind_with(repo_dir, modules[m], logic)) for m in targeted]
    command = "./gradlew " + GRADLE_FLAGS + " " + " ".join(tasks)
    return TestPlan(command, tuple(_glob_for(modules[m]) for m in targeted), "junit", tuple(targeted))


def _glob_for(module_dir: str) -> str:
    return f"{module_dir}/build/test-results/**/TEST-*.xml" if module_dir else "build/test-results/**/TEST-*.xml"


# -------------------------------------------------------------------------------------- compile failures


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


# ------------------------------------------------------------------------------------------------ framework

#: Lines of Gradle scripts that change how tests run or report, or which code the tests get.
_GRADLE_TEST_LINE: Final = re.compile(
    r"\b(testOptions|unitTests|ignoreFailures|testLogging|failFast|maxParallelForks|excludeTestsMatching|"
    r"includeTestsMatching|isIncludeAndroidResources|isReturnDefaultValues|dependencySubstitution|eachDependency|"
    r"useTarget|substitute|useJUnitPlatform|useJUnit|beforeTest|afterTest|afterSuite|onOutput|taskGraph|"
    r"testClassesDirs)\b"
    r"|tasks\s*\.\s*(withType|named|register|getByName|findByName|getByPath|matching|configureEach|all)\b"
    r"[^\n]*\b(Test\b|test\w*)|tasks\s*\.\s*test\b|^\s*test\s*\{|\bfilter\s*\{|whenTaskAdded"
)
_APPLY_FROM: Final = re.compile(r"""apply\s*\(?\s*from\s*[:=]\s*(?:file\s*\(\s*)?["']([^"']+)["']""")
_PROPERTY_LINE: Final = re.compile(r"^\s*(org\.gradle\.jvmargs|org\.gradle\.java\.home|systemProp\.|org\.gradle\.daemon)")
_TEST_PACKAGE: Final = re.compile(
    r"^\s*package\s+(org\.junit|junit\.|kotlin\.test|io\.mockk|org\.mockito|org\.robolectric|org\.hamcrest|"
    r"org\.assertj|com\.google\.common\.truth|app\.cash\.turbine|kotlinx\.coroutines\.test|org\.gradle)"
)
_TOOL_NAMES: Final = frozenset({"local.properties"})


def _is_test_source_set(name: str) -> bool:
    return name.startswith(("test", "androidTest")) or name == "sharedTest" or name.endswith("Test")


def is_android_test_file(path: str) -> bool:
    """``*Test.kt`` / ``*Test.java`` (MobileDev-Bench Appendix A.2), or any file of a Gradle test source
    set: ``src/<set>/`` where ``<set>`` starts with ``test`` or ``androidTest`` (``testDebug``,
    ``testFixtures``), is ``sharedTest``, or ends with ``Test`` (``commonTest``, ``jvmTest``)."""
    parts = path_parts(path)
    dirs = parts[:-1]
    in_set = any(dirs[k] == "src" and _is_test_source_set(dirs[k + 1]) for k in range(len(dirs) - 1))
    return parts[-1].endswith(("Test.kt", "Test.java")) or in_set


def _gradle_findings(path: str, change: FileChange) -> list[str]:
    findings = []
    for sign, lines in (("+", change.added_lines), ("-", change.removed_lines)):
        for line in lines:
            if _GRADLE_TEST_LINE.search(line):
                findings.append(f"changed Gradle test configuration in {path}: {sign}{line.strip()}")
            target = _APPLY_FROM.search(line)
            if target and not target.group(1).endswith((".gradle", ".gradle.kts")):
                findings.append(f"{path} applies the non-Gradle file {target.group(1)}: {sign}{line.strip()}")
    return findings


@final
class Android:
    """The ``android`` framework (Gradle unit tests, JUnit XML); see :func:`plan_android`."""

    name = "android"
    parser = "junit"
    markers: tuple[str, ...] = ()
    planning_files: tuple[str, ...] = PLANNING_FILES

    def config_paths(self, files: Mapping[str, bytes]) -> tuple[str, ...]:
        """Nothing: Gradle test configuration is read from the patch's own lines."""
        del files
        return ()

    def test_rule(self, files: Mapping[str, bytes]) -> Callable[[str], bool]:
        """:func:`is_android_test_file` (Gradle's conventional source sets)."""
        del files
        return is_android_test_file

    def plan(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        test_command: str | None = None,
        test_targets: Sequence[str] = (),
        test_results: Sequence[str] = (),
        environment: Environment = Environment(),
    ) -> TestPlan:
        """:func:`plan_android` over the contents of :data:`PLANNING_FILES`, read as an in-memory tree
        (:func:`pytest_mobilebench.frameworks.tree.tree_root`). A ``test_command``'s results are
        ``test_results`` when given."""
        del environment
        plan = plan_android(tree_root(files), test_files, test_command=test_command, test_targets=test_targets)  # type: ignore[arg-type]
        if test_command and test_results:
            return TestPlan(plan.command, tuple(test_results), plan.parser, plan.modules)
        return plan

    def production_built(self, output: str, plan: TestPlan) -> bool:
        """False when :func:`compile_failed_modules` finds a production compile failure."""
        return not compile_failed_modules(output, plan.modules).build_failed

    def runner_config(
        self, change: FileChange, before: Mapping[str, bytes], after: Mapping[str, bytes], plan_command: str
    ) -> list[str]:
        """Test-task lines of Gradle scripts, JVM options of ``gradle.properties``, and sources declaring
        a test framework's package (``package org.junit`` ...), from the section's parsed hunks."""
        del before, after, plan_command
        path = change.path
        if path.endswith((".gradle", ".gradle.kts")):
            return _gradle_findings(path, change)
        if PurePosixPath(path).name == "gradle.properties":
            return [f"changed Gradle JVM options in {path}: {line.strip()}"
                    for line in (*change.added_lines, *change.removed_lines) if _PROPERTY_LINE.match(line)]  # fmt: skip
        if path.endswith((".kt", ".java", ".groovy", ".kts")):
            return [f"{path} declares a test framework's package: {line.strip()}"
                    for line in change.added_lines if _TEST_PACKAGE.match(line)]  # fmt: skip
        return []

    def tool_path(self, path: str) -> str | None:
        """Build outputs and caches, the Gradle wrapper (``gradlew``, ``gradle/wrapper/``), ``local.properties``."""
        tool = tool_dir_of(path)
        if tool:
            return f"{path} is inside {tool}/ (installed dependencies, build outputs or tool caches)"
        if path_parts(path)[-1] in _TOOL_NAMES:
            return f"{path} holds the local SDK location Gradle reads"
        return gradle_entry_point(path)

    def infer_recipe(self, repo_dir: Path, overrides: Mapping[str, Any]) -> EnvRecipe:
        """:func:`pytest_mobilebench.runtime.recipes.android.infer_android_recipe` (``overrides``: :func:`~pytest_mobilebench.frameworks.environment.recipe_overrides`)."""
        from pytest_mobilebench.runtime.recipes.android import infer_android_recipe

        return infer_android_recipe(repo_dir, overrides=overrides)


ANDROID = Android()
