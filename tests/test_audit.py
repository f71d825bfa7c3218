"""Instance audit end to end with the local runtime on a real git repository and a real test runner
(pytest writing JUnit XML where Gradle would), plus the pure hunk and fingerprint helpers."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401 - the run page is drawn inside pytester runs, which drop modules they import
import pytest
import unidiff

from conftest import PyRepo, git
from pytest_mobilebench.suites.issue_resolution.audit import (
    fix_fingerprint,
    gold_hunks,
    summarize_audit,
    without_hunk,
)

NOTES_HUNK = (
    "diff --git a/NOTES.md b/NOTES.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1 @@\n+mul added\n"
)


def _manifest(repo: PyRepo, gold: str, test: str, ids: tuple[str, ...] = ("acme__calc-1",)) -> str:
    entries = "".join(
        f"""  - instance_id: {iid}
    base_commit: {repo.base}
    patch: {json.dumps(gold)}
    test_patch: {json.dumps(test)}
    FAIL_TO_PASS: ["app.src.test.test_add#test_add_small", "app.src.test.test_add#test_add_negative"]
    NONE_TO_PASS: ["app.src.test.test_mul#test_mul"]
    PASS_TO_PASS: ["app.src.test.test_sub#test_sub", "app.src.test.test_sub#test_gone"]
"""
        for iid in ids
    )
    return f"""suite: issue_resolution
repo: acme/calc
repo_url: {repo.path}
framework: android
test_command: "{repo.test_command}"
instances:
{entries}"""


pytestmark = pytest.mark.usefixtures("mb_cache")


@pytest.mark.e2e
def test_audit_names_the_unnoticed_hunk_the_never_reported_id_and_the_duplicate(
    pytester: pytest.Pytester, pyrepo: PyRepo
) -> None:
    gold = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n" + NOTES_HUNK
    test = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "app") + "\n"
    pytester.makefile(".yaml", **{"cases/acme__calc": _manifest(pyrepo, gold, test, ("acme__calc-1", "acme__calc-2"))})
    result = pytester.runpytest(
        "cases",
        "--predictions=gold",
        "--mb-audit",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "--mb-run-id=a",
        "--mb-summary=reports/summary.json",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=2)  # both have findings
    summary = json.loads((pytester.path / "reports" / "summary.json").read_text())
    audit = summary["instances"]["acme__calc-1"]["audit"]
    assert audit["gold_resolves"] is False  # test_gone is a P2P id no run reports
    assert audit["gold_ids_never_reported"] == ["app.src.test.test_sub#test_gone"]
    assert audit["flaky_tests"] == []
    assert audit["test_patch_test_files"] == ["app/src/test/test_add.py", "app/src/test/test_mul.py"]
    # the gold does not resolve, so adequacy is not measured
    assert audit["hunks"] == []
    table = summary["suite_tables"]["issue_resolution"]["audit"]
    assert table["duplicate_fixes"] == [["acme__calc-1", "acme__calc-2"]]
    assert table["gold_not_resolving"] == ["acme__calc-1", "acme__calc-2"]
    page = (pytester.path / "reports" / "a" / "index.html").read_text()  # the run page shows the same
    section = page.split('id="audit-issue_resolution"')[1].split("</section>")[0]
    row = section.split('data-instance="acme__calc-1">')[1].split("</tr>")[0]
    assert '<b class="finding">no</b> (2 runs)' in row and "app.src.test.test_sub#test_gone" in row
    assert "<li>acme__calc-2</li>" in row  # same fix


@pytest.mark.e2e
def test_adequacy_lists_the_hunk_no_test_notices(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    gold = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n" + NOTES_HUNK
    test = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "app") + "\n"
    manifest = _manifest(pyrepo, gold, test).replace(', "app.src.test.test_sub#test_gone"', "")
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest})
    result = pytester.runpytest(
        "cases",
        "--predictions=gold",
        "--mb-audit",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "--mb-run-id=b",
        "--mb-summary=reports/summary.json",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=1)
    summary = json.loads((pytester.path / "reports" / "summary.json").read_text())
    inst = summary["instances"]["acme__calc-1"]
    audit = inst["audit"]
    assert audit["gold_resolves"] is True and audit["runs"] == 2
    calc, notes = audit["hunks"]
    assert (calc["file"], calc["noticed"]) == ("calc.py", True)
    assert "app.src.test.test_add#test_add_small" in calc["noticed_by"]
    assert (notes["file"], notes["noticed"], notes["noticed_by"]) == ("NOTES.md", False, [])
    assert inst["detail"] == "no test notices gold hunk 1 (NOTES.md @@ -0,0 +1,1 @@)"
    table = summary["suite_tables"]["issue_resolution"]["audit"]
    assert table["unnoticed_hunks"] == {"acme__calc-1": ["NOTES.md @@ -0,0 +1,1 @@"]}
    page = (pytester.path / "reports" / "b" / "index.html").read_text()  # the run page shows the same
    section = page.split('id="audit-issue_resolution"')[1].split("</section>")[0]
    assert "1 of 2 noticed" in section and "NOTES.md <code>@@ -0,0 +1,1 @@</code>" in section
    evidence = Path(inst["evidence_dir"])
    assert (evidence / "audit.json").is_file() and (evidence / "test_output.hunk1.log").is_file()
    # verifier strength: the empty patch fails; of the two hunk drops (no semantic mutant of a .py/.md file)
    # the NOTES.md one still resolves: leak 1/2, its diff kept
    verifier = audit["verifier"]
    assert verifier["empty_resolves"] is False and (verifier["judged"], verifier["survived"]) == (2, 1)
    assert inst["verifier_leak"] == 0.5 and table["verifier_leak"] == {"acme__calc-1": 0.5}
    survivor = next(m for m in verifier["mutants"] if m["resolves"])
    assert survivor["id"] == "h1.drop" and (evidence / survivor["diff"]).read_text() == without_hunk(gold, 1)
    assert "leak 0.500 (1/2 survive)" in section and "h1.drop hunk_dropped NOTES.md" in section


# ------------------------------------------------------------------------------------------------ pure

TWO_FILES = """\
diff --git a/a.js b/a.js
index 1111111..2222222 100644
--- a/a.js
+++ b/a.js
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
@@ -10,3 +10,3 @@
 ten
