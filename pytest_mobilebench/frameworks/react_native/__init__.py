"""React-Native / JS: jest's own test rule, jest plans with a JSON report, and what steers jest.

SPEC section 1 "Running tests per framework" (jest with ``--json``). Command, by the package manager
(:func:`pytest_mobilebench.frameworks.react_native.recipe.package_manager_of`, or ``environment.package_manager``):
``npx jest`` (npm), ``yarn jest`` (yarn), ``pnpm exec jest`` (pnpm), with ``--ci --json
--outputFile=.mobilebench/jest-results.json --testLocationInResults --runTestsByPath <files>``
(``--runTestsByPath``: paths are literal, not regular expressions, which break on ``[id].test.tsx``).

Test rule: jest's ``testMatch`` / ``testRegex`` from the project's configuration where it gives them
(``package.json``'s ``jest`` section, a ``"jest": "./file.json"`` pointer, ``jest.config.json``, or the
string literals of ``testMatch: [...]`` / ``testRegex: "..."`` in ``jest.config.{js,ts,cjs,mjs,cts,mts}``,
read without running them), jest's defaults otherwise (``**/__tests__/**/*.?([mc])[jt]s?(x)``,
``**/?(*.)+(spec|test).?([mc])[jt]s?(x)``); ``node_modules`` never; snapshots under ``__snapshots__/``
are test data and count as test files (not as entry points).

Runner configuration (a change is ``policy_violation`` and is restored to base): ``jest.config.*``, the
pointer's file, every file a jest configuration names (``<rootDir>/x`` or ``./x``, with or without
extension), babel configuration (``babel.config.*``, ``.babelrc*``, ``package.json`` ``babel``), every
``__mocks__/`` folder at any depth (jest uses ``src/__mocks__/<pkg>.js`` for an npm package), the module
resolution of ``tsconfig.json`` / ``jsconfig.json`` (``compilerOptions.paths``, ``baseUrl``, ``rootDirs``
...; jest's own ``moduleNameMapper`` / ``modulePaths`` / ``roots`` / ``moduleDirectories`` live in its
configuration, watched whole), ``package.json``'s ``jest`` / ``babel`` / ``packageManager`` values, the scripts the plan
runs (with their ``pre``/``post`` hooks), ``resolutions`` / ``overrides`` of test-runner packages, and a
package that names itself like one (``jest``, ``@jest/*``, ``expect`` ...). Tools (never applied): package
manager configuration and hooks (``.npmrc``, ``.yarnrc*``, ``.pnpmfile.cjs``, ``.yarn/``, ``.pnp.*``).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final, final

from pytest_mobilebench.runtime.environment import Environment
from pytest_mobilebench.frameworks.globs import glob_matches
from pytest_mobilebench.plan import PlanError, TestPlan
from pytest_mobilebench.frameworks.react_native.recipe import RECIPE_FILES
from pytest_mobilebench.frameworks.rules import gradle_entry_point, json_of, path_parts, strings_in, tool_dir_of
from pytest_mobilebench.frameworks.react_native.recipe import package_manager_of

if TYPE_CHECKING:
    from pytest_mobilebench.patch import FileChange
    from pytest_mobilebench.frameworks.recipe import EnvRecipe

__all__ = [
    "JEST_CONFIG_NAMES",
    "JEST_RUNNERS",
    "PLANNING_FILES",
    "RESULT_FILE",
    "ReactNative",
    "is_jest_test_file",
    "jest_option",
    "plan_react_native",
    "snapshot_owner",
]

#: The jest JSON report (repository-relative).
RESULT_FILE: Final[str] = ".mobilebench/jest-results.json"

#: Package manager -> how it runs the project's jest binary.
JEST_RUNNERS: Final[dict[str, str]] = {"npm": "npx jest", "yarn": "yarn jest", "pnpm": "pnpm exec jest"}

#: Repository files the planner reads.
PLANNING_FILES: Final[tuple[str, ...]] = ("package.json", "pnpm-lock.yaml", "yarn.lock", "package-lock.json")
#: Planning files whose presence alone the planner reads (the package manager: ``package_manager_of``):
#: a workspace lists them and copies nothing (a lockfile runs to megabytes).
PRESENCE_FILES: Final[tuple[str, ...]] = ("pnpm-lock.yaml", "yarn.lock", "package-lock.json")

JEST_CONFIG_NAMES: Final[tuple[str, ...]] = tuple(
    f"jest.config.{ext}" for ext in ("js", "ts", "cjs", "mjs", "cts", "mts", "json")
)
DEFAULT_TEST_MATCH: Final[tuple[str, ...]] = (
    "**/__tests__/**/*.?([mc])[jt]s?(x)",
    "**/?(*.)+(spec|test).?([mc])[jt]s?(x)",
)
_SCRIPT_EXT: Final = re.compile(r"\.(?:js|jsx|ts|tsx|mjs|cjs|mts|cts)$")
_RESOLVE_EXT: Final = ("", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".json")
_BABEL: Final = re.compile(r"^(?:babel\.config\.\w+|\.babelrc(?:\.\w+)?)$")
_TOOL_NAMES: Final = frozenset({".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".pnp.cjs", ".pnp.loader.mjs"})
_RUNNER_PACKAGE: Final = re.compile(
    r"^(?:jest|expect|@jest/.+|jest-.+|babel-jest|ts-jest|@babel/core|react-test-renderer)$"
)
_NAME_LINE: Final = re.compile(r'"name"\s*:\s*"([^"]+)"')
#: the keys that give a package its module identity: how node and jest's resolver name and enter it (issue 31)
MODULE_IDENTITY_KEYS: Final[tuple[str, ...]] = ("name", "exports", "imports", "main", "type", "workspaces", "browser")
#: an identity key anywhere on a line (a one-line package.json holds every key on its only line)
_IDENTITY_KEY: Final = re.compile(r'"(' + "|".join(MODULE_IDENTITY_KEYS) + r')"\s*:')
_JSON_ESCAPE: Final = re.compile(r"\\u([0-9a-fA-F]{4})")
_STRING_LITERAL: Final = re.compile(r"""(['"`])((?:\\.|(?!\1).)*)\1""")


#: files whose ``compilerOptions`` resolve modules for ts-jest / babel module resolvers
_RESOLUTION_FILES: Final[tuple[str, ...]] = ("tsconfig.json", "jsconfig.json")
_RESOLUTION_KEYS: Final[tuple[str, ...]] = ("paths", "baseUrl", "rootDirs", "moduleSuffixes", "typeRoots", "types")


def _resolution(data: bytes | None) -> Any:
    """The module-resolution options of a tsconfig / jsconfig (raw bytes when it is not plain JSON)."""
    parsed = json_of(data)
    if not isinstance(parsed, dict):
        return data
    options = parsed.get("compilerOptions") if isinstance(parsed.get("compilerOptions"), dict) else {}
    return {k: options.get(k) for k in _RESOLUTION_KEYS} | {"extends": parsed.get("extends")}


def snapshot_owner(path: str, files: Mapping[str, bytes] | None = None) -> str | None:
    """The test file that reads the snapshot ``path`` by jest's default snapshot path
    (``dir/__snapshots__/X.test.tsx.snap`` -> ``dir/X.test.tsx``); None for a path that is no such snapshot,
    or when the configuration in ``files`` names its own ``snapshotResolver`` (then the path is unknown)."""
    parts = path.split("/")
    if len(parts) < 2 or parts[-2] != "__snapshots__" or not path.endswith(".snap") or len(parts[-1]) <= 5:
        return None
    if files and any(b"snapshotResolver" in data for data in files.values()):
        return None
    return "/".join([*parts[:-2], parts[-1][: -len(".snap")]])


def is_jest_test_file(path: str, files: Mapping[str, bytes] | None = None) -> bool:
    """Whether jest would run ``path`` as a test file under the configuration in ``files`` (defaults
    when ``files`` gives none): a script file matching ``testMatch`` / ``testRegex``, outside node_modules."""
    if "node_modules" in path_parts(path) or not _SCRIPT_EXT.search(path):
        return False
    match, regexes = _test_patterns(files or {})
    if regexes:
        return any(re.search(r, "/" + path) for r in regexes)
    return any(glob_matches(p, path) for p in match)


def _pointer(files: Mapping[str, bytes]) -> str | None:
    """The file named by ``"jest": "./x.json"`` in package.json, normalised, or None."""
    package = json_of(files.get("package.json"))
    section = package.get("jest") if isinstance(package, dict) else None
    return posixpath.normpath(section.replace("<rootDir>/", "")) if isinstance(section, str) and section else None


def _json_configs(files: Mapping[str, bytes]) -> list[Mapping[str, Any]]:
    package = json_of(files.get("package.json"))
    found = [package.get("jest")] if isinstance(package, dict) else []
    found += [json_of(files.get(name)) for name in ("jest.config.json", _pointer(files) or "")]
    return [c for c in found if isinstance(c, Mapping)]


def _js_config_texts(files: Mapping[str, bytes]) -> list[str]:
    return [files[n].decode("utf-8", "replace") for n in JEST_CONFIG_NAMES[:-1] if n in files]


def _test_patterns(files: Mapping[str, bytes]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(testMatch globs, testRegex expressions)`` of the project's jest configuration (defaults when none)."""
    match: list[str] = []
    regexes: list[str] = []
    for config in _json_configs(files):
        match += [s for s in strings_in(config.get("testMatch"))]
        regexes += [s for s in strings_in(config.get("testRegex"))]
    for text in _js_config_texts(files):
        for key, sink in (("testMatch", match), ("testRegex", regexes)):
            value = re.search(key + r"""\s*:\s*(\[[^\]]*\]|(['"`])(?:\\.|(?!\2).)*\2)""", text)
            if value:
                sink += [m.group(2).replace("\\\\", "\\") for m in _STRING_LITERAL.finditer(value.group(1))]
    return (tuple(match) or DEFAULT_TEST_MATCH, tuple(regexes))


#: Jest options whose values name files that run inside the test process or shape its report.
FILE_KEYS: Final[tuple[str, ...]] = (
    "setupFiles", "setupFilesAfterEnv", "globalSetup", "globalTeardown", "testEnvironment", "snapshotResolver",
    "testResultsProcessor", "testRunner", "runner", "resolver", "testSequencer", "reporters", "transform",
    "moduleNameMapper", "watchPlugins", "dependencyExtractor", "preset",
)  # fmt: skip
_JS_VALUE: Final = r"""\s*:\s*(\[[^\]]*\]|\{[^}]*\}|(['"`])(?:\\.|(?!\2).)*\2)"""


def _named_files(files: Mapping[str, bytes]) -> set[str]:
    """Repository files the jest configuration names under :data:`FILE_KEYS` (``<rootDir>/x`` or ``./x``),
    normalised, extension kept as written (see :func:`_names_file`). ``roots`` and other folder options are
    not file names and are left out."""
    values = [v for key in FILE_KEYS for v in jest_option(files, key)]
    return {posixpath.normpath(v.replace("<rootDir>/", "")) for v in values
            if v.startswith(("<rootDir>/", "./")) and "*" not in v}  # fmt: skip


def jest_option(files: Mapping[str, bytes], key: str) -> list[str]:
    """The string values of jest option ``key`` in the configuration ``files`` hold (JSON sections and
    pointer files first, then the string literals of ``key: ...`` in ``jest.config.*``), in that order."""
    values = [s for c in _json_configs(files) for s in strings_in(c.get(key))]
    for text in _js_config_texts(files):
        for value in re.finditer(r"\b" + re.escape(key) + _JS_VALUE, text):
            values += [m.group(2) for m in _STRING_LITERAL.finditer(value.group(1))]
    return values


def _names_file(named: set[str], path: str) -> bool:
    """Whether ``path`` is one of ``named``, resolved as node does (added extension, ``/index``)."""
    return any(path in (n + ext, f"{n}/index{ext}") for n in named for ext in _RESOLVE_EXT)


def _scripts_used(command: str) -> set[str]:
    """package.json scripts a command runs, with their pre/post hooks: ``npm test``, ``npm run x``,
    ``yarn x`` (``yarn jest`` runs a ``jest`` script before the binary), ``pnpm x``."""
    used: set[str] = set()
    for m in re.finditer(r"\b(npm|yarn|pnpm)\s+(?:run(?:-script)?\s+)?([\w:.-]+)", command):
        name = {"t": "test", "tst": "test"}.get(m.group(2), m.group(2))
        if name not in ("install", "ci", "exec", "dlx", "add", "x"):
            used |= {name, "pre" + name, "post" + name}
    return used


def _package_findings(before: Any, after: Any, plan_command: str) -> list[str]:
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    findings = [f"changed the {key!r} value of package.json" for key in ("jest", "babel", "packageManager")
                if before.get(key) != after.get(key)]  # fmt: skip
    findings += [f"changed the {key!r} value of package.json (the package's module identity: the runner's resolver "
                 "can be made to load the repository's own files under a runner package's name)"
                 for key in MODULE_IDENTITY_KEYS if before.get(key) != after.get(key)]  # fmt: skip
    scripts_b, scripts_a = before.get("scripts") or {}, after.get("scripts") or {}
    for name in sorted(_scripts_used(plan_command)):
        if isinstance(scripts_b, dict) and isinstance(scripts_a, dict) and scripts_b.get(name) != scripts_a.get(name):
            findings.append(f"changed the package.json script {name!r} the test command runs")
    for key in ("resolutions", "overrides"):
        old, new = before.get(key) or {}, after.get(key) or {}
        if isinstance(old, dict) and isinstance(new, dict):
            changed = {k for k in set(old) | set(new) if old.get(k) != new.get(k)}
            for name in sorted(
                k for k in changed if _RUNNER_PACKAGE.match(k.rsplit("/", 1)[-1] if k.startswith("**") else k)
            ):
                findings.append(f"changed package.json {key} of test-runner package {name!r}")
    return findings


def _nested_identity(change: FileChange) -> list[str]:
    """Module identity keys (:data:`MODULE_IDENTITY_KEYS`) anywhere on the ``+`` / ``-`` lines of a nested
    package.json, JSON's ``\\uXXXX`` escapes decoded first (``"n\\u0061me"`` is ``name`` to node); read lexically:
    a nested package's identity is as much runner configuration as the root's. A key of that spelling inside
    another value (``"author": {"name": ...}``) counts too: such an edit is restored to base with the rest."""
    lines = (
        _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), line)
        for line in (*change.added_lines, *change.removed_lines)
    )
    keys = sorted({m.group(1) for line in lines for m in _IDENTITY_KEY.finditer(line)})
    return [f"changed the module identity of {change.path} ({', '.join(keys)})"] if keys else []


def plan_react_native(
    repo_dir: Path,
    test_files: Sequence[str],
    *,
    test_command: str | None = None,
    test_targets: Sequence[str] = (),
) -> TestPlan:
    """Plan from a checkout (reads :data:`PLANNING_FILES`); see :meth:`ReactNative.plan`."""
    files = {n: (repo_dir / n).read_bytes() for n in PLANNING_FILES if (repo_dir / n).is_file()}
    return REACT_NATIVE.plan(files, test_files, test_command=test_command, test_targets=test_targets)


def output_file_of(command: str) -> str | None:
    """The ``--outputFile`` of a jest command line (``--outputFile=x`` or ``--outputFile x``), or None."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for i, word in enumerate(words):
        if word.startswith("--outputFile="):
            return word.split("=", 1)[1]
        if word == "--outputFile" and i + 1 < len(words):
            return words[i + 1]
    return None


@final
class ReactNative:
    """The ``react-native`` framework (jest); see the module docstring."""

    name = "react-native"
    parser = "jest"
    markers: tuple[str, ...] = ("react_native",)
    planning_files: tuple[str, ...] = (*PLANNING_FILES, *JEST_CONFIG_NAMES)
    #: of :attr:`planning_files`, those :meth:`plan` reads the presence of, never the bytes (optional member)
    presence_files: tuple[str, ...] = PRESENCE_FILES
    #: globs of the files :meth:`infer_recipe` reads (optional member: the miner exports only these)
    recipe_files: tuple[str, ...] = RECIPE_FILES

    def snapshot_owner(self, path: str, files: Mapping[str, bytes] | None = None) -> str | None:
        """:func:`snapshot_owner` (optional member: the test file that reads a changed snapshot)."""
        return snapshot_owner(path, files)

    def config_paths(self, files: Mapping[str, bytes]) -> tuple[str, ...]:
        """package.json, jest.config.*, babel configuration, ``tsconfig.json`` / ``jsconfig.json`` (module
        resolution), and the file a ``"jest"`` pointer names."""
        pointer = _pointer(files)
        base = (
            "package.json",
            *JEST_CONFIG_NAMES,
            "babel.config.js",
            "babel.config.json",
            ".babelrc",
            *_RESOLUTION_FILES,
        )
        return (*base, pointer) if pointer else base

    def test_rule(self, files: Mapping[str, bytes]) -> Callable[[str], bool]:
        """Jest's discovery rule under ``files``' configuration, plus ``__snapshots__/*.snap`` (test data)."""
        config = dict(files)

        def rule(path: str) -> bool:
            parts = path_parts(path)
            snapshot = len(parts) >= 2 and parts[-2] == "__snapshots__" and path.endswith(".snap")
            return "node_modules" not in parts and (snapshot or is_jest_test_file(path, config))

        return rule

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
        """Plan the jest run for the test patch's test files.

        ``test_targets`` replace the files (used as given); ``test_command`` replaces the command: its
        results are ``test_results`` when given, else its own ``--outputFile``, else :data:`RESULT_FILE`.

        A changed snapshot (``__snapshots__/X.test.tsx.snap``) runs the test file that reads it
        (:func:`snapshot_owner`), so a test patch changing only snapshots plans that test.

        Raises:
            PlanError: no jest test file among the files (nor a snapshot's test file).
        """
        if test_command:
            results = tuple(test_results) or (output_file_of(test_command) or RESULT_FILE,)
            return TestPlan(test_command, results, self.parser)
        owners = {snapshot_owner(f, files) for f in test_files}  # a changed snapshot runs the test reading it
        entry = sorted({f for f in [*test_files, *owners] if f is not None and is_jest_test_file(f, files)})
        chosen = list(test_targets) or entry
        if not chosen:
            raise PlanError(
                "no jest test file (testMatch / testRegex, or *.test.*, *.spec.*, __tests__/) among "
                f"{list(test_files)!r}"
            )
        runner = JEST_RUNNERS[environment.package_manager or package_manager_of(files)]
        command = (
            f"mkdir -p .mobilebench && {runner} --ci --json --outputFile={RESULT_FILE} --testLocationInResults "
            f"--runTestsByPath {' '.join(shlex.quote(f) for f in chosen)}"
        )
        return TestPlan(command, (RESULT_FILE,), self.parser)

    def production_built(self, output: str, plan: TestPlan) -> bool:
        """Jest has no separate build: a suite that cannot load shows as that suite's failure."""
        del output, plan
        return True

    def runner_config(
        self, change: FileChange, before: Mapping[str, bytes], after: Mapping[str, bytes], plan_command: str
    ) -> list[str]:
        """See the module docstring; ``before`` / ``after`` hold :meth:`config_paths` at base and after."""
        findings: list[str] = []
        named = _named_files(before) | _named_files(after)
        pointers = {p for p in (_pointer(before), _pointer(after)) if p}
        for path in change.paths:
            base = PurePosixPath(path).name
            if base in JEST_CONFIG_NAMES or path in pointers:
                findings.append(f"changed jest configuration file {path}")
            elif _names_file(named, path):
                findings.append(f"changed {path}, a file the jest configuration names")
            elif _BABEL.match(base):
                findings.append(f"changed babel configuration {path}")
            elif "__mocks__" in path_parts(path)[:-1]:  # jest uses <root>/**/__mocks__/<pkg>.js for npm packages
                findings.append(f"changed the mock {path} (a __mocks__ folder replaces modules for every test)")
            elif base in _RESOLUTION_FILES and _resolution(before.get(path)) != _resolution(after.get(path)):
                findings.append(f"changed the module resolution of {path} (compilerOptions paths / baseUrl / rootDirs)")
            if path == "package.json":
                findings += _package_findings(json_of(before.get(path)), json_of(after.get(path)), plan_command)
            if base == "package.json":
                names = [m.group(1) for line in change.added_lines for m in _NAME_LINE.finditer(line)]
                findings += [f"{path} names its package {n!r}, shadowing a test-runner package" for n in names
                             if _RUNNER_PACKAGE.match(n) and path != "package.json"]  # fmt: skip
                if path != "package.json":
                    findings += _nested_identity(change)
        return findings

    def tool_path(self, path: str) -> str | None:
        """Installed dependencies, outputs, package-manager configuration, hooks and runtimes, and the
        Gradle entry point of the ``android/`` folder
        (:func:`~pytest_mobilebench.frameworks.rules.gradle_entry_point`)."""
        parts = path_parts(path)
        tool = tool_dir_of(path, (".yarn",))
        if tool:
            return f"{path} is inside {tool}/ (installed dependencies, build outputs or tool caches)"
        if parts[-1] in _TOOL_NAMES:
            return f"{path} configures or hooks the package manager that starts the test runner"
        return gradle_entry_point(path)

    def infer_recipe(self, repo_dir: Path, overrides: Mapping[str, Any]) -> EnvRecipe:
        """:func:`pytest_mobilebench.frameworks.react_native.recipe.infer_node_recipe` (``overrides``:
        :func:`~pytest_mobilebench.runtime.environment.recipe_overrides`)."""
        from pytest_mobilebench.frameworks.react_native.recipe import infer_node_recipe

        return infer_node_recipe(repo_dir, overrides=overrides)


REACT_NATIVE = ReactNative()
