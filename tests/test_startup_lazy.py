"""Start-up and collection are lazy (issue 23): a pytest run without benchmark files imports no suite
implementation and none of the heavy libraries, the package is not assertion-rewritten even when pytest marks
it (as it does for a ``pytest11`` wheel), a suite's implementation comes with its first file, and the items of
one file share their fixture closure and marks. Each case is a real ``pytest`` subprocess; a ``conftest.py``
reports ``sys.modules`` at session end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: loaded first with ``-p``: marks the whole package for assertion rewriting, as pytest does for a wheel
MARKER_PLUGIN = """
def pytest_addhooks(pluginmanager):
    pluginmanager.rewrite_hook.mark_rewrite("pytest_mobilebench")
"""

#: writes which package modules (and heavy libraries) were imported, and which were rewritten
REPORTING_CONFTEST = """
import json, sys
from _pytest.assertion.rewrite import AssertionRewritingHook

def pytest_sessionfinish(session):
    mods = {n: m for n, m in list(sys.modules.items()) if m is not None}
    ours = sorted(n for n in mods if n.startswith("pytest_mobilebench"))
    rewritten = sorted(n for n in ours if isinstance(getattr(mods[n], "__loader__", None), AssertionRewritingHook))
    heavy = sorted(n for n in ("pydantic", "docker", "playwright", "matplotlib", "adbutils", "yaml", "filelock.asyncio")
                   if n in mods)
    others = sorted(n for n in mods if not n.startswith(("pytest_mobilebench", "__editable__")))
    items = [i for i in session.items if type(i).__name__ == "InstanceItem"]
    shared = len({id(i._fixtureinfo) for i in items}), len({id(i.own_markers[-1]) for i in items})
    with open("modules.json", "w") as fh:
        json.dump({"ours": ours, "rewritten": rewritten, "heavy": heavy, "items": len(items), "shared": shared,
                   "others": others}, fh)
