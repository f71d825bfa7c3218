"""The run page's "Model comparison" and "Instance audit" sections, and ``compare --html``.

Figures are checked against hand calculations: model-a resolves i1, i2, i3 alone (b = 3), model-b none alone
(c = 0), so the exact McNemar p = 2 * C(3, 0) / 2^3 = 0.25.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.report import page as page_module
from pytest_mobilebench.report.page import write_run_page
from pytest_mobilebench.report.sections import LIST_CAP
from pytest_mobilebench.report.summary import build_summary
from pytest_mobilebench.suites.issue_resolution.hunks import gold_hunks

EVIL = "<script>window.__pwned = 1</script>"

# model-a: i1..i4 resolved; model-b: i4 resolved; i5 neither; i6 is an infrastructure error of model-b.
OUTCOMES = {
    "model-a": {
        "i1": "resolved",
        "i2": "resolved",
        "i3": "resolved",
        "i4": "resolved",
        "i5": "unresolved",
        "i6": "resolved",
    },
    "model-b": {
        "i1": "unresolved",
        "i2": "unresolved",
        "i3": "empty_patch",
        "i4": "resolved",
        "i5": "unresolved",
        "i6": "infra_error",
    },
}


def _result(reports: Path, model: str, iid: str, reason: str) -> dict[str, Any]:
    evidence = reports / "cmp" / model / iid
    evidence.mkdir(parents=True, exist_ok=True)
    return {
        "instance_id": iid,
        "suite": "issue_resolution",
        "model_name_or_path": model,
        "reason": reason,
        "passed": reason == "resolved",
        "retryable": reason == "infra_error",
        "detail": "",
        "evidence_dir": str(evidence),
        "elapsed_s": 1.0,
        "properties": {"repo": "acme/app", "framework": "android"},
    }


def _write(reports: Path, results: list[dict[str, Any]], run_id: str, table: dict[str, Any] | None = None) -> Path:
    from pytest_mobilebench.suites import builtin_registry

    registry = builtin_registry()
    table = registry["issue_resolution"].summarize(results, options={}) if table is None else table
    summary = build_summary(
        results, run_id=run_id, suite_tables={"issue_resolution": table}, selected={"issue_resolution": len(results)}
    )
    return write_run_page(summary, results, registry, reports, summary_path=reports / run_id / "summary.json")


def comparison_page(tmp_path: Path) -> Path:
    """A run page of two models on the same six instances (b = 3, c = 0, i6 left out)."""
    reports = tmp_path / "reports"
    results = [_result(reports, m, iid, reason) for m, row in OUTCOMES.items() for iid, reason in row.items()]
    return _write(reports, results, "cmp")


GOLD = """\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
diff --git a/NOTES.md b/NOTES.md
new file mode 100644
--- /dev/null
+++ b/NOTES.md
@@ -0,0 +1 @@
+mul added
"""


def _audit(
    iid: str, *, resolves: bool, flaky: list[str], never: list[str], test_files: list[str], unnoticed: bool
) -> dict[str, Any]:
    """One instance's ``audit`` in the shape ``audit_instance`` writes (tests/test_audit.py checks the real run)."""
    hunks = [
        {
            **h.to_dict(),
            "applied": True,
            "built": True,
            "noticed": not (unnoticed and h.index == 1),
            "noticed_by": ["t#fix"] if not (unnoticed and h.index == 1) else [],
        }
        for h in gold_hunks(GOLD)
    ]
    hunks = hunks if resolves else []
    findings = (
        ([] if resolves else ["the gold patch does not resolve the instance (unresolved, resolved)"])
        + ([f"flaky gold tests: {', '.join(flaky)}"] if flaky else [])
        + ([f"gold ids never reported: {', '.join(never)}"] if never else [])
        + ([] if test_files else ["the test patch touches no test file"])
        + [
            f"no test notices gold hunk {h['index']} ({h['file']} {h['header']})"
            for h in hunks
            if h["noticed"] is False
        ]
    )
    return {
        "runs": 2,
        "id_matching": {},
        "gold_resolves": resolves,
        "gold_reasons": ["resolved", "resolved"] if resolves else ["unresolved", "resolved"],
        "flaky_tests": flaky + ["t#other_flaky"] if flaky else [],
        "flaky_gold_tests": flaky,
        "gold_ids_never_reported": never,
        "test_patch_test_files": test_files,
        "gold_fingerprint": "f" * 16 if iid in ("acme-2", "acme-3") else iid,
        "hunks": hunks,
        "unnoticed_hunks": [h for h in hunks if h["noticed"] is False],
        "findings": findings,
    }


