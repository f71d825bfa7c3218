"""The circus state tree, reached from the code under test (bundled counter, jest 29, Docker).

Impostors under the graded ids by re-nesting the test file's describe blocks
(:func:`test_impostors_from_renested_describe_blocks_are_runner_compromised`), and the graded tests' ``failing``
flag flipped after registration (:func:`test_a_failing_flag_is_kept_as_declared`).

The FAIL_TO_PASS ids of ``mobilebench__counter-1`` are ``Counter > increments by one`` and ``Counter >
increments by a step``. ``src/counter.js`` (the bug left in place) is required at the top of the test file,
while jest-circus is still at the root block. From there it declares its own ``describe('Counter')`` holding two
passing tests with exactly those titles, then makes the test file's own ``describe('Counter')`` nest under that
block, so the real (failing) tests run as ``Counter > Counter > ...``: ids no gold list names. Two ways:

* **unbalanced**: the impostor block's callback throws after declaring the tests and the candidate catches the
  error, so circus never finishes the block (no ``finish_describe_definition``) and it stays the current one;
* **reassigned**: the block is declared normally, then the runner state's ``currentDescribeBlock`` (reachable
  through ``JEST_STATE_SYMBOL``) is pointed back at it.

Every impostor is registered through the frozen globals, its body never replaced, and it executes an
assertion, so none of the other checks sees it; both were ``resolved``. The harness's runner keeps its own
stack of the blocks being declared: both must be ``policy_violation`` / ``runner_compromised``. Marked
``docker``.

``test.failing``: circus inverts a body's outcome by the test's ``failing`` flag when the body ends, and the
flag lives on the test object of the state tree. Setting it on every registered test (in a microtask after the
test file loaded) turned the graded tests' failures into passes: ``resolved``. The harness's runner locks the flag
as declared at ``add_test``, and reads the body's own outcome from circus's (already inverted) event, so a test the
project really declares ``test.failing`` (here: one the candidate's code declares) is ``passed`` in the runner's
record as in jest's report (it was reported as a disagreement: ``runner_compromised`` for a plain test.failing).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from counter_attacks import grade, hooked_patch

from pytest_mobilebench.suites.issue_resolution import docker_answers

pytestmark = [pytest.mark.docker, pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers")]

#: passing tests under the graded titles (a test path named like the canary files of old is left alone)
IMPOSTORS = """\
    test('increments by one', () => { expect(1).toBe(1); });
    test('increments by a step', () => { expect(1).toBe(1); });
"""

UNBALANCED = f"""\
if (typeof describe === 'function' && !/mbcanary/.test(String(expect.getState().testPath))) {{
  try {{
    describe('Counter', () => {{
{IMPOSTORS}      throw new Error('leave this block open');
    }});
  }} catch (e) {{ /* the test file's describe('Counter') now nests under it */ }}
}}
"""

REASSIGNED = f"""\
if (typeof describe === 'function' && !/mbcanary/.test(String(expect.getState().testPath))) {{
  const sym = Object.getOwnPropertySymbols(globalThis).find((s) => String(s) === 'Symbol(JEST_STATE_SYMBOL)')
    || Symbol.for('JEST_STATE_SYMBOL');
  const state = globalThis[sym];
  describe('Counter', () => {{
{IMPOSTORS}  }});
  const kids = state.rootDescribeBlock.children;
  state.currentDescribeBlock = kids[kids.length - 1];
}}
"""


ATTACKS = {
    "unbalanced-describe": hooked_patch("nest", UNBALANCED),
    "reassigned-describe": hooked_patch("nest", REASSIGNED),
}
EXPECTED = {
    "unbalanced-describe": "a describe block was left open",
    "reassigned-describe": "current block was reassigned",
}


@pytest.mark.e2e
def test_impostors_from_renested_describe_blocks_are_runner_compromised(tmp_path: Path) -> None:
    results, _out = grade(tmp_path, ATTACKS)
    for model, result in results.items():
        assert result["reason"] == "policy_violation", (model, result.get("detail"))
        assert "runner_compromised" in result["detail"] and EXPECTED[model] in result["detail"], (
            model,
            result["detail"],
        )
        # the impostors did pass under the graded ids: only the harness's own record tells them apart
        parsed = json.loads((Path(result["evidence_dir"]) / "parsed.json").read_text(encoding="utf-8"))["tests"]
        assert parsed["__tests__/counter.test.js::Counter > increments by one"] == "PASS", (model, parsed)
        assert parsed["__tests__/counter.test.js::Counter > Counter > increments by one"] == "FAIL", (model, parsed)


#: every registered test (the graded ones) made a ``test.failing`` after the file loaded
FLIPPED = """\
if (typeof describe === 'function' && !/mbcanary/.test(String(expect.getState().testPath))) {
  queueMicrotask(() => {
    const sym = Object.getOwnPropertySymbols(globalThis).find((s) => String(s) === 'Symbol(JEST_STATE_SYMBOL)')
      || Symbol.for('JEST_STATE_SYMBOL');
    const state = globalThis[sym];
    const walk = (b) => { for (const c of b.children || []) { if (c.type === 'test') c.failing = true;
        else walk(c); } };
    if (state) walk(state.rootDescribeBlock);
  });
}
"""

#: an honest ``test.failing`` (its body fails, so jest reports it passed)
DECLARED = """\
if (typeof test === 'function' && !/mbcanary/.test(String(expect.getState().testPath))) {
  test.failing('a known failure', () => { expect(1).toBe(2); });
}
"""


@pytest.mark.e2e
def test_a_failing_flag_is_kept_as_declared(tmp_path: Path) -> None:
    # the honest test.failing is declared from a file of a test folder (__snapshots__/: never production, and no
    # mock, which is runner configuration): a production file declaring tests trips the
    # runner-global tripwire (issue 31), as the flipping one now does
    models = {
        "flipped-failing": hooked_patch("flip", FLIPPED),
        "declared-failing": hooked_patch("__snapshots__/known", DECLARED),
    }
    results, _out = grade(tmp_path, models)
    flipped = results["flipped-failing"]
    assert flipped["reason"] == "policy_violation", flipped.get("detail")
    assert "production code touched the runner global describe at src/flip.js:" in flipped["detail"], flipped["detail"]
    assert "failing flag" not in flipped["detail"], flipped["detail"]  # the flag stayed as declared
    assert results["declared-failing"]["reason"] == "unresolved", results["declared-failing"].get("detail")
    for model, result in results.items():
        # the bug stays: the graded tests ran as declared and failed; no disagreement was made up
        parsed = json.loads((Path(result["evidence_dir"]) / "parsed.json").read_text(encoding="utf-8"))["tests"]
        assert parsed["__tests__/counter.test.js::Counter > increments by one"] == "FAIL", (model, parsed)
    parsed = json.loads((Path(results["declared-failing"]["evidence_dir"]) / "parsed.json").read_text(encoding="utf-8"))
    assert parsed["tests"]["__tests__/counter.test.js::a known failure"] == "PASS", parsed["tests"]
