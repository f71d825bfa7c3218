"""The plugin's per-process state, kept in ``config.stash[STATE]`` (and each item's result in
``item.stash[RESULT]``). Apart from :mod:`pytest_mobilebench.plugin` so that the fixtures, the html
hooks and the remote-worker hooks read it without importing the plugin that imports them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import Predictions
    from pytest_mobilebench.runtime.provider import ProviderRegistry
    from pytest_mobilebench.suites import SuiteRegistry

__all__ = ["RESULT", "STATE", "MobileBenchState", "options_of"]

T = TypeVar("T")

#: The plugin's own options that reach suites in ``ctx.options`` (suite options are declared by the suites).
_PLUGIN_OPTIONS: tuple[str, ...] = ("mb_reports_dir", "mb_rerun")


@dataclasses.dataclass
class MobileBenchState:
    """Per-process plugin state, kept in ``config.stash[STATE]``."""

    run_id: str
    reports_dir: Path
    summary_path: Path
    predictions: Predictions | None
    suites: SuiteRegistry
    is_controller: bool
    #: the run's runtime providers (:mod:`pytest_mobilebench.runtime.provider`)
    providers: ProviderRegistry | None = None
    #: this process's runtime source (the ``mb_runtime`` fixture's
    #: :class:`~pytest_mobilebench.runtime.provider.RuntimeSource`): the default answer of
    #: ``pytest_mobilebench_make_runtime`` is its registry choice
    runtime_source: Any = None
    seen_ids: dict[str, str] = dataclasses.field(default_factory=dict)
    results: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    manifest_errors: list[str] = dataclasses.field(default_factory=list)
    #: nodeid -> (suite, instance id) of every selected item (the controller's view; see _collected)
    collected: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)
    #: nodeid -> suite of every invalid instance reported
    invalid: dict[str, str] = dataclasses.field(default_factory=dict)
    #: instance ids of the benchmark items ``-k`` / ``-m`` deselected: a prediction for one is not "unmatched"
    deselected: set[str] = dataclasses.field(default_factory=set)
    resources: dict[str, tuple[Any, Callable[[Any], None] | None]] = dataclasses.field(default_factory=dict)
    report_errors: list[str] = dataclasses.field(default_factory=list)  # what could not be written, in words
    #: node ids of the items ``--mb-run-budget`` did not start (the controller's view)
    not_started: list[str] = dataclasses.field(default_factory=list)

    def resource(self, key: str, factory: Callable[[], T], close: Callable[[T], None] | None = None) -> T:
        """A per-process object (browser, docker client), made on first use and closed at session end."""
        if key not in self.resources:
            self.resources[key] = (factory(), close)
        return self.resources[key][0]

    def close_resources(self) -> None:
        """Close every resource made by :meth:`resource`, newest first; errors are swallowed."""
        for obj, close in reversed(list(self.resources.values())):
            if close is not None:
                with contextlib.suppress(Exception):  # teardown must reach every resource
                    close(obj)
        self.resources.clear()


STATE = pytest.StashKey[MobileBenchState]()
RESULT = pytest.StashKey[dict[str, Any]]()


def options_of(config: pytest.Config) -> dict[str, Any]:
    """The plugin's, every suite's and every runtime provider's options as plain builtins (``ctx.options``)."""
    state = config.stash[STATE]
    names = [
        *_PLUGIN_OPTIONS,
        *(o.dest for o in state.suites.options()),
        *(o.dest for o in (state.providers.options() if state.providers is not None else ())),
    ]
    opts = {name: config.getoption(name) for name in names}
    opts["_xdist_worker"] = hasattr(config, "workerinput")
    opts["_rootdir"] = str(config.invocation_params.dir)
    return opts
