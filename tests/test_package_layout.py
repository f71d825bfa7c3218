"""The package's layering and file sizes (issue 16): ``runtime/`` imports nothing above it, no module over
700 lines. Both read the source with :mod:`ast` / line counts, nothing is imported or run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_mobilebench"
#: the layers ``runtime/`` may not reach: framework knowledge and the suites are its callers
_ABOVE_RUNTIME = ("pytest_mobilebench.frameworks", "pytest_mobilebench.suites")
MAX_LINES = 700


def _imported(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``tree`` of the module called ``module``,
    relative imports resolved against it, imports inside functions and ``TYPE_CHECKING`` blocks included."""
    package = module.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            found.append((node.lineno, base))
    return found


def _offences(path: Path) -> list[str]:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
    if rel.name == "__init__":
        module += ".__init__"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{path.relative_to(PACKAGE)}:{line}: imports {name}" for line, name in _imported(tree, module)
            if any(name == top or name.startswith(top + ".") for top in _ABOVE_RUNTIME)]


def test_runtime_imports_no_framework_and_no_suite() -> None:
    modules = sorted((PACKAGE / "runtime").rglob("*.py"))
    assert modules, "no runtime modules found"
    assert [o for path in modules for o in _offences(path)] == []


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from pytest_mobilebench import frameworks\n", True),
        ("def f():\n    from pytest_mobilebench.suites.issue_resolution import x\n", True),
        ("import pytest_mobilebench.frameworks.android as a\n", True),
        ("from ..frameworks.recipe import EnvRecipe\n", True),
        ("from ..suites import get\n", True),
        ("from .recipe import EnvRecipeLike\nfrom pytest_mobilebench.states import InfraKind\n", False),
        ("from pytest_mobilebench import states\n", False),
    ],
)
def test_the_layering_check_sees_every_spelling(tmp_path: Path, source: str, caught: bool) -> None:
    tree = ast.parse(source)
    names = [name for _, name in _imported(tree, "pytest_mobilebench.runtime.docker")]
    hit = any(n == top or n.startswith(top + ".") for n in names for top in _ABOVE_RUNTIME)
    assert hit is caught, (source, names)
