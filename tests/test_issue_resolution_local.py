"""The issue-resolution protocol end to end with the local runtime, on a real git repository and a
real test runner (pytest writing JUnit XML where Gradle would): every verdict reason a candidate can get.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PyRepo, git, manifest_for

WRONG_PATCH = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,5 +1,5 @@
 def add(a, b):
-    return a + b + 1
+    return a + b + 2
 
 
 def sub(a, b):
"""


def _fix_patch(repo: PyRepo) -> str:
    return git(repo.path, "diff", repo.base, repo.fix, "--", "calc.py") + "\n"


def _run(
    pytester: pytest.Pytester, repo: PyRepo, predictions: list[dict] | str, *args: str, manifest: str | None = None
):
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest or manifest_for(repo)})
    if isinstance(predictions, str):
        spec = predictions
    else:
        pytester.makefile(".jsonl", preds="\n".join(json.dumps(p) for p in predictions) + "\n")
        spec = "preds.jsonl"
    result = pytester.runpytest(
        "cases",
        f"--predictions={spec}",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "--mb-run-id=r",
        "-p",
        "no:cacheprovider",
        *args,
    )
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    return result, summary


def _pred(patch: str | None) -> dict:
    return {"instance_id": "acme__calc-1", "model_name_or_path": "model-x", "model_patch": patch}


pytestmark = pytest.mark.usefixtures("mb_cache")


