"""The harness's own jest modules (issue 17, items 1 and 2), as text the harness writes into the container.

Four CommonJS files (the runner in one of two forms), written root-owned and read-only to the test user, in a folder outside the
repository, and given to jest on its command line (never through the project's configuration):

* ``launch.js`` (:func:`launch_js`) - node's main script (``node launch.js <jest's arguments>``), before any
  project code: checks descriptors 3, 4 and 5 by ``fstat`` (regular files of root's; the key 32 bytes), keys
  the channel, loads the three modules below (so jest finds them loaded and never transforms them), writes
  its status to fd 5, then runs the project's own jest program (``jest``'s ``bin``, else ``jest-cli``'s) in
  its own process; or exits :data:`LAUNCH_REFUSED_EXIT` saying why.
* ``channel.js`` - keyed once by the launcher (``open``), keeps its own references to ``fs.writeSync`` and
  the builtins it uses, and appends each record to file descriptor 3 as ``<hmac-sha256 hex> <ascii json>\\n``. The MAC
  is computed in plain JavaScript in the runner's own realm (no ``crypto`` or ``Buffer``, which the code
  under test shares and could patch). Records carry ``seq`` 0, 1, 2 ... in the order written.
* ``runner.js`` - the ``--testRunner``; for jest-circus (``RUNNER_JS``) it wraps ``jest-circus/runner``
  of the project. Before the first
  setup file or the test file is required it freezes the runner's globals (``test``, ``it``,
  ``describe``, ``expect``, hooks: non-writable, non-configurable; the functions and their ``each`` /
  ``only`` / ``skip`` members frozen). Through ``environment.handleTestEvent`` (called by circus in the
  runner's realm) it records, per registered test, the body registered (``add_test``) and compares it at
  ``test_fn_start``, the body's own outcome (``test_fn_success`` / ``test_fn_failure``, which circus already
  inverted for a ``test.failing``, with the ``failing`` flag locked as registered; hooks), and
  ``expect.getState().assertionCalls`` when the body ended. It also keeps its own stack of the
  ``describe`` blocks being declared (start / finish events): each test and block must be declared in the
  top one (not under a block the runner state's ``currentDescribeBlock`` was pointed at), and the stack must
  be empty at ``run_start`` (code that calls ``describe`` and catches its callback's error leaves the block
  open, and the test file's own blocks would nest under the title it chose). One ``file`` record per test file.
* ``runner.js`` for jest-jasmine2 (``JASMINE2_RUNNER_JS``; jest 26 and older, or ``testRunner: 'jasmine2'``):
  wraps ``jest-jasmine2`` of the project. jasmine runs in the test's own realm, so at the same moment it
  also locks what the test code can reach: the env's functions (``clearReporters`` made a recording no-op),
  ``jasmine.getEnv`` / ``Spec`` / ``Suite`` (harness subclasses, classes and prototypes frozen). Each spec
  gets its body wrapped once at construction (outcome and ``assertionCalls`` recorded when it calls back),
  its ``queueableFn`` frozen, an own ``addExpectationResult`` counting failures, and its identity fields
  locked, and its titles fixed at registration (the env's ``describe`` functions wrapped to track the
  suites being declared); a harness jasmine reporter compares them with the titles each result runs
  under. ``passed`` needs the
  wrapped body to pass, no counted failure and jasmine's ``passed``. :data:`RUNNERS` maps the runner
  names of :func:`..harness.jest_runner` to the module text.
* ``reporter.js`` - a ``--reporters`` entry: a ``start`` record when jest starts, and the runner's own
  final summary (``numPassedTests`` ...) and per-test statuses as the ``final`` record.

Statuses in records: ``passed``, ``failed``, ``skipped``. What an in-process candidate can still do is in
the README's threat model (it shares the process: reading the key from the process's memory).
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["CHANNEL_JS", "JASMINE2_RUNNER_JS", "LAUNCH_REFUSED_EXIT", "REPORTER_JS", "RUNNER_JS", "RUNNERS", "RUNNER_PACKAGES",
           "launch_js"]

CHANNEL_JS: Final[str] = r"""'use strict';
// mobilebench harness: the out-of-band result channel (fd 3), keyed once by the launcher (launch.js).
const fs = require('fs');
const writeSync = fs.writeSync;
const stringify = JSON.stringify;
const keysOf = Object.keys;
let key = null;
function open(bytes) {
  if (key !== null) return false;  // keyed once, by the launcher, before any project code ran
  key = [];
  for (let i = 0; i < bytes.length; i++) key.push(bytes[i] & 255);
  return true;
}
const K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2];
function sha256(bytes) {
  const h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const msg = bytes.slice();
  const bits = bytes.length * 8;
  msg.push(0x80);
  while (msg.length % 64 !== 56) msg.push(0);
  for (let i = 7; i >= 0; i--) msg.push(i >= 4 ? 0 : (bits >>> (i * 8)) & 255);
  const w = new Array(64);
  for (let off = 0; off < msg.length; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4;
      w[i] = ((msg[j] << 24) | (msg[j + 1] << 16) | (msg[j + 2] << 8) | msg[j + 3]) | 0;
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15], b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (hh + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + hh) | 0;
  }
  const out = [];
  for (const x of h) for (let i = 3; i >= 0; i--) out.push((x >>> (i * 8)) & 255);
  return out;
}
function hmac(bytes) {
  let k = key.length > 64 ? sha256(key) : key.slice();
  while (k.length < 64) k.push(0);
  const inner = sha256(k.map((x) => x ^ 0x36).concat(bytes));
  const outer = sha256(k.map((x) => x ^ 0x5c).concat(inner));
  let hex = '';
  for (const x of outer) hex += (x < 16 ? '0' : '') + x.toString(16);
  return hex;
}
function ascii(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out += c < 127 ? text[i] : '\\u' + ('000' + c.toString(16)).slice(-4);
  }
  return out;
}
let seq = 0;
function emit(body) {
  if (key === null) return;
  const record = { seq: seq++ };
  const names = keysOf(body);
  for (let i = 0; i < names.length; i++) record[names[i]] = body[names[i]];
  const text = ascii(stringify(record));
  const bytes = [];
  for (let i = 0; i < text.length; i++) bytes.push(text.charCodeAt(i));
  try {
    writeSync(3, hmac(bytes) + ' ' + text + '\n');
  } catch (e) {
    // fd 3 was closed or replaced under the runner: the missing record is the evidence
  }
}
// frozen: the runner and reporter keep their own reference to emit, taken when the launcher loaded them
module.exports = Object.freeze({ emit: emit, open: open });
"""

#: shared by both runners, ahead of their own code: the primordials they keep before any candidate code runs,
#: ``freezeDeep`` (a test global and its function-valued properties, ``depth`` levels down), and
#: ``freezeOnFirstLoad`` (``freeze`` called when jest's runtime first loads a setup file or the test file,
#: before any of their code runs)
_PRIMORDIALS_JS: Final[str] = r"""const apply = Reflect.apply;
const own = Object.getOwnPropertyNames;
const describeOwn = Object.getOwnPropertyDescriptor;
const define = Object.defineProperty;
const freezeObject = Object.freeze;

