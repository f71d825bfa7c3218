"""A live agent produces a prediction before evaluation (issue 32, item 3): under ``--predictions=live`` the item
asks the suite's ``produce_live`` for the candidate, evaluates the file prediction it returns like any other and
attaches the agent's record; a dict from ``produce_live`` is the item's result (no candidate was made). No suite's
``evaluate`` sees a live pseudo-prediction."""

from __future__ import annotations

import json

import pytest

from test_suite_seam import ECHO_MANIFEST, THIRD_PARTY_CONFTEST

LIVE_CONFTEST = (
    THIRD_PARTY_CONFTEST.replace(
        "    def live_model(self, options):\n        return None\n",
        """    def live_model(self, options):
        return "echo-agent"

    def produce_live(self, record, prediction, ctx):
        from pytest_mobilebench.predictions import Prediction
        from pytest_mobilebench.suites.base import LiveCandidate

        (ctx.evidence_dir / "produced.txt").write_text(prediction.kind.value)
        if record.record["answer"] == "maybe":  # the agent's endpoint is down: no candidate
            return {"reason": "flaky_oracle", "passed": False, "retryable": True, "properties": {"made": 0}}
        row = {"instance_id": record.instance_id, "model_name_or_path": prediction.model_name_or_path,
               "model_patch": record.record["answer"] if record.record["answer"] == "yes" else "nope"}

        def attach(result):
            return {**result, "agent": {"end": "submitted"}, "properties": {**result["properties"], "made": 1}}

        return LiveCandidate(Prediction.from_entry(row), attach)
""",
    )
    .replace(
        '        said = (prediction or {}).get("model_patch")\n',
        '        (ctx.evidence_dir / "evaluated.txt").write_text(prediction.kind.value)\n'
        '        said = (prediction or {}).get("model_patch")\n',
    )
    .replace("(prediction or {}).get(", "prediction.get(")
)


def test_the_item_asks_for_the_live_candidate_then_evaluates_it_as_a_file_prediction(
    pytester: pytest.Pytester,
) -> None:
    assert "produce_live" in LIVE_CONFTEST and "evaluated.txt" in LIVE_CONFTEST  # the patches above applied
    pytester.makeconftest(LIVE_CONFTEST)
    pytester.makefile(".yaml", echo=ECHO_MANIFEST)
    result = pytester.runpytest("--predictions=live", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)
    run = pytester.path / "reports" / "latest"
    found = [json.loads(p.read_text()) for p in run.resolve().rglob("result.json")]
    by_id = {r["instance_id"]: r for r in found}
    assert by_id["echo-1"]["passed"] is True and by_id["echo-1"]["agent"] == {"end": "submitted"}
    assert by_id["echo-1"]["properties"]["made"] == 1 and by_id["echo-2"]["reason"] == "wrong"
    assert by_id["echo-3"]["reason"] == "flaky_oracle" and by_id["echo-3"]["retryable"] is True
    produced = {p.parent.name: p.read_text() for p in run.resolve().rglob("produced.txt")}
    evaluated = {p.parent.name: p.read_text() for p in run.resolve().rglob("evaluated.txt")}
    assert len(produced) == 3 and set(produced.values()) == {"live"}
    assert len(evaluated) == 2 and set(evaluated.values()) == {"file"}  # never the live pseudo-prediction
