"""The tagged values of ``docs/oracle.md`` decoded into Python structures that keep JavaScript's semantics.

Shapes (one class per tag; containers compare by identity, as JS objects do):

- ``undefined`` -> :data:`UNDEFINED`, ``null`` -> :data:`NULL`, ``hole`` (an array's missing slot) -> :data:`HOLE`
- ``bool`` -> :class:`bool`, ``number`` -> :class:`float` (``"-0"`` and ``"NaN"`` survive), ``bigint`` ->
  :class:`BigInt`, ``string`` -> :class:`str` (UTF-16 lone surrogates kept), ``symbol`` -> :class:`Symbol`
- ``array`` -> :class:`JSArray`, ``object`` -> :class:`JSObject`, ``map`` -> :class:`JSMap`, ``set`` -> :class:`JSSet`,
  ``date`` -> :class:`JSDate`, ``regexp`` -> :class:`JSRegExp`, ``error`` -> :class:`JSError`, ``function`` ->
  :class:`JSFunction` (with :class:`Mock`), ``thrown`` -> :class:`Thrown`, ``asymmetric`` -> :class:`Asymmetric`,
  ``typedarray`` -> :class:`TypedArray`, ``promise`` / ``weakmap`` / ``weakset`` / ``opaque`` -> :class:`Opaque`
- ``cut`` -> :class:`Cut`; :data:`UNKNOWN` (a :class:`Cut`) also stands for a property this side cannot see (one
  inherited from a prototype the record does not describe). Any comparison that reaches a :class:`Cut` is undecidable.

``ref`` resolves to the very object decoded earlier under that ``id`` in the same record (received and expected
share one table), so ``toBe`` identity and cycles behave as in the realm. Optional keys this decoder reads beyond the
shared table: ``id`` on any node (functions and opaque values become identity-comparable), ``chain`` (constructor
names up the prototype chain, for ``instanceof``), ``ctor_id`` (one number per distinct constructor in the record, so
two classes sharing a name differ), ``iterable`` on objects, ``cause`` on errors (``undefined`` for none; absent:
not recorded) and ``precision`` on ``closeTo``. A malformed node raises :class:`EncodingError` naming its path in
the record; a ``ref`` to an id no earlier node carried decodes to a :class:`Cut` (the encoder numbered a node it
wrote without its ``id``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


class EncodingError(ValueError):
    """A record's value does not follow ``docs/oracle.md``; the message names the path (``received.items[2]``)."""


class _Singleton:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


UNDEFINED = _Singleton("undefined")
NULL = _Singleton("null")
HOLE = _Singleton("<hole>")


@dataclass(frozen=True)
class BigInt:
    """A JS bigint (kept apart from numbers: ``1n !== 1``)."""

    value: int


class Symbol:
    """A JS symbol known by its description only: two symbols with one description may or may not be the same."""

    __slots__ = ("description",)

    def __init__(self, description: str) -> None:
        self.description = description

    def __repr__(self) -> str:
        return f"Symbol({self.description})"


