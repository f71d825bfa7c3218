"""The out-of-realm assertion oracle: jest assertion records re-decided where no candidate code runs.

Pure: no I/O, no side effects; callers pass the records (``docs/oracle.md``) and a :class:`SnapshotSource` over
``.snap`` texts they read themselves. Entry points: :func:`decide_test` and :func:`decide_record`. The semantics are
jest's ``expect`` 29 (``equals`` with its testers, the built-in matchers and asymmetric matchers); modules:
:mod:`.values` (decoding), :mod:`.props` (property access), :mod:`.equality` / :mod:`.testers` (``equals``),
:mod:`.matchers` / :mod:`.calls` (matchers), :mod:`.snapshots` (``.snap`` files), :mod:`.decide` (records).
"""

from .decide import MATCHERS, Disagreement, RecordDecision, TestDecision, decide_record, decide_test
from .snapshots import SnapFileError, SnapFiles, SnapshotSource, parse_snap
from .values import EncodingError

__all__ = [
    "MATCHERS",
    "Disagreement",
    "EncodingError",
    "RecordDecision",
    "SnapFileError",
    "SnapFiles",
    "SnapshotSource",
    "TestDecision",
    "decide_record",
    "decide_test",
    "parse_snap",
]
