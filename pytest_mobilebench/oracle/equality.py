"""jest's recursive equality (``equals`` of ``@jest/expect-utils`` 29) re-implemented over decoded values.

Rules, as jest documents them for ``toEqual`` / ``toStrictEqual`` and as its equality utilities behave (checked row by
row against real ``expect`` by ``tests/test_oracle_differential.py``):

- an asymmetric matcher on one side decides (``expect.any``, ``anything``, ``objectContaining``, ...);
- then the testers in order, the first with an opinion wins: ``iterableEquality`` (Map/Set order-insensitive, other
  iterables in order, constructors equal), and for ``toStrictEqual`` also ``typeEquality`` (constructors equal),
  ``sparseArrayEquality`` (same own index keys, so a hole is not ``undefined``); ``toMatchObject`` adds
  ``subsetEquality`` (the expected object's keys only, recursively);
- two errors are equal when their messages are; ``Object.is`` (so ``NaN`` equals ``NaN`` and ``-0`` is not ``0``);
  the ``Object.prototype.toString`` class must match; dates by time value (an invalid date equals nothing), regular
  expressions by source and flags; functions only by identity;
- objects and arrays key by key over own enumerable keys (symbols included); outside the strict check a key whose
  value is ``undefined`` (or an asymmetric matcher) counts as present on the other side; the strict check also
  requires equal array lengths; a cycle is equal only to a cycle at the same depth.

Every function returns ``True`` / ``False`` or ``None`` where the record cannot settle it (a cut value, an unseen
inherited property, symbols or functions whose identity the record does not give).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from . import props
from .values import (
    HOLE,
    NULL,
    UNDEFINED,
    UNKNOWN,
    Asymmetric,
    BigInt,
    Cut,
    JSArray,
    JSDate,
    JSError,
    JSFunction,
    JSMap,
    JSObject,
    JSRegExp,
    JSSet,
    Node,
    Opaque,
    Symbol,
    TypedArray,
    is_number,
)

Tri = bool | None


@dataclass(frozen=True)
class Semantics:
    """What changed between jest majors, each flag checked against that major's ``expect`` (26.6, 27.5, 28.1, 29.7,
    30.5) by ``tests/test_oracle_differential.py``; the decider follows one major per call (:data:`SEMANTICS`)."""

    major: int = 29

    @property
    def defined_keys(self) -> bool:
        """Up to 27 ``toEqual`` keys are the own keys with a defined value, and arrays of unequal lengths differ."""
        return self.major <= 27

    @property
    def bracket_paths(self) -> bool:
        """From 27 ``toHaveProperty("a.b[0]")`` reads brackets; before, the path splits on dots only."""
        return self.major >= 27

    @property
    def property_value_always_compared(self) -> bool:
        """Up to 27 ``toHaveProperty(path, value)`` compares the value even where the property is missing."""
        return self.major <= 27

    @property
    def nested_testers(self) -> bool:
        """From 29 the testers reach inside Maps, Sets and other iterables (``toMatchObject``, ``toStrictEqual``)."""
        return self.major >= 29

    @property
    def aliases(self) -> bool:
        """Up to 29 ``toBeCalled``, ``toThrowError`` and the other old names are matchers; 30 removed them."""
        return self.major <= 29

    @property
    def error_causes(self) -> bool:
        """From 29 ``toThrow(errorObject)`` also compares the chains of ``cause``."""
        return self.major >= 29


#: the jest major whose rules the current decision follows (set by :func:`~.decide.decide_record` for one call)
SEMANTICS: ContextVar[Semantics] = ContextVar("jest_semantics", default=Semantics())
#: a tester returns SKIP when it has no opinion (jest's ``undefined``)
SKIP = object()
Tester = Callable[[Any, Any, tuple], Any]


class MatcherError(Exception):
    """The matcher itself throws (wrong argument types): the assertion fails whatever ``.not`` says."""


def all3(results: Iterable[Tri]) -> Tri:
    """Three-valued AND, short-circuit on the first ``False``."""
    unknown = False
    for result in results:
        if result is False:
            return False
        unknown = unknown or result is None
    return None if unknown else True


def any3(results: Iterable[Tri]) -> Tri:
    """Three-valued OR, short-circuit on the first ``True``."""
    unknown = False
    for result in results:
        if result is True:
            return True
        unknown = unknown or result is None
    return None if unknown else False


def not3(value: Tri) -> Tri:
    return None if value is None else not value


def same_value(a: Any, b: Any) -> Tri:
    """``Object.is(a, b)``."""
    if is_number(a) and is_number(b):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return _identical(a, b)


def strict_equal(a: Any, b: Any) -> Tri:
    """``a === b`` (``NaN`` unequal to itself, ``-0 === 0``)."""
    if is_number(a) and is_number(b):
        return a == b
    return _identical(a, b)


def same_value_zero(a: Any, b: Any) -> Tri:
    """SameValueZero (``Map.prototype.has``, ``Set.prototype.has``)."""
    if is_number(a) and is_number(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    return _identical(a, b)


def _identical(a: Any, b: Any) -> Tri:
    if isinstance(a, Cut) or isinstance(b, Cut):
        return None
    if a is b:
        return True
    if type(a) is not type(b) and not (isinstance(a, Node) and isinstance(b, Node)):
        return False
    if isinstance(a, (str, bool, BigInt)):
        return a == b
    if isinstance(a, Symbol):
        return None if a.description == b.description else False
    if isinstance(a, JSFunction) and isinstance(b, JSFunction):
        if a.has_identity and b.has_identity or a.name != b.name:
            return False
        return None
    if isinstance(a, Opaque) and isinstance(b, Opaque):
        return False if a.has_identity and b.has_identity or a.tag != b.tag else None
    return False


def class_name(value: Any) -> str | None:
    """``Object.prototype.toString.call(value)`` (``None`` where a class could carry ``Symbol.toStringTag``)."""
    if value is UNDEFINED or value is HOLE:
        return "[object Undefined]"
    if value is NULL:
        return "[object Null]"
    simple = {bool: "Boolean", float: "Number", str: "String", BigInt: "BigInt", Symbol: "Symbol"}
    simple.update({JSArray: "Array", JSMap: "Map", JSSet: "Set", JSDate: "Date", JSRegExp: "RegExp"})
    simple.update({JSError: "Error", JSFunction: "Function"})
    name = simple.get(type(value))
    if name is not None:
        return f"[object {name}]"
    if isinstance(value, TypedArray):
        return f"[object {value.ctor}]"
    if isinstance(value, JSObject) and not value.iterable and value.ctor not in TAGGED_CTORS:
        tagged = any(s.description == "Symbol.toStringTag" for s, _ in value.symbols)
        return None if tagged else "[object Object]"
    return None


#: constructors whose instances carry internal state or a ``Symbol.toStringTag`` the encoding does not show
TAGGED_CTORS = frozenset(
    "ArrayBuffer SharedArrayBuffer DataView Promise WeakRef URL URLSearchParams Blob File FormData Headers Request "
    "Response Generator AsyncGenerator Arguments Module Intl".split()
)


def constructor_name(value: Any) -> str | None:
    """The name of ``value.constructor`` (``""`` for none), ``None`` when the record cannot tell."""
    if isinstance(value, JSObject):
        return None if "constructor" in value.entries else _with_identity(value.ctor, value.ctor_id)
    kinds = {bool: "Boolean", float: "Number", str: "String", BigInt: "BigInt", Symbol: "Symbol", JSArray: "Array"}
    kinds.update({JSMap: "Map", JSSet: "Set", JSDate: "Date", JSRegExp: "RegExp", JSFunction: "Function"})
    if type(value) in kinds:
        return kinds[type(value)]
    if isinstance(value, JSError):
        return _with_identity(value.ctor, value.ctor_id)
    if isinstance(value, (TypedArray, Opaque)):
        return value.ctor
    return None


def _with_identity(name: str, ctor_id: int | None) -> str:
    """A constructor's name, and its identity when the record gives one (two classes may share a name)."""
    return name if ctor_id is None else f"{name}#{ctor_id}"


