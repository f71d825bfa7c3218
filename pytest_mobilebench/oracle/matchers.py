"""jest's built-in value matchers (``expect`` 29) over decoded values: ``pass`` before ``.not`` is applied.

Each matcher is ``(call) -> True | False | None``: ``True`` / ``False`` is jest's ``pass``, ``None`` an assertion
the record cannot settle; a :class:`~.equality.MatcherError` is jest's matcher error (a wrong argument type), which
fails the assertion with or without ``.not``. The rules follow jest's expect reference ("Expect" API docs) and the
matchers' behaviour in ``expect`` 29, checked against it by ``tests/test_oracle_differential.py``:

- ``toBe``: ``Object.is``; ``toEqual``: recursive equality with ``iterableEquality``; ``toStrictEqual``: also
  ``typeEquality``, ``sparseArrayEquality`` and the strict key check; ``toMatchObject``: ``subsetEquality``, both
  sides non-null objects.
- ``toBeTruthy`` / ``toBeFalsy`` / ``toBeNull`` / ``toBeUndefined`` / ``toBeDefined`` / ``toBeNaN``: take no
  argument (one other than ``undefined`` is a matcher error).
- ``toBeGreaterThan`` and kin: both sides numbers or bigints, compared as JS compares them (``NaN`` never).
- ``toBeCloseTo(n, digits=2)``: both numbers; ``|n - received| < 10 ** -digits / 2``; equal infinities are close.
- ``toContain``: a string contains a string; otherwise ``Array.from(received)`` holds an item ``===`` the expected;
  ``toContainEqual``: an item equal under ``toEqual``'s rules.
- ``toHaveLength``: ``received.length`` (UTF-16 code units for strings) must be a number; the expected a
  non-negative safe integer.
- ``toHaveProperty(path, value?)``: jest's ``getPath`` (``"a.b[0]"`` or ``["a", "b", 0]``): with a value, the end
  property must exist (``in``) and equal it; without, exist or be defined.
- ``toMatch``: a string received against a substring or a regular expression (ECMAScript engine).
- ``toBeInstanceOf``: by the constructor names the record gives (``chain``, else the constructor's own name).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import props
from .equality import SEMANTICS, Equality, MatcherError, Tri, any3, close_to, same_value, strict_equal
from .testers import iterable_equality, sparse_array_equality, subset_equality, type_equality
from .values import (
    HOLE,
    NULL,
    UNDEFINED,
    UNKNOWN,
    BigInt,
    Cut,
    JSArray,
    JSError,
    JSFunction,
    JSMap,
    JSObject,
    JSRegExp,
    JSSet,
    Node,
    TypedArray,
    is_nullish,
    is_number,
    truthy,
)

_EQ = Equality()
TO_EQUAL = (iterable_equality,)
TO_STRICT_EQUAL = (iterable_equality, type_equality, sparse_array_equality)
TO_MATCH_OBJECT = (iterable_equality, subset_equality)


class Undecidable(Exception):
    """The record cannot settle this assertion; the message says why."""


@dataclass
class Call:
    """One matcher call: the decoded received value and arguments, and the record's modifiers."""

    received: Any
    expected: list[Any]
    promise: str = ""
    record: dict = field(default_factory=dict)
    snapshots: Any = None

    def arg(self, index: int) -> Any:
        return self.expected[index] if index < len(self.expected) else UNDEFINED


def cut_guard(*values: Any) -> None:
    for value in values:
        if isinstance(value, Cut):
            raise Undecidable(f"the value is {'cut' if value.why != 'unknown' else 'not visible'} ({value.why})")


def to_be(call: Call) -> Tri:
    return same_value(call.received, call.arg(0))


def to_equal(call: Call) -> Tri:
    return _EQ.equals(call.received, call.arg(0), TO_EQUAL)


def to_strict_equal(call: Call) -> Tri:
    return _EQ.equals(call.received, call.arg(0), TO_STRICT_EQUAL, strict=True)


def _no_expected(call: Call) -> None:
    if call.arg(0) is not UNDEFINED:
        raise MatcherError("this matcher must not have an expected argument")


def _unary(test: Callable[[Any], Tri]) -> Callable[[Call], Tri]:
    def matcher(call: Call) -> Tri:
        _no_expected(call)
        cut_guard(call.received)
        return test(call.received)

    return matcher


