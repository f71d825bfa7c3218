"""The test environment the repository cannot name (issue 31, item 2), at the runner's layer, in Docker.

The policy already restores a root ``package.json`` whose module identity changed
(``tests/test_trust_jest_runner_identity.py``); here the candidate's patch is applied straight into the workspace of
the bundled counter example (``mobilebench__counter-1``), the policy out of the way, to show what the runner itself
does with it: the root ``package.json`` takes the name ``jest-environment-node`` and an ``exports`` map to the
candidate's class, which announces itself when loaded. Run as jest would resolve it (no harness environment), the
candidate's class is the test environment; through the harness's launcher, ``node`` is resolved from the installed
packages and passed as the harness's ``environment.js`` by absolute path: the candidate's class never loads. Marked
``docker`` (the image's install reaches the npm registry).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from docker_here import client_with_base_image_or_skip
from test_trust_jest_runner_identity import ENVIRONMENT

from pytest_mobilebench.frameworks import workspace_recipe
from pytest_mobilebench.frameworks.react_native import harness as jest_harness
from pytest_mobilebench.runtime.base import WorkspaceSpec
from pytest_mobilebench.runtime.docker import DockerRuntime
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.suites.issue_resolution.attribution import run_harnessed

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[1]
BASE = "b89b12d8fb1e45fedad0506f553737d0d01cd34f"  # mobilebench__counter-1
COMMAND = "node_modules/.bin/jest --ci --runTestsByPath __tests__/format.test.js"
#: printed by the candidate's environment when it loads
LOADED = "MB-CANDIDATE-ENVIRONMENT-LOADED"


def _patch() -> str:
    """The root package.json named ``jest-environment-node`` with an ``exports`` map to ``src/mbenv.js``, the
    candidate's environment (``tests/test_trust_jest_runner_identity.py``'s), announcing itself when loaded."""
    env = [f"process.stderr.write('{LOADED}\\n');", *ENVIRONMENT.splitlines()]
    body = "".join(f"+{line}\n" for line in env)
    return (
        "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n"
        '@@ -1,4 +1,5 @@\n {\n-  "name": "counter",\n+  "name": "jest-environment-node",\n'
        '+  "exports": { ".": "./src/mbenv.js", "./package.json": "./package.json" },\n'
        '   "version": "1.0.0",\n   "private": true,\n'
        "diff --git a/src/mbenv.js b/src/mbenv.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/mbenv.js\n"
        f"@@ -0,0 +1,{len(env)} @@\n{body}"
    )


#: on top of :func:`_patch`: the package named ``jest-environment-`` with an ``exports`` pattern, so jest's resolver,
#: which tries ``"jest-environment-" + value`` first, answers even an absolute path by self-reference
PREFIX = (
    "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n"
    '@@ -1,5 +1,5 @@\n {\n-  "name": "jest-environment-node",\n'
    '-  "exports": { ".": "./src/mbenv.js", "./package.json": "./package.json" },\n'
    '+  "name": "jest-environment-",\n+  "exports": { "./*": "./src/mbenv.js", "./package.json": "./package.json" },\n'
    '   "version": "1.0.0",\n   "private": true,\n'
)


def _run(ws: Any, evidence: Path, environment: str | None) -> tuple[str, dict[str, Any], list[str]]:
    """``(console output, launcher status, the harness's findings)`` of the harnessed jest run with
    ``environment``."""
    harness = jest_harness.prepare(COMMAND, runner="circus", environment=environment)
    assert harness is not None
    evidence.mkdir()
    run, refused = run_harnessed(ws, harness, evidence, tag="", timeout_s=300)
    assert refused is None, (refused, run.output[-2000:])
    channel = (evidence / "channel.jsonl").read_bytes()
    found = jest_harness.findings(harness.to_dict(), channel, {}, run.output)
    return run.output, json.loads((evidence / "harness_status.json").read_text()), found


def test_a_runner_package_named_by_the_repository_is_never_loaded_as_the_environment(tmp_path: Path) -> None:
    client = client_with_base_image_or_skip()
    run_id = "envid-" + uuid.uuid4().hex[:10]
    runtime = DockerRuntime(
        run_id=run_id,
        client=client,
        repos=RepoCache(tmp_path / "mirrors", "{name}", run_id=run_id),
        recipe_factory=workspace_recipe,
        log_dir=tmp_path / "logs",
    )
    spec = WorkspaceSpec(
        f"envid__counter-{uuid.uuid4().hex[:8]}",
        "mobilebench/counter",
        BASE,
        str(ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"),
        environment={
            "framework": "react-native",
            "node": "20.18.0",
            "package_manager": "npm",
            "install": "npm ci --no-audit --no-fund",
        },  # fmt: skip
        run_id=run_id,
    )
    ws = runtime.prepare(spec)
    try:
        assert ws.apply_patch(_patch(), name="model_patch").ok
        files = ws.read_files(list(jest_harness.RUNNER_PROBES))
        assert jest_harness.jest_environment(files) == "node"
        as_jest_resolves, status, _ = _run(ws, tmp_path / "plain", None)
        assert LOADED in as_jest_resolves and status["environment"] is None  # the attack is live at this layer
        harnessed, status, _ = _run(ws, tmp_path / "harnessed", "node")
        assert LOADED not in harnessed, harnessed[-3000:]
        assert status["environment"].endswith("/node_modules/jest-environment-node/build/index.js"), status
        # the prefix variant answers the harness's absolute path too: each test is given the harness's own
        assert ws.apply_patch(PREFIX, name="prefix_patch").ok
        prefixed, status, found = _run(ws, tmp_path / "prefixed", "node")
        assert LOADED not in prefixed, prefixed[-3000:]
        assert any("jest resolved the test environment to /testbed/src/mbenv.js" in f for f in found), found
    finally:
        ws.close()
        runtime.cleanup("base")
