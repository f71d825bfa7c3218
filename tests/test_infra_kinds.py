"""Every infrastructure kind an ``InfraError`` carries is a member of the closed ``states.InfraKind``.

A kind spelled as a string at a raise site could drift from the vocabulary the summary counts; the
constructor refuses any value outside it, and this test refuses a literal string at any raise site.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_mobilebench"


def _raise_sites() -> list[tuple[str, int, ast.expr]]:
    sites = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and node.args
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "InfraError"
            ):
                sites.append((str(path.relative_to(PACKAGE)), node.lineno, node.args[0]))
    return sites


def test_no_infra_error_is_raised_with_a_literal_kind() -> None:
    sites = _raise_sites()
    assert len(sites) > 50  # the scan sees the package's raise sites
    literal = [f"{f}:{line}: {ast.unparse(arg)}" for f, line, arg in sites if isinstance(arg, ast.Constant)]
    assert literal == [], "raise with an InfraKind member:\n" + "\n".join(literal)


def test_every_member_named_at_a_raise_site_exists() -> None:
    named = {
        arg.attr
        for _, _, arg in _raise_sites()
        if isinstance(arg, ast.Attribute) and getattr(arg.value, "id", None) == "InfraKind"
    }
    assert named <= set(InfraKind.__members__), named - set(InfraKind.__members__)


def test_a_kind_outside_the_vocabulary_is_refused_and_members_cross_as_strings() -> None:
    with pytest.raises(ValueError, match="'container_crashed' is not an InfraKind"):
        InfraError("container_crashed", "x")
    error = InfraError(InfraKind.OOM_KILLED, "killed")
    assert error.kind == "oom_killed" and type(error.kind) is str and str(error) == "oom_killed: killed"
    assert InfraError("disk_full", "full").kind == InfraKind.DISK_FULL  # a value read back from evidence