def _numeric(value: Any) -> bool:
    return is_number(value) or isinstance(value, BigInt)


def _compare(op: Callable[[Any, Any], bool]) -> Callable[[Call], Tri]:
    def matcher(call: Call) -> Tri:
        received, expected = call.received, call.arg(0)
        cut_guard(received, expected)
        if not _numeric(received) or not _numeric(expected):
            raise MatcherError("received and expected values must be numbers or bigints")
        left = received.value if isinstance(received, BigInt) else received
        right = expected.value if isinstance(expected, BigInt) else expected
        if isinstance(left, float) and math.isnan(left) or isinstance(right, float) and math.isnan(right):
            return False
        return op(left, right)

    return matcher


def to_be_close_to(call: Call) -> Tri:
    received, expected = call.received, call.arg(0)
    precision = 2.0 if call.arg(1) is UNDEFINED else call.arg(1)
    cut_guard(received, expected)
    if not is_number(expected) or not is_number(received):
        raise MatcherError("received and expected values must be numbers")
    if not is_number(precision):
        raise Undecidable("a precision that is not a number")
    return close_to(expected, received, precision)


def array_from(value: Any) -> list[Any] | None:
    """``Array.from(value)`` for a value that is not a string; ``None`` where the record cannot tell."""
    if isinstance(value, JSArray):
        return [UNDEFINED if item is HOLE else item for item in value.items]
    if isinstance(value, (JSSet, TypedArray)):
        return list(value.items)
    if isinstance(value, JSMap):
        pairs = []
        for key, item in value.entries:
            pair = JSArray()
            pair.items = [key, item]
            pairs.append(pair)
        return pairs
    if isinstance(value, JSObject):
        if value.iterable or value.ctor not in ("", "Object"):
            return None
        length = value.entries.get("length", HOLE)
        return [] if length is HOLE or length is UNDEFINED else None
    if isinstance(value, (bool, float, BigInt, JSRegExp, JSError)) or type(value).__name__ == "JSDate":
        return None if isinstance(value, JSError) and "length" in value.entries else []
    return None


def to_contain(call: Call) -> Tri:
    received, expected = call.received, call.arg(0)
    cut_guard(received)
    if is_nullish(received):
        raise MatcherError("received value must not be null nor undefined")
    if isinstance(received, str):
        if not isinstance(expected, str):
            raise MatcherError("expected value must be a string if received value is a string")
        return expected in received
    items = array_from(received)
    if items is None:
        if isinstance(received, JSFunction) and expected is not UNDEFINED:
            return False  # Array.from(fn) is fn.length undefineds
        raise Undecidable(f"Array.from of {type(received).__name__} is not recorded")
    return any3(strict_equal(item, expected) for item in items)


def to_contain_equal(call: Call) -> Tri:
    received, expected = call.received, call.arg(0)
    cut_guard(received)
    if is_nullish(received):
        raise MatcherError("received value must not be null nor undefined")
    items = list(received) if isinstance(received, str) else array_from(received)
    if items is None:
        raise Undecidable(f"Array.from of {type(received).__name__} is not recorded")
    return any3(_EQ.equals(item, expected, TO_EQUAL) for item in items)


def is_non_negative_integer(value: Any) -> bool:
    return is_number(value) and value.is_integer() and 0 <= value <= 2**53 - 1


def to_have_length(call: Call) -> Tri:
    received, expected = call.received, call.arg(0)
    cut_guard(received)
    length = UNDEFINED if is_nullish(received) else props.get(received, "length")
    if length is UNKNOWN:
        raise Undecidable("the received value's length is not recorded")
    if not is_number(length):
        raise MatcherError("received value must have a length property whose value must be a number")
    if not is_non_negative_integer(expected):
        raise MatcherError("expected value must be a non-negative integer")
    return length == expected


_PATH_PART = re.compile(r"[^.\[\]]+|(?=\.(?:\.|$))")


def path_as_array(path: str) -> list[str]:
    """jest's ``pathAsArray``: ``"a.b[0]"`` -> ``["a", "b", "0"]``; ``""`` -> ``[""]``; ``"a..b"`` keeps an empty."""
    if path == "":
        return [""]
    parts = [""] if path.startswith(".") else []
    parts.extend(match.group(0) for match in _PATH_PART.finditer(path))
    return parts


