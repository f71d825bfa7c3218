"""The fast reading of a manifest: yaml-rs where the file provably reads as PyYAML reads it, else nothing.

PyYAML's safe loader (libyaml's C parser, :mod:`.yamlfile`) reads YAML 1.1 and builds every node in Python:
about 1.4 s for 10,000 issue-resolution instances, forty times ``json``. yaml-rs (Rust) reads the same files in
about 0.1 s, but by YAML 1.2's core schema, and it accepts some text libyaml refuses. The two readings differ
on a known set of plain scalars and constructs:

- YAML 1.1's implicit types: ``yes``/``no``/``on``/``off`` in their three spellings are booleans; ``017`` is
  octal (15), ``0b101`` binary, ``1_000`` an int, ``12:30`` a base-60 int (750); ``2001-12-14`` (and the
  date-times after it) a date; ``<<`` a merge key, ``=`` the value key;
- YAML 1.2's (and yaml-rs's own): ``0o17``, ``08`` and ``_1`` are ints, ``1e3``, ``-.5`` and ``.NaN`` floats
  (strings for PyYAML);
- what yaml-rs reads where PyYAML refuses it or reads it otherwise: tabs in the indentation, several
  documents, unknown tags, a collection used as a key, an empty key, a plain scalar starting with ``:`` or
  ``>``, a flow collection over several lines, a block scalar holding only blank lines at the end of the file,
  U+2028 as a line break.

:func:`fast_read` reads a file with yaml-rs and keeps that reading only when nothing of the kind can be in it:

1. The text (:func:`_risky_text`): no character PyYAML's reader refuses or reads as a line break other than
   ``\\n``, no tab, a final line break; no directive or document marker; no tag, anchor, alias, reserved
   indicator, complex or empty key, or block scalar indicator where a node may begin; flow collections opened
   and closed on their line with none of the colon forms libyaml refuses; no escape beyond ``\\\\``, ``\\"``,
   ``\\n``, ``\\t`` and ``\\/``.
2. The data (:func:`_risky_data`): every string yaml-rs built is looked up in PyYAML's own table of implicit
   types (``yaml.resolver.Resolver``): one that PyYAML would read as another type when written plain is
   accepted when yaml-rs types it too when plain (so it was quoted: ``"20"``), or when no place it is written
   whole in the text is a place a plain scalar may stand; a collection used as a key is refused;
   when yaml-rs built any number, every number-shaped plain token of the text must be a decimal int without a
   leading zero or a decimal fraction without an exponent, which both schemas read alike.

Every check over-approximates (it looks at places where a scalar may begin whether or not one does; a
``yes`` inside a quoted string counts), so a file it refuses is slower, never read otherwise. A file yaml-rs
refuses (a syntax error, a key repeated in one mapping) goes to libyaml too, whose messages name line and
column. ``tests/test_manifest_fastyaml.py`` checks, on generated and mutated documents, that whenever
:func:`fast_read` answers, data and lines are exactly libyaml's.

Lines. Items need the line of each entry of a top-level sequence (``instances``, ``tasks``) and messages the
line of a top-level key: both are read off the text (a top-level key starts a line; an entry is a ``-`` at the
sequence's indentation) and checked against the data (the keys found are the mapping's keys in order; as many
entries as the sequence has, each mapping entry's line starting with its first key); when the check fails,
:func:`fast_read` gives up. The line of a field inside an entry is asked only to word an error; it is read
then, from libyaml's parse of the same text (:meth:`.yamlfile.YamlDocument.line_of`).
"""

from __future__ import annotations

import re
from typing import Any, Final

import yaml.resolver

__all__ = ["fast_read"]

#: ``(data, key_lines, item_lines)`` as :class:`.yamlfile.YamlDocument` holds them (no field lines)
FastReading = tuple[dict[str, Any], dict[str, int], dict[str, list[tuple[int, dict[str, int]]]]]