def audit_page(tmp_path: Path) -> Path:
    """A run page of an audit run (model ``gold``): one trusted instance, one with every kind of finding."""
    reports = tmp_path / "reports"
    audits = {
        "acme-1": _audit(
            "acme-1", resolves=True, flaky=[], never=[], test_files=["app/src/test/T.kt"], unnoticed=False
        ),
        "acme-2": _audit(
            "acme-2", resolves=True, flaky=["t#flaky_gold"], never=["t#" + EVIL], test_files=[], unnoticed=True
        ),
        "acme-3": _audit(
            "acme-3", resolves=False, flaky=[], never=[], test_files=["app/src/test/T.kt"], unnoticed=False
        ),
    }
    results = []
    for iid, audit in audits.items():
        r = _result(reports, "gold", iid, "unresolved" if audit["findings"] else "resolved")
        results.append({**r, "audit": audit, "detail": "; ".join(audit["findings"])})
    return _write(reports, results, "audit")


def _section(text: str, element_id: str) -> str:
    start = text.index(f'id="{element_id}"')
    return text[start : text.index("</section>", start)]


def _figure(section: str, key: str) -> list[str]:
    return re.findall(rf'data-figure="{key}">([^<]*)<', section)


def test_comparison_section_gives_the_hand_calculated_figures(tmp_path: Path) -> None:
    text = comparison_page(tmp_path).read_text()
    section = _section(text, "comparison-issue_resolution")
    assert "<h3>Model comparison</h3>" in section
    assert _figure(section, "a") == ["model-a"] and _figure(section, "b_model") == ["model-b"]
    assert _figure(section, "instances") == ["5"]  # i6 is model-b's infrastructure error: left out
    assert (_figure(section, "resolved_a"), _figure(section, "resolved_b")) == (["4"], ["1"])
    assert (_figure(section, "b"), _figure(section, "c")) == (["3"], ["0"])
    assert _figure(section, "mcnemar_p") == ["0.25"]  # 2 * C(3, 0) / 2^3
    assert _figure(section, "excluded_infra") == ["1"]
    assert "resolved by A only (b = 3)" in section and "resolved by B only" not in section


def test_disagreeing_instances_link_to_rows_that_exist(tmp_path: Path) -> None:
    text = comparison_page(tmp_path).read_text()
    section = _section(text, "comparison-issue_resolution")
    targets = re.findall(r'href="#([^"]+)"', section)
    ids = set(re.findall(r' id="([^"]+)"', text))
    assert targets and all(t in ids for t in targets)
    rows = {t for t in targets if t.startswith("item-")}
    assert len(rows) == 3 * 2 + 2  # i1..i3 and the left-out i6, each linked to both models' rows
    i1_row = re.search(r'<tr class="pass" id="(item-issue_resolution-i1-[0-9a-f]{8})"><td>i1</td><td>model-a<', text)
    assert i1_row and i1_row.group(1) in rows


