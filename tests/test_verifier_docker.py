"""``dataset check --verify`` in Docker on the bundled counter instance and on a deliberately weakened copy of
it (``fixtures/verifier/``: the same gold, F2P tests that assert less): the original's leak is 0 and
``--strict`` passes; the copy's leak rises, its surviving mutants are kept as diffs and ``--strict`` fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench.__main__ import main
from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"
WEAKENED = ROOT / "fixtures" / "verifier" / "mobilebench__counter.yaml"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]


def _verify(files: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str]:
    code = main(["dataset", "check", *map(str, files), "--verify", "--strict", "--runtime", "docker", "--out", str(out),
                 "--json", str(out / "verify.json"), "--pytest-args=-k counter-1 --mb-cache-level=env"])  # fmt: skip
    return code, json.loads((out / "verify.json").read_text()), capsys.readouterr().out


def test_a_weakened_test_raises_the_leak_and_fails_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PYTEST_MOBILEBENCH_CACHE", str(tmp_path / "cache"))
    code, strong, text = _verify([EXAMPLES], tmp_path / "strong", capsys)
    (row,) = strong["instances"]
    assert code == 0, (text, [Path(r["log"]).read_text()[-3000:] for r in strong["runs"]])
    assert (row["instance_id"], row["status"], row["verifier_leak"], row["empty_resolves"]) == (
        "mobilebench__counter-1",
        "measured",
        0.0,
        False,
    )
    assert row["judged"] >= 2 and row["surviving"] == []

    code, weak, text = _verify([WEAKENED], tmp_path / "weak", capsys)
    (row,) = weak["instances"]
    assert code == 1, text
    assert (
        row["status"] == "measured" and row["weak"] and row["verifier_leak"] > strong["instances"][0]["verifier_leak"]
    )
    survivors = {m["after"].strip() for m in row["surviving"]}
    assert "this.value -= step;" in survivors  # a wrong fix the weakened tests accept
    for m in row["surviving"]:
        assert Path(m["diff"]).is_file() and Path(m["diff"]).read_text().startswith("diff --git")
    assert "WEAK" in text and "survives" in text and weak["distribution"]["weak"] == ["mobilebench__counter-1"]
