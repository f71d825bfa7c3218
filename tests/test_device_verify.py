"""``dataset check --verify`` on device-repair manifests, on a simulated device behind Debian's real adb server.

The bundled records (``cases/device_repair``) are measured end to end: gold accepted, the empty patch
(S_bug) failing, each mutant of the fix graded as a candidate patch by a real JVM. A copy of ``calc`` whose
target test asserts less (``percentOf(200, 15) < 100`` instead of ``== 30``) lets near misses through: its
leak rises and ``--strict`` fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from adbsim import AdbServer, SimDevice, adb_available

from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.mining.check import CheckOptions
from pytest_mobilebench.mining.check import check as lint
from pytest_mobilebench.mining.verify_device import _record_row, mutant_rows
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.suites.device_repair import SUITE
from pytest_mobilebench.suites.device_repair.flow import resolve_patches

needs_adb = pytest.mark.skipif(
    not adb_available() or not Path("/usr/share/java/junit4.jar").is_file(),
    reason="needs Debian's adb, a JDK (javac) and junit4",
)

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases" / "device_repair"


@pytest.fixture(scope="module")
def device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdbServer, SimDevice, Path]]:
    """One healthy simulated device for the module's runs, and a lock folder of its own."""
    root = tmp_path_factory.mktemp("verify-devices")
    server = AdbServer()
    sim = SimDevice(root / "d0")
    try:
        server.connect(sim)
        yield server, sim, root / "locks"
    finally:
        server.adb("disconnect", sim.serial)
        sim.close()
        server.close()


def check(
    files: list[Path], tmp_path: Path, device: tuple[AdbServer, SimDevice, Path], *extra: str
) -> tuple[int, dict[str, Any], str]:
    """Run ``dataset check --verify`` on ``files``: ``(exit code, the JSON report, stdout + stderr)``."""
    server, sim, locks = device
    out = tmp_path / "report.json"
    args = f"--mb-devices={sim.serial} --mb-adb-server=127.0.0.1:{server.port} --mb-device-lock-dir={locks}"
    cmd = [sys.executable, "-m", "pytest_mobilebench", "dataset", "check", *map(str, files), "--verify",
           f"--json={out}", f"--out={tmp_path / 'verify'}", f"--pytest-args={args}", *extra]  # fmt: skip
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=1500, check=False)
    text = done.stdout + done.stderr
    assert out.is_file(), text[-4000:]
    return done.returncode, json.loads(out.read_text(encoding="utf-8")), text


def test_mutant_rows_of_the_calc_fix_are_seeded_and_cover_each_hunk() -> None:
    (loaded,) = SUITE.load(CASES / "mobilebench__calc.yaml", read_yaml(CASES / "mobilebench__calc.yaml"))
    _, fix = resolve_patches(loaded.record, RepoCache(run_id="test-device-verify"))
    rows = mutant_rows(loaded.record.instance_id, fix, per_hunk=3, seed=0)
    assert rows == mutant_rows(loaded.record.instance_id, fix, per_hunk=3, seed=0)
    assert rows[0]["kind"] == "hunk_dropped" and rows[0]["patch"] == ""
    kinds = {r["kind"] for r in rows[1:]}
    assert len(rows) == 4 and kinds <= {"operator", "constant", "condition", "return", "statement"}, rows
    for r in rows[1:]:
        assert r["before"] != r["after"] and f"+{r['after']}" in r["patch"]


DRAWS = [
    {"id": i, "kind": k, "file": "A.java", "line": 3, "before": "x", "after": "y", "patch": f"patch {i}"}
    for i, k in (("h0.drop", "hunk_dropped"), ("h0.m0", "operator"), ("h0.m1", "constant"))
]


def entry(reason: str, **more: Any) -> dict[str, Any]:
    return {"reason": reason, "passed": reason == "resolved", "retryable": reason == "infra_error", **more}


def test_record_row_counts_resolving_mutants_and_keeps_their_diffs(tmp_path: Path) -> None:
    gold = entry("resolved", s_bug_q="failed", evidence_dir=str(tmp_path))
    results = {("r", "mutant.h0.drop"): entry("empty_patch"), ("r", "mutant.h0.m0"): entry("resolved"),
               ("r", "mutant.h0.m1"): entry("infra_error")}  # fmt: skip
    row = _record_row("r", gold, DRAWS, results, 0.25)
    assert (row["status"], row["verifier_leak"], row["judged"], row["survived"], row["weak"]) == (
        "measured",
        0.5,
        2,
        1,
        True,
    )
    assert row["empty_resolves"] is False
    assert [m["resolves"] for m in row["mutants"]] == [False, True, None]  # infrastructure: no verdict
    (kept,) = row["surviving"]
    assert kept["id"] == "h0.m0" and Path(kept["diff"]).read_text() == "patch h0.m0"
    assert not (tmp_path / "mutant.h0.drop.diff").exists()


