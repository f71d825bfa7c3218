"""What both runner modules share, ahead of their own code: see :mod:`..harness_js`."""

from __future__ import annotations

from typing import Final

__all__ = ["PRIMORDIALS_JS"]

#: shared by both runners, ahead of their own code: the primordials they keep before any candidate code runs,
#: ``freezeDeep`` (a test global and its function-valued properties, ``depth`` levels down), and
#: ``freezeOnFirstLoad`` (``freeze`` called when jest's runtime first loads a setup file or the test file,
#: before any of their code runs)
PRIMORDIALS_JS: Final[str] = r"""const apply = Reflect.apply;
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

// the matcher table (expect's, on the global of the realm it was loaded in: the test's own with either runner's
// adapter): snapshotted at the freeze, checked at every test start. A matcher present at the
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
    if (table[name] === fn) continue;
    found.push('the built-in matcher ' + name + ' was redefined after the freeze (expect.extend)');
  }
  for (const name of own(table)) if (!snapshot.has(name)) added.add(name);
  return found;
}

// the tripwires (tripwires.js, issue 31 item 3): loaded by the launcher before any project code
const tripwires = require('./tripwires.js');

// the known-answer canaries of this run ({suite, fail, pass, value}), declared in every test file once it has
// loaded (so they share its module instances: the code under test is never imported a second time), with
// the frozen globals; focused (test.only / fdescribe) when the file focused tests of its own
const CANARY = __CANARY__;
function declareCanaries(describe, declare, expectFn) {
  const answers = knownAnswers(SEED, CANARY.value);  // recorder.js: matcher, values and error shape drawn per run
  describe(CANARY.suite, () => {
    declare(CANARY.fail, () => { answers.fail(expectFn); });
    declare(CANARY.pass, () => { answers.pass(expectFn); });
  });
}
"""