class Cut:
    """A value the encoder did not write (``why``: ``depth`` / ``size``) or a property this side cannot see."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"<cut {self.why}>"


UNKNOWN = Cut("unknown")
DANGLING = Cut("ref to a node written without its id")


class Node:
    """Base of every object-like value: identity is Python identity; ``chain`` lists constructor names if known."""

    chain: list[str] | None = None
    ctor_id: int | None = None


class JSArray(Node):
    def __init__(self) -> None:
        self.items: list[Any] = []  # HOLE for a missing slot
        self.props: dict[str, Any] = {}  # extra own enumerable keys


class JSObject(Node):
    def __init__(self, ctor: str) -> None:
        self.ctor = ctor  # "" for a null prototype
        self.entries: dict[str, Any] = {}
        self.symbols: list[tuple[Symbol, Any]] = []
        self.iterable = False
        self.ctor_id: int | None = None


class JSMap(Node):
    def __init__(self) -> None:
        self.entries: list[tuple[Any, Any]] = []


class JSSet(Node):
    def __init__(self) -> None:
        self.items: list[Any] = []


class JSDate(Node):
    def __init__(self, ms: float) -> None:
        self.ms = ms


class JSRegExp(Node):
    def __init__(self, source: str, flags: str) -> None:
        self.source = source
        self.flags = flags


class JSError(Node):
    def __init__(self, ctor: str, name: str, message: str) -> None:
        self.ctor = ctor
        self.name = name
        self.message = message
        self.entries: dict[str, Any] = {}
        self.cause: Any = UNKNOWN  # the record did not say
        self.ctor_id: int | None = None


@dataclass
class MockResult:
    type: str  # "return" | "throw" | "incomplete"
    value: Any


@dataclass
class Mock:
    calls: list[JSArray] = field(default_factory=list)
    results: list[MockResult] = field(default_factory=list)


class JSFunction(Node):
    def __init__(self, name: str, mock: Mock | None, has_identity: bool) -> None:
        self.name = name
        self.mock = mock
        self.has_identity = has_identity  # False: the record gave no id, so identity is unknown


class TypedArray(Node):
    def __init__(self, ctor: str) -> None:
        self.ctor = ctor
        self.items: list[Any] = []


class Opaque(Node):
    def __init__(self, tag: str, ctor: str, has_identity: bool) -> None:
        self.tag = tag
        self.ctor = ctor
        self.has_identity = has_identity


@dataclass(eq=False)
class Thrown:
    """What the recorder saw calling a ``toThrow*`` matcher's received function."""

    threw: bool
    value: Any


@dataclass(eq=False)
class Asymmetric:
    kind: str
    inverse: bool
    sample: Any
    precision: Any = 2.0


def parse_number(text: object, path: str) -> float:
    """``"1.5"`` / ``"-0"`` / ``"NaN"`` / ``"Infinity"`` / ``"-Infinity"`` -> float; anything else is an error."""
    if not isinstance(text, str):
        raise EncodingError(f"{path}: number value must be a string, got {text!r}")
    try:
        return float(text)
    except ValueError:
        raise EncodingError(f"{path}: unreadable number {text!r}") from None