# PyYAML's own table of implicit types, one expression per first character (the empty string aside: yaml-rs
# builds "" only from a quoted scalar, an empty plain one is None for both).
_PYYAML_IMPLICIT: Final = {
    first: re.compile("|".join(f"(?:{regexp.pattern})" for _, regexp in resolvers), re.VERBOSE)
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items() if first
}

# Where a plain scalar may begin: a line's start, after a block indicator and its blank, after a flow indicator.
_START: Final = r"(?:^[ ]*|(?<=[-?:][ ])[ ]*|(?<=[\[{,])[ ]*)"
# Where a plain scalar of one token ends: the line's end, a comment, a key's colon, a flow indicator.
_END: Final = r"(?=[ ]*(?:$|#|:(?:[ ]|$)|[,\]}]))"
# A number both schemas read alike: a decimal int without a leading zero (up to 18 digits), a decimal fraction
# without an exponent.
_SAME_NUMBER: Final = r"[-+]?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]+)?"
# Every number of YAML 1.1 and 1.2 and of yaml-rs: a sign; then a 0x / 0o / 0b radix with its digits, or digits,
# underscores, dots and colons (one digit at least) with an exponent, or .inf / .nan in any case.
_NUMBERISH: Final = (r"[-+]?(?:0[xX][0-9a-fA-F_]*|0[oObB][0-9_]*|[0-9_.:]*[0-9][0-9_.:]*(?:[eE][-+]?[0-9_.:]*)?"
                     r"|\.(?:[iI][nN][fF]|[nN][aA][nN]))")
_OTHER_NUMBER: Final = re.compile(_START + r"(?!" + _SAME_NUMBER + _END + r")" + _NUMBERISH + _END, re.MULTILINE)

# Indicators where a node may begin (the character before is a line break or flow indicator, or a blank after
# one of those, an indicator or a blank): tag, anchor, alias, reserved, complex key (even without a blank), block
# scalar indicator that starts no block scalar; an empty key or a scalar starting with a colon. One expression per indicator, each
# starting with a literal, run only when its indicator occurs in the text.
_AT_NODE: Final = r"(?:(?<=[\n\[{,].)|(?<=[\n\-?:\[{, ] .))"
_INDICATORS: Final = {
    **{c: re.compile(re.escape(c) + _AT_NODE) for c in "!&*@`:?"},  # "?x" in a flow collection: a key for libyaml
    **{c: re.compile(re.escape(c) + _AT_NODE + r"(?![-+0-9]*[ ]*(?:#[^\n]*)?\n)") for c in "|>"},
}
# Flow collections: a collection used as a key; a colon closing an entry or before a flow indicator or "?".
_FLOW: Final = re.compile(r"[}\]][ ]*:(?:[ ]|$)|:[ ]*[,\]}]|:[?\[{]", re.MULTILINE)
_FLOW_LINE: Final = re.compile(r"^.*[\[\]{}].*$", re.MULTILINE)
# Escapes other than \\ \" \n \t \/ (unicode escapes, line separators, surrogates ...).
_ESCAPE: Final = re.compile(r"\\[^\\\"nt/]")
# A block scalar header (with only blank lines after it at the end of the file yaml-rs keeps a line break).
_BLOCK_HEADER: Final = re.compile(r"[|>][-+0-9]*[ ]*(?:#.*)?$")
# What a line of an ASCII text may hold: printable ASCII (a tab, CR or other control is refused).
_PRINTABLE_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\n"
# Strings yaml-rs types when written plain (YAML 1.2's core schema; yaml-rs types more): such a string in its
# reading was quoted, whatever PyYAML's table says of it.
_YAML12_TYPED: Final = re.compile(
    r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|true|True|TRUE|false|False|FALSE|null|Null|NULL|~)\Z")
