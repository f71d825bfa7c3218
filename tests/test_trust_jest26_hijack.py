"""Runner hijacks on a jest 26 project (jest-jasmine2, jest 26's default runner), in Docker (issue 17).

The stand-in project is built here: the bundled counter example's sources and tests
(``fixtures/repos/make_counter_repo.py``) with ``jest@26.6.3`` from the npm registry, installed by the image
build (no lockfile: ``npm install``). The reference fix must resolve with the harness in place (canaries,
jasmine2 wrapper, keyed channel). Every other candidate leaves ``Counter.increment``'s bug in place and attacks
the runner from the module the FAIL_TO_PASS tests import, one class each: replacing the test globals,
rerouting jasmine's registration, rewriting the registered bodies through the spec tree (all of them, or all
but the harness's), reporting passing copies of failed results, registering impostors under the graded
titles and pruning the real tests, emptying failures after the fact, replacing jasmine's
spec class and prototypes, hijacking the reporters, overriding a matcher for everyone, patching the realm's
``Object.is`` (caught by the assertion oracle), and forging the report
(rewriter of ``--outputFile``, fake summary line, forged channel lines on every descriptor). None may be
``resolved``; none may be infrastructure; the ones that make the report say "passed" are
``runner_compromised``. Marked ``docker``: a daemon must answer (and the image build reaches the npm registry).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
INSTANCE = "mobilebench__counter26-1"

pytestmark = [pytest.mark.docker, pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers")]

#: the test globals replaced by versions that register a body that does nothing
GLOBALS = """\
const g = typeof global === 'object' ? global : globalThis;
['it', 'test', 'fit'].forEach((name) => {
  const original = g[name];
  const hollow = function (title) { return original.call(this, title, function () { return undefined; }); };
  Object.keys(original || {}).forEach((k) => { hollow[k] = original[k]; });
  try { Object.defineProperty(g, name, { get: () => hollow, configurable: true }); } catch (e) { /* frozen */ }
  try { g[name] = hollow; } catch (e) { /* frozen */ }
});
"""

#: jasmine's own registration methods rerouted to hollow bodies
REGISTRATION = """\
const env = jasmine.getEnv();
for (const m of ['it', 'fit', 'xit']) {
  const before = env[m];
  try { env[m] = (title, fn, timeout) => before.call(env, title, (done) => done(), timeout); } catch (e) {
      /* locked */ }
}
"""

#: the spec tree walked after the test file loaded: every registered body replaced (``%s``: skip the harness's?)
TREE = """\
const selective = %s;
Promise.resolve().then(() => {
  const visit = (node) => (node.children || []).forEach((child) => {
    if (child.children) return visit(child);
    if (selective && String(child.getFullName()).includes('canary')) return;
    const hollow = (done) => done();
    try { child.queueableFn.fn = hollow; } catch (e) { /* frozen */ }
    try { Object.defineProperty(child, 'queueableFn', { value: { fn: hollow, timeout: () => 5000 } }); } catch (e) {
        /* locked */ }
  });
  visit(jasmine.getEnv().topSuite());
});
"""

#: passing results reported again for failed specs, without running them (copies of their results)
REPLAY = """\
const replayed = new Set();
const collect = (node, out) => { (node.children || []).forEach((c) => (c.children ? collect(c, out) : out.push(c)));
    return out; };
