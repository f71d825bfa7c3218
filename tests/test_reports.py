"""Reports: junit properties, one summary and one junit file under xdist, terminal section, pytest-html."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401 - drop modules imported during a run and cannot re-import C extensions
import pytest

MANIFEST = """\
suite: issue_resolution
repo: acme/app
framework: android
instances:
""" + "".join(
    f"  - instance_id: acme__app-{i}\n    base_commit: abcdef1\n    test_patch: ''\n"
    "    patch: |\n      --- a/app/src/main/A.kt\n      +++ b/app/src/main/A.kt\n      @@ -1 +1 @@\n"
    "      -a\n      +b\n"
    "    FAIL_TO_PASS: ['t#a']\n"
    for i in range(1, 5)
)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.e2e
def test_one_summary_and_one_junit_with_properties(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest(
        *workers, "--predictions=empty", "--junitxml=reports/junit.xml", "--mb-run-id=run-1", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        [
            "*mobilebench*",
            "run run-1: models empty",
            "issue_resolution (empty): resolution rate 0/4 = 0.000 [[]95% CI 0.000, 0.490[]]*",
            "  selected 4 | evaluated 4 | invalid 0 | missing predictions 0 | infra errors 0 | cached 0 | not run 0",
        ]
    )
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["run_id"] == "run-1"
    assert summary["total"] == 4 and summary["by_reason"] == {"empty_patch": 4}
    assert sorted(summary["instances"]) == [f"acme__app-{i}" for i in range(1, 5)]
    lines = (pytester.path / "reports" / "latest" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 4  # the incremental log holds every finished result
    tree = ET.parse(pytester.path / "reports" / "junit.xml")
    cases = tree.getroot().findall(".//testcase")
    assert len(cases) == 4
    props = {p.get("name"): p.get("value") for p in cases[0].findall("./properties/property")}
    assert props["verdict"] == "empty_patch" and props["model"] == "empty"
    assert props["resolved"] == "False"
    assert props["f2p_total"] == "1" and props["f2p_passed"] == "0"
    assert {"loc_precision", "loc_recall", "loc_f1", "n2p_total", "p2p_total", "p2f"} <= set(props)
    assert all(
        (pytester.path / "reports" / "run-1" / "empty" / f"acme__app-{i}" / "result.json").is_file()
        for i in range(1, 5)
    )
    suite_props = {
        p.get("name"): p.get("value")
        for p in tree.getroot().iter("property")
        if p.get("name", "").startswith("mobilebench.")
    }
    assert suite_props["mobilebench.issue_resolution.empty.headline"].startswith("resolution rate 0/4 = 0.000 [95% CI")
    assert (
        suite_props["mobilebench.issue_resolution.empty.denominator"],
        suite_props["mobilebench.issue_resolution.empty.selected"],
    ) == ("4", "4")
    report = json.loads((pytester.path / "reports" / "run-1" / "models" / "empty.json").read_text())
    assert report["model"] == "empty" and sorted(report["instances"]) == [f"acme__app-{i}" for i in range(1, 5)]
    ids = [f"acme__app-{i}" for i in range(1, 5)]
    assert report["empty_patch_ids"] == ids and report["resolved_ids"] == report["not_run_ids"] == []
    assert summary["by_model"]["empty"]["empty_patch_ids"] == ids


def test_html_report_gets_verdict_column(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest("--predictions=empty", "--html=reports/report.html", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=4)
    html = (pytester.path / "reports" / "report.html").read_text()
    assert "Verdict" in html and "empty_patch" in html


def test_without_pytest_html_nothing_breaks(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest("--predictions=empty", "-p", "no:html", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=4)


def test_warns_when_pytest_timeout_would_preempt_the_instance_timeout(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_timeout")
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest(
        "--predictions=empty", "--timeout=60", "--mb-instance-timeout=120", "-p", "no:cacheprovider"
    )
    result.stdout.fnmatch_lines(["*--timeout=60.0 is not longer than --mb-instance-timeout=120.0*"])
    result.assert_outcomes(failed=4)


INVALID = (
    MANIFEST
    + """  - instance_id: acme__app-9
    base_commit: abcdef1
    test_patch: ''
    patch: ''
    FAIL_TO_PAS: ['t#a']
