"""Properties of the out-of-realm decider over generated encoded values (hypothesis).

- ``toEqual`` and ``toStrictEqual`` are reflexive on every value without invalid dates (each side decoded apart, so
  identity never helps), and ``toEqual`` is symmetric on values without Maps and Sets (jest's Map/Set matching is a
  search, not a bijection, so it is not symmetric there);
- ``.not`` inverts every decided outcome except a matcher error, which fails both ways;
- ``toStrictEqual`` passing implies ``toEqual`` passing;
- a value cut anywhere in arrays and objects makes a comparison with its uncut self undecidable; in Sets and Maps it
  may be decided, never against what the uncut value gives.
"""

from __future__ import annotations

import copy
import math

from hypothesis import given, settings
from hypothesis import strategies as st
from oracle_builders import HOLE, NULL, UNDEF, arr, b, big, err, jsset, mapping, num, obj, rec, s

from pytest_mobilebench.oracle import MATCHERS as MATCHERS_ALL
from pytest_mobilebench.oracle import decide_record
from pytest_mobilebench.oracle.values import js_number_to_string


def _number(x: float) -> dict:
    return num("-0" if x == 0 and math.copysign(1, x) < 0 else js_number_to_string(x))


LEAVES = st.one_of(
    st.just(UNDEF),
    st.just(NULL),
    st.booleans().map(b),
    st.floats().map(_number),
    st.integers(-(10**20), 10**20).map(big),
    st.text(max_size=4).map(s),
    st.integers(-(10**12), 10**12).map(lambda v: {"t": "date", "v": v}),
    st.sampled_from(["", "g", "i"]).map(lambda f: {"t": "regexp", "source": "a+", "flags": f}),
    st.tuples(st.text(max_size=3), st.sampled_from(["Error", "TypeError"])).map(lambda m: err(*m)),
)
KEYS = st.text(alphabet="abc", min_size=1, max_size=2)


def _plain(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.lists(st.one_of(children, st.just(HOLE)), max_size=4).map(lambda items: arr(*items)),
        st.tuples(st.sampled_from(["Object", "Point"]), st.dictionaries(KEYS, children, max_size=4)).map(
            lambda c: obj(c[0], **c[1])
        ),
    )


def _with_collections(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        _plain(children),
        st.lists(st.tuples(children, children), max_size=3).map(lambda pairs: mapping(*pairs)),
        st.lists(children, max_size=3).map(lambda items: jsset(*items)),
    )


VALUES = st.recursive(LEAVES, _with_collections, max_leaves=10)
PLAIN_VALUES = st.recursive(LEAVES, _plain, max_leaves=10)
MATCHERS = ["toBe", "toEqual", "toStrictEqual", "toMatchObject", "toContainEqual", "toHaveLength", "toBeTruthy"]


def decided(matcher: str, received: dict, expected: dict, not_: bool = False) -> tuple[str | None, str]:
    decision = decide_record(rec(matcher, copy.deepcopy(received), copy.deepcopy(expected), not_=not_))
    assert decision.error is None, decision.error
    return decision.outcome, decision.reason


@settings(max_examples=150, deadline=None)
@given(VALUES)
def test_equality_is_reflexive(value: dict) -> None:
    assert decided("toEqual", value, value)[0] == "pass"
    assert decided("toStrictEqual", value, value)[0] == "pass"
    assert decided("toMatchObject", obj(v=value), obj(v=value))[0] == "pass"


@settings(max_examples=150, deadline=None)
@given(PLAIN_VALUES, PLAIN_VALUES)
def test_to_equal_is_symmetric_without_maps_and_sets(left: dict, right: dict) -> None:
    assert decided("toEqual", left, right)[0] == decided("toEqual", right, left)[0]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(MATCHERS), VALUES, VALUES)
def test_not_inverts_every_decided_outcome_but_a_matcher_error(matcher: str, received: dict, expected: dict) -> None:
    plain, reason = decided(matcher, received, expected)
    negated, _ = decided(matcher, received, expected, not_=True)
    if reason.startswith("matcher error"):
        assert plain == negated == "fail"
    elif plain is None:
        assert negated is None
    else:
        assert {plain, negated} == {"pass", "fail"}


