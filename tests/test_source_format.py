"""The size rule a formatter keeps (issue 32): the tree is what ``ruff format`` writes at 120 columns, no line is
longer than 120 characters, and no package file exceeds 700 lines *as the formatter writes it* (a file squeezed
by hand into wide lines is counted after the formatter has wrapped it again). Also: every test that starts a
whole pytest (or the package's command line) in a subprocess carries the ``e2e`` marker, so the fast lane
(``-m "not docker and not chromium and not e2e"``) leaves it out. The formatter is the venv's ruff
(``sys.executable -m ruff``, declared in the ``dev`` extra) with the settings of ``pyproject.toml``."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "pytest_mobilebench"
#: every Python source the rule covers: the package, its tests, the benchmarks and the fixture builders
SOURCES = ("pytest_mobilebench", "tests", "benchmarks", "fixtures")
MAX_LINES = 700
CONFIG = ROOT / "pyproject.toml"


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--config", str(CONFIG)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_the_tree_is_as_ruff_format_writes_it() -> None:
    done = _ruff("format", "--check", *SOURCES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_line_is_longer_than_120_characters() -> None:
    done = _ruff("check", "--select", "E501", "--output-format", "concise", *SOURCES)
    assert done.returncode == 0, done.stdout + done.stderr


def formatted_sizes(package: Path, scratch: Path) -> dict[str, int]:
    """``{path relative to package: line count}`` of every ``.py`` file of ``package`` after ``ruff format`` has
    rewritten a copy of it in ``scratch`` (the package itself is not touched)."""
    copy = scratch / package.name
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    done = _ruff("format", str(copy))
    assert done.returncode == 0, done.stdout + done.stderr
    return {p.relative_to(copy).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in copy.rglob("*.py")}


def test_no_package_file_exceeds_700_lines_as_formatted(tmp_path: Path) -> None:
    sizes = formatted_sizes(PACKAGE_DIR, tmp_path)
    assert len(sizes) > 50
    assert {rel: n for rel, n in sizes.items() if n > MAX_LINES} == {}


def test_the_size_count_sees_lines_squeezed_by_width(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    call = "f(" + ", ".join(f"argument_{i}" for i in range(40)) + ")\n"
    (package / "wide.py").write_text(call, encoding="utf-8")
    assert formatted_sizes(package, tmp_path / "scratch") == {"wide.py": 42}


# -- the e2e marker ---------------------------------------------------------------------------------------------


def _is_command(node: ast.AST) -> bool:
    """Whether ``node`` is a command list naming pytest or the package: ``["pytest", ...]`` or
    ``[..., "-m", "pytest" | "pytest_mobilebench", ...]``."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return False
    words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
    if words[:1] == ["pytest"]:
        return True
    return any(a == "-m" and b in ("pytest", "pytest_mobilebench") for a, b in zip(words, words[1:]))


