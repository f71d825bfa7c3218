"""Reading unified diffs: which files a patch touches, how, and what kind of files they are.

Pure functions over patch text; nothing here applies a patch. The harness applies patches with
``git apply`` / ``patch -p1`` (:mod:`pytest_mobilebench.runtime.patching`), so paths are read the same
way: the first component of every ``diff --git`` / ``---`` / ``+++`` path is the ``a/`` / ``b/`` prefix
and is dropped (``-p1``); ``rename from`` / ``copy from`` lines carry bare paths.

A patch is cut into *file sections*. A section starts at a ``diff --git`` line, or, in a plain unified
diff, at a ``---`` line directly followed by a ``+++`` line (a preceding ``diff ...`` command line is
kept with it), or at a standalone ``Binary files X and Y differ`` line. Hunks are walked by their line
counts, so a removed line that reads ``--- x`` is never mistaken for a header. Lines between sections
that are not part of any header or hunk (a ``format-patch`` signature, an agent's trailing prose) are
tolerated, as ``git apply`` tolerates them, and stay with the section they follow; text before the first
section (a ``format-patch`` e-mail header) is dropped by :func:`split_patch` and :func:`filter_patch`.
Hunk lines are counted with ``unidiff``.

Rules and sources:

* test-file identification: MobileDev-Bench (seed 000) Appendix A.2; SPEC section 1 "Test-file identification";
* artifact taxonomy: :mod:`pytest_mobilebench.artifacts`;
* ``patch`` / ``test_patch`` split of a fix commit: SWE-bench vocabulary, SPEC section 1 "Instance fields".
"""

from __future__ import annotations

import dataclasses
import enum
import posixpath
import re
from collections.abc import Callable, Iterable
from typing import Any, Final, final

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from pytest_mobilebench.artifacts import Artifact, artifact_type

__all__ = [
    "ChangeStatus",
    "FileChange",
    "PatchError",
    "PatchInfo",
    "filter_patch",
    "parse_patch",
    "select_sections",
    "split_patch",
]

_DEV_NULL: Final = "/dev/null"


# ------------------------------------------------------------------------------------------------ errors


class PatchError(ValueError):
    """A patch text is not a usable unified diff.

    The message starts with the patch's ``name`` and names the 1-based line and/or the path at fault,
    e.g. ``model_patch: line 7: path '../outside/x.kt' escapes the repository``.

    Attributes:
        name: the label given to :func:`parse_patch` (``"patch"``, ``"model_patch"`` ...).
        line: 1-based line in the patch text, when known.
        path: the offending path, when the error is about one.
        reason: the bare description, without name and line.
    """

    def __init__(self, name: str, reason: str, *, line: int | None = None, path: str | None = None) -> None:
        self.name = name
        self.line = line
        self.path = path
        self.reason = reason
        where = name + (f": line {line}" if line is not None else "")
        super().__init__(f"{where}: {reason}")


# ------------------------------------------------------------------------------------------------ results


@enum.unique
class ChangeStatus(str, enum.Enum):
    """How a patch changes one file.

    ``COPIED`` (git's ``copy from`` / ``copy to``) creates ``path`` from ``old_path`` and leaves
    ``old_path`` untouched; ``RENAMED`` moves it (with or without content changes).
    """

    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"