class Equality:
    """One ``equals(a, b, testers, strict)`` call tree; ``testers`` are callables ``(a, b, testers) -> Tri | SKIP``."""

    def equals(self, a: Any, b: Any, testers: tuple = (), strict: bool = False) -> Tri:
        return self.eq(a, b, [], [], testers, strict)

    def eq(self, a: Any, b: Any, a_stack: list, b_stack: list, testers: tuple, strict: bool) -> Tri:
        if isinstance(a, Cut) or isinstance(b, Cut):
            return None
        if isinstance(a, Asymmetric) != isinstance(b, Asymmetric):
            return asymmetric_match(a, b) if isinstance(a, Asymmetric) else asymmetric_match(b, a)
        for tester in testers:
            result = tester(a, b, testers)
            if result is not SKIP:
                return result
        if isinstance(a, JSError) and isinstance(b, JSError):
            return a.message == b.message
        same = same_value(a, b)
        if same is not False:
            return same
        if a is NULL or b is NULL or isinstance(a, Node) != isinstance(b, Node):
            return False  # null, or a primitive against an object: classes or typeof differ
        return self._compare_objects(a, b, a_stack, b_stack, testers, strict)

    def _compare_objects(self, a: Any, b: Any, a_stack: list, b_stack: list, testers: tuple, strict: bool) -> Tri:
        name_a, name_b = class_name(a), class_name(b)
        if name_a is None or name_b is None:
            return None
        if name_a != name_b:
            return False
        if isinstance(a, JSDate):
            return a.ms == b.ms
        if isinstance(a, JSRegExp):
            return a.source == b.source and a.flags == b.flags
        if not props.is_object_like(a) or not props.is_object_like(b):
            return False
        for i in range(len(a_stack) - 1, -1, -1):
            if a_stack[i] is a:
                return b_stack[i] is b
            if b_stack[i] is b:
                return False
        a_stack.append(a)
        b_stack.append(b)
        if (strict or SEMANTICS.get().defined_keys) and isinstance(a, JSArray) and len(a.items) != len(b.items):
            return False
        result = self._compare_keys(a, b, a_stack, b_stack, testers, strict)
        if result is not False:
            a_stack.pop()
            b_stack.pop()
        return result

    def _compare_keys(self, a: Any, b: Any, a_stack: list, b_stack: list, testers: tuple, strict: bool) -> Tri:
        a_keys, b_keys = own_keys(a), own_keys(b)
        if a_keys is None or b_keys is None:
            return None
        exact = strict  # every key must be on both sides
        if not strict and SEMANTICS.get().defined_keys:
            a_keys = [k for k in a_keys if value_at(a, k) is not UNDEFINED]
            b_keys = [k for k in b_keys if value_at(b, k) is not UNDEFINED]
            exact = True
        a_own, b_own = set(a_keys), set(b_keys)
        if not exact:
            a_keys += [k for k in b_keys if k not in a_own and _loose_key(b, k)]
            b_keys += [k for k in a_keys if k not in b_own and _loose_key(a, k)]
        if len(a_keys) != len(b_keys):
            return False
        unknown = False
        for key in reversed(a_keys):
            left = value_at(a, key)
            if key not in b_own and (exact or not (isinstance(left, Asymmetric) or left is UNDEFINED)):
                return False
            result = self.eq(left, value_at(b, key), a_stack, b_stack, testers, strict)
            if result is False:
                return False
            # two symbols with one description may be two keys: a match by description is never proof
            unknown = unknown or result is None or isinstance(key, tuple)
        return None if unknown else True


