"""The hunks of a patch, pure: numbered, one left out, and a fingerprint of what a fix changes. The audit's
adequacy check and the verifier's strength both drop one gold hunk at a time; mining reads them too."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import unidiff

__all__ = ["GoldHunk", "fix_fingerprint", "gold_hunks", "without_hunk"]


@dataclasses.dataclass(frozen=True)
class GoldHunk:
    """One hunk of a patch.

    Attributes:
        index: 0-based position among all hunks of the patch (file order, then hunk order).
        file: the file's path (target path; source path for deletions).
        header: the ``@@ -a,b +c,d @@ ...`` line.
        added: ``+`` lines; removed: ``-`` lines.
    """

    index: int
    file: str
    header: str
    added: int
    removed: int

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return dataclasses.asdict(self)


def _path(pf: unidiff.PatchedFile) -> str:
    return pf.source_file[2:] if pf.is_removed_file else pf.path


def gold_hunks(patch: str) -> list[GoldHunk]:
    """Every text hunk of ``patch`` (binary and mode-only changes have none).

    Raises:
        unidiff.UnidiffParseError: ``patch`` is not a unified diff.
    """
    out: list[GoldHunk] = []
    for pf in unidiff.PatchSet(patch):
        for hunk in pf:
            header = str(hunk).splitlines()[0]
            out.append(GoldHunk(len(out), _path(pf), header, hunk.added, hunk.removed))
    return out


def without_hunk(patch: str, index: int) -> str:
    """``patch`` with hunk ``index`` (as numbered by :func:`gold_hunks`) removed; a file left with no hunk
    is removed entirely. Later hunks of the same file keep their line numbers (``git apply`` finds them at
    the shifted offset).

    Raises:
        IndexError: no hunk ``index``.
    """
    patch_set = unidiff.PatchSet(patch)
    seen = 0
    for file_index, pf in enumerate(patch_set):
        if index < seen + len(pf):
            del pf[index - seen]
            if len(pf) == 0:
                del patch_set[file_index]
            return str(patch_set)
        seen += len(pf)
    raise IndexError(f"the patch has {seen} hunks, no hunk {index}")


def fix_fingerprint(patch: str) -> str:
    """A hash of what a fix changes, independent of line numbers, context and hunk order: per file path,
    the sorted added and removed lines with surrounding whitespace dropped. Two instances whose gold
    patches have the same fingerprint make the same change (a duplicate or a backport)."""
    parts: list[str] = []
    for pf in sorted(unidiff.PatchSet(patch), key=_path):
        added = sorted(line.value.strip() for hunk in pf for line in hunk if line.is_added)
        removed = sorted(line.value.strip() for hunk in pf for line in hunk if line.is_removed)
        parts.append("\x00".join([_path(pf), *("+" + a for a in added), *("-" + r for r in removed)]))
    return hashlib.sha256("\x01".join(parts).encode()).hexdigest()[:16]
