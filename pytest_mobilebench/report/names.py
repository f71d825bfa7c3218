"""Evidence folder names for model names and instance ids (issue 17, item 6; terminal text goes through
:func:`pytest_mobilebench.report.terminal.printable`).

:func:`folder_name` is collision-free and reversible (:func:`name_of`): ``[A-Za-z0-9_-]`` and ``.`` (not
first) stay, every other byte of the UTF-8 text becomes ``%xx`` (lower-case hex), ``%`` included; the
empty name is ``%``. So ``a/b`` -> ``a%2fb``, ``a b`` -> ``a%20b``, ``a:b`` -> ``a%3ab``, ``..`` -> ``%2e.``:
no name is ``.`` or ``..``, none holds a separator or a control character, two names never share a
folder. A name longer than :data:`MAX_ENCODED` encoded characters keeps its first characters and ends in
``~`` plus 32 hex digits of its SHA-256 (``~`` never appears otherwise): still distinct, no longer
reversible. Letters keep their case (folders are case-sensitive where the harness runs).
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

__all__ = ["MAX_ENCODED", "folder_name", "item_label", "name_of"]

#: longest encoded name kept whole (file systems allow 255 bytes per component)
MAX_ENCODED: Final[int] = 200
_KEEP: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def folder_name(name: str) -> str:
    """The folder for ``name`` (see the module docstring); never empty, ``.``, ``..`` or with ``/``."""
    data = name.encode("utf-8", "surrogatepass")
    out = "".join(chr(b) if b in _KEEP or (b == 0x2E and i > 0) else f"%{b:02x}" for i, b in enumerate(data)) or "%"
    if len(out) <= MAX_ENCODED:
        return out
    digest = hashlib.sha256(data).hexdigest()[:32]
    head = out[: MAX_ENCODED - 33]
    head = head[: head.rfind("%")] if "%" in head[-2:] else head  # never cut inside an escape
    return head + "~" + digest


def name_of(folder: str) -> str:
    """The name :func:`folder_name` encoded as ``folder``.

    Raises:
        ValueError: a shortened (``~``) or malformed folder name.
    """
    if folder == "%":
        return ""
    if "~" in folder or not re.fullmatch(r"(?:[A-Za-z0-9_.-]|%[0-9a-f]{2})+", folder):
        raise ValueError(f"{folder!r} is not a reversible evidence folder name")
    data = re.sub(rb"%([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), folder.encode("ascii"))
    return data.decode("utf-8", "surrogatepass")


def item_label(result: object) -> str:
    """A result's instance id as the run page shows it: ``<instance>[t<k>]`` for trial k of ``--mb-trials``."""
    get = getattr(result, "get", None)
    if get is None:
        return str(result)
    trial = get("trial")
    return str(get("instance_id")) + (f"[t{trial}]" if isinstance(trial, int) and not isinstance(trial, bool) else "")