"""

#: the package's modules a run without benchmark files may import (declarations only)
STARTUP_MODULES = {
    "pytest_mobilebench",
    "pytest_mobilebench.plugin",
    "pytest_mobilebench.hooks",
    "pytest_mobilebench.options",
    "pytest_mobilebench.state",
    "pytest_mobilebench.fixtures",
    "pytest_mobilebench.suites",
    "pytest_mobilebench.suites.base",
    "pytest_mobilebench.records",
    "pytest_mobilebench.suites.declared",
    # the run's files and the controller (stdlib only)
    "pytest_mobilebench.report",
    "pytest_mobilebench.files",
    "pytest_mobilebench.report.runs",
    "pytest_mobilebench.report.controller",
    # the runtime layer's option declarations (its converters import what they check when a value comes)
    "pytest_mobilebench.runtime",
    "pytest_mobilebench.runtime.base",
    "pytest_mobilebench.runtime.provider",
    "pytest_mobilebench.states",
    # the live agents' shared option declarations (stdlib only; the client and loop load when an agent runs)
    "pytest_mobilebench.agents",
    "pytest_mobilebench.agents.options",
}


def _run(folder: Path, *args: str, plugin: bool = True) -> dict[str, object]:
    (folder / "mb_mark_all.py").write_text(MARKER_PLUGIN)
    (folder / "conftest.py").write_text(REPORTING_CONFTEST)
    (folder / "pytest.ini").write_text("[pytest]\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    ours = ("-p", "mobilebench") if plugin else ()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "mb_mark_all",
            *ours,
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 5), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((folder / "modules.json").read_text())


def _startup_only(name: str) -> bool:
    return name in STARTUP_MODULES or name.startswith("pytest_mobilebench.suites.declared.")


@pytest.mark.e2e
def test_a_run_without_benchmark_files_imports_declarations_only(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert 1\n")
    found = _run(tmp_path)
    extra = [n for n in found["ours"] if not _startup_only(n)]
    assert not extra, f"imported at start-up: {extra}"
    assert not any(n.startswith("pytest_mobilebench.suites.issue_resolution") for n in found["ours"])
    assert found["heavy"] == [], found["heavy"]


@pytest.mark.e2e
def test_a_run_without_benchmark_files_imports_no_module_bare_pytest_does_not(tmp_path: Path) -> None:
    """Not a library (filelock, hashlib's OpenSSL binding, the Docker helpers' tarfile ...) beyond what pytest
    itself imports: option converters and rarely used helpers import theirs when called."""
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert 1\n")
    bare = set(_run(tmp_path, plugin=False)["others"])
    found = _run(tmp_path)
    assert found["ours"], "the plugin was not loaded"
    assert sorted(set(found["others"]) - bare) == []


@pytest.mark.e2e
def test_the_package_is_not_assertion_rewritten_even_when_pytest_marks_it(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert 1\n")
    found = _run(tmp_path)
    # only what the entry point imports before its first hook runs may have gone through the rewriter
    before_hooks = {
        "pytest_mobilebench",
        "pytest_mobilebench.plugin",
        "pytest_mobilebench.hooks",
        "pytest_mobilebench.options",
        "pytest_mobilebench.state",
        "pytest_mobilebench.suites",
        "pytest_mobilebench.suites.base",
        "pytest_mobilebench.records",
        "pytest_mobilebench.suites.declared",
        "pytest_mobilebench.agents",
        "pytest_mobilebench.agents.options",
    }
    rewritten = {n for n in found["rewritten"] if ".declared." not in n}
    assert rewritten <= before_hooks, sorted(rewritten - before_hooks)
    assert "pytest_mobilebench.fixtures" in found["ours"] and "pytest_mobilebench.fixtures" not in rewritten


@pytest.mark.e2e
def test_a_suite_is_imported_with_its_first_file_and_its_items_share_closure_and_marks(tmp_path: Path) -> None:
    first = min((ROOT / "cases" / "planner").glob("*.yaml"))
    (tmp_path / first.name).write_text(first.read_text(encoding="utf-8"), encoding="utf-8")
    found = _run(tmp_path, first.name)
    assert found["items"] > 1
    assert any(n.startswith("pytest_mobilebench.suites.planner") for n in found["ours"])
    assert not any(
        n.startswith(
            (
                "pytest_mobilebench.suites.issue_resolution",
                "pytest_mobilebench.suites.device_repair",
                "pytest_mobilebench.suites.app_generation",
            )
        )
        for n in found["ours"]
    )
    closures, _ = found["shared"]
    assert closures == 1  # one fixture closure for the file, as one parametrize shares one


#: the issue-resolution suite's evaluating half and what only it imports: never needed to collect a manifest
IR_EVALUATION_MODULES = (
    "pytest_mobilebench.suites.issue_resolution.evaluation",
    "pytest_mobilebench.suites.issue_resolution.judge",
    "pytest_mobilebench.suites.issue_resolution.attribution",
    "pytest_mobilebench.suites.issue_resolution.policy",
    "pytest_mobilebench.suites.issue_resolution.grading",
    "pytest_mobilebench.frameworks.react_native.harness",
    "pytest_mobilebench.parsers",
    "pytest_mobilebench.patch",
    "pytest_mobilebench.runtime.repos",
    "pytest_mobilebench.trust",
)


@pytest.mark.e2e
def test_collecting_an_issue_resolution_manifest_imports_its_loading_half_only(tmp_path: Path) -> None:
    """Issue 23: the records' loading (manifest models, framework registry, markers) comes with the file; the
    evaluating half (judge, attribution, policy, grading, the jest harness, every parser, unidiff) waits for
    the first item to run."""
    example = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"
    (tmp_path / example.name).write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    found = _run(tmp_path, example.name)
    assert found["items"] == 2
    assert "pytest_mobilebench.suites.issue_resolution.manifest" in found["ours"]
    assert [n for n in found["ours"] if n.startswith(IR_EVALUATION_MODULES)] == []
    assert "unidiff" not in found["others"]


@pytest.mark.e2e
@pytest.mark.parametrize("strict", [False, True])
def test_markers_computed_by_an_implementation_are_declared_before_its_items(tmp_path: Path, strict: bool) -> None:
    """The planner's dimension markers are not on its surface: they are declared when its first file comes,
    so ``--strict-markers`` accepts them and ``-m`` selects by them."""
    first = min((ROOT / "cases" / "planner").glob("*.yaml"))
    (tmp_path / first.name).write_text(first.read_text(encoding="utf-8"), encoding="utf-8")
    args = [first.name, "-m", "basic_tool_use or memory_usage or subagent_collaboration or skill_usage"]
    found = _run(tmp_path, *args, *(["--strict-markers"] if strict else []))
    assert found["items"] > 0


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--mb-docker-hosts=ftp://x"], {}, "scheme must be one of"),
        ([], {"MOBILEBENCH_DOCKER_HOSTS": "ftp://x"}, "$MOBILEBENCH_DOCKER_HOSTS='ftp://x' is not valid"),
        (["--mb-image-budget=12Q"], {}, "--mb-image-budget"),
    ],
    ids=["hosts-flag", "hosts-env", "budget-flag"],
)
def test_a_converter_imported_when_called_still_refuses_a_bad_value_as_a_usage_error(
    tmp_path: Path, args: list[str], env: dict[str, str], says: str
) -> None:
    """The runtime options' converters import their checks only when a value comes; a bad value is still
    pytest's usage error (exit status 4, no internal error), from the flag and from the environment."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "mobilebench", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            **env,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        },
        timeout=300,
        check=False,
    )
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert says in proc.stderr and "INTERNALERROR" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
