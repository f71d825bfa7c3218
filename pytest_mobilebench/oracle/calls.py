"""jest's mock-function, ``toThrow`` and snapshot matchers (``expect`` 29) over decoded values.

- Mock matchers need a jest mock (a ``function`` value with ``mock``), else a matcher error. ``toHaveBeenCalled`` /
  ``toHaveReturned`` take no argument; ``...Times(n)`` a non-negative integer; ``...NthCalledWith(n, ...)`` a positive
  one. A call matches when it has as many arguments as expected and they are equal under ``toEqual``'s rules; a result
  when it is a ``return`` whose value is equal.
- ``toThrow(expected?)`` decides on the :class:`~.values.Thrown` the recorder saw (or, with ``resolves`` /
  ``rejects``, on the settled value when it is an error): no argument: it threw; a string: the message contains it; a
  regular expression: it matches the message; a class: ``instanceof``; an asymmetric matcher: it matches the thrown
  value; an error or object: equal messages (and equal ``cause`` chains). The message of a thrown non-error is its
  ``message`` property when a string, else ``String(value)``.
- Snapshot matchers compare the record's ``snapshot.serialized`` (pretty-format's output, taken in-realm with the
  pristine serialiser) with the stored snapshot as jest does: a multi-line value gains a leading and a trailing
  newline; an inline snapshot loses the indentation added to line it up (jest's rule: first and last lines blank,
  every other line starting with the first line's indentation). A missing stored snapshot is undecidable (written
  outside ``--ci``, failed inside). Property matchers (``toMatchSnapshot({id: expect.any(Number)})``) must match too,
  and the serialised value is then the received one merged with them (``snapshot.merged: true`` says the recorder did
  that; without it such a record is undecidable).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import props
from .equality import SEMANTICS, Equality, MatcherError, Tri, all3, any3, asymmetric_match
from .matchers import TO_EQUAL, Call, Undecidable, cut_guard, is_non_negative_integer
from .testers import iterable_equality, subset_equality
from .values import (
    UNDEFINED,
    Asymmetric,
    Cut,
    JSArray,
    JSError,
    JSFunction,
    JSObject,
    JSRegExp,
    Mock,
    Thrown,
    is_number,
)

_EQ = Equality()


def _mock(call: Call) -> Mock:
    cut_guard(call.received)
    received = call.received
    if not isinstance(received, JSFunction) or received.mock is None:
        raise MatcherError("received value must be a mock or spy function")
    return received.mock


def _args(values: list[Any]) -> JSArray:
    array = JSArray()
    array.items = list(values)
    return array


def _equal_call(expected: list[Any], call_args: JSArray) -> Tri:
    if len(call_args.items) != len(expected):
        return False
    return _EQ.equals(_args(expected), call_args, TO_EQUAL)


def _equal_return(expected: Any, result: Any) -> Tri:
    return result.type == "return" and _EQ.equals(expected, result.value, TO_EQUAL)


def _nth(call: Call) -> int:
    nth = call.arg(0)
    if not is_number(nth) or not nth.is_integer() or nth < 1 or nth > 2**53 - 1:
        raise MatcherError("n must be a positive integer")
    return int(nth)


def called(call: Call) -> Tri:
    if call.arg(0) is not UNDEFINED:
        raise MatcherError("this matcher must not have an expected argument")
    return len(_mock(call).calls) > 0


def called_times(call: Call) -> Tri:
    if not is_non_negative_integer(call.arg(0)):
        raise MatcherError("expected value must be a non-negative integer")
    return len(_mock(call).calls) == call.arg(0)


def called_with(call: Call) -> Tri:
    return any3(_equal_call(call.expected, args) for args in _mock(call).calls)


def last_called_with(call: Call) -> Tri:
    calls = _mock(call).calls
    return bool(calls) and _equal_call(call.expected, calls[-1])


def nth_called_with(call: Call) -> Tri:
    calls = _mock(call).calls
    nth = _nth(call)
    return nth <= len(calls) and _equal_call(call.expected[1:], calls[nth - 1])


def returned(call: Call) -> Tri:
    if call.arg(0) is not UNDEFINED:
        raise MatcherError("this matcher must not have an expected argument")
    return any(result.type == "return" for result in _mock(call).results)


def returned_times(call: Call) -> Tri:
    if not is_non_negative_integer(call.arg(0)):
        raise MatcherError("expected value must be a non-negative integer")
    return sum(result.type == "return" for result in _mock(call).results) == call.arg(0)


def returned_with(call: Call) -> Tri:
    return any3(_equal_return(call.arg(0), result) for result in _mock(call).results)


def last_returned_with(call: Call) -> Tri:
    results = _mock(call).results
    return bool(results) and _equal_return(call.arg(0), results[-1])


def nth_returned_with(call: Call) -> Tri:
    results = _mock(call).results
    nth = _nth(call)
    return nth <= len(results) and _equal_return(call.arg(1), results[nth - 1])


def _thrown(call: Call) -> Thrown | None:
    """What jest's ``toThrow`` sees: ``None`` for "did not throw"."""
    received = call.received
    cut_guard(received)
    if isinstance(received, Thrown):
        if call.promise and not received.threw:
            return None
        return received if received.threw else None
    if call.promise:
        if isinstance(received, JSError):
            return Thrown(True, received)
        if isinstance(received, JSFunction):
            raise Undecidable("a settled function value: jest calls it, the recorder did not")
        return None
    if isinstance(received, JSFunction):
        raise Undecidable("the recorder did not call the received function")
    raise MatcherError("received value must be a function")


