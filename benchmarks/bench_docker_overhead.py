"""Per-instance harness overhead of the Docker runtime versus a bare ``docker run``.

    python benchmarks/bench_docker_overhead.py [--repeat 5] [--test-seconds 30]

Both sides use the same instance image and the same test command, measured in the same run:

- harness: ``DockerRuntime.prepare`` (image checks: base, mirror, shallow checkout, recipe, env and
  instance tags; the in-process memo is cleared every time so the whole path is paid) + ``apply_patch``
  (model patch, then test patch) + ``run`` (the test command, offline) + ``read_files`` (the JUnit-style
  report) + ``diff`` + ``close``;
- bare: ``docker run --rm --network none <instance image> bash -c '<git apply both patches>; <test command>'``.

The test command is a small Python suite that writes a JUnit XML report and takes ``--test-seconds`` of
wall-clock time (a sleep, so that CPU contention from other work on the machine does not drown the
harness's own cost; real instances run Gradle / Flutter / Jest for tens of seconds to minutes). The fixed
cost of the harness is printed in seconds too, so the ratio can be rescaled to any test duration.
The two sides alternate which goes first in each round.
Prints the median of each side and ratio = harness / bare (target <= 1.10).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from pytest_mobilebench.runtime.base import WorkspaceSpec
from pytest_mobilebench.runtime.docker import DockerRuntime
from pytest_mobilebench.runtime.repos import RepoCache

__all__ = ["main"]

TEST_FILE = """import time, unittest
from demo.calc import add


class T(unittest.TestCase):
    def test_add(self):
        time.sleep({seconds})
        self.assertEqual(add(2, 3), 5)
"""
RUNNER = (
    "python3 -c \"import sys, unittest; r = unittest.main(module=None, argv=['x', 'discover', '-q'], "
    "exit=False).result; "
    "open('TEST-report.xml', 'w').write('<testsuite tests=\\\"%d\\\" failures=\\\"%d\\\"/>' % "
    '(r.testsRun, len(r.failures)))"'
)
MODEL_PATCH = (
    "diff --git a/demo/calc.py b/demo/calc.py\n--- a/demo/calc.py\n+++ b/demo/calc.py\n"
    "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
)
TEST_PATCH = (
    "diff --git a/test_extra.py b/test_extra.py\nnew file mode 100644\n--- /dev/null\n+++ b/test_extra.py\n"
    "@@ -0,0 +1,5 @@\n+import unittest\n+\n+class E(unittest.TestCase):\n+    def test_true(self):\n"
    "+        self.assertTrue(True)\n"
)


@dataclasses.dataclass(frozen=True)
class _Recipe:
    dockerfile: str = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"
    install_command: str = "true"
    context_files: dict[str, bytes] = dataclasses.field(default_factory=dict)
    context_packages: dict[str, str] = dataclasses.field(default_factory=dict)
    test_user: None = None

    def key(self) -> str:
        return hashlib.sha256(json.dumps([self.dockerfile, self.install_command]).encode()).hexdigest()


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x.invalid",
    }
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def _make_repo(root: Path, seconds: float) -> str:
    repo = root / "src" / "calc"
    (repo / "demo").mkdir(parents=True)
    (repo / "demo" / "__init__.py").write_text("")
    (repo / "demo" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text(TEST_FILE.format(seconds=seconds))
    (repo / ".gitignore").write_text("__pycache__/\nTEST-*.xml\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    return _git(repo, "rev-parse", "HEAD")


def main(argv: list[str] | None = None) -> float:
    """Run the benchmark; print the medians and the ratio; return the ratio (harness / bare)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--test-seconds", type=float, default=30.0)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-docker-") as tmp:
        root = Path(tmp)
        sha = _make_repo(root, args.test_seconds)
        run_id = "bench-" + uuid.uuid4().hex[:8]
        runtime = DockerRuntime(
            run_id=run_id,
            repos=RepoCache(root / "mirrors", f"{root}/src/{{name}}", run_id=run_id),
            recipe_factory=lambda _dir, _spec: _Recipe(),
            node_packages=lambda _recipe: {},
            log_dir=root / "logs",
        )
        spec = WorkspaceSpec("bench__calc-1", "bench/calc", sha, "", run_id=run_id)
        image = runtime.ensure_instance_image(spec)
        print(f"instance image {image.tag} ({'built' if image.built else 'reused'} in {image.seconds:.1f} s)")
        bare_script = (
            f"printf %s {shlex.quote(MODEL_PATCH)} | git apply - && printf %s {shlex.quote(TEST_PATCH)} | git "
            "apply - && "
            f"{RUNNER} && cat TEST-report.xml"
        )
        harness: list[float] = []
        bare: list[float] = []

        def through_harness() -> None:
            runtime._memo.clear()  # pay the full image-check path every time
            started = time.monotonic()
            ws = runtime.prepare(spec)
            try:
                assert ws.apply_patch(MODEL_PATCH, name="model_patch").ok
                assert ws.apply_patch(TEST_PATCH, name="test_patch").ok
                result = ws.run(RUNNER, timeout_s=600)
                report = ws.read_files(["**/TEST-*.xml"])
                ws.diff()
            finally:
                ws.close()
            harness.append(time.monotonic() - started)
            assert result.exit_code == 0, result.output
            assert report["TEST-report.xml"] == b'<testsuite tests="2" failures="0"/>', report

        def bare_run() -> None:
            started = time.monotonic()
            proc = subprocess.run(
                [
                    "docker",
                    "run",
                    "--rm",
                    "--network",
                    "none",
                    "-m",
                    "4g",
                    "--memory-swap",
                    "4g",
                    "-w",
                    "/testbed",
                    image.image_id,
                    "bash",
                    "-c",
                    bare_script,
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            bare.append(time.monotonic() - started)
            assert proc.returncode == 0 and 'tests="2" failures="0"' in proc.stdout, proc.stdout + proc.stderr

        for index in range(args.repeat):
            for side in (through_harness, bare_run) if index % 2 == 0 else (bare_run, through_harness):
                side()
            print(f"  round {index + 1}: harness {harness[-1]:.2f} s, bare docker run {bare[-1]:.2f} s")
        runtime.cleanup("env")
    h, b = statistics.median(harness), statistics.median(bare)
    ratio = h / b
    print(f"test command ~{args.test_seconds:.0f} s; medians over {args.repeat}: harness {h:.2f} s, bare {b:.2f} s")
    print(f"fixed harness overhead: {h - b:+.2f} s per instance")
    print(f"ratio harness / bare = {ratio:.3f} (target <= 1.10): {'OK' if ratio <= 1.10 else 'ABOVE TARGET'}")
    return ratio


if __name__ == "__main__":
    main(sys.argv[1:])
