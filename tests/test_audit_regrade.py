"""--mb-regrade on real runs of the local runtime: the same grading step as the live run, today's parsers,
pre-test facts (policy violations) kept, evidence changed after the run re-parsed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401 - imported once: the in-process runs draw the run page
import pytest

from conftest import PyRepo, git, manifest_for


pytestmark = pytest.mark.usefixtures("mb_cache")


def _live(
    pytester: pytest.Pytester,
    repo: PyRepo,
    predictions: list[dict] | str,
    manifest: str | None = None,
    run_id: str = "live",
) -> dict:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest or manifest_for(repo)})
    spec = predictions
    if not isinstance(predictions, str):
        pytester.makefile(".jsonl", preds="\n".join(json.dumps(p) for p in predictions) + "\n")
        spec = "preds.jsonl"
    pytester.runpytest(
        "cases",
        f"--predictions={spec}",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        f"--mb-run-id={run_id}",
        f"--mb-summary=reports/{run_id}/summary.json",
        "-p",
        "no:cacheprovider",
    )
    return json.loads((pytester.path / "reports" / run_id / "summary.json").read_text())


def _regrade(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest(
        "cases",
        "--mb-regrade=reports/live",
        "--mb-summary=reports/regraded.json",
        "--mb-run-id=again",
        "-p",
        "no:cacheprovider",
        *args,
    )
    return result, json.loads((pytester.path / "reports" / "regraded.json").read_text())


@pytest.mark.e2e
def test_regrade_gives_the_live_verdict_and_rereads_the_evidence(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    live = _live(pytester, pyrepo, "gold")
    assert live["instances"]["acme__calc-1"]["reason"] == "resolved"
    result, summary = _regrade(pytester)
    assert result.ret == 0 and summary["exitstatus"] == 0  # the summary says what the process exits with
    assert summary["regrade"]["regraded"] == 1 and summary["regrade"]["not_used"] == []
    inst = summary["instances"]["acme__calc-1"]
    assert (inst["reason"], inst["regraded"], inst["previous_reason"]) == ("resolved", True, "resolved")
    assert summary["regraded_from"].endswith("reports/live") and summary["regrade_problems"] == []
    assert inst["loc_f1"] == live["instances"]["acme__calc-1"]["loc_f1"]
    # the evidence now says a FAIL_TO_PASS test failed: the re-grade parses it again and follows it
    xml = next((Path(inst["evidence_dir"]) / "results").rglob("TEST-*.xml"))
    edited, n = re.subn(
        r'(<testcase[^>]*name="test_add_small"[^>]*?)\s*/>',
        r'\1><failure message="edited">x</failure></testcase>',
        xml.read_text(),
    )
    assert n == 1
    xml.write_text(edited)
    _, summary = _regrade(pytester)
    again = summary["instances"]["acme__calc-1"]
    assert again["reason"] == "unresolved"
    assert any("test_add_small" in t for t in again["failing"]["FAIL_TO_PASS"])


@pytest.mark.e2e
def test_regrade_keeps_a_policy_violation(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    fix = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n"
    gradle = (
        "diff --git a/app/build.gradle b/app/build.gradle\n--- a/app/build.gradle\n+++ b/app/build.gradle\n"
        "@@ -1,3 +1,6 @@\n plugins {\n     id 'com.android.library'\n }\n+android {\n"
        "+    testOptions { unitTests.all { ignoreFailures = true } }\n+}\n"
    )
    live = _live(
        pytester, pyrepo, [{"instance_id": "acme__calc-1", "model_name_or_path": "m", "model_patch": fix + gradle}]
    )
    assert live["instances"]["acme__calc-1"]["reason"] == "policy_violation"
    _, summary = _regrade(pytester)
    inst = summary["instances"]["acme__calc-1"]
    assert inst["reason"] == "policy_violation"  # whether or not the live run went on to run the tests


def test_items_that_never_ran_tests_and_unknown_instances_are_kept(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    _live(pytester, pyrepo, "empty")
    other = pytester.path / "reports" / "live" / "m" / "acme__calc-9"
    other.mkdir(parents=True)
    (other / "result.json").write_text(
        json.dumps(
            {
                "instance_id": "acme__calc-9",
                "suite": "issue_resolution",
                "model_name_or_path": "m",
                "reason": "resolved",
                "passed": True,
            }
        )
    )
    result, summary = _regrade(pytester)
    empty = summary["instances"]["acme__calc-1"]
    assert (empty["reason"], empty["regraded"]) == ("empty_patch", False)
    # an instance that is not collected is not used (never mixed into the re-graded figures), and said so
    assert "acme__calc-9" not in json.dumps(summary["instances"])
    (not_used,) = summary["regrade"]["not_used"]
    assert not_used["instance_id"] == "acme__calc-9" and "not among the collected items" in not_used["why"]
    assert len(summary["regrade_problems"]) == 1 and "acme__calc-9" in summary["regrade_problems"][0]
    # the kept item fails as it did in the live run: the exit status of a normal run, the summary says the same
    assert result.ret == summary["exitstatus"] == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "re-grade of *reports/live: re-graded 0, kept as they were 1, not used 1",
            "  not used: acme__calc-9 [[]m[]]: instance 'acme__calc-9' is not among the collected items*",
        ]
    )


def test_a_regrade_with_the_wrong_suite_says_which_items_it_could_not_use(
    pytester: pytest.Pytester, pyrepo: PyRepo
) -> None:
    """`pytest cases/planner --mb-regrade reports/<an issue-resolution run>` once printed 0/0 and exited 0."""
    _live(pytester, pyrepo, "gold")
    clock = Path(__file__).resolve().parents[1] / "cases" / "planner" / "clock.yaml"
    (pytester.path / "planner").mkdir()
    (pytester.path / "planner" / "clock.yaml").write_text(clock.read_text())
    result = pytester.runpytest(
        "planner",
        "--mb-regrade=reports/live",
        "--mb-summary=reports/regraded.json",
        "--mb-run-id=again",
        "-p",
        "no:cacheprovider",
    )
    summary = json.loads((pytester.path / "reports" / "regraded.json").read_text())
    assert result.ret == summary["exitstatus"] == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        [
            "re-grade of *reports/live: re-graded 0, kept as they were 0, not used 1",
            "  not used: acme__calc-1 [[]gold[]]: instance 'acme__calc-1' is not among the collected items; its suite "
            "'issue_resolution' is not among the collected suites (planner)*",
            "  * selected item(s) have no result in that run (counted as not run)",
            "  no selected item has a result in that run: nothing was graded, exit status 5",
        ]
    )
    assert summary["total"] == 0 and summary["regrade"]["not_used"][0]["suite"] == "issue_resolution"


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


def test_the_same_commits_from_a_mirror_reuse_the_result_cache(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    """The result cache is keyed by content (commits, patches), never by the clone source."""
    first = _live(pytester, pyrepo, "gold", run_id="origin")
    assert first["cached"] == 0 and first["resolved"] == 1
    mirror = pytester.path / "mirror" / "acme+calc.git"
    git(pytester.path, "clone", "--quiet", "--mirror", str(pyrepo.path), str(mirror))
    moved = manifest_for(pyrepo).replace(f"repo_url: {pyrepo.path}", f"repo_url: {mirror}")
    assert moved != manifest_for(pyrepo)
    pytester.makefile(".yaml", **{"cases/acme__calc": moved})
    pytester.runpytest(
        "cases",
        "--predictions=gold",
        "--mb-runtime=local",
        "--mb-run-id=mirror",
        "--mb-repo-url-template=file:///nowhere/{owner}+{name}.git",
        "--mb-summary=reports/mirror/summary.json",
        "-p",
        "no:cacheprovider",
    )
    again = json.loads((pytester.path / "reports" / "mirror" / "summary.json").read_text())
    assert (again["cached"], again["resolved"]) == (1, 1)
    # different record content is evaluated again (the key is not blind)
    other = moved.replace("difficulty: easy", "difficulty: hard")
    assert other != moved
    pytester.makefile(".yaml", **{"cases/acme__calc": other})
    pytester.runpytest(
        "cases",
        "--predictions=gold",
        "--mb-runtime=local",
        "--mb-run-id=other",
        "--mb-summary=reports/other/summary.json",
        "-p",
        "no:cacheprovider",
    )
    changed = json.loads((pytester.path / "reports" / "other" / "summary.json").read_text())
    assert (changed["cached"], changed["resolved"]) == (0, 1)


@pytest.mark.e2e
def test_a_regrade_of_a_failing_run_fails_as_a_normal_run(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    """Re-grading a failing run once exited 0: pytest ended "2 deselected", JUnit had tests="0" and the summary
    exitstatus 0. Its items are real ones now: failed, in JUnit with their properties, the exit status 1."""
    note = (
        "diff --git a/NOTES.md b/NOTES.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.md\n"
        "@@ -0,0 +1 @@\n+a note\n"
    )
    live = _live(pytester, pyrepo, [{"instance_id": "acme__calc-1", "model_name_or_path": "m", "model_patch": note}])
    assert live["instances"]["acme__calc-1"]["reason"] == "unresolved"
    # a second instance the run never evaluated: selected by the re-grade, skipped as not run
    second = manifest_for(pyrepo) + manifest_for(pyrepo).split("instances:\n")[1].replace(
        "acme__calc-1", "acme__calc-2"
    )
    pytester.makefile(".yaml", **{"cases/acme__calc": second})
    result, summary = _regrade(pytester, "--junitxml=reports/junit.xml", "-rfs")
    assert result.ret == summary["exitstatus"] == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "FAILED cases/acme__calc.yaml::acme__calc-1 - *unresolved*",
            "SKIPPED * acme__calc-2: no result in *reports/live (not run)",
        ]
    )
    assert "deselected" not in result.stdout.str()
    suite = ElementTree.parse(pytester.path / "reports" / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "1")
    case = next(c for c in suite.iter("testcase") if c.get("name") == "acme__calc-1")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert (props["verdict"], props["resolved"], props["f2p_total"]) == ("unresolved", "False", "2")
    inst = summary["instances"]["acme__calc-1"]
    assert (inst["reason"], inst["regraded"], inst["previous_reason"]) == ("unresolved", True, "unresolved")
    assert summary["headlines"]["issue_resolution"]["not_run"] == 1
    rows = (pytester.path / "reports" / "again" / "results.jsonl").read_text().splitlines()
    assert [json.loads(r)["reason"] for r in rows] == ["unresolved"]  # appended as it came, as a live run's
