"""The README's "Options" table lists every option the plugin declares (its own, every suite's, every runtime
provider's), so a user finds each flag in one table; a new option without a row fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _options_table() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Options\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def test_every_declared_option_has_a_row_in_the_readme(pytestconfig: pytest.Config) -> None:
    group = pytestconfig._parser.getgroup("mobilebench")  # noqa: SLF001 - pytest keeps declared options here
    declared = {name for option in group.options for name in option.names() if name.startswith("--")}
    assert len(declared) > 40  # the plugin's, the suites' and the runtime providers' options were all declared
    listed = set(re.findall(r"`(--[a-z][a-z0-9-]*)", _options_table()))
    assert sorted(declared - listed) == [], "options missing from the README's Options table"
