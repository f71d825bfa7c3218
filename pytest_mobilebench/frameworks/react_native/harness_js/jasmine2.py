"""The harness's ``runner.js`` for jest-jasmine2: see :mod:`..harness_js`."""

from __future__ import annotations

from typing import Final

from pytest_mobilebench.frameworks.react_native.harness_js.recorder import RECORDER_JS
from pytest_mobilebench.frameworks.react_native.harness_js.shared import PRIMORDIALS_JS

__all__ = ["JASMINE2_RUNNER_JS"]

JASMINE2_RUNNER_JS: Final[str] = (
    r"""'use strict';
// mobilebench harness: jest-jasmine2 with frozen globals, a locked jasmine tree, and the harness's own
// record of every spec (its registered body wrapped once, its failures counted where jasmine adds them).
// the channel's writer, captured when the launcher loads this module (before any project code): never looked
// up again through the channel module's exports, which code in the runner's realm could reach
const emit = require('./channel.js').emit;
// the project's runner as node finds it from jest-config's real folder (resolve.js: pnpm's links followed)
const resolveFrom = require('./resolve.js').resolveFrom;
let jasmine2 = null;  // the project's jest-jasmine2, loaded at the first test file
const loadJasmine2 = () =>
  jasmine2 || (jasmine2 = defaultOf(require(resolveFrom('jest-jasmine2', process.cwd()))));
const NAMES = ['describe', 'fdescribe', 'xdescribe', 'it', 'fit', 'xit', 'test', 'xtest', 'expect',
  'beforeAll', 'afterAll', 'beforeEach', 'afterEach', 'pending', 'fail', 'jasmine'];
const SHALLOW = ['expect', 'jasmine'];
const SPEC_FIELDS = ['queueableFn', 'result', 'id', 'description', 'onStart', 'resultCallback',
  'beforeAndAfterFns', 'queueRunnerFactory', 'userContext', 'getSpecName'];
const SUITE_FIELDS = ['id', 'description', 'parentSuite', 'result', 'children', 'beforeFns', 'afterFns',
  'beforeAllFns', 'afterAllFns'];
const RESULT_FIELDS = ['id', 'description', 'fullName'];
const SKIPPED = ['pending', 'disabled', 'todo'];
"""
    + PRIMORDIALS_JS
    + RECORDER_JS
    + r"""const protoOf = Object.getPrototypeOf;

function freezeClass(cls) {
  for (let c = cls; typeof c === 'function' && describeOwn(c, 'prototype'); c = protoOf(c)) {
    freezeObject(c.prototype);
    freezeObject(c);
  }
}

module.exports = async function mobilebenchJasmine2(globalConfig, config, environment, runtime, testPath) {
  const g = environment.global;
  const problems = [];
  const entries = new Map();
  const suites = [];
  const suiteTitles = new WeakMap();
  const declaring = [];
  let frozen = null;
  let locked = null;
  let focused = false;  // the test file called fit / fdescribe (through the env, wrapped at the lock)
  let getState = null;
  let expectObject = null;
  let matchers = null;
  const customMatchers = new Set();
  let running = null;  // the harness's entry of the spec whose hooks and body run (specStarted .. specDone)
  let serializer = null;
  const recorder = { emit: emit, path: String(testPath), current: () => running,
    snapshotFile: snapshotFileOf(config, String(testPath)), serialize: (value) => serializer(value) };
  const lock = (object, name, value) => {
    const d = describeOwn(object, name);
    if (value === undefined && (!d || !('value' in d))) return;
    try {
      define(object, name, { value: value === undefined ? d.value : value, writable: false, configurable: false,
        enumerable: d ? d.enumerable : false });
    } catch (e) { problems.push('could not lock ' + name); }
  };
  const assertionCalls = () => {
    try {
      const state = getState ? apply(getState, expectObject, []) : null;
      return state && typeof state.assertionCalls === 'number' ? state.assertionCalls : null;
    } catch (e) { return null; }
  };
  const entry = (key, titles, strayed) => {
    const e = { titles: titles, ran: false, outcome: null, failures: 0, assertions: null, status: null,
      problems: strayed ? ['ran without being registered'] : [] };
    entries.set(key, e);
    return e;
  };
  const body = (fn, e) => function mobilebenchBody(done) {
    e.ran = true;
    if (matchers !== null) for (const p of matcherChanges([g, global], matchers, customMatchers)) e.problems.push(p);
    const finish = (ok) => {
      if (e.outcome !== null) return;
      e.outcome = ok ? 'passed' : 'failed';
      e.assertions = assertionCalls();
    };
    const next = function (...args) { finish(!args[0]); return apply(done, this, args); };
    next.fail = function (...args) { finish(false); return apply(done.fail, this, args); };
    try { return apply(fn, this, [next]); } catch (err) { finish(false); throw err; }
  };
  const register = (spec) => {
    const e = entry(spec.result, [...(declaring[declaring.length - 1] || []), String(spec.description)], false);
    const add = spec.addExpectationResult;
    lock(spec.queueableFn, 'fn', body(spec.queueableFn.fn, e));
    freezeObject(spec.queueableFn);
    lock(spec, 'addExpectationResult', function (passed, ...rest) {
      if (!passed) e.failures++;
      return apply(add, this, [passed, ...rest]);
    });
    lock(spec, 'execute', spec.execute);
    for (const name of SPEC_FIELDS) lock(spec, name);
    for (const name of RESULT_FIELDS) lock(spec.result, name);
  };
  const reporter = {
    specStarted(result) { running = entries.get(result) || null; },
    suiteStarted(result) { suites.push(String(result.description)); },
    suiteDone() { suites.pop(); },
    specDone(result) {
      const titles = [...suites, String(result.description)];
      const e = entries.get(result) || entry(result, titles, true);
      running = null;
      if (titles.length !== e.titles.length || titles.some((t, i) => t !== e.titles[i])) {
        e.problems.push('it ran as "' + titles.join(' > ') + '", registered under other titles');
      }
      const status = String(result.status);
      const failed = result.failedExpectations ? result.failedExpectations.length : 1;
      if (SKIPPED.includes(status)) e.status = 'skipped';
      else {
        const passed = e.ran && e.outcome === 'passed' && !e.failures && !failed && status === 'passed';
        e.status = passed ? 'passed' : 'failed';
      }
      if (status === 'passed' && !e.ran) e.problems.push('reported passed but its registered body never ran');
    },
  };
  const lockJasmine = () => {
    const jasmine = g.jasmine;
    const env = jasmine.getEnv();
    const BaseSpec = jasmine.Spec;
    const BaseSuite = jasmine.Suite;
    class Spec extends BaseSpec { constructor(attrs) { super(attrs); register(this); } }
    class Suite extends BaseSuite {
      constructor(attrs) {
        super(attrs);
        suiteTitles.set(this, [...(suiteTitles.get(attrs.parentSuite) || []), String(this.description)]);
        for (const name of SUITE_FIELDS) lock(this, name);
        for (const name of RESULT_FIELDS) lock(this.result, name);
      }
    }
    freezeClass(Spec);
    freezeClass(Suite);
    lock(jasmine, 'Spec', Spec);
    lock(jasmine, 'Suite', Suite);
    lock(jasmine, 'getEnv', function getEnv() { return env; });
    for (const name of own(jasmine)) {
      const d = describeOwn(jasmine, name);
      if (d && typeof d.value === 'function') lock(jasmine, name);
    }
    const fit = env.fit;
    lock(env, 'fit', function (...args) { focused = true; return apply(fit, this, args); });
    for (const name of ['describe', 'fdescribe', 'xdescribe']) {  // the suite being declared, for the titles
      const declare = env[name];
      lock(env, name, function (description, definitions, ...rest) {
        if (name === 'fdescribe') focused = true;
        if (typeof definitions !== 'function' || definitions.length > 0) {
          return apply(declare, this, [description, definitions, ...rest]);
        }
        const body = function () {
          declaring.push(suiteTitles.get(this) || []);
          try { return apply(definitions, this, []); } finally { declaring.pop(); }
        };
        return apply(declare, this, [description, body, ...rest]);
      });
    }
    lock(env, 'clearReporters', () => { problems.push('the reporters were cleared'); });
    env.addReporter(reporter);
    for (const name of own(env)) {
      const d = describeOwn(env, name);
      if (d && typeof d.value === 'function' && name !== 'specFilter') lock(env, name);
    }
    return { jasmine: jasmine, Spec: Spec, env: env, it: env.it };
  };
  const freeze = () => {
    if (frozen !== null) return;
    frozen = {};
    if (ORACLE) serializer = pristineSerializer(config);  // the pristine snapshot serialiser, before project code
    for (const name of NAMES) {
      const value = name === 'expect' ? recordingExpect(g[name], recorder) : g[name];
      if (value === undefined) { problems.push('global ' + name + ' is missing'); continue; }
      frozen[name] = value;
      if (!SHALLOW.includes(name)) freezeDeep(value, 2);
      try { tripwires.guardGlobal(g, name, value); } catch (e) { problems.push('could not lock ' + name); }
    }
    expectObject = frozen.expect || null;
    getState = expectObject ? expectObject.getState : null;
    matchers = snapshotMatchers([g, global]);
    tripwires.guardMatchers([g, global], MATCHERS);
    try { locked = lockJasmine(); } catch (e) { problems.push('harness: ' + String(e && e.message)); }
  };
  let declared = false;
  const canaries = () => {  // after the test file loaded: focused (fdescribe) when it focused specs of its own
    if (declared || frozen === null || locked === null) return;
    declared = true;
    try { declareCanaries(focused ? frozen.fdescribe : frozen.describe, frozen.it, frozen.expect); } catch (e) {
      problems.push('harness: the canaries could not be declared: ' + String(e && e.message));
    }
  };
  freezeOnFirstLoad(runtime, [...config.setupFilesAfterEnv, testPath], freeze, testPath, canaries);
  // the tripwires before the setup files and the test file run (issue 31, item 3)
  tripwires.enter(config.rootDir, [...(config.setupFiles || []), ...(config.setupFilesAfterEnv || []), testPath]);
  const guarded = tripwires.guardProcess(g);
  tripwires.guardJestObject(runtime);
  let error = null;
  try {
    return await loadJasmine2()(globalConfig, config, environment, runtime, testPath);
  } catch (e) {
    error = String(e && e.message).slice(0, 500);
    throw e;
  } finally {
    const tests = [];
    for (const e of entries.values()) {
      tests.push({ titles: e.titles, status: e.status || 'failed', assertions: e.assertions,
        problems: e.problems });
    }
    const intact = frozen !== null && locked !== null && NAMES.every((n) => !(n in frozen) || g[n] === frozen[n])
      && g.jasmine.Spec === locked.Spec && locked.env.it === locked.it;
    if (matchers !== null) for (const p of matcherChanges([g, global], matchers, customMatchers)) problems.push(p);
    const tripped = tripwires.drain();
    emit({ type: 'file', path: String(testPath), frozen: frozen !== null, intact: intact,
      problems: problems, error: error, tests: tests, custom_matchers: [...customMatchers].sort(),
      markers_guarded: guarded, touches: tripped.touches, marker_reads: tripped.notes });
  }
};
"""
)