"""
)


def _summary(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.e2e
def test_no_predictions_is_a_usage_error_listing_the_choices(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest(*workers, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert "--predictions=gold" in text and "--predictions=empty" in text and "--predictions=PATH" in text
    assert not (pytester.path / "reports" / "latest" / "summary.json").exists()


def test_collect_only_without_predictions_lists_the_instances(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0 and "app.yaml::acme__app-1" in result.stdout.str()


def test_a_mistyped_pseudo_prediction_gets_a_suggestion(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest("--predictions=gld", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "did you mean 'gold'?" in result.stderr.str()


def test_an_invalid_instance_is_selected_named_with_a_suggestion_and_fails_the_run(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=INVALID)
    result = pytester.runpytest("--predictions=empty", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*field 'FAIL_TO_PAS'*(did you mean 'FAIL_TO_PASS'?)*",
            "*selected 5 | evaluated 4 | invalid 1 |*",
            "invalid instances: 1 (the run fails until they are fixed)",
        ]
    )
    block = _summary(pytester)["headlines"]["issue_resolution"]
    assert (block["selected"], block["invalid"], block["evaluated"]) == (5, 1, 4)
    assert block["over_all"]["denominator"] == 5


def test_a_mistyped_instance_id_in_predictions_gets_a_suggestion(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.makefile(
        ".jsonl", preds=json.dumps({"instance_id": "acme__ap-1", "model_name_or_path": "m", "model_patch": ""}) + "\n"
    )
    result = pytester.runpytest("--predictions=preds.jsonl", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["predictions matching no selected instance: acme__ap-1 (did you mean 'acme__app-1'?)"])
    summary = _summary(pytester)
    assert summary["unmatched_suggestions"] == {"acme__ap-1": "acme__app-1"}
    assert summary["missing_predictions"] == 4


def test_selecting_nothing_leaves_the_last_summary(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    first = pytester.runpytest("--predictions=empty", "-k", "thunderbird", "-p", "no:cacheprovider")
    # a folder that was never created is not named as if a summary were in it
    first.stdout.fnmatch_lines(
        ["no benchmark item selected: nothing written (no run has written a summary under *reports yet)"]
    )
    assert not (pytester.path / "reports" / "latest").exists()
    pytester.runpytest("--predictions=empty", "-p", "no:cacheprovider")
    before = (pytester.path / "reports" / "latest" / "summary.json").read_text()
    result = pytester.runpytest("--predictions=empty", "-k", "thunderbird", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    latest = (pytester.path / "reports" / "latest" / "summary.json").resolve()
    result.stdout.fnmatch_lines([f"no benchmark item selected: nothing written; the last run's summary is {latest}"])
    assert (pytester.path / "reports" / "latest" / "summary.json").read_text() == before


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.e2e
def test_progress_log_has_a_finished_line_per_item(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest(*workers, "--predictions=empty", "--mb-run-id=p1", "-p", "no:cacheprovider")
    log = (pytester.path / "reports" / "p1" / "progress.log").read_text().splitlines()
    finished = sorted(line.split("] ", 1)[1] for line in log if "] finished " in line)
    assert [f.split(" (")[0] for f in finished] == [f"finished acme__app-{i}: empty_patch" for i in range(1, 5)]
    if workers:  # not a TTY: one plain line per finished item with the counts, on the controller
        result.stdout.fnmatch_lines(
            ["[[]?/4[]] finished acme__app-*: empty_patch (*) | passed 0 | infra 0 | cached 0 | *"]
        )
        assert "[4/4] finished" in result.stdout.str()


@pytest.mark.e2e
def test_quiet_runs_print_no_progress_lines(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest("-n", "2", "-q", "--predictions=empty", "-p", "no:cacheprovider")
    assert "finished acme__app" not in result.stdout.str()


@pytest.mark.e2e
def test_cached_rerun_is_counted_and_output_files_are_world_readable(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.runpytest("--predictions=empty", "--mb-run-id=c1", "-p", "no:cacheprovider")
    result = pytester.runpytest(
        "--predictions=empty", "--mb-run-id=c2", "--html=reports/report.html", "-p", "no:cacheprovider"
    )
    result.stdout.fnmatch_lines(["*| cached 4 | not run 0"])
    summary = _summary(pytester)
    assert summary["cached"] == 4 and summary["headlines"]["issue_resolution"]["cached"] == 4
    reports = pytester.path / "reports"
    for path in (reports / "c2" / "summary.json", reports / "c2" / "index.html"):
        assert path.stat().st_mode & 0o777 == 0o644, path
    page = (reports / "c2" / "index.html").read_text()
    assert '<span class="badge">cached</span> originally' in page
    assert 'href="../c1/empty/acme__app-1/"' in page  # the cached result's evidence, in the run that made it
    html = (reports / "report.html").read_text()
    assert "cached, originally" in html and "run page with plots: c2" in html
    assert "c2/index.html" in html and "file://" not in html.split("results-table")[0]


def test_html_report_has_suite_columns_and_relative_links(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    pytester.makefile(".yaml", app=MANIFEST)
    pytester.runpytest("--predictions=empty", "--mb-run-id=h1", "--html=out/report.html", "-p", "no:cacheprovider")
    html = (pytester.path / "out" / "report.html").read_text()
    assert "<th>Figures</th>" in html and "<th>Cache</th>" in html and "NavPassRate" not in html
    assert "F2P 0/1" in html
    assert "../reports/h1/empty/acme__app-1/" in html and "../reports/h1/index.html" in html


def test_a_stopped_run_counts_what_did_not_run(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest("--predictions=empty", "--maxfail=1", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*selected 4 | evaluated 1 | invalid 0 | * | not run 3"])
    block = _summary(pytester)["headlines"]["issue_resolution"]
    assert block["over_all"]["denominator"] == 4 and block["not_run"] == 3
    assert len(_summary(pytester)["by_model"]["empty"]["not_run_ids"]) == 3  # named, per model
