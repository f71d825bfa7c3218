"""The package's floors (issue 32, item 2): every module imports only its own floor and those below, the words all
share on the ground; the one way up is the report reading the suites' declared surfaces and the run's state. Read
from the source (:func:`pytest_mobilebench.cache.imports_of`: imports inside functions and ``TYPE_CHECKING`` blocks
count); the runtime is also imported for real, in a fresh interpreter, and must load no framework and no suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mobilebench.cache import PACKAGE_DIR, imports_of

#: bottom up; a module's floor is that of the longest prefix naming it (``pytest_mobilebench.`` left out)
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "ground: the shared words, pure parsing and statistics",
        (
            "",  # the package's face (its version)
            "states",
            "options",
            "suggest",
            "metrics",
            "artifacts",
            "files",
            "records",
            "plan",
            "patch",
            "parsers",
            "manifest",
            "stats",
            "compare",
            "predictions",
            "run_budget",
            "http_deadlines",
            "integrity",
            "oracle",
            "trust",
            "devices",
        ),
    ),
    ("runtime: workspaces, sandboxes, images", ("runtime",)),
    ("knowledge: frameworks and agents", ("frameworks", "agents")),
    ("report: summary, pages, terminal", ("report",)),
    ("suites: the evaluation protocols", ("suites",)),
    (
        "the run: cache, plugin state, items, plugin and commands",
        (
            "cache",
            "state",
            "hooks",
            "items",
            "mining",
            "export",
            "remote",
            "regrade_run",
            "fixtures",
            "plugin",
            "__main__",
        ),
    ),
)

#: the declared ways up: the report reads the suites' surfaces (headline, registry, result contract) and the
#: plugin's state; nothing else imports a higher floor
REPORT_READERS: dict[str, frozenset[str]] = {
    "report.headline": frozenset({"suites", "suites.base"}),
    "report.summary": frozenset({"suites.base", "state"}),
    "report.controller": frozenset({"state"}),
    "report.html": frozenset({"state"}),
}


def _short(module: str) -> str:
    return module.removeprefix("pytest_mobilebench").removeprefix(".")


def floor_of(module: str) -> int:
    """The floor (0 = ground) of a ``pytest_mobilebench`` module or of a name imported from one.

    Raises:
        KeyError: no floor names it (a new top-level module must be placed in :data:`FLOORS`).
    """
    short = _short(module)
    best: tuple[int, int] | None = None  # (prefix length, floor)
    for floor, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if prefix == "" and short == "" or prefix and (short == prefix or short.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), floor)
    if best is None:
        raise KeyError(f"{module}: on no floor of tests/test_floors.py")
    return best[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def upward_imports(path: Path, module: str) -> list[str]:
    """The imports of ``path`` that reach a higher floor than ``module``'s, beyond the declared report readers."""
    own = floor_of(module)
    allowed = next((names for reader, names in REPORT_READERS.items() if _short(module) == reader), frozenset())
    out = []
    for name in imports_of(path, module):
        try:
            floor = floor_of(name)
        except KeyError:
            continue  # a name imported from the package's face (``from pytest_mobilebench import x``)
        if floor > own and not any(_short(name) == a or _short(name).startswith(a + ".") for a in allowed):
            out.append(_short(name))
    return sorted(out)


def _package_modules() -> list[tuple[Path, str]]:
    return [
        (p, _module_name(p))
        for p in sorted(PACKAGE_DIR.rglob("*.py"))
        if "starter" not in p.relative_to(PACKAGE_DIR).parts
    ]


def test_every_package_module_stands_on_a_floor() -> None:
    modules = _package_modules()
    assert len(modules) > 150
    assert [m for _, m in modules if not _placed(m)] == []


def _placed(module: str) -> bool:
    try:
        floor_of(module)
    except KeyError:
        return False
    return True


def test_no_module_imports_a_higher_floor_but_the_report_readers() -> None:
    offences = {module: upward_imports(path, module) for path, module in _package_modules()}
    assert {m: names for m, names in offences.items() if names} == {}


@pytest.mark.parametrize(
    ("module", "source", "caught"),
    [
        ("pytest_mobilebench.runtime.docker", "from pytest_mobilebench.suites.base import Suite\n", True),
        ("pytest_mobilebench.runtime.docker", "def f():\n    from ..frameworks import get\n", True),
        (
            "pytest_mobilebench.files",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pytest_mobilebench.runtime\n",
            True,
        ),
        ("pytest_mobilebench.report.page", "from pytest_mobilebench.suites.base import Suite\n", True),
        ("pytest_mobilebench.report.headline", "from pytest_mobilebench.suites.base import Suite\n", False),
        ("pytest_mobilebench.suites.planner", "from pytest_mobilebench.report.trials import suite_trials\n", False),
        ("pytest_mobilebench.items", "from pytest_mobilebench.state import STATE\n", False),
        ("pytest_mobilebench.trust", "from pytest_mobilebench.frameworks.recipe import x\n", True),
    ],
)
def test_the_floor_check_sees_every_spelling(tmp_path: Path, module: str, source: str, caught: bool) -> None:
    path = tmp_path / ("__init__.py" if module.endswith("planner") else "m.py")
    path.write_text(source, encoding="utf-8")
    assert bool(upward_imports(path, module)) is caught


LOADED = """
import importlib, json, pkgutil, sys
import pytest_mobilebench.runtime as runtime
for info in pkgutil.walk_packages(runtime.__path__, "pytest_mobilebench.runtime."):
    importlib.import_module(info.name)
print(json.dumps(sorted(m for m in sys.modules if m.startswith("pytest_mobilebench"))))
"""


def test_importing_the_runtime_loads_no_framework_and_no_suite() -> None:
    """Every module of ``runtime/`` imported in a fresh interpreter: what it loads, transitively, is below it."""
    out = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, check=True, timeout=120)
    loaded = json.loads(out.stdout)
    assert "pytest_mobilebench.runtime.docker" in loaded and "pytest_mobilebench.trust" in loaded
    above = [m for m in loaded if m.startswith(("pytest_mobilebench.frameworks", "pytest_mobilebench.suites"))]
    assert above == []
