"""The harness's tripwires and shared runner code in node, without jest (issue 31, items 1 and 3).

``tripwires.js`` (:mod:`~pytest_mobilebench.frameworks.react_native.harness_js.tripwires`) is loaded from a harness
folder and given a stand-in test realm; each tripwire is touched from a production file of a stand-in repository,
from an installed package, a test file and a setup file: only the production touch is recorded, with its file and
line. The matcher table's snapshot is checked through the shared runner code. The Docker acceptance tests are
``tests/test_trust_jest_markers.py``, ``tests/test_trust_jest_matchers.py`` and ``tests/test_trust_jest_tripwires.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.react_native.harness import touch_findings
from pytest_mobilebench.frameworks.react_native.harness_js.shared import PRIMORDIALS_JS
from pytest_mobilebench.frameworks.react_native.harness_js.tripwires import TRIPWIRES_JS

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

#: what each file of the stand-in repository does with the realm it is given
TOUCHER = """\
const env = (g) => g.process.env;
const M = Symbol.for('$$jest-matchers-object');
module.exports = (g, cache, jest) => [
  env(g).JEST_WORKER_ID, 'JEST_WORKER_ID' in env(g), Object.keys(env(g)).includes('JEST_WORKER_ID'),
  env(g).JEST_OTHER, typeof g.expect, typeof g.process.send, Object.keys(g[M].matchers),
  typeof cache[Object.keys(cache).find((k) => k.endsWith('channel.js'))], typeof jest.fn, env(g).NODE_ENV];
"""

MAIN = """\
const trip = require(process.argv[2] + '/tripwires.js');
const root = process.argv[3];
const symbol = Symbol.for('$$jest-matchers-object');
const g = { process: { env: { HOME: '/h', JEST_WORKER_ID: '1', JEST_OTHER: 'x', NODE_ENV: 'test' }, send: () => 1 },
  [symbol]: { matchers: { toBe: () => 1 }, state: {} } };
trip.enter(root, [root + 'setup.js']);
const out = { guarded: trip.guardProcess(g) };
trip.guardGlobal(g, 'expect', () => 0);
out.holder = trip.guardMatchers([g], symbol);
const runtime = { _createJestObjectFor: (from) => ({ fn: () => 0, from: from }) };
out.jestGuarded = trip.guardJestObject(runtime);
require(process.argv[2] + '/channel.js');
const cache = require.cache;
out.cacheGuarded = trip.guardCache(cache, [process.argv[2] + '/channel.js']);
const run = (rel) => require(root + rel)(g, cache, runtime._createJestObjectFor(root + rel));
out.production = run('src/app.js');
out.installed = run('node_modules/lib/index.js');
out.test = run('__tests__/a.test.js');
out.setup = run('setup.js');
g.expect = 5;
out.home = g.process.env.HOME;
out.drained = trip.drain();
out.again = trip.drain();
process.stdout.write(JSON.stringify(out));
"""

MATCHERS = """\
const shared = require(process.argv[2] + '/shared.js');
const table = { toBe: () => 1, toEqual: () => 2 };
const realm = { [Symbol.for('$$jest-matchers-object')]: { matchers: table } };
const snapshot = shared.snapshotMatchers([realm]);
const added = new Set();
const out = { untouched: shared.matcherChanges([realm], snapshot, added) };
table.toBe = () => 3;
table.toHaveNoBug = () => 4;
out.changed = shared.matcherChanges([realm], snapshot, added);
out.added = [...added];
process.stdout.write(JSON.stringify(out));
"""


def _harness(tmp_path: Path) -> Path:
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "tripwires.js").write_text(TRIPWIRES_JS)
    (harness / "channel.js").write_text("module.exports = {};\n")
    exported = "\nmodule.exports = { snapshotMatchers, matcherChanges };\n"
    (harness / "shared.js").write_text(PRIMORDIALS_JS.replace("__CANARY__", "{}") + exported)
    return harness


def _node(tmp_path: Path, main: str) -> dict:
    harness = _harness(tmp_path)
    (harness / "main.js").write_text(main)
    root = tmp_path / "repo"
    for rel in ("src/app.js", "node_modules/lib/index.js", "__tests__/a.test.js", "setup.js"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(TOUCHER)
    done = subprocess.run(["node", str(harness / "main.js"), str(harness), f"{root}/"], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    return json.loads(done.stdout)


@needs_node
def test_each_tripwire_records_a_production_file_touching_the_runner_with_its_line(tmp_path: Path) -> None:
    out = _node(tmp_path, MAIN)
    assert out["guarded"] and out["holder"] and out["jestGuarded"] and out["cacheGuarded"] == 1
    # the production file sees no runner marker; everything else as it is (NODE_ENV only noted)
    assert out["production"] == [
        None,
        False,
        False,
        None,
        "function",
        "function",
        ["toBe"],
        "object",
        "function",
        "test",
    ]
    visible = ["1", True, True, "x", "function", "function", ["toBe"], "object", "function", "test"]
    assert out["installed"] == out["test"] == out["setup"] == visible
    assert out["home"] == "/h"
    touches = [(t["what"], t["file"], t["line"]) for t in out["drained"]["touches"]]
    at = lambda line: [w for w, f, n in touches if f == "src/app.js" and n == line]  # noqa: E731
    assert at(4) == [
        "read the runner marker JEST_WORKER_ID",
        "listed the environment holding the runner markers",
    ]
    assert set(at(5)) == {
        "read the runner marker JEST_OTHER",
        "touched the runner global expect",
        "touched the worker's message port (process.send)",
        "touched the matcher table (matchers)",
    }
    assert at(6) == ["touched the harness module channel.js in the module cache", "touched the jest object (fn)"]
    assert ("reassigned the runner global expect", "main.js") not in [(w, f) for w, f, _ in touches]
    assert {f for _, f, _ in touches} == {"src/app.js"}
    assert [(n["what"], n["file"]) for n in out["drained"]["notes"]][-1] == ("read NODE_ENV", "src/app.js")
    assert out["again"] == {"touches": [], "notes": []}


@needs_node
def test_a_built_in_matcher_replaced_after_the_snapshot_is_named_and_added_ones_listed(tmp_path: Path) -> None:
    out = _node(tmp_path, MATCHERS)
    assert out["untouched"] == []
    assert out["changed"] == ["the built-in matcher toBe was redefined after the freeze (expect.extend)"]
    assert out["added"] == ["toHaveNoBug"]


def test_touches_count_from_the_candidates_files_only_when_they_are_known() -> None:
    record = {
        "touches": [
            {"what": "read the runner marker JEST_WORKER_ID", "file": "src/counter.js", "line": 7},
            {"what": "touched the runner global expect", "file": "src/base_helper.js", "line": 3},
        ]
    }
    assert touch_findings(record, frozenset({"src/counter.js"})) == [
        "production code read the runner marker JEST_WORKER_ID at src/counter.js:7"
    ]
    assert len(touch_findings(record, None)) == 2
    assert touch_findings({"touches": [{"what": "x", "file": "(unknown: the stack could not be read)", "line": 0}]},
                          frozenset()) == ["production code x at (unknown: the stack could not be read):0"]  # fmt: skip
