"""Validation applies the live grade's policy to the gold patch (issue 30): a gold that a grade would refuse is
never a valid instance. The local runtime, a real git repository and a real test runner (pytest writing JUnit XML).

The shape is nmf-app's #415 seen on the real mirror: the fix corrects the code and also changes the runner's
configuration, which the policy restores for every candidate and refuses, so a grade of gold is
``policy_violation`` whatever the tests say. Validation once called such an instance valid.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PyRepo, git, manifest_for
from pytest_mobilebench.mining.validate import read_verdicts
from pytest_mobilebench.suites.issue_resolution.validation import POLICY_PROBLEM

pytestmark = pytest.mark.usefixtures("mb_cache")

#: the gold fix's change to the runner's configuration (what the Android framework's policy refuses)
IGNORE_FAILURES = "    testOptions { unitTests.all { ignoreFailures = true } }\n"


def _gold_changing_the_runner(repo: PyRepo) -> str:
    """The fix commit again, its gold also changing ``app/build.gradle``: the new fix commit's sha."""
    git(repo.path, "checkout", "-q", "-b", "refused", repo.fix)
    gradle = repo.path / "app" / "build.gradle"
    gradle.write_text(gradle.read_text().replace("}\n", "}\nandroid {\n" + IGNORE_FAILURES + "}\n", 1))
    git(repo.path, "commit", "-q", "--amend", "-a", "-m", "fix add, add mul, and let failing tests pass")
    return git(repo.path, "rev-parse", "HEAD")


def _run(pytester: pytest.Pytester, manifest: str, *args: str) -> dict:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest})
    pytester.runpytest(
        "cases", "--predictions=gold", "--mb-runtime=local", "--mb-run-id=r", "-p", "no:cacheprovider", *args
    )
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


@pytest.mark.e2e
def test_a_gold_the_policy_refuses_is_not_valid_and_its_grade_agrees(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    manifest = manifest_for(pyrepo).replace(pyrepo.fix, _gold_changing_the_runner(pyrepo))
    summary = _run(pytester, manifest, "--mb-validate")
    entry = summary["instances"]["acme__calc-1"]
    validation = entry["validation"]
    assert validation["valid"] is False, validation
    assert validation["problems"][0].startswith(POLICY_PROBLEM), validation["problems"]
    assert any("ignoreFailures" in v for v in validation["policy_violations"]), validation["policy_violations"]
    assert not entry["retryable"] and "ignoreFailures" in entry["detail"]
    # the tests ran as a grade runs them: the configuration restored, so the F2P lists are still proposed
    assert validation["FAIL_TO_PASS"] == [
        "app.src.test.test_add#test_add_negative",
        "app.src.test.test_add#test_add_small",
    ]
    verdict = read_verdicts(pytester.path / "reports" / "latest" / "summary.json", ["acme__calc-1"])["acme__calc-1"]
    assert verdict.status == "gold_refused" and not verdict.kept
    # what validation foresaw is what the grade of gold gives
    graded = _run(pytester, manifest, "--mb-rerun")["instances"]["acme__calc-1"]
    assert graded["reason"] == "policy_violation" and "ignoreFailures" in graded["detail"], graded


@pytest.mark.e2e
def test_an_honest_gold_is_still_valid_with_no_policy_finding(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    validation = _run(pytester, manifest_for(pyrepo), "--mb-validate")["instances"]["acme__calc-1"]["validation"]
    assert validation["valid"] is True and validation["policy_violations"] == [], validation
