"""Glob patterns as jest (micromatch) and Gradle write them, translated to Python regular expressions.

Supported: ``**`` (any number of directories), ``*`` and ``?`` (within one component), ``[...]`` classes,
``{a,b}`` alternatives and the extglobs ``?(x)``, ``*(x)``, ``+(x)``, ``@(x)`` (``|``-separated
alternatives). ``!(x)`` is read as ``*`` (an over-approximation: a file counts as matched). Matching is on
the whole repository-relative POSIX path; a leading ``**/`` also matches zero directories.
"""

from __future__ import annotations

import functools
import re

__all__ = ["glob_regex", "glob_matches"]

_EXTGLOB = {"?": "?", "*": "*", "+": "+", "@": ""}


def _alternatives(body: str) -> list[str]:
    out, depth, current = [], 0, ""
    for ch in body:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch in ",|" and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    return [*out, current]


def _closing(pattern: str, start: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for i in range(start, len(pattern)):
        if pattern[i] == open_ch:
            depth += 1
        elif pattern[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


def _translate(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch in "?*+@!" and pattern[i + 1 : i + 2] == "(":
            end = _closing(pattern, i + 1, "(", ")")
            if end > 0:
                alts = "|".join(_translate(a) for a in _alternatives(pattern[i + 2 : end]))
                out.append("[^/]*" if ch == "!" else f"(?:{alts}){_EXTGLOB[ch]}")
                i = end + 1
                continue
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body[:1] == "!" else body) + "]")
                i = end + 1
        elif ch == "{":
            end = _closing(pattern, i, "{", "}")
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                out.append("(?:" + "|".join(_translate(a) for a in _alternatives(pattern[i + 1 : end])) + ")")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


@functools.lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """The compiled regular expression of a glob (``<rootDir>/`` and ``./`` prefixes dropped)."""
    p = pattern.replace("<rootDir>/", "")
    while p.startswith("./"):
        p = p[2:]
    return re.compile(r"\A" + _translate(p) + r"\Z")


def glob_matches(pattern: str, path: str) -> bool:
    """Whether the repository-relative ``path`` matches the glob ``pattern``."""
    return glob_regex(pattern).match(path) is not None
