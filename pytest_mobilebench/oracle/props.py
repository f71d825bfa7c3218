"""What JS property access, ``in``, ``instanceof``, ``String()`` and ``RegExp.prototype.test`` give on decoded values.

Three-valued throughout: ``True`` / ``False`` where the record settles it, ``None`` (or :data:`UNKNOWN` for a
property value) where it does not: a key missing from a class instance's own entries may live on its prototype, a
built-in prototype's member (``"toString"``, ``"map"``) is not recorded, an ``instanceof`` against a class the record's
constructor names do not settle. Built-in prototype member names are those of Node 20's prototypes.
"""

from __future__ import annotations

import re
from typing import Any

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
    js_number_to_string,
)

_OBJECT_PROTO = frozenset(
    "__defineGetter__ __defineSetter__ __lookupGetter__ __lookupSetter__ __proto__ constructor hasOwnProperty "
    "isPrototypeOf propertyIsEnumerable toLocaleString toString valueOf".split()
)
_PROTO_NAMES = {
    JSArray: "at concat copyWithin entries every fill filter find findIndex findLast findLastIndex flat flatMap "
    "forEach includes indexOf join keys lastIndexOf map pop push reduce reduceRight reverse shift slice some sort "
    "splice toReversed toSorted toSpliced unshift values with",
    str: "anchor at big blink bold charAt charCodeAt codePointAt concat endsWith fixed fontcolor fontsize includes "
    "indexOf isWellFormed italics lastIndexOf link localeCompare match matchAll normalize padEnd padStart repeat "
    "replace replaceAll search slice small split startsWith strike sub substr substring sup toLocaleLowerCase "
    "toLocaleUpperCase toLowerCase toUpperCase toWellFormed trim trimEnd trimLeft trimRight trimStart",
    float: "toExponential toFixed toPrecision",
    JSFunction: "apply arguments bind call caller",
    JSMap: "clear delete entries forEach get has keys set values",
    JSSet: "add clear delete entries forEach has keys values",
    JSRegExp: "compile dotAll exec flags global hasIndices ignoreCase multiline sticky test unicode unicodeSets",
    JSError: "toString",
}
PROTO_NAMES = {kind: frozenset(names.split()) | _OBJECT_PROTO for kind, names in _PROTO_NAMES.items()}
_CANONICAL_INDEX = re.compile(r"0|[1-9][0-9]*")
#: built-in constructors whose chain is [name, "Error", "Object"]
BUILTIN_ERRORS = frozenset("EvalError RangeError ReferenceError SyntaxError TypeError URIError AggregateError".split())


def property_key(key: Any) -> str | None:
    """ToPropertyKey for a path element: a string stays, a number prints as JS does, anything else is unknown."""
    if isinstance(key, str):
        return key
    if is_number(key):
        return js_number_to_string(key)
    return None


def _index(key: str, length: int) -> int | None:
    if _CANONICAL_INDEX.fullmatch(key) and int(key) < length:
        return int(key)
    return None


def own(value: Any, key: str) -> Any:
    """The own property ``key`` of ``value``, :data:`HOLE` when it has none, :data:`UNKNOWN` when unseen."""
    if isinstance(value, JSArray):
        if key == "length":
            return float(len(value.items))
        idx = _index(key, len(value.items))
        return value.items[idx] if idx is not None else value.props.get(key, HOLE)
    if isinstance(value, JSObject):
        return value.entries.get(key, HOLE)
    if isinstance(value, JSError):
        if key == "message":
            return value.message
        if key == "cause":
            return HOLE if value.cause is UNDEFINED else value.cause
        return UNKNOWN if key == "stack" else value.entries.get(key, HOLE)
    if isinstance(value, str):
        return _string_own(value, key)
    if isinstance(value, TypedArray):
        idx = _index(key, len(value.items))
        return value.items[idx] if idx is not None else HOLE
    if isinstance(value, JSFunction):
        return value.name if key == "name" else (HOLE if key not in ("length", "mock", "prototype") else UNKNOWN)
    if isinstance(value, (JSMap, JSSet, JSDate, JSRegExp, bool, float, BigInt)):
        return HOLE
    return UNKNOWN


