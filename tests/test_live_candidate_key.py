"""The result-cache key depends on the candidate, not on how it was produced: a live item's candidate, once its
row is written, has the key a re-grade of the run's predictions file computes (the agent's options do not enter
a file prediction's key), so re-grading a live run from its own ``predictions.jsonl`` is answered from the cache
for identical patches and never for a different one."""

from __future__ import annotations

from pathlib import Path

from pytest_mobilebench.agents.options import AGENT_OPTIONS
from pytest_mobilebench.cache import candidate_key, keyed_options, result_key
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.suites.issue_resolution import SUITE
from pytest_mobilebench.suites.planner import SUITE as PLANNER

ROOT = Path(__file__).resolve().parents[1]
LIVE = {
    "mb_agent_base_url": "http://127.0.0.1:8000/v1",
    "mb_agent_model": "scripted",
    "mb_agent_max_steps": 30,
    "mb_agent_wall_time": 600.0,
    "mb_agent_prompt": None,
    "mb_trials": 2,
}
REGRADE: dict = {}  # a re-grade run gives no agent option
AGENT_DESTS = [o.dest for o in AGENT_OPTIONS]
PATCH = (
    "diff --git a/src/counter.js b/src/counter.js\n--- a/src/counter.js\n+++ b/src/counter.js\n@@ -1 +1 @@\n-a\n+b\n"
)


def _record():
    path = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"
    return next(r for r in SUITE.load(path, read_yaml(path)) if r.instance_id == "mobilebench__counter-1")


def _row(patch: str = PATCH, trial: int | None = 1) -> dict:
    row = {"instance_id": "mobilebench__counter-1", "model_name_or_path": "scripted", "model_patch": patch}
    return row if trial is None else {**row, "trial": trial}


def test_a_live_candidate_has_the_key_of_the_same_row_re_graded_from_the_file(tmp_path: Path) -> None:
    record = _record()
    run = tmp_path / "reports" / "run-1"
    live_key = result_key(
        SUITE, record, "scripted", Prediction("mobilebench__counter-1", "scripted", PredictionKind.LIVE, trial=1), LIVE
    )
    stored = candidate_key(SUITE, record, _row(), run, LIVE)
    regraded = result_key(SUITE, record, "scripted", Prediction.from_entry(_row(), run.resolve()), REGRADE)
    assert stored == regraded != live_key
    assert candidate_key(SUITE, record, _row(PATCH.replace("+b", "+c")), run, LIVE) != regraded  # another patch
    assert candidate_key(SUITE, record, _row(trial=2), run, LIVE) != regraded  # another trial


def test_agent_options_key_only_live_predictions_but_recorded_trials_stay_keyed() -> None:
    assert {"mb_agent_base_url", "mb_agent_model", "mb_agent_max_steps"} <= set(keyed_options(SUITE, LIVE))
    assert keyed_options(SUITE, LIVE, live=False) == keyed_options(SUITE, REGRADE, live=False)
    assert not set(keyed_options(SUITE, LIVE, live=False)) & set(AGENT_DESTS)
    # the planner grades K recorded trials in one item: --mb-trials changes a file prediction's verdict there
    assert set(keyed_options(PLANNER, LIVE, live=False)) & set(AGENT_DESTS) == {"mb_trials"}