@pytest.mark.parametrize(("gold", "status"), [
    (None, "not_run"),
    (entry("infra_error"), "infra_error"),
    (entry("record_rejected", s_bug_q="passed"), "empty_resolves"),
    (entry("record_rejected", s_bug_q="failed"), "gold_not_resolving"),
])  # fmt: skip
def test_record_row_without_an_accepted_gold_has_no_leak(tmp_path: Path, gold: Any, status: str) -> None:
    gold = None if gold is None else {**gold, "evidence_dir": str(tmp_path)}
    results = {("r", "mutant.h0.m0"): entry("resolved")}
    row = _record_row("r", gold, DRAWS, results, 0.25)
    assert row["status"] == status and row["verifier_leak"] is None and not row["weak"]
    assert row["empty_resolves"] is (
        True if status == "empty_resolves" else False if gold and gold.get("s_bug_q") else None
    )


def test_dataset_check_lints_device_manifests_with_their_own_loader(tmp_path: Path) -> None:
    findings, _ = lint(CheckOptions((CASES,)))
    assert findings == []
    broken = tmp_path / "broken.yaml"
    text = (CASES / "mobilebench__calc.yaml").read_text(encoding="utf-8")
    broken.write_text(text.replace("target: com.example.calc.CalculatorTest#percentOfHundred", "target: two methods"))
    (finding,) = lint(CheckOptions((broken,)))[0]
    assert finding.instance == "mobilebench__calc-1" and finding.field == "target" and finding.line, finding


def weakened_calc(tmp_path: Path) -> Path:
    """A copy of ``calc`` with inline patches whose target asserts only ``percentOf(200, 15) < 100``."""
    path = CASES / "mobilebench__calc.yaml"
    (loaded,) = SUITE.load(path, read_yaml(path))
    test, fix = resolve_patches(loaded.record, RepoCache(run_id="test-device-verify"))
    strong = "assertEquals(30, new Calculator().percentOf(200, 15));"
    assert strong in test
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["repo_url"] = loaded.record.repo_url
    data["repo"] = "mobilebench/calc-weak"
    (entry,) = data["instances"]
    entry.pop("fix_commit")
    entry.update(
        instance_id="mobilebench__calc-weak-1",
        fix_patch=fix,
        test_patch=test.replace(strong, "assertEquals(true, new Calculator().percentOf(200, 15) < 100);"),
    )
    out = tmp_path / "cases" / "mobilebench__calc-weak.yaml"
    out.parent.mkdir(parents=True)
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


@needs_adb
@pytest.mark.e2e
def test_bundled_records_leak_nothing_and_a_weakened_target_leaks_and_fails_strict(
    device: tuple[AdbServer, SimDevice, Path], tmp_path: Path
) -> None:
    weak = weakened_calc(tmp_path)
    code, report, text = check([CASES, weak], tmp_path, device, "--strict")
    rows = {r["instance_id"]: r for r in report["instances"]}
    print(text)
    for iid in ("mobilebench__calc-1", "mobilebench__textutils-1"):
        assert rows[iid]["status"] == "measured", rows[iid]
        assert rows[iid]["empty_resolves"] is False and rows[iid]["judged"] >= 2
        assert rows[iid]["verifier_leak"] == 0.0 and not rows[iid]["weak"], rows[iid]
    bad = rows["mobilebench__calc-weak-1"]
    assert bad["status"] == "measured" and bad["verifier_leak"] > rows["mobilebench__calc-1"]["verifier_leak"]
    assert bad["weak"] and bad["surviving"], bad
    for m in bad["surviving"]:
        assert Path(m["diff"]).is_file() and m["after"].strip() in Path(m["diff"]).read_text(encoding="utf-8")
    assert "no finding" in text  # the lint passes: exit 1 is --strict's
    assert code == 1 and "verify --strict failed: mobilebench__calc-weak-1: weak" in text
    assert report["distribution"]["weak"] == ["mobilebench__calc-weak-1"]
    assert "WEAK" in text and "survives" in text