@final
@dataclasses.dataclass(frozen=True)
class FileChange:
    """One file section of a patch.

    Attributes:
        path: repository-relative path after the change (for a deletion: the deleted path).
        old_path: path before the change; ``None`` for an added file; equals ``path`` unless renamed/copied.
        status: see :class:`ChangeStatus`.
        added: ``+`` lines over all hunks (0 for binary files).
        removed: ``-`` lines over all hunks.
        hunks: number of ``@@`` hunks.
        binary: ``GIT binary patch`` or ``Binary files ... differ`` (the content change is not counted).
        artifact: :func:`artifact_type` of ``path``.
        line: 1-based line of the section's first line in the patch text.
        added_lines, removed_lines: the text of the ``+`` / ``-`` lines of its hunks, as unidiff parsed
            them (what the policy reads; never in :meth:`to_dict`).
        symlink_target: the target of a symbolic link the section creates or changes (git mode 120000).
    """

    path: str
    old_path: str | None
    status: ChangeStatus
    added: int
    removed: int
    hunks: int
    binary: bool
    artifact: Artifact
    line: int = 0
    added_lines: tuple[str, ...] = dataclasses.field(default=(), repr=False, compare=False)
    removed_lines: tuple[str, ...] = dataclasses.field(default=(), repr=False, compare=False)
    symlink_target: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        """Every name the section touches: ``old_path`` (renames, copies, and plain diffs whose ``---`` and
        ``+++`` differ, where GNU ``patch`` may edit the old name) and ``path``, unique, in that order."""
        return tuple(dict.fromkeys(p for p in (self.old_path, self.path) if p))

    @property
    def names_differ(self) -> bool:
        """``---`` and ``+++`` name different files without a git rename or copy header: only ``git apply``
        reads such a section one way (the new name); GNU ``patch`` picks whichever exists."""
        return self.status is ChangeStatus.MODIFIED and self.old_path is not None and self.old_path != self.path

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (enums as their string values; hunk line texts left out)."""
        data = dataclasses.asdict(self)
        del data["added_lines"], data["removed_lines"]
        data["status"] = self.status.value
        data["artifact"] = self.artifact.value
        return data


@final
@dataclasses.dataclass(frozen=True)
class PatchInfo:
    """What a patch touches. ``files`` keeps the patch's order.

    An empty or whitespace-only patch text gives ``files == ()``; callers decide what that means
    (``Reason.EMPTY_PATCH`` for a candidate).
    """

    name: str
    files: tuple[FileChange, ...]

    @property
    def is_empty(self) -> bool:
        """True when the patch touches no file."""
        return not self.files

    @property
    def paths(self) -> tuple[str, ...]:
        """Every name the patch touches (:attr:`FileChange.paths`), sorted and unique."""
        return tuple(sorted({p for f in self.files for p in f.paths}))

    @property
    def lines_changed(self) -> int:
        """Added plus removed lines over all files (binary content counts 0)."""
        return sum(f.added + f.removed for f in self.files)

    @property
    def binary_files(self) -> tuple[str, ...]:
        """Paths of binary changes, sorted."""
        return tuple(sorted(f.path for f in self.files if f.binary))

    @property
    def artifacts(self) -> frozenset[Artifact]:
        """Artifact types of the changed files; two or more make a multi-artifact fix (SPEC section 1)."""
        return frozenset(f.artifact for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins for evidence files and reports."""
        return {
            "name": self.name,
            "files": [f.to_dict() for f in self.files],
            "paths": list(self.paths),
            "lines_changed": self.lines_changed,
            "binary_files": list(self.binary_files),
            "artifacts": sorted(a.value for a in self.artifacts),
        }


# ------------------------------------------------------------------------------------------------ scanning

_HUNK_RE: Final = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BINARY_RE: Final = re.compile(r"^Binary files (.+) and (.+) differ$")
_C_ESCAPES: Final = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclasses.dataclass
class _Section:
    start: int  # index of the first line
    git: bool
    header_done: bool = False  # a git section's extended header ended (hunk or binary data seen)
    minus: tuple[str, int] | None = None  # raw '---' path and its line index
    plus: tuple[str, int] | None = None
    binary: bool = False
    binary_paths: tuple[str, str] | None = None
    hunks: int = 0
    keywords: dict[str, tuple[str, int]] = dataclasses.field(default_factory=dict)
    end: int = 0  # exclusive


def _split_lines(text: str) -> list[str]:
    """Lines with their endings; only ``\\n`` ends a line (unlike ``str.splitlines``)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _bare(line: str) -> str:
    """A line without its ``\\n`` / ``\\r\\n`` ending."""
    line = line.removesuffix("\n")
    line = line.removesuffix("\r")
    return line


def _unquote(name: str, quoted: str, line: int) -> str:
    """Decode a git C-style quoted path (``"a/\\303\\251.kt"``) to text."""
    body = quoted[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _C_ESCAPES:
            out.append(_C_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            raise PatchError(name, f"bad escape in quoted path {quoted}", line=line)
    return out.decode("utf-8", errors="surrogateescape")


def _header_path(name: str, raw: str, line: int) -> str:
    """The path of a ``---`` / ``+++`` line's remainder: unquoted, without a tab-separated timestamp."""
    raw = raw.strip(" ")
    if raw.startswith('"'):
        m = re.match(r'"(?:[^"\\]|\\.)*"', raw)
        if not m:
            raise PatchError(name, f"unterminated quoted path {raw!r}", line=line)
        return _unquote(name, m.group(0), line)
    return raw.split("\t", 1)[0].rstrip(" ")


