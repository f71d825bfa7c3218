"""Names and content keys the runtime derives from text: a Docker name component, a length-prefixed sha256.
Ground floor of ``runtime/`` (the standard library only): the image builder, the install memo and the npm packs
all key their files and images with it."""

from __future__ import annotations

import hashlib
import re

__all__ = ["content_hash", "docker_name"]


def content_hash(*parts: str | bytes) -> str:
    """sha256 hex of the parts, each length-prefixed so that ``("ab", "c") != ("a", "bc")``."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


def docker_name(text: str, *, max_len: int = 100) -> str:
    r"""Lower-case ``text`` into a valid Docker repository path component.

    Docker's grammar: ``[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*``. ``"Owner/Repo"`` -> ``"owner__repo"``;
    other invalid characters, and separator runs the grammar forbids, become ``-``.

    Raises:
        ValueError: nothing valid is left (``text`` has no letter or digit).
    """
    name = re.sub(r"[^a-z0-9._-]+", "-", text.lower().replace("/", "__"))

    def separator(match: re.Match[str]) -> str:
        run = match.group(0)
        return run if run in {".", "_", "__"} or set(run) == {"-"} else "-"

    name = re.sub(r"[._-]+", separator, name).strip("._-")[:max_len].rstrip("._-")
    if not name:
        raise ValueError(f"cannot make a docker image name out of {text!r}")
    return name
