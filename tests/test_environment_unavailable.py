"""Issue 30, item 3: a dependency this machine cannot fetch makes the instance ``environment_unavailable``: named,
remembered per lockfile for the run, never retried as infra, counted apart in the headline and the summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mobilebench.mining.validate import _verdict
from pytest_mobilebench.report.headline import suite_headline
from pytest_mobilebench.report.summary import headline as summary_headline
from pytest_mobilebench.runtime.base import EnvironmentUnavailable, InfraError
from pytest_mobilebench.runtime.install_memo import failed_install, lockfile_key, remembered, unavailable_memo
from pytest_mobilebench.suites.issue_resolution.rates import headline as resolution_headline
from pytest_mobilebench.suites.issue_resolution.unavailable import unavailable_result

MISSING = "npm error code ETARGET\nnpm error notarget No matching version found for zz-none@9.9.9.\n"
TRANSIENT = "npm error code E502\nnpm error 502 Bad Gateway - GET https://registry.example.test/zz\n"
OWN_SCRIPT = "npm error path /testbed\nnpm error command failed\nnpm error command sh -c node scripts/x.js\n"


def test_an_unfetchable_dependency_is_remembered_for_the_run_and_lockfile_and_names_the_package(tmp_path: Path) -> None:
    files = {"package.json": b"{}", "package-lock.json": b'{"v": 1}'}
    memo = unavailable_memo(tmp_path, "run-1", files)
    remembered(memo)  # nothing yet
    with pytest.raises(EnvironmentUnavailable) as first:
        failed_install(MISSING, "installing dependencies for t", memo)
    assert (first.value.cause, first.value.subject) == ("package_missing", "zz-none@9.9.9")
    assert first.value.kind == "environment_unavailable" and "No matching version" in first.value.message
    # another instance with the same lockfile (its package.json differs): refused at once, same finding
    sibling = unavailable_memo(tmp_path, "run-1", {"package.json": b'{"name": "b"}', "package-lock.json": b'{"v": 1}'})
    assert sibling == memo
    with pytest.raises(EnvironmentUnavailable) as again:
        remembered(sibling)
    assert again.value.subject == "zz-none@9.9.9" and "remembered for this run" in again.value.message
    # another run, or another lockfile, tries again
    remembered(unavailable_memo(tmp_path, "run-2", files))
    remembered(unavailable_memo(tmp_path, "run-1", {"package-lock.json": b'{"v": 2}'}))
    assert lockfile_key({"package.json": b"{}"}) != lockfile_key({"package.json": b"{ }"})


def test_transient_registry_trouble_stays_infra_and_an_own_script_falls_back(tmp_path: Path) -> None:
    memo = tmp_path / "memo.json"
    with pytest.raises(InfraError) as info:
        failed_install(TRANSIENT, "installing", memo)
    assert info.value.kind == "install_failed" and not isinstance(info.value, EnvironmentUnavailable)
    assert "502 Bad Gateway" in info.value.message
    assert failed_install(OWN_SCRIPT, "installing", memo).cause == "lifecycle_script"
    assert not memo.exists()


def _row(model: str, iid: str, reason: str, passed: bool = False, retryable: bool = False, **extra) -> dict:
    return {"model_name_or_path": model, "instance_id": iid, "reason": reason, "passed": passed,
            "retryable": retryable, "properties": {}, **extra}  # fmt: skip


def test_unavailable_items_are_out_of_every_denominator_and_counted_apart() -> None:
    exc = EnvironmentUnavailable("host_unreachable", "archives.example.test", ["line"], "installing: host_unreachable")
    gone = unavailable_result({"model_name_or_path": "m", "instance_id": "c"}, exc)
    assert gone["reason"] == "environment_unavailable" and gone["retryable"] is False and gone["passed"] is False
    rows = [_row("m", "a", "resolved", passed=True), _row("m", "b", "unresolved"), gone,
            _row("m", "d", "infra_error", retryable=True)]  # fmt: skip
    block = suite_headline("issue_resolution", rows)
    assert (block["eligible"], block["infra_errors"], block["environment_unavailable"]) == (2, 1, 1)
    assert block["over_eligible"]["value"] == 0.5
    top = summary_headline(rows)
    assert (top["eligible"], top["environment_unavailable"], top["resolution_rate"]) == (2, 1, 0.5)
    own = resolution_headline(rows)
    assert (own["numerator"], own["denominator"]) == (1, 2)
    assert own["environment_unavailable"] == ["m: c: host_unreachable: archives.example.test"]
    assert "cannot be fetched here" in own["note"]


def test_mining_names_an_unavailable_candidate_apart_from_invalid_and_infra() -> None:
    entry = {"reason": "environment_unavailable", "retryable": False, "detail": "package_missing: zz-none@9.9.9"}
    verdict = _verdict(entry)
    assert verdict.status == "environment_unavailable" and "zz-none" in verdict.detail
