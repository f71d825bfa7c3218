"""The harness's jest launcher (``launch.js``): see :mod:`..harness_js`."""

from __future__ import annotations

import json
from typing import Final

__all__ = ["ENVIRONMENT_JS", "LAUNCH_REFUSED_EXIT", "RUNNER_PACKAGES", "launch_js"]

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
  if (size !== undefined && st.size !== size) {
    return 'descriptor ' + fd + ' (' + what + ') holds ' + st.size + ' bytes, not ' + size;
  }
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
const MODULES = ['./tripwires.js', './channel.js', './resolve.js', './runner.js', './reporter.js', './environment.js'];
for (const name of MODULES) {
  try { require(name); } catch (e) {
    problems.push('the harness module ' + name + ' does not load: ' + String(e && e.message));
  }
}
// jest's packages as node finds them from the project, each from the real folder of the package depending on it
// (resolve.js: pnpm's links into node_modules/.pnpm followed as node follows them)
let resolver = null;  // its failure to load is a problem said above
try { resolver = require('./resolve.js'); } catch (e) { /* said above */ }
const dirs = resolver ? resolver.packages(process.cwd()) : {};
// the project's test environment named as a package (issue 31, item 2): resolved here from the installed packages
// only (node's lookup from the harness's own folder: never the repository's package identity, which jest's resolver
// honours as a self-reference) and given to jest as the harness module environment.js, by its absolute path
const ENVIRONMENT = __ENVIRONMENT__;
let environment = null;
function installedEnvironment(named) {
  const installed = path.join(process.cwd(), 'node_modules') + path.sep;
  const from = [process.cwd(), dirs['jest-config']].filter(Boolean);  // jest-config's folder, as resolve.js found it
  const names = /^(@|jest-environment-)/.test(named) ? [named] : ['jest-environment-' + named, named];
  for (const name of names) {
    let found = null;
    try { found = require.resolve(name, { paths: from }); } catch (e) { continue; }
    let real = found;
    try { real = fs.realpathSync(found); } catch (e) { /* as found */ }
    if (found.startsWith(installed) && real.startsWith(installed)) return found;
  }
  return null;
}
if (ENVIRONMENT !== null && problems.length === 0) {
  environment = installedEnvironment(ENVIRONMENT);
  if (environment !== null) {
    try {
      const own = path.join(__dirname, 'environment.js');
      require.cache[own].exports = require(environment);
      process.argv.splice(2, 0, '--testEnvironment=' + own);
    } catch (e) {
      problems.push('the test environment ' + environment + ' does not load: ' + String(e && e.message));
    }
  }
}
// the harness's modules in node's module cache behind the tripwires (issue 31, item 3)
try {
  require('./tripwires.js').guardCache(require.cache, MODULES.map((name) => path.join(__dirname, name)));
} catch (e) {
  problems.push('the module cache could not be guarded: ' + String(e && e.message));
}
let cli = null;
for (const name of ['jest', 'jest-cli']) {
  if (!dirs[name]) continue;
  try {
    const bin = JSON.parse(fs.readFileSync(path.join(dirs[name], 'package.json'), 'utf8')).bin;
    const rel = typeof bin === 'string' ? bin : bin && bin.jest;
    if (typeof rel === 'string') { cli = path.resolve(dirs[name], rel); break; }
  } catch (e) { /* the next package */ }
}
if (cli === null) {
  problems.push('jest\'s own program cannot be resolved from ' + process.cwd() + ' (neither jest nor jest-cli)');
}
if (!resolver || resolver.resolveFrom(__RUNNER_PACKAGE__, process.cwd()) === null) {
  problems.push('the runner ' + __RUNNER_PACKAGE__ + ' cannot be resolved');
}
const status = JSON.stringify({ ok: problems.length === 0 && statusProblem === null, problems: problems, cli: cli,
  node: process.version, environment: environment }) + '\n';
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


def launch_js(runner: str, environment: str | None = None) -> str:
    """The launcher's text for ``runner`` (a key of :data:`RUNNER_PACKAGES`).

    ``environment``: the test environment the project names as a package (``node``, ``jsdom``,
    ``jest-environment-jsdom`` ...: :func:`..harness.jest_environment`), resolved by the launcher from the
    installed packages and passed to jest as ``--testEnvironment=<folder>/environment.js``; None leaves it to
    jest (its own default, resolved from jest's install, or a path the configuration names). It runs as ``node
    launch.js <jest's arguments>`` and writes one JSON line to fd 5: ``{"ok": bool, "problems": [sentence, ...],
    "cli": path of jest's program or null, "node": version, "environment": the environment's resolved file or
    null}``; when not ok it exits :data:`LAUNCH_REFUSED_EXIT` without starting jest.
    """
    return (
        _LAUNCH_JS.replace("__RUNNER_PACKAGE__", json.dumps(RUNNER_PACKAGES[runner]))
        .replace("__EXIT__", str(LAUNCH_REFUSED_EXIT))
        .replace("__ENVIRONMENT__", json.dumps(environment))
    )


#: the harness's ``environment.js``: its exports become the resolved environment's when the launcher loads it
ENVIRONMENT_JS: Final[str] = """'use strict';
// mobilebench harness: the project's test environment, resolved by the launcher (launch.js) from the installed
// packages; this module's exports are replaced by that environment's before jest starts.
module.exports = {};
"""
