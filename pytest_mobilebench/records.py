"""The words every floor shares about a benchmark instance: the manifest error, the loaded record and the
services an evaluation gets. Ground floor: imports nothing of the package, so the manifest reader, the cache,
the agents and the suites all name them without loading any suite (``suites.base`` hands them on to suite
authors).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

__all__ = ["CLONE_SOURCE_FIELDS", "EvalContext", "LoadedRecord", "ManifestError", "record_material"]

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

    def fixture(self, name: str) -> Any:
        """The value of a pytest fixture named in the suite's ``fixtures`` (requested by the item).

        Raises:
            KeyError: ``name`` is not among the suite's declared fixtures.
        """


#: record fields that say where a repository is cloned FROM, never what it holds: the commits (``base_commit``,
#: ``fix_commit``: content hashes) and the patches identify the content, so the same commits fetched from a
#: mirror, a bundle or another checkout's path reuse the cached verdicts (``--mb-repo-url-template`` and
#: ``$MOBILEBENCH_MIRRORS`` are not keyed either)
CLONE_SOURCE_FIELDS: Final = frozenset({"repo_url"})


def record_material(record: Any) -> Any:
    """A record's result-cache key material: its JSON form (a pydantic model's ``model_dump``, a mapping as it
    is, else ``repr``) without :data:`CLONE_SOURCE_FIELDS`."""
    if hasattr(record, "model_dump"):
        data = record.model_dump(mode="json")
    elif isinstance(record, Mapping):
        data = dict(record)
    else:
        return repr(record)
    return {k: v for k, v in data.items() if k not in CLONE_SOURCE_FIELDS} if isinstance(data, dict) else data