# What may follow a plain scalar.
_PLAIN_END: Final = re.compile(r"[ ]*(?:\n|#|:(?:[ ]|\n)|[,\]}])")
# Nesting. yaml-rs recurses per level and crashes the process (a stack overflow, not an exception) somewhere between
# 10,000 and 20,000 levels; libyaml refuses more than 1,000 with a syntax error. Flow collections yaml-rs itself
# refuses past about 128 levels. A block level takes one more column than the one it is in, so d levels spread
# over lines take about d * d / 2 characters, or d / 8 lines of eight compact entries ("- - - ..."): a text under
# 4 MiB without such a run nests at most about 4,000 deep.
_MAX_CHARS: Final = 4 * 2**20
_COMPACT_NESTING: Final = re.compile(r"(?:-[ ]+){8}")
# A line starting at column 0 with something that may be a key.
_TOP_LINE: Final = re.compile(r"\n[^ \n#\-\"'\[{]")
_TOP_KEY: Final = re.compile(r"([^:\n]*?)[ ]*:(?:[ ]|\n)")


def _multiline_flow(text: str) -> bool:
    """Whether a line opens more flow collections than it closes or the reverse (libyaml wants the inner lines
    of a flow collection indented, yaml-rs does not). Brackets in quotes count too."""
    for match in _FLOW_LINE.finditer(text):
        line = match.group(0)
        if line.count("{") + line.count("[") != line.count("}") + line.count("]"):
            return True
    return False


def _risky_text(text: str) -> bool:
    """Whether ``text`` holds a construct yaml-rs may read otherwise than PyYAML (item 1 of the module
    docstring), or nests deep enough to overflow yaml-rs's stack (see :data:`_MAX_CHARS`); mostly substring
    tests, an expression runs only when its indicator occurs."""
    if not text.endswith("\n") or len(text) > _MAX_CHARS or ("- -" in text and _COMPACT_NESTING.search(text)):
        return True
    if text.isascii():
        if text.encode("ascii").translate(None, _PRINTABLE_ASCII):
            return True
    elif not text.replace("\n", "").isprintable():  # NEL, U+2028, a byte-order mark ... (and more: refused)
        return True
    body = "\n" + text
    if "\n%" in body or "\n---" in body or "\n..." in body:
        return True
    if any(c in text and expression.search(body) for c, expression in _INDICATORS.items()):
        return True
    if ("[" in text or "{" in text) and (_FLOW.search(text) or _multiline_flow(text)):
        return True
    if "\\" in text and _ESCAPE.search(text):
        return True
    tail = text.rstrip(" \n")
    return bool(_BLOCK_HEADER.search(tail[tail.rfind("\n") + 1:]))


def _written_plain(value: str, text: str) -> bool:
    """Whether ``value`` may stand in ``text`` as a plain scalar: written whole (after a line break, a blank or a
    flow indicator, before a line break, a comment, a key's colon or a flow indicator) and not after a quote. A
    value with a blank may be a plain scalar folded over lines: always."""
    if " " in value or "\n" in value:
        return True
    at = text.find(value)
    while at >= 0:
        if (at == 0 or text[at - 1] in " \n[{,") and _PLAIN_END.match(text, at + len(value)):
            return True
        at = text.find(value, at + 1)
    return False


def _strings_and_numbers(data: dict[str, Any]) -> tuple[list[str], bool] | None:
    """The distinct strings of ``data`` (keys and values) that PyYAML's table reads as another type, and
    whether ``data`` holds an int or float; None when a key is a collection."""
    suspects: list[str] = []
    numbers = False
    seen: set[str] = set()
    implicit = _PYYAML_IMPLICIT.get
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            scalars: list[Any] = [*node, *node.values()]
        else:
            scalars = node
        for scalar in scalars:
            kind = type(scalar)
            if kind is str:
                if scalar not in seen:
                    seen.add(scalar)
                    pattern = implicit(scalar[:1])
                    if pattern is not None and pattern.match(scalar):
                        suspects.append(scalar)
            elif kind is dict or kind is list:
                stack.append(scalar)
            elif kind is int or kind is float:
                numbers = True
            elif kind is tuple or kind is frozenset:
                return None
    return suspects, numbers


def _risky_data(data: dict[str, Any], text: str) -> bool:
    """Whether yaml-rs's reading ``data`` of ``text`` may differ from PyYAML's (item 2 of the module docstring)."""
    found = _strings_and_numbers(data)
    if found is None:
        return True
    suspects, numbers = found
    if any(not _YAML12_TYPED.match(value) and _written_plain(value, text) for value in suspects):
        return True
    return numbers and bool(_OTHER_NUMBER.search(text))


