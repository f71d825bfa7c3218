"""The channel's writer (``channel.js``) and the harness's reporter (``reporter.js``): see :mod:`..harness_js`."""

from __future__ import annotations

from typing import Final

__all__ = ["CHANNEL_JS", "REPORTER_JS"]

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
// the seed of the run's known answers (recorder.js's knownAnswers): HMAC(key, label), handed out once, to the
// runner module the launcher loads right after keying the channel (before any project code)
let seed = null;
function takeSeed() {
  if (key === null || seed === false) return null;
  const label = 'mobilebench known answers';
  const bytes = [];
  for (let i = 0; i < label.length; i++) bytes.push(label.charCodeAt(i));
  const out = hmac(bytes);
  seed = false;
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
module.exports = Object.freeze({ emit: emit, open: open, takeSeed: takeSeed });
"""

REPORTER_JS: Final[str] = r"""'use strict';
// mobilebench harness: the runner's own start and final summary, through the channel.
// the channel's writer, captured when the launcher loads this module (before any project code): never looked
// up again through the channel module's exports, which code in the runner's realm could reach
const emit = require('./channel.js').emit;
const path = require('path');
const realpath = require('fs').realpathSync;
const create = Object.create;
const defineProperty = Object.defineProperty;
const freezeObject = Object.freeze;
// the harness's environment module, when the launcher passed it to jest (issue 31, item 2): jest's resolver
// tries "jest-environment-" + the value first, which a root package named "jest-environment-" with an exports
// map answers by self-reference even for an absolute path; each test then runs with the harness's own path
const ENVIRONMENT = path.join(__dirname, 'environment.js');
const problems = [];
let pinned = null;
function same(a, b) {
  if (a === b) return true;
  try { return realpath(String(a)) === realpath(b); } catch (e) { return false; }
}
function pin(test) {
  if (pinned === null) pinned = process.argv.includes('--testEnvironment=' + ENVIRONMENT);
  const context = test && test.context;
  const config = context && context.config;
  if (!pinned || !config || same(config.testEnvironment, ENVIRONMENT)) return;
  problems.push('jest resolved the test environment to ' + String(config.testEnvironment) + ', not the harness\'s ' +
    ENVIRONMENT + ' (a package name of the repository answered jest\'s resolver)');
  try {
    const own = create(context);
    defineProperty(own, 'config', { value: freezeObject({ ...config, testEnvironment: ENVIRONMENT }) });
    test.context = own;
  } catch (e) {
    problems.push('the harness could not give the test its own environment: ' + String(e && e.message));
  }
}
class MobilebenchReporter {
  constructor() {
    emit({ type: 'start' });
  }
  onTestFileStart(test) {
    pin(test);
  }
  onTestStart(test) {
    pin(test);
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
      numRuntimeErrorTestSuites: results.numRuntimeErrorTestSuites, files: files, problems: problems });
  }
  getLastError() {
    return undefined;
  }
}
module.exports = MobilebenchReporter;
"""
