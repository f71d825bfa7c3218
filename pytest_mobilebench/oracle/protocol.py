"""The decider's interface, as the jest harness calls it (``docs/oracle.md``): typed protocols only.

Helper d's package ``pytest_mobilebench.oracle`` implements ``decide_test``; this module names what the call site
(:mod:`pytest_mobilebench.frameworks.react_native.oracle_verdict`) relies on, so both sides meet at one shape:

    decide_test(records: list[dict], snapshots: SnapshotSource) -> TestDecision
    SnapFiles(texts: Mapping[str, str]) -> SnapshotSource

``records`` are one test's assertion records in ``seq`` order (``docs/oracle.md``, "Assertion record").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["Decider", "SnapshotSource", "TestDecision"]


class SnapshotSource(Protocol):
    """Stored snapshots of the ``.snap`` files the harness read itself before any candidate code ran (helper d's
    ``SnapFiles`` over ``{repository path: text}``)."""

    def snapshot(self, file: str, key: str) -> str | None:
        """The stored value of ``key`` in ``file`` (repository-relative), None when there is none."""
        ...


class TestDecision(Protocol):
    """One test's records decided out of realm.

    Attributes:
        holds: True when every record holds, False when one does not, None when undecidable (a cut value,
            a matcher the oracle does not implement and no other record failing).
        disagreements: one entry per record whose in-realm outcome (``inrealm``) the oracle contradicts.
        unrecorded_matchers: names of matchers the oracle cannot decide (custom ones), left to the in-realm result.
    """

    holds: bool | None
    disagreements: Sequence[Any]
    unrecorded_matchers: Sequence[str]


class Decider(Protocol):
    """``decide_test`` of ``pytest_mobilebench.oracle``."""

    def __call__(self, records: list[dict[str, Any]], snapshots: SnapshotSource | None, /) -> TestDecision: ...
