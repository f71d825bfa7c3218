"""The evaluation protocols, registered by name.

A suite is one folder ``pytest_mobilebench/suites/<name>/`` whose ``SUITE`` implements
:class:`pytest_mobilebench.suites.base.Suite`. The plugin builds one :class:`SuiteRegistry` per pytest run,
when options are declared: the built-in suites first, then every suite that a plugin or ``conftest.py`` adds
through the ``pytest_mobilebench_register_suites`` hook. Each suite is checked against the protocol as it is
added, and its options are added to the command line at that moment. A built-in suite whose optional
dependencies are missing is kept as a :class:`UnavailableSuite`: its manifests become error items that name
the missing package; the other suites run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench.agents.options import AGENT_OPTIONS
from pytest_mobilebench.predictions import Prediction
from pytest_mobilebench.suites.base import (
    Column,
    EvalContext,
    LoadedRecord,
    ManifestError,
    Option,
    Suite,
    check_suite,
)

__all__ = ["AGENT_OPTIONS", "BUILTIN_SUITES", "SuiteRegistry", "UnavailableSuite", "builtin_registry"]

#: suite name -> module that exposes ``SUITE``
BUILTIN_SUITES: dict[str, str] = {
    "issue_resolution": "pytest_mobilebench.suites.issue_resolution",
    "app_generation": "pytest_mobilebench.suites.app_generation",
    "planner": "pytest_mobilebench.suites.planner",
    "device_repair": "pytest_mobilebench.suites.device_repair",
}


@final
class UnavailableSuite:
    """Stands for a built-in suite whose module cannot be imported (an optional extra is not installed).

    It declares nothing; loading one of its manifests gives a :class:`ManifestError` naming the import error.
    """

    options: tuple[Option, ...] = ()
    markers: Mapping[str, str] = {}
    columns: tuple[Column, ...] = ()
    fixtures: tuple[str, ...] = ()
    fixture_module: str | None = None

    def __init__(self, name: str, error: BaseException) -> None:
        self.name = name
        self.error = f"suite {name!r} is unavailable: {type(error).__name__}: {error}"

    def load(self, path: Path, document: Any) -> Sequence[LoadedRecord | ManifestError]:
        return [ManifestError(path, self.error + " (install the extra it needs, e.g. pytest-mobilebench[web])")]

    def load_dataset(self, path: Path, options: Mapping[str, Any]) -> None:
        return None

    def evaluate(self, record: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        raise RuntimeError(self.error)

    def summarize(self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {"error": self.error}

    def cache_material(self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]) -> None:
        return None

    def finish_run(self, options: Mapping[str, Any], run_id: str, results: Sequence[Mapping[str, Any]]) -> None:
        return None

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        raise RuntimeError(self.error)

    def live_model(self, options: Mapping[str, Any]) -> str | None:
        raise ValueError(self.error)


class SuiteRegistry(dict[str, Suite]):
    """``{name: suite}``; every suite is checked against :class:`Suite` when it is added.

    ``on_add`` (set by the plugin) is called with each added suite, to declare its options and markers.

    Raises:
        SuiteContractError: on ``registry[name] = suite`` when the suite does not implement the protocol.
        ValueError: a second suite under a name already taken, or an option ``dest`` another suite declared.
    """

    def __init__(self, on_add: Callable[[Suite], None] | None = None) -> None:
        super().__init__()
        self.on_add = on_add

    def __setitem__(self, name: str, suite: Suite) -> None:
        if not isinstance(suite, UnavailableSuite):
            check_suite(suite, name)
        if name in self and self[name] is not suite:
            raise ValueError(f"a suite named {name!r} is already registered ({self[name]!r})")
        taken = {o.dest: "the live agents" for o in AGENT_OPTIONS}
        taken.update({o.dest: n for n, s in self.items() if n != name for o in s.options})
        clash = [f"{o.dest!r} (declared by {taken[o.dest]!r})" for o in suite.options if o.dest in taken]
        if clash:
            raise ValueError(f"suite {name!r} declares options already declared: {', '.join(clash)}")
        super().__setitem__(name, suite)
        if self.on_add is not None:
            self.on_add(suite)

    def register(self, suite: Suite) -> None:
        """Add ``suite`` under its own name."""
        self[suite.name] = suite

    def options(self) -> list[Option]:
        """The live agents' shared options (declared once by the plugin), then every registered suite's own."""
        return [*AGENT_OPTIONS, *(o for s in self.values() for o in s.options)]


def _import_suite(name: str, module: str) -> Suite:
    try:
        return importlib.import_module(module).SUITE  # type: ignore[no-any-return]
    except ImportError as exc:
        return UnavailableSuite(name, exc)  # type: ignore[return-value]


def builtin_registry(on_add: Callable[[Suite], None] | None = None) -> SuiteRegistry:
    """A fresh registry holding the built-in suites."""
    registry = SuiteRegistry(on_add)
    for name, module in BUILTIN_SUITES.items():
        registry[name] = _import_suite(name, module)
    return registry
