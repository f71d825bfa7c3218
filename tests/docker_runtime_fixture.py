"""The Docker runtime's test fixture shared by ``tests/test_docker_runtime.py`` (workspaces) and
``tests/test_docker_runtime_images.py`` (image layers): a connected client (the module is skipped without a
daemon), a small git repository ``calc`` whose ``add()`` is wrong, and the ``make`` factory of runtimes and
workspace specs over it (each with its own run id and instance id, removed afterwards)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mobilebench.runtime.base import WorkspaceSpec

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from conftest import git
from docker_here import client_with_base_image_or_skip
from pytest_mobilebench.runtime.docker import DockerRuntime
from pytest_mobilebench.runtime.repos import RepoCache

HOST_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    """A connected client, or the whole module is skipped with the reason."""
    return client_with_base_image_or_skip()


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A test recipe with the fields the runtime uses (the real one comes from frameworks.recipe)."""

    dockerfile: str
    install_command: str = "mkdir -p deps && echo installed > deps/marker"
    context_files: dict[str, bytes] = dataclasses.field(default_factory=dict)
    context_packages: dict[str, str] = dataclasses.field(default_factory=dict)
    test_user: None = None  # tests run as root here (tests/test_trust_docker.py covers the test user)

    def key(self) -> str:
        return hashlib.sha256(
            json.dumps([self.dockerfile, self.install_command, sorted(self.context_files)]).encode()
        ).hexdigest()


ENV_DOCKERFILE = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo env-layer > /opt/env-marker\n"


@dataclasses.dataclass
class Fixture:
    runtime: DockerRuntime
    spec: WorkspaceSpec
    repo_dir: Path


def make_repo(root: Path) -> tuple[Path, str]:
    """``calc``: add() is wrong; test_calc.py tests it; .gitignore keeps Python caches out of diffs."""
    repo = root / "src" / "calc"
    (repo / "demo").mkdir(parents=True)
    (repo / "demo" / "__init__.py").write_text("")
    (repo / "demo" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text(
        "import unittest\nfrom demo.calc import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
    (repo / ".gitignore").write_text("__pycache__/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo, git(repo, "rev-parse", "HEAD")


@pytest.fixture
def make(client: docker.DockerClient, tmp_path: Path) -> Iterator:
    """Factory ``make(recipe=..., **runtime options) -> Fixture``; removes what it made afterwards."""
    repo, sha = make_repo(tmp_path)
    made: list[DockerRuntime] = []

    def factory(recipe: Recipe | None = None, instance_id: str | None = None, **options: object) -> Fixture:
        chosen = recipe or Recipe(ENV_DOCKERFILE)
        run_id = "test-" + uuid.uuid4().hex[:10]
        runtime = DockerRuntime(
            run_id=run_id,
            client=client,
            repos=RepoCache(tmp_path / "mirrors", f"{tmp_path}/src/{{name}}", run_id=run_id),
            recipe_factory=lambda _dir, _spec: chosen,
            node_packages=lambda _recipe: {},
            log_dir=tmp_path / "logs",
            **options,  # type: ignore[arg-type]
        )
        made.append(runtime)
        spec = WorkspaceSpec(
            instance_id=instance_id or f"Demo__calc-{uuid.uuid4().hex[:8]}",
            repo="demo/calc",
            base_commit=sha,
            repo_url=str(repo),
            run_id=run_id,
        )
        return Fixture(runtime, spec, repo)

    yield factory
    for runtime in made:
        runtime.cleanup("base")


FIX = (
    "diff --git a/demo/calc.py b/demo/calc.py\n--- a/demo/calc.py\n+++ b/demo/calc.py\n"
    "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
)


NEW_TEST = (
    "diff --git a/test_more.py b/test_more.py\nnew file mode 100644\n--- /dev/null\n+++ b/test_more.py\n"
    "@@ -0,0 +1,2 @@\n+import unittest\n+class M(unittest.TestCase):\n"
)


def own_env() -> Recipe:
    """A recipe whose environment layer no other test shares (a layer another test built can be removed by
    that test's clean-up while this one builds on it, under xdist)."""
    return Recipe(ENV_DOCKERFILE + f"RUN echo {uuid.uuid4().hex} > /opt/own\n")
