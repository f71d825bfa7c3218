"""The harness's ``runner.js`` for jest-circus: see :mod:`..harness_js`."""

from __future__ import annotations

from typing import Final

from pytest_mobilebench.frameworks.react_native.harness_js.recorder import RECORDER_JS
from pytest_mobilebench.frameworks.react_native.harness_js.shared import PRIMORDIALS_JS

__all__ = ["RUNNER_JS"]

RUNNER_JS: Final[str] = (
    r"""'use strict';
// mobilebench harness: jest-circus, with frozen globals and a record of every registered test body.
// the channel's writer, captured when the launcher loads this module (before any project code): never looked
// up again through the channel module's exports, which code in the runner's realm could reach
const emit = require('./channel.js').emit;
// the project's runner as node finds it from jest-config's real folder (resolve.js: pnpm's links followed)
const resolveFrom = require('./resolve.js').resolveFrom;
let circus = null;  // the project's jest-circus, loaded at the first test file (never at the launcher's start)
const loadCircus = () =>
  circus || (circus = defaultOf(require(resolveFrom('jest-circus/runner', process.cwd()))));
const NAMES = ['describe', 'fdescribe', 'xdescribe', 'it', 'fit', 'xit', 'test', 'xtest', 'expect',
  'beforeAll', 'afterAll', 'beforeEach', 'afterEach'];
"""
    + PRIMORDIALS_JS
    + RECORDER_JS
    + r"""
function chain(block) {
  const names = [];
  for (let b = block; b && b.parent; b = b.parent) names.unshift(String(b.name));
  return names;
}

module.exports = async function mobilebenchRunner(globalConfig, config, environment, runtime, testPath, send) {
  const g = environment.global;
  const registered = new Map();
  const problems = [];
  let frozen = null;
  let getState = null;
  let expectObject = null;
  let matchers = null;
  const customMatchers = new Set();
  let running = null;  // the registered record of the test whose hooks and body run (test_start .. test_done)
  let serializer = null;
  const recorder = { emit: emit, path: String(testPath), current: () => running,
    snapshotFile: snapshotFileOf(config, String(testPath)), serialize: (value) => serializer(value) };
  const freeze = () => {
    if (frozen !== null) return;
    frozen = {};
    if (ORACLE) serializer = pristineSerializer(config);  // the pristine snapshot serialiser, before project code
    for (const name of NAMES) {
      const value = name === 'expect' ? recordingExpect(g[name], recorder) : g[name];
      if (value === undefined) { problems.push('global ' + name + ' is missing'); continue; }
      frozen[name] = value;
      if (name !== 'expect') freezeDeep(value, 2);
      tripwires.guardGlobal(g, name, value);
    }
    expectObject = frozen.expect || null;
    getState = expectObject ? expectObject.getState : null;
    matchers = snapshotMatchers([g, global]);
    tripwires.guardMatchers([g, global], MATCHERS);
  };
  const assertionCalls = () => {
    try {
      const state = getState ? apply(getState, expectObject, []) : null;
      return state && typeof state.assertionCalls === 'number' ? state.assertionCalls : null;
    } catch (e) { return null; }
  };
  let lastState = null;
  let declared = false;
  const canaries = () => {  // after the test file loaded: focused when it focused tests of its own
    if (declared || frozen === null) return;
    declared = true;
    const focused = Boolean(lastState && lastState.hasFocusedTests);
    try { declareCanaries(frozen.describe, focused ? frozen.test.only : frozen.test, frozen.expect); } catch (e) {
      problems.push('harness: the canaries could not be declared: ' + String(e && e.message));
    }
  };
  freezeOnFirstLoad(runtime, [...config.setupFilesAfterEnv, testPath], freeze, testPath, canaries);
  const record = (test) => {
    const r = registered.get(test);
    if (r) return r;
    const stray = { titles: [], fn: null, problems: ['ran without being registered'], outcome: null,
      started: false, hookFailed: false, skipped: false, assertions: null, failing: false };
    registered.set(test, stray);
    return stray;
  };
  const openBlocks = [];
  let root = null;  // the root block as the runner's first event showed it (before any test code ran)
  const declaring = () => (openBlocks.length ? openBlocks[openBlocks.length - 1] : root);
  const moved = (what, name) => problems.push(what + ' was declared under a describe block other than the one being ' +
    'declared (the runner state\'s current block was reassigned): ' + JSON.stringify(String(name)));
  const onEvent = (event, state) => {
    lastState = state;
    if (root === null) root = state.rootDescribeBlock;
    switch (event.name) {
      case 'start_describe_definition':
        if (state.currentDescribeBlock.parent !== declaring()) moved('a describe block', event.blockName);
        openBlocks.push(state.currentDescribeBlock);
        break;
      case 'finish_describe_definition':
        openBlocks.pop();
        break;
      case 'run_start':
        if (openBlocks.length !== 0) {
          problems.push('a describe block was left open when the tests started (' + openBlocks.length +
            ' not finished: its callback threw and the error was caught), so the tests declared after it ran ' +
            'under its title');
        }
        break;
      case 'add_test': {
        if (state.currentDescribeBlock !== declaring()) moved('a test', event.testName);
        const kids = state.currentDescribeBlock.children;
        const test = kids[kids.length - 1];
        if (test && test.type === 'test' && !registered.has(test)) {
          const failing = Boolean(event.failing);
          registered.set(test, { titles: [...chain(state.currentDescribeBlock), String(event.testName)],
            fn: event.fn, problems: [], outcome: null, started: false, hookFailed: false, skipped: false,
            assertions: null, failing: failing });
          // circus inverts a test.failing body's outcome by this flag when the body ends: locked as declared
          try {
            define(test, 'failing', { value: failing, writable: false, configurable: false });
          } catch (e) { /* kept */ }
        }
        break;
      }
      case 'test_start':
        running = record(event.test);
        break;
      case 'test_done':
        running = null;
        break;
      case 'test_fn_start': {
        const r = record(event.test);
        r.started = true;
        if (r.fn !== null && event.test.fn !== r.fn) r.problems.push('its body was replaced after registration');
        if (matchers === null) break;
        for (const p of matcherChanges([g, global], matchers, customMatchers)) r.problems.push(p);
        break;
      }
      case 'test_fn_success':
      case 'test_fn_failure': {
        const r = record(event.test);
        // circus already inverted the event by the test's flag: the body's own outcome undoes that inversion
        const inverted = Boolean(event.test.failing);
        if (inverted !== r.failing && r.fn !== null) r.problems.push('its failing flag was changed after registration');
        r.outcome = (event.name === 'test_fn_success') !== inverted ? 'passed' : 'failed';
        r.assertions = assertionCalls();
        break;
      }
      case 'hook_failure':
        if (event.test) record(event.test).hookFailed = true;
        break;
      case 'test_skip':
      case 'test_todo':
        record(event.test).skipped = true;
        break;
      default:
        break;
    }
  };
  const original = environment.handleTestEvent;
  environment.handleTestEvent = function (event, state) {
    try { onEvent(event, state); } catch (e) { problems.push('harness: ' + String(e && e.message)); }
    return original ? apply(original, environment, [event, state]) : undefined;
  };
  // the tripwires before the setup files and the test file run (issue 31, item 3)
  tripwires.enter(config.rootDir, [...(config.setupFiles || []), ...(config.setupFilesAfterEnv || []), testPath]);
  const guarded = tripwires.guardProcess(g);
  tripwires.guardJestObject(runtime);
  let error = null;
  try {
    return await loadCircus()(globalConfig, config, environment, runtime, testPath, send);
  } catch (e) {
    error = String(e && e.message).slice(0, 500);
    throw e;
  } finally {
    const tests = [];
    for (const r of registered.values()) {
      let status = 'failed';
      if (r.skipped) status = 'skipped';
      else if (r.started && r.outcome !== null && !r.hookFailed) {
        const passed = r.outcome === 'passed';
        status = passed !== r.failing ? 'passed' : 'failed';
      }
      tests.push({ titles: r.titles, status: status, assertions: r.assertions, problems: r.problems,
        failing: r.failing });
    }
    const intact = frozen !== null && NAMES.every((n) => !(n in frozen) || g[n] === frozen[n]);
    if (matchers !== null) for (const p of matcherChanges([g, global], matchers, customMatchers)) problems.push(p);
    const tripped = tripwires.drain();
    emit({ type: 'file', path: String(testPath), frozen: frozen !== null, intact: intact,
      problems: problems, error: error, tests: tests, custom_matchers: [...customMatchers].sort(),
      markers_guarded: guarded, touches: tripped.touches, marker_reads: tripped.notes });
  }
};
"""
)
