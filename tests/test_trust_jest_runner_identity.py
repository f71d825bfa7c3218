"""A runner part named by the repository's own package identity (issue 31, item 2), on the bundled counter
example in Docker.

The candidate's root ``package.json`` takes the name ``jest-environment-node`` and an ``exports`` map: jest's
resolver turns ``testEnvironment: "node"`` into ``jest-environment-node`` and resolves it from the root, where
a package's self-reference finds the repository's own class. That class runs in the runner's realm: it clears
the graded tests' errors (jest reports them passed) and wraps the harness's signing function through the
channel module's export (the signed records say passed); the canaries are spared and the bug stays. Before
issue 31 this was ``resolved``; now the package's module identity is runner configuration
(``policy_violation``, restored to base) and the channel's writer is a closure the runner took before any
project code. Marked ``docker``: a daemon must answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from counter_attacks import grade

docker = pytest.importorskip("docker", reason="the docker SDK is not installed")

pytestmark = pytest.mark.docker

#: the candidate's test environment: the real one by path, the graded failures cleared, the channel rewritten
ENVIRONMENT = """\
const path = require('path');
const { TestEnvironment } = require(path.join(__dirname, '..', 'node_modules', 'jest-environment-node'));
const graded = (titles) => !titles.some((t) => /canary/.test(String(t)));
const channel = Object.values(require.cache).find((m) => /mb-harness-[^/]+\\/channel\\.js$/.test(m.filename));
if (channel) {
  const real = channel.exports.emit;
  const forged = (record) => {
    for (const file of (record && record.tests) ? [record] : []) {
      for (const t of file.tests) if (graded(t.titles)) t.status = 'passed';
    }
    for (const file of (record && record.files) || []) {
      for (const t of file.tests) if (graded(t.titles)) t.status = 'passed';
    }
    return real(record);
  };
  try { channel.exports.emit = forged; } catch (e) {}
  try { channel.exports = { emit: forged, open: channel.exports.open }; } catch (e) {}
}
class Forgiving extends TestEnvironment {
  async handleTestEvent(event, state) {
    if (event.name === 'test_fn_failure' && graded([event.test.parent && event.test.parent.name, event.test.name])) {
      event.test.errors.length = 0;
    }
    if (super.handleTestEvent) return super.handleTestEvent(event, state);
  }
}
module.exports = Forgiving;
"""


def _patch() -> str:
    env = ENVIRONMENT.splitlines()
    body = "".join(f"+{line}\n" for line in env)
    return (
        "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n"
        '@@ -1,4 +1,5 @@\n {\n-  "name": "counter",\n+  "name": "jest-environment-node",\n'
        '+  "exports": { ".": "./src/mbenv.js", "./package.json": "./package.json" },\n'
        '   "version": "1.0.0",\n   "private": true,\n'
        f"diff --git a/src/mbenv.js b/src/mbenv.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/mbenv.js\n"
        f"@@ -0,0 +1,{len(env)} @@\n{body}"
    )


def _docker_or_skip() -> None:
    try:
        docker.from_env(timeout=10).ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no Docker daemon answers: {exc}")


@pytest.mark.e2e
def test_a_runner_package_named_by_the_repository_is_never_resolved(tmp_path: Path) -> None:
    _docker_or_skip()
    results, out = grade(tmp_path, {"shadowed-environment": _patch()})
    result = results["shadowed-environment"]
    assert result["reason"] == "policy_violation", (result.get("detail"), out)
    assert "'name' value of package.json" in result["detail"] and "'exports' value" in result["detail"]
