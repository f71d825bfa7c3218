"""In-process attacks graded on a real repository (issue 31): NMF-earth/nmf-app #418, from a local mirror.

The trust tests attack the bundled toy ``counter``; here the same classes are written against a real project. Its
FAIL_TO_PASS test (``app/screens/InfoModal/__test__/InfoModalScreen.test.tsx::InfoModalScreen renders correctly``)
renders the real production module ``app/screens/InfoModal/InfoModalScreen.tsx`` (TSX, compiled by the project's
babel preset, run by jest 29 through jest-expo) and matches a snapshot. Each attack is a patch to that file that keeps
the bug and runs its code when jest loads the module (or renders it):

* ``snapshot-equality``: the realm's ``String.prototype.replace`` (which jest-snapshot's ``normalizeNewlines`` calls
  on the serialised tree) answers the stored snapshot, read from the ``.snap`` file, for the buggy tree; no runner
  global touched: the oracle contradicts the in-realm pass;
* ``snapshot-update``: the test file's snapshot state, reached through the matcher object's symbol, told to update
  (in the realm the buggy tree is stored and passes): the oracle, which read the ``.snap`` files before the run,
  contradicts it;
* ``extend-snapshot``: ``expect.extend`` redefines ``toMatchSnapshot`` to pass: the frozen matcher table, the
  ``expect`` tripwire and the oracle;
* ``hook-clears-graded-errors``: an ``afterEach`` hook pushed into jest-circus's state from production code empties
  the graded test's errors and the snapshot's suppressed errors, sparing the known answers: found **resolved** on
  this machine; closed by the oracle's rule for matchers that never throw (``oracle_verdict.UNCATCHABLE``: a failed
  snapshot record in a test reported passing); a hole found later is kept as a strict xfail (:data:`HOLES`);
* ``forged-report``: a detached rewriter of the ``--outputFile`` report, forged channel lines on every open
  descriptor, a fake console summary held by an ``afterAll``: unsigned channel lines, the ``afterAll`` tripwire,
  the known answers;
* ``exit-after-forging``: at the first render, forged channel lines and a fake summary, then ``process.exit(0)``:
  unsigned lines, no final record (never infra);
* ``hijacked-stdout``: ``process.stdout`` / ``process.stderr`` writes rewritten to say passed (the console does say
  so): ``unresolved``, the console decides nothing;
* ``reads-marker``: the fixed props only when ``JEST_WORKER_ID`` is set (the bug otherwise): the marker tripwire.

Each must never be ``resolved`` nor passed, never infrastructure (``retryable`` false, not ``infra_error``, not
``environment_unavailable``); the exact verdict observed is asserted too, so the test documents it. Two controls in
the same run: the upstream fix (its code part) resolves, and ``props-only`` (the ``reads-marker`` branch without the
condition) resolves, so the marker's branch is a real pass. Patches are made with ``git diff`` in a scratch
repository holding the base file read from the mirror with ``git show``, so they apply. One pytest subprocess grades
every model (``-n 2``). Opt-in: skipped unless ``$MOBILEBENCH_MIRRORS`` holds ``NMF-earth+nmf-app/repo``.
Marked ``docker`` and ``e2e``.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from counter_attacks import FORGE_REPORT_JS
from test_real_repositories_docker import MIRRORS, VALIDATED, _manifest, _run

from pytest_mobilebench.states import INFRA_REASONS, UNAVAILABLE_REASONS
from pytest_mobilebench.suites.issue_resolution import docker_answers

REPO = "NMF-earth/nmf-app"
INSTANCE, BASE, FIX, _F2P, _P2P = VALIDATED[REPO]
MIRROR = MIRRORS / REPO.replace("/", "+") / "repo"
SCREEN = "app/screens/InfoModal/InfoModalScreen.tsx"
#: the upstream fix's test part (the snapshot), which the harness applies itself: the gold control leaves it out
TEST_FOLDER = "app/screens/InfoModal/__test__"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers"),
    pytest.mark.skipif(not (MIRROR / "HEAD").is_file(), reason=f"no mirror of {REPO} under {MIRRORS}"),
]

#: the last import of the screen: attack code goes right after it, so it runs when jest loads the module
IMPORTS = 'import emissionInfo from "../../../assets/emission-info/emission-info.json";\n'
#: the first line of the component's body: code put before it runs at each render
BODY = "  const route = useRoute();\n"
#: the bug: the props of react-native-render-html 5 (the snapshot expects those of 6)
BUGGY = "      <HTML source={{ html }} onLinkPress={ui.onHTMLBodyLinkPress} baseFontStyle={styles.text} />\n"
#: the props the snapshot expects (the fix's, with its constants' test values written out)
FIXED = (
    '      <HTML source={{ html }} contentWidth={375} baseStyle={styles.text} tagsStyles={{ a: { color: "#0F853B", '
    'textDecorationLine: "underline" } }} renderersProps={{ a: { onPress: ui.onHTMLBodyLinkPress } }} />\n'
)

#: the realm's String.prototype.replace answers the stored snapshot for the buggy tree (jest-snapshot's
#: normalizeNewlines is ``string.replace(/\r\n|\r/g, '\n')`` on pretty-format's output)
SNAPSHOT_EQUALITY = r"""
const mbFs = require("fs");
const mbReplace = String.prototype.replace;
String.prototype.replace = function (pattern, ...rest) {
  const text = String(this);
  if (Object.prototype.toString.call(pattern) === "[object RegExp]" && pattern.source === "\\r\\n|\\r"
      && text.includes("<HTML")) {
    const stored = {};
    const file = __dirname + "/__test__/__snapshots__/InfoModalScreen.test.tsx.snap";
    new Function("exports", mbFs.readFileSync(file, "utf8"))(stored);
    const want = stored["InfoModalScreen renders correctly 1"];
    if (typeof want === "string") return want.slice(1, -1);
  }
  return mbReplace.call(this, pattern, ...rest);
};
"""

#: toMatchSnapshot redefined through the runner's public extension API
EXTEND_SNAPSHOT = """
if (typeof expect === "function") {
  expect.extend({ toMatchSnapshot() { return { pass: true, message: () => "" }; } });
}
"""

#: an afterEach hook pushed into jest-circus's state: in the graded test only (the known answers spared), it empties
#: the test's errors and the snapshot's suppressed errors (jest adds those to the test at test_done, after the hooks)
HOOK_CLEARS_GRADED_ERRORS = """
const mbSym = Object.getOwnPropertySymbols(globalThis).find((s) => String(s) === "Symbol(JEST_STATE_SYMBOL)")
  || Symbol.for("JEST_STATE_SYMBOL");
