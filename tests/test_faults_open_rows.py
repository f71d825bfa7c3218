"""Issue 35, item 8: the rows still open after the fault trial's third pass (the pure and in-process ones;
the Docker one is in ``test_faults_open_rows_docker.py``)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from conftest import PyRepo, manifest_for
from pytest_mobilebench.report.summary import make_summary, selected_by_model
from pytest_mobilebench.state import MobileBenchState


def _state(tmp_path: Path, models: list[str], results: list[dict]) -> MobileBenchState:
    collected = {
        f"cases/a.yaml::{iid}[{model}]": ("issue_resolution", iid) for iid in ("o__r-1", "o__r-2") for model in models
    }
    predictions = types.SimpleNamespace(models=models, pseudo=None, instance_ids=["o__r-1", "o__r-2"])
    return MobileBenchState(
        run_id="r",
        reports_dir=tmp_path,
        summary_path=tmp_path / "summary.json",
        predictions=predictions,
        suites={},
        is_controller=True,  # type: ignore[arg-type]
        results=results,
        collected=collected,
    )


def _result(iid: str, model: str) -> dict:
    return {
        "suite": "issue_resolution",
        "instance_id": iid,
        "model_name_or_path": model,
        "status": "resolved",
        "reason": "resolved",
    }


def test_an_instance_one_model_finished_and_another_did_not_is_not_run(tmp_path: Path) -> None:
    results = [_result("o__r-1", "m-a"), _result("o__r-1", "m-b"), _result("o__r-2", "m-a")]  # m-b never ran o__r-2
    summary = make_summary(_state(tmp_path, ["m-a", "m-b"], results))
    assert summary["not_run_instances"] == ["o__r-2"]
    assert summary["unmatched_predictions"] == []


def test_every_model_finished_leaves_nothing_not_run(tmp_path: Path) -> None:
    results = [_result(iid, model) for iid in ("o__r-1", "o__r-2") for model in ("m-a", "m-ab")]
    assert make_summary(_state(tmp_path, ["m-a", "m-ab"], results))["not_run_instances"] == []


def test_a_missing_trial_of_one_model_leaves_its_instance_not_run(tmp_path: Path) -> None:
    """Two models, two trials each: m-b's second trial of o__r-2 has no result, so o__r-2 is not run, and each
    model's selected count holds its trials (the node ids end with ``[<model>-t<k>]``)."""
    state = _state(tmp_path, ["m-a", "m-b"], [])
    state.collected = {
        f"cases/a.yaml::{iid}[{model}-t{k}]": ("issue_resolution", iid)
        for iid in ("o__r-1", "o__r-2")
        for model in ("m-a", "m-b")
        for k in (1, 2)
    }
    state.results = [
        _result(iid, model) | {"trial": k}
        for iid in ("o__r-1", "o__r-2")
        for model in ("m-a", "m-b")
        for k in (1, 2)
        if (iid, model, k) != ("o__r-2", "m-b", 2)
    ]
    summary = make_summary(state)
    assert summary["not_run_instances"] == ["o__r-2"]
    assert summary["by_model"]["m-b"]["not_run_ids"] == ["o__r-2[t2]"]
    assert selected_by_model(state.collected, ["m-a", "m-b"]) == {"issue_resolution": {"m-a": 4, "m-b": 4}}


def test_the_local_runtimes_warning_is_in_the_summary_and_its_terminal_lines() -> None:
    from pytest_mobilebench.report.terminal import headline_lines
    from pytest_mobilebench.runtime.local import UNISOLATED
    from pytest_mobilebench.runtime.provider import builtin_providers

    registry = builtin_providers()
    assert registry.notices([{"runtimes": ["docker"]}]) == []
    assert registry.notices([{"runtimes": ["docker"]}, {"runtimes": ["local"]}, {"runtimes": ["local"]}]) == [
        UNISOLATED
    ]
    lines = headline_lines({"run_id": "r", "models": ["m"], "runtime_warnings": [UNISOLATED]})
    assert f"WARNING: {UNISOLATED}" in lines


@pytest.mark.e2e
def test_the_unisolated_warning_of_a_local_run_reaches_the_terminal(
    pytester: pytest.Pytester, pyrepo: PyRepo, tmp_path: Path, mb_cache: Path
) -> None:
    from pytest_mobilebench.runtime.local import UNISOLATED

    pytester.makefile(".yaml", **{"cases/acme__calc": manifest_for(pyrepo)})
    result = pytester.runpytest(
        "cases", "--predictions=gold", "--mb-runtime=local", "--mb-run-id=r", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    section = result.stdout.str().split("mobilebench", 1)[-1]
    assert f"WARNING: {UNISOLATED}" in section
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["runtime_warnings"] == [UNISOLATED]