// a runner module's function: its exports (jest 29 and older) or their default (jest 30's build)
const defaultOf = (m) => (typeof m === 'function' ? m : m && m.default);

function freezeDeep(value, depth) {
  if (typeof value !== 'function' || depth < 0) return;
  for (const name of own(value)) {
    const d = describeOwn(value, name);
    if (d && typeof d.value === 'function' && name !== 'prototype') freezeDeep(d.value, depth - 1);
  }
  try { freezeObject(value); } catch (e) { /* already frozen */ }
}

function freezeOnFirstLoad(runtime, files, freeze, testPath, loaded) {
  const targets = new Set(files);
  const requireModule = runtime.requireModule;
  const importModule = runtime.unstable_importModule;
  runtime.requireModule = function (from, ...rest) {
    if (rest.length === 0 && targets.has(from)) freeze();
    const out = apply(requireModule, runtime, [from, ...rest]);
    if (rest.length === 0 && from === testPath) loaded();
    return out;
  };
  runtime.unstable_importModule = function (from, ...rest) {
    if (rest.length === 0 && targets.has(from)) freeze();
    const out = apply(importModule, runtime, [from, ...rest]);
    if (rest.length !== 0 || from !== testPath) return out;
    return out && typeof out.then === 'function' ? out.then((v) => { loaded(); return v; }) : (loaded(), out);
  };
}

