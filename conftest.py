"""Repository defaults for running the bundled cases (``cases/``) and the tests from this checkout.

Offline mirrors: when ``MOBILEBENCH_MIRRORS`` names a folder of repository mirrors and neither
``--mb-repo-url-template`` nor ``MOBILEBENCH_REPO_URL_TEMPLATE`` is given, clones come from that folder. Two
layouts are recognised, per repository ``owner/name``: ``<owner>+<name>/repo`` (a bare git directory) and
``<owner>+<name>.git``. The template is chosen from the first repository found in the folder; a folder with
neither layout changes nothing. Tests that need one mirror read the same variable and skip without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DEFAULT_TEMPLATE = "https://github.com/{owner}/{name}"


def mirror_template(root: Path) -> str | None:
    """A ``file://`` clone-URL template for the mirrors under ``root``, or None when it holds none."""
    if not root.is_dir():
        return None
    for entry in sorted(root.iterdir()):
        if "+" not in entry.name:
            continue
        if (entry / "repo" / "HEAD").is_file():
            return f"file://{root.resolve()}/{{owner}}+{{name}}/repo"
        if entry.name.endswith(".git") and (entry / "HEAD").is_file():
            return f"file://{root.resolve()}/{{owner}}+{{name}}.git"
    return None


def pytest_configure(config: pytest.Config) -> None:
    mirrors = os.environ.get("MOBILEBENCH_MIRRORS")
    if (
        not mirrors
        or os.environ.get("MOBILEBENCH_REPO_URL_TEMPLATE")
        or not hasattr(config.option, "mb_repo_url_template")
    ):
        return
    if config.option.mb_repo_url_template != DEFAULT_TEMPLATE:
        return  # the command line or MOBILEBENCH_REPO_URL_TEMPLATE chose already
    template = mirror_template(Path(mirrors))
    if template is not None:
        config.option.mb_repo_url_template = template