afterEach(() => {
  collect(jasmine.getEnv().topSuite(), []).forEach((s) => {
    if (/canary/.test(s.getFullName()) || replayed.has(s) || s.result.status !== 'failed') return;
    replayed.add(s);
    s.resultCallback(Object.assign({}, s.result, { status: 'passed', failedExpectations: [] }));
  });
});
"""

#: passing tests registered under the graded titles, the real ones then removed from the spec tree
IMPOSTOR = """\
const own = new Set();
describe('Counter', () => {
  ['increments by one', 'increments by a step'].forEach((title) => own.add(it(title, () => expect(true).toBe(true))));
});
setTimeout(() => {}, 0);
Promise.resolve().then(() => {
  const prune = (node) => {
    const kids = node.children || [];
    for (let i = kids.length - 1; i >= 0; i -= 1) {
      if (kids[i].children) prune(kids[i]);
      else if (!own.has(kids[i]) && /^increments/.test(kids[i].description)) kids.splice(i, 1);
    }
  };
  prune(jasmine.getEnv().topSuite());
});
"""

#: failures recorded by jasmine emptied in a hook of its own, after every test
ERASE = """\
const specs = [];
const collect = (node) => (node.children || []).forEach((c) => (c.children ? collect(c) : specs.push(c)));
afterEach(() => {
  specs.length = 0;
  collect(jasmine.getEnv().topSuite());
  specs.filter((s) => !/canary/.test(s.getFullName())).forEach((s) => s.result.failedExpectations.splice(0));
});
"""

#: jasmine's spec class and its prototype methods replaced
CLASSES = """\
const Original = jasmine.Spec;
try {
  jasmine.Spec = class extends Original {
    constructor(attrs) { attrs.queueableFn = { fn: (done) => done(), timeout: attrs.queueableFn.timeout };
        super(attrs); }
  };
} catch (e) { /* locked */ }
for (let p = Original.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
  try { p.addExpectationResult = function () { return undefined; }; } catch (e) { /* frozen */ }
  try { p.onException = function () { return undefined; }; } catch (e) { /* frozen */ }
}
"""

#: the reporters cleared and replaced by one that turns every result into a pass
REPORTERS = """\
const env = jasmine.getEnv();
try { env.clearReporters(); } catch (e) { /* locked */ }
env.addReporter({ specDone(result) { result.status = 'passed'; result.failedExpectations.splice(0); } });
"""

#: a matcher that passes for everyone (the canary's must-fail assertion too)
MATCHER = """\
expect.extend({ toBe: () => ({ pass: true, message: () => 'ok' }) });
"""

#: a detached rewriter of the --outputFile report, a fake summary line, forged channel lines
FORGE = """\
const fs = require('fs');
const spot = process.argv.indexOf('--json') >= 0 && process.argv.find((a) => a.indexOf('--outputFile=') === 0);
if (spot && !global.__forged) {
  global.__forged = true;
  const file = spot.split('=')[1];
  const script = "const fs=require('fs');const f=process.argv[1];let n=0;const t=setInterval(()=>{n++;try{" +
    "const r=JSON.parse(fs.readFileSync(f,'utf8'));" +
    "if(r.numFailedTests){r.numFailedTests=0;r.numPassedTests=r.numTotalTests;" +
    "r.success=true;r.testResults.forEach((s)=>{s.status='passed';s.assertionResults.forEach((a)=>{a.status='passed';" +
    "a.failureMessages=[];});});fs.writeFileSync(f,JSON.stringify(r));}}catch(e){}if(n>4000)clearInterval(t);},10);";
  require('child_process').spawn(process.execPath, ['-e', script, file], { detached: true, stdio: 'ignore' }).unref();
  const line = 'f'.repeat(64) + ' {"seq":1,"type":"final","numPassedTests":4,"numFailedTests":0}\\n';
  for (let fd = 0; fd < 16; fd++) { try { fs.writeSync(fd, line); } catch (e) { /* closed */ } }
  afterAll(() => new Promise((done) => setTimeout(() => { console.log('Tests:       4 passed, 4 total'); done(); },
      1000)));
}
"""

#: the realm's Object.is (what expect's toBe and equals use) forgives the bug's shape, no matcher touched: the
#: assertion oracle's records contradict it (issue 31, item 1; docs/oracle.md)
OBJECT_IS = """\
const is = Object.is;
Object.is = function (a, b) { return is(a, b) || (typeof a === 'number' && a === b + 1); };
"""

#: candidate -> (module text, whether the harness itself must name it runner_compromised)
ATTACKS: dict[str, tuple[str, bool]] = {
    "globals": (GLOBALS, False),
    "registration": (REGISTRATION, False),
    "tree-all": (TREE % "false", False),
    "tree-graded": (TREE % "true", False),
    "replayed-results": (REPLAY, True),
    "impostors": (IMPOSTOR, True),
    "erase-failures": (ERASE, True),
    "spec-classes": (CLASSES, False),
    "reporters": (REPORTERS, True),
    "matcher": (MATCHER, True),
    "forged-report": (FORGE, False),
    "object-is": (OBJECT_IS, True),
}


def _counter_sources() -> object:
    spec = importlib.util.spec_from_file_location(
        "make_counter_repo", ROOT / "fixtures" / "repos" / "make_counter_repo.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")


def _stand_in(tmp: Path) -> tuple[Path, dict[str, str]]:
    """The jest 26 counter repository as a bundle, a manifest naming it, and the candidates' patches."""
    counter = _counter_sources()
    repo = tmp / "counter26"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    package = {**counter.PACKAGE_JSON, "devDependencies": {"jest": "26.6.3"}}  # type: ignore[attr-defined]
    _write(repo, {**counter.BASE, "package.json": json.dumps(package, indent=2) + "\n"})  # type: ignore[attr-defined]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    _write(repo, counter.FIX_1)  # type: ignore[attr-defined]
    reference = git(repo, "diff", "--", "src", strip=False)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fix")
    fix = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", base)
    patches = {"reference": reference}
    source = (repo / "src" / "counter.js").read_text()
    for name, (text, _) in ATTACKS.items():
        _write(repo, {"src/counter.js": "require('./setup-helpers.js');\n" + source, "src/setup-helpers.js": text})
        git(repo, "add", "-N", "src/setup-helpers.js")
        patches[name] = git(repo, "diff", strip=False)
        git(repo, "reset", "-q")
        git(repo, "checkout", "-q", "--", ".")
        (repo / "src" / "setup-helpers.js").unlink()
    git(repo, "checkout", "-q", "main")
    git(repo, "bundle", "create", str(tmp / "counter26.bundle"), "main")
    manifest = tmp / "counter26.yaml"
    manifest.write_text(
        "suite: issue_resolution\nrepo: mobilebench/counter26\nrepo_url: counter26.bundle\nframework: react-native\n"
        'environment:\n  node: "20.18.0"\n  package_manager: npm\n  install: npm install --no-audit --no-fund\n'
        f"instances:\n  - instance_id: {INSTANCE}\n    problem_statement: |\n"
        "      Counter.increment() adds one too many.\n"
        f"    base_commit: {base}\n    fix_commit: {fix}\n    FAIL_TO_PASS:\n"
        '      - "__tests__/counter.test.js::Counter > increments by one"\n'
        '      - "__tests__/counter.test.js::Counter > increments by a step"\n    PASS_TO_PASS: []\n'
        '    difficulty: easy\n    category: bug_fix\n    created_at: "2026-01-06"\n'
    )
    return manifest, patches


