"""The issue-resolution suite's markers: its own (:mod:`pytest_mobilebench.suites.declared.issue_resolution`)
and every registered framework's, which need the framework registry and so are declared when the suite's
implementation is imported, not at start-up."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import final

from pytest_mobilebench import frameworks

__all__ = ["FrameworkMarkers"]


@final
class FrameworkMarkers(Mapping[str, str]):
    """The suite's own markers plus, for every registered framework, its name and its ``markers`` (what
    :func:`pytest_mobilebench.suites.issue_resolution.manifest.record_for` puts on an instance), read from the
    registry at each look-up: a framework registered later (a plugin's, a ``conftest.py``'s) gets its
    markers declared without editing this file."""

    def __init__(self, own: Mapping[str, str]) -> None:
        self._own = dict(own)

    def _all(self) -> dict[str, str]:
        markers = dict(self._own)
        for fw in map(frameworks.get, frameworks.names()):
            for marker in (fw.name, *fw.markers):
                markers.setdefault(marker, f"{fw.name} instances")
        return markers

    def __getitem__(self, name: str) -> str:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