def _git_header_paths(name: str, rest: str, line: int) -> tuple[str, str]:
    """Split the remainder of a ``diff --git`` line into its two (still prefixed) paths.

    Quoted names are decoded. Two unquoted names are split in the middle when both halves name the same
    path after their prefix (``a/x y b/x y``), else before `` b/``, else at the first space.
    """

    def quoted(s: str) -> tuple[str, str]:
        m = re.match(r'"(?:[^"\\]|\\.)*"', s)
        if not m:
            raise PatchError(name, f"unterminated quoted path in 'diff --git {rest}'", line=line)
        return _unquote(name, m.group(0), line), s[m.end() :].lstrip(" ")

    if rest.startswith('"'):
        first, remainder = quoted(rest)
        second = quoted(remainder)[0] if remainder.startswith('"') else remainder
    elif ' "' in rest:
        idx = rest.index(' "')
        first, second = rest[:idx], quoted(rest[idx + 1 :])[0]
    else:
        half = len(rest) // 2
        if (
            len(rest) % 2 == 1
            and rest[half] == " "
            and rest[:half].partition("/")[2] == rest[half + 1 :].partition("/")[2]
        ):
            first, second = rest[:half], rest[half + 1 :]
        elif rest.find(" b/") > 0:
            idx = rest.find(" b/")
            first, second = rest[:idx], rest[idx + 1 :]
        else:
            first, _, second = rest.partition(" ")
    if not first or not second:
        raise PatchError(name, f"cannot read two paths from 'diff --git {rest}'", line=line)
    return first, second


def _scan(name: str, lines: list[str]) -> tuple[list[_Section], int]:
    """Cut ``lines`` into file sections. Returns the sections and the index where the first one starts."""
    sections: list[_Section] = []
    cur: _Section | None = None
    i = 0
    n = len(lines)

    def start(section: _Section) -> _Section:
        if sections:
            sections[-1].end = section.start
        sections.append(section)
        return section

    while i < n:
        line = _bare(lines[i])
        nxt = _bare(lines[i + 1]) if i + 1 < n else None
        if line.startswith("diff --git "):
            cur = start(_Section(start=i, git=True))
            i += 1
            continue
        if line.startswith("--- ") and nxt is not None and nxt.startswith("+++ "):
            if cur is not None and cur.git and not cur.header_done and cur.minus is None:
                cur.minus = (line[4:], i)
                cur.plus = (nxt[4:], i + 1)
            else:
                begin = i
                if i > 0 and _bare(lines[i - 1]).startswith("diff "):
                    # a GNU "diff -ru a/x b/x" command line (never a header or hunk line) goes with its file
                    begin = i - 1
                cur = start(_Section(start=begin, git=False))
                cur.minus = (line[4:], i)
                cur.plus = (nxt[4:], i + 1)
            i += 2
            continue
        if line.startswith("@@"):
            if cur is None or cur.minus is None:
                raise PatchError(name, f"hunk header without a '---'/'+++' file header: {line!r}", line=i + 1)
            m = _HUNK_RE.match(line)
            if not m:
                raise PatchError(name, f"malformed hunk header {line!r}", line=i + 1)
            cur.header_done = True
            cur.hunks += 1
            old = int(m.group(2)) if m.group(2) is not None else 1
            new = int(m.group(4)) if m.group(4) is not None else 1
            i += 1
            while old > 0 or new > 0:
                if i >= n:
                    raise PatchError(
                        name,
                        f"hunk {line!r} is truncated: the patch ends {old} old / {new} new lines early",
                        line=n,
                    )
                body = _bare(lines[i])
                tag = body[:1]
                if tag == " " or body == "":
                    old -= 1
                    new -= 1
                elif tag == "-":
                    old -= 1
                elif tag == "+":
                    new -= 1
                elif tag == "\\":
                    pass
                else:
                    raise PatchError(
                        name,
                        f"line {body!r} inside hunk {line!r} is not a context, '+', '-' or '\\' line",
                        line=i + 1,
                    )
                if old < 0 or new < 0:
                    raise PatchError(name, f"hunk {line!r} has more lines than its header counts", line=i + 1)
                i += 1
            if i < n and _bare(lines[i]).startswith("\\"):
                i += 1  # "\ No newline at end of file" after the last line of the hunk
            continue
        m_bin = _BINARY_RE.match(line)
        if m_bin and not (cur is not None and cur.git and not cur.header_done):
            cur = start(_Section(start=i, git=False, binary=True, binary_paths=(m_bin.group(1), m_bin.group(2))))
            cur.header_done = True
            i += 1
            continue
        if cur is not None and cur.git and not cur.header_done:
            if line == "GIT binary patch" or m_bin:
                cur.binary = True
                cur.header_done = True
                if m_bin:
                    cur.binary_paths = (m_bin.group(1), m_bin.group(2))
            else:
                for key in (
                    "old mode ", "new mode ", "deleted file mode ", "new file mode ", "rename from ",
                    "rename to ", "copy from ", "copy to ", "similarity index ", "dissimilarity index ",
                    "index ", "rename old ", "rename new ",
                ):  # fmt: skip
                    if line.startswith(key):
                        cur.keywords[key.strip()] = (line[len(key) :], i)
                        break
        i += 1
    if sections:
        sections[-1].end = n
    return sections, (sections[0].start if sections else n)


