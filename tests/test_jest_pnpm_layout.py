"""The jest harness on a pnpm layout (issue 30, item 1): jest's packages are found as node finds them.

pnpm links only a package's direct dependencies into each ``node_modules``: at the project's root there is
``node_modules/jest`` (a link into ``node_modules/.pnpm``) and nothing else of jest's; ``jest-cli`` is beside
jest's real folder, ``jest-config`` beside jest-cli's, ``jest-circus`` beside jest-config's. The layout is
written here with the host's file system (links as pnpm makes them, stand-in packages) and read with the
host's ``node``: the harness's probe (``harness.probe_command``) must name the real files its runner choice
reads, :func:`jest_harness_for` must then wrap jest-circus (it ran unharnessed before), and the launcher must
start jest's program and find the runner there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from fake_workspaces import FilesWorkspace
from pytest_mobilebench.plan import TestPlan
from pytest_mobilebench.frameworks.react_native import harness
from pytest_mobilebench.runtime.base import Capability, RunResult
from pytest_mobilebench.suites.issue_resolution.attribution import jest_harness_for

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="no node on the host")

COMMAND = "node_modules/.bin/jest --ci --json --outputFile=/r/.mobilebench/jest-results.json --runTestsByPath a.test.js"
FAKE_JEST = "console.log(JSON.stringify({ main: process.argv[1], argv: process.argv.slice(2) }));\n"


def _package(store: Path, name: str, version: str, deps: Sequence[str] = (), **extra: object) -> Path:
    """``<store>/<name>@<version>/node_modules/<name>`` with a ``package.json``, and a link beside it for each
    dependency in ``deps`` (``name@version``), as pnpm lays a package out."""
    slot = store / f"{name.replace('/', '+')}@{version}" / "node_modules"
    folder = slot / name
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version, **extra}))
    for dep in deps:
        dep_name, dep_version = dep.rsplit("@", 1)
        link = slot / dep_name
        link.parent.mkdir(parents=True, exist_ok=True)
        target = store / f"{dep_name.replace('/', '+')}@{dep_version}" / "node_modules" / dep_name
        link.symlink_to(os.path.relpath(target, link.parent))
    return folder


def _pnpm_project(tmp: Path, *, preset: bool = False) -> Path:
    """A project whose one direct dev dependency is jest 29 (and a preset naming no runner), laid out by pnpm."""
    project = tmp / "project"
    store = project / "node_modules" / ".pnpm"
    jest = _package(store, "jest", "29.7.0", ["jest-cli@29.7.0", "@jest/core@29.7.0"], bin="./bin/jest.js")
    (jest / "bin").mkdir()
    (jest / "bin" / "jest.js").write_text(FAKE_JEST)
    _package(store, "jest-cli", "29.7.0", ["jest-config@29.7.0"], bin={"jest": "./bin/jest.js"})
    _package(store, "@jest/core", "29.7.0", ["jest-config@29.7.0"])
    _package(store, "jest-config", "29.7.0", ["jest-circus@29.7.0"])
    circus = _package(
        store, "jest-circus", "29.7.0", exports={"./package.json": "./package.json", "./runner": "./runner.js"}
    )
    (circus / "runner.js").write_text("module.exports = () => {};\n")
    (project / "node_modules" / "jest").symlink_to(".pnpm/jest@29.7.0/node_modules/jest")
    manifest: dict[str, object] = {"name": "app", "devDependencies": {"jest": "29.7.0"}}
    if preset:
        folder = _package(store, "some-preset", "1.0.0")
        (folder / "jest-preset.js").write_text("module.exports = { testRunner: 'jest-jasmine2' };\n")
        (project / "node_modules" / "some-preset").symlink_to(".pnpm/some-preset@1.0.0/node_modules/some-preset")
        manifest["jest"] = {"preset": "some-preset"}
    (project / "package.json").write_text(json.dumps(manifest))
    return project


class _HostWorkspace(FilesWorkspace):
    """A workspace over a host folder, as the Docker one answers: links never read, absolute patterns allowed;
    it declares a result channel (nothing is run through it here)."""

    def __init__(self, root: Path) -> None:
        super().__init__({}, capabilities=frozenset({Capability.RESULT_CHANNEL}))
        self.root = str(root)

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        found = {}
        for pattern in patterns:
            path = Path(pattern) if pattern.startswith("/") else Path(self.root) / pattern
            if any(p.is_symlink() for p in [path, *path.parents]) or not path.is_file():
                continue  # a link anywhere on the way is never followed
            found[pattern.lstrip("/") if pattern.startswith("/") else pattern] = path.read_bytes()
        return found

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        self.commands.append(command)
        proc = subprocess.run(
            ["bash", "-c", command], cwd=self.root, capture_output=True, text=True, timeout=timeout_s, check=False
        )
        return RunResult(command=command, exit_code=proc.returncode, output=proc.stdout + proc.stderr, duration_s=0.0)


def _plan() -> TestPlan:
    return TestPlan(COMMAND, ("/r/.mobilebench/jest-results.json",), "jest", ())


@needs_node
def test_the_probe_follows_pnpms_links_to_the_real_package_files(tmp_path: Path) -> None:
    project = _pnpm_project(tmp_path)
    ws = _HostWorkspace(project)
    files = ws.read_files(list(harness.RUNNER_PROBES))
    assert "node_modules/jest/package.json" not in files  # a link: never read where it is
    assert harness.jest_runner(files) is None  # what the harness saw before: unharnessed
    out = ws.run(harness.probe_command(files), timeout_s=60)
    paths = harness.resolved_probes(out.output, files, root=str(project))
    store = project / "node_modules" / ".pnpm"
    assert paths == {
        "node_modules/jest/package.json": str(store / "jest@29.7.0/node_modules/jest/package.json"),
        "node_modules/jest-config/package.json": str(
            store / "jest-config@29.7.0/node_modules/jest-config/package.json"
        ),
        "node_modules/jest-circus/package.json": str(
            store / "jest-circus@29.7.0/node_modules/jest-circus/package.json"
        ),
    }, out.output


@needs_node
def test_jest_harness_for_wraps_circus_on_a_pnpm_layout(tmp_path: Path) -> None:
    ws = _HostWorkspace(_pnpm_project(tmp_path))
    found = jest_harness_for(ws, _plan())  # type: ignore[arg-type]
    assert found is not None and found.runner == "circus"
    assert any(path.endswith("/resolve.js") for path in found.files)


@needs_node
def test_a_linked_presets_runner_is_read_from_its_real_folder(tmp_path: Path) -> None:
    """The preset (a link too) names jest-jasmine2, which is not installed: unharnessed, as on a hoisted tree."""
    project = _pnpm_project(tmp_path, preset=True)
    ws = _HostWorkspace(project)
    files = ws.read_files(list(harness.RUNNER_PROBES))
    out = ws.run(harness.probe_command(files), timeout_s=60)
    paths = harness.resolved_probes(out.output, files, root=str(project))
    assert paths["node_modules/some-preset/jest-preset.js"].endswith(
        ".pnpm/some-preset@1.0.0/node_modules/some-preset/jest-preset.js"
    )
    assert jest_harness_for(ws, _plan()) is None  # type: ignore[arg-type]


def test_resolved_probes_keeps_only_the_probes_real_files_under_the_root() -> None:
    output = "noise\n" + json.dumps(
        {
            "node_modules/jest/package.json": "/testbed/node_modules/.pnpm/jest@1/node_modules/jest/package.json",
            "node_modules/jest-circus/package.json": "/etc/passwd",  # outside the root
            "node_modules/jest-config/package.json": "/testbed/node_modules/../../etc/package.json",  # not normal
            "node_modules/jest-jasmine2/package.json": "/testbed/x/index.js",  # not the key's file
            "package.json": "/testbed/package.json",  # not an installed probe
        }
    )
    assert harness.resolved_probes(output, {}) == {
        "node_modules/jest/package.json": "/testbed/node_modules/.pnpm/jest@1/node_modules/jest/package.json"
    }
    assert harness.resolved_probes("not json\n{broken", {}) == {}


@needs_node
def test_the_launcher_starts_jest_and_finds_the_runner_through_pnpms_links(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the descriptors' files must be root's (the container's wrapper is root)")
    project = _pnpm_project(tmp_path)
    h = harness.prepare("node_modules/.bin/jest --ci --runTestsByPath a.test.js", base=str(tmp_path))
    assert h is not None
    for path, data in h.files.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(data)
    (tmp_path / "key").write_bytes(h.key)
    script = (
        f"exec 3>>{tmp_path / 'channel'} 4<{tmp_path / 'key'} 5>{tmp_path / 'status'}; node {h.folder}/launch.js --ci"
    )
    proc = subprocess.run(["bash", "-c", script], cwd=project, capture_output=True, text=True, timeout=60)
    status = (tmp_path / "status").read_bytes()
    assert proc.returncode == 0 and harness.launch_problems(status) == [], (proc.stderr, status)
    real = project / "node_modules" / ".pnpm" / "jest@29.7.0" / "node_modules" / "jest" / "bin" / "jest.js"
    assert json.loads(status)["cli"] == str(real)
    assert json.loads(proc.stdout.strip().splitlines()[-1])["main"] == str(real)
