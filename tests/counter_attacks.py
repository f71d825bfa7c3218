"""Candidates against the bundled counter example (``cases/examples``, ``mobilebench__counter-1``, jest in
Docker), graded through the real harness in a pytest subprocess: what the trust tests share.

:func:`hooked_patch` builds a patch whose production module (``src/counter.js``, required by the FAIL_TO_PASS
tests) requires a new module of the candidate's; the bug stays in place. :func:`grade` runs the harness on
``{model: patch}`` and returns each model's ``result.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INSTANCE = "mobilebench__counter-1"

#: production code that reads --outputFile, starts a detached rewriter of jest's report, holds jest open with an
#: ``afterAll``, prints a fake summary and forges channel lines on every open descriptor (the counter's trust tests
#: and the real-repository attacks share it; names are ``mb``-prefixed to stay clear of the module's own)
FORGE_REPORT_JS = r"""
const mbFs = require("fs");
const mbArg = process.argv.find((a) => a.startsWith("--outputFile="));
if (mbArg && !process.env.MB_FORGED) {
  process.env.MB_FORGED = "1";
  const file = mbArg.slice("--outputFile=".length);
  const loop = `
    const fs = require('fs'); const file = process.argv[1]; const end = Date.now() + 120000;
    const tick = () => {
      try {
        const r = JSON.parse(fs.readFileSync(file, 'utf8'));
        if (r.numFailedTests > 0) {
          r.numFailedTests = 0; r.success = true;
          for (const s of r.testResults) { s.status = 'passed'; for (const t of s.assertionResults) {
              t.status = 'passed'; t.failureMessages = []; } }
          fs.writeFileSync(file, JSON.stringify(r));
        }
      } catch (e) {}
      if (Date.now() < end) setTimeout(tick, 5);
    };
    tick();`;
  require("child_process").spawn(process.execPath, ["-e", loop, file], { detached: true, stdio: "ignore" }).unref();
  const fake = "0".repeat(64) + ' {"seq":0,"type":"final","numPassedTests":40,"numFailedTests":0}\n';
  for (let fd = 3; fd < 12; fd++) { try { mbFs.writeSync(fd, fake); } catch (e) {} }
}
if (typeof afterAll === "function") {
  afterAll(() => new Promise((done) => setTimeout(() => {
    process.stdout.write("Tests:       40 passed, 40 total\n");
    done();
  }, 1500)));
}
"""

__all__ = ["FORGE_REPORT_JS", "INSTANCE", "ROOT", "grade", "hooked_patch", "results_of"]


def hooked_patch(module: str, text: str) -> str:
    """A patch making ``src/counter.js`` require ``src/<module>.js`` (new, holding ``text``); the bug stays."""
    lines = textwrap.dedent(text).splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        "diff --git a/src/counter.js b/src/counter.js\n--- a/src/counter.js\n+++ b/src/counter.js\n"
        f"@@ -1,3 +1,4 @@\n+require('./{module}.js');\n class Counter {{\n   constructor(start = 0) {{\n"
        "     this.value = start;\n"
        f"diff --git a/src/{module}.js b/src/{module}.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/{module}.js\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


def results_of(reports: Path) -> dict[str, dict[str, Any]]:
    """``{model: result.json}`` of every item under the reports folder ``reports``."""
    found: dict[str, dict[str, Any]] = {}
    for path in reports.glob("2*/*/*/result.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        found[str(result["model_name_or_path"])] = result
    return found


def grade(tmp_path: Path, models: dict[str, str], *extra: str) -> tuple[dict[str, dict[str, Any]], str]:
    """Grade ``{model: model_patch}`` on :data:`INSTANCE` (``-n 2``, ``extra`` options added), reports under
    ``tmp_path/reports``, predictions in ``tmp_path/preds.jsonl``. Returns ``({model: result}, the run's
    last 3000 characters of output)``; asserts that every model got a result."""
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"instance_id": INSTANCE, "model_name_or_path": m, "model_patch": p}) + "\n"
            for m, p in models.items()
        )
    )
    reports = tmp_path / "reports"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "cases/examples",
        "-p",
        "no:cacheprovider",
        "-q",
        "-k",
        INSTANCE,
        f"--mb-reports-dir={reports}",
        f"--predictions={preds}",
        "-n",
        "2",
        *extra,
    ]
    proc = subprocess.run(
        argv, check=False, cwd=ROOT, capture_output=True, text=True, timeout=1800, env=dict(os.environ)
    )
    results = results_of(reports)
    assert set(results) == set(models), proc.stdout[-3000:]
    return results, proc.stdout[-3000:]