def test_one_model_has_no_comparison(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    results = [_result(reports, "model-a", iid, reason) for iid, reason in OUTCOMES["model-a"].items()]
    assert "Model comparison" not in _write(reports, results, "one").read_text()


def test_a_long_disagreement_list_is_capped_with_a_count(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    n = LIST_CAP + 7
    results = [
        _result(reports, m, f"x{i:03d}", "resolved" if m == "model-a" else "unresolved")
        for m in ("model-a", "model-b")
        for i in range(n)
    ]
    section = _section(_write(reports, results, "long").read_text(), "comparison-issue_resolution")
    assert section.count("<li>") == LIST_CAP and "... and 7 more" in section
    assert _figure(section, "b") == [str(n)]


def test_a_failing_section_costs_only_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> str:
        raise KeyError("pairs")

    monkeypatch.setattr(page_module, "comparison_section", broken)
    text = comparison_page(tmp_path).read_text()
    assert "model comparison of issue_resolution failed: KeyError: &#x27;pairs&#x27;" in text
    assert 'class="instances"' in text and "plot-issue_resolution-passed_by_model" in text


def test_audit_section_renders_every_finding(tmp_path: Path) -> None:
    text = audit_page(tmp_path).read_text()
    section = _section(text, "audit-issue_resolution")
    assert "<h3>Instance audit</h3>" in section
    rows = dict(re.findall(r'<tr class="(?:pass|fail)" data-instance="([^"]+)">(.*?)</tr>', section))
    assert list(rows) == ["acme-2", "acme-3", "acme-1"]  # instances with findings first
    two, three, one = rows["acme-2"], rows["acme-3"], rows["acme-1"]
    assert '<b class="finding">t#flaky_gold</b> (gold)' in two and "t#other_flaky" in two
    assert html.escape("t#" + EVIL) in two and "<script" not in section  # a test id stays text
    assert '<b class="finding">none</b>' in two  # the test patch touches no test file
    assert "acme-3" in two and "acme-2" in three  # same fix: duplicate / backport
    assert "1 of 2 noticed" in two and "NOTES.md <code>@@ -0,0 +1,1 @@</code>" in two
    assert "gold resolves" in section and '<b class="finding">no</b> (2 runs)' in three and "not measured" in three
    assert "2 of 2 noticed" in one and "yes (2 runs)" in one and "<td>none</td>" in one
    overview = dict(re.findall(r'<tr data-figure="([a-z_]+)"><th>[^<]*</th><td>([^<]*)</td>', section))
    assert overview == {
        "instances": "3",
        "trusted": "1",
        "gold_not_resolving": "1",
        "flaky_gold_tests": "1",
        "gold_ids_never_reported": "1",
        "test_patch_without_test_file": "1",
        "duplicate_fixes": "1",
        "unnoticed_hunks": "1",
    }
    link = re.search(r'<a href="#(item-issue_resolution-acme-2-[0-9a-f]{8})">acme-2</a>', two)
    assert link and f'id="{link.group(1)}"' in text


def test_an_audit_with_missing_parts_still_renders(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    results = [
        {**_result(reports, "gold", "acme-9", "resolved"), "audit": {"gold_resolves": True}},
        {**_result(reports, "gold", "acme-8", "unresolved"), "audit": {"findings": "not a list", "hunks": None}},
    ]
    text = _write(reports, results, "partial", table={"audit": {"duplicate_fixes": "not a list"}}).read_text()
    section = _section(text, "audit-issue_resolution")
    assert "instance audit of issue_resolution failed" not in text
    assert section.count("n/a") >= 4 and 'data-instance="acme-9"' in section and 'data-instance="acme-8"' in section


def _summary(path: Path, model: str) -> Path:
    instances = {
        iid: {"instance_id": iid, "model_name_or_path": model, "reason": reason, "passed": reason == "resolved"}
        for iid, reason in OUTCOMES[model].items()
    }
    path.write_text(json.dumps({"run_id": "r", "models": [model], "instances": instances}), encoding="utf-8")
    return path


def compare_html(tmp_path: Path) -> Path:
    """``python -m pytest_mobilebench compare a.json b.json --html cmp.html``; returns the page."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    paths = [_summary(tmp_path / "a.json", "model-a"), _summary(tmp_path / "b.json", "model-b")]
    out = tmp_path / "cmp.html"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_mobilebench", "compare", *map(str, paths), "--html", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "exact McNemar p = 0.25" in proc.stdout
    return out


@pytest.mark.e2e
def test_compare_html_is_the_same_section_self_contained(tmp_path: Path) -> None:
    text = compare_html(tmp_path).read_text()
    section = _section(text, "comparison")
    assert _figure(section, "mcnemar_p") == ["0.25"] and (_figure(section, "b"), _figure(section, "c")) == (
        ["3"],
        ["0"],
    )
    assert "default-src 'none'" in text and "<script" not in text
    assert not re.findall(r'(?:href|src)="(?!#)', text)  # nothing outside the file
    assert "a.json" in text and "i1" in section


@pytest.mark.e2e
def test_compare_html_with_one_model_says_so(tmp_path: Path) -> None:
    out = tmp_path / "one.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_mobilebench",
            "compare",
            str(_summary(tmp_path / "a.json", "model-a")),
            "--html",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "fewer than two models" in out.read_text()
