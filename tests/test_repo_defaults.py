"""The repository's root conftest.py: offline mirrors named by MOBILEBENCH_MIRRORS become the clone source."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _root_conftest():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("mb_root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mirror_layouts_are_recognised(tmp_path: Path) -> None:
    conftest = _root_conftest()
    assert conftest.mirror_template(tmp_path / "absent") is None
    (tmp_path / "notes").mkdir()
    assert conftest.mirror_template(tmp_path) is None
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "acme+app.git")], check=True)
    assert conftest.mirror_template(tmp_path) == f"file://{tmp_path}/{{owner}}+{{name}}.git"
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "acme+aaa" / "repo")], check=True)
    assert conftest.mirror_template(tmp_path) == f"file://{tmp_path}/{{owner}}+{{name}}/repo"


def test_the_command_line_and_the_environment_win_over_the_mirrors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conftest = _root_conftest()
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "acme+app.git")], check=True)

    class Config:
        class option:  # noqa: N801 - mimics pytest's namespace
            mb_repo_url_template = conftest.DEFAULT_TEMPLATE

    monkeypatch.setenv("MOBILEBENCH_MIRRORS", str(tmp_path))
    conftest.pytest_configure(Config)
    assert Config.option.mb_repo_url_template.startswith("file://")
    Config.option.mb_repo_url_template = "file:///elsewhere/{owner}+{name}.git"
    conftest.pytest_configure(Config)
    assert Config.option.mb_repo_url_template == "file:///elsewhere/{owner}+{name}.git"
    Config.option.mb_repo_url_template = conftest.DEFAULT_TEMPLATE
    monkeypatch.setenv("MOBILEBENCH_REPO_URL_TEMPLATE", "file:///env/{owner}+{name}.git")
    conftest.pytest_configure(Config)
    assert Config.option.mb_repo_url_template == conftest.DEFAULT_TEMPLATE