// the matcher table (expect's, on the global of the realm it was loaded in: the test's own with jest-circus's and
// jest-jasmine2's adapters): snapshotted at the freeze, checked at every test start. A matcher present at the
// freeze and replaced or removed later (expect.extend from the code under test, redefining toBe to forgive the
// bug's error shape) is a problem; matchers added later (a testing library's extensions) are named, since
// their verdicts cannot be re-decided outside the realm
const MATCHERS = Symbol.for('$$jest-matchers-object');
function matcherTable(realms) {
  for (const realm of realms) {
    const holder = realm && realm[MATCHERS];
    if (holder && holder.matchers && typeof holder.matchers === 'object') return holder.matchers;
  }
  return null;
}
function snapshotMatchers(realms) {
  const table = matcherTable(realms);
  const snapshot = new Map();
  if (table !== null) for (const name of own(table)) snapshot.set(name, table[name]);
  return snapshot;
}
function matcherChanges(realms, snapshot, added) {
  const table = matcherTable(realms);
  const found = [];
  if (table === null) return snapshot.size ? ['the matcher table was removed after the freeze'] : found;
  for (const [name, fn] of snapshot) {
    if (table[name] !== fn) found.push('the built-in matcher ' + name + ' was redefined after the freeze (expect.extend)');
  }
  for (const name of own(table)) if (!snapshot.has(name)) added.add(name);
  return found;
}

// the known-answer canaries of this run ({suite, fail, pass, value}), declared in every test file once it has
// loaded (so they share its module instances: the code under test is never imported a second time), with
// the frozen globals; focused (test.only / fdescribe) when the file focused tests of its own
const CANARY = __CANARY__;
function declareCanaries(describe, declare, expectFn) {
  const value = CANARY.value;
  describe(CANARY.suite, () => {
    declare(CANARY.fail, () => { expectFn(value).toBe(value + 1); });
    declare(CANARY.pass, () => { expectFn(value).toBe(value); });
  });
}
"""

RUNNER_JS: Final[str] = r"""'use strict';
// mobilebench harness: jest-circus, with frozen globals and a record of every registered test body.
// the channel's writer, captured when the launcher loads this module (before any project code): never looked
// up again through the channel module's exports, which code in the runner's realm could reach
const emit = require('./channel.js').emit;
let circus = null;  // the project's jest-circus, loaded at the first test file (never at the launcher's start)
const loadCircus = () => circus || (circus = defaultOf(require(require.resolve('jest-circus/runner', { paths: [process.cwd()] }))));
const NAMES = ['describe', 'fdescribe', 'xdescribe', 'it', 'fit', 'xit', 'test', 'xtest', 'expect',
  'beforeAll', 'afterAll', 'beforeEach', 'afterEach'];
""" + _PRIMORDIALS_JS + r"""
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
  const freeze = () => {
    if (frozen !== null) return;
    frozen = {};
    for (const name of NAMES) {
      const value = g[name];
      if (value === undefined) { problems.push('global ' + name + ' is missing'); continue; }
      frozen[name] = value;
      if (name !== 'expect') freezeDeep(value, 2);
      define(g, name, { value: value, writable: false, configurable: false, enumerable: true });
    }
    expectObject = frozen.expect || null;
    getState = expectObject ? expectObject.getState : null;
    matchers = snapshotMatchers([g, global]);
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
          problems.push('a describe block was left open when the tests started (' + openBlocks.length + ' not finished: ' +
            'its callback threw and the error was caught), so the tests declared after it ran under its title');
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
          try { define(test, 'failing', { value: failing, writable: false, configurable: false }); } catch (e) { /* kept */ }
        }
        break;
      }
      case 'test_fn_start': {
        const r = record(event.test);
        r.started = true;
        if (r.fn !== null && event.test.fn !== r.fn) r.problems.push('its body was replaced after registration');
        if (matchers !== null) for (const p of matcherChanges([g, global], matchers, customMatchers)) r.problems.push(p);
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
      tests.push({ titles: r.titles, status: status, assertions: r.assertions, problems: r.problems });
    }
    const intact = frozen !== null && NAMES.every((n) => !(n in frozen) || g[n] === frozen[n]);
    if (matchers !== null) for (const p of matcherChanges([g, global], matchers, customMatchers)) problems.push(p);
    emit({ type: 'file', path: String(testPath), frozen: frozen !== null, intact: intact,
      problems: problems, error: error, tests: tests, custom_matchers: [...customMatchers].sort() });
  }
};
"""

REPORTER_JS: Final[str] = r"""'use strict';
// mobilebench harness: the runner's own start and final summary, through the channel.
// the channel's writer, captured when the launcher loads this module (before any project code): never looked
// up again through the channel module's exports, which code in the runner's realm could reach
const emit = require('./channel.js').emit;
class MobilebenchReporter {
  constructor() {
    emit({ type: 'start' });
  }
  onRunComplete(contexts, results) {
    const files = [];
    const suites = results.testResults;
    for (let i = 0; i < suites.length; i++) {
      const tests = [];
      const list = suites[i].testResults;
      for (let j = 0; j < list.length; j++) {
        const titles = [];
        for (let k = 0; k < list[j].ancestorTitles.length; k++) titles.push(String(list[j].ancestorTitles[k]));
        titles.push(String(list[j].title));
        tests.push({ titles: titles, status: String(list[j].status) });
      }
      files.push({ path: String(suites[i].testFilePath), exec_error: Boolean(suites[i].testExecError), tests: tests });
    }
    emit({ type: 'final', numPassedTests: results.numPassedTests, numFailedTests: results.numFailedTests,
      numTotalTests: results.numTotalTests, numFailedTestSuites: results.numFailedTestSuites,
      numRuntimeErrorTestSuites: results.numRuntimeErrorTestSuites, files: files });
  }
  getLastError() {
    return undefined;
  }
}
module.exports = MobilebenchReporter;
"""

JASMINE2_RUNNER_JS: Final[str] = r"""'use strict';
// mobilebench harness: jest-jasmine2 with frozen globals, a locked jasmine tree, and the harness's own
// record of every spec (its registered body wrapped once, its failures counted where jasmine adds them).
// the channel's writer, captured when the launcher loads this module (before any project code): never looked
// up again through the channel module's exports, which code in the runner's realm could reach
const emit = require('./channel.js').emit;
let jasmine2 = null;  // the project's jest-jasmine2, loaded at the first test file
const loadJasmine2 = () => jasmine2 || (jasmine2 = defaultOf(require(require.resolve('jest-jasmine2', { paths: [process.cwd()] }))));
const NAMES = ['describe', 'fdescribe', 'xdescribe', 'it', 'fit', 'xit', 'test', 'xtest', 'expect',
  'beforeAll', 'afterAll', 'beforeEach', 'afterEach', 'pending', 'fail', 'jasmine'];
