"""Stored jest snapshots, read by the harness from ``.snap`` text it read itself (never through candidate code).

A ``.snap`` file as jest writes it is a list of ``exports[`<key>`] = `<value>`;`` statements after a ``//`` header,
each template literal escaped by jest's rule (a backtick, a backslash and ``${`` get a backslash in front; line
endings are normalised to ``\\n``). :func:`parse_snap` reads exactly that (plus the standard JS string escapes a
hand-edited file may hold) and raises :class:`SnapFileError` naming the file and line for anything else (a template
substitution, code), since evaluating the file is what the candidate's realm would do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol


class SnapshotSource(Protocol):
    """Where the decider finds stored snapshots: ``snapshot(".snap path relative to the repo", key)``."""

    def snapshot(self, file: str, key: str) -> str | None: ...


class SnapFileError(ValueError):
    """A ``.snap`` text that is not jest's format; the message names the file and line."""


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_STATEMENT = re.compile(r"exports\[")
_ASSIGN = re.compile(r"\]\s*=\s*")
_END = re.compile(r"\s*;")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _template(text: str, pos: int, name: str) -> tuple[str, int]:
    """The cooked value of the template literal opening at ``text[pos]`` and the position after it."""
    if text[pos : pos + 1] != "`":
        raise SnapFileError(f"{name}:{_line(text, pos)}: expected a template literal")
    out: list[str] = []
    i = pos + 1
    while i < len(text):
        ch = text[i]
        if ch == "`":
            return "".join(out), i + 1
        if ch == "$" and text[i + 1 : i + 2] == "{":
            raise SnapFileError(f"{name}:{_line(text, i)}: a template substitution is not a stored snapshot")
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        cooked, i = _escape(text, i + 1, name)
        out.append(cooked)
    raise SnapFileError(f"{name}:{_line(text, pos)}: unterminated template literal")


def _escape(text: str, i: int, name: str) -> tuple[str, int]:
    ch = text[i : i + 1]
    if ch in _SIMPLE_ESCAPES and not (ch == "0" and text[i + 1 : i + 2].isdigit()):
        return _SIMPLE_ESCAPES[ch], i + 1
    if ch == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1 : i + 3]):
        return chr(int(text[i + 1 : i + 3], 16)), i + 3
    if ch == "u":
        braced = re.match(r"\{([0-9A-Fa-f]{1,6})\}", text[i + 1 :])
        if braced:
            return chr(int(braced.group(1), 16)), i + 1 + braced.end()
        if re.fullmatch(r"[0-9A-Fa-f]{4}", text[i + 1 : i + 5]):
            return chr(int(text[i + 1 : i + 5], 16)), i + 5
    if ch == "\n":
        return "", i + 1  # a line continuation
    if ch == "" or ch.isdigit() or ch in "xu":
        raise SnapFileError(f"{name}:{_line(text, i)}: invalid escape in a template literal")
    return ch, i + 1


def _skip_comments(text: str, pos: int) -> int:
    while True:
        stripped = len(text) - len(text[pos:].lstrip())
        pos = stripped
        if text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end + 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            if end < 0:
                raise SnapFileError(f"unterminated comment at offset {pos}")
            pos = end + 2
        else:
            return pos


def parse_snap(text: str, name: str = "<snap>") -> dict[str, str]:
    """``{key: stored value}`` of one ``.snap`` file's text; ``name`` is the file's path, for errors."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as a template literal reads its line breaks
    out: dict[str, str] = {}
    pos = _skip_comments(text, 0)
    while pos < len(text):
        if not _STATEMENT.match(text, pos):
            raise SnapFileError(f"{name}:{_line(text, pos)}: expected exports[`key`] = `value`;")
        key, pos = _template(text, pos + len("exports["), name)
        assign = _ASSIGN.match(text, pos)
        if not assign:
            raise SnapFileError(f"{name}:{_line(text, pos)}: expected '] = ' after the key {key!r}")
        value, pos = _template(text, assign.end(), name)
        end = _END.match(text, pos)
        if not end:
            raise SnapFileError(f"{name}:{_line(text, pos)}: expected ';' after the snapshot {key!r}")
        if key in out:
            raise SnapFileError(f"{name}:{_line(text, pos)}: snapshot {key!r} is stored twice")
        out[key] = value
        pos = _skip_comments(text, end.end())
    return out


class SnapFiles:
    """A :class:`SnapshotSource` over ``.snap`` texts the caller read: ``{path relative to the repo: text}``.

    Each file is parsed on first use; a malformed file raises :class:`SnapFileError` when one of its snapshots is
    asked for. A file the mapping lacks has no snapshots (``None``).
    """

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._texts = dict(texts)
        self._parsed: dict[str, dict[str, str]] = {}

    def snapshot(self, file: str, key: str) -> str | None:
        if file not in self._texts:
            return None
        if file not in self._parsed:
            self._parsed[file] = parse_snap(self._texts[file], file)
        return self._parsed[file].get(key)
