"""Every third-party module the package or the tests import is declared in ``pyproject.toml``.

A fresh virtual environment gets only what ``pip install -e '.[dev]'`` declares (``.ci/run`` builds one), so
a module a test imports but no extra declares fails CI at collection. This test finds that before CI does:
it walks every ``import`` / ``from ... import`` (and ``pytest.importorskip`` / ``importlib.import_module``
calls with a literal name) of the package, the tests and the root ``conftest.py`` with :mod:`ast`, drops the
standard library and the repository's own modules, maps module names to distribution names (PEP 503
normalised, plus the table :data:`ALIASES` for the few that differ), and compares with the declared
``dependencies`` and extras.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # declared for 3.10 in the dev extra
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

#: import name -> distribution name, where PEP 503 normalisation of the import name does not give it
ALIASES = {"PIL": "Pillow", "yaml": "PyYAML", "_pytest": "pytest", "xdist": "pytest-xdist"}
_LOADERS = {"importorskip", "import_module"}


def normalise(name: str) -> str:
    """PEP 503: lower case, runs of ``-``, ``_`` and ``.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """``"pytest>=8.3,!=9.2.0"`` / ``"tomli; python_version < '3.11'"`` -> ``"pytest"`` / ``"tomli"``."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"pyproject.toml: unreadable requirement {requirement!r}"
    return normalise(match.group(1))


def imports(path: Path) -> Iterator[tuple[str, int]]:
    """Top-level module names ``path`` imports (absolute imports only), with their line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node.lineno
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _LOADERS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and not node.args[0].value.startswith(".")
        ):
            yield node.args[0].value.split(".")[0], node.lineno


def local_modules() -> set[str]:
    """Modules of this repository: the package, and what ``tests/`` puts on ``sys.path`` (files and packages)."""
    names = {"pytest_mobilebench", "conftest"}
    for entry in (ROOT / "tests").iterdir():
        if entry.suffix == ".py":
            names.add(entry.stem)
        elif (entry / "__init__.py").is_file():
            names.add(entry.name)
    return names


def third_party(paths: list[Path]) -> dict[str, list[str]]:
    """Distribution name -> ``"file:line"`` places that import it."""
    local = local_modules()
    found: dict[str, list[str]] = {}
    for path in paths:
        for module, line in imports(path):
            if module in sys.stdlib_module_names or module in local:
                continue
            found.setdefault(normalise(ALIASES.get(module, module)), []).append(f"{path.relative_to(ROOT)}:{line}")
    return found


def declared() -> tuple[set[str], dict[str, set[str]]]:
    """``(dependencies, {extra: requirements})`` as normalised distribution names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {requirement_name(r) for r in project.get("dependencies", [])}
    extras = {
        name: {requirement_name(r) for r in reqs} for name, reqs in project.get("optional-dependencies", {}).items()
    }
    return base, extras


def package_files() -> list[Path]:
    return sorted((ROOT / "pytest_mobilebench").rglob("*.py"))


def files_of_tests() -> list[Path]:
    return sorted((ROOT / "tests").rglob("*.py")) + [ROOT / "conftest.py"]


def test_the_dev_extra_declares_everything_the_package_and_the_tests_import() -> None:
    """``pip install -e '.[dev]'`` then ``pytest tests`` (the README's command) must find every import."""
    base, extras = declared()
    used = third_party(package_files() + files_of_tests())
    missing = {dist: places[:3] for dist, places in used.items() if dist not in base | extras["dev"]}
    assert not missing, f"imported but not in pyproject's dependencies or the dev extra: {missing}"


def test_every_package_import_is_installable_without_dev() -> None:
    """A user installs the package with the extras of the suites they run, never ``dev``."""
    base, extras = declared()
    user = set().union(base, *(reqs for name, reqs in extras.items() if name != "dev"))
    missing = {dist: places[:3] for dist, places in third_party(package_files()).items() if dist not in user}
    assert not missing, f"the package imports what only the dev extra (or nothing) declares: {missing}"


def test_the_walk_sees_imports_of_every_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk itself: plain, dotted, ``from``, aliased, ``importorskip``; relative imports and the stdlib
    are not third-party; an undeclared module is reported with its file and line."""
    source = (
        "import os\nimport yaml\nimport PIL.Image\nfrom hypothesis import given\nfrom . import x\n"
        "import tree_sitter_typescript as ts\nimport pytest\nnot_there = pytest.importorskip('nosuchdist_q')\n"
    )
    tree = tmp_path / "tests"
    tree.mkdir()
    path = tree / "sample.py"
    path.write_text(source, encoding="utf-8")
    names = [name for name, _ in imports(path)]
    assert names == ["os", "yaml", "PIL", "hypothesis", "tree_sitter_typescript", "pytest", "nosuchdist_q"]
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = third_party([path])
    assert set(found) == {"pyyaml", "pillow", "hypothesis", "tree-sitter-typescript", "pytest", "nosuchdist-q"}
    assert found["nosuchdist-q"] == ["tests/sample.py:8"]
    assert requirement_name("tomli; python_version < '3.11'") == "tomli"
    assert requirement_name("tree_sitter.Typescript>=0.23") == "tree-sitter-typescript"
