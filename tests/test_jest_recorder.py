"""The in-realm assertion recorder (issue 31, item 1; ``harness_js.recorder``, ``docs/oracle.md``), in the host's node.

The recorder's text runs as the harness's runner does (after the shared primordials, next to ``channel.js``),
around a stand-in ``expect`` with jest's shape (matchers object, ``.not``, ``.resolves``, ``.rejects``,
``getState().suppressedErrors``). Values come from another realm (``vm``) whose builtins are patched before the
assertions run, as a candidate's module could: the records must still encode them structurally (maps, sets,
holes, ``-0``, cycles, errors, mocks, asymmetric matchers), a ``toThrow`` function runs once, the in-realm outcome
is what the matcher did (a quiet failure in ``suppressedErrors`` included), deep and large values are cut, and the
known answers drawn from any seed fail and pass as declared.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.frameworks.react_native import harness
from pytest_mobilebench.frameworks.react_native.harness_js.recorder import RECORDER_JS
from pytest_mobilebench.frameworks.react_native.harness_js.shared import PRIMORDIALS_JS

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="no node on the host")

#: a stand-in for jest's ``expect``: the matchers the checks below use, thrown failures, and one quiet matcher
STAND_IN = r"""
const state = { suppressedErrors: [], assertionCalls: 0 };
const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const TABLE = {
  toBe: (r, e) => Object.is(r, e),
  toEqual: (r, e) => eq(r, e),
  toStrictEqual: (r, e) => eq(r, e),
  toContain: (r, e) => r.includes(e),
  toMatch: (r, e) => e.test(r),
  toHaveLength: (r, e) => r.length === e,
  toBeGreaterThan: (r, e) => r > e,
  toThrow: (r, e) => {
    try { r(); return false; } catch (x) { return e === undefined || String(x.message).includes(e); }
  },
  toMatchQuietly: (r, e) => eq(r, e),
};
function build(actual, not, promise) {
  const out = {};
  for (const name of Object.keys(TABLE)) {
    out[name] = function (...args) {
      state.assertionCalls++;
      const check = (v) => {
        if (TABLE[name](v, ...args) !== not) return;
        const error = new Error(name + ' failed');
        if (name === 'toMatchQuietly') state.suppressedErrors.push(error); else throw error;
      };
      if (promise === 'resolves') return Promise.resolve(actual).then(check);
      if (promise === 'rejects') return Promise.resolve(actual).then(() => { throw new Error('resolved'); }, check);
      return check(actual);
    };
  }
  return out;
}
function expect(actual) {
  const top = build(actual, false, '');
  top.not = build(actual, true, '');
  top.resolves = build(actual, false, 'resolves');
  top.resolves.not = build(actual, true, 'resolves');
  top.rejects = build(actual, false, 'rejects');
  top.rejects.not = build(actual, true, 'rejects');
  return top;
}
expect.getState = () => state;
"""

#: the checks: records printed one JSON line each, then the known answers' outcomes over many seeds
SCRIPT = r"""
const vm = require('vm');
const records = [];
const e = recordingExpect(expect, { emit: (r) => records.push(r), path: '/r/a.test.js',
  current: () => ({ titles: ['suite', 'test'] }), serialize: () => null, snapshotFile: null });
