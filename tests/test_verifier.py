"""Verifier strength, the pure parts: the mutant draw (lexical, seeded), the leak, its distribution and the
``dataset check --verify`` report read from a run summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import unidiff

from pytest_mobilebench.mining.verify import _row, failed, render_verify
from pytest_mobilebench.suites.issue_resolution.mutants import candidates, code_tokens, mutants
from pytest_mobilebench.suites.issue_resolution.verifier import leak_distribution, leak_of

GOLD = """\
diff --git a/src/counter.js b/src/counter.js
index ebf80ec..7ac4900 100644
--- a/src/counter.js
+++ b/src/counter.js
@@ -7,6 +7,13 @@ class Counter {
     this.value += step;
     return this.value;
   }
+
+  reset(limit) {
+    // a == b and 1 are comment text
+    if (this.value > limit && limit !== 0) this.log("x == 1 || true");
+    this.value = 0;
+    return this.value;
+  }
 }
 
 module.exports = { Counter };
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1,2 @@
 # counter
+a == b 1 true
"""


def _mutated_lines(patch: str) -> list[tuple[str, str]]:
    """(gold line, mutant line) of every ``+`` line that differs between GOLD and ``patch``."""
    gold = GOLD.splitlines()
    new = patch.splitlines()
    assert len(gold) == len(new)
    return [(a, b) for a, b in zip(gold, new) if a != b]


def test_each_mutant_changes_one_added_line_and_still_parses() -> None:
    found = mutants(GOLD, per_hunk=20, key="mobilebench__counter-2")
    kinds = {m.kind for m in found}
    assert kinds == {"operator", "constant", "condition", "return", "statement"}
    for m in found:
        ((before, after),) = _mutated_lines(m.patch)
        assert before.startswith("+") and after.startswith("+") and m.file == "src/counter.js" and m.hunk == 0
        assert [len(h) for pf in unidiff.PatchSet(m.patch) for h in pf] == [13, 2]  # same hunk shape: applies like gold
    texts = {m.after.strip() for m in found}
    assert 'if (!(this.value > limit && limit !== 0)) this.log("x == 1 || true");' in texts
    assert 'if (this.value > limit || limit !== 0) this.log("x == 1 || true");' in texts
    assert 'if (this.value >= limit && limit !== 0) this.log("x == 1 || true");' in texts
    assert 'if (this.value > limit && limit === 0) this.log("x == 1 || true");' in texts
    assert {"this.value = 1;", "return null;", ""} <= texts


def test_strings_comments_and_other_files_are_never_mutated() -> None:
    for m in mutants(GOLD, per_hunk=50, key="k"):
        assert "// a == b and 1 are comment text" not in m.after or m.kind == "statement"
        assert '"x == 1 || true"' in m.after or "this.log" not in m.before  # the string literal stays
        assert m.file != "README.md"
    lines = ["const s = 'a == 1'; /* b == 2", "still comment == 3 */ const t = `${x == 1}", "x == y ` + z;",
             "x = /a + b/.test(s) && y;"]  # fmt: skip
    tokens = code_tokens(lines)
    assert [list(candidates(line, t)) for line, t in zip(lines[:2], tokens[:2])] == [[], []]
    assert list(candidates(lines[3], tokens[3])) == []  # a possible regular expression: the line is left alone
    assert list(candidates(lines[2], tokens[2])) == [("operator", "x == y ` - z;")]  # only what follows the template


def test_a_comment_closed_but_not_opened_in_the_hunk_hides_what_came_before() -> None:
    lines = ["x == 1", "y == 2 */", "z == 3"]
    assert [[t.text for t in ts] for ts in code_tokens(lines)] == [[], [], ["z", "==", "3"]]


def test_the_draw_is_seeded_and_reproducible() -> None:
    one = mutants(GOLD, per_hunk=2, seed=0, key="a")
    assert one == mutants(GOLD, per_hunk=2, seed=0, key="a")
    assert len(one) == 2 and len({m.kind for m in one}) == 2  # one per kind in turn
    draws = {tuple(m.after for m in mutants(GOLD, per_hunk=2, seed=s, key="a")) for s in range(8)}
    assert len(draws) > 1
    assert mutants(GOLD, per_hunk=0) == [] and mutants("not a diff", per_hunk=3) == []


def test_leak_leaves_out_mutants_without_a_verdict() -> None:
    rows = [{"resolves": True}, {"resolves": False}, {"resolves": None}, {"resolves": False}]
    assert leak_of(rows) == round(1 / 3, 4)
    assert leak_of([{"resolves": None}]) is None


def test_distribution_bins_and_weak_instances() -> None:
    d = leak_distribution({"a": 0.0, "b": 0.05, "c": 0.5, "d": None, "e": 1.0}, threshold=0.25)
    assert d["instances"] == 5 and d["measured"] == 4 and d["max"] == 1.0
    assert d["bins"] == {"0": 1, "(0, 0.1]": 1, "(0.1, 0.25]": 0, "(0.25, 0.5]": 1, "(0.5, 1]": 1}
    assert d["weak"] == ["c", "e"] and d["median"] == pytest.approx(0.275)


def _entry(tmp_path: Path, leak: float | None, **audit: object) -> dict:
    mutants_rows = [
        {"id": "h0.drop", "kind": "hunk_dropped", "file": "a.js", "line": None, "before": "@@ -1 +1 @@", "after": "",
         "applied": True, "resolves": False, "diff": None},
        {"id": "h0.m0", "kind": "operator", "file": "a.js", "line": 3, "before": "a += b;", "after": "a -= b;",
         "applied": True, "resolves": True, "diff": "mutant.h0.m0.diff"},
    ]  # fmt: skip
    verifier = {"empty_resolves": False, "mutants": mutants_rows, "judged": 2, "survived": 1, "verifier_leak": leak}
    return {
        "instance_id": "x__y-1",
        "suite": "issue_resolution",
        "verifier_leak": leak,
        "evidence_dir": str(tmp_path),
        "audit": {"gold_resolves": True, "verifier": verifier, **audit},
    }


def test_the_report_keeps_each_surviving_mutant_and_strict_fails_on_weak(tmp_path: Path) -> None:
    row = _row(_entry(tmp_path, 0.5), threshold=0.25)
    assert (row["instance_id"], row["verifier_leak"], row["status"], row["weak"]) == ("x__y-1", 0.5, "measured", True)
    assert [m["id"] for m in row["surviving"]] == ["h0.m0"]
    assert row["surviving"][0]["diff"] == str(tmp_path / "mutant.h0.m0.diff")
    report = {"instances": [row], "distribution": leak_distribution({"x__y-1": 0.5}, 0.25), "runs": []}
    assert failed(report) == ["x__y-1: weak (leak 0.5)"]
    text = render_verify(report)
    assert "x__y-1" in text and "leak 0.500 (1/2 mutants survive)  WEAK" in text
    assert "survives h0.m0 a.js:3 operator: 'a += b;' -> 'a -= b;'" in text
    json.dumps(report)  # plain builtins
    strong = _row(_entry(tmp_path, 0.5), threshold=0.5)
    assert not strong["weak"] and failed({"instances": [strong]}) == []


def test_unmeasured_instances_fail_strict(tmp_path: Path) -> None:
    gold_fails = _row(_entry(tmp_path, None, gold_resolves=False), threshold=0.25)
    infra = _row({"instance_id": "x__y-2", "retryable": True, "verifier_leak": None}, threshold=0.25)
    assert (gold_fails["status"], infra["status"]) == ("gold_not_resolving", "infra_error")
    assert failed({"instances": [gold_fails, infra]}) == ["x__y-1: gold_not_resolving", "x__y-2: infra_error"]
    assert failed({"instances": []}) == ["no instance was measured (see the run logs)"]
