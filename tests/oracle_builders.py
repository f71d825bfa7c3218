"""Builders of tagged values and assertion records (``docs/oracle.md``) for the oracle's tests."""

from __future__ import annotations

from typing import Any

UNDEF = {"t": "undefined"}
NULL = {"t": "null"}
HOLE = {"t": "hole"}


def num(v: Any) -> dict:
    return {"t": "number", "v": str(v)}


def s(v: str) -> dict:
    return {"t": "string", "v": v}


def b(v: bool) -> dict:
    return {"t": "bool", "v": v}


def big(v: int) -> dict:
    return {"t": "bigint", "v": str(v)}


def arr(*items: dict, oid: int | None = None, props: list | None = None) -> dict:
    node = {"t": "array", "items": list(items), "props": props or []}
    if oid is not None:
        node["id"] = oid
    return node


def obj(ctor: str = "Object", oid: int | None = None, chain: list | None = None, **entries: dict) -> dict:
    node: dict = {"t": "object", "ctor": ctor, "entries": [[k, v] for k, v in entries.items()], "symbols": []}
    if oid is not None:
        node["id"] = oid
    if chain is not None:
        node["chain"] = chain
    return node


def ref(id: int) -> dict:
    return {"t": "ref", "id": id}


def mapping(*pairs: tuple[dict, dict]) -> dict:
    return {"t": "map", "entries": [list(p) for p in pairs]}


def jsset(*items: dict) -> dict:
    return {"t": "set", "items": list(items)}


def err(message: str, ctor: str = "Error", **entries: dict) -> dict:
    node = {"t": "error", "ctor": ctor, "name": ctor, "message": message, "cause": UNDEF}
    node["entries"] = [[k, v] for k, v in entries.items()]
    return node


def fn(name: str = "f", oid: int | None = None, calls: list | None = None, results: list | None = None) -> dict:
    node: dict = {"t": "function", "name": name, "mock": None}
    if oid is not None:
        node["id"] = oid
    if calls is not None:
        node["mock"] = {"calls": calls, "results": results or [{"type": "return", "value": UNDEF} for _ in calls]}
    return node


def asym(kind: str, sample: dict | None = None, inverse: bool = False, **extra: dict) -> dict:
    node = {"t": "asymmetric", "kind": kind, "inverse": inverse, **extra}
    if sample is not None:
        node["sample"] = sample
    return node


def thrown(value: dict | None) -> dict:
    return {"t": "thrown", "threw": value is not None, "value": value if value is not None else UNDEF}


def rec(matcher: str, received: dict, *expected: dict, inrealm: str = "pass", **keys: Any) -> dict:
    record = {"test": "t", "seq": keys.pop("seq", 0), "matcher": matcher, "not": keys.pop("not_", False)}
    record.update(promise=keys.pop("promise", ""), received=received, expected=list(expected), inrealm=inrealm)
    record.update(keys)
    return record
