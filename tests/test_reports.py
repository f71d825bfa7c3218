"""Reports: junit properties, one summary and one junit file under xdist, terminal section, pytest-html."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

MANIFEST = """\
suite: issue_resolution
repo: acme/app
framework: android
instances:
""" + "".join(
    f"  - instance_id: acme__app-{i}\n    base_commit: abcdef1\n    test_patch: ''\n"
    "    patch: |\n      --- a/app/src/main/A.kt\n      +++ b/app/src/main/A.kt\n      @@ -1 +1 @@\n      -a\n      +b\n"
    "    FAIL_TO_PASS: ['t#a']\n" for i in range(1, 5)
)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_one_summary_and_one_junit_with_properties(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    result = pytester.runpytest(
        *workers, "--predictions=empty", "--junitxml=reports/junit.xml", "--mb-run-id=run-1", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["*mobilebench*", "run run-1: 0/4 resolved (resolution rate 0.000), infra errors 0"])
    summary = json.loads((pytester.path / "reports" / "summary.json").read_text())
    assert summary["run_id"] == "run-1"
    assert summary["total"] == 4 and summary["by_reason"] == {"empty_patch": 4}
    assert sorted(summary["instances"]) == [f"acme__app-{i}" for i in range(1, 5)]
    lines = (pytester.path / "reports" / "summary.jsonl").read_text().splitlines()
    assert len(lines) == 4  # the incremental log holds every finished result
    tree = ET.parse(pytester.path / "reports" / "junit.xml")
    cases = tree.getroot().findall(".//testcase")
    assert len(cases) == 4
    props = {p.get("name"): p.get("value") for p in cases[0].findall("./properties/property")}
    assert props["verdict"] == "empty_patch"
    assert props["resolved"] == "False"
    assert props["f2p_total"] == "1" and props["f2p_passed"] == "0"
    assert {"loc_precision", "loc_recall", "loc_f1", "n2p_total", "p2p_total", "p2f"} <= set(props)
    assert all((pytester.path / "reports" / "run-1" / "empty" / f"acme__app-{i}" / "result.json").is_file() for i in range(1, 5))


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
    result = pytester.runpytest("--predictions=empty", "--timeout=60", "--mb-instance-timeout=120", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*--timeout=60.0 is not longer than --mb-instance-timeout=120.0*"])
    result.assert_outcomes(failed=4)