const SHALLOW = ['expect', 'jasmine'];
const SPEC_FIELDS = ['queueableFn', 'result', 'id', 'description', 'onStart', 'resultCallback',
  'beforeAndAfterFns', 'queueRunnerFactory', 'userContext', 'getSpecName'];
const SUITE_FIELDS = ['id', 'description', 'parentSuite', 'result', 'children', 'beforeFns', 'afterFns',
  'beforeAllFns', 'afterAllFns'];
const RESULT_FIELDS = ['id', 'description', 'fullName'];
const SKIPPED = ['pending', 'disabled', 'todo'];
""" + _PRIMORDIALS_JS + r"""const protoOf = Object.getPrototypeOf;

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
    suiteStarted(result) { suites.push(String(result.description)); },
    suiteDone() { suites.pop(); },
    specDone(result) {
      const titles = [...suites, String(result.description)];
      const e = entries.get(result) || entry(result, titles, true);
      if (titles.length !== e.titles.length || titles.some((t, i) => t !== e.titles[i])) {
        e.problems.push('it ran as "' + titles.join(' > ') + '", registered under other titles');
      }
      const status = String(result.status);
      const failed = result.failedExpectations ? result.failedExpectations.length : 1;
      if (SKIPPED.includes(status)) e.status = 'skipped';
      else e.status = e.ran && e.outcome === 'passed' && !e.failures && !failed && status === 'passed' ? 'passed' : 'failed';
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
        if (typeof definitions !== 'function' || definitions.length > 0) return apply(declare, this, [description, definitions, ...rest]);
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
    for (const name of NAMES) {
      const value = g[name];
      if (value === undefined) { problems.push('global ' + name + ' is missing'); continue; }
      frozen[name] = value;
      if (!SHALLOW.includes(name)) freezeDeep(value, 2);
      lock(g, name, value);
    }
    expectObject = frozen.expect || null;
    getState = expectObject ? expectObject.getState : null;
    matchers = snapshotMatchers([g, global]);
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
    emit({ type: 'file', path: String(testPath), frozen: frozen !== null, intact: intact,
      problems: problems, error: error, tests: tests, custom_matchers: [...customMatchers].sort() });
  }
};
"""

#: the module each runner of :data:`RUNNERS` wraps (the launcher checks it resolves before jest starts)
RUNNER_PACKAGES: Final[dict[str, str]] = {"circus": "jest-circus/runner", "jasmine2": "jest-jasmine2"}

#: the exit status of a launcher that refused to start jest (its reasons are in the status file)
LAUNCH_REFUSED_EXIT: Final[int] = 97

#: the launcher, node's main script; ``__RUNNER_PACKAGE__`` is replaced by :func:`launch_js`
_LAUNCH_JS: Final[str] = r"""'use strict';
// mobilebench harness: the jest launcher, node's main script, so it runs before any code of the project.
// It checks the descriptors the harness opened (3: channel, 4: key, 5: this launcher's status) by fstat
// (a descriptor is never assumed: in a process another program started they can be anything), reads the
// key, loads the harness's own modules (jest then finds them loaded and never transforms them), writes its
// status to fd 5 and closes it, then runs the project's own jest program in this very process.
const fs = require('fs');
const path = require('path');
const KEY_BYTES = 32;
const problems = [];
function kind(st) {
  if (st.isFile()) return 'regular file';
  if (st.isFIFO()) return 'pipe';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isDirectory()) return 'directory';
  return 'special file';
}
function check(fd, what, size) {
  let st;
  try { st = fs.fstatSync(fd); } catch (e) { return 'descriptor ' + fd + ' (' + what + ') is not open'; }
  if (!st.isFile()) return 'descriptor ' + fd + ' (' + what + ') is a ' + kind(st) + ', not the harness\'s file';
  if (st.uid !== 0) return 'descriptor ' + fd + ' (' + what + ') is not owned by root';
  if (size !== undefined && st.size !== size) return 'descriptor ' + fd + ' (' + what + ') holds ' + st.size + ' bytes, not ' + size;
  return null;
}
const statusProblem = check(5, 'status');
for (const [fd, what, size] of [[3, 'channel'], [4, 'key', KEY_BYTES]]) {
  const found = check(fd, what, size);
  if (found) problems.push(found);
}
if (problems.length === 0) {
  try {
    const key = Buffer.alloc(KEY_BYTES);
    const got = fs.readSync(4, key, 0, KEY_BYTES, 0);
    fs.closeSync(4);
    if (got !== KEY_BYTES) throw new Error('read ' + got + ' bytes of the key');
    require('./channel.js').open(key);
  } catch (e) { problems.push('the key could not be read: ' + String(e && e.message)); }
}
for (const name of ['./channel.js', './runner.js', './reporter.js']) {
  try { require(name); } catch (e) { problems.push('the harness module ' + name + ' does not load: ' + String(e && e.message)); }
}
// from the project, then from the package whose program .bin/jest is (a preset's proxy depending on jest)
const searched = [process.cwd()];
try { searched.push(path.dirname(fs.realpathSync(path.join(process.cwd(), 'node_modules', '.bin', 'jest')))); } catch (e) { /* none */ }
function resolveFrom(request) {
  try { return require.resolve(request, { paths: searched }); } catch (e) { return null; }
}
let cli = null;
for (const name of ['jest', 'jest-cli']) {
  const manifest = resolveFrom(name + '/package.json');
  if (manifest === null) continue;
  try {
    const bin = JSON.parse(fs.readFileSync(manifest, 'utf8')).bin;
    const rel = typeof bin === 'string' ? bin : bin && bin.jest;
    if (typeof rel === 'string') { cli = path.resolve(path.dirname(manifest), rel); break; }
  } catch (e) { /* the next package */ }
}
if (cli === null) problems.push('jest\'s own program cannot be resolved from ' + process.cwd() + ' (neither jest nor jest-cli)');
if (resolveFrom(__RUNNER_PACKAGE__) === null) problems.push('the runner ' + __RUNNER_PACKAGE__ + ' cannot be resolved');
const status = JSON.stringify({ ok: problems.length === 0 && statusProblem === null, problems: problems, cli: cli,
  node: process.version }) + '\n';
