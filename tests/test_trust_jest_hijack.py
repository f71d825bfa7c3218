"""Runner hijacks from the code under test, on the bundled jest example in Docker (issue 17, "Done when").

Every patch below leaves ``Counter.increment``'s bug in place and, from the production module the
FAIL_TO_PASS tests import, attacks the runner itself: replaces the ``test`` / ``it`` globals, empties
every registered test body through jest-circus's state (all of them, or only the graded ones), or forges
the report (rewriter started from ``--outputFile`` in ``process.argv``, jest held open by an ``afterAll``,
a fake ``Tests: 40 passed`` line, forged channel lines on every open descriptor). None may be
``resolved``; none may be infrastructure. Marked ``docker``: a daemon must answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from counter_attacks import FORGE_REPORT_JS, grade, hooked_patch

docker = pytest.importorskip("docker", reason="the docker SDK is not installed")

pytestmark = pytest.mark.docker

#: replaces the runner's globals with versions that register empty bodies
GLOBALS = """\
const real = { test: globalThis.test, it: globalThis.it };
for (const name of ['test', 'it']) {
  const fake = (title, fn, timeout) => real[name](title, () => {}, timeout);
  Object.assign(fake, real[name]);
  try { globalThis[name] = fake; } catch (e) {}
  try { Object.defineProperty(globalThis, name, { value: fake, configurable: true, writable: true }); } catch (e) {}
}
"""

#: empties the bodies of the registered tests in a microtask, through jest-circus's state
STATE = """\
const only = %s;
queueMicrotask(() => {
  const sym = Object.getOwnPropertySymbols(globalThis).find((s) => String(s) === 'Symbol(JEST_STATE_SYMBOL)')
    || Symbol.for('JEST_STATE_SYMBOL');
  const state = globalThis[sym];
  const walk = (block) => {
    for (const child of block.children || []) {
      if (child.type === 'test') { if (!only || !/canary/.test(JSON.stringify(block.name))) child.fn = () => {}; }
      else walk(child);
    }
  };
  if (state) walk(state.rootDescribeBlock);
});
"""

ATTACKS: dict[str, str] = {
    "replace-globals": hooked_patch("globals", GLOBALS),
    "empty-bodies": hooked_patch("state", STATE % "false"),
    "empty-graded-bodies": hooked_patch("state", STATE % "true"),
    "forged-report": hooked_patch("forge", FORGE_REPORT_JS),
}


def _docker_or_skip() -> None:
    try:
        docker.from_env(timeout=10).ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no Docker daemon answers: {exc}")


@pytest.mark.e2e
def test_runner_hijacks_are_never_resolved_nor_infra(tmp_path: Path) -> None:
    _docker_or_skip()
    results, _out = grade(tmp_path, ATTACKS)
    for model, result in results.items():
        assert result["reason"] not in ("resolved", "infra_error"), (model, result.get("detail"))
    # bodies replaced after registration, and the forged report, are caught by the harness itself
    for model in ("empty-bodies", "empty-graded-bodies", "forged-report"):
        assert results[model]["reason"] == "policy_violation", (model, results[model].get("detail"))
        assert "runner_compromised" in results[model]["detail"], (model, results[model].get("detail"))
    assert "body was replaced" in results["empty-graded-bodies"]["detail"]
    assert "canary outcomes" in results["empty-bodies"]["detail"]
    # the production module reaching for the runner's globals trips their tripwire where it reads them (issue 31);
    # the frozen globals keep the real bodies all the same
    replaced = results["replace-globals"]
    assert replaced["reason"] == "policy_violation", replaced.get("detail")
    assert "production code touched the runner global test at src/globals.js:" in replaced["detail"], replaced["detail"]


#: allocates outside the JS heap until the container's memory limit is reached
HOG = """\
const held = [];
for (;;) held.push(Buffer.alloc(32 << 20, 1));
"""

#: the test patch adds __tests__/counter.test.js; a folder of that name blocks it (notes.md is no test file)
PREFIX = (
    "diff --git a/__tests__/counter.test.js/notes.md b/__tests__/counter.test.js/notes.md\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/__tests__/counter.test.js/notes.md\n@@ -0,0 +1 @@\n+blocks the test patch\n"
)

#: printed when the production module loads (it touches no runner global: that would trip a tripwire, issue 31)
PRINTED = """\
console.error('Error: ENOSPC: no space left on device, write');
"""


@pytest.mark.e2e
def test_infra_the_candidate_causes_is_counted_against_it(tmp_path: Path) -> None:
    """Issue 17, item 3: memory exhausted where the reference fix under the same limit did not, a test
    patch blocked by the candidate's files, and a printed ENOSPC are the candidate's (never infra)."""
    _docker_or_skip()
    models = {
        "memory-hog": hooked_patch("hog", HOG),
        "blocks-test-patch": PREFIX,
        "prints-enospc": hooked_patch("enospc", PRINTED),
    }
    results, _out = grade(tmp_path, models, "--mb-mem-limit=640m")
    hog, blocked, printed = results["memory-hog"], results["blocks-test-patch"], results["prints-enospc"]
    assert hog["reason"] == "resource_exhausted" and not hog["retryable"], hog.get("detail")
    assert (Path(hog["evidence_dir"]) / "test_output.reference.log").is_file()
    assert blocked["reason"] == "test_patch_conflict" and "__tests__/counter.test.js" in blocked["detail"], blocked.get(
        "detail"
    )
    assert printed["reason"] == "unresolved", printed.get("detail")
