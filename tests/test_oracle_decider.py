"""The out-of-realm decider on hand-written assertion records, one matcher family at a time."""

from __future__ import annotations

import pytest
from oracle_builders import (
    HOLE,
    NULL,
    UNDEF,
    arr,
    asym,
    b,
    big,
    err,
    fn,
    jsset,
    mapping,
    num,
    obj,
    rec,
    ref,
    s,
    thrown,
)

from pytest_mobilebench.oracle import decide_record, decide_test
from pytest_mobilebench.oracle.values import js_number_to_string


def outcome(record: dict) -> str | None:
    decision = decide_record(record)
    assert decision.error is None, decision.error
    return decision.outcome


def both(matcher: str, received: dict, *expected: dict) -> tuple[str | None, str | None]:
    """Outcomes without and with ``.not``."""
    return outcome(rec(matcher, received, *expected)), outcome(rec(matcher, received, *expected, not_=True))


@pytest.mark.parametrize(
    ("received", "expected", "result"),
    [
        (num("-0"), num("0"), "fail"),
        (num("NaN"), num("NaN"), "pass"),
        (big(1), num(1), "fail"),
        (s("a"), s("a"), "pass"),
        (obj(), obj(), "fail"),
        (obj(oid=1), ref(1), "pass"),
        (NULL, UNDEF, "fail"),
    ],
)
def test_to_be_is_object_is(received: dict, expected: dict, result: str) -> None:
    assert outcome(rec("toBe", received, expected)) == result


def test_to_equal_ignores_undefined_properties_and_to_strict_equal_does_not() -> None:
    loose, strict = obj(a=UNDEF, b=num(2)), obj(b=num(2))
    assert outcome(rec("toEqual", loose, strict)) == "pass"
    assert outcome(rec("toStrictEqual", loose, strict)) == "fail"


def test_to_strict_equal_checks_constructors_and_holes() -> None:
    point, plain = obj("Point", x=num(1)), obj(x=num(1))
    assert outcome(rec("toEqual", point, plain)) == "pass"
    assert outcome(rec("toStrictEqual", point, plain)) == "fail"
    sparse, dense = arr(num(1), HOLE), arr(num(1), UNDEF)
    assert outcome(rec("toEqual", sparse, dense)) == "pass"
    assert outcome(rec("toStrictEqual", sparse, dense)) == "fail"


def test_maps_and_sets_ignore_order_and_compare_deeply() -> None:
    one = mapping((num(1), s("a")), (obj(k=num(1)), s("b")))
    two = mapping((obj(k=num(1)), s("b")), (num(1), s("a")))
    assert outcome(rec("toEqual", one, two)) == "pass"
    assert outcome(rec("toEqual", jsset(num(1), obj(a=num(2))), jsset(obj(a=num(2)), num(1)))) == "pass"
    assert outcome(rec("toEqual", jsset(num(1)), jsset(num(2)))) == "fail"
    assert outcome(rec("toEqual", jsset(num(1)), mapping((num(1), num(1))))) == "fail"


def test_dates_regexps_and_errors_compare_as_jest_does() -> None:
    date = lambda v: {"t": "date", "v": v}  # noqa: E731
    assert outcome(rec("toEqual", date(5), date(5))) == "pass"
    assert outcome(rec("toEqual", date("NaN"), date("NaN"))) == "fail"
    regexp = lambda f: {"t": "regexp", "source": "a", "flags": f}  # noqa: E731
    assert outcome(rec("toEqual", regexp("g"), regexp("i"))) == "fail"
    assert outcome(rec("toEqual", err("x", "TypeError"), err("x"))) == "pass"
    assert outcome(rec("toStrictEqual", err("x", "TypeError"), err("x"))) == "fail"
    assert outcome(rec("toEqual", err("x", code=num(1)), err("x", code=num(2)))) == "pass"


def test_cycles_are_equal_only_to_cycles_at_the_same_depth() -> None:
    cyclic = lambda i: obj(oid=i, name=s("a"), me=ref(i))  # noqa: E731
    assert outcome(rec("toEqual", cyclic(1), cyclic(2))) == "pass"
    assert outcome(rec("toEqual", cyclic(1), obj(oid=2, name=s("a"), me=obj(name=s("a"))))) == "fail"