if (statusProblem === null) {
  try { fs.writeSync(5, status); fs.closeSync(5); } catch (e) { problems.push('the status could not be written'); }
} else {
  problems.push(statusProblem);
}
if (problems.length > 0) {
  process.stderr.write('mobilebench harness: jest not started: ' + problems.join('; ') + '\n');
  process.exit(__EXIT__);
}
process.argv[1] = cli;
require(cli);
"""


def launch_js(runner: str) -> str:
    """The launcher's text for ``runner`` (a key of :data:`RUNNER_PACKAGES`).

    It runs as ``node launch.js <jest's arguments>`` and writes one JSON line to fd 5: ``{"ok": bool,
    "problems": [sentence, ...], "cli": path of jest's program or null, "node": version}``; when not ok it
    exits :data:`LAUNCH_REFUSED_EXIT` without starting jest.
    """
    return _LAUNCH_JS.replace("__RUNNER_PACKAGE__", json.dumps(RUNNER_PACKAGES[runner])).replace(
        "__EXIT__", str(LAUNCH_REFUSED_EXIT))


#: the harness's ``--testRunner`` module per jest runner (:func:`..harness.jest_runner`)
RUNNERS: Final[dict[str, str]] = {"circus": RUNNER_JS, "jasmine2": JASMINE2_RUNNER_JS}
