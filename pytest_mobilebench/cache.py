"""The harness's one cache folder (repository mirrors, image locks, root file systems, npm packs, scaffolds),
and what of a record identifies its content for the result cache."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["CLONE_SOURCE_FIELDS", "cache_root", "record_material"]

#: record fields that say where a repository is cloned FROM, never what it holds: the commits (``base_commit``,
#: ``fix_commit``: content hashes) and the patches identify the content, so the same commits fetched from a
#: mirror, a bundle or another checkout's path reuse the cached verdicts (``--mb-repo-url-template`` and
#: ``$MOBILEBENCH_MIRRORS`` are not keyed either)
CLONE_SOURCE_FIELDS: Final = frozenset({"repo_url"})


def record_material(record: Any) -> Any:
    """A record's result-cache key material: its JSON form (a pydantic model's ``model_dump``, a mapping as it
    is, else ``repr``) without :data:`CLONE_SOURCE_FIELDS`."""
    if hasattr(record, "model_dump"):
        data = record.model_dump(mode="json")
    elif isinstance(record, Mapping):
        data = dict(record)
    else:
        return repr(record)
    return {k: v for k, v in data.items() if k not in CLONE_SOURCE_FIELDS} if isinstance(data, dict) else data


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