class _Decoder:
    def __init__(self) -> None:
        self.table: dict[int, Any] = {}

    def register(self, node: dict, value: Any, path: str) -> None:
        ident = node.get("id")
        if ident is None:
            return
        if not isinstance(ident, int) or isinstance(ident, bool):
            raise EncodingError(f"{path}: id must be an int, got {ident!r}")
        self.table[ident] = value

    def key(self, node: dict, name: str, kind: type | tuple, path: str) -> Any:
        if name not in node:
            raise EncodingError(f"{path}: missing key {name!r}")
        value = node[name]
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise EncodingError(f"{path}.{name}: wrong type {type(value).__name__}")
        return value

    def decode(self, node: Any, path: str) -> Any:
        if not isinstance(node, dict) or not isinstance(node.get("t"), str):
            raise EncodingError(f"{path}: not a tagged value: {node!r:.80}")
        tag = node["t"]
        simple = _SIMPLE.get(tag)
        if simple is not None:
            return simple(self, node, path)
        method = getattr(self, "_" + tag, None)
        if method is None:
            raise EncodingError(f"{path}: unknown tag {tag!r}")
        return method(node, path)

    def _chain(self, node: dict, value: Node, path: str) -> None:
        ctor_id = node.get("ctor_id")
        if ctor_id is not None:
            if not isinstance(ctor_id, int) or isinstance(ctor_id, bool):
                raise EncodingError(f"{path}.ctor_id: must be an int")
            value.ctor_id = ctor_id  # type: ignore[attr-defined]
        chain = node.get("chain")
        if chain is not None:
            if not isinstance(chain, list) or not all(isinstance(c, str) for c in chain):
                raise EncodingError(f"{path}.chain: must be a list of constructor names")
            value.chain = chain

    def _pairs(self, node: dict, name: str, path: str) -> list[list]:
        pairs = self.key(node, name, list, path)
        for i, pair in enumerate(pairs):
            if not isinstance(pair, list) or len(pair) != 2:
                raise EncodingError(f"{path}.{name}[{i}]: must be a [key, value] pair")
        return pairs

    def _entries(self, node: dict, target: dict, name: str, path: str) -> None:
        for i, (k, v) in enumerate(self._pairs(node, name, path)):
            if not isinstance(k, str):
                raise EncodingError(f"{path}.{name}[{i}]: key must be a string")
            target[k] = self.decode(v, f"{path}.{name}[{i}][1]")

    def _array(self, node: dict, path: str) -> JSArray:
        out = JSArray()
        self.register(node, out, path)
        self._chain(node, out, path)
        for i, item in enumerate(self.key(node, "items", list, path)):
            hole = isinstance(item, dict) and item.get("t") == "hole"
            out.items.append(HOLE if hole else self.decode(item, f"{path}.items[{i}]"))
        if "props" in node:
            self._entries(node, out.props, "props", path)
        return out

    def _object(self, node: dict, path: str) -> JSObject:
        out = JSObject(self.key(node, "ctor", str, path))
        self.register(node, out, path)
        self._chain(node, out, path)
        out.iterable = bool(node.get("iterable", False))
        self._entries(node, out.entries, "entries", path)
        for i, (desc, v) in enumerate(self._pairs(node, "symbols", path) if "symbols" in node else []):
            out.symbols.append((Symbol(str(desc)), self.decode(v, f"{path}.symbols[{i}][1]")))
        return out

    def _map(self, node: dict, path: str) -> JSMap:
        out = JSMap()
        self.register(node, out, path)
        self._chain(node, out, path)
        for i, (k, v) in enumerate(self._pairs(node, "entries", path)):
            here = f"{path}.entries[{i}]"
            out.entries.append((self.decode(k, here + "[0]"), self.decode(v, here + "[1]")))
        return out

    def _set(self, node: dict, path: str) -> JSSet:
        out = JSSet()
        self.register(node, out, path)
        self._chain(node, out, path)
        out.items = [self.decode(v, f"{path}.items[{i}]") for i, v in enumerate(self.key(node, "items", list, path))]
        return out

    def _date(self, node: dict, path: str) -> JSDate:
        raw = node.get("v")
        ms = float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else parse_number(raw, path)
        out = JSDate(ms)
        self.register(node, out, path)
        return out

    def _regexp(self, node: dict, path: str) -> JSRegExp:
        out = JSRegExp(self.key(node, "source", str, path), self.key(node, "flags", str, path))
        self.register(node, out, path)
        return out

    def _error(self, node: dict, path: str) -> JSError:
        ctor = self.key(node, "ctor", str, path)
        out = JSError(ctor, str(node.get("name", ctor)), self.key(node, "message", str, path))
        self.register(node, out, path)
        self._chain(node, out, path)
        if "entries" in node:
            self._entries(node, out.entries, "entries", path)
        if "cause" in node:
            out.cause = self.decode(node["cause"], path + ".cause")
        return out

    def _function(self, node: dict, path: str) -> JSFunction:
        out = JSFunction(str(node.get("name", "")), None, "id" in node)
        self.register(node, out, path)
        self._chain(node, out, path)
        mock = node.get("mock")
        if mock is not None:
            out.mock = self._mock(mock, path + ".mock")
        return out

    def _mock(self, mock: Any, path: str) -> Mock:
        if not isinstance(mock, dict):
            raise EncodingError(f"{path}: must be an object or null")
        out = Mock()
        for i, call in enumerate(self.key(mock, "calls", list, path)):
            if not isinstance(call, list):
                raise EncodingError(f"{path}.calls[{i}]: must be a list of values")
            args = JSArray()
            args.items = [self.decode(v, f"{path}.calls[{i}][{j}]") for j, v in enumerate(call)]
            out.calls.append(args)
        for i, result in enumerate(self.key(mock, "results", list, path)):
            here = f"{path}.results[{i}]"
            if not isinstance(result, dict) or result.get("type") not in ("return", "throw", "incomplete"):
                raise EncodingError(f"{here}: type must be return, throw or incomplete")
            value = self.decode(result["value"], here + ".value") if "value" in result else UNDEFINED
            out.results.append(MockResult(result["type"], value))
        return out

    def _thrown(self, node: dict, path: str) -> Thrown:
        threw = self.key(node, "threw", bool, path)
        value = self.decode(node["value"], path + ".value") if "value" in node else UNDEFINED
        return Thrown(threw, value)

    def _asymmetric(self, node: dict, path: str) -> Asymmetric:
        sample = self.decode(node["sample"], path + ".sample") if "sample" in node else UNDEFINED
        precision = self.decode(node["precision"], path + ".precision") if "precision" in node else 2.0
        return Asymmetric(self.key(node, "kind", str, path), bool(node.get("inverse", False)), sample, precision)

    def _typedarray(self, node: dict, path: str) -> TypedArray:
        out = TypedArray(self.key(node, "ctor", str, path))
        self.register(node, out, path)
        out.items = [self.decode(v, f"{path}.items[{i}]") for i, v in enumerate(self.key(node, "items", list, path))]
        return out

    def _opaque(self, node: dict, path: str) -> Opaque:
        out = Opaque(node["t"], str(node.get("ctor", "")), "id" in node)
        self.register(node, out, path)
        self._chain(node, out, path)
        return out

    _promise = _weakmap = _weakset = _opaque

    def _ref(self, node: dict, path: str) -> Any:
        ident = node.get("id")
        if not isinstance(ident, int) or isinstance(ident, bool):
            raise EncodingError(f"{path}: ref id must be an int, got {ident!r}")
        # a node the encoder numbered but wrote without its id: a value this side cannot see
        return self.table.get(ident, DANGLING)


