r"""The fast reading of a manifest: yaml-rs where the file provably reads as PyYAML reads it, else nothing.

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
   ``\n`` (``\r\n`` is read as ``\n`` by both), no tab, a final line break, no block scalar that only blank
   lines follow at the end. Then, the text of the quoted scalars that surely start their line's node emptied
   when the file holds no block scalar (PyYAML's ``key: "..."`` and ``- '...'``, folded over lines:
   :func:`_blank_quoted`), else the bodies of block scalars (their text is never a node either): no directive
   or document marker; no tag, anchor, alias, reserved
   indicator, complex or empty key, or block scalar indicator where a node may begin; flow collections opened
   and closed on their line, with none of the colon forms libyaml reads otherwise (``"k":v`` types ``v`` for
   libyaml only); no 64 blanks nor 8 compact entries in a row (nesting, see :data:`_WIDE_INDENT`). Escapes are
   not checked: for every escape of the double-quoted style (those PyYAML writes, ``\xXX``, ``\uXXXX``,
   ``\UXXXXXXXX``, an escaped blank or line break) and any other character after a backslash, yaml-rs reads what
   libyaml reads or refuses the text (``tests/test_manifest_fastyaml_quoted.py`` checks every one).
2. The data (:func:`_risky_data`): every key is a string (libyaml compares keys as text: ``1`` and ``"1"``
   collide there); every string yaml-rs built is looked up in PyYAML's own table of implicit types
   (``yaml.resolver.Resolver``): one that PyYAML would read as another type when written plain is accepted
   when yaml-rs types it too when plain (so it was quoted: ``"20"``), or when no token of the text written
   where a plain scalar may stand whole is that string; a collection used as a key is refused; when yaml-rs
   built any number, every number-shaped plain token of the text must be a decimal int without a leading zero
   or a decimal fraction without an exponent, which both schemas read alike.

Every check over-approximates (it looks at places where a scalar may begin whether or not one does; a
``yes`` inside a quoted string counts), so a file it refuses is slower, never read otherwise. A file yaml-rs
refuses (a syntax error, a key repeated in one mapping) goes to libyaml too, whose messages name line and
column. No expression backtracks over a run of the text more than once (adversarial texts in the tests).
``tests/test_manifest_fastyaml.py`` holds every divergence found and checks, on generated and mutated
documents, that whenever :func:`fast_read` answers, data and lines are exactly libyaml's.

Lines. Items need the line of each entry of a top-level sequence (``instances``, ``tasks``) and messages the
line of a top-level key: both are read off the text (a top-level key starts a line; an entry is a ``-`` at the
sequence's indentation) and checked against the data (the keys found are the mapping's keys in order; as many
entries as the sequence has, each mapping entry's line starting with its first key; a flow sequence alone on
its key's line), on the text as the checks leave it (quoted scalars and block bodies emptied, line for line);
when the check fails, :func:`fast_read` gives up. The line of a field inside an entry is asked only to word an
error; it is read then, from libyaml's parse of the same text (:meth:`.yamlfile.YamlDocument.line_of`).
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
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    if first
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
_NUMBERISH: Final = (
    r"[-+]?(?:0[xX][0-9a-fA-F_]*|0[oObB][0-9_]*|[_.:]*[0-9][0-9_.:]*(?:[eE][-+]?[0-9_.:]*)?"
    r"|\.(?:[iI][nN][fF]|[nN][aA][nN]))"
)
_OTHER_NUMBER: Final = re.compile(_START + r"(?!" + _SAME_NUMBER + _END + r")" + _NUMBERISH + _END, re.MULTILINE)

# Indicators where a node may begin (the character before is a line break or flow indicator, or a blank after
# one of those, an indicator or a blank): tag, anchor, alias, reserved, complex key (even without a blank), block
# scalar indicator that starts no block scalar; an empty key or a scalar starting with a colon. One expression per
# indicator, each starting with a literal, run only when its indicator occurs in the text.
_AT_NODE: Final = r"(?:(?<=[\n\[{,].)|(?<=[\n\-?:\[{, ] .))"
_INDICATORS: Final = {
    **{c: re.compile(re.escape(c) + _AT_NODE) for c in "!&*@`:?"},  # "?x" in a flow collection: a key for libyaml
    **{c: re.compile(re.escape(c) + _AT_NODE + r"(?![-+0-9]*[ ]*(?:#[^\n]*)?\n)") for c in "|>"},
}
# Flow collections: a collection used as a key; a colon closing an entry or before a flow indicator or "?"; a
# quoted key's colon with the value right after it (libyaml reads "k":yes as k: true, yaml-rs as "yes").
_FLOW: Final = re.compile(r"[}\]][ ]*:(?:[ ]|$)|:[ ]*[,\]}]|:[?\[{]|[\"'][ ]*:(?![ ]|$)", re.MULTILINE)
_FLOW_LINE: Final = re.compile(r"^.*[\[\]{}].*$", re.MULTILINE)
# A block scalar header (with only blank lines after it at the end of the file yaml-rs keeps a line break).
_BLOCK_HEADER: Final = re.compile(r"[|>][-+0-9]*[ ]*(?:#.*)?$")
# A block scalar header after a key's or an entry's blank, ending its line (searched indicator first); then the
# start of that line: its indentation and entries, the key if any.
_BLOCK_HEADER_AT: Final = re.compile(r"[|>](?<=[-:] [|>])[-+0-9]*[ ]*(?:#[^\n]*)?(?=\n)")
_HEADER_LINE_START: Final = re.compile(r"([ ]*(?:-[ ]+)*)([^\n]*: )?")
# The first line of a block scalar's body that is not blank: its indentation, the body's.
_FIRST_CONTENT: Final = re.compile(r"(?:\n[ ]*(?=\n))*\n([ ]*)[^ \n]")
# What a line of an ASCII text may hold: printable ASCII (a tab, CR or other control is refused).
_PRINTABLE_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\n"
# Outside ASCII: what PyYAML's reader refuses, and what it reads as a line break (NEL, U+2028, U+2029) or drops
# (a byte-order mark).
_UNREAD_ALIKE: Final = re.compile(
    "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
# Strings yaml-rs types when written plain (YAML 1.2's core schema; yaml-rs types more): such a string in its
# reading was quoted, whatever PyYAML's table says of it.
_YAML12_TYPED: Final = re.compile(
    r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|true|True|TRUE|false|False|FALSE|null|Null|NULL|~)\Z"
)
# Every token written where a plain scalar may stand whole: after a line break, a blank or a flow indicator, before
# a line break, a comment, a key's colon or a flow indicator (lazy: "yes:  # c" gives "yes").
_PLAIN_TOKEN: Final = re.compile(
    r"(?:^|(?<=[ \[{,]))([^ \n\[\]{},]+?)(?=[ ]*(?:\n|#|:(?:[ ]|\n)|[,\]}]))", re.MULTILINE
)
# Nesting. yaml-rs recurses per level, about 700 bytes of stack each, and a stack overflow crashes the process
# (1,500 levels on a 1 MiB thread stack); libyaml refuses more than 1,000 with a syntax error; yaml-rs refuses a
# flow collection nested past 255 on one line (one line: see _multiline_flow). A block level starts at least one
# column right of the one holding it (a compact "- - x" two), so a text without 64 blanks in a row nor 8 compact
# entries in a row nests at most about 8 * 64 deep in blocks, plus 255 in a flow collection.
_WIDE_INDENT: Final = " " * 64
_COMPACT_NESTING: Final = re.compile(r"(?:-[ ]+){8}")
# Blank and comment lines only.
_NOTHING: Final = re.compile(r"(?:\n[ ]*(?:#[^\n]*)?)*\n?")
# A line starting at column 0 with something that may be a key.
_TOP_LINE: Final = re.compile(r"\n[^ \n#\-\"'\[{]")
_TOP_KEY: Final = re.compile(r"([^:\n]*):(?:[ ]|\n)")


def _multiline_flow(text: str) -> bool:
    """Whether a line opens more flow collections than it closes or the reverse (libyaml wants the inner lines
    of a flow collection indented, yaml-rs does not). Brackets in quotes count too."""
    for match in _FLOW_LINE.finditer(text):
        line = match.group(0)
        if line.count("{") + line.count("[") != line.count("}") + line.count("]"):
            return True
    return False


def _may_hold_block_scalar(text: str) -> bool:
    """Whether ``text`` holds a ``|``, or a ``>`` after a key's colon or a block entry and a blank (every block
    scalar header :func:`_blank_block_bodies` empties a body after)."""
    return "|" in text or ": >" in text or "- >" in text


def _blank_block_bodies(text: str) -> str:
    """``text`` with the lines of every block scalar's body emptied (its text is never a node, so the indicator
    checks need not see it: a problem statement's ``*``, ``>``, backticks and brackets). A body is what follows a
    header (``key: |``, ``- >-``) while lines are blank or indented as its first line that is not, when that is
    past the column of the key or entry that owns it (as YAML reads a body); a header with an indentation
    indicator is left as it is. A header that is not one (inside a plain scalar) cannot be written so: "|" and
    ">" start no plain scalar."""
    if not _may_hold_block_scalar(text):
        return text
    pieces: list[str] = []
    at = 0
    for header in _BLOCK_HEADER_AT.finditer(text):
        if header.start() < at:
            continue  # inside a body already emptied
        line = _HEADER_LINE_START.match(text, text.rfind("\n", 0, header.start()) + 1, header.start())
        assert line is not None  # both groups may be empty
        if line.end() != header.start():
            continue  # not "key: |" nor "- |" from the line's start: leave the lines to the checks
        lead, key = line.group(1), line.group(2)
        owner = len(lead) if key else len(lead.rstrip(" ")) - 1
        first = _FIRST_CONTENT.match(text, header.end())
        if first is None or len(first.group(1)) <= owner or any(c.isdigit() for c in header.group(0)):
            continue  # no body, or one indented as the header says (an indentation indicator): left to the checks
        body = re.compile(rf"(?:\n(?:[ ]*(?=\n)|[ ]{{{len(first.group(1))}}}[^\n]*))*").match(text, header.end())
        assert body is not None  # the pattern matches the empty string
        pieces += [text[at : header.end()], "\n" * body.group(0).count("\n")]
        at = body.end()
    return "".join(pieces) + text[at:]


# After a quoted scalar's closing quote: only blanks or a comment up to the line's end.
_LINE_END: Final = re.compile(r"[ ]*(?:#[^\n]*)?\n")
_QUOTE: Final = re.compile(r"[\"']")
# What stands before a quote that starts its line's node: indentation, block entries, a plain key and its colon.
_OPENER: Final = re.compile(r"[ ]*(?:-[ ]+)*(?:[A-Za-z0-9_$][A-Za-z0-9_.$/-]*[ ]*:[ ]+)?")
# A line as _OPENER reads it: its lead (indentation, block entries), the plain key if any, the rest.
_LINE: Final = re.compile(r"([ ]*(?:-[ ]+)*)(?:([A-Za-z0-9_$][A-Za-z0-9_.$/-]*)[ ]*:(?:[ ]+|$))?(.*)")


def _ends_a_node(text: str, line_start: int, indent: int, last_scalar_end: int) -> bool:
    """Whether the line at ``line_start`` (``indent`` blanks before its node) surely begins a new node: the last line
    before it that is not blank is the last line of a quoted scalar, a key or block entry holding nothing on its
    line, a one-line flow collection without quotes or comments, or a plain scalar of a key or an entry that
    ``indent`` is not past (so the line cannot continue it: libyaml continues a plain scalar on lines indented
    past its mapping's or sequence's column). Anything else (a comment, a block scalar header, a line that may
    continue a plain scalar ...): False."""
    end = line_start - 1
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        if text[start:end].strip(" "):
            break
        end = start - 1
    else:
        return True  # the first line that is not blank
    if last_scalar_end > start:
        return True  # that line ends a quoted scalar, nothing but blanks or a comment after it
    line = _LINE.match(text, start, end)
    assert line is not None  # every group may be empty
    lead, key, rest = line.groups()
    if not rest:
        return key is not None or "-" in lead
    if rest[0] in "[{":
        opened, closed = rest.count("[") + rest.count("{"), rest.count("]") + rest.count("}")
        return opened == closed and not any(c in rest for c in "\"'#")
    if rest[0] in "\"'&*!%@`?:,]}#|>" or (key is None and "-" not in lead):
        return False
    owner = len(lead) if key is not None else len(lead.rstrip(" ")) - 1
    return indent <= owner


def _blank_quoted(text: str) -> str:
    """``text`` (from a line break) with every quoted scalar that starts its line's node (``key: "..."``,
    ``- '...'``) replaced by ``Q`` and its line breaks: its text is never a node, so the indicator and flow checks
    need not see a patch's ``*``, ``@``, brackets and backticks, and the lines stay where they were. Each such
    scalar must surely start a node (:func:`_ends_a_node`: never a plain scalar's next line) and end its line; a
    quote anywhere else where a node may begin (after a line's indentation, an indicator or a flow indicator) is
    a quoted scalar this does not follow: then ``text`` itself is returned, every line left to the checks. The
    caller keeps the result only when it holds no block scalar header (:func:`_may_hold_block_scalar`): a block
    scalar's body is text that may look like quotes, and its header stands before any line this could misread."""
    pieces: list[str] = []
    at = last_end = 0
    found = _QUOTE.search(text)
    while found is not None:
        quote = found.start()
        line_start = text.rfind("\n", 0, quote) + 1
        lead = _OPENER.fullmatch(text, line_start, quote)
        if lead is None:
            head = text[line_start:quote].rstrip(" ")
            if not head or head[-1] in "-?:,[{":
                return text
            found = _QUOTE.search(text, quote + 1)
            continue
        end = text.find('"', quote + 1) + 1 if text[quote] == '"' else 0  # most often: no escaped quote
        if end <= 0 or text[end - 2] == "\\":
            end = _closing_quote(text, quote)
        if end < 0 or (text[end] != "\n" and not _LINE_END.match(text, end)):
            return text
        after_last = at and text.find("\n", at) == line_start - 1  # the line before ends the last quoted scalar
        if not after_last:
            indent = len(lead.group(0)) - len(lead.group(0).lstrip(" "))
            if not _ends_a_node(text, line_start, indent, last_end):
                return text
        pieces += [text[at:quote], "Q", "\n" * text.count("\n", quote, end)]
        at = last_end = end
        found = _QUOTE.search(text, at)
    return "".join(pieces) + text[at:]


def _closing_quote(text: str, quote: int) -> int:
    """The offset after the quote closing the quoted scalar opened at ``quote``, or -1 when none does: in a
    double-quoted scalar the first ``"`` after an even run of backslashes (a backslash escapes the next character,
    a line break too), in a single-quoted one the first ``'`` not doubled."""
    mark = text[quote]
    at = quote + 1
    while True:
        at = text.find(mark, at)
        if at < 0:
            return -1
        if mark == "'":
            if text.startswith("'", at + 1):
                at += 2
                continue
            return at + 1
        run = at
        while text[run - 1] == "\\":
            run -= 1
        if (at - run) % 2 == 0:
            return at + 1
        at += 1


def _risky_text(text: str) -> str | None:
    """``text`` with its quoted scalars' text (:func:`_blank_quoted`) or block scalars' bodies
    (:func:`_blank_block_bodies`) emptied, line for line, or None when it holds a
    construct yaml-rs may read otherwise than PyYAML (item 1 of the module docstring) or nests deep enough to
    overflow yaml-rs's stack (see :data:`_WIDE_INDENT`); mostly substring tests, an expression runs only when its
    indicator occurs. ``text`` has ``\n`` line breaks only (see :func:`fast_read`)."""
    if not text.endswith("\n"):
        return None
    if text.isascii():
        if text.encode("ascii").translate(None, _PRINTABLE_ASCII):
            return None
    elif _UNREAD_ALIKE.search(text):
        return None
    tail = text.rstrip(" \n")
    if _BLOCK_HEADER.search(tail[tail.rfind("\n") + 1 :]):
        return None
    lines = "\n" + text
    quoted = _blank_quoted(lines) if '"' in text or "'" in text else lines
    if quoted is lines or _may_hold_block_scalar(quoted):  # a block scalar's body may hold what looks like quotes
        lines = "\n" + _blank_block_bodies(text)
    else:
        lines = quoted
    if "\n%" in lines or "\n---" in lines or "\n..." in lines:
        return None
    if _WIDE_INDENT in lines or ("- -" in lines and _COMPACT_NESTING.search(lines)):
        return None
    if any(c in lines and expression.search(lines) for c, expression in _INDICATORS.items()):
        return None
    if ("[" in lines or "{" in lines) and (_FLOW.search(lines) or _multiline_flow(lines)):
        return None
    return lines[1:]


def _strings_and_numbers(data: dict[str, Any]) -> tuple[list[str], bool] | None:
    """The distinct strings of ``data`` (keys and values) that PyYAML's table reads as another type, and
    whether ``data`` holds an int or float; None when a key is not a string (a collection, which PyYAML refuses;
    a number, bool or null, which libyaml's duplicate check compares as text with string keys)."""
    suspects: list[str] = []
    numbers = False
    seen: set[str] = set()
    implicit = _PYYAML_IMPLICIT.get
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if any(type(key) is not str for key in node):
                return None  # libyaml's duplicate check compares key texts: 1 and "1" collide there
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
    """Whether yaml-rs's reading ``data`` of ``text`` (its block scalars' bodies emptied) may differ from PyYAML's
    (item 2 of the module docstring)."""
    found = _strings_and_numbers(data)
    if found is None:
        return True
    suspects, numbers = found
    suspects = [value for value in suspects if not _YAML12_TYPED.match(value)]
    if any(" " in value or "\n" in value for value in suspects):  # maybe a plain scalar folded over lines
        return True
    if suspects:
        plain = set(_PLAIN_TOKEN.findall(text))
        if any(value in plain for value in suspects):
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


def _entry_lines(
    text: str, start: int, stop: int, first_line: int, entries: list[Any]
) -> list[tuple[int, dict[str, int]]] | None:
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
            if not (type(key) is str and head.startswith(key) and head[len(key) :].lstrip(" ").startswith(":")):
                return None
        found.append((line, {}))
    return found if len(found) == len(entries) else None


def _lines(
    text: str, data: dict[str, Any]
) -> tuple[dict[str, int], dict[str, list[tuple[int, dict[str, int]]]]] | None:
    """``(key_lines, item_lines)`` read off ``text`` and checked against ``data``, or None."""
    body = "\n" + text
    keys = [(m.start(), _TOP_KEY.match(body, m.start() + 1)) for m in _TOP_LINE.finditer(body)]
    if any(m is None for _, m in keys) or [m.group(1).rstrip(" ") for _, m in keys if m] != list(data):
        return None
    key_lines: dict[str, int] = {}
    item_lines: dict[str, list[tuple[int, dict[str, int]]]] = {}
    line, offset = 1, 0
    for index, (at, match) in enumerate(keys):
        assert match is not None
        line += body.count("\n", offset + 1, at + 1)
        offset = at
        key = match.group(1).rstrip(" ")
        key_lines[key] = line
        value = data[key]
        if isinstance(value, list):
            stop = keys[index + 1][0] + 1 if index + 1 < len(keys) else len(body)
            eol = body.find("\n", match.end() - 1)
            if body[match.end() - 1 : eol].lstrip(" ").startswith("["):  # a flow sequence, on the key's line alone
                if not _NOTHING.fullmatch(body, eol, stop):
                    return None
                item_lines[key] = [(line, {}) for _ in value]
                continue
            entries = _entry_lines(body, match.end() - 1, stop, line, value)
            if entries is None:
                return None
            item_lines[key] = entries
    return key_lines, item_lines


def fast_read(text: str) -> FastReading | None:
    """``(data, key_lines, item_lines)`` of a manifest's ``text`` as :func:`.yamlfile._parse` gives them
    (``item_lines`` without field lines), or None when the text may read otherwise under PyYAML, yaml-rs
    refuses it, it is not one non-empty mapping, or its lines cannot be checked (see the module docstring).
    ``\r\n`` line breaks read as ``\n`` in both; a lone ``\r`` is a line break for PyYAML only: refused."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return None
    checked = _risky_text(text)
    if checked is None:
        return None
    data = _loads(text)
    if type(data) is not dict or not data or _risky_data(data, checked):
        return None
    lines = _lines(checked, data)  # line for line the text, quoted scalars and block scalars' bodies emptied
    return None if lines is None else (data, *lines)