@settings(max_examples=150, deadline=None)
@given(VALUES, VALUES)
def test_strict_equality_implies_equality(left: dict, right: dict) -> None:
    if decided("toStrictEqual", left, right)[0] == "pass":
        assert decided("toEqual", left, right)[0] == "pass"


def _positions(node: dict) -> list[tuple[list | dict, object]]:
    """(container, index) of every tagged value below ``node`` (holes excluded)."""
    found: list[tuple[list | dict, object]] = []
    for key in ("items", "entries"):
        for i, child in enumerate(node.get(key, [])):
            pairs = [(child, 0), (child, 1)] if isinstance(child, list) else [(node[key], i)]
            for container, index in pairs:
                target = container[index]
                if isinstance(target, dict) and target.get("t") != "hole" and not (key == "entries" and index == 0):
                    found.append((container, index))
                    found.extend(_positions(target))
                elif isinstance(target, dict) and key == "entries" and node["t"] == "map":
                    found.append((container, index))
                    found.extend(_positions(target))
    return found


def _cut_somewhere(value: dict, data: st.DataObject) -> dict | None:
    cut = copy.deepcopy(value)
    positions = _positions(cut)
    if not positions:
        return None
    container, index = data.draw(st.sampled_from(positions))
    container[index] = {"t": "cut", "why": "depth"}  # type: ignore[index]
    return cut


@settings(max_examples=150, deadline=None)
@given(_plain(PLAIN_VALUES), st.data())
def test_a_cut_makes_a_comparison_with_its_uncut_self_undecidable(value: dict, data: st.DataObject) -> None:
    cut = _cut_somewhere(value, data)
    if cut is not None:
        assert decided("toEqual", cut, value)[0] is None
        assert decided("toStrictEqual", value, cut)[0] is None


@settings(max_examples=150, deadline=None)
@given(_with_collections(VALUES), st.data())
def test_a_cut_never_decides_against_what_its_value_would_give(value: dict, data: st.DataObject) -> None:
    """In a Set or Map a member can be immaterial (another equal one is found first): decided, but never wrongly."""
    cut = _cut_somewhere(value, data)
    if cut is not None:
        assert decided("toEqual", cut, value)[0] in (None, "pass")
        assert decided("toEqual", value, cut)[0] in (None, "pass")


ASYMMETRIC = st.sampled_from(
    ["any", "anything", "arrayContaining", "objectContaining", "stringContaining", "stringMatching", "closeTo"]
)


def _wild(children: st.SearchStrategy) -> st.SearchStrategy:
    """Every tag, in places a recorder would not put some of them: the decider must name, never crash."""
    return st.one_of(
        _with_collections(children),
        st.tuples(ASYMMETRIC, children, st.booleans()).map(
            lambda a: {"t": "asymmetric", "kind": a[0], "sample": a[1], "inverse": a[2]}
        ),
        st.tuples(
            st.sampled_from(["Number", "Object", "Point", ""]), st.lists(st.lists(children, max_size=2), max_size=2)
        ).map(lambda f: {"t": "function", "name": f[0], "mock": {"calls": f[1], "results": []}}),
        children.map(lambda v: {"t": "thrown", "threw": True, "value": v}),
        st.sampled_from(["promise", "weakmap", "opaque"]).map(lambda t: {"t": t, "ctor": "X"}),
        st.tuples(st.sampled_from(["Uint8Array", "Float64Array"]), st.lists(st.floats().map(_number), max_size=3)).map(
            lambda ta: {"t": "typedarray", "ctor": ta[0], "items": ta[1]}
        ),
        st.integers(0, 5).map(lambda i: {"t": "ref", "id": i}),
        st.just({"t": "cut", "why": "size"}),
        st.text(max_size=3).map(lambda d: {"t": "symbol", "d": d}),
    )


WILD = st.recursive(LEAVES, _wild, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(MATCHERS_ALL)), WILD, st.lists(WILD, max_size=3), st.booleans(), st.integers(26, 30))
def test_no_value_makes_the_decider_fault(
    matcher: str, received: dict, expected: list, negated: bool, major: int
) -> None:
    record = rec(matcher, received, *expected, not_=negated)
    decision = decide_record(record, jest_major=major)
    assert not (decision.error or "").startswith("decider fault"), decision.error
