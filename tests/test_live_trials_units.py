"""``--mb-trials K`` for issue resolution without Docker: the aggregation over trials (pass@1 the mean, pass^k,
flips, infra trials left out), predictions rows keyed by trial (the loader's duplicate rules), the written file
keeping trials apart, distinct cache keys and evidence folders per trial, the collected node ids, the junit
properties, the terminal headline and the run page's section."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_mobilebench.items import evidence_folder, item_name
from pytest_mobilebench.predictions import (
    Prediction,
    PredictionKind,
    PredictionsError,
    load_predictions,
)
from pytest_mobilebench.report.junit import junit_properties
from pytest_mobilebench.report.names import folder_name
from pytest_mobilebench.report.sections import trials_section
from pytest_mobilebench.report.terminal import suite_lines
from pytest_mobilebench.suites.issue_resolution import SUITE
from pytest_mobilebench.agents.records import append_prediction
from pytest_mobilebench.report.trials import trial_table

ROOT = Path(__file__).resolve().parents[1]


def _result(iid: str, trial: int, passed: bool | None, model: str = "m") -> dict:
    """``passed=None``: an infrastructure trial."""
    reason = "infra_error" if passed is None else ("resolved" if passed else "unresolved")
    return {
        "instance_id": iid,
        "model_name_or_path": model,
        "trial": trial,
        "passed": bool(passed),
        "reason": reason,
        "retryable": passed is None,
        "suite": "issue_resolution",
        "repo": "r",
        "framework": "react-native",
        "properties": {},
        "flags": [],
    }


outcomes_st = st.integers(1, 4).flatmap(
    lambda k: st.dictionaries(
        st.from_regex(r"[a-z]{1,6}-[0-9]", fullmatch=True),
        st.lists(st.booleans(), min_size=k, max_size=k),
        min_size=1,
        max_size=6,
    )
)


@settings(max_examples=60, deadline=None)
@given(outcomes_st)
def test_pass_at_1_is_the_mean_of_fractions_pass_hat_k_the_tau_bench_estimate_and_flips_the_mixed(outcomes) -> None:
    results = [_result(iid, t + 1, p) for iid, o in outcomes.items() for t, p in enumerate(o)]
    own = trial_table(results[::-1])["m"]  # the order of results does not matter: trials are sorted by index
    k = len(next(iter(outcomes.values())))
    fractions = [sum(o) / k for o in outcomes.values()]
    assert own["trials"] == k and own["tasks"] == len(outcomes)
    assert own["pass_1"]["value"] == pytest.approx(sum(fractions) / len(fractions), abs=1e-6)
    lo, hi = own["pass_1"]["ci95"]
    assert 0.0 <= lo <= own["pass_1"]["value"] + 1e-6 and own["pass_1"]["value"] - 1e-6 <= hi <= 1.0
    if all(len(set(o)) == 1 for o in outcomes.values()):  # stable instances: only the instances' spread is left
        assert min(fractions) - 1e-6 <= lo and hi <= max(fractions) + 1e-6
    wilson = own["pass_1"]["wilson95"]
    assert wilson[0] <= own["resolved_trials"] / own["eligible_trials"] <= wilson[1]
    for j in range(1, k + 1):
        want = sum(math.comb(sum(o), j) / math.comb(k, j) for o in outcomes.values()) / len(outcomes)
        assert own["pass_hat_k"][str(j)]["value"] == pytest.approx(want, abs=1e-6)
    assert own["pass_hat_k"][str(k)]["value"] == pytest.approx(
        sum(all(o) for o in outcomes.values()) / len(outcomes), abs=1e-6
    )
    assert [f["instance_id"] for f in own["flips"]] == sorted(i for i, o in outcomes.items() if len(set(o)) > 1)
    assert (own["resolved_trials"], own["eligible_trials"]) == (sum(map(sum, outcomes.values())), k * len(outcomes))


def test_infra_trials_are_left_out_and_models_apart() -> None:
    results = [_result("a", 1, True), _result("a", 2, None), _result("a", 3, False), _result("b", 1, None, "n")]
    table = trial_table(results)
    assert (
        table["m"]["infra_trials"] == 1 and table["m"]["eligible_trials"] == 2 and table["m"]["pass_1"]["value"] == 0.5
    )
    assert table["m"]["flips"] == [
        {
            "instance_id": "a",
            "passes": 1,
            "trials": 2,
            "verdicts": {"t1": "resolved", "t2": "infra_error", "t3": "unresolved"},
        }
    ]
    assert table["n"] == {"tasks": 0, "infra_trials": 1, "flips": [], "resolved_trials": 0, "eligible_trials": 0}
    assert trial_table([{"instance_id": "a", "passed": True}]) is None


def test_the_suite_headline_is_pass_at_1_over_trials_short_on_the_terminal_and_in_junit_and_the_page() -> None:
    results = [_result("a" * 30, 1, True), _result("a" * 30, 2, False), _result("b", 1, False), _result("b", 2, False)]
    table = SUITE.summarize(results)
    head = table["headline"]
    assert head["label"] == "pass@1 over 2 trials" and (head["numerator"], head["denominator"], head["value"]) == (
        1,
        4,
        0.25,
    )
    from pytest_mobilebench.report.headline import headlines

    blocks = headlines(
        results,
        selected={"issue_resolution": 4},
        tables={"issue_resolution": table},
        model_tables={"issue_resolution": {"m": table}},
    )
    lines = suite_lines("issue_resolution", blocks["issue_resolution"])
    assert lines[0].startswith("issue_resolution (m): pass@1 over 2 trials 1/4 = 0.250 [95% CI") and len(lines[0]) < 120
    assert any(x.strip().startswith("pass^2 0/2 = 0.000") for x in lines)
    assert any(x.strip().startswith("instances whose trials disagree 1/2 = 0.500") for x in lines)
    props = dict(junit_properties({"headlines": blocks, "suite_tables": {"issue_resolution": table}}))
    assert props["mobilebench.issue_resolution.m.trials.pass_1"] == "0.25"
    assert props["mobilebench.issue_resolution.m.trials.pass_hat_2"] == "0.0"
    assert props["mobilebench.issue_resolution.m.trials.flips"] == "a" * 30
    assert props["mobilebench.issue_resolution.m.headline"].startswith("pass@1 over 2 trials 1/4")
    page = trials_section(table["trials"] | {"<script>": table["trials"]["m"]})
    assert (
        "pass^2 0.000" in page
        and "t1 resolved, t2 unresolved" in page
        and "<script>" not in page
        and "&lt;script&gt;" in page
    )
    assert trials_section(None) == ""


def test_results_without_trials_keep_the_resolution_rate() -> None:
    table = SUITE.summarize([{k: v for k, v in _result("a", 1, True).items() if k != "trial"}])
    assert "trials" not in table and table["headline"]["label"] == "resolution rate"


def _write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_a_predictions_file_with_trials_is_keyed_by_trial_and_refuses_ambiguous_rows(tmp_path: Path) -> None:
    row = {"instance_id": "i", "model_name_or_path": "m", "model_patch": "p1", "trial": 1}
    loaded = load_predictions([_write(tmp_path / "ok.jsonl", [row, {**row, "trial": 2, "model_patch": "p2"}])])
    assert loaded.trials("i", "m", per_item=True) == [1, 2] and loaded.trials("j", "m", per_item=True) == [None]
    assert loaded.get("i", "m", trial=2).model_patch == "p2" and loaded.get("i", "m", trial=2).trial == 2
    assert loaded.get("i", "m") is None  # a trialled pair has no untrialled prediction
    with pytest.raises(
        PredictionsError, match=r"dup.jsonl:2: duplicate prediction for instance 'i' by model 'm' trial 1"
    ):
        load_predictions([_write(tmp_path / "dup.jsonl", [row, row])])
    plain = {k: v for k, v in row.items() if k != "trial"}
    for rows in ([plain, row], [row, plain]):
        with pytest.raises(
            PredictionsError, match=r"mixed.jsonl:2: instance 'i' by model 'm': rows with and without 'trial'"
        ):
            load_predictions([_write(tmp_path / "mixed.jsonl", rows)])
    for bad in (0, "2", True, 1.5):
        with pytest.raises(PredictionsError, match=r"bad.jsonl:1: instance 'i': field 'trial' must be an integer >= 1"):
            load_predictions([_write(tmp_path / "bad.jsonl", [{**row, "trial": bad}])])


def test_each_trial_has_its_own_cache_key_row_evidence_folder_and_node_id(tmp_path: Path) -> None:
    one, two = (Prediction("i", "m", PredictionKind.LIVE, trial=t) for t in (1, 2))
    assert one.key_material() != two.key_material() != Prediction("i", "m", PredictionKind.LIVE).key_material()
    assert Prediction.from_builtins(two.to_builtins()) == two
    for trial in (1, 2, None):
        append_prediction(
            tmp_path,
            {
                "instance_id": "i",
                "model_name_or_path": "m",
                "model_patch": f"a{trial}",
                **({"trial": trial} if trial else {}),
            },
        )
    append_prediction(tmp_path, {"instance_id": "i", "model_name_or_path": "m", "model_patch": "b2", "trial": 2})
    rows = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert sorted((r.get("trial") or 0, r["model_patch"]) for r in rows) == [(0, "aNone"), (1, "a1"), (2, "b2")]
    assert (
        item_name("i", "m", 1, 2) == "i[t2]"
        and item_name("i", "m", 2, 2) == "i[m-t2]"
        and item_name("i", "m", 1, None) == "i"
    )
    assert evidence_folder("i", None) == folder_name("i") and evidence_folder("i", 2) != evidence_folder("i", 1)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30), st.integers(1, 99))
def test_no_instance_folder_is_a_trial_folder(a: str, b: str, trial: int) -> None:
    assert folder_name(a) != evidence_folder(b, trial)


def test_live_trials_collect_one_item_per_trial_and_a_file_its_own_trials(pytester: pytest.Pytester) -> None:
    examples = str(ROOT / "cases" / "examples" / "mobilebench__counter.yaml")
    live = pytester.runpytest(
        examples,
        "--predictions=live",
        "--mb-agent-base-url=http://127.0.0.1:9/v1",
        "--mb-agent-model=m",
        "--mb-trials=3",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
    )
    ids = [x for x in live.outlines if "::" in x]
    assert [x.split("::")[-1] for x in ids] == [f"mobilebench__counter-{i}[t{t}]" for i in (1, 2) for t in (1, 2, 3)]
    single = pytester.runpytest(
        examples,
        "--predictions=live",
        "--mb-agent-base-url=http://127.0.0.1:9/v1",
        "--mb-agent-model=m",
        "--collect-only",
        "-q",
        "-p",
        "no:cacheprovider",
    )
    assert [x.split("::")[-1] for x in single.outlines if "::" in x] == [
        "mobilebench__counter-1",
        "mobilebench__counter-2",
    ]
    path = _write(
        pytester.path / "p.jsonl",
        [
            {"instance_id": "mobilebench__counter-1", "model_name_or_path": "m", "model_patch": "", "trial": t}
            for t in (2, 1)
        ],
    )
    offline = pytester.runpytest(examples, f"--predictions={path}", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert [x.split("::")[-1] for x in offline.outlines if "::" in x] == [
        "mobilebench__counter-1[t1]",
        "mobilebench__counter-1[t2]",
        "mobilebench__counter-2",
    ]


@pytest.mark.e2e
def test_offline_trials_grade_apart_and_mb_regrade_keeps_each_trial(
    pytester: pytest.Pytester, tmp_path: Path, mb_cache: Path
) -> None:
    """A predictions file with two trials of one instance (the fix, then nothing) on the local runtime: two items,
    per-trial verdicts, the flip; ``--mb-regrade`` of the run re-grades each trial folder to its own verdict."""
    from conftest import git, make_pytest_repo, manifest_for

    repo = make_pytest_repo(tmp_path / "src")
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest_for(repo)})
    fix = git(repo.path, "diff", repo.base, repo.fix, "--", "calc.py") + "\n"
    row = {"instance_id": "acme__calc-1", "model_name_or_path": "m"}
    _write(
        pytester.path / "preds.jsonl", [{**row, "trial": 2, "model_patch": ""}, {**row, "trial": 1, "model_patch": fix}]
    )
    common = ("-p", "no:cacheprovider", "--mb-runtime=local", "--mb-trust-candidates")
    first = pytester.runpytest(
        "cases", "--predictions=preds.jsonl", "--mb-run-id=live", "--mb-summary=reports/live/summary.json", *common
    )
    first.assert_outcomes(passed=1, failed=1)
    live = json.loads((pytester.path / "reports" / "live" / "summary.json").read_text())
    verdicts = {k: e["reason"] for k, e in live["instances"].items()}
    assert verdicts == {"acme__calc-1[t1]": "resolved", "acme__calc-1[t2]": "empty_patch"}
    assert live["suite_tables"]["issue_resolution"]["trials"]["m"]["flips"][0]["instance_id"] == "acme__calc-1"
    again = pytester.runpytest(
        "cases", "--mb-regrade=reports/live", "--mb-summary=reports/regraded.json", "--mb-run-id=again", *common
    )
    again.assert_outcomes(passed=1, failed=1)  # each trial an item of its own, as in the live run
    assert again.ret == 1
    regraded = json.loads((pytester.path / "reports" / "regraded.json").read_text())
    assert {k: e["reason"] for k, e in regraded["instances"].items()} == verdicts
    assert regraded["suite_tables"]["issue_resolution"]["trials"]["m"]["pass_1"]["value"] == 0.5
