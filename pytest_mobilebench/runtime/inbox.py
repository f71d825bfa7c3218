"""What the harness copies into a container, as the tar archives the daemon extracts (``put_archive``):
input files (patches, scripts) and root-owned files (the result channel, canaries, the jest harness).

Every member is root's (uid and gid 0, as a fresh :class:`tarfile.TarInfo` says); the daemon extracts the
archive as root, so the container's test user can neither change nor replace what lands in the sticky
:data:`INBOX`.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
from collections.abc import Mapping
from typing import Final

__all__ = ["INBOX", "input_archive", "patch_input", "root_files_archive"]

#: where input files are put (the writable layer; ``put_archive`` does not reach tmpfs mounts)
INBOX: Final[str] = "/var/tmp"


def patch_input(patch: str, name: str) -> tuple[str, bytes]:
    """``(input name, bytes)`` of a patch a workspace copies in to apply it (a final newline added)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "patch"
    return f"{safe}.diff", (patch if patch.endswith("\n") else patch + "\n").encode("utf-8")


def input_archive(files: Mapping[str, bytes]) -> bytes:
    """A tar of ``{file name: bytes}`` (plain names, extracted into :data:`INBOX`), each root's, mode 0644."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for file_name, data in files.items():
            info = tarfile.TarInfo(file_name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return archive.getvalue()


def root_files_archive(files: Mapping[str, bytes], *, private: str) -> bytes:
    """A tar of ``{absolute path: bytes}`` (extracted at ``/``): ``private`` becomes a 0700 folder and its
    files 0600; the other files are 0644 and the new folders under :data:`INBOX` 0755 (an existing folder
    keeps its mode: only folders under the inbox are members)."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        folders = sorted({posixpath.dirname(p) for p in files if posixpath.dirname(p).startswith(INBOX + "/")})
        private = private or "\0"  # no private folder
        for folder in folders:
            info = tarfile.TarInfo(folder.lstrip("/"))
            info.type, info.mode = tarfile.DIRTYPE, 0o700 if folder == private else 0o755
            tar.addfile(info)
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode = len(data), 0o600 if path.startswith(private + "/") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return archive.getvalue()
