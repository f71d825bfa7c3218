"""Validation checks the result channel exactly as grading does (issue 30, items 2 and 5).

A jest project whose runner ignores the harness (its report has the tests, the harness's channel comes back
empty, the launcher started jest) validated before: validation read the report only, and every candidate,
gold included, was then graded ``policy_violation`` (``runner_compromised``). Now each run of the benchmark's
own patches goes through the live grade's own check of its run (``judge.run_findings`` via
``judge.ungradable``): the instance is not valid, its validation is ``infra_error`` of kind
``runner_harness_failed`` naming what the channel lacked, and ``mine`` reads it so. The same project with an
honest channel validates. The workspace is a stand-in (the runs' reports and channels are written here, signed
with the run's own key), driving the suite's real validation step.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pytest_mobilebench.mining.validate import _verdict
from fake_workspaces import FilesWorkspace
from pytest_mobilebench.predictions import GOLD as GOLD_NAME
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.runtime.base import ApplyResult, Capability, RunResult
from pytest_mobilebench.runtime.channel import glob_regex
from pytest_mobilebench.suites.base import LoadedRecord
from pytest_mobilebench.suites.issue_resolution.evaluation import EVALUATOR
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

T = TypeVar("T")
TEST_FILE = "__tests__/counter.test.js"
TITLES = ["Counter", "increments by one"]
GOLD = "--- a/src/counter.js\n+++ b/src/counter.js\n@@ -1 +1 @@\n-step + 1\n+step\n"
TEST_PATCH = f"--- /dev/null\n+++ b/{TEST_FILE}\n@@ -0,0 +1 @@\n+test('increments by one', () => {{}});\n"
TREE = {
    "package.json": json.dumps({"name": "app", "devDependencies": {"jest": "29.7.0"}}).encode(),
    "package-lock.json": b"{}",
    "src/counter.js": b"step + 1\n",
    "node_modules/jest/package.json": b'{"name": "jest", "version": "29.7.0"}',
    "node_modules/jest-circus/package.json": b'{"name": "jest-circus", "version": "29.7.0"}',
}


def _signed(key: bytes, records: Sequence[dict[str, Any]]) -> bytes:
    lines = []
    for seq, record in enumerate(records):
        body = json.dumps({"seq": seq, **record}).encode()
        lines.append(hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body + b"\n")
    return b"".join(lines)


class _Workspace(FilesWorkspace):
    """A jest project where the gold patch makes ``Counter > increments by one`` pass; ``honest``: the runner
    writes the harness's channel (else it ignores the harness: the channel comes back empty)."""

    results_root = "/var/tmp/mb-results-fake"

    def __init__(self, honest: bool) -> None:
        super().__init__(TREE, capabilities=frozenset({Capability.RESULT_CHANNEL, Capability.ROOT_FILES}))
        self.honest, self.patched = honest, set()

    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        self.patched.add(name.split(".")[0])
        if name.startswith("test_patch"):
            self.files[TEST_FILE] = b"test('increments by one', () => {});\n"
        return ApplyResult(ok=True, method="git apply", log="")

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        found = {}
        for pattern in patterns:
            regex = glob_regex(pattern.lstrip("/"))
            found.update({k: v for k, v in self.files.items() if regex.match(k)})
        return found

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        return []

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        return RunResult(command=command, exit_code=0, output="{}\n", duration_s=0.0)

    def run_with_channel(
        self, command: str, *, files: dict[str, bytes], key: bytes, timeout_s: float
    ) -> tuple[RunResult, bytes, bytes]:
        runner = next(v for k, v in files.items() if k.endswith("/runner.js")).decode()
        nonce = re.search(r"mobilebench canary ([0-9a-f]{16})", runner).group(1)  # type: ignore[union-attr]
        present = TEST_FILE in self.files
        passed = bool({"gold_patch", "model_patch"} & self.patched)  # validation names it gold, a gold run model
        tests = [
            (TITLES, "passed" if passed else "failed"),
            ([f"mobilebench canary {nonce}", f"must fail {nonce}"], "failed"),
            ([f"mobilebench canary {nonce}", f"must pass {nonce}"], "passed"),
        ]
        results = [
            {"ancestorTitles": t[:-1], "title": t[-1], "fullName": " ".join(t), "status": s, "failureMessages": []}
            for t, s in tests
        ]
        report = {"testResults": [{"name": f"/testbed/{TEST_FILE}", "assertionResults": results}] if present else []}
        out = next(w for w in shlex.split(command) if w.startswith("--outputFile=")).split("=", 1)[1]
        self.files[out.lstrip("/")] = json.dumps(report).encode()
        n_pass = sum(s == "passed" for _, s in tests) if present else 0
        records: list[dict[str, Any]] = [{"type": "start"}]
        if present:
            record_tests = [{"titles": t, "status": s, "problems": []} for t, s in tests]
            records.append({"type": "file", "path": f"/testbed/{TEST_FILE}", "frozen": True, "intact": True,
                            "tests": record_tests})  # fmt: skip
        records.append(
            {"type": "final", "numPassedTests": n_pass, "numFailedTests": len(tests) - n_pass if present else 0}
        )
        channel = _signed(key, records) if self.honest else b""
        status = json.dumps({"ok": True, "problems": [], "cli": "/testbed/node_modules/jest/bin/jest.js"}).encode()
        return RunResult(command=command, exit_code=1, output="", duration_s=0.1), channel, status + b"\n"