def test_asymmetric_matchers_inside_expected_values() -> None:
    number = fn("Number")
    assert outcome(rec("toEqual", obj(id=num(7)), obj(id=asym("any", number)))) == "pass"
    assert outcome(rec("toEqual", obj(id=s("7")), obj(id=asym("any", number)))) == "fail"
    assert outcome(rec("toEqual", obj(v=NULL), obj(v=asym("anything")))) == "fail"
    contain = asym("arrayContaining", arr(num(3), num(1)))
    assert outcome(rec("toEqual", arr(num(1), num(2), num(3)), contain)) == "pass"
    assert (
        outcome(rec("toEqual", s("abc"), asym("stringMatching", {"t": "regexp", "source": "B", "flags": "i"})))
        == "pass"
    )
    assert outcome(rec("toEqual", num(0.31), asym("closeTo", num(0.3), precision=num(1)))) == "pass"
    assert outcome(rec("toEqual", num(0.31), asym("closeTo", num(0.3)))) == "fail"
    assert outcome(rec("toEqual", obj(a=num(1)), asym("objectContaining", obj(a=num(2)), inverse=True))) == "pass"


def test_a_cut_value_is_undecidable_unless_another_part_already_differs() -> None:
    cut = {"t": "cut", "why": "depth"}
    assert outcome(rec("toEqual", obj(a=num(1), b=cut), obj(a=num(1), b=num(2)))) is None
    assert outcome(rec("toEqual", obj(a=num(1), b=cut), obj(a=num(9), b=num(2)))) == "fail"
    assert outcome(rec("toBeTruthy", cut)) is None


@pytest.mark.parametrize(
    ("matcher", "received", "expected", "plain", "negated"),
    [
        ("toBeTruthy", num("NaN"), [], "fail", "pass"),
        ("toBeFalsy", big(0), [], "pass", "fail"),
        ("toBeNull", NULL, [], "pass", "fail"),
        ("toBeUndefined", UNDEF, [], "pass", "fail"),
        ("toBeDefined", NULL, [], "pass", "fail"),
        ("toBeNaN", s("NaN"), [], "fail", "pass"),
        ("toBeTruthy", num(1), [num(2)], "fail", "fail"),  # a matcher error fails both ways
        ("toBeGreaterThan", big(2), [num(1.5)], "pass", "fail"),
        ("toBeLessThanOrEqual", num("NaN"), [num(1)], "fail", "pass"),
        ("toBeGreaterThan", s("2"), [num(1)], "fail", "fail"),
        ("toBeCloseTo", num(0.1 + 0.2), [num(0.3)], "pass", "fail"),
        ("toBeCloseTo", num(1.23), [num(1.2), num(1)], "pass", "fail"),
        ("toBeCloseTo", num("Infinity"), [num("Infinity")], "pass", "fail"),
        ("toContain", arr(num("NaN")), [num("NaN")], "fail", "pass"),
        ("toContain", arr(num(1), HOLE), [UNDEF], "pass", "fail"),
        ("toContain", s("hello"), [s("ell")], "pass", "fail"),
        ("toContain", s("hello"), [num(1)], "fail", "fail"),
        ("toContainEqual", arr(obj(a=num(1))), [obj(a=num(1))], "pass", "fail"),
        ("toHaveLength", s("\U0001f600"), [num(2)], "pass", "fail"),
        ("toHaveLength", obj(), [num(0)], "fail", "fail"),
        ("toHaveLength", arr(num(1)), [num(1.5)], "fail", "fail"),
        ("toMatch", s("2024-01-05"), [{"t": "regexp", "source": r"^\d{4}-\d\d-\d\d$", "flags": ""}], "pass", "fail"),
        ("toMatch", s("a.b"), [s(".")], "pass", "fail"),
        ("toMatch", num(1), [s("1")], "fail", "fail"),
        ("toMatchObject", obj(a=num(1), b=obj(c=num(2), d=num(3))), [obj(b=obj(c=num(2)))], "pass", "fail"),
        ("toMatchObject", obj(a=arr(num(1), num(2))), [obj(a=arr(num(1)))], "fail", "pass"),
        ("toMatchObject", obj(a=num(1)), [NULL], "fail", "fail"),
    ],
)
def test_value_matchers_and_not(matcher: str, received: dict, expected: list, plain: str, negated: str) -> None:
    assert both(matcher, received, *expected) == (plain, negated)


