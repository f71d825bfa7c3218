"""The evaluation protocols, registered by name.

A suite is one folder ``pytest_mobilebench/suites/<name>/`` whose ``SUITE`` implements
:class:`pytest_mobilebench.suites.base.Suite`. The plugin builds one :class:`SuiteRegistry` per pytest run,
when options are declared: the built-in suites first, then every suite that a plugin or ``conftest.py`` adds
through the ``pytest_mobilebench_register_suites`` hook. Each suite is checked against the protocol as it is
added, and its options are added to the command line at that moment.

A built-in suite is registered by its surface (:class:`pytest_mobilebench.suites.base.SuiteSurface`, from
``suites/declared/``) as a :class:`LazySuite`: its implementation (Docker, Playwright, adbutils, pydantic
models, grading) is imported the first time ``registry[name]`` (or ``get``, ``values``, ``items``) asks for
it, i.e. when an item of that suite is collected or run; :meth:`SuiteRegistry.declared` gives every suite's
surface without importing anything. A built-in suite whose optional dependencies are missing becomes an
:class:`UnavailableSuite` then: its manifests become error items that name the missing package; the other
suites run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, final

from pytest_mobilebench.agents.options import AGENT_OPTIONS
from pytest_mobilebench.suites.base import (
    GENERIC_HEADLINE,
    Column,
    Headline,
    Option,
    Suite,
    SuiteContractError,
    SuiteSurface,
    check_suite,
)
from pytest_mobilebench.records import EvalContext, LoadedRecord, ManifestError

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import Prediction

__all__ = [
    "AGENT_OPTIONS",
    "BUILTIN_SUITES",
    "LazySuite",
    "SuiteRegistry",
    "UnavailableSuite",
    "builtin_registry",
    "builtin_surface",
    "headline_of",
]

#: the built-in suites, by name; each one's surface (which names its implementation module) is
#: ``pytest_mobilebench.suites.declared.<name>``
BUILTIN_SUITES: tuple[str, ...] = ("issue_resolution", "app_generation", "planner", "device_repair")


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

    def summarize(
        self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return {"error": self.error}

    def cache_material(self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]) -> None:
        return None

    def finish_run(self, options: Mapping[str, Any], run_id: str, results: Sequence[Mapping[str, Any]]) -> None:
        return None

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        raise RuntimeError(self.error)

    def live_model(self, options: Mapping[str, Any]) -> str | None:
        raise ValueError(self.error)


@final
class LazySuite:
    """A suite known by its surface until :meth:`load` imports the implementation (once).

    ``name``, ``options``, ``markers``, ``columns``, ``fixtures``, ``fixture_module`` and ``headline`` are the
    surface's.

    Raises (from :meth:`load`):
        SuiteContractError: the implementation does not implement :class:`Suite`, or declares other options,
            columns, fixtures or fixture module than its surface, or lacks one of the surface's markers.
    """

    def __init__(self, surface: SuiteSurface) -> None:
        self.surface = surface
        self._suite: Suite | None = None

    name = property(lambda self: self.surface.name)
    options = property(lambda self: self.surface.options)
    markers = property(lambda self: self.surface.markers)
    columns = property(lambda self: self.surface.columns)
    fixtures = property(lambda self: self.surface.fixtures)
    fixture_module = property(lambda self: self.surface.fixture_module)
    headline = property(lambda self: self.surface.headline)
    #: the module drawing the suite's own run-page figures (the surface's ``plots`` entry), or None
    plots_module = property(lambda self: self.surface.plots)

    @property
    def loaded(self) -> bool:
        """Whether the implementation was imported."""
        return self._suite is not None

    def reads_dataset(self, path: Path) -> bool:
        """Whether ``path``'s name matches one of the surface's ``datasets`` patterns."""
        return any(path.match(pattern) for pattern in self.surface.datasets)

    def load(self) -> Suite:
        """The implementation, imported on first call; an :class:`UnavailableSuite` when an import fails."""
        if self._suite is None:
            suite = _import_suite(self.surface.name, self.surface.module)
            if not isinstance(suite, UnavailableSuite):
                check_suite(suite, self.surface.name)
                _check_surface(self.surface, suite)
            self._suite = suite
        return self._suite


def _check_surface(surface: SuiteSurface, suite: Suite) -> None:
    """The implementation declares what its surface said (one fact, two readers)."""
    problems = [
        attr
        for attr in ("options", "columns", "fixtures", "fixture_module")
        if tuple(getattr(suite, attr) or ()) != tuple(getattr(surface, attr) or ())
    ]
    problems += [f"marker {m!r}" for m in surface.markers if m not in suite.markers]
    if problems:
        raise SuiteContractError(f"suite {surface.name!r} differs from its surface in: {', '.join(problems)}")


class SuiteRegistry(dict[str, Suite]):
    """``{name: suite}``; every suite is checked against :class:`Suite` when it is added (a :class:`LazySuite`
    when its implementation is imported).

    Reading a suite (``registry[name]``, ``get``, ``values``, ``items``) imports a lazy one's implementation;
    :meth:`declared` and :meth:`options` never do.
    ``on_add`` (set by the plugin) is called with each added suite, to declare its options and markers.

    Raises:
        SuiteContractError: on ``registry[name] = suite`` when the suite does not implement the protocol.
        ValueError: a second suite under a name already taken, or an option ``dest`` another suite declared.
    """

    def __init__(self, on_add: Callable[[Suite], None] | None = None) -> None:
        super().__init__()
        self.on_add = on_add

    def __setitem__(self, name: str, suite: Suite) -> None:
        if not isinstance(suite, (UnavailableSuite, LazySuite)):
            check_suite(suite, name)
        if name in self and dict.__getitem__(self, name) is not suite:
            raise ValueError(f"a suite named {name!r} is already registered ({dict.__getitem__(self, name)!r})")
        taken = {o.dest: "the live agents" for o in AGENT_OPTIONS}
        taken.update({o.dest: n for n, s in self.declared().items() if n != name for o in s.options})
        clash = [f"{o.dest!r} (declared by {taken[o.dest]!r})" for o in suite.options if o.dest in taken]
        if clash:
            raise ValueError(f"suite {name!r} declares options already declared: {', '.join(clash)}")
        super().__setitem__(name, suite)
        if self.on_add is not None:
            self.on_add(suite)

    def register(self, suite: Suite) -> None:
        """Add ``suite`` under its own name."""
        self[suite.name] = suite

    def __getitem__(self, name: str) -> Suite:
        suite = dict.__getitem__(self, name)
        return suite.load() if isinstance(suite, LazySuite) else suite

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        try:
            return self[name]
        except KeyError:
            return default

    def values(self) -> list[Suite]:  # type: ignore[override]
        """Every suite, lazy ones imported."""
        return [self[name] for name in self]

    def items(self) -> list[tuple[str, Suite]]:  # type: ignore[override]
        """``(name, suite)`` of every suite, lazy ones imported."""
        return [(name, self[name]) for name in self]

    def declared(self) -> dict[str, Suite | LazySuite]:
        """``{name: suite}`` with lazy suites as they are (their surface), nothing imported."""
        return {name: dict.__getitem__(self, name) for name in self}

    def loaded(self, name: str) -> bool:
        """Whether suite ``name``'s implementation is in use (always, for a suite registered as an object)."""
        suite = dict.__getitem__(self, name)
        return not isinstance(suite, LazySuite) or suite.loaded

    def headlines(self) -> dict[str, Headline]:
        """``{name: the suite's declared headline}`` (:func:`headline_of`), nothing imported."""
        return {name: headline_of(suite) for name, suite in self.declared().items()}

    def options(self) -> list[Option]:
        """The live agents' shared options (declared once by the plugin), then every registered suite's own
        (from surfaces: nothing imported)."""
        return [*AGENT_OPTIONS, *(o for s in self.declared().values() for o in s.options)]


