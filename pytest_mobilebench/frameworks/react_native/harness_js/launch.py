"""The harness's jest launcher (``launch.js``): see :mod:`..harness_js`."""

from __future__ import annotations

import json
from typing import Final

__all__ = ["LAUNCH_REFUSED_EXIT", "RUNNER_PACKAGES", "launch_js"]

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
for (const name of ['./channel.js', './resolve.js', './runner.js', './reporter.js']) {
  try { require(name); } catch (e) {
    problems.push('the harness module ' + name + ' does not load: ' + String(e && e.message));
  }
}
// jest's packages as node finds them from the project, each from the real folder of the package depending on it
// (resolve.js: pnpm's links into node_modules/.pnpm followed as node follows them)
let resolver = null;  // its failure to load is a problem said above
try { resolver = require('./resolve.js'); } catch (e) { /* said above */ }
const dirs = resolver ? resolver.packages(process.cwd()) : {};
let cli = null;
for (const name of ['jest', 'jest-cli']) {
  if (!dirs[name]) continue;
  try {
    const bin = JSON.parse(fs.readFileSync(path.join(dirs[name], 'package.json'), 'utf8')).bin;
    const rel = typeof bin === 'string' ? bin : bin && bin.jest;
    if (typeof rel === 'string') { cli = path.resolve(dirs[name], rel); break; }
  } catch (e) { /* the next package */ }
}
if (cli === null) problems.push('jest\'s own program cannot be resolved from ' + process.cwd() + ' (neither jest nor jest-cli)');
if (!resolver || resolver.resolveFrom(__RUNNER_PACKAGE__, process.cwd()) === null) {
  problems.push('the runner ' + __RUNNER_PACKAGE__ + ' cannot be resolved');
}
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
        "__EXIT__", str(LAUNCH_REFUSED_EXIT)
    )