const realm = vm.createContext({});
const values = vm.runInContext(`
  const o = { m: new Map([[1, new Set([2])]]), d: new Date(5), err: new TypeError('bad'), r: /a/g, holes: [1, , 3],
    z: -0, nan: NaN, big: 10n, [Symbol('s')]: 1 };
  o.self = o;
  class ObjectContaining {
    constructor(sample) {
      this.$$typeof = Symbol.for('jest.asymmetricMatcher'); this.sample = sample; this.inverse = false;
    }
  }
  const mock = function mockConstructor() {};
  mock._isMockFunction = true;
  mock.mock = { calls: [[1, 'x']], results: [{ type: 'return', value: 2 }] };
  let deep = {}; const root = deep; for (let i = 0; i < 60; i++) { deep.next = {}; deep = deep.next; }
  // the candidate's realm patches the builtins it shares with its expect
  Object.keys = () => []; Map.prototype.forEach = function () {}; Array.isArray = () => false;
  ({ o: o, asym: new ObjectContaining({ a: 1 }), mock: mock, deep: root, big: new Array(30000).fill(0) });
`, realm);
let calls = 0;
(async () => {
  e(values.o).toBe(values.o);
  e(1).not.toBe(2);
  try { e(1).toBe(2); } catch (x) {}
  e(() => { calls++; throw new Error('boom'); }).toThrow('boom');
  try { e({ a: 1 }).toEqual(values.asym); } catch (x) {}
  e(values.mock).toBe(values.mock);
  e(values.deep).toBe(values.deep);
  e(values.big).toBe(values.big);
  try { e('x'.repeat(1500000)).toBe('y'); } catch (x) {}
  try { e({ ['k'.repeat(1500000)]: 1 }).toBe(new Error('m'.repeat(1500000))); } catch (x) {}
  await e(Promise.reject(new Error('no'))).rejects.toThrow('no');
  try { await e(Promise.resolve(3)).resolves.toBe(4); } catch (x) {}
  e(1).toMatchQuietly(2);
  const twins = vm.runInContext(`(() => {
    const A = class Thing { constructor() { this.a = 1; } };
    const B = class Thing { constructor() { this.a = 1; } };
    return [new A(), new A(), new B()];
  })()`, realm);
  e([twins[0], twins[1], twins[2]]).toStrictEqual([twins[1], twins[0], twins[2]]);
  e(twins[0]).toStrictEqual(twins[2]);  // the stand-in passes it (JSON), real jest does not: two constructors
  const answers = [];
  for (let i = 0; i < 200; i++) {
    const seed = require('crypto').createHash('sha256').update(String(i)).digest('hex');
    const k = knownAnswers(seed, 0);
    let failThrew = false, passThrew = false;
    try { k.fail(expect); } catch (x) { failThrew = true; }
    try { k.pass(expect); } catch (x) { passThrew = true; }
    answers.push([failThrew, passThrew]);
  }
  console.log(JSON.stringify({ records: records, calls: calls, answers: answers }));
})();
"""


def _run(tmp_path: Path) -> dict[str, Any]:
    # next to every module the harness writes (channel.js and what the shared primordials require)
    harnessed = harness.prepare("node_modules/.bin/jest --runTestsByPath a.test.js")
    assert harnessed is not None
    for path, data in harnessed.files.items():
        (tmp_path / Path(path).name).write_bytes(data)
    text = "'use strict';\n" + PRIMORDIALS_JS + RECORDER_JS + STAND_IN + SCRIPT
    (tmp_path / "check.js").write_text(text.replace("__ORACLE__", "true").replace("__CANARY__", "{}"))
    proc = subprocess.run(["node", "check.js"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("recorder"))


def _records(out: dict[str, Any]) -> list[dict[str, Any]]:
    assert all(r["type"] == "assertion" and r["titles"] == ["suite", "test"] for r in out["records"])
    return [r["record"] for r in out["records"]]


def test_values_of_a_patched_realm_are_encoded_with_the_captured_primitives(out: dict[str, Any]) -> None:
    first = _records(out)[0]
    assert (first["seq"], first["matcher"], first["not"], first["promise"], first["inrealm"]) == (
        0,
        "toBe",
        False,
        "",
        "pass",
    )
    assert first["test"] == "suite > test"
    received = first["received"]
    entries = dict(received["entries"])
    assert received["t"] == "object" and received["ctor"] == "Object" and received["symbols"][0][0] == "s"
    assert entries["m"]["t"] == "map" and entries["m"]["entries"][0][1]["t"] == "set"
    assert {k: v for k, v in entries["d"].items() if k != "id"} == {"t": "date", "v": 5}  # numbered: refs resolve
    assert entries["err"]["t"] == "error" and (entries["err"]["ctor"], entries["err"]["message"]) == (
        "TypeError",
        "bad",
    )
    assert {k: v for k, v in entries["r"].items() if k != "id"} == {"t": "regexp", "source": "a", "flags": "g"}
    assert [i["t"] for i in entries["holes"]["items"]] == ["number", "hole", "number"]
    assert (entries["z"]["v"], entries["nan"]["v"], entries["big"]) == ("-0", "NaN", {"t": "bigint", "v": "10"})
    assert entries["self"] == {"t": "ref", "id": received["id"]}
    assert first["expected"] == [{"t": "ref", "id": received["id"]}]  # one id space per record


def test_outcomes_modifiers_thrown_values_and_promises(out: dict[str, Any]) -> None:
    records = _records(out)
    assert [(r["matcher"], r["not"], r["promise"], r["inrealm"]) for r in records[1:4]] == [
        ("toBe", True, "", "pass"),
        ("toBe", False, "", "fail"),
        ("toThrow", False, "", "pass"),
    ]
    assert out["calls"] == 1  # the received function ran once, by the matcher, through the recorder's wrapper
    thrown = records[3]["received"]
    assert thrown["t"] == "thrown" and thrown["threw"] is True and thrown["value"]["message"] == "boom"
    rejects, resolves = records[10], records[11]
    assert (rejects["promise"], rejects["inrealm"], rejects["received"]["message"]) == ("rejects", "pass", "no")
    assert (rejects["settled"], resolves["settled"]) == ("rejected", "resolved")
    assert (resolves["promise"], resolves["inrealm"], resolves["received"]) == (
        "resolves",
        "fail",
        {"t": "number", "v": "3"},
    )
    assert records[12]["inrealm"] == "fail"  # failed quietly (suppressedErrors): a failure all the same


def test_asymmetric_matchers_mocks_and_cuts(out: dict[str, Any]) -> None:
    records = _records(out)
    asym = records[4]["expected"][0]
    assert (asym["t"], asym["kind"], asym["inverse"]) == ("asymmetric", "objectContaining", False)
    assert asym["sample"]["entries"] == [["a", {"t": "number", "v": "1"}]]
    mock = records[5]["received"]["mock"]
    assert mock == {"calls": [[{"t": "number", "v": "1"}, {"t": "string", "v": "x"}]],
                    "results": [{"type": "return", "value": {"t": "number", "v": "2"}}]}  # fmt: skip
    assert '"why": "depth"' in json.dumps(records[6]["received"])
    assert '"why": "size"' in json.dumps(records[7]["received"])
    assert records[8]["received"] == {
        "t": "cut",
        "why": "size",
    }  # 1.5 million characters: the channel's line stays small
    assert records[8]["expected"] == [{"t": "string", "v": "y"}]
    assert records[9]["received"] == records[9]["expected"][0] == {"t": "cut", "why": "size"}  # long keys, messages


def test_the_known_answers_fail_and_pass_as_declared_for_any_seed(out: dict[str, Any]) -> None:
    assert out["answers"] == [[True, False]] * 200


def test_two_classes_sharing_a_name_are_told_apart_by_constructor_identity(out: dict[str, Any]) -> None:
    """``ctor_id`` (docs/oracle-decider.md): one number per distinct constructor in a record, so ``toStrictEqual``
    of two instances of same-named classes is decided as jest decides it (not equal), and of one class equal."""
    from pytest_mobilebench.oracle import decide_record

    strict = [r for r in _records(out) if r["matcher"] == "toStrictEqual"]
    same, twins = strict[-2], strict[-1]
    ids = [item["ctor_id"] for item in same["received"]["items"]]
    assert ids[0] == ids[1] != ids[2], same["received"]
    assert twins["received"]["ctor_id"] != twins["expected"][0]["ctor_id"]
    assert decide_record(same).outcome == "pass"
    assert decide_record(twins).outcome == "fail"  # the stand-in's in-realm pass is what a forgery would claim