_SIMPLE = {
    "undefined": lambda d, n, p: UNDEFINED,
    "null": lambda d, n, p: NULL,
    "bool": lambda d, n, p: d.key(n, "v", bool, p),
    "number": lambda d, n, p: parse_number(n.get("v"), p),
    "bigint": lambda d, n, p: BigInt(int(d.key(n, "v", str, p))),
    "string": lambda d, n, p: d.key(n, "v", str, p),
    "symbol": lambda d, n, p: Symbol(str(n.get("d", ""))),
    "cut": lambda d, n, p: Cut(str(n.get("why", ""))),
}


def decode_record_values(record: dict) -> tuple[Any, list[Any]]:
    """``(received, expected)`` of one assertion record, decoded with one shared ``ref`` table.

    Raises :class:`EncodingError` naming the first malformed node (``received.entries[0][1]: unknown tag``).
    """
    decoder = _Decoder()
    if "received" not in record:
        raise EncodingError("record: missing key 'received'")
    received = decoder.decode(record["received"], "received")
    expected = record.get("expected", [])
    if not isinstance(expected, list):
        raise EncodingError("expected: must be a list of values")
    return received, [decoder.decode(v, f"expected[{i}]") for i, v in enumerate(expected)]


def is_number(value: Any) -> bool:
    return type(value) is float


def is_nullish(value: Any) -> bool:
    return value is NULL or value is UNDEFINED or value is HOLE


def truthy(value: Any) -> bool | None:
    """JS ToBoolean: ``false``, ``0``, ``-0``, ``0n``, ``""``, ``null``, ``undefined``, ``NaN`` are falsy."""
    if isinstance(value, Cut):
        return None
    if is_nullish(value):
        return False
    if isinstance(value, bool):
        return value
    if is_number(value):
        return not (value == 0 or math.isnan(value))
    if isinstance(value, BigInt):
        return value.value != 0
    if isinstance(value, str):
        return value != ""
    return True


def js_number_to_string(x: float) -> str:
    """ECMAScript Number::toString(10) from Python's shortest round-trip digits (``1e21`` -> ``"1e+21"``)."""
    if math.isnan(x):
        return "NaN"
    if x == 0:
        return "0"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x < 0:
        return "-" + js_number_to_string(-x)
    mantissa, _, exp = repr(x).partition("e")
    int_part, _, frac = mantissa.partition(".")
    raw = int_part + frac
    n = len(int_part) + (int(exp) if exp else 0)  # x = 0.raw * 10**n
    digits = raw.lstrip("0")
    n -= len(raw) - len(digits)
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(e)}"