def test_to_have_property_follows_jest_get_path() -> None:
    tree = obj(a=obj(b=arr(num(1), obj(c=num(2)))))
    assert both("toHaveProperty", tree, s("a.b[1].c"), num(2)) == ("pass", "fail")
    assert both("toHaveProperty", tree, arr(s("a"), s("b"), num(1), s("c")), num(3)) == ("fail", "pass")
    assert outcome(rec("toHaveProperty", obj(a=UNDEF), s("a"))) == "pass"
    assert outcome(rec("toHaveProperty", obj(), s("a"), UNDEF)) == "fail"
    assert outcome(rec("toHaveProperty", obj(**{"a.b": num(1)}), arr(s("a.b")), num(1))) == "pass"
    assert outcome(rec("toHaveProperty", s("abc"), s("length"), num(3))) == "pass"
    assert outcome(rec("toHaveProperty", obj(a=num(1)), arr())) == "fail"
    assert outcome(rec("toHaveProperty", obj("Shape", chain=["Shape", "Object"]), s("area"))) is None


def test_to_be_instance_of_uses_the_recorded_chain() -> None:
    point = fn("Point")
    assert outcome(rec("toBeInstanceOf", obj("Point3", chain=["Point3", "Point", "Object"]), point)) == "pass"
    assert outcome(rec("toBeInstanceOf", obj("Point", chain=["Point", "Object"]), fn("Point3"))) == "fail"
    assert outcome(rec("toBeInstanceOf", obj("Point3"), point)) is None  # no chain: a subclass or not
    assert outcome(rec("toBeInstanceOf", num(1), fn("Number"))) == "fail"
    assert outcome(rec("toBeInstanceOf", obj(), num(1))) == "fail"


def test_to_throw_with_each_kind_of_expected() -> None:
    boom = thrown(err("bad input"))
    assert both("toThrow", boom) == ("pass", "fail")
    assert both("toThrow", thrown(None)) == ("fail", "pass")
    assert outcome(rec("toThrow", boom, s("bad"))) == "pass"
    assert outcome(rec("toThrow", boom, {"t": "regexp", "source": "^good", "flags": ""})) == "fail"
    assert outcome(rec("toThrowError", boom, fn("Error"))) == "pass"
    assert outcome(rec("toThrow", thrown(err("x", "MyError")), fn("TypeError"))) is None
    assert outcome(rec("toThrow", boom, err("bad input"))) == "pass"
    assert outcome(rec("toThrow", boom, obj(message=s("other")))) == "fail"
    assert outcome(rec("toThrow", thrown(num(42)), s("42"))) == "pass"
    unrecorded_cause = {k: v for k, v in err("bad input").items() if k != "cause"}
    assert outcome(rec("toThrow", boom, unrecorded_cause)) is None
    assert outcome(rec("toThrow", boom, {**unrecorded_cause, "message": "other"})) == "fail"
    assert outcome(rec("toThrow", thrown({**err("bad input"), "cause": err("why")}), err("bad input"))) == "fail"
    assert outcome(rec("toThrow", thrown(None), num(42))) == "fail"  # a matcher error
    assert outcome(rec("toThrow", num(1))) == "fail"  # not a function
    assert outcome(rec("toThrow", err("nope"), s("nope"), promise="rejects", settled="rejected")) == "pass"
    assert outcome(rec("toThrow", s("reason"), promise="rejects", settled="rejected")) == "fail"  # not an error