def _string_own(text: str, key: str) -> Any:
    units = text.encode("utf-16-le", "surrogatepass")
    if key == "length":
        return float(len(units) // 2)
    idx = _index(key, len(units) // 2)
    if idx is None:
        return HOLE
    return units[2 * idx : 2 * idx + 2].decode("utf-16-le", "surrogatepass")


def _inherited(value: Any, key: str) -> Any:
    """Value of ``key`` found on ``value``'s prototype chain (not own): UNDEFINED, UNKNOWN or a known value."""
    if isinstance(value, JSObject):
        if value.ctor == "":
            return UNDEFINED
        if value.ctor != "Object" or value.chain is not None and value.chain[:1] != ["Object"]:
            return UNKNOWN  # a class's prototype is not recorded
        return UNKNOWN if key in _OBJECT_PROTO else UNDEFINED
    if isinstance(value, JSError):
        if key == "name":
            return value.name
        return UNKNOWN if key in PROTO_NAMES[JSError] or value.ctor not in BUILTIN_ERRORS | {"Error"} else UNDEFINED
    if isinstance(value, JSMap | JSSet) and key == "size":
        return float(len(value.entries if isinstance(value, JSMap) else value.items))
    if isinstance(value, JSRegExp) and key in ("source", "flags"):
        return value.source if key == "source" else value.flags
    if isinstance(value, TypedArray):
        return float(len(value.items)) if key == "length" else UNKNOWN
    for kind, names in PROTO_NAMES.items():
        if isinstance(value, kind):
            return UNKNOWN if key in names else UNDEFINED
    if isinstance(value, (JSDate, bool, BigInt)):
        return (
            UNKNOWN
            if key in _OBJECT_PROTO or isinstance(value, JSDate) and key.startswith(("get", "set", "to"))
            else UNDEFINED
        )
    return UNKNOWN


def get(value: Any, key: str) -> Any:
    """JS ``value[key]`` (``value`` not null/undefined): a decoded value, UNDEFINED or UNKNOWN."""
    if isinstance(value, Cut) or isinstance(value, Asymmetric | Opaque):
        return UNKNOWN
    found = own(value, key)
    if found is HOLE:
        return _inherited(value, key)
    return UNDEFINED if found is HOLE else found


def has_own(value: Any, key: str) -> bool | None:
    """``Object.prototype.hasOwnProperty.call(value, key)`` for enumerable own keys the record carries."""
    found = own(value, key)
    if found is UNKNOWN:
        return None
    return found is not HOLE


def has_in_chain(value: Any, key: str) -> bool | None:
    """``key in value`` walking the prototype chain (``value`` an object); ``None`` where the chain is unseen."""
    found = has_own(value, key)
    if found is not False:
        return found
    inherited = _inherited(value, key)
    if inherited is UNKNOWN:
        return None
    return inherited is not UNDEFINED or (isinstance(value, JSError) and key == "name")


def is_object_like(value: Any) -> bool:
    """``typeof value === "object" && value !== null`` (functions excluded)."""
    return isinstance(value, Node) and not isinstance(value, JSFunction)


def known_chain(value: Any) -> list[str] | None:
    """Constructor names up ``value``'s prototype chain, when the record settles them."""
    if isinstance(value, Node) and value.chain is not None:
        return value.chain
    simple = {JSArray: "Array", JSMap: "Map", JSSet: "Set", JSDate: "Date", JSRegExp: "RegExp", JSFunction: "Function"}
    for kind, name in simple.items():
        if isinstance(value, kind):
            return [name, "Object"]
    if isinstance(value, JSError):
        if value.ctor == "Error":
            return ["Error", "Object"]
        return [value.ctor, "Error", "Object"] if value.ctor in BUILTIN_ERRORS else None
    if isinstance(value, JSObject):
        return {"": [], "Object": ["Object"]}.get(value.ctor)
    return None


def instance_of(value: Any, ctor: Any) -> bool | None:
    """``value instanceof ctor`` with ``ctor`` a decoded function, by constructor names."""
    if isinstance(value, Cut) or not isinstance(ctor, JSFunction) or not ctor.name:
        return None
    if isinstance(value, Asymmetric):
        return None
    if not isinstance(value, Node):
        return False  # a primitive is an instance of nothing
    chain = known_chain(value)
    if chain is not None:
        return ctor.name in chain
    own_name = getattr(value, "ctor", None)
    if ctor.name in (own_name, "Object") or isinstance(value, JSError) and ctor.name == "Error":
        return True
    return None


def js_string(value: Any) -> str | None:
    """JS ``String(value)`` where it does not run user code; ``None`` otherwise."""
    if isinstance(value, str):
        return value
    if value is UNDEFINED or value is HOLE:
        return "undefined"
    if value is NULL:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return js_number_to_string(value)
    if isinstance(value, BigInt):
        return str(value.value)
    if isinstance(value, Symbol):
        return f"Symbol({value.description})"
    if isinstance(value, JSArray):
        parts = [("" if v is NULL or v is UNDEFINED or v is HOLE else js_string(v)) for v in value.items]
        return None if any(p is None for p in parts) else ",".join(parts)  # type: ignore[arg-type]
    if isinstance(value, JSObject) and value.ctor == "Object" and "toString" not in value.entries:
        return "[object Object]"
    return None


def regexp_test(source: str, flags: str, text: str) -> bool | None:
    """``new RegExp(source, flags).test(text)`` by an ECMAScript regular expression engine (``regress``).

    ``None`` where the engine's code-point semantics could differ from JS's UTF-16 ones (astral characters or lone
    surrogates without the ``u`` flag) or the pattern does not compile.
    """
    import regress

    unicode = "u" in flags or "v" in flags
    if not unicode and any(ord(ch) > 0xFFFF for ch in source + text):
        return None
    engine_flags = "".join(f for f in flags if f in "imsu")
    try:
        match = regress.Regex(source, engine_flags).find(text)
    except (regress.RegressError, UnicodeError, ValueError):
        return None
    if match is None:
        return False
    return match.range().start == 0 if "y" in flags else True