def _strip_p1(name: str, raw: str, line: int) -> str:
    """Repository-relative path of a prefixed header path, as ``git apply -p1`` reads it; validated."""
    _check_raw(name, raw, line)
    stripped = raw.split("/", 1)[1] if "/" in raw else raw
    return _clean(name, stripped, line, raw)


def _check_raw(name: str, raw: str, line: int) -> None:
    if raw.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", raw):
        raise PatchError(name, f"absolute path {raw!r} (paths must be relative to the repository)", line=line, path=raw)
    if _escapes(raw):
        raise PatchError(name, f"path {raw!r} escapes the repository", line=line, path=raw)


def _escapes(path: str) -> bool:
    depth = 0
    for part in path.replace("\\", "/").split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def _clean(name: str, path: str, line: int, raw: str | None = None) -> str:
    shown = raw if raw is not None else path
    if not path or path in (".", "/"):
        raise PatchError(name, f"empty path in header ({shown!r})", line=line, path=shown)
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
        raise PatchError(name, f"absolute path {shown!r} (paths must be relative to the repository)", line=line,
                         path=shown)  # fmt: skip
    if _escapes(path):
        raise PatchError(name, f"path {shown!r} escapes the repository", line=line, path=shown)
    return posixpath.normpath(path.replace("\\", "/"))


