"""The package's layering (issue 16): ``runtime/`` imports nothing above it, no suite imports another. Both
read the source (:func:`pytest_mobilebench.cache.imports_of` parses it with :mod:`ast`:
imports inside functions and ``TYPE_CHECKING`` blocks count, relative ones are resolved); nothing is run."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mobilebench.cache import PACKAGE_DIR, imports_of

#: the layers ``runtime/`` may not reach: framework knowledge and the suites are its callers
ABOVE_RUNTIME = ("pytest_mobilebench.frameworks", "pytest_mobilebench.suites")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def _above(path: Path, module: str) -> list[str]:
    return sorted(
        n for n in imports_of(path, module) if any(n == top or n.startswith(top + ".") for top in ABOVE_RUNTIME)
    )


def test_runtime_imports_no_framework_and_no_suite() -> None:
    modules = sorted((PACKAGE_DIR / "runtime").rglob("*.py"))
    assert len(modules) > 10
    offences = {p.relative_to(PACKAGE_DIR).as_posix(): _above(p, _module_name(p)) for p in modules}
    assert {rel: names for rel, names in offences.items() if names} == {}


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from pytest_mobilebench import frameworks\n", True),
        ("def f():\n    from pytest_mobilebench.suites.issue_resolution import x\n", True),
        ("import pytest_mobilebench.frameworks.android as a\n", True),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..frameworks.recipe import EnvRecipe\n", True),
        ("from ..suites import get\n", True),
        ("from .recipe import EnvRecipeLike\nfrom pytest_mobilebench.states import InfraKind\n", False),
        ("from pytest_mobilebench import states\n", False),
    ],
)
def test_the_layering_check_sees_every_spelling(tmp_path: Path, source: str, caught: bool) -> None:
    path = tmp_path / "docker.py"
    path.write_text(source, encoding="utf-8")
    assert bool(_above(path, "pytest_mobilebench.runtime.docker")) is caught


def _other_suites(path: Path, module: str, own: str) -> list[str]:
    """Imports of ``path`` that reach a suite implementation other than ``own`` (the declared surfaces in
    ``suites/declared/`` and the shared ``suites.base`` are everyone's)."""
    out = []
    for name in imports_of(path, module):
        parts = name.split(".")
        if (
            len(parts) >= 3
            and parts[:2] == ["pytest_mobilebench", "suites"]
            and parts[2] not in (own, "base", "declared")
        ):
            out.append(name)
    return sorted(out)


def test_no_suite_imports_another_suite() -> None:
    """A suite's implementation reaches another's only through shared layers (``agents/``, ``report/``,
    ``runtime/``): what two suites share lives in one place outside both."""
    suites = [
        p
        for p in (PACKAGE_DIR / "suites").iterdir()
        if p.is_dir() and (p / "__init__.py").is_file() and p.name not in ("declared", "__pycache__")
    ]
    assert len(suites) >= 4
    offences = {}
    for suite in suites:
        for path in sorted(suite.rglob("*.py")):
            names = _other_suites(path, _module_name(path), suite.name)
            if names:
                offences[path.relative_to(PACKAGE_DIR).as_posix()] = names
    assert offences == {}
