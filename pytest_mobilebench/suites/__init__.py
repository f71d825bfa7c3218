"""The evaluation protocols, registered by name.

Built-in suites are imported lazily so that a missing optional dependency of one suite (Playwright for
``app_generation``) never breaks another.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BUILTIN_SUITES", "builtin_registry"]

#: suite name -> module that exposes ``SUITE``
BUILTIN_SUITES: dict[str, str] = {
    "issue_resolution": "pytest_mobilebench.suites.issue_resolution",
    "app_generation": "pytest_mobilebench.suites.app_generation",
}


class _LazySuite:
    """Imports the suite's module on first use; an import failure surfaces per item, not at start-up."""

    def __init__(self, name: str, module: str) -> None:
        self.name = name
        self._module = module
        self._suite: Any = None

    def _load(self) -> Any:
        if self._suite is None:
            self._suite = importlib.import_module(self._module).SUITE
        return self._suite

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)


def builtin_registry() -> dict[str, Any]:
    """A fresh ``{name: suite}`` mapping of the built-in suites."""
    return {name: _LazySuite(name, module) for name, module in BUILTIN_SUITES.items()}
