"""Shared helpers of the plugin's own tests.

``make_pytest_repo`` builds a small git repository whose "test command" is a real runner (pytest
itself, writing JUnit XML where Gradle would), so the issue-resolution protocol can run end to end on
any machine with the local runtime: base commit, a fix commit that changes a test together with the
source it tests, and the expected gold lists.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ["pytester", "docker_cleanup"]

# The plugin imports PyYAML and pydantic only when a benchmark file is collected, matplotlib (numpy) only to
# draw a run page. An in-process pytester run drops every module first imported during it, and a C extension
# (libyaml's binding, pydantic-core, numpy) cannot be imported afresh: PyYAML's would build nodes of the dropped
# module's classes ("could not determine a constructor for the tag None" in the next run), numpy refuses
# ("cannot load module more than once per process"). Imported here, they outlive every pytester run.
import matplotlib.backends.backend_svg
import matplotlib.figure  # noqa: F401
import pydantic  # noqa: F401
import yaml  # noqa: F401
import yaml_rs  # noqa: F401  (a PyO3 module: the manifests' fast reading)

# property tests run beside Docker builds on 2 cores: a per-example deadline, or the health check that finds
# generation too slow, would fail them for the load alone; a failure prints the blob that replays it
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("mobilebench", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.load_profile("mobilebench")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}


def git(repo: Path, *args: str, date: str | None = None, strip: bool = True) -> str:
    """Run git in ``repo`` with a fixed identity and commit date (``date``, ISO 8601, instead of
    :data:`GIT_ENV`'s); return stdout, stripped unless ``strip=False`` (a diff keeps its final newline).
    Raises :class:`subprocess.CalledProcessError` on a non-zero exit."""
    env = {**os.environ, **GIT_ENV}
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    out = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout
    return out.strip() if strip else out


@dataclass
class PyRepo:
    """A repository made by :func:`make_pytest_repo`."""

    path: Path
    base: str
    fix: str
    test_command: str


def make_pytest_repo(root: Path) -> PyRepo:
    """``calc``: ``add`` is wrong at base; the fix corrects it and the test patch adds test_add.py.

    The tests sit in ``app/src/test/`` (an Android-style ``test/`` source set, so the framework rule
    puts them in the test patch). Gold lists (JUnit ids ``classname#name``):
      FAIL_TO_PASS: app.src.test.test_add#test_add_small, app.src.test.test_add#test_add_negative
      NONE_TO_PASS: app.src.test.test_mul#test_mul (imports calc.mul, which only the fix adds: the
                    module fails to import, pytest reports a collection error and no test case)
      PASS_TO_PASS: app.src.test.test_sub#test_sub
    """
    repo = root / "calc"
    tests = repo / "app" / "src" / "test"
    tests.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b + 1\n\n\ndef sub(a, b):\n    return a - b\n")
    (tests / "test_sub.py").write_text("from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n")
    (repo / ".gitignore").write_text("build/\n__pycache__/\n")
    (repo / "settings.gradle").write_text("rootProject.name = 'calc'\ninclude ':app'\n")
    (repo / "app" / "build.gradle").write_text("plugins {\n    id 'com.android.library'\n}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    (tests / "test_add.py").write_text(
        textwrap.dedent(
            """\
            from calc import add


            def test_add_small():
                assert add(1, 2) == 3


            def test_add_negative():
                assert add(-1, -2) == -3
            """
        )
    )
    (tests / "test_mul.py").write_text("from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fix add, add mul")
    fix = git(repo, "rev-parse", "HEAD")
    command = (
        f"PYTHONPATH=. {sys.executable} -m pytest -p no:cacheprovider -p no:mobilebench -p no:xdist -q "
        "--continue-on-collection-errors app/src/test "
        "--junitxml=app/build/test-results/testDebugUnitTest/TEST-calc.xml -o junit_family=xunit1"
    )
    return PyRepo(repo, base, fix, command)


@pytest.fixture
def mb_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The harness cache of one test: ``PYTEST_MOBILEBENCH_CACHE`` set to ``<tmp_path>/mbcache`` (result cache,
    repository mirrors, build logs), so no test reads or fills another's or the user's. Modules whose every
    test runs the harness use it with ``pytestmark = pytest.mark.usefixtures("mb_cache")``."""
    cache = tmp_path / "mbcache"
    monkeypatch.setenv("PYTEST_MOBILEBENCH_CACHE", str(cache))
    return cache


@pytest.fixture
def pyrepo(tmp_path: Path) -> PyRepo:
    """A fresh :func:`make_pytest_repo` in the test's temp folder."""
    return make_pytest_repo(tmp_path / "src")


def manifest_for(repo: PyRepo, *, extra: str = "", instance_extra: str = "") -> str:
    """An issue-resolution manifest for :class:`PyRepo` (framework android: JUnit XML results)."""
    return textwrap.dedent(
        f"""\
        suite: issue_resolution
        repo: acme/calc
        repo_url: {repo.path}
        framework: android
        test_command: "{repo.test_command}"
        {extra}
        instances:
          - instance_id: acme__calc-1
            base_commit: {repo.base}
            fix_commit: {repo.fix}
            FAIL_TO_PASS: ["app.src.test.test_add#test_add_small", "app.src.test.test_add#test_add_negative"]
            NONE_TO_PASS: ["app.src.test.test_mul#test_mul"]
            PASS_TO_PASS: ["app.src.test.test_sub#test_sub"]
            difficulty: easy
            category: bug_fix
            {instance_extra}
        """
    )
