"""What every evaluation protocol (suite) provides to the plugin.

The plugin knows nothing about issue resolution or app generation: it finds manifest files, asks the
suite named in each file to load its records, makes one pytest item per (record, prediction), calls
:meth:`Suite.evaluate` and hands the plain-builtin result to the reports. Suites are registered by name
(:func:`pytest_mobilebench.suites.registry`); other plugins add theirs through the
``pytest_mobilebench_register_suites`` hook.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["EvalContext", "LoadedRecord", "ManifestError", "Suite"]

T = TypeVar("T")


class ManifestError(Exception):
    """A manifest or dataset entry is invalid.

    The message always names the file, the line where known, the instance and the field, e.g.
    ``cases/issue_resolution/a__b.yaml:12: instance 'a__b-3': field 'base_commit': Field required``.
    """

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        instance_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.instance_id = instance_id
        self.field = field
        self.message = message
        where = self.path + (f":{line}" if line else "")
        parts = [where]
        if instance_id:
            parts.append(f"instance {instance_id!r}")
        if field:
            parts.append(f"field {field!r}")
        parts.append(message)
        super().__init__(": ".join(parts))


@dataclasses.dataclass(frozen=True)
class LoadedRecord:
    """One benchmark instance as loaded from a manifest, ready to become a pytest item.

    Attributes:
        suite: the suite name (``"issue_resolution"``, ``"app_generation"`` ...).
        instance_id: unique across the whole run.
        source: the manifest or dataset file it came from.
        line: 1-based line of the record in ``source`` (for messages), when known.
        record: the suite's own typed record (a pydantic model).
        group: the ``xdist_group`` name; one repository's or app's instances share it.
        markers: marker names to attach (framework, difficulty, category, suite ...).
    """

    suite: str
    instance_id: str
    source: Path
    line: int | None
    record: Any
    group: str
    markers: tuple[str, ...] = ()


class EvalContext(Protocol):
    """Services the plugin gives a suite while it evaluates one item.

    Attributes:
        run_id: the run's id (same on every xdist worker).
        evidence_dir: a fresh folder for this item's evidence (patches, commands, logs, parsed results).
        options: the run's ``--mb-*`` options as plain builtins.
    """

    run_id: str
    evidence_dir: Path
    options: Mapping[str, Any]

    def resource(self, key: str, factory: Callable[[], T], close: Callable[[T], None] | None = None) -> T:
        """A per-process shared object (a browser, a docker client), made once and closed at session end."""

    def progress(self, message: str) -> None:
        """Show a progress line for long steps (image builds, installs)."""


@runtime_checkable
class Suite(Protocol):
    """One evaluation protocol."""

    name: str

    def load(self, path: Path, document: Any) -> Sequence[LoadedRecord | ManifestError]:
        """Turn one parsed manifest into records; a broken entry becomes a ManifestError alone.

        ``document`` is a :class:`pytest_mobilebench.manifest.YamlDocument` (``.data`` is the mapping,
        ``.line_of(...)`` gives lines for messages).
        """

    def evaluate(self, record: LoadedRecord, prediction: Mapping[str, Any] | None, ctx: EvalContext) -> dict[str, Any]:
        """Evaluate one candidate and return a plain-builtin result.

        The result has at least ``instance_id``, ``suite``, ``model_name_or_path``, ``reason`` (a
        :class:`~pytest_mobilebench.states.Reason` value for issue-style suites, or the suite's own
        closed vocabulary), ``passed`` (bool: the item's headline success) and ``properties`` (a flat
        ``{name: str|int|float|bool}`` that goes to junit ``user_properties``). It never raises for
        a candidate's fault; infrastructure failures are results with an infra reason.
        """

    def summarize(self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Suite-level tables for the run summary, from every item's result and the run's options."""