def _section_change(name: str, lines: list[str], sec: _Section) -> FileChange:
    """Paths, status and counts of one section."""
    first = sec.start + 1
    old: str | None = None
    new: str | None = None
    if sec.minus is not None and sec.plus is not None:
        raw_old = _header_path(name, sec.minus[0], sec.minus[1] + 1)
        raw_new = _header_path(name, sec.plus[0], sec.plus[1] + 1)
        old = None if raw_old == _DEV_NULL else _strip_p1(name, raw_old, sec.minus[1] + 1)
        new = None if raw_new == _DEV_NULL else _strip_p1(name, raw_new, sec.plus[1] + 1)
        if old is None and new is None:
            raise PatchError(name, "both '---' and '+++' are /dev/null", line=sec.minus[1] + 1)
    elif sec.binary_paths is not None and not sec.git:
        raw_old, raw_new = (_header_path(name, p, first) for p in sec.binary_paths)
        old = None if raw_old == _DEV_NULL else _strip_p1(name, raw_old, first)
        new = None if raw_new == _DEV_NULL else _strip_p1(name, raw_new, first)
    kw = sec.keywords
    if sec.git:
        git_line = _bare(lines[sec.start])
        raw_a, raw_b = _git_header_paths(name, git_line[len("diff --git ") :], first)
        a = _strip_p1(name, raw_a, first)
        b = _strip_p1(name, raw_b, first)
        moved_from = kw.get("rename from") or kw.get("copy from") or kw.get("rename old")
        moved_to = kw.get("rename to") or kw.get("copy to") or kw.get("rename new")
        if moved_from is not None:
            old = _clean(name, _header_path(name, moved_from[0], moved_from[1] + 1), moved_from[1] + 1)
        if moved_to is not None:
            new = _clean(name, _header_path(name, moved_to[0], moved_to[1] + 1), moved_to[1] + 1)
        if sec.minus is None:
            if "new file mode" in kw:
                old, new = None, new or b
            elif "deleted file mode" in kw:
                old, new = old or a, None
            else:
                old, new = old or a, new or b
        if not (
            sec.hunks
            or sec.binary
            or moved_from
            or moved_to
            or "old mode" in kw
            or "new mode" in kw
            or "new file mode" in kw
            or "deleted file mode" in kw
        ):
            if sec.minus is not None:
                raise PatchError(name, f"file header for {new or old!r} has no hunks", line=first)
            raise PatchError(name, f"'diff --git' section for {b!r} changes nothing (no hunk, mode or rename)",
                             line=first, path=b)  # fmt: skip
    elif sec.hunks == 0 and not sec.binary:
        raise PatchError(name, f"file header for {new or old!r} has no hunks", line=first)

    if "copy from" in kw or "copy to" in kw:
        status = ChangeStatus.COPIED
    elif "rename from" in kw or "rename to" in kw or "rename old" in kw:
        status = ChangeStatus.RENAMED
    elif old is None:
        status = ChangeStatus.ADDED
    elif new is None:
        status = ChangeStatus.DELETED
    else:
        status = ChangeStatus.MODIFIED
    path = new if new is not None else old
    assert path is not None

    # Hunk counting through unidiff, on the section with line endings normalised to "\n".
    body = "".join(_bare(x) + "\n" for x in lines[sec.start : sec.end])
    try:
        parsed = PatchSet(body)
    except UnidiffParseError as exc:
        raise PatchError(name, f"unparseable section for {path!r}: {exc}", line=first, path=path) from exc
    added = sum(f.added for f in parsed)
    removed = sum(f.removed for f in parsed)
    hunks = sum(len(f) for f in parsed)
    binary = sec.binary or any(f.is_binary_file for f in parsed)
    if hunks != sec.hunks:
        raise PatchError(name, f"section for {path!r}: found {sec.hunks} hunks, unidiff read {hunks}", line=first)
    added_lines = tuple(ln.value.rstrip("\n") for f in parsed for h in f for ln in h if ln.is_added)
    removed_lines = tuple(ln.value.rstrip("\n") for f in parsed for h in f for ln in h if ln.is_removed)
    target = _symlink_target(name, kw, new, added_lines, first)
    return FileChange(
        path=path,
        old_path=old,
        status=status,
        added=added,
        removed=removed,
        hunks=hunks,
        binary=binary,
        artifact=artifact_type(path),
        line=first,
        added_lines=added_lines,
        removed_lines=removed_lines,
        symlink_target=target,
    )


def _symlink_target(
    name: str, kw: dict[str, tuple[str, int]], new: str | None, added: tuple[str, ...], line: int
) -> str | None:
    """The target of a link the section creates (mode ``120000``); one pointing outside the repository
    (absolute, or with more ``..`` than the link's depth) is a :class:`PatchError`."""
    mode = (kw.get("new file mode") or kw.get("new mode") or ("", 0))[0].strip()
    if mode != "120000" or new is None:
        return None
    target = added[0] if added else ""
    joined = posixpath.join(posixpath.dirname(new), target)
    if not target or target.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", target) or _escapes(joined):
        raise PatchError(name, f"symbolic link {new!r} points outside the repository ({target!r})", line=line, path=new)
    return target