def thrown_message(value: Any) -> str | None:
    """jest's ``getThrown(e).message``: a string ``message`` property, else ``String(e)``."""
    if isinstance(value, JSError):
        return value.message
    message = props.get(value, "message") if isinstance(value, JSObject) else UNDEFINED
    if isinstance(message, Cut):
        return None
    if isinstance(message, str):
        return message
    return props.js_string(value)


def _message_and_cause(value: Any) -> str | None:
    """jest's ``createMessageAndCause``: the message, or a text naming the chain of error causes; ``None`` when a
    cause is not in the record."""
    cause = value.cause if isinstance(value, JSError) else props.get(value, "cause")
    if isinstance(cause, Cut):
        return None
    message = value.message if isinstance(value, JSError) else props.js_string(props.get(value, "message"))
    if not isinstance(cause, JSError):
        return message
    return _cause_text(value)


def _cause_text(error: JSError) -> str | None:
    if isinstance(error.cause, Cut):
        return None
    if not isinstance(error.cause, JSError):
        return f"{{ message: {error.message} }}"
    inner = _cause_text(error.cause)
    return None if inner is None else f"{{ message: {error.message}, cause: {inner}}}"


def to_throw(call: Call) -> Tri:
    thrown = _thrown(call)
    expected = call.arg(0)
    cut_guard(expected)
    if expected is UNDEFINED:
        return thrown is not None
    if thrown is None:
        if isinstance(expected, (JSFunction, str, JSRegExp, Asymmetric)) or props.is_object_like(expected):
            return False
        raise MatcherError("expected value must be a string or regular expression or class or error")
    if isinstance(expected, JSFunction):
        return props.instance_of(thrown.value, expected)
    if isinstance(expected, Asymmetric):
        return asymmetric_match(expected, thrown.value)
    message = thrown_message(thrown.value)
    if isinstance(expected, (str, JSRegExp)) and message is None:
        raise Undecidable("String() of the thrown value runs its own code")
    if isinstance(expected, str):
        return expected in message  # type: ignore[operator]
    if isinstance(expected, JSRegExp):
        return props.regexp_test(expected.source, expected.flags, message)  # type: ignore[arg-type]
    if props.is_object_like(expected):
        expected_message = props.get(expected, "message")
        cut_guard(expected_message)
        if message != expected_message or not SEMANTICS.get().error_causes:
            return message == expected_message
        pair = (_message_and_cause(thrown.value), _message_and_cause(expected))
        if None in pair:
            raise Undecidable("an error cause the record does not show")
        return pair[0] == pair[1]
    raise MatcherError("expected value must be a string or regular expression or class or error")


def add_extra_line_breaks(text: str) -> str:
    """jest stores a multi-line snapshot between a leading and a trailing newline."""
    return f"\n{text}\n" if "\n" in text else text


_INDENT = re.compile(r"^([^\S\n]*)\S", re.MULTILINE)


