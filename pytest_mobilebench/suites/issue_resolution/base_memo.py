"""Reads of an instance's BASE tree, shared by the candidates of one process (issue 23, item 3).

Before a candidate's patch is applied, its workspace holds the instance image's files and nothing else:
the framework's configuration at base and git's ``ignored`` / ``tracked`` answers about the patch's names
are the same for every candidate on that image. They are kept here, in this process only, keyed by the
image id (content-addressed: another image, another key), never by the instance id, and only for a
workspace that says it is still the image's (``pristine_image_id``: nothing run or copied in yet; the
local runtime has none, so nothing is kept for it). Nothing read after a patch or a command is kept.

The first candidate's configuration read stays the double read of ``_read_base_config`` (a read that
raced the container's start once came back empty); an empty configuration is never kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

from pytest_mobilebench.runtime.base import Workspace

__all__ = ["MAX_IMAGES", "base_key", "config", "status"]

#: images whose base reads are kept (the oldest goes first)
MAX_IMAGES: Final[int] = 64

_LOCK = threading.Lock()
_CONFIG: OrderedDict[tuple[str, str], dict[str, bytes]] = OrderedDict()
_STATUS: OrderedDict[str, dict[str, tuple[bool, bool]]] = OrderedDict()


def base_key(ws: Workspace) -> str | None:
    """The workspace's image id while it holds nothing but the image's files, else None (nothing kept)."""
    key = ws.pristine_image_id
    return key if isinstance(key, str) and key else None


def _trim(table: OrderedDict) -> None:  # type: ignore[type-arg]
    while len(table) > MAX_IMAGES:
        table.popitem(last=False)


def config(key: str | None, framework: str, read: Callable[[], dict[str, bytes]]) -> dict[str, bytes]:
    """The framework's configuration files at base (``{path: bytes}``, a fresh dict): kept for ``key``
    (:func:`base_key`, taken before anything ran), else ``read()`` (kept when ``key`` and not empty)."""
    if key is not None:
        with _LOCK:
            if (key, framework) in _CONFIG:
                return dict(_CONFIG[(key, framework)])
    found = read()
    if key is not None and found:
        with _LOCK:
            _CONFIG[(key, framework)] = dict(found)
            _trim(_CONFIG)
    return found


def status(
    key: str | None, names: Sequence[str], compute: Callable[[list[str]], tuple[list[str], list[str]]]
) -> tuple[list[str], list[str]]:
    """``(ignored, tracked)`` of ``names`` at base, sorted (as :func:`.judge.base_status`): the names
    ``key`` has answers for are not asked again; ``compute(missing names)`` answers the rest."""
    wanted = sorted(set(names))
    if key is None:
        return compute(wanted) if wanted else ([], [])
    with _LOCK:
        known = dict(_STATUS.get(key, {}))
    missing = [n for n in wanted if n not in known]
    if missing:
        ignored, tracked = (set(found) for found in compute(missing))
        answers = {n: (n in ignored, n in tracked) for n in missing}
        known.update(answers)
        with _LOCK:
            _STATUS.setdefault(key, {}).update(answers)
            _STATUS.move_to_end(key)
            _trim(_STATUS)
    return [n for n in wanted if known[n][0]], [n for n in wanted if known[n][1]]