@pytest.mark.e2e
def test_gold_resolves_with_every_transition_kind(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    result, summary = _run(pytester, pyrepo, "gold")
    result.assert_outcomes(passed=1)
    inst = summary["instances"]["acme__calc-1"]
    assert summary["resolution_rate"] == 1.0
    assert inst["reason"] == "resolved"
    assert (inst["f2p_passed"], inst["n2p_passed"], inst["p2p_passed"]) == (2, 1, 1)
    assert inst["loc_f1"] == 1.0
    evidence = Path(inst["evidence_dir"])
    for name in (
        "model_patch.diff",
        "test_patch.diff",
        "commands.txt",
        "test_output.log",
        "parsed.json",
        "result.json",
    ):
        assert (evidence / name).is_file(), name
    parsed = json.loads((evidence / "parsed.json").read_text())
    assert parsed["tests"]["app.src.test.test_add#test_add_small"] == "PASS"


@pytest.mark.e2e
def test_empty_patch(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    result, summary = _run(pytester, pyrepo, "empty")
    result.assert_outcomes(failed=1)
    assert summary["resolution_rate"] == 0.0 and summary["by_reason"] == {"empty_patch": 1}


@pytest.mark.e2e
def test_wrong_patch_is_unresolved_naming_the_failing_tests(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    result, summary = _run(pytester, pyrepo, [_pred(WRONG_PATCH)])
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "unresolved*",
            "item: acme__calc-1 [[]model-x[]]",
            "*FAIL_TO_PASS: app.src.test.test_add#test_add_negative (FAIL)*",
            "FAILED cases/acme__calc.yaml::acme__calc-1 - unresolved*",
        ]  # the short summary leads with the reason
    )
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "unresolved"
    # the N2P test still becomes runnable? No: mul is missing, so its module fails to import (NONE)
    assert inst["failing"]["NONE_TO_PASS"] == ["app.src.test.test_mul#test_mul (NONE)"]
    assert inst["p2p_passed"] == 1


@pytest.mark.e2e
def test_patch_that_does_not_apply(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    stale = WRONG_PATCH.replace("return a + b + 1", "return a + b + 7")
    result, summary = _run(pytester, pyrepo, [_pred(stale)])
    result.assert_outcomes(failed=1)
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "patch_apply_failed"
    assert inst["detail"].startswith(
        "the patch does not apply (3 strategies tried; first error: error: patch failed: calc.py:1)"
    )
    log = (Path(inst["evidence_dir"]) / "model_patch.apply.log").read_text()
    assert "git apply --verbose --3way" in log and "patch --batch" in log


def test_text_that_is_not_a_diff(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    result, summary = _run(pytester, pyrepo, [_pred("I fixed it, trust me.")])
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "patch_apply_failed"
    assert "model_patch of acme__calc-1" in inst["detail"]


@pytest.mark.e2e
def test_candidate_edits_to_tests_are_restored_and_flagged(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    sneaky = _fix_patch(pyrepo) + (
        "diff --git a/app/src/test/test_sub.py b/app/src/test/test_sub.py\n"
        "--- a/app/src/test/test_sub.py\n+++ b/app/src/test/test_sub.py\n"
        "@@ -2,4 +2,4 @@ from calc import sub\n \n \n def test_sub():\n-    assert sub(3, 1) == 2\n+    assert True\n"
    )
    result, summary = _run(pytester, pyrepo, [_pred(sneaky)])
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "resolved"  # the real fix is there; the edited test was put back
    assert inst["flags"] == ["test_files_touched"]
    assert inst["test_files_touched"] == ["app/src/test/test_sub.py"]


@pytest.mark.e2e
def test_changing_gradle_test_configuration_is_a_policy_violation(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    (pyrepo.path / "app" / "build.gradle").write_text("android {\n}\n")
    git(pyrepo.path, "add", "-A")
    git(pyrepo.path, "commit", "-q", "-m", "add a gradle build file")
    base = git(pyrepo.path, "rev-parse", "HEAD")
    cheat = (
        "diff --git a/app/build.gradle b/app/build.gradle\n--- a/app/build.gradle\n+++ b/app/build.gradle\n"
        "@@ -1,2 +1,3 @@\n android {\n+    testOptions { unitTests.all { ignoreFailures = true } }\n }\n"
    )
    manifest = (
        manifest_for(pyrepo)
        .replace(pyrepo.base, base)
        .replace(f"fix_commit: {pyrepo.fix}", "patch: ''\n    test_patch: ''")
    )
    result, summary = _run(pytester, pyrepo, [_pred(cheat)], manifest=manifest)
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "policy_violation"
    assert "ignoreFailures" in inst["detail"]


@pytest.mark.e2e
def test_timeout_is_its_own_reason(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    manifest = manifest_for(pyrepo, instance_extra="timeout_s: 1").replace(pyrepo.test_command, "sleep 30")
    result, summary = _run(pytester, pyrepo, "gold", manifest=manifest)
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "timeout"
    assert inst["duration_s"] < 20
    # the cause first, naming the limit; no advice about a test_command's result files (a cut-off run writes none)
    assert inst["detail"] == "the test run exceeded the instance's timeout_s (1 s)", inst["detail"]
    result.stdout.fnmatch_lines(["FAILED cases/acme__calc.yaml::acme__calc-1 - timeout: the test run exceeded*"])
    log = (pytester.path / "reports" / "r" / "progress.log").read_text()
    assert "acme__calc-1: running the tests; command: sleep 30" in log  # the step (status line), then the detail


@pytest.mark.e2e
def test_the_option_timeout_is_named_as_the_option(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    manifest = manifest_for(pyrepo).replace(pyrepo.test_command, "sleep 30")
    _, summary = _run(pytester, pyrepo, "gold", "--mb-instance-timeout=1", manifest=manifest)
    assert summary["instances"]["acme__calc-1"]["detail"] == "the test run exceeded --mb-instance-timeout (1 s)"


@pytest.mark.e2e
def test_unchanged_rerun_reuses_results_and_changed_patch_is_evaluated(
    pytester: pytest.Pytester, pyrepo: PyRepo
) -> None:
    _, first = _run(pytester, pyrepo, [_pred(WRONG_PATCH)])
    assert not first["instances"]["acme__calc-1"].get("cached")
    _, second = _run(pytester, pyrepo, [_pred(WRONG_PATCH)])
    assert second["instances"]["acme__calc-1"]["cached"] is True
    assert second["instances"]["acme__calc-1"]["reason"] == "unresolved"
    _, third = _run(pytester, pyrepo, [_pred(_fix_patch(pyrepo))])
    assert not third["instances"]["acme__calc-1"].get("cached")
    assert third["instances"]["acme__calc-1"]["reason"] == "resolved"
    _, forced = _run(pytester, pyrepo, [_pred(WRONG_PATCH)], "--mb-rerun")
    assert not forced["instances"]["acme__calc-1"].get("cached")


@pytest.mark.e2e
def test_validation_proposes_gold_lists(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    manifest = manifest_for(pyrepo)
    result, summary = _run(pytester, pyrepo, "gold", "--mb-validate", "--mb-validate-runs=2", manifest=manifest)
    result.assert_outcomes(passed=1)
    validation = summary["instances"]["acme__calc-1"]["validation"]
    assert validation["valid"] is True
    assert validation["FAIL_TO_PASS"] == [
        "app.src.test.test_add#test_add_negative",
        "app.src.test.test_add#test_add_small",
    ]
    assert validation["NONE_TO_PASS"] == ["app.src.test.test_mul#test_mul"]
    assert validation["PASS_TO_PASS"] == ["app.src.test.test_sub#test_sub"]
    assert validation["flaky"] == []
    assert validation["states"]["base"]["app.src.test.test_sub#test_sub"] == "PASS"
