"""The harness's one cache folder: repository mirrors, image locks, root file systems, npm packs, scaffolds."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """``$PYTEST_MOBILEBENCH_CACHE`` when set, else ``$XDG_CACHE_HOME/pytest-mobilebench``, else
    ``~/.cache/pytest-mobilebench``. Created on first use."""
    explicit = os.environ.get("PYTEST_MOBILEBENCH_CACHE")
    if explicit:
        root = Path(explicit)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "pytest-mobilebench"
    root.mkdir(parents=True, exist_ok=True)
    return root
