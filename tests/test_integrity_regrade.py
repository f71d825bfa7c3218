"""Integrity: ``regrade()`` applies the live run's grading step, policy included.

The evidence folder is what a live jest run leaves (real jest ``--json`` output from ``fixtures/logs/jest``);
the candidate's patch also changed ``jest.config.js``. The report alone says the gold test passes; the
policy, re-run from the saved patch and configuration snapshots, makes it a ``policy_violation``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance
from pytest_mobilebench.suites.issue_resolution import regrade
from pytest_mobilebench.suites.issue_resolution.judge import save_policy_inputs

REPORT = Path(__file__).parent.parent / "fixtures" / "logs" / "jest" / "jest-results.json"
PASSING = "src/__tests__/math.test.js::math > add > adds two numbers"

FIX = "diff --git a/src/math.js b/src/math.js\n--- a/src/math.js\n+++ b/src/math.js\n@@ -1 +1 @@\n-a\n+b\n"
CONFIG = (
    "diff --git a/jest.config.js b/jest.config.js\n--- a/jest.config.js\n+++ b/jest.config.js\n@@ -1 +1 @@\n"
    "-module.exports = {};\n+module.exports = { testPathIgnorePatterns: ['mul'] };\n"
)


def _instance() -> IssueInstance:
    return IssueInstance(
        instance_id="acme__math-1", repo="acme/math", base_commit="a" * 40, framework="react-native",
        patch=FIX, test_patch="", FAIL_TO_PASS=(PASSING,),
    )  # fmt: skip


def _evidence(folder: Path, patch: str, before: dict[str, bytes], after: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True)
    (folder / "model_patch.diff").write_text(patch)
    (folder / "apply.json").write_text(json.dumps({"ok": True, "method": "git apply"}))
    save_policy_inputs(folder, before=before, after=after, ignored=[], plan_command="npx jest --json")
    plan = {"command": "npx jest", "result_globs": [".mobilebench/jest-results.json"], "parser": "jest", "modules": []}
    (folder / "run.json").write_text(
        json.dumps({"exit_code": 1, "timed_out": False, "plan": plan, "root_dir": "/tmp/jestproj"})
    )
    (folder / "test_output.log").write_text("")
    (folder / "results" / ".mobilebench").mkdir(parents=True)
    shutil.copy(REPORT, folder / "results" / ".mobilebench" / "jest-results.json")
    return folder


def test_regrade_of_a_changed_jest_config_is_a_policy_violation(tmp_path: Path) -> None:
    before = {"jest.config.js": b"module.exports = {};\n", "package.json": b"{}"}
    after = {**before, "jest.config.js": b"module.exports = { testPathIgnorePatterns: ['mul'] };\n"}
    verdict = regrade(_instance(), _evidence(tmp_path / "e", FIX + CONFIG, before, after))
    assert verdict["reason"] == "policy_violation"
    assert "jest.config.js" in verdict["detail"]


def test_regrade_without_the_config_change_resolves(tmp_path: Path) -> None:
    files = {"jest.config.js": b"module.exports = {};\n", "package.json": b"{}"}
    assert regrade(_instance(), _evidence(tmp_path / "e", FIX, files, files))["reason"] == "resolved"


def test_regrade_reads_the_setup_file_named_in_the_saved_config(tmp_path: Path) -> None:
    files = {"jest.config.js": b"module.exports = { setupFiles: ['<rootDir>/jest/setup'] };\n"}
    setup = (
        "diff --git a/jest/setup.js b/jest/setup.js\n--- a/jest/setup.js\n+++ b/jest/setup.js\n@@ -1 +1 @@\n-a\n+b\n"
    )
    verdict = regrade(_instance(), _evidence(tmp_path / "e", FIX + setup, files, files))
    assert verdict["reason"] == "policy_violation" and "jest/setup.js" in verdict["detail"]
