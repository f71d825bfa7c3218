"""The harness's tripwires (``tripwires.js``, issue 31 item 3): see :mod:`..harness_js`.

One CommonJS module, loaded by the launcher before any project code (node's module cache then holds it
for the runner), that records every touch of the runner by a repository file other than the test and setup
files: ``{"what", "file", "line"}``, ``file`` relative to the repository root, from a stack the module
captures and formats itself (``Error.captureStackTrace`` and the call sites' ``getFileName`` /
``getLineNumber`` kept when it loads, never the realm's ``Error.prepareStackTrace``). Tripwires:

* the runner's globals (``describe``, ``it``, ``test``, ``expect``, hooks ...: accessors from the freeze on,
  their values unchanged) and the ``jest`` object each module of the repository receives (a proxy);
* the matcher table (``expect``'s holder's ``matchers``; its ``state``, read several times by every assertion,
  is left unguarded: a stack per read doubled the harness's CPU time on 20,000 assertions);
* the harness's own modules in node's module cache (``require.cache`` / ``Module._cache`` entries);
* the runner markers in the test realm's ``process.env`` (``JEST_WORKER_ID`` and every ``JEST_*`` name:
  hidden from such a file); ``NODE_ENV`` is only noted (``marker_reads``): babel presets and real projects'
  own code read it (pagopa/io-app's ``ts/utils/environment.ts``: ``isTestEnv``), so hiding it changes
  what an honest fix does;
* the worker's message port (``process.send``, ``process.channel``, ``process.connected``,
  ``process.disconnect`` of the test realm: jest runs in band under the harness, so there is none to reach).

The grader decides which touches count (:func:`..harness.findings`): those from files the candidate's
patch changed or added, or every one when that is not known.
"""

from __future__ import annotations

from typing import Final

__all__ = ["TRIPWIRES_JS"]

