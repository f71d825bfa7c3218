"""The harness's shared runner code in node, without jest (issue 31, items 1 and 3): the runner markers'
tripwire in the test realm's ``process.env`` and the matcher table's snapshot. The Docker acceptance tests
are ``tests/test_trust_jest_markers.py`` and ``tests/test_trust_jest_matchers.py``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.react_native.harness_js.shared import PRIMORDIALS_JS

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

READER = (
    "module.exports = (env) => [env.JEST_WORKER_ID, 'JEST_WORKER_ID' in env, "
    "Object.keys(env).includes('JEST_WORKER_ID')];\n"
)

MAIN = """\
const shared = require(process.argv[2]);
const root = process.argv[3];
const g = { process: { env: { HOME: '/h', JEST_WORKER_ID: '1' } } };
const touched = [];
shared.guardMarkers(g, root, new Set([root + 'setup.js']), touched);
const read = (rel) => require(root + rel)(g.process.env);
const out = { production: read('src/app.js'), installed: read('node_modules/lib/index.js'),
    test: read('__tests__/a.test.js'),
  setup: read('setup.js'), home: g.process.env.HOME, touched: touched };
g.process.env = {};
out.replaced = g.process.env.HOME !== '/h';
const table = { toBe: () => 1, toEqual: () => 2 };
const realm = { [Symbol.for('$$jest-matchers-object')]: { matchers: table } };
const snapshot = shared.snapshotMatchers([realm]);
const added = new Set();
out.untouched = shared.matcherChanges([realm], snapshot, added);
table.toBe = () => 3;
table.toHaveNoBug = () => 4;
out.changed = shared.matcherChanges([realm], snapshot, added);
out.added = [...added];
process.stdout.write(JSON.stringify(out));
"""


def _run(tmp_path: Path) -> dict:
    harness = tmp_path / "harness"
    harness.mkdir()
    exported = "\nmodule.exports = { guardMarkers, snapshotMatchers, matcherChanges };\n"
    (harness / "shared.js").write_text(PRIMORDIALS_JS.replace("__CANARY__", "{}") + exported)
    (harness / "main.js").write_text(MAIN)
    root = tmp_path / "repo"
    for rel in ("src/app.js", "node_modules/lib/index.js", "__tests__/a.test.js", "setup.js"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(READER)
    done = subprocess.run(
        ["node", str(harness / "main.js"), str(harness / "shared.js"), f"{root}/"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_production_file_cannot_see_the_runner_marker_and_its_touch_is_recorded(tmp_path: Path) -> None:
    out = _run(tmp_path)
    assert out["production"] == [None, False, False]
    assert out["installed"] == out["test"] == out["setup"] == ["1", True, True]
    assert out["home"] == "/h" and out["replaced"] is False
    assert out["touched"] == [
        "production code read the runner marker JEST_WORKER_ID at src/app.js:1",
        "production code read the runner marker JEST_WORKER_ID at src/app.js:1",
        "production code listed the environment holding the runner markers at src/app.js:1",
    ]


def test_a_built_in_matcher_replaced_after_the_snapshot_is_named_and_added_ones_listed(tmp_path: Path) -> None:
    out = _run(tmp_path)
    assert out["untouched"] == []
    assert out["changed"] == ["the built-in matcher toBe was redefined after the freeze (expect.extend)"]
    assert out["added"] == ["toHaveNoBug"]
