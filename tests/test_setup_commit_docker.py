"""An instance installed from its fix commit's install inputs (``environment_setup_commit``; issue 30), in Docker
with installs from the npm registry.

``fixtures/repos/make_setup_commit.py`` writes a repository whose fix adds ``left-pad`` to ``package.json`` and
requires it from the code the fix's test loads. The instance naming the fix as ``environment_setup_commit``:
the gold patch resolves and an empty patch is ``empty_patch``; the same fix installed at the base (no field, as
before): the gold patch cannot load the module its code requires and is not resolved. In both, the workspace is
the base (the candidate's patch to ``package.json`` applies) and nothing installs after the patch. Marked
``docker`` and ``e2e`` (a whole pytest run in a subprocess; the image builds reach the npm registry).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.states import Reason
from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers"),
]


def _fixture() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_setup_commit", ROOT / "fixtures" / "repos" / "make_setup_commit.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(made: Any, tmp_path: Path, *, own_install: bool) -> tuple[dict[tuple[str, str], dict[str, Any]], str, Path]:
    """``({(instance, model): result.json}, pytest's stdout, the reports folder)`` of every candidate on the
    fixture's instances."""
    manifest, patches, _ = made.build(tmp_path, timeout_s=600, own_install=own_install)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(made.predictions(patches))
    reports = tmp_path / "reports"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        str(manifest),
        "-p",
        "no:cacheprovider",
        "-q",
        "-p",
        "no:randomly",
        "--mb-runtime=docker",
        f"--mb-reports-dir={reports}",
        f"--predictions={preds}",
        "--mb-cache-level=instance",
    ]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=3000, env=dict(os.environ))
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for path in reports.glob("*/*/*/result.json"):
        result = json.loads(path.read_text())
        results[(result["instance_id"], result["model_name_or_path"])] = result
    return results, proc.stdout, reports


def test_gold_resolves_when_installed_from_the_fix_commits_inputs_and_not_at_the_base(tmp_path: Path) -> None:
    made = _fixture()
    results, stdout, _ = _run(made, tmp_path, own_install=False)
    expected = {(made.instance_id(n), m) for n in (1, 2) for m in ("gold", "empty")}
    assert set(results) == expected, stdout[-3000:]
    gold = results[(made.instance_id(1), "gold")]
    assert gold["reason"] == "resolved", (gold["reason"], gold.get("detail"), stdout[-3000:])
    assert results[(made.instance_id(1), "empty")]["reason"] == "empty_patch"
    at_base = results[(made.instance_id(2), "gold")]
    assert at_base["reason"] != "resolved" and at_base["retryable"] is False, (at_base["reason"], at_base.get("detail"))
    for result in results.values():
        reason = Reason(result["reason"])
        assert not reason.is_infra and not reason.is_unavailable, result


def test_an_instance_running_its_own_install_installs_the_fix_inputs_and_keeps_the_base_checkout(
    tmp_path: Path,
) -> None:
    """The shared layer fails (a postinstall reads the sources), so the instance installs over its checkout: the
    fix's install inputs written over the base for the install, the base's put back before the baseline (else
    the gold patch's change to ``package.json`` would not apply)."""
    made = _fixture()
    results, stdout, reports = _run(made, tmp_path, own_install=True)
    logs = {p.name: p.read_text(errors="replace") for p in reports.rglob("*.build.log")}
    own = [text for name, text in logs.items() if "inst.mobilebench__setup-commit-1" in name]
    assert own and "safe.directory" in own[0], sorted(logs)  # its own install, then the base put back
    gold = results[(made.instance_id(1), "gold")]
    assert gold["reason"] == "resolved", (gold["reason"], gold.get("detail"), stdout[-3000:])
    assert results[(made.instance_id(1), "empty")]["reason"] == "empty_patch"
    assert results[(made.instance_id(2), "gold")]["reason"] != "resolved"