def _is_primitive(value: Any) -> bool:
    return not isinstance(value, Node)


def _property_path(path: Any) -> list[str]:
    """The keys of ``toHaveProperty``'s path argument (a string or an array of strings and numbers)."""
    if isinstance(path, str):
        return path_as_array(path) if SEMANTICS.get().bracket_paths else path.split(".")
    if not isinstance(path, JSArray):
        raise MatcherError("expected path must be a string or array")
    if not path.items:
        raise MatcherError("expected path must not be an empty array")
    keys = [props.property_key(UNDEFINED if k is HOLE else k) for k in path.items]
    if any(k is None for k in keys):
        raise Undecidable("a path element that is neither a string nor a number")
    return keys  # type: ignore[return-value]


def to_have_property(call: Call) -> Tri:
    received, has_value = call.received, len(call.expected) >= 2
    cut_guard(received)
    if is_nullish(received):
        raise MatcherError("received value must not be null nor undefined")
    keys = _property_path(call.arg(0))
    loose = SEMANTICS.get().property_value_always_compared
    obj = received
    for key in keys[:-1]:
        obj = props.get(obj, key)
        cut_guard(obj)
        if is_nullish(obj):  # the path breaks here
            return _EQ.equals(UNDEFINED, call.arg(1), TO_EQUAL) if has_value and loose else False
    value = props.get(obj, keys[-1])
    cut_guard(value)
    defined = False if _is_primitive(obj) else props.has_in_chain(obj, keys[-1])
    if has_value and loose:
        return _EQ.equals(value, call.arg(1), TO_EQUAL)
    if defined is None:
        raise Undecidable(f"whether {keys[-1]!r} is on the received value's prototype chain is not recorded")
    if has_value and defined:
        return _EQ.equals(value, call.arg(1), TO_EQUAL)
    return value is not UNDEFINED or defined


def to_match(call: Call) -> Tri:
    received, expected = call.received, call.arg(0)
    cut_guard(received, expected)
    if not isinstance(received, str):
        raise MatcherError("received value must be a string")
    if isinstance(expected, str):
        return expected in received
    if isinstance(expected, JSRegExp):
        return props.regexp_test(expected.source, expected.flags, received)
    if isinstance(expected, JSObject) and "test" in expected.entries:
        raise Undecidable("an expected object with its own test method")
    raise MatcherError("expected value must be a string or regular expression")


def to_match_object(call: Call) -> Tri:
    received, expected = call.received, call.arg(0)
    cut_guard(received, expected)
    if not props.is_object_like(received) or not props.is_object_like(expected):
        raise MatcherError("received and expected values must be non-null objects")
    return _EQ.equals(received, expected, TO_MATCH_OBJECT)


def to_be_instance_of(call: Call) -> Tri:
    expected = call.arg(0)
    cut_guard(call.received, expected)
    if not isinstance(expected, JSFunction):
        raise MatcherError("expected value must be a function")
    return props.instance_of(call.received, expected)


def _is_nan(value: Any) -> bool:
    return is_number(value) and math.isnan(value)


VALUE_MATCHERS: dict[str, Callable[[Call], Tri]] = {
    "toBe": to_be,
    "toEqual": to_equal,
    "toStrictEqual": to_strict_equal,
    "toBeTruthy": _unary(truthy),
    "toBeFalsy": _unary(lambda v: None if truthy(v) is None else not truthy(v)),
    "toBeNull": _unary(lambda v: v is NULL),
    "toBeUndefined": _unary(lambda v: v is UNDEFINED or v is HOLE),
    "toBeDefined": _unary(lambda v: not (v is UNDEFINED or v is HOLE)),
    "toBeNaN": _unary(_is_nan),
    "toBeGreaterThan": _compare(lambda a, b: a > b),
    "toBeGreaterThanOrEqual": _compare(lambda a, b: a >= b),
    "toBeLessThan": _compare(lambda a, b: a < b),
    "toBeLessThanOrEqual": _compare(lambda a, b: a <= b),
    "toBeCloseTo": to_be_close_to,
    "toContain": to_contain,
    "toContainEqual": to_contain_equal,
    "toHaveLength": to_have_length,
    "toHaveProperty": to_have_property,
    "toMatch": to_match,
    "toMatchObject": to_match_object,
    "toBeInstanceOf": to_be_instance_of,
}