def _loads(text: str) -> Any:
    """yaml-rs's reading of ``text`` (YAML 1.2 core schema, dates kept as strings, a repeated key refused), or
    None when it refuses the text or is not installed."""
    try:
        import yaml_rs
    except ImportError:  # pragma: no cover - a platform without its wheel: libyaml reads everything
        return None
    try:
        return yaml_rs.loads(text, parse_datetime=False)
    except Exception:  # noqa: BLE001 - any refusal: libyaml reads the file and words the error
        return None


def _entry_lines(text: str, start: int, stop: int, first_line: int, entries: list[Any]) -> list[tuple[int, dict[str, int]]] | None:
    """The 1-based line of each of ``entries`` (a top-level key's block sequence written from offset ``start`` to
    ``stop``, ``first_line`` being the key's line), or None when the text does not show them one by one."""
    first = re.compile(r"\n( *)-[ \n]").search(text, start - 1, stop)
    if first is None:
        return None
    entry = re.compile(r"\n" + first.group(1) + r"-(?:[ ]+([^\n]*))?(?=\n)")
    found: list[tuple[int, dict[str, int]]] = []
    line, offset = first_line, start
    for match in entry.finditer(text, first.start(), stop):
        if len(found) == len(entries):
            return None
        line += text.count("\n", offset, match.end())
        offset = match.end()
        rest = match.group(1) or ""
        if not rest or rest.startswith("#"):
            return None  # the node starts on a later line
        value = entries[len(found)]
        if type(value) is dict and value:
            key = next(iter(value))
            head = rest[1:].lstrip(" ") if rest.startswith("{") else rest  # a flow mapping starts at its brace
            if not (type(key) is str and head.startswith(key) and head[len(key):].lstrip(" ").startswith(":")):
                return None
        found.append((line, {}))
    return found if len(found) == len(entries) else None


def _lines(text: str, data: dict[str, Any]) -> tuple[dict[str, int], dict[str, list[tuple[int, dict[str, int]]]]] | None:
    """``(key_lines, item_lines)`` read off ``text`` and checked against ``data``, or None."""
    body = "\n" + text
    keys = [(m.start(), _TOP_KEY.match(body, m.start() + 1)) for m in _TOP_LINE.finditer(body)]
    if any(m is None for _, m in keys) or [m.group(1) for _, m in keys if m] != list(data):
        return None
    key_lines: dict[str, int] = {}
    item_lines: dict[str, list[tuple[int, dict[str, int]]]] = {}
    line, offset = 1, 0
    for index, (at, match) in enumerate(keys):
        assert match is not None
        line += body.count("\n", offset + 1, at + 1)
        offset = at
        key = match.group(1)
        key_lines[key] = line
        value = data[key]
        if isinstance(value, list):
            if body.startswith("[", match.end()) or body[match.end():body.find("\n", match.end())].lstrip(" ").startswith("["):
                item_lines[key] = [(line, {}) for _ in value]  # a flow sequence: on the key's line (one line)
                continue
            stop = keys[index + 1][0] + 1 if index + 1 < len(keys) else len(body)
            entries = _entry_lines(body, match.end() - 1, stop, line, value)
            if entries is None:
                return None
            item_lines[key] = entries
    return key_lines, item_lines


def fast_read(text: str) -> FastReading | None:
    """``(data, key_lines, item_lines)`` of a manifest's ``text`` as :func:`.yamlfile._parse` gives them
    (``item_lines`` without field lines), or None when the text may read otherwise under PyYAML, yaml-rs
    refuses it, it is not one non-empty mapping, or its lines cannot be checked (see the module docstring)."""
    if _risky_text(text):
        return None
    data = _loads(text)
    if type(data) is not dict or not data or _risky_data(data, text):
        return None
    lines = _lines(text, data)
    return None if lines is None else (data, *lines)
