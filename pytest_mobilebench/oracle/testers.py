"""jest's equality testers (``iterableEquality``, ``typeEquality``, ``sparseArrayEquality``, ``subsetEquality``).

Each tester is ``(a, b, testers) -> True | False | None | SKIP`` and has an opinion only on the pairs its rule covers
(``SKIP`` otherwise, jest's ``undefined``), so :class:`~.equality.Equality` tries them in order as jest does:

- ``iterable_equality``: two non-array iterables: same constructor; a ``Set`` holds each of the other's values
  (identity first, then deep equality, order ignored); a ``Map`` each key with an equal value; other iterables (typed
  arrays) element by element in order.
- ``type_equality`` (``toStrictEqual``): equal constructors, arrays always alike.
- ``sparse_array_equality`` (``toStrictEqual``): two arrays are equal under the strict check and have the same own
  index keys, so ``[, 1]`` differs from ``[undefined, 1]``.
- ``subset_equality`` (``toMatchObject``): only the expected object's own keys (and symbols) count, each present on
  the received object or its prototype chain below ``Object.prototype``, recursively; errors, arrays and dates are
  compared whole.
"""

from __future__ import annotations

import math
from typing import Any

from . import props
from .equality import SEMANTICS, SKIP, Equality, Tri, all3, any3, constructor_name, own_keys, same_value_zero, value_at
from .values import (
    UNKNOWN,
    BigInt,
    Cut,
    JSArray,
    JSDate,
    JSError,
    JSFunction,
    JSMap,
    JSObject,
    JSSet,
    Opaque,
    Symbol,
    TypedArray,
    is_nullish,
)

_EQ = Equality()


def _iterable(value: Any) -> bool:
    return isinstance(value, (JSMap, JSSet, TypedArray)) or isinstance(value, JSObject) and value.iterable


def iterable_equality(a: Any, b: Any, testers: tuple, a_stack: tuple = (), b_stack: tuple = ()) -> Any:
    """jest's ``iterableEquality`` (see the module docstring); stacks detect cycles through nested iterables."""
    if not _iterable(a) or not _iterable(b):
        return SKIP
    if isinstance(a, JSObject) or isinstance(b, JSObject):
        return None  # an iterable class instance: its iteration is not recorded
    if constructor_name(a) != constructor_name(b) or type(a) is not type(b):
        return False
    for i in range(len(a_stack) - 1, -1, -1):
        if a_stack[i] is a:
            return b_stack[i] is b
    a_stack, b_stack = (*a_stack, a), (*b_stack, b)

    def with_stack(x: Any, y: Any, inner: tuple) -> Any:
        return iterable_equality(x, y, nested, a_stack, b_stack)

    with_stack.iterable = True  # type: ignore[attr-defined]
    forwarded = tuple(t for t in testers if not getattr(t, "iterable", False)) if SEMANTICS.get().nested_testers else ()
    nested = forwarded + (with_stack,)
    if isinstance(a, JSSet):
        return len(a.items) == len(b.items) and _set_equal(a, b, nested)
    if isinstance(a, JSMap):
        return len(a.entries) == len(b.entries) and _map_equal(a, b, nested)
    if len(a.items) != len(b.items):
        return False
    return all3(_EQ.equals(x, y, nested) for x, y in zip(a.items, b.items))


iterable_equality.iterable = True  # type: ignore[attr-defined]


class _Members:
    """``Set.prototype.has`` / ``Map.prototype.has`` over decoded values: SameValueZero by hash where identity is
    known, by a scan where it is not (symbols, functions without ``id``); ``find`` -> ``(has, position)``."""

    def __init__(self, values: list[Any]) -> None:
        self.values = values
        self.index: dict[tuple, int] = {}
        self.unsure: list[int] = []
        for position, value in enumerate(values):
            key = _member_key(value)
            if key is None:
                self.unsure.append(position)
            else:
                self.index.setdefault(key, position)

    def find(self, value: Any) -> tuple[Tri, int]:
        key = _member_key(value)
        if key is None:
            for position, other in enumerate(self.values):
                same = same_value_zero(value, other)
                if same is not False:
                    return same, position
            return False, -1
        if key in self.index:
            return True, self.index[key]
        for position in self.unsure:
            if same_value_zero(value, self.values[position]) is None:
                return None, position
        return False, -1