def _loose_key(value: Any, key: Any) -> bool:
    item = value_at(value, key)
    return isinstance(item, Asymmetric) or item is UNDEFINED


def own_keys(value: Any) -> list | None:
    """Own enumerable keys as jest's ``keys`` lists them: strings, then symbols as ``("symbol", description)``.

    Symbols are matched by description (the record has no other name for them); ``None`` when one object has two
    symbols with one description, or for a value whose keys the record does not carry.
    """
    if isinstance(value, JSArray):
        return [str(i) for i, v in enumerate(value.items) if v is not HOLE] + list(value.props)
    if isinstance(value, JSObject):
        symbols = [("symbol", s.description) for s, _ in value.symbols]
        return None if len(set(symbols)) != len(symbols) else list(value.entries) + symbols
    if isinstance(value, JSError):
        return list(value.entries)
    if isinstance(value, TypedArray):
        return [str(i) for i in range(len(value.items))]
    if isinstance(value, (JSMap, JSSet, JSDate, JSRegExp)):
        return []
    return None


def value_at(value: Any, key: Any) -> Any:
    """``value[key]`` for a key of :func:`own_keys` (a symbol key by description), inherited ones included."""
    if isinstance(key, tuple):
        found = [v for s, v in value.symbols if s.description == key[1]]
        return found[0] if found else UNDEFINED
    found = props.own(value, key)
    if found is HOLE:
        inherited = props.get(value, key)
        return inherited
    return found