def _spawns_pytest(node: ast.AST) -> bool:
    """Whether ``node`` starts a whole pytest or the package's command line in a subprocess: pytester's
    ``runpytest_subprocess``, or a command list (see :func:`_is_command`) passed to a call or bound to a name."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == "runpytest_subprocess":
            return True
        if isinstance(sub, ast.Call) and any(_is_command(a) for a in sub.args):
            return True
        if isinstance(sub, (ast.Assign, ast.AnnAssign)) and _is_command(sub.value):
            return True
    return False


def _marks(decorators: list[ast.expr]) -> set[str]:
    """Names of the ``pytest.mark.X`` marks among ``decorators`` (a list or a bare mark; a call like
    ``pytest.mark.skipif(...)`` counts as ``skipif``)."""
    out = set()
    for dec in decorators:
        for sub in ast.walk(dec):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute) and sub.value.attr == "mark":
                out.add(sub.attr)
    return out


def _module_marks(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return _marks([node.value])
    return set()


def _functions(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef, set[str]]]:
    """``{name: (def, marks of its class)}`` of the module's functions and methods."""
    out: dict[str, tuple[ast.FunctionDef, set[str]]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = (node, set())
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[sub.name] = (sub, _marks(node.decorator_list))
    return out


def _spawning(functions: dict[str, tuple[ast.FunctionDef, set[str]]], seeds: set[str]) -> set[str]:
    """Names of ``functions`` that start pytest in a subprocess, directly or by calling (or, as a test or
    fixture, requesting) one that does; ``seeds`` are names known to spawn already (imported helpers)."""
    spawning = set(seeds) | {name for name, (fn, _) in functions.items() if _spawns_pytest(fn)}
    grown = True
    while grown:
        grown = False
        for name, (fn, _) in functions.items():
            if name in spawning:
                continue
            called = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
            called |= {a.arg for a in fn.args.args}
            if called & spawning:
                spawning.add(name)
                grown = True
    return spawning


def helper_spawners(sources: dict[str, str]) -> dict[str, set[str]]:
    """``{helper module: its functions that start pytest in a subprocess}`` of the tests' helper modules
    (``sources``: module name -> source)."""
    return {module: _spawning(_functions(ast.parse(text)), set()) for module, text in sources.items()}


def _imported_spawners(tree: ast.Module, helpers: dict[str, set[str]]) -> set[str]:
    """Local names bound by ``from <helper> import name [as alias]`` to a helper function that spawns."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in helpers:
            out |= {a.asname or a.name for a in node.names if a.name in helpers[node.module]}
    return out


def unmarked_spawners(source: str, helpers: dict[str, set[str]] | None = None) -> list[str]:
    """Names of the tests in ``source`` that start pytest in a subprocess (directly, through a helper of the
    module or of ``helpers``, or through a fixture of the module they request) and carry no ``e2e`` mark
    (theirs, their class's, or the module's ``pytestmark``)."""
    tree = ast.parse(source)
    if "e2e" in _module_marks(tree):
        return []
    functions = _functions(tree)
    spawning = _spawning(functions, _imported_spawners(tree, helpers or {}))
    return sorted(
        name
        for name, (fn, class_marks) in functions.items()
        if name.startswith("test") and name in spawning and "e2e" not in _marks(fn.decorator_list) | class_marks
    )


def test_every_test_that_starts_pytest_in_a_subprocess_is_marked_e2e() -> None:
    tests = ROOT / "tests"
    helpers = helper_spawners(
        {p.stem: p.read_text(encoding="utf-8") for p in tests.glob("*.py") if not p.name.startswith("test_")}
    )
    assert "grade" in helpers["counter_attacks"]  # the trust tests' whole run of cases/examples
    offences = {}
    for path in sorted(tests.glob("test_*.py")):
        names = unmarked_spawners(path.read_text(encoding="utf-8"), helpers)
        if names:
            offences[path.name] = names
    assert offences == {}


CASES = {
    "pytester": ("def test_a(pytester):\n    pytester.runpytest_subprocess('-q')\n", ["test_a"]),
    "marked": ("@pytest.mark.e2e\ndef test_a(pytester):\n    pytester.runpytest_subprocess()\n", []),
    "module": (
        "pytestmark = [pytest.mark.docker, pytest.mark.e2e]\ndef test_a(p):\n    p.runpytest_subprocess()\n",
        [],
    ),
    "helper": ("def _run():\n    run([sys.executable, '-m', 'pytest', 'x'])\ndef test_b():\n    _run()\n", ["test_b"]),
    "fixture": (
        "def run():\n    run(['pytest'])\n@pytest.fixture\ndef done():\n    run()\ndef test_c(done): ...\n",
        ["test_c"],
    ),
    "cli": ("def test_d():\n    run([sys.executable, '-m', 'pytest_mobilebench', 'compare'])\n", ["test_d"]),
    "class": ("class TestE:\n    def test_e(self, pytester):\n        pytester.runpytest_subprocess()\n", ["test_e"]),
    "class marked": (
        "@pytest.mark.e2e\nclass TestE:\n    def test_e(self, p):\n        p.runpytest_subprocess()\n",
        [],
    ),
    "data": (
        "def test_g():\n    assert names == ['os', 'pytest']\n    assert parts == ['pytest_mobilebench', 'x']\n",
        [],
    ),
    "bound": ("def test_h():\n    cmd = ['pytest', '-q']\n    run(cmd)\n", ["test_h"]),
    "in process": ("def test_f(pytester):\n    pytester.runpytest('-q')\n    assert 'pytest' in 'pytest here'\n", []),
}


@pytest.mark.parametrize(("source", "unmarked"), list(CASES.values()), ids=list(CASES))
def test_the_e2e_check_sees_every_spelling(source: str, unmarked: list[str]) -> None:
    assert unmarked_spawners(source) == unmarked


def test_the_e2e_check_follows_a_helper_module_of_the_tests() -> None:
    helpers = helper_spawners({"runs": "def grade(tmp):\n    return run([sys.executable, '-m', 'pytest'])\n"})
    using = "from runs import grade as g\ndef test_a(tmp_path):\n    g(tmp_path)\n"
    assert unmarked_spawners(using, helpers) == ["test_a"]
    assert unmarked_spawners("from runs import other\ndef test_a():\n    other()\n", helpers) == []