def _member_key(value: Any) -> tuple | None:
    if isinstance(value, float):
        return ("number", "NaN") if math.isnan(value) else ("number", value + 0.0)  # -0 and 0 are one key
    if isinstance(value, (str, bool, BigInt)):
        return (type(value).__name__, value)
    if isinstance(value, (JSFunction, Opaque)) and not value.has_identity or isinstance(value, (Symbol, Cut)):
        return None
    return ("node", id(value))


def _set_equal(a: JSSet, b: JSSet, testers: tuple) -> Tri:
    members = _Members(b.items)

    def found(value: Any) -> Tri:
        has, _ = members.find(value)
        if has is True:
            return True
        deep = any3(_EQ.equals(value, other, testers) for other in b.items)
        return True if deep is True else (None if has is None or deep is None else False)

    return all3(found(value) for value in a.items)


def _map_equal(a: JSMap, b: JSMap, testers: tuple) -> Tri:
    keys = _Members([k for k, _ in b.entries])

    def found(key: Any, value: Any) -> Tri:
        same, position = keys.find(key)
        direct = all3([same, _EQ.equals(value, b.entries[position][1], testers)]) if same is not False else False
        if direct is True:
            return True
        deep = any3(_key_value(key, value, k, v, testers) for k, v in b.entries)
        return True if deep is True else (None if direct is None or deep is None else False)

    return all3(found(key, value) for key, value in a.entries)


def _key_value(key: Any, value: Any, other_key: Any, other_value: Any, testers: tuple) -> Tri:
    matched = _EQ.equals(key, other_key, testers)
    if matched is False:
        return False
    return all3([matched, _EQ.equals(value, other_value, testers)])


def type_equality(a: Any, b: Any, testers: tuple) -> Any:
    """jest's ``typeEquality``: ``False`` when the constructors differ (two arrays never do)."""
    if is_nullish(a) or is_nullish(b) or (isinstance(a, JSArray) and isinstance(b, JSArray)):
        return SKIP
    name_a, name_b = constructor_name(a), constructor_name(b)
    if name_a is None or name_b is None:
        return None
    return SKIP if name_a == name_b else False


def sparse_array_equality(a: Any, b: Any, testers: tuple) -> Any:
    """jest's ``sparseArrayEquality``: strict element equality and equal own index keys."""
    if not isinstance(a, JSArray) or not isinstance(b, JSArray):
        return SKIP
    rest = tuple(t for t in testers if t is not sparse_array_equality)
    return all3([_EQ.equals(a, b, rest, strict=True), own_keys(a) == own_keys(b)])


def _object_with_keys(value: Any) -> bool:
    return props.is_object_like(value) and not isinstance(value, (JSError, JSArray, JSDate))


def _has_property_in_object(value: Any, key: Any) -> Tri:
    if not props.is_object_like(value):
        return False
    if isinstance(key, tuple):
        return key in (own_keys(value) or [])
    own = props.has_own(value, key)
    if own is not False:
        return own
    if isinstance(value, JSObject) and value.ctor in ("", "Object"):
        return False  # the walk stops at Object.prototype
    return props.has_in_chain(value, key)


def subset_equality(obj: Any, subset: Any, testers: tuple) -> Any:
    """jest's ``subsetEquality``: the subset's own keys only, recursively (seen subsets compared whole)."""
    rest = tuple(t for t in testers if not getattr(t, "subset", False))
    return _subset_tester(rest, [])(obj, subset, testers)


subset_equality.subset = True  # type: ignore[attr-defined]


def _subset_tester(rest: tuple, seen: list) -> Any:
    def tester(obj: Any, subset: Any, testers: tuple) -> Any:
        if not _object_with_keys(subset):
            return SKIP
        keys = own_keys(subset)
        if keys is None:
            return None
        results = []
        for key in keys:
            results.append(_subset_key(obj, subset, key, rest, seen))
            if results[-1] is False:
                return False
        return all3(results)

    tester.subset = True  # type: ignore[attr-defined]
    return tester


def _subset_key(obj: Any, subset: Any, key: Any, rest: tuple, seen: list) -> Tri:
    expected = value_at(subset, key)
    received = value_at(obj, key) if props.is_object_like(obj) else UNKNOWN
    tracked = _object_with_keys(expected)
    if tracked:
        if any(s is expected for s in seen):
            return _EQ.equals(received, expected, rest)
        seen.append(expected)
    try:
        present = False if is_nullish(obj) else _has_property_in_object(obj, key)
        if present is False:
            return False
        return all3([present, _EQ.equals(received, expected, rest + (_subset_tester(rest, seen),))])
    finally:
        if tracked:
            seen[:] = [s for s in seen if s is not expected]
