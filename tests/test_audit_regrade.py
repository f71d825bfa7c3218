"""--mb-regrade on real runs of the local runtime: the same grading step as the live run, today's parsers,
pre-test facts (policy violations) kept, evidence changed after the run re-parsed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import PyRepo, git, manifest_for


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_MOBILEBENCH_CACHE", str(tmp_path / "mbcache"))


def _live(pytester: pytest.Pytester, repo: PyRepo, predictions: list[dict] | str, manifest: str | None = None,
          run_id: str = "live") -> dict:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest or manifest_for(repo)})
    spec = predictions
    if not isinstance(predictions, str):
        pytester.makefile(".jsonl", preds="\n".join(json.dumps(p) for p in predictions) + "\n")
        spec = "preds.jsonl"
    pytester.runpytest("cases", f"--predictions={spec}", "--mb-runtime=local", "--mb-trust-candidates", f"--mb-run-id={run_id}",
                       f"--mb-summary=reports/{run_id}/summary.json", "-p", "no:cacheprovider")
    return json.loads((pytester.path / "reports" / run_id / "summary.json").read_text())


def _regrade(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest("cases", "--mb-regrade=reports/live", "--mb-summary=reports/regraded.json",
                                "--mb-run-id=again", "-p", "no:cacheprovider", *args)
    return result, json.loads((pytester.path / "reports" / "regraded.json").read_text())


@pytest.mark.e2e
def test_regrade_gives_the_live_verdict_and_rereads_the_evidence(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    live = _live(pytester, pyrepo, "gold")
    assert live["instances"]["acme__calc-1"]["reason"] == "resolved"
    result, summary = _regrade(pytester)
    assert result.ret == 0
    inst = summary["instances"]["acme__calc-1"]
    assert (inst["reason"], inst["regraded"], inst["previous_reason"]) == ("resolved", True, "resolved")
    assert summary["regraded_from"].endswith("reports/live") and summary["regrade_problems"] == []
    assert inst["loc_f1"] == live["instances"]["acme__calc-1"]["loc_f1"]
    # the evidence now says a FAIL_TO_PASS test failed: the re-grade parses it again and follows it
    xml = next((Path(inst["evidence_dir"]) / "results").rglob("TEST-*.xml"))
    edited, n = re.subn(r'(<testcase[^>]*name="test_add_small"[^>]*?)\s*/>', r'\1><failure message="edited">x</failure></testcase>',
                        xml.read_text())
    assert n == 1
    xml.write_text(edited)
    _, summary = _regrade(pytester)
    again = summary["instances"]["acme__calc-1"]
    assert again["reason"] == "unresolved"
    assert any("test_add_small" in t for t in again["failing"]["FAIL_TO_PASS"])


@pytest.mark.e2e
def test_regrade_keeps_a_policy_violation(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    fix = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n"
    gradle = ("diff --git a/app/build.gradle b/app/build.gradle\n--- a/app/build.gradle\n+++ b/app/build.gradle\n"
              "@@ -1,3 +1,6 @@\n plugins {\n     id 'com.android.library'\n }\n+android {\n+    testOptions { unitTests.all { ignoreFailures = true } }\n+}\n")
    live = _live(pytester, pyrepo, [{"instance_id": "acme__calc-1", "model_name_or_path": "m", "model_patch": fix + gradle}])
    assert live["instances"]["acme__calc-1"]["reason"] == "policy_violation"
    _, summary = _regrade(pytester)
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "policy_violation"  # whether or not the live run went on to run the tests


def test_items_that_never_ran_tests_and_unknown_instances_are_kept(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    _live(pytester, pyrepo, "empty")
    other = pytester.path / "reports" / "live" / "m" / "acme__calc-9"
    other.mkdir(parents=True)
    (other / "result.json").write_text(json.dumps({"instance_id": "acme__calc-9", "suite": "issue_resolution",
                                                   "model_name_or_path": "m", "reason": "resolved", "passed": True}))
    _, summary = _regrade(pytester)
    empty = summary["instances"]["acme__calc-1@empty"]
    assert (empty["reason"], empty["regraded"]) == ("empty_patch", False)
    assert summary["instances"]["acme__calc-9@m"]["regraded"] is False
    assert len(summary["regrade_problems"]) == 1 and "acme__calc-9" in summary["regrade_problems"][0]


def test_regrade_of_a_missing_folder_is_a_usage_error(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest_for(pyrepo)})
    result = pytester.runpytest("cases", "--mb-regrade=reports/nope", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*reports/nope is not a run folder*"])


@pytest.mark.e2e
def test_cached_items_are_regraded_from_the_run_that_evaluated_them(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    first = _live(pytester, pyrepo, "gold", run_id="first")
    live = _live(pytester, pyrepo, "gold")  # run "live" takes the result from the cache: no folder of its own
    assert live["instances"]["acme__calc-1"]["evidence_dir"] == first["instances"]["acme__calc-1"]["evidence_dir"]
    assert not (pytester.path / "reports" / "live" / "gold").exists()
    _, summary = _regrade(pytester)
    inst = summary["instances"]["acme__calc-1"]
    assert (inst["reason"], inst["regraded"]) == ("resolved", True)
    assert summary["regrade_problems"] == []