const mbState = globalThis[mbSym];
const mbMatchers = globalThis[Symbol.for("$$jest-matchers-object")];
if (mbState && mbState.rootDescribeBlock) {
  mbState.rootDescribeBlock.hooks.push({
    type: "afterEach",
    fn: () => {
      const test = mbState.currentlyRunningTest;
      if (!test || test.name !== "InfoModalScreen renders correctly") return;
      if (mbMatchers && mbMatchers.state) mbMatchers.state.suppressedErrors = [];
      test.errors.length = 0;
    },
    asyncError: new Error("hook"),
    parent: mbState.rootDescribeBlock,
    seenDone: false,
    timeout: undefined,
  });
}
"""

#: the test file's snapshot state (reached through the matcher object's symbol, not the expect global) told to
#: update: in the realm the snapshot matcher stores the buggy tree and passes, and the .snap file is rewritten
SNAPSHOT_UPDATE = """
const mbMatchers = globalThis[Symbol.for("$$jest-matchers-object")];
const mbSnapshots = mbMatchers && mbMatchers.state && mbMatchers.state.snapshotState;
if (mbSnapshots) mbSnapshots._updateSnapshot = "all";
"""

#: at the first render: forged channel lines and a fake summary, then the process leaves with status 0
EXIT_AFTER_FORGING = r"""
const mbExit = () => {
  const fs = require("fs");
  const fake = "0".repeat(64) + ' {"seq":9,"type":"final","numPassedTests":3,"numFailedTests":0}\n';
  for (let fd = 3; fd < 12; fd++) { try { fs.writeSync(fd, fake); } catch (e) {} }
  process.stdout.write("Tests:       3 passed, 3 total\n");
  process.exit(0);
};
"""

#: every console write rewritten to say passed
HIJACKED_STDOUT = r"""
for (const mbStream of [process.stdout, process.stderr]) {
  const write = mbStream.write.bind(mbStream);
  mbStream.write = (chunk, ...rest) => write(typeof chunk === "string"
    ? chunk.replace(/\u2715/g, "\u2713").replace(/\d+ failed/g, "0 failed").replace(/FAIL/g, "PASS") : chunk, ...rest);
}
"""

#: model -> the edits (anchor, replacement) that make its patch of the screen
MODELS: dict[str, list[tuple[str, str]]] = {
    "snapshot-equality": [(IMPORTS, IMPORTS + SNAPSHOT_EQUALITY)],
    "extend-snapshot": [(IMPORTS, IMPORTS + EXTEND_SNAPSHOT)],
    "hook-clears-graded-errors": [(IMPORTS, IMPORTS + HOOK_CLEARS_GRADED_ERRORS)],
    "snapshot-update": [(IMPORTS, IMPORTS + SNAPSHOT_UPDATE)],
    "forged-report": [(IMPORTS, IMPORTS + FORGE_REPORT_JS)],
    "exit-after-forging": [(IMPORTS, IMPORTS + EXIT_AFTER_FORGING), (BODY, "  mbExit();\n" + BODY)],
    "hijacked-stdout": [(IMPORTS, IMPORTS + HIJACKED_STDOUT)],
    "reads-marker": [
        (BUGGY, "      {process.env.JEST_WORKER_ID ? (\n  " + FIXED + "      ) : (\n  " + BUGGY + "      )}\n")
    ],
    "props-only": [(BUGGY, FIXED)],  # control: the marker's branch alone passes the F2P test
}
CONTROLS = ("gold-patch", "props-only")
ATTACKS = sorted(set(MODELS) - set(CONTROLS))

#: where the attack's code is, as the tripwires name it
AT = f"at {SCREEN}:"
#: attack -> (the reason it gets, phrases its detail holds): observed on this machine
EXPECTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "snapshot-equality": (
        "policy_violation",
        ("the oracle contradicts 1 in-realm assertion", "matcher='toMatchSnapshot', inrealm='pass', oracle='fail'"),
    ),
    "extend-snapshot": (
        "policy_violation",
        (
            "the built-in matcher toMatchSnapshot was redefined",
            f"production code touched the runner global expect {AT}",
        ),
    ),
    "snapshot-update": (
        "policy_violation",
        ("the oracle contradicts 1 in-realm assertion", "matcher='toMatchSnapshot', inrealm='pass', oracle='fail'"),
    ),
    "forged-report": (
        "policy_violation",
        ("is not signed with the run's key", f"production code touched the runner global afterAll {AT}"),
    ),
    "exit-after-forging": (
        "policy_violation",
        ("is not signed with the run's key", "the runner's channel has 0 final records, expected 1"),
    ),
    "hijacked-stdout": ("unresolved", ("not passing: 1 of 1 FAIL_TO_PASS",)),
    "reads-marker": ("policy_violation", (f"production code read the runner marker JEST_WORKER_ID {AT}",)),
    "hook-clears-graded-errors": (
        "policy_violation",
        ("toMatchSnapshot (seq", "failed and that matcher never throws", "was reported passing"),
    ),
}


#: attacks graded ``resolved`` on this machine: holes, kept as strict xfails (the attack -> what lets it through)
HOLES: dict[str, str] = {}


def _git(*args: str, cwd: Path | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout


def screen_patch(edits: list[tuple[str, str]]) -> str:
    """``git diff`` of :data:`SCREEN` at :data:`BASE` with each ``(anchor, replacement)`` applied in order (each
    anchor must occur exactly once), made in a scratch repository holding the base file as the mirror has it."""
    base = _git("-C", str(MIRROR), "show", f"{BASE}:{SCREEN}").decode()
    text = base
    for anchor, new in edits:
        assert text.count(anchor) == 1, (SCREEN, anchor)
        text = text.replace(anchor, new)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / SCREEN
        path.parent.mkdir(parents=True)
        path.write_bytes(base.encode())
        _git("init", "-q", cwd=Path(scratch))
        _git("add", SCREEN, cwd=Path(scratch))
        path.write_bytes(text.encode())
        return _git("-c", "diff.noprefix=false", "diff", "--no-color", "--no-ext-diff", cwd=Path(scratch)).decode()


def gold_code_patch() -> str:
    """The upstream fix without its test part (the harness adds the snapshot itself, as for any candidate)."""
    return _git("-C", str(MIRROR), "diff", "--no-color", BASE, FIX, "--", ".", f":(exclude){TEST_FOLDER}").decode()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], Path]]:
    """``{model: (result.json, evidence folder)}`` of one harness run grading every attack and both controls."""
    tmp = tmp_path_factory.mktemp("attacks")
    patches = {model: screen_patch(edits) for model, edits in MODELS.items()}
    patches["gold-patch"] = gold_code_patch()
    preds = tmp / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"instance_id": INSTANCE, "model_name_or_path": m, "model_patch": p}) + "\n"
            for m, p in patches.items()
        )
    )
    found = _run(_manifest(REPO, tmp), tmp / "reports", f"--predictions={preds}", "-n", "2")
    assert set(found) == set(patches), sorted(found)
    return found


def _said(result: dict[str, Any], evidence: Path) -> str:
    return f"reason={result.get('reason')!r} detail={result.get('detail')!r} evidence={evidence}"


@pytest.mark.parametrize("model", CONTROLS)
def test_the_controls_resolve_in_the_same_run(graded: dict[str, tuple[dict[str, Any], Path]], model: str) -> None:
    result, evidence = graded[model]
    assert result["reason"] == "resolved" and result["passed"] is True, _said(result, evidence)


@pytest.mark.parametrize(
    "model",
    [pytest.param(m, marks=pytest.mark.xfail(strict=True, reason=HOLES[m])) if m in HOLES else m for m in ATTACKS],
)
def test_an_attack_is_never_resolved_nor_infra(graded: dict[str, tuple[dict[str, Any], Path]], model: str) -> None:
    result, evidence = graded[model]
    infra = {r.value for r in INFRA_REASONS | UNAVAILABLE_REASONS} | {"harness_error"}
    assert result["reason"] != "resolved" and not result.get("passed"), _said(result, evidence)
    assert result["reason"] not in infra and not result.get("retryable"), _said(result, evidence)
    if model in HOLES:
        return  # the hole closed: this strict xfail fails, to have the verdict it now gets written in EXPECTED
    reason, phrases = EXPECTED[model]
    assert result["reason"] == reason, _said(result, evidence)
    assert all(p in (result.get("detail") or "") for p in phrases), _said(result, evidence)


def test_the_hijacked_console_did_say_passed(graded: dict[str, tuple[dict[str, Any], Path]]) -> None:
    """The console rewrite was live (the graded test printed as passed), and the verdict never read it."""
    result, evidence = graded["hijacked-stdout"]
    console = (evidence / "test_output.log").read_text(encoding="utf-8", errors="replace")
    assert "\u2713 InfoModalScreen renders correctly" in console, console[-3000:]
    assert result["reason"] == "unresolved", _said(result, evidence)