TRIPWIRES_JS: Final[str] = r"""'use strict';
// mobilebench harness: the tripwires (issue 31, item 3), loaded by the launcher before any project code.
const apply = Reflect.apply;
const define = Object.defineProperty;
const describeOwn = Object.getOwnPropertyDescriptor;
const freezeObject = Object.freeze;
const ProxyOf = Proxy;
const reflectGet = Reflect.get;
const reflectHas = Reflect.has;
const reflectOwnKeys = Reflect.ownKeys;
const reflectDescriptor = Reflect.getOwnPropertyDescriptor;
const OuterError = Error;
const captureStack = Error.captureStackTrace;
const HERE = __dirname + '/';
const TEST_FILE = /(^|\/)(__tests__|__mocks__|__snapshots__)\/|\.(test|spec)\.[cm]?[jt]sx?$/;
const MARKER = /^JEST_/;
const NOTED = ['NODE_ENV'];
const PORT = ['send', 'channel', 'connected', 'disconnect'];
const HOLDER = ['matchers'];
const LIMIT = 100;

// the call sites' methods, kept before any project code: the stack is read from them, never formatted by the
// realm's Error.prepareStackTrace (which code of the runner's realm could replace to name other files)
const sites = (e, list) => list;
function rawSites(skip) {
  const holder = {};
  const saved = describeOwn(OuterError, 'prepareStackTrace');
  const limit = OuterError.stackTraceLimit;
  try {
    define(OuterError, 'prepareStackTrace', { value: sites, writable: true, configurable: true });
    OuterError.stackTraceLimit = 10;
    apply(captureStack, OuterError, [holder, skip]);
    return holder.stack;
  } catch (e) {
    return null;  // Error.prepareStackTrace locked by someone else: the touch is recorded with no file
  } finally {
    OuterError.stackTraceLimit = limit;
    try {
      if (saved) define(OuterError, 'prepareStackTrace', saved);
      else delete OuterError.prepareStackTrace;
    } catch (e) { /* locked: reported by the next capture */ }
  }
}
const probe = rawSites(rawSites);
const siteProto = probe && probe.length ? Object.getPrototypeOf(probe[0]) : null;
const fileNameOf = siteProto ? siteProto.getFileName : null;
const lineOf = siteProto ? siteProto.getLineNumber : null;

let root = process.cwd().replace(/\/?$/, '/');
let allowed = new Set();
let touches = [];
let notes = [];
const seen = new Set();

// the first frame outside the harness and node's internals: {file, line}; {file: null} when the stack could
// not be read (a touch then counts: the reader was disabled), {file: ''} when every frame is the harness's or node's
function caller() {
  const list = rawSites(caller);
  if (!list || !Array.isArray(list) || fileNameOf === null) return { file: null, line: 0 };
  for (let i = 0; i < list.length; i++) {
    let file = apply(fileNameOf, list[i], []);
    if (typeof file !== 'string') continue;
    if (file.startsWith('file://')) file = file.slice(7);
    if (!file.startsWith('/') || file.startsWith(HERE)) continue;
    return { file: file, line: Number(apply(lineOf, list[i], [])) || 0 };
  }
  return { file: '', line: 0 };
}
// a repository file that is not the test file, a setup file, a test or a mock: its touch of the runner is recorded
function suspect(at) {
  if (at.file === null) return true;
  if (!at.file.startsWith(root) || at.file.includes('/node_modules/') || allowed.has(at.file)) return false;
  return !TEST_FILE.test(at.file.slice(root.length));
}
function record(list, what, at) {
  const file = at.file === null ? '(unknown: the stack could not be read)' : at.file.slice(root.length);
  const key = what + '\n' + file + '\n' + at.line;
  if (seen.has(key) || list.length >= LIMIT) return;
  seen.add(key);
  list.push({ what: what, file: file, line: at.line });
}
// true when the caller is such a file (and its touch is recorded)
function trip(what) {
  const at = caller();
  if (!suspect(at)) return false;
  record(touches, what, at);
  return true;
}

// the repository root and the test and setup files of the test file about to run
function enter(rootDir, files) {
  root = String(rootDir).replace(/\/?$/, '/');
  allowed = new Set(files);
}
// the touches and notes recorded since the last call
function drain() {
  const out = { touches: touches, notes: notes };
  touches = [];
  notes = [];
  seen.clear();
  return out;
}

// a runner global, from the freeze on: an accessor giving the frozen value (its reassignment refused)
function guardGlobal(g, name, value) {
  define(g, name, {
    get() { trip('touched the runner global ' + name); return value; },
    set(v) { if (v !== value) trip('reassigned the runner global ' + name); },
    enumerable: true,
    configurable: false,
  });
}

// the matcher table's holder (expect's, on the realm's global): its table, state and testers behind accessors
function guardMatchers(realms, symbol) {
  for (const realm of realms) {
    const holder = realm && realm[symbol];
    if (!holder || typeof holder !== 'object') continue;
    for (const name of HOLDER) {
      const d = describeOwn(holder, name);
      if (!d || !('value' in d) || !d.configurable) continue;
      let value = d.value;
      define(holder, name, {
        get() { trip('touched the matcher table (' + name + ')'); return value; },
        set(v) { trip('replaced the matcher table (' + name + ')'); value = v; },
        enumerable: d.enumerable,
        configurable: false,
      });
    }
    return true;
  }
  return false;
}

// the jest object each module of the repository receives: a proxy recording what a suspect file reads of it
function guardJestObject(runtime) {
  const create = runtime && runtime._createJestObjectFor;
  if (typeof create !== 'function') return false;
  runtime._createJestObjectFor = function (from, ...rest) {
    const jest = apply(create, this, [from, ...rest]);
    if (!jest || typeof jest !== 'object' || !suspect({ file: String(from), line: 0 })) return jest;
    return new ProxyOf(jest, {
      get(target, key, receiver) {
        trip('touched the jest object (' + String(key) + ')');
        return reflectGet(target, key, receiver);
      },
    });
  };
  return true;
}

// the test realm's process: the runner markers behind a proxy of its env, the message port behind accessors
function guardProcess(g) {
  const processObject = g.process;
  const env = processObject && processObject.env;
  if (!env || typeof env !== 'object') return false;
  const hidden = (key, how) => {
    if (typeof key !== 'string' || !(key in env)) return false;
    if (NOTED.includes(key)) {
      const at = caller();
      if (suspect(at)) record(notes, how + ' ' + key, at);
      return false;
    }
    return MARKER.test(key) && trip(how + ' the runner marker ' + key);
  };
  const proxy = new ProxyOf(env, {
    get(target, key, receiver) { return hidden(key, 'read') ? undefined : reflectGet(target, key, receiver); },
    has(target, key) { return hidden(key, 'read') ? false : reflectHas(target, key); },
    getOwnPropertyDescriptor(target, key) {
      return hidden(key, 'read') ? undefined : reflectDescriptor(target, key);
    },
    ownKeys(target) {
      const keys = reflectOwnKeys(target);
      if (!keys.some((k) => typeof k === 'string' && MARKER.test(k))) return keys;
      if (!trip('listed the environment holding the runner markers')) return keys;
      return keys.filter((k) => typeof k !== 'string' || !MARKER.test(k));
    },
  });
  try {
    define(processObject, 'env', { value: proxy, writable: false, configurable: false, enumerable: true });
  } catch (e) {
    return false;  // an environment whose process.env cannot be redefined: left as it is, said in the file record
  }
  for (const name of PORT) {
    const d = describeOwn(processObject, name);
    if (d && !d.configurable) continue;
    const value = d ? d.value : undefined;
    try {
      define(processObject, name, {
        get() { trip('touched the worker\'s message port (process.' + name + ')'); return value; },
        set() { trip('replaced the worker\'s message port (process.' + name + ')'); },
        enumerable: d ? d.enumerable : false,
        configurable: false,
      });
    } catch (e) { /* kept as it is */ }
  }
  return true;
}

// the harness's own modules in node's module cache: accessors recording who reads or replaces an entry
function guardCache(cache, files) {
  let guarded = 0;
  for (const file of files) {
    const d = describeOwn(cache, file);
    if (!d || !('value' in d) || !d.configurable) continue;
    const entry = d.value;
    define(cache, file, {
      get() { trip('touched the harness module ' + file.slice(HERE.length) + ' in the module cache'); return entry; },
      set() { trip('replaced the harness module ' + file.slice(HERE.length) + ' in the module cache'); },
      enumerable: true,
      configurable: false,
    });
    guarded++;
  }
  return guarded;
}

module.exports = freezeObject({
  enter: enter,
  drain: drain,
  guardGlobal: guardGlobal,
  guardMatchers: guardMatchers,
  guardJestObject: guardJestObject,
  guardProcess: guardProcess,
  guardCache: guardCache,
  readable: fileNameOf !== null,
});
"""