-eleven
+ELEVEN
 twelve
diff --git a/b.js b/b.js
index 3333333..4444444 100644
--- a/b.js
+++ b/b.js
@@ -1,2 +1,2 @@
-x
+y
 z
"""


def test_hunks_and_their_removal() -> None:
    hunks = gold_hunks(TWO_FILES)
    assert [(h.index, h.file, h.added, h.removed) for h in hunks] == [
        (0, "a.js", 1, 1),
        (1, "a.js", 1, 1),
        (2, "b.js", 1, 1),
    ]
    rest = unidiff.PatchSet(without_hunk(TWO_FILES, 1))
    assert [(f.path, len(f)) for f in rest] == [("a.js", 1), ("b.js", 1)]
    assert "+ELEVEN" not in str(rest) and "+TWO" in str(rest)
    only_a = unidiff.PatchSet(without_hunk(TWO_FILES, 2))
    assert [f.path for f in only_a] == ["a.js"]  # b.js had one hunk: the file goes
    with pytest.raises(IndexError):
        without_hunk(TWO_FILES, 3)


def test_fingerprint_ignores_line_numbers_and_context_but_not_the_change() -> None:
    moved = TWO_FILES.replace("@@ -10,3 +10,3 @@\n ten", "@@ -40,3 +40,3 @@\n forty")
    assert fix_fingerprint(moved) == fix_fingerprint(TWO_FILES)
    assert fix_fingerprint(TWO_FILES.replace("+y", "+w")) != fix_fingerprint(TWO_FILES)


def test_summary_of_no_audit_results() -> None:
    assert summarize_audit([{"instance_id": "x", "reason": "resolved"}])["instances"] == 0


@pytest.mark.e2e
def test_a_test_whose_state_depends_on_outside_state_is_flaky(
    pytester: pytest.Pytester, pyrepo: PyRepo, tmp_path: Path
) -> None:
    mark = tmp_path / "flaky-mark"
    flaky = (
        f"import pathlib\n\n\ndef test_sometimes():\n    mark = pathlib.Path({str(mark)!r})\n"
        "    first = not mark.exists()\n    mark.write_text('x')\n    assert first\n"
    )
    lines = "".join("+" + line + "\n" for line in flaky.splitlines())
    flaky_patch = (
        f"diff --git a/app/src/test/test_flaky.py b/app/src/test/test_flaky.py\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/app/src/test/test_flaky.py\n@@ -0,0 +1,{len(flaky.splitlines())} @@\n{lines}"
    )
    gold = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n"
    test = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "app") + "\n" + flaky_patch
    manifest = _manifest(pyrepo, gold, test).replace(
        '"app.src.test.test_sub#test_gone"', '"app.src.test.test_flaky#test_sometimes"'
    )
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest})
    pytester.runpytest(
        "cases",
        "--predictions=gold",
        "--mb-audit",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "--mb-run-id=c",
        "--mb-summary=reports/c/summary.json",
        "-p",
        "no:cacheprovider",
    )
    audit = json.loads((pytester.path / "reports" / "c" / "summary.json").read_text())["instances"]["acme__calc-1"][
        "audit"
    ]
    assert audit["flaky_tests"] == ["app.src.test.test_flaky#test_sometimes"]
    assert audit["flaky_gold_tests"] == ["app.src.test.test_flaky#test_sometimes"]
    assert audit["gold_reasons"] == ["resolved", "unresolved"]
