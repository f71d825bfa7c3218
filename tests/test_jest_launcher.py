"""The jest harness's launcher (issue 30, items 1 and 2): descriptors checked, never assumed; its status.

The launcher (``harness_js.launch_js``) is run with the host's ``node`` against a stand-in ``jest`` package
written here (its program prints what it was given and which harness modules were already loaded): the
launcher must start it in its own process with jest's arguments, the runner and reporter loaded before it
(so jest finds them loaded and never transforms them), and a signed channel; with a descriptor missing or
of another kind (a pipe nobody writes: what an old proxy's child process found on fd 4, where the old
channel code blocked forever) it must refuse at once, saying why, and never start jest. The status it
writes is read by :func:`~pytest_mobilebench.frameworks.react_native.harness.launch_problems` (pure).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.react_native import harness
from pytest_mobilebench.frameworks.react_native.harness_js import LAUNCH_REFUSED_EXIT
from pytest_mobilebench.runtime.base import Capability, RunResult
from fake_workspaces import FilesWorkspace

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="no node on the host")

#: the stand-in jest program: its arguments, the harness modules already loaded, one record on the channel
FAKE_JEST = """\
const loaded = Object.keys(require.cache).map((p) => require('path').basename(p)).sort();
const channel = Object.keys(require.cache).find((p) => p.endsWith('channel.js'));
require(channel).emit({ type: 'start' });
const env = process.argv.find((a) => a.startsWith('--testEnvironment='));
const environment = env ? require(env.slice('--testEnvironment='.length)) : null;
console.log(JSON.stringify({ argv: process.argv.slice(2), main: process.argv[1], loaded: loaded, environment }));
"""

#: a ``.bin/jest`` proxy: runs its program in a child process with stdio only (as some presets' launchers do)
PROXY = """\
const { spawn } = require('child_process');
const child = spawn(process.execPath, process.argv.slice(2), { stdio: 'inherit' });
child.on('exit', (code) => process.exit(code === null ? 1 : code));
"""


def _project(tmp: Path, environment: str | None = None) -> tuple[Path, Path]:
    """``(project folder with a stand-in jest and jest-circus, harness folder with the launcher's files)``."""
    project, folder = tmp / "project", tmp / "mb-harness"
    (project / "node_modules" / "jest" / "bin").mkdir(parents=True)
    (project / "node_modules" / "jest" / "package.json").write_text(
        json.dumps({"name": "jest", "bin": "./bin/jest.js"})
    )
    (project / "node_modules" / "jest" / "bin" / "jest.js").write_text(FAKE_JEST)
    (project / "node_modules" / "jest-circus").mkdir()
    (project / "node_modules" / "jest-circus" / "package.json").write_text('{"name": "jest-circus"}')
    (project / "node_modules" / "jest-circus" / "runner.js").write_text("module.exports = () => {};\n")
    (project / "proxy.js").write_text(PROXY)
    h = harness.prepare(
        "node_modules/.bin/jest --ci --runTestsByPath a.test.js", base=str(tmp), environment=environment
    )
    assert h is not None
    folder = Path(h.folder)
    for path, data in h.files.items():
        if path.startswith(h.folder):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_bytes(data)
    (tmp / "key").write_bytes(h.key)
    return project, folder


def _launch(tmp: Path, command: str) -> tuple[subprocess.CompletedProcess[str], bytes, bytes]:
    """Run ``command`` (``$L``: the launcher) with the harness's descriptors; ``(process, channel, status)``."""
    project, folder = tmp / "project", next(tmp.glob("mb-harness-*"))
    channel, status = tmp / "channel", tmp / "status"
    script = f"exec 3>>{channel} 4<{tmp / 'key'} 5>{status}; L={folder}/launch.js; {command}"
    proc = subprocess.run(["bash", "-c", script], cwd=project, capture_output=True, text=True, timeout=60)
    return proc, channel.read_bytes() if channel.exists() else b"", status.read_bytes() if status.exists() else b""


def _root_only() -> None:
    """The launcher wants root's files on fd 3-5 (the container's wrapper is root): skip as another user."""
    import os

    if os.geteuid() != 0:
        pytest.skip("the descriptors' files must be root's (the container's wrapper is root)")


@needs_node
def test_the_launcher_starts_the_projects_own_jest_in_its_process_with_the_harness_loaded(tmp_path: Path) -> None:
    _root_only()
    _project(tmp_path)
    proc, channel, status = _launch(tmp_path, "node $L --runInBand --ci x.test.js")
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["argv"] == ["--runInBand", "--ci", "x.test.js"] and seen["main"].endswith(
        "node_modules/jest/bin/jest.js"
    )
    # the harness's modules were loaded before jest's program: jest finds them loaded, never transforms them
    assert {"channel.js", "runner.js", "reporter.js", "launch.js"} <= set(seen["loaded"]), seen
    assert harness.launch_problems(status) == []
    assert json.loads(status)["cli"].endswith("node_modules/jest/bin/jest.js")
    key = (tmp_path / "key").read_bytes()
    assert [r["type"] for r in harness.read_channel(channel, key).records] == ["start"]


@needs_node
@pytest.mark.parametrize(
    ("descriptors", "named"),
    [
        ("4< <(sleep 30 2>/dev/null)", "descriptor 4 (key) is a pipe"),  # the old channel code blocked here forever
        ("4<&-", "descriptor 4 (key) is a special file"),  # closed: node's own epoll descriptor takes the number
        ("3>/dev/null", "descriptor 3 (channel) is a character device"),
    ],
)
def test_a_descriptor_of_another_kind_is_refused_at_once_never_read(
    tmp_path: Path, descriptors: str, named: str
) -> None:
    _root_only()
    _project(tmp_path)
    proc, channel, status = _launch(tmp_path, f"exec {descriptors}; node $L --ci")
    assert proc.returncode == LAUNCH_REFUSED_EXIT and named in proc.stderr, proc.stderr
    assert "argv" not in proc.stdout  # jest never started
    assert any(named in p for p in harness.launch_problems(status)) and channel == b""


@needs_node
def test_a_launcher_in_a_child_process_finds_no_descriptor_of_the_harness_and_refuses(tmp_path: Path) -> None:
    """What a proxy's child got: node's own descriptors (or none) where the harness's were. The launcher
    ends at once and writes no status, which names the harness, never the candidate."""
    _root_only()
    _project(tmp_path)
    proc, channel, status = _launch(tmp_path, "node proxy.js $L --ci")
    assert proc.returncode == LAUNCH_REFUSED_EXIT, (proc.returncode, proc.stderr)
    assert "not the harness's file" in proc.stderr or "is not open" in proc.stderr, proc.stderr
    assert status == b"" and channel == b""
    assert harness.launch_problems(status) and harness.launch_problems(None)


@needs_node
def test_a_project_without_jests_program_is_refused_before_anything_runs(tmp_path: Path) -> None:
    _root_only()
    project, _ = _project(tmp_path)
    shutil.rmtree(project / "node_modules" / "jest")
    proc, _, status = _launch(tmp_path, "node $L --ci")
    assert proc.returncode == LAUNCH_REFUSED_EXIT
    assert any("jest's own program cannot be resolved" in p for p in harness.launch_problems(status))


@needs_node
def test_jest_nested_under_the_proxys_package_is_found_from_bin_jest(tmp_path: Path) -> None:
    """npm may nest jest under the preset that depends on it: found from where ``.bin/jest`` points."""
    _root_only()
    project, _ = _project(tmp_path)
    preset = project / "node_modules" / "preset"
    (preset / "node_modules").mkdir(parents=True)
    (project / "node_modules" / "jest").rename(preset / "node_modules" / "jest")
    (preset / "bin").mkdir()
    (preset / "bin" / "jest.js").write_text(PROXY)
    (project / "node_modules" / ".bin").mkdir()
    (project / "node_modules" / ".bin" / "jest").symlink_to("../preset/bin/jest.js")
    proc, _, status = _launch(tmp_path, "node $L --ci")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(status)["cli"] == str(preset / "node_modules" / "jest" / "bin" / "jest.js")


@pytest.mark.parametrize(
    ("status", "problem"),
    [
        (None, "wrote no status"),
        (b"", "wrote no status"),
        (b"{not json", "not JSON"),
        (b"[]", "not a JSON object"),
        (b'{"ok": false, "problems": ["descriptor 4 (key) is a pipe"]}\n', "descriptor 4 (key) is a pipe"),
        (b'{"ok": false}', "refused to start jest"),
    ],
)
def test_launch_problems_reads_the_status_line(status: bytes | None, problem: str) -> None:
    found = harness.launch_problems(status)
    assert found and problem in found[0], found
    assert harness.launch_problems(b'{"ok": true, "problems": [], "cli": "/x/jest.js"}\n') == []


def _regraded(tmp: Path, status: bytes | None) -> dict:
    """``regrade`` of a harnessed jest run's evidence (real jest output, an empty channel) with ``status``."""
    import shutil as sh

    from pytest_mobilebench.suites.issue_resolution import regrade
    from pytest_mobilebench.suites.issue_resolution.judge import save_policy_inputs
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

    report = Path(__file__).parent.parent / "fixtures" / "logs" / "jest" / "jest-results.json"
    fix = "diff --git a/src/math.js b/src/math.js\n--- a/src/math.js\n+++ b/src/math.js\n@@ -1 +1 @@\n-a\n+b\n"
    passing = "src/__tests__/math.test.js::math > add > adds two numbers"
    instance = IssueInstance(
        instance_id="acme__math-1",
        repo="acme/math",
        base_commit="a" * 40,
        framework="react-native",
        patch=fix,
        test_patch="",
        FAIL_TO_PASS=(passing,),
    )
    folder = tmp / "e"
    folder.mkdir()
    (folder / "model_patch.diff").write_text(fix)
    (folder / "apply.json").write_text(json.dumps({"ok": True, "method": "git apply"}))
    files = {"package.json": b"{}"}
    save_policy_inputs(folder, before=files, after=files, ignored=[], plan_command="npx jest --json")
    plan = {"command": "npx jest", "result_globs": [".mobilebench/jest-results.json"], "parser": "jest", "modules": []}
    (folder / "run.json").write_text(
        json.dumps({"exit_code": 1, "timed_out": False, "plan": plan, "root_dir": "/tmp/jestproj"})
    )
    (folder / "test_output.log").write_text("")
    (folder / "results" / ".mobilebench").mkdir(parents=True)
    sh.copy(report, folder / "results" / ".mobilebench" / "jest-results.json")
    h = harness.prepare("node_modules/.bin/jest --runTestsByPath src/__tests__/math.test.js")
    assert h is not None
    (folder / "harness.json").write_text(json.dumps(h.to_dict()))
    (folder / "channel.jsonl").write_text("")
    if status is not None:
        (folder / "harness_status.json").write_bytes(status)
    return regrade(instance, folder)


def test_an_empty_channel_after_a_refused_launch_is_the_harness_never_the_candidate(tmp_path: Path) -> None:
    refused = _regraded(
        tmp_path, b'{"ok": false, "problems": ["descriptor 4 (key) is a pipe, not the harness\'s file"]}\n'
    )
    assert refused["reason"] == "infra_error", refused
    assert "runner_harness_failed" in refused["detail"] and "runner_compromised" not in refused["detail"]


def test_an_empty_channel_after_a_launch_that_started_jest_stays_the_candidates(tmp_path: Path) -> None:
    started = _regraded(tmp_path, b'{"ok": true, "problems": [], "cli": "/t/node_modules/jest/bin/jest.js"}\n')
    assert started["reason"] == "policy_violation" and "runner_compromised" in started["detail"], started


class _Workspace(FilesWorkspace):
    """A jest 29 project whose run comes back with the launcher's ``status`` (what ``run_with_channel`` copies out)."""

    def __init__(self, status: bytes | None) -> None:
        super().__init__(
            {
                "package.json": b'{"devDependencies": {"jest": "29.7.0"}}',
                "node_modules/jest/package.json": b'{"version": "29.7.0"}',
                "node_modules/jest-circus/package.json": b'{"version": "29.7.0"}',
                "__tests__/a.test.js": b"test('a', () => {});\n",
            },
            capabilities=frozenset({Capability.RESULT_CHANNEL}),
        )
        self.status = status

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        return []

    def run_with_channel(
        self, command: str, *, files: Mapping[str, bytes], key: bytes, timeout_s: float
    ) -> tuple[RunResult, bytes, bytes | None]:
        run = RunResult(command=command, exit_code=97, output="mobilebench harness: jest not started\n", duration_s=0.1)
        return run, b"", self.status


def _run_tests(tmp_path: Path, status: bytes | None) -> Exception | None:
    from types import SimpleNamespace

    from pytest_mobilebench.suites.issue_resolution.evaluation import EVALUATOR
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

    instance = IssueInstance(
        instance_id="acme__a-1",
        repo="acme/a",
        base_commit="a" * 40,
        framework="react-native",
        patch="",
        test_patch="",
        FAIL_TO_PASS=("__tests__/a.test.js::a",),
        test_targets=("__tests__/a.test.js",),
    )
    ctx = SimpleNamespace(evidence_dir=tmp_path, options={}, progress=lambda message: None)
    try:
        EVALUATOR._run_tests(_Workspace(status), instance, "", ctx, tag=".fix.1", apply=False)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


def test_a_refused_launch_is_a_named_harness_kind_in_grading_and_validation_alike(tmp_path: Path) -> None:
    """``_run_tests`` serves the graded run and each ``--mb-validate`` configuration: a launch the status refuses
    raises ``runner_harness_failed`` (infra: retried, never counted, never a dropped test), the reasons in it."""
    from pytest_mobilebench.runtime.base import InfraError

    refused = _run_tests(
        tmp_path, b'{"ok": false, "problems": ["descriptor 4 (key) is a pipe, not the harness\'s file"]}\n'
    )
    assert isinstance(refused, InfraError) and refused.kind == "runner_harness_failed", refused
    assert "descriptor 4 (key) is a pipe" in str(refused)
    assert (tmp_path / "harness_status.fix.1.json").read_text().startswith('{"ok": false')
    missing = _run_tests(tmp_path, None)
    assert (
        isinstance(missing, InfraError)
        and missing.kind == "runner_harness_failed"
        and "wrote no status" in str(missing)
    )


@needs_node
def test_a_test_environment_named_as_a_package_comes_from_the_installed_packages_by_the_harness_path(
    tmp_path: Path,
) -> None:
    """Issue 31 item 2: the repository names itself ``jest-environment-node`` with an ``exports`` map (jest's
    resolver would take that self-reference); the launcher resolves ``node`` from the installed packages only and
    gives jest its own ``environment.js`` by absolute path, whose exports are the installed environment's."""
    _root_only()
    project, folder = _project(tmp_path, environment="node")
    (project / "package.json").write_text(json.dumps({"name": "jest-environment-node", "exports": "./mbenv.js"}))
    (project / "mbenv.js").write_text("module.exports = { candidate: true };\n")
    installed = project / "node_modules" / "jest-environment-node"
    installed.mkdir()
    (installed / "package.json").write_text(json.dumps({"name": "jest-environment-node", "main": "index.js"}))
    (installed / "index.js").write_text("module.exports = { installed: true };\n")
    proc, _, status = _launch(tmp_path, "node $L --ci x.test.js")
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["argv"] == [f"--testEnvironment={folder}/environment.js", "--ci", "x.test.js"]
    assert seen["environment"] == {"installed": True}
    assert json.loads(status)["environment"] == str(installed / "index.js")
    # not installed: only the repository's own self-reference would answer; the launcher leaves it to jest
    shutil.rmtree(installed)
    proc, _, status = _launch(tmp_path, "node $L --ci x.test.js")
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["argv"] == ["--ci", "x.test.js"] and seen["environment"] is None
    assert json.loads(status)["environment"] is None and harness.launch_problems(status) == []
