"""The runs of a reports folder with their headlines (issue 33, item 6): ``reports/index.html`` and each run
page's "Earlier runs" section."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

import pytest

from test_reports import MANIFEST

from pytest_mobilebench.report.run_list import (
    earlier_runs_section,
    read_runs,
    run_entry,
    write_run_entry,
    write_runs_index,
)
from pytest_mobilebench.report.summary import build_summary


def _summary(run_id: str, model: str, passed: bool) -> dict:
    result = {
        "instance_id": "a-1",
        "suite": "issue_resolution",
        "model_name_or_path": model,
        "passed": passed,
        "reason": "resolved" if passed else "unresolved",
        "properties": {},
    }
    return build_summary([result], run_id=run_id, suite_tables={}) | {"exitstatus": 0 if passed else 1}


def test_runs_are_listed_newest_first_with_their_headlines(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    write_run_entry(reports, _summary("r1", "<b>m</b>", False))
    entry = json.loads((reports / "r1" / "run-entry.json").read_text())
    assert entry["headlines"] == ["issue_resolution (<b>m</b>): resolution rate 0/1 = 0.000 [95% CI 0.000, 0.793]"]
    assert entry["exitstatus"] == 1 and entry["models"] == ["<b>m</b>"]
    later = run_entry(_summary("r2", "gold", True), datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc))
    (reports / "r2").mkdir()
    (reports / "r2" / "run-entry.json").write_text(json.dumps(later))
    old = reports / "r0"  # a run from before run-entry.json: read from its summary, dated by the file
    old.mkdir()
    (old / "summary.json").write_text(json.dumps(_summary("r0", "m0", True)))
    os.utime(old / "summary.json", (0, 0))
    (reports / "cache").mkdir()  # the result cache is no run
    os.symlink("r2", reports / "latest")
    assert [e["run_id"] for e in read_runs(reports)] == ["r2", "r1", "r0"]
    assert read_runs(reports)[2]["headlines"][0].startswith("issue_resolution (m0): resolution rate 1/1")
    page = write_runs_index(reports).read_text()
    assert page.index('href="r2/index.html"') < page.index('href="r1/index.html"') < page.index('href="r0/index.html"')
    assert "&lt;b&gt;m&lt;/b&gt;" in page and "<b>m</b>" not in page and "<script" not in page
    section = earlier_runs_section(reports, "r1")
    assert 'href="../r2/index.html"' in section and 'href="../r0/index.html"' in section
    assert 'href="../r1/' not in section and 'href="../index.html"' in section
    assert earlier_runs_section(tmp_path / "none", "r1") == ""


def test_an_unreadable_summary_still_lists_the_run(tmp_path: Path) -> None:
    (tmp_path / "r9").mkdir()
    (tmp_path / "r9" / "summary.json").write_text("{oops")
    assert read_runs(tmp_path)[0]["run_id"] == "r9"


@pytest.mark.e2e
def test_a_run_page_lists_the_earlier_runs_and_the_folder_has_a_runs_page(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=MANIFEST)
    for run in ("second", "first"):  # "first" ran last: newest first is by time, not by name
        pytester.runpytest("--predictions=empty", f"--mb-run-id={run}", "-p", "no:cacheprovider")
    last = (pytester.path / "reports" / "first" / "index.html").read_text()
    earlier = last.split('<section id="runs">')[1]
    assert (
        'href="../second/index.html"' in earlier and "issue_resolution (empty): resolution rate 0/4 = 0.000" in earlier
    )
    runs = (pytester.path / "reports" / "index.html").read_text()
    assert runs.index('href="first/index.html"') < runs.index('href="second/index.html"')
    assert runs.count("resolution rate 0/4") == 2
