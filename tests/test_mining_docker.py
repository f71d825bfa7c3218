"""``mine`` with validation on the bundled counter repository, in Docker: the mined gold lists equal the
hand-written ones of ``cases/examples`` (held-back ground truth), ``dataset check`` passes the output against
the validation run's own evidence, and a second ``mine`` is answered from the result cache."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pytest_mobilebench.__main__ import main
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.suites.issue_resolution import docker_answers
from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"
EXAMPLES = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]


def _gold(path: Path) -> dict[str, tuple[set[str], set[str], set[str]]]:
    return {r.record.fix_commit: (set(r.record.FAIL_TO_PASS), set(r.record.NONE_TO_PASS), set(r.record.PASS_TO_PASS))
            for r in load_manifest(read_yaml(path))}  # fmt: skip


def test_mine_validate_check_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mined"
    args = [
        "mine",
        str(BUNDLE),
        "--out",
        str(out),
        "--validate-runs",
        "1",
        "--runtime",
        "docker",
        "--format",
        "mobiledev-bench",
        "--no-audit",
    ]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    log = next((out / "logs").glob("*.log")).read_text()
    assert report["validation"]["valid"] == 2, (report, log[-3000:])
    assert report["validation"]["setup_s"] > 0 and report["validation"]["test_s"] > 0
    manifest = out / "mobilebench__counter.yaml"
    assert _gold(manifest) == _gold(EXAMPLES)
    for record in load_manifest(read_yaml(manifest)):
        validation = record.record.provenance["validation"]
        assert validation["run_id"] == report["validation"]["run_id"] and validation["status"] == "valid"
    rows = [json.loads(line) for line in (out / "mobilebench__counter.mobiledev-bench.jsonl").read_text().splitlines()]
    fix2 = next(r for r in rows if r["n2p_tests"])
    assert all(states == {"run": "NONE", "test": "NONE", "fix": "PASS"} for states in fix2["n2p_tests"].values())
    capsys.readouterr()
    run = out / "reports" / report["validation"]["run_id"]
    assert main(["dataset", "check", str(manifest), "--run", str(run)]) == 0, capsys.readouterr().out

    started = time.monotonic()
    assert main(args) == 0
    again = json.loads((out / "report.json").read_text())
    assert again["validation"]["cached"] == 2 and again["validation"]["valid"] == 2
    assert again["validation"]["setup_s"] == again["validation"]["test_s"] == 0  # nothing ran again
    assert all(i["test_s"] > 0 for i in again["instances"].values())  # the original timings are kept
    assert time.monotonic() - started < 120