def test_mock_matchers() -> None:
    calls = [[num(1)], [num(2), UNDEF]]
    results = [{"type": "return", "value": num(2)}, {"type": "throw", "value": err("boom")}]
    mock = fn("mock", calls=calls, results=results)
    assert both("toHaveBeenCalled", mock) == ("pass", "fail")
    assert both("toBeCalledTimes", mock, num(2)) == ("pass", "fail")
    assert both("toHaveBeenCalledWith", mock, num(1)) == ("pass", "fail")
    assert outcome(rec("toHaveBeenCalledWith", mock, num(2))) == "fail"  # two arguments were passed
    assert outcome(rec("lastCalledWith", mock, num(2), UNDEF)) == "pass"
    assert outcome(rec("nthCalledWith", mock, num(1), asym("any", fn("Number")))) == "pass"
    assert outcome(rec("toHaveBeenNthCalledWith", mock, num(0), num(1))) == "fail"
    assert both("toHaveReturnedTimes", mock, num(1)) == ("pass", "fail")
    assert outcome(rec("toReturnWith", mock, num(2))) == "pass"
    assert outcome(rec("toHaveLastReturnedWith", mock, num(2))) == "fail"
    assert both("toHaveBeenCalled", fn("plain")) == ("fail", "fail")


def test_function_identity_needs_an_id() -> None:
    assert outcome(rec("toBe", fn("handler", oid=1), ref(1))) == "pass"
    assert outcome(rec("toBe", fn("handler", oid=1), fn("handler", oid=2))) == "fail"
    assert outcome(rec("toBe", fn("handler"), fn("handler"))) is None


def test_resolves_and_rejects_need_to_know_how_the_promise_settled() -> None:
    assert outcome(rec("toBe", num(1), num(1), promise="resolves", settled="resolved")) == "pass"
    assert outcome(rec("toBe", num(1), num(1), promise="resolves", settled="rejected", inrealm="fail")) == "fail"
    assert outcome(rec("toBeDefined", err("x"), promise="resolves", settled="rejected", not_=True)) == "fail"
    assert outcome(rec("toBe", num(1), num(1), promise="resolves", settled="none", inrealm="fail")) == "fail"
    assert outcome(rec("toBe", num(1), num(1), promise="resolves")) is None


def test_malformed_records_name_the_path() -> None:
    bad = rec("toEqual", obj(a=arr({"t": "nope"})), num(1))
    decision = decide_record(bad)
    assert decision.outcome is None and "received.entries[0][1].items[0]" in decision.error
    dangling = decide_record(rec("toBe", ref(9), num(1)))
    assert dangling.error is None and dangling.outcome is None and "without its id" in dangling.reason, dangling
    assert "number" in decide_record(rec("toBe", {"t": "number", "v": "one"}, num(1))).error
    assert "inrealm" in decide_record({**rec("toBe", num(1), num(1)), "inrealm": "maybe"}).error


def test_decide_test_aggregates() -> None:
    ok = rec("toBe", num(1), num(1), seq=0)
    unknown = rec("toBeInTheDocument", obj(), seq=1)
    forged = rec("toEqual", obj(a=num(1)), obj(a=num(2)), seq=2, inrealm="pass")
    assert decide_test([ok]).holds is True
    held = decide_test([ok, unknown])
    assert held.holds is None and held.unrecorded_matchers == ["toBeInTheDocument"] and not held.disagreements
    broken = decide_test([ok, unknown, forged, {**unknown, "seq": 3}])
    assert broken.holds is False and broken.unrecorded_matchers == ["toBeInTheDocument"]
    assert [(d.seq, d.matcher, d.inrealm, d.oracle) for d in broken.disagreements] == [(2, "toEqual", "pass", "fail")]


@pytest.mark.parametrize(
    ("value", "text"),
    [(1e21, "1e+21"), (1e20, "100000000000000000000"), (1.5e-7, "1.5e-7"), (1e-6, "0.000001"), (-0.0, "0"), (5.0, "5")],
)
def test_numbers_print_as_js_does(value: float, text: str) -> None:
    assert js_number_to_string(value) == text


def test_booleans_are_not_numbers() -> None:
    assert outcome(rec("toBe", b(True), num(1))) == "fail"
    assert outcome(rec("toEqual", b(True), num(1))) == "fail"


