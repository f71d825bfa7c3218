"""Where jest's own packages are, as node finds them from the project (``resolve.js``): see :mod:`..harness_js`.

pnpm links only a package's direct dependencies into each ``node_modules`` (jest's at the root is a link into
``node_modules/.pnpm``; ``jest-cli``, ``jest-config`` and the runners are not at the root at all), so each package
is looked up from the **real** folder of the package that depends on it, as node itself does: ``jest`` from the
project (and from the folder of ``.bin/jest``'s program), ``jest-cli`` and ``@jest/core`` from jest's real folder,
``jest-config`` from theirs, the runners (``jest-circus``, ``jest-jasmine2``) from ``jest-config``'s (it names
the default runner), each step falling back to the folders before it. A hoisted layout (npm, yarn classic,
yarn berry's ``node_modules`` linker) finds every package at the root, as before.

The same text serves three readers, so the chain is written once: the launcher (jest's program, the runner
check), the runner modules (the project's ``jest-circus/runner`` / ``jest-jasmine2``) and the harness's probe
before the run (:data:`PROBE_JS`, run as ``node -e``: which ``package.json`` and preset files
:func:`..harness.jest_runner` reads).
"""

from __future__ import annotations

from typing import Final

__all__ = ["PROBE_JS", "RESOLVE_JS"]

#: ``resolve.js``: ``packages(cwd)`` -> ``{name: real folder or null}`` for jest, jest-cli, @jest/core,
#: jest-config, jest-circus, jest-jasmine2; ``resolveFrom(request, cwd)`` -> the file of ``request`` (a runner
#: module) looked up from jest-config's folder, then jest's, then the project's, or null; ``presetFolder(name,
#: cwd)`` -> the real folder of the jest preset package ``name`` looked up from the project, or null
RESOLVE_JS: Final[str] = r"""'use strict';
// mobilebench harness: jest's own packages as node finds them from the project, each from the real folder of
// the package depending on it (pnpm links a package's dependencies beside its real folder, never at the root)
const fs = require('fs');
const path = require('path');
function real(p) { try { return fs.realpathSync(p); } catch (e) { return null; } }
function manifestOf(start, name) {  // a package without "./package.json" in its exports: up from its main file
  for (let dir = path.dirname(start); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      if (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === name) return dir;
    } catch (e) { /* not this folder */ }
  }
  return null;
}
function folderOf(name, from) {
  const paths = from.filter(Boolean);
  try { return real(path.dirname(require.resolve(name + '/package.json', { paths: paths }))); } catch (e) { /* next */ }
  try { return real(manifestOf(require.resolve(name, { paths: paths }), name)); } catch (e) { return null; }
}
const found = new Map();
function packages(cwd) {
  if (found.has(cwd)) return found.get(cwd);
  const bin = real(path.join(cwd, 'node_modules', '.bin', 'jest'));
  const project = [cwd, bin && path.dirname(bin)];
  const dirs = {};
  dirs['jest'] = folderOf('jest', project);
  dirs['jest-cli'] = folderOf('jest-cli', [dirs['jest'], ...project]);
  dirs['@jest/core'] = folderOf('@jest/core', [dirs['jest'], dirs['jest-cli'], ...project]);
  dirs['jest-config'] = folderOf('jest-config', [dirs['jest-cli'], dirs['@jest/core'], dirs['jest'], ...project]);
  for (const runner of ['jest-circus', 'jest-jasmine2']) {
    dirs[runner] = folderOf(runner, [dirs['jest-config'], dirs['jest'], ...project]);
  }
  found.set(cwd, dirs);
  return dirs;
}
function resolveFrom(request, cwd) {
  const dirs = packages(cwd);
  const from = [dirs['jest-config'], dirs['jest'], cwd].filter(Boolean);
  try { return require.resolve(request, { paths: from }); } catch (e) { return null; }
}
function presetFolder(name, cwd) { return folderOf(name, [cwd]); }
module.exports = { packages: packages, resolveFrom: resolveFrom, presetFolder: presetFolder };
"""

#: appended to :data:`RESOLVE_JS` and run as ``node -e <text> <preset>...`` in the repository's root: prints one
#: JSON line ``{probe key: absolute real path}`` for the installed ``package.json`` files jest's runner choice
#: reads (``node_modules/<name>/package.json``) and each preset's ``jest-preset.{json,js,cjs}`` that exists
#: (``node_modules/<preset>/<file>``); what is not found is left out
PROBE_JS: Final[str] = r"""
{
  const cwd = process.cwd();
  const dirs = packages(cwd);
  const out = {};
  for (const name of ['jest-config', 'jest', 'jest-circus', 'jest-jasmine2']) {
    if (dirs[name]) out['node_modules/' + name + '/package.json'] = path.join(dirs[name], 'package.json');
  }
  for (const preset of process.argv.slice(1)) {
    const dir = presetFolder(preset, cwd);
    for (const file of ['jest-preset.json', 'jest-preset.js', 'jest-preset.cjs']) {
      if (dir && fs.existsSync(path.join(dir, file))) out['node_modules/' + preset + '/' + file] = path.join(dir, file);
    }
  }
  process.stdout.write('\n' + JSON.stringify(out) + '\n');
}
"""