def asymmetric_match(matcher: Asymmetric, other: Any) -> Tri:
    """``matcher.asymmetricMatch(other)`` for jest's built-in asymmetric matchers (``None`` for another kind)."""
    if isinstance(other, Cut):
        return None
    kind = matcher.kind
    if kind == "any":
        return _any(matcher.sample, other)
    if kind == "anything":
        return not (other is NULL or other is UNDEFINED or other is HOLE)
    handler = _ASYMMETRIC.get(kind)
    if handler is None:
        return None
    result = handler(matcher, other)
    return not3(result) if matcher.inverse else result


def _any(sample: Any, other: Any) -> Tri:
    name = sample.name if isinstance(sample, JSFunction) else None
    primitive = {"String": str, "Number": float, "Boolean": bool, "BigInt": BigInt, "Symbol": Symbol}
    if name in primitive:
        kind = primitive[name]
        return type(other) is kind or props.instance_of(other, sample) is True
    if name == "Function":
        return isinstance(other, JSFunction)
    if name == "Object":
        return other is NULL or props.is_object_like(other)
    return props.instance_of(other, sample)


def _array_containing(matcher: Asymmetric, other: Any) -> Tri:
    sample = matcher.sample
    if not isinstance(sample, JSArray):
        raise MatcherError("arrayContaining: the sample must be an array")
    items = [item for item in sample.items if item is not HOLE]
    if not items:
        return True
    if not isinstance(other, JSArray):
        return False
    others = [item for item in other.items if item is not HOLE]
    return all3(any3(Equality().equals(item, another) for another in others) for item in items)


def _object_containing(matcher: Asymmetric, other: Any) -> Tri:
    sample = matcher.sample
    keys = own_keys(sample) if props.is_object_like(sample) else None
    if keys is None:
        if sample is NULL or not props.is_object_like(sample):
            raise MatcherError("objectContaining: the sample must be an object")
        return None
    results = []
    for key in keys:
        present = _has_property(other, key)
        if present is False:
            return False
        value = props.get(other, key) if present and not isinstance(key, tuple) else _value_or_unknown(other, key)
        results.append(all3([present, Equality().equals(value_at(sample, key), value)]))
        if results[-1] is False:
            return False
    return all3(results)


def _value_or_unknown(value: Any, key: Any) -> Any:
    if isinstance(key, tuple) and isinstance(value, JSObject):
        return value_at(value, key)
    return UNKNOWN


def _has_property(value: Any, key: Any) -> Tri:
    """asymmetricMatchers' ``hasProperty``: falsy values have none, otherwise own or inherited."""
    from .values import truthy

    if truthy(value) is False:
        return False
    if isinstance(key, tuple):
        return any(s.description == key[1] for s, _ in value.symbols) if isinstance(value, JSObject) else None
    if not isinstance(value, Node):
        return None if props.get(value, key) is UNKNOWN else props.get(value, key) is not UNDEFINED
    return props.has_in_chain(value, key)


def _string_containing(matcher: Asymmetric, other: Any) -> Tri:
    return isinstance(other, str) and isinstance(matcher.sample, str) and matcher.sample in other


def _string_matching(matcher: Asymmetric, other: Any) -> Tri:
    if not isinstance(other, str):
        return False
    sample = matcher.sample
    if isinstance(sample, JSRegExp):
        return props.regexp_test(sample.source, sample.flags, other)
    if isinstance(sample, str):
        return props.regexp_test(sample, "", other)
    raise MatcherError("stringMatching: the sample must be a string or a regular expression")


def _close_to(matcher: Asymmetric, other: Any) -> Tri:
    sample, precision = matcher.sample, matcher.precision
    if not is_number(other):
        return False
    if not is_number(sample) or not is_number(precision):
        return None
    return close_to(sample, other, precision)


def close_to(expected: float, received: float, precision: float) -> bool:
    """``|expected - received| < 10 ** -precision / 2``, with equal infinities close (jest's ``toBeCloseTo``)."""
    if math.isinf(expected) and math.isinf(received) and expected == received:
        return True
    try:
        bound = math.pow(10, -precision) / 2
    except OverflowError:
        bound = math.inf
    return abs(expected - received) < bound


_ASYMMETRIC: dict[str, Callable[[Asymmetric, Any], Tri]] = {
    "arrayContaining": _array_containing,
    "objectContaining": _object_containing,
    "stringContaining": _string_containing,
    "stringMatching": _string_matching,
    "closeTo": _close_to,
}