def _import_suite(name: str, module: str) -> Suite:
    try:
        return importlib.import_module(module).SUITE  # type: ignore[no-any-return]
    except ImportError as exc:
        return UnavailableSuite(name, exc)  # type: ignore[return-value]


def builtin_surface(name: str) -> SuiteSurface | None:
    """The surface of built-in suite ``name`` (its declaration module alone is imported), None for another name."""
    if name not in BUILTIN_SUITES:
        return None
    return importlib.import_module(f"pytest_mobilebench.suites.declared.{name}").SURFACE  # type: ignore[no-any-return]


def headline_of(suite: Any) -> Headline:
    """A registered suite's declared :class:`~pytest_mobilebench.suites.base.Headline` (a lazy suite's from its
    surface, a suite object's from its ``headline`` attribute), else ``GENERIC_HEADLINE``."""
    own = getattr(suite, "headline", None)
    return own if isinstance(own, Headline) else GENERIC_HEADLINE


def builtin_registry(on_add: Callable[[Suite], None] | None = None) -> SuiteRegistry:
    """A fresh registry holding the built-in suites, each as a :class:`LazySuite` (nothing imported yet)."""
    registry = SuiteRegistry(on_add)
    for name in BUILTIN_SUITES:
        registry[name] = LazySuite(builtin_surface(name))  # type: ignore[arg-type, assignment]
    return registry