def _analyse(text: str, name: str) -> tuple[list[str], list[_Section], list[FileChange]]:
    if not isinstance(text, str):
        raise PatchError(name, f"patch must be text, got {type(text).__name__}")
    nul = text.find("\x00")
    if nul >= 0:
        raise PatchError(name, "NUL byte in patch text (binary data must use 'GIT binary patch')",
                         line=text.count("\n", 0, nul) + 1)  # fmt: skip
    if not text.strip():
        return [], [], []
    lines = _split_lines(text)
    sections, _ = _scan(name, lines)
    if not sections:
        first = next((k for k, x in enumerate(lines) if x.strip()), 0)
        raise PatchError(
            name,
            "not a unified diff: no file header ('diff --git', or '---' followed by '+++') found; "
            f"first line reads {_bare(lines[first])[:80]!r}",
            line=first + 1,
        )
    changes = [_section_change(name, lines, sec) for sec in sections]
    return lines, sections, changes


def parse_patch(text: str, *, name: str = "patch") -> PatchInfo:
    """Parse a unified diff (``git diff`` / ``git format-patch`` / GNU ``diff -u`` output).

    Handles CRLF line endings, ``\\ No newline at end of file``, git binary patches (``GIT binary patch``
    and ``Binary files ... differ``: ``binary=True``, no line counts), renames and copies with a similarity
    index, new / deleted file modes, mode-only changes, empty new files, and git's C-quoted paths.

    Args:
        text: the patch. Empty or whitespace-only text is a valid EMPTY patch (``files == ()``).
        name: label used in error messages (``"model_patch"``, ``"test_patch"`` ...).

    Returns:
        :class:`PatchInfo`, files in patch order.

    Raises:
        PatchError: naming ``name`` and the line / path, when the text is not a diff, contains a NUL byte,
            has a truncated or malformed hunk, or names an absolute path or one escaping the repository
            (``../outside``, ``a/../../x``).
    """
    _, _, changes = _analyse(text, name)
    return PatchInfo(name=name, files=tuple(changes))


def _join(lines: list[str], sections: Iterable[_Section]) -> str:
    chunks = ["".join(lines[s.start : s.end]) for s in sections]
    for k in range(len(chunks) - 1):
        if not chunks[k].endswith("\n"):
            chunks[k] += "\n"
    return "".join(chunks)


def _select(text: str, name: str, keep_section: Callable[[FileChange], bool]) -> str:
    lines, sections, changes = _analyse(text, name)
    return _join(lines, [s for s, c in zip(sections, changes) if keep_section(c)])


def split_patch(text: str, is_test: Callable[[str], bool], *, name: str = "patch") -> tuple[str, str]:
    """Split a fix commit's diff into ``(patch, test_patch)`` (SPEC section 1 "Instance fields").

    ``is_test`` is the framework's test-file rule (``frameworks.get(fw).test_rule(config files at base)``,
    or :func:`pytest_mobilebench.frameworks.default_test_rule`). A file section goes to ``test_patch`` when
    ANY name it touches (:attr:`FileChange.paths`) is a test file; all other sections go to ``patch``. Each
    section's text is kept byte for byte (headers, ``index`` lines, binary data, CRLF endings), in the
    original order; text before the first section is dropped. Either part may be ``""``.

    Raises:
        PatchError: when ``text`` is not a valid patch (see :func:`parse_patch`).
    """
    lines, sections, changes = _analyse(text, name)
    tested = [any(is_test(p) for p in c.paths) for c in changes]
    non_test = _join(lines, [s for s, t in zip(sections, tested) if not t])
    tests = _join(lines, [s for s, t in zip(sections, tested) if t])
    return non_test, tests


def filter_patch(text: str, keep: Callable[[str], bool], *, name: str = "patch") -> str:
    """The sub-patch of the file sections whose modified paths ALL satisfy ``keep``.

    ``keep`` is called with each name of :attr:`FileChange.paths` (so a rename is kept only when both its
    names are kept); ``filter_patch(t, lambda p: not rule(p))`` equals ``split_patch(t, rule)[0]``.
    Sections are kept byte for byte, in order; text before the first section is dropped. ``name`` labels
    error messages.

    Raises:
        PatchError: when ``text`` is not a valid patch (see :func:`parse_patch`).
    """
    return _select(text, name, lambda c: all(keep(p) for p in c.paths))


def select_sections(text: str, keep: Callable[[FileChange], bool], *, name: str = "patch") -> str:
    """The sub-patch of the sections whose :class:`FileChange` satisfies ``keep`` (byte for byte, in order).

    Raises:
        PatchError: when ``text`` is not a valid patch (see :func:`parse_patch`).
    """
    return _select(text, name, keep)