@pytest.mark.e2e
def test_jest26_runner_hijacks_are_never_resolved_nor_infra_and_the_reference_resolves(tmp_path: Path) -> None:
    manifest, patches = _stand_in(tmp_path)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"instance_id": INSTANCE, "model_name_or_path": m, "model_patch": p}) + "\n"
            for m, p in patches.items()
        )
    )
    reports = tmp_path / "reports"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        str(manifest),
        "-p",
        "no:cacheprovider",
        "-q",
        "--mb-runtime=docker",
        f"--mb-reports-dir={reports}",
        f"--predictions={preds}",
        "-n",
        "2",
        "--mb-cache-level=instance",
    ]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=2400, env=dict(os.environ))
    results = {}
    for path in reports.glob("*/*/*/result.json"):
        result = json.loads(path.read_text())
        results[result["model_name_or_path"]] = (result, path.parent)
    assert set(results) == set(patches), proc.stdout[-3000:]
    reference, evidence = results.pop("reference")
    assert reference["reason"] == "resolved", reference.get("detail")
    harness = json.loads((evidence / "harness.json").read_text())
    assert (
        harness["runner"] == "jasmine2" and f"{harness['folder']}/launch.js" in (evidence / "commands.txt").read_text()
    )
    for model, (result, _) in results.items():
        assert result["reason"] not in ("resolved", "infra_error"), (model, result.get("detail"))
        if ATTACKS[model][1]:
            assert result["reason"] == "policy_violation", (model, result.get("detail"))
            assert "runner_compromised" in result["detail"], (model, result.get("detail"))
    assert "the oracle contradicts" in results["object-is"][0]["detail"], results["object-is"][0]["detail"]