class _Runtime:
    name = "fake"

    def __init__(self, honest: bool) -> None:
        self.honest = honest

    def get(self, *, trusted: bool) -> _Runtime:
        return self

    def prepare(self, spec: Any, *, log_dir: Path | None = None) -> _Workspace:
        return _Workspace(self.honest)


class _Ctx:
    run_id = "r1"

    def __init__(self, evidence: Path, honest: bool, *, validate: bool = True) -> None:
        self.evidence_dir, self.runtime = evidence, _Runtime(honest)
        self.options = {
            "mb_validate": validate,
            "mb_validate_runs": 1,
            "mb_instance_timeout": 60,
            "mb_repo_url_template": "/none/{repo}",
        }

    def resource(self, key: str, factory: Callable[[], T], close: Callable[[T], None] | None = None) -> T:
        return factory()

    def progress(self, message: str) -> None:
        pass

    def fixture(self, name: str) -> Any:
        assert name == "mb_runtime"
        return self.runtime


def _validated(tmp_path: Path, honest: bool, *, validate: bool = True) -> dict[str, Any]:
    instance = IssueInstance(
        instance_id="acme__counter-1",
        repo="acme/counter",
        base_commit="a" * 40,
        framework="react-native",
        patch=GOLD,
        test_patch=TEST_PATCH,
        FAIL_TO_PASS=(f"{TEST_FILE}::Counter > increments by one",),
    )
    record = LoadedRecord(
        suite="issue_resolution", instance_id=instance.instance_id, source=tmp_path / "m.yaml", line=1,
        record=instance, group="acme/counter",
    )  # fmt: skip
    evidence = tmp_path / ("honest" if honest else "ignored")
    evidence.mkdir()
    gold = None if validate else Prediction(instance.instance_id, GOLD_NAME, PredictionKind.GOLD)
    return EVALUATOR.evaluate(record, gold, _Ctx(evidence, honest, validate=validate))  # type: ignore[arg-type]


def test_an_honest_channel_validates(tmp_path: Path) -> None:
    result = _validated(tmp_path, honest=True)
    assert result["validation"]["valid"] is True, result.get("detail")
    assert result["validation"]["FAIL_TO_PASS"] == [f"{TEST_FILE}::Counter > increments by one"]
    assert _verdict(result).status == "valid"


def test_a_runner_ignoring_the_harness_is_not_valid_and_names_the_harness_kind(tmp_path: Path) -> None:
    result = _validated(tmp_path, honest=False)
    assert (result["reason"], result["infra_kind"], result["retryable"]) == (
        "infra_error",
        "runner_harness_failed",
        True,
    )
    assert "validation" not in result  # never a proposal of gold lists
    detail = result["detail"]
    assert detail.startswith("runner_harness_failed: the base.1 run cannot be graded"), detail
    assert "runner_compromised: the runner's channel has no start record" in detail
    verdict = _verdict(result)  # what `mine` reads from the summary
    assert not verdict.kept and verdict.status == "infra_error" and "runner_harness_failed" in verdict.detail


def test_a_gold_run_whose_channel_fails_is_the_harness_failure_not_the_gold_patch(tmp_path: Path) -> None:
    """``--predictions=gold`` is the benchmark's own patch: a channel that comes back empty under it is the
    harness's failure (``runner_harness_failed``, infra), never a ``runner_compromised`` verdict on gold."""
    assert _validated(tmp_path, honest=True, validate=False)["reason"] == "resolved"
    (tmp_path / "again").mkdir()
    result = _validated(tmp_path / "again", honest=False, validate=False)
    assert (result["reason"], result["infra_kind"]) == ("infra_error", "runner_harness_failed"), result
    assert "runner_compromised: the runner's channel has no start record" in result["detail"]
