"""Re-deciding assertion records (``docs/oracle.md``) out of the candidate's realm: one record, one test.

A record's oracle outcome is ``"pass"`` when jest's ``pass`` (from :mod:`.matchers` / :mod:`.calls`) differs from the
record's ``not``, ``"fail"`` when it equals it or the matcher throws a matcher error (jest fails those whatever ``.not``
says), ``None`` when the record cannot settle it (a cut value, an unseen property, a matcher the oracle does not
implement). With ``resolves`` / ``rejects`` the received value is the settled one and the record must say how the
promise settled (``settled``: ``"resolved"`` / ``"rejected"``; anything else, such as a received value that is no
promise, fails as jest fails it before the matcher); without ``settled`` the record is undecidable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .calls import ALIASES, CALL_MATCHERS
from .equality import SEMANTICS, MatcherError, Semantics
from .matchers import VALUE_MATCHERS, Call, Undecidable
from .snapshots import SnapFileError, SnapshotSource
from .values import (
    Asymmetric,
    Cut,
    EncodingError,
    JSArray,
    JSError,
    JSMap,
    JSObject,
    JSSet,
    Thrown,
    TypedArray,
    decode_record_values,
)

MATCHERS = {**VALUE_MATCHERS, **CALL_MATCHERS}
_OUTCOMES = ("pass", "fail")


@dataclass(frozen=True)
class RecordDecision:
    """The oracle's decision on one record.

    ``outcome``: ``"pass"`` / ``"fail"`` / ``None`` (undecidable); ``inrealm``: the record's own claim; ``reason``: why
    (empty when decided cleanly); ``error``: set when the record itself is malformed (a recorder fault or a forgery,
    never the candidate's assertion failing) or holds a shape the decider does not handle; ``supported``: the matcher
    is one the oracle implements.
    """

    seq: int
    matcher: str
    outcome: str | None
    inrealm: str | None
    reason: str = ""
    error: str | None = None
    supported: bool = True

    @property
    def disagrees(self) -> bool:
        """Decided out of realm, and not what the realm said."""
        return self.outcome is not None and self.inrealm in _OUTCOMES and self.outcome != self.inrealm


@dataclass(frozen=True)
class Disagreement:
    seq: int
    matcher: str
    inrealm: str
    oracle: str
    reason: str


@dataclass(frozen=True)
class TestDecision:
    """The oracle's decision on one test's records.

    ``holds``: ``True`` when every record was decided ``"pass"``; ``False`` when any was decided ``"fail"``; ``None``
    otherwise (some undecidable, none failed). ``disagreements``: records whose oracle outcome is not the in-realm
    one (the item is ``runner_compromised``). ``unrecorded_matchers``: matcher names the oracle does not implement
    (sorted, once each). ``malformed``: ``"seq N: what"`` for records that do not follow the format.
    """

    __test__ = False  # not a pytest test class

    holds: bool | None
    disagreements: list[Disagreement] = field(default_factory=list)
    unrecorded_matchers: list[str] = field(default_factory=list)
    records: list[RecordDecision] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)


def _header(record: Any) -> tuple[int, str, str | None]:
    if not isinstance(record, dict):
        raise EncodingError("a record must be a JSON object")
    seq, matcher = record.get("seq", -1), record.get("matcher")
    if not isinstance(matcher, str) or not matcher:
        raise EncodingError("record: 'matcher' must be a non-empty string")
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise EncodingError("record: 'seq' must be an int")
    inrealm = record.get("inrealm")
    if inrealm not in _OUTCOMES:
        raise EncodingError(f"record: 'inrealm' must be 'pass' or 'fail', got {inrealm!r}")
    if record.get("promise", "") not in ("", "resolves", "rejects"):
        raise EncodingError(f"record: 'promise' must be '', 'resolves' or 'rejects', got {record.get('promise')!r}")
    if not isinstance(record.get("not", False), bool):
        raise EncodingError("record: 'not' must be a bool")
    return seq, matcher, inrealm


def decide_record(record: dict, snapshots: SnapshotSource | None = None, *, jest_major: int = 29) -> RecordDecision:
    """Re-decide one assertion record by the rules of ``jest_major`` (26 to 30; :class:`~.equality.Semantics`);
    never raises on a malformed record (``error`` says what is wrong)."""
    token = SEMANTICS.set(Semantics(jest_major))
    try:
        return _decide(record, snapshots)
    finally:
        SEMANTICS.reset(token)


def _decide(record: dict, snapshots: SnapshotSource | None) -> RecordDecision:
    raw_seq = record.get("seq", -1) if isinstance(record, dict) else -1
    raw_matcher = record.get("matcher", "") if isinstance(record, dict) else ""
    try:
        seq, matcher, inrealm = _header(record)
        received, expected = decode_record_values(record)
    except EncodingError as exc:
        return RecordDecision(raw_seq if isinstance(raw_seq, int) else -1, str(raw_matcher), None, None, "", str(exc))
    name = ALIASES.get(matcher, matcher) if SEMANTICS.get().aliases else matcher
    implementation = MATCHERS.get(name)
    if implementation is None:
        reason = f"{matcher} is not a matcher the oracle implements"
        return RecordDecision(seq, matcher, None, inrealm, reason, supported=False)
    settled = record.get("settled")
    promise = record.get("promise", "")
    if promise and settled is None:
        return RecordDecision(
            seq, matcher, None, inrealm, f"the record does not say how the promise of .{promise} settled"
        )
    if promise and {"resolves": "resolved", "rejects": "rejected"}[promise] != settled:
        return RecordDecision(seq, matcher, "fail", inrealm, f".{promise} on a promise that {settled}")
    call = Call(received, expected, promise, record, snapshots)
    try:
        passed = implementation(call)
    except MatcherError as exc:
        return RecordDecision(seq, matcher, "fail", inrealm, f"matcher error: {exc}")
    except Undecidable as exc:
        return RecordDecision(seq, matcher, None, inrealm, str(exc))
    except SnapFileError as exc:
        return RecordDecision(seq, matcher, None, inrealm, f"snapshot file: {exc}", error=str(exc))
    except RecursionError:
        return RecordDecision(seq, matcher, None, inrealm, "the value nests too deeply to compare here")
    except Exception as exc:  # a shape the decider does not handle: named, never a crash of the grading
        return RecordDecision(seq, matcher, None, inrealm, "decider fault", error=f"decider fault: {exc!r}")
    if passed is None:
        return RecordDecision(seq, matcher, None, inrealm, _why_unsettled([received, *expected]))
    outcome = "pass" if passed != bool(record.get("not", False)) else "fail"
    return RecordDecision(seq, matcher, outcome, inrealm)


def decide_test(records: list[dict], snapshots: SnapshotSource | None = None, *, jest_major: int = 29) -> TestDecision:
    """Re-decide every record of one test (see :class:`TestDecision`) by the rules of the project's jest major."""
    decisions = [decide_record(record, snapshots, jest_major=jest_major) for record in records]
    disagreements = [
        Disagreement(d.seq, d.matcher, d.inrealm, d.outcome, d.reason or "the in-realm outcome differs")  # type: ignore[arg-type]
        for d in decisions
        if d.disagrees
    ]
    unrecorded = sorted({d.matcher for d in decisions if not d.supported})
    malformed = [f"seq {d.seq}: {d.error}" for d in decisions if d.error]
    outcomes = [d.outcome for d in decisions]
    holds: bool | None = False if "fail" in outcomes else (None if None in outcomes else True)
    return TestDecision(holds, disagreements, unrecorded, decisions, malformed)


def _why_unsettled(values: list[Any]) -> str:
    """The first cut value in ``values`` (``"a value is cut: depth"``), else a general reason."""
    seen: set[int] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, Cut):
            return f"a value is cut: {value.why}"
        if id(value) in seen:
            continue
        seen.add(id(value))
        stack.extend(_children(value))
    return "the record cannot settle it (an identity or inherited property it does not show)"


def _children(value: Any) -> list[Any]:
    if isinstance(value, (JSArray, JSSet, TypedArray)):
        return list(value.items) + list(getattr(value, "props", {}).values())
    if isinstance(value, (JSObject, JSError)):
        return list(value.entries.values()) + [v for _, v in getattr(value, "symbols", [])]
    if isinstance(value, JSMap):
        return [x for pair in value.entries for x in pair]
    if isinstance(value, Asymmetric):
        return [value.sample]
    if isinstance(value, Thrown):
        return [value.value]
    return []