def strip_added_indentation(snapshot: str) -> str:
    """An inline snapshot without the indentation its template literal was given to line it up in the source."""
    match = _INDENT.search(snapshot)
    lines = snapshot.split("\n")
    if not match or not match.group(1) or len(lines) <= 2 or lines[0].strip() or lines[-1].strip():
        return snapshot
    indentation = match.group(1)
    for i in range(1, len(lines) - 1):
        if lines[i] != "":
            if not lines[i].startswith(indentation):
                return snapshot
            lines[i] = lines[i][len(indentation) :]
    lines[-1] = ""
    return "\n".join(lines)


def _snapshot_matcher(throws: bool, inline: bool) -> Callable[[Call], Tri]:
    def matcher(call: Call) -> Tri:
        if call.record.get("not"):
            raise MatcherError("snapshot matchers cannot be used with not")
        checks: list[Tri] = []
        if throws:
            thrown = _thrown(call)
            if thrown is None:
                return False
        elif call.expected and props.is_object_like(call.arg(0)) and not isinstance(call.arg(0), JSArray):
            cut_guard(call.received)
            if not props.is_object_like(call.received):
                raise MatcherError("received value must be an object when the matcher has properties")
            checks.append(_EQ.equals(call.received, call.arg(0), (iterable_equality, subset_equality)))
            if checks[-1] is False:
                return False
            if not (call.record.get("snapshot") or {}).get("merged"):
                raise Undecidable("with property matchers jest stores the received value merged with them")
        checks.append(_compare_snapshot(call, inline))
        return all3(checks)

    return matcher


def _compare_snapshot(call: Call, inline: bool) -> Tri:
    snap = call.record.get("snapshot")
    if not isinstance(snap, dict) or not isinstance(snap.get("serialized"), str):
        raise Undecidable("the record carries no serialised snapshot value")
    received = add_extra_line_breaks(snap["serialized"].replace("\r\n", "\n"))
    if inline:
        stored = snap.get("inline")
        if not isinstance(stored, str):
            raise Undecidable("no inline snapshot in the record (a first run writes it)")
        return strip_added_indentation(stored.replace("\r\n", "\n")) == received
    if call.snapshots is None or not isinstance(snap.get("file"), str) or not isinstance(snap.get("key"), str):
        raise Undecidable("no snapshot file to compare with")
    stored = call.snapshots.snapshot(snap["file"], snap["key"])
    if stored is None:
        raise Undecidable(f"no stored snapshot {snap['key']!r} in {snap['file']} (jest would write or fail it)")
    return stored == received


CALL_MATCHERS: dict[str, Callable[[Call], Tri]] = {
    "toHaveBeenCalled": called,
    "toHaveBeenCalledTimes": called_times,
    "toHaveBeenCalledWith": called_with,
    "toHaveBeenLastCalledWith": last_called_with,
    "toHaveBeenNthCalledWith": nth_called_with,
    "toHaveReturned": returned,
    "toHaveReturnedTimes": returned_times,
    "toHaveReturnedWith": returned_with,
    "toHaveLastReturnedWith": last_returned_with,
    "toHaveNthReturnedWith": nth_returned_with,
    "toThrow": to_throw,
    "toMatchSnapshot": _snapshot_matcher(throws=False, inline=False),
    "toMatchInlineSnapshot": _snapshot_matcher(throws=False, inline=True),
    "toThrowErrorMatchingSnapshot": _snapshot_matcher(throws=True, inline=False),
    "toThrowErrorMatchingInlineSnapshot": _snapshot_matcher(throws=True, inline=True),
}

#: jest's other names for the same matchers
ALIASES = {
    "toBeCalled": "toHaveBeenCalled",
    "toBeCalledTimes": "toHaveBeenCalledTimes",
    "toBeCalledWith": "toHaveBeenCalledWith",
    "lastCalledWith": "toHaveBeenLastCalledWith",
    "nthCalledWith": "toHaveBeenNthCalledWith",
    "toReturn": "toHaveReturned",
    "toReturnTimes": "toHaveReturnedTimes",
    "toReturnWith": "toHaveReturnedWith",
    "lastReturnedWith": "toHaveLastReturnedWith",
    "nthReturnedWith": "toHaveNthReturnedWith",
    "toThrowError": "toThrow",
}
