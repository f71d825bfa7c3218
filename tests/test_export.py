"""``python -m pytest_mobilebench export``: the task inputs of a selection for an external agent, never the answer
key."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "cases" / "examples"


def _export(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_mobilebench", "export", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _gold_texts() -> dict[str, list[str]]:
    """What an instance's exported line must never contain: its fix commit and its gold test ids."""
    import yaml

    doc = yaml.safe_load((EXAMPLES / "mobilebench__counter.yaml").read_text())
    return {
        inst["instance_id"]: [inst["fix_commit"], *inst.get("FAIL_TO_PASS", []), *inst.get("NONE_TO_PASS", [])]
        for inst in doc["instances"]
    }


@pytest.mark.e2e
def test_the_examples_export_one_line_per_instance_without_the_answer_key() -> None:
    done = _export(str(EXAMPLES))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["instance_id"] for r in rows] == ["mobilebench__counter-1", "mobilebench__counter-2"]
    first = rows[0]
    assert first["base_commit"] == "b89b12d8fb1e45fedad0506f553737d0d01cd34f" and first["repo"] == "mobilebench/counter"
    assert first["problem_statement"].startswith("Counter.increment() adds one too many")
    assert first["repo_url"].endswith("mobilebench+counter.bundle") and first["environment"]["node"] == "20.18.0"
    assert first["environment_image"] is None and "problem_statement" in first["prompt_fields"]
    for key in ("patch", "test_patch", "fix_commit", "FAIL_TO_PASS", "PASS_TO_PASS", "NONE_TO_PASS", "test_command"):
        assert all(key not in r for r in rows), key
    gold = _gold_texts()
    for line, row in zip(done.stdout.splitlines(), rows):
        for secret in gold[row["instance_id"]]:
            assert secret not in line, secret


@pytest.mark.e2e
def test_a_k_selection_goes_through_pytest_collection(tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    done = _export(str(EXAMPLES), "-k", "counter-2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["instance_id"] for line in out.read_text().splitlines()] == ["mobilebench__counter-2"]
    assert done.stdout == "" and "exported 1 instance(s)" in done.stderr


@pytest.mark.e2e
def test_a_selection_without_repository_tasks_says_so_and_exits_5() -> None:
    done = _export(str(ROOT / "cases" / "planner" / "clock.yaml"))
    assert done.returncode == 5 and done.stdout == ""
    assert "not exported:" in done.stderr and "planner: not a repository task" in done.stderr


@pytest.mark.e2e
def test_an_invalid_manifest_entry_is_named_not_exported(tmp_path: Path) -> None:
    text = (
        (EXAMPLES / "mobilebench__counter.yaml")
        .read_text()
        .replace("repo_url: ../../fixtures", f"repo_url: {ROOT}/fixtures")
    )
    (tmp_path / "m.yaml").write_text(text.replace("framework: react-native", "framwork: react-native"))
    done = _export(str(tmp_path / "m.yaml"), cwd=tmp_path)
    assert done.returncode == 5
    assert "not exported:" in done.stderr and "did you mean 'framework'" in done.stderr


@pytest.mark.e2e
@pytest.mark.docker
def test_the_environment_images_are_built_and_saved(tmp_path: Path) -> None:
    docker = pytest.importorskip("docker")
    try:
        docker.from_env(timeout=10).ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no Docker daemon: {exc}")
    done = _export(str(EXAMPLES), "-k", "counter-1", "--save", str(tmp_path / "images"))
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["environment_image"].startswith("mobilebench/inst.") and row["environment_image_id"].startswith(
        "sha256:"
    )
    (saved,) = (tmp_path / "images").glob("*.tar")
    with tarfile.open(saved) as tar:
        names = tar.getnames()
    assert "manifest.json" in names or "index.json" in names
