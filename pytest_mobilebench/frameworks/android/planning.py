"""Android test planning: the kind of each Gradle module (android / kmp / jvm) and its unit-test task.

See :mod:`pytest_mobilebench.frameworks.android` for the heuristics and the command.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Final

from pytest_mobilebench.frameworks.gradle import (
    BUILD_FILES,
    GRADLE_FLAGS,
    Catalog,
    balanced,
    included_builds,
    module_for_file,
    read_catalogs,
    settings_modules,
    strip_comments,
)
from pytest_mobilebench.plan import PlanError, TestPlan
from pytest_mobilebench.frameworks.recipe import RecipeError, read_text, walk_files

__all__ = ["PLANNING_FILES", "module_kind", "plan_android", "unit_test_task"]

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
    registrations = [p for b in included_builds(root) for p in walk_files(b) if p.name in BUILD_FILES]
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
            region = region[match.end() - 1 : balanced(region, match.end() - 1)]
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
    blocks = [text[m.end() - 1 : balanced(text, m.end() - 1)] for m in re.finditer(r"\bplugins\s*\{", text)]
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
        (repo_dir / module_dir / name for name in BUILD_FILES if (repo_dir / module_dir / name).is_file()), None
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
    block = text[match.end() - 1 : balanced(text, match.end() - 1)]
    inner = block[1:-1]
    names: list[tuple[str, str]] = []  # (name, dimension)
    for flavor in re.finditer(
        r"(?:create|register|maybeCreate)\s*\(\s*[\"'](\w+)[\"']\s*\)\s*\{|^\s*(\w+)\s*\{", inner, flags=re.M
    ):
        name = flavor.group(1) or flavor.group(2)
        body = inner[flavor.end() - 1 : balanced(inner, flavor.end() - 1)]
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
        (repo_dir / module_dir / name for name in BUILD_FILES if (repo_dir / module_dir / name).is_file()), None
    )
    flavors = _first_flavors(strip_comments(read_text(build))) if build else []
    variant = "".join(f[:1].upper() + f[1:] for f in flavors)
    return f"{prefix}:test{variant}DebugUnitTest"


def _runs_as_unit_test(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return "androidTest" not in parts and not any(
        p.startswith("androidTest") or p.endswith("AndroidTest") for p in parts[:-1]
    )


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
            "file outside androidTest/" + (f" (unmapped: {unmapped})" if unmapped else "")
        )
    logic = _build_logic(repo_dir)
    targeted = sorted(targeted_set)
    tasks = [unit_test_task(repo_dir, m, modules[m], _module_kind_with(repo_dir, modules[m], logic)) for m in targeted]
    command = "./gradlew " + GRADLE_FLAGS + " " + " ".join(tasks)
    return TestPlan(command, tuple(_glob_for(modules[m]) for m in targeted), "junit", tuple(targeted))


def _glob_for(module_dir: str) -> str:
    return f"{module_dir}/build/test-results/**/TEST-*.xml" if module_dir else "build/test-results/**/TEST-*.xml"


# -------------------------------------------------------------------------------------- compile failures