def test_classes_sharing_a_name_differ_by_their_recorded_identity() -> None:
    twin = lambda ctor_id: {**obj("Twin", a=num(1)), "ctor_id": ctor_id}  # noqa: E731
    assert outcome(rec("toStrictEqual", twin(0), twin(1))) == "fail"
    assert outcome(rec("toStrictEqual", twin(0), twin(0))) == "pass"
    assert outcome(rec("toEqual", twin(0), twin(1))) == "pass"


def test_symbol_keys_match_by_description_but_never_prove_equality() -> None:
    keyed = lambda d: {**obj(), "symbols": [[d, num(1)]]}  # noqa: E731
    assert outcome(rec("toEqual", keyed("s"), keyed("s"))) is None
    assert outcome(rec("toEqual", keyed("s"), keyed("t"))) == "fail"


def test_set_and_map_membership_is_same_value_zero() -> None:
    assert outcome(rec("toEqual", jsset(num("NaN"), num("-0")), jsset(num("0"), num("NaN")))) == "pass"
    assert outcome(rec("toEqual", mapping((num("-0"), s("a"))), mapping((num("0"), s("a"))))) == "pass"
    assert outcome(rec("toEqual", mapping((obj(oid=1), s("a"))), mapping((ref(1), s("b"))))) == "fail"
    big_set = jsset(*[num(i) for i in range(500)])
    assert outcome(rec("toEqual", big_set, jsset(*[num(i) for i in reversed(range(500))]))) == "pass"


def test_each_jest_major_keeps_its_own_rules() -> None:
    def at(major: int, record: dict) -> str | None:
        return decide_record(record, jest_major=major).outcome

    short = rec("toEqual", arr(UNDEF), arr())
    assert (at(27, short), at(28, short)) == ("fail", "pass")
    missing = rec("toHaveProperty", obj(), s("a"), UNDEF)
    assert (at(27, missing), at(28, missing)) == ("pass", "fail")
    bracket = rec("toHaveProperty", obj(a=obj(b=arr(num(1), num(2)))), s("a.b[1]"), num(2))
    assert (at(26, bracket), at(27, bracket)) == ("fail", "pass")
    caused = rec("toThrow", thrown({**err("x"), "cause": err("why")}), err("x"))
    assert (at(28, caused), at(29, caused)) == ("pass", "fail")
    inner = rec(
        "toMatchObject", obj(m=mapping((num(1), obj(a=num(1), b=num(2))))), obj(m=mapping((num(1), obj(a=num(1)))))
    )
    assert (at(28, inner), at(29, inner)) == ("fail", "pass")


def test_a_shape_the_decider_does_not_handle_is_named_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mobilebench.oracle import decide as decide_module

    def broken(call: object) -> bool:
        raise KeyError("boom")

    monkeypatch.setitem(decide_module.MATCHERS, "toBe", broken)
    decision = decide_test([rec("toBe", num(1), num(1))])
    assert decision.holds is None and decision.malformed == ["seq 0: decider fault: KeyError('boom')"]


def test_records_without_the_optional_keys_are_never_decided_wrongly() -> None:
    """A recorder writing only docs/oracle.md's table (no cause, settled, chain, ids on dates): undecidable there."""
    date = {"t": "date", "v": 1}  # numbered by the encoder, written without its id
    shared = rec("toEqual", obj(a=date, b=ref(1)), obj(a={"t": "date", "v": 1}, b={"t": "date", "v": 1}))
    assert decide_record(shared).error is None and outcome(shared) is None
    bare_error = {"t": "error", "ctor": "Error", "name": "Error", "message": "x", "entries": []}
    assert outcome(rec("toThrow", thrown(bare_error), bare_error)) is None
    assert outcome(rec("toThrow", thrown(bare_error), {**bare_error, "message": "y"})) == "fail"
    assert outcome(rec("toEqual", err("x"), err("x"), promise="rejects")) is None
    assert outcome(rec("toBeInstanceOf", obj("Sub"), fn("Base"))) is None
