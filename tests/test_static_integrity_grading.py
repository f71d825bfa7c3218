"""The static integrity audit in issue-resolution grading: the same :func:`judge` live and on re-grade lists
the findings of the candidate's production files; ``--mb-integrity=strict`` (saved with the policy's inputs)
makes the item a ``policy_violation`` of kind ``integrity``; a local-runtime run shows the findings in the
result, the summary (per model), the JUnit case and the run page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import PyRepo, git, manifest_for
from pytest_mobilebench.suites.issue_resolution import regrade
from pytest_mobilebench.suites.issue_resolution.judge import judge, save_policy_inputs
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

REPORT = Path(__file__).parent.parent / "fixtures" / "logs" / "jest" / "jest-results.json"
PASSING = "src/__tests__/math.test.js::math > add > adds two numbers"
FIX = (
    "diff --git a/src/math.js b/src/math.js\n--- a/src/math.js\n+++ b/src/math.js\n@@ -1 +1,2 @@\n-a\n"
    "+if (process.env.JEST_WORKER_ID !== undefined) module.exports.add = (a, b) => a + b;\n+b\n"
)
TEST_EDIT = (
    "diff --git a/src/__tests__/math.test.js b/src/__tests__/math.test.js\n--- a/src/__tests__/math.test.js\n"
    "+++ b/src/__tests__/math.test.js\n@@ -1 +1 @@\n-a\n+expect.extend({});\n"
)


def _instance() -> IssueInstance:
    return IssueInstance(
        instance_id="acme__math-1",
        repo="acme/math",
        base_commit="a" * 40,
        framework="react-native",
        patch=FIX,
        test_patch="",
        FAIL_TO_PASS=(PASSING,),
    )


def _evidence(folder: Path, patch: str, mode: str) -> Path:
    folder.mkdir(parents=True)
    files = {"jest.config.js": b"module.exports = {};\n", "package.json": b"{}"}
    (folder / "model_patch.diff").write_text(patch)
    (folder / "apply.json").write_text(json.dumps({"ok": True, "method": "git apply"}))
    save_policy_inputs(
        folder, before=files, after=files, ignored=[], plan_command="npx jest --json", integrity_mode=mode
    )
    plan = {"command": "npx jest", "result_globs": [".mobilebench/jest-results.json"], "parser": "jest", "modules": []}
    (folder / "run.json").write_text(
        json.dumps({"exit_code": 1, "timed_out": False, "plan": plan, "root_dir": "/tmp/jestproj"})
    )
    (folder / "test_output.log").write_text("")
    (folder / "results" / ".mobilebench").mkdir(parents=True)
    shutil.copy(REPORT, folder / "results" / ".mobilebench" / "jest-results.json")
    return folder


def test_report_mode_lists_the_finding_and_keeps_the_verdict(tmp_path: Path) -> None:
    judged = judge(_instance(), _evidence(tmp_path / "e", FIX + TEST_EDIT, "report"))
    assert judged.verdict.reason.value == "resolved"
    assert [(f.file, f.line, f.kind, f.what) for f in judged.integrity] == [
        ("src/math.js", 1, "runner_marker", "process.env.JEST_WORKER_ID")
    ]  # the test file's expect is not one


def test_strict_mode_is_a_policy_violation_live_and_on_regrade(tmp_path: Path) -> None:
    folder = _evidence(tmp_path / "e", FIX, "strict")
    judged = judge(_instance(), folder)
    assert judged.verdict.reason.value == "policy_violation"
    assert judged.outcome.policy_violation == (
        "integrity: src/math.js:1: runner_marker (process.env.JEST_WORKER_ID): "
        "if (process.env.JEST_WORKER_ID !== undefined) module.exports.add = (a, b) => a + b;"
    )
    assert regrade(_instance(), folder)["reason"] == "policy_violation"


def test_strict_without_findings_resolves(tmp_path: Path) -> None:
    clean = "diff --git a/src/math.js b/src/math.js\n--- a/src/math.js\n+++ b/src/math.js\n@@ -1 +1 @@\n-a\n+b\n"
    judged = judge(_instance(), _evidence(tmp_path / "e", clean, "strict"))
    assert judged.verdict.reason.value == "resolved" and judged.integrity == ()


PROBE = """\
diff --git a/app/src/main/java/acme/Probe.kt b/app/src/main/java/acme/Probe.kt
new file mode 100644
--- /dev/null
+++ b/app/src/main/java/acme/Probe.kt
@@ -0,0 +1,3 @@
+package acme
+// a fix that holds only under the grader
+fun underTest(): Boolean = System.getenv("CI") != null
"""


def _run(pytester: pytest.Pytester, repo: PyRepo, *args: str) -> tuple[pytest.RunResult, dict]:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest_for(repo)})
    patch = git(repo.path, "diff", repo.base, repo.fix, "--", "calc.py") + "\n" + PROBE
    pred = {"instance_id": "acme__calc-1", "model_name_or_path": "model-x", "model_patch": patch}
    pytester.makefile(".jsonl", preds=json.dumps(pred) + "\n")
    result = pytester.runpytest(
        "cases",
        "--predictions=preds.jsonl",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "--mb-run-id=r",
        "-p",
        "no:cacheprovider",
        "--junitxml=junit.xml",
        *args,
    )
    return result, json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


pytestmark = pytest.mark.usefixtures("mb_cache")


@pytest.mark.e2e
def test_local_run_reports_the_finding_then_strict_refuses_it(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    result, summary = _run(pytester, pyrepo)
    result.assert_outcomes(passed=1)
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "resolved" and inst["integrity_count"] == 1
    assert summary["by_model"]["model-x"]["integrity"] == {
        "items": 1,
        "items_flagged": 1,
        "findings": 1,
        "test_runner_api": 0,
        "runner_marker": 1,
        "introspection": 0,
        "unaudited": 0,
    }
    stored = json.loads((Path(inst["evidence_dir"]) / "result.json").read_text())
    assert stored["integrity_findings"] == [
        {
            "file": "app/src/main/java/acme/Probe.kt",
            "line": 3,
            "kind": "runner_marker",
            "what": "environment CI",
            "snippet": 'fun underTest(): Boolean = System.getenv("CI") != null',
        }
    ]
    junit = (pytester.path / "junit.xml").read_text()
    assert '<property name="integrity_count" value="1"' in junit
    assert '<property name="mobilebench.integrity.model-x.runner_marker" value="1"' in junit
    page = (pytester.path / "reports" / "r" / "index.html").read_text()
    assert "Static integrity audit" in page and "app/src/main/java/acme/Probe.kt:3" in page

    result, summary = _run(pytester, pyrepo, "--mb-integrity=strict")
    result.assert_outcomes(failed=1)
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "policy_violation" and inst["integrity_count"] == 1
    assert inst["policy_violations"] == [
        "integrity: app/src/main/java/acme/Probe.kt:3: runner_marker (environment CI): "
        'fun underTest(): Boolean = System.getenv("CI") != null'
    ]


def test_mocks_and_restored_runner_configuration_are_not_production(tmp_path: Path) -> None:
    mock = (
        "diff --git a/__mocks__/zustand.ts b/__mocks__/zustand.ts\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/__mocks__/zustand.ts\n@@ -0,0 +1 @@\n+afterEach(() => jest.resetModules());\n"
        "diff --git a/src/__mocks__/api.js b/src/__mocks__/api.js\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/src/__mocks__/api.js\n@@ -0,0 +1 @@\n+module.exports = jest.fn();\n"
    )
    judged = judge(_instance(), _evidence(tmp_path / "e", FIX + mock, "report"))
    assert [f.file for f in judged.integrity] == ["src/math.js"]
