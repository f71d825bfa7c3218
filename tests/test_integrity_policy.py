"""Integrity end to end on a real git repository (local runtime, pytest as the runner writing JUnit XML
where Gradle would): sections that touch the runner's tools are never applied, runner configuration is
restored to base and flagged, the verdict is ``policy_violation``, and ``regrade()`` says the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PyRepo, git, manifest_for
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance, load_manifest
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.suites.issue_resolution import regrade


pytestmark = pytest.mark.usefixtures("mb_cache")


def _fix(repo: PyRepo) -> str:
    return git(repo.path, "diff", repo.base, repo.fix, "--", "calc.py") + "\n"


def _run(pytester: pytest.Pytester, repo: PyRepo, patch: str, manifest: str | None = None) -> tuple[dict, Path]:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest or manifest_for(repo)})
    pred = {"instance_id": "acme__calc-1", "model_name_or_path": "m", "model_patch": patch}
    pytester.makefile(".jsonl", preds=json.dumps(pred) + "\n")
    pytester.runpytest(
        "cases",
        "--predictions=preds.jsonl",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "--mb-run-id=r",
        "-p",
        "no:cacheprovider",
    )
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    return summary["instances"]["acme__calc-1"], pytester.path / "reports" / "r" / "m" / "acme__calc-1"


def _instance(repo: PyRepo, pytester: pytest.Pytester) -> IssueInstance:
    del repo
    (loaded,) = load_manifest(read_yaml(pytester.path / "cases" / "acme__calc.yaml"))
    return loaded.record  # type: ignore[union-attr]


@pytest.mark.e2e
def test_gradle_test_task_tweak_is_restored_flagged_and_a_violation(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    cheat = _fix(pyrepo) + (
        "diff --git a/app/build.gradle b/app/build.gradle\n--- a/app/build.gradle\n+++ b/app/build.gradle\n"
        "@@ -1,3 +1,4 @@\n plugins {\n     id 'com.android.library'\n }\n"
        '+tasks.named("testDebugUnitTest") { ignoreFailures = true }\n'
    )
    inst, evidence = _run(pytester, pyrepo, cheat)
    assert inst["reason"] == "policy_violation"
    assert "runner_config_touched" in inst["flags"]
    assert "app/build.gradle" in inst["detail"]
    as_run = (evidence / "candidate_as_run.diff").read_text()
    assert "calc.py" in as_run and "build.gradle" not in as_run  # restored to base before the tests
    assert json.loads((evidence / "parsed.json").read_text())["tests"]  # the tests still ran
    assert regrade(_instance(pyrepo, pytester), evidence)["reason"] == "policy_violation"


@pytest.mark.e2e
def test_planted_results_and_wrapper_edits_are_never_applied(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    planted = (
        '<testsuite name="x" tests="3"><testcase classname="app.src.test.test_add" name="test_add_small"/>'
        '<testcase classname="app.src.test.test_add" name="test_add_negative"/>'
        '<testcase classname="app.src.test.test_mul" name="test_mul"/></testsuite>'
    )
    cheat = (
        "diff --git a/app/build/test-results/testDebugUnitTest/TEST-planted.xml "
        "b/app/build/test-results/testDebugUnitTest/TEST-planted.xml\nnew file mode 100644\n--- /dev/null\n"
        f"+++ b/app/build/test-results/testDebugUnitTest/TEST-planted.xml\n@@ -0,0 +1 @@\n+{planted}\n"
        "diff --git a/gradlew b/gradlew\nnew file mode 100755\n--- /dev/null\n+++ b/gradlew\n@@ -0,0 +1,2 @@\n"
        "+#!/bin/sh\n+exit 0\n"
    )
    inst, evidence = _run(pytester, pyrepo, cheat)
    assert inst["reason"] == "policy_violation"
    assert "tools_touched" in inst["flags"]
    assert "TEST-planted.xml" in (evidence / "dropped_sections.diff").read_text()
    assert "gradlew" in (evidence / "dropped_sections.diff").read_text()
    assert (evidence / "candidate_as_run.diff").read_text().strip() == ""
    assert not any("planted" in p.name for p in (evidence / "results").rglob("*"))
    assert regrade(_instance(pyrepo, pytester), evidence)["reason"] == "policy_violation"


@pytest.mark.e2e
def test_an_untouched_candidate_still_resolves_and_regrades_the_same(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    inst, evidence = _run(pytester, pyrepo, _fix(pyrepo))
    assert inst["reason"] == "resolved" and inst["flags"] == []
    assert regrade(_instance(pyrepo, pytester), evidence)["reason"] == "resolved"


@pytest.mark.e2e
def test_results_written_elsewhere_are_named_or_explained(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    elsewhere = manifest_for(pyrepo).replace(
        "--junitxml=app/build/test-results/testDebugUnitTest/TEST-calc.xml", "--junitxml=out/junit.xml"
    )
    inst, _ = _run(pytester, pyrepo, _fix(pyrepo), manifest=elsewhere)
    assert inst["reason"] == "no_tests_ran"
    assert "expected test results in **/build/test-results/**/TEST-*.xml" in inst["detail"]
    named = elsewhere.replace("    difficulty: easy", "    test_results: [out/junit.xml]\n    difficulty: easy")
    inst, _ = _run(pytester, pyrepo, _fix(pyrepo), manifest=named)
    assert inst["reason"] == "resolved"
