"""Near-miss mutants of a gold patch: small semantic changes to its added lines (pure).

The verifier-strength measurement (:mod:`.verifier`) runs each mutant with the instance's tests; a mutant the
tests still accept *survives* (the tests would accept that wrong fix). Mutation testing's classic operators
(DeMillo, Lipton and Sayward, "Hints on test data selection", 1978; the operator families of PIT and
Stryker), applied to the ``+`` lines of the gold patch only:

* ``operator``: ``==``/``!=``, ``===``/``!==``, ``<=``/``<``, ``>=``/``>``, ``&&``/``||``, ``+=``/``-=``,
  ``++``/``--``, and spaced binary `` + ``/`` - ``, `` * ``/`` / ``, `` < ``/`` <= ``, `` > ``/`` >= ``
  (unspaced ``<`` / ``>`` are left alone: generics and JSX);
* ``constant``: an integer literal ``n`` becomes ``n + 1`` (``1`` becomes ``0``); ``true`` / ``false`` swap;
* ``condition``: ``if (c)`` / ``while (c)`` becomes ``if (!(c))`` when ``c`` closes on the same line;
* ``return``: ``return e`` becomes ``return null`` when ``e`` ends on the same line;
* ``statement``: an added assignment or call statement (``a.b = c;``, ``f(x);``: one line, ``;``-terminated,
  not a declaration) is deleted (the line left blank, so the hunk's line counts hold).

The lexer is careful rather than complete (C-family sources: JS / TS / JSX, Java, Kotlin, Dart, Swift):
nothing inside a string, a template literal, a character literal or a comment is ever mutated; the lexer's
state (block comments, template and triple-quoted strings) carries across the hunk's lines, context lines
included; a hunk that closes a comment or string it never opened discards what came before; a line holding
a ``/`` that may start a regular-expression literal is not mutated at all. Other files (JSON, XML, YAML,
Markdown ...) give no mutant.

Which mutants: per hunk at most ``per_hunk``, one per kind in turn, drawn with ``random.Random(seed key)``
where the key names the seed, the instance and the hunk: the same patch, seed and instance give the same
mutants on every machine.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator, Sequence
from typing import Final

import unidiff

__all__ = ["MUTABLE_SUFFIXES", "Mutant", "Token", "candidates", "code_tokens", "mutants"]

#: file suffixes whose added lines are mutated (C-family syntax)
MUTABLE_SUFFIXES: Final = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".java", ".kt", ".kts", ".dart", ".swift")

_SWAPS: Final = {
    "===": "!==", "!==": "===", "==": "!=", "!=": "==", "<=": "<", ">=": ">", "&&": "||", "||": "&&",
    "+=": "-=", "-=": "+=", "++": "--", "--": "++",
}  # fmt: skip
_SPACED: Final = {"+": "-", "-": "+", "*": "/", "<": "<=", ">": ">="}
_OPERATORS: Final = sorted({*_SWAPS, "=>", "??", "?.", "**", "<<", ">>", "::", "->", "..."}, key=len, reverse=True)
_NUMBER: Final = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_IDENT: Final = re.compile(r"[A-Za-z_$][\w$]*")
#: a ``/`` after one of these (or at the start of a line) may open a regular-expression literal
_REGEX_BEFORE: Final = set("(,=:[!&|?{};+-*%<>~^") | {"return", "typeof", "case", ""}
_CLOSERS: Final = {"(": ")", "[": "]", "{": "}"}


@dataclasses.dataclass(frozen=True)
class Token:
    """One code token of a line: ``text`` at ``[start, end)`` (column offsets in the line)."""

    text: str
    start: int
    end: int


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutant of a patch.

    Attributes:
        id: ``h<hunk>.m<n>`` (stable for the same patch, seed and instance).
        kind: ``operator`` | ``constant`` | ``condition`` | ``return``.
        hunk: the hunk's index (file order, then hunk order, as :func:`.hunks.gold_hunks`).
        file: the file's path; line: the line's number in the patched file.
        before / after: the added line before and after the mutation (without the ``+``).
        patch: the whole mutated patch (a unified diff that applies where the gold applies).
    """

    id: str
    kind: str
    hunk: int
    file: str
    line: int
    before: str
    after: str
    patch: str

    def describe(self) -> str:
        """``"operator at src/a.js:7: 'x += s' -> 'x -= s'"``."""
        return f"{self.kind} at {self.file}:{self.line}: {self.before.strip()!r} -> {self.after.strip()!r}"


@dataclasses.dataclass
class _Lexer:
    """Lexer state carried from line to line: ``None`` (code), ``"/*"``, ``"`"`` or ``'\"\"\"'``."""

    inside: str | None = None
    unbalanced_close: bool = False

    def tokens(self, line: str) -> list[Token]:
        """The code tokens of ``line``; strings, templates and comments are skipped (their state kept)."""
        out: list[Token] = []
        i, n = 0, len(line)
        while i < n:
            if self.inside is not None:
                i = self._skip_open(line, i)
                continue
            ch = line[i]
            if ch.isspace():
                i += 1
            elif line.startswith("//", i):
                break
            elif line.startswith("/*", i):
                self.inside, i = "/*", i + 2
            elif line.startswith("*/", i):  # closes a comment this hunk never opened
                self.unbalanced_close, i, out = True, i + 2, []
            elif line.startswith('"""', i):
                self.inside, i = '"""', i + 3
            elif ch == "`":
                self.inside, i = "`", i + 1
            elif ch in "'\"":
                i = _string_end(line, i)
            else:
                i = self._code(line, i, out)
        return out

    def _skip_open(self, line: str, i: int) -> int:
        closer = {"/*": "*/", "`": "`", '"""': '"""'}[self.inside or ""]
        j = i
        while True:
            k = line.find(closer, j)
            if k < 0:
                return len(line)
            if closer == "`" and _escaped(line, k):
                j = k + 1
                continue
            self.inside = None
            return k + len(closer)

    def _code(self, line: str, i: int, out: list[Token]) -> int:
        for pattern in (_NUMBER, _IDENT):
            m = pattern.match(line, i)
            if m and (pattern is _IDENT or i == 0 or not (line[i - 1].isalnum() or line[i - 1] in "_$.")):
                out.append(Token(m.group(), i, m.end()))
                return m.end()
            if m:  # digits glued to a name (x1) or a member (.5): part of that token
                return m.end()
        op = next((o for o in _OPERATORS if line.startswith(o, i)), line[i])
        out.append(Token(op, i, i + len(op)))
        return i + len(op)


def _escaped(line: str, k: int) -> bool:
    backslashes = len(line[:k]) - len(line[:k].rstrip("\\"))
    return backslashes % 2 == 1


def _string_end(line: str, i: int) -> int:
    """The column after the string literal opening at ``i`` (the line's end when it does not close)."""
    quote, j = line[i], i + 1
    while j < len(line):
        if line[j] == "\\":
            j += 2
            continue
        if line[j] == quote:
            return j + 1
        j += 1
    return len(line)


def code_tokens(lines: Sequence[str]) -> list[list[Token]]:
    """The code tokens of each line of one hunk (context and added lines, in the new file's order).

    When a line closes a comment the hunk never opened, the tokens of every earlier line are dropped: they
    may have been inside it."""
    lexer = _Lexer()
    out: list[list[Token]] = []
    for line in lines:
        tokens = lexer.tokens(line)
        if lexer.unbalanced_close:
            out = [[] for _ in out]
            lexer.unbalanced_close = False
        out.append(tokens)
    return out


def _may_hold_regex(tokens: Sequence[Token]) -> bool:
    for k, tok in enumerate(tokens):
        if tok.text == "/" and (tokens[k - 1].text if k else "") in _REGEX_BEFORE:
            return True
    return False


def _matching(tokens: Sequence[Token], k: int) -> int | None:
    """Index of the token closing the bracket at ``tokens[k]`` on the same line, or None."""
    depth = 0
    for j in range(k, len(tokens)):
        if tokens[j].text in _CLOSERS:
            depth += 1
        elif tokens[j].text in _CLOSERS.values():
            depth -= 1
            if depth == 0:
                return j
    return None


def _spaced(line: str, tok: Token) -> bool:
    return 0 < tok.start and tok.end < len(line) and line[tok.start - 1] == " " and line[tok.end] == " "


def candidates(line: str, tokens: Sequence[Token]) -> Iterator[tuple[str, str]]:
    """Every ``(kind, mutated line)`` of one added line (none when it may hold a regular expression)."""
    if _may_hold_regex(tokens):
        return
    for k, tok in enumerate(tokens):
        text = tok.text
        new: tuple[str, str] | None = None
        if text in _SWAPS:
            new = ("operator", _SWAPS[text])
        elif text in _SPACED and _spaced(line, tok):
            new = ("operator", _SPACED[text])
        elif text in ("true", "false"):
            new = ("constant", "false" if text == "true" else "true")
        elif _NUMBER.fullmatch(text) and text.isdigit():
            new = ("constant", "0" if text == "1" else str(int(text) + 1))
        if new:
            yield new[0], line[: tok.start] + new[1] + line[tok.end :]
        elif text in ("if", "while") and k + 1 < len(tokens) and tokens[k + 1].text == "(":
            close = _matching(tokens, k + 1)
            if close is not None and close > k + 2:
                a, b = tokens[k + 1].end, tokens[close].start
                yield "condition", line[:a] + "!(" + line[a:b] + ")" + line[b:]
        elif text == "return":
            yield from _return(line, tokens, k)
    if _statement(tokens):
        yield "statement", line[: len(line) - len(line.lstrip())]


def _return(line: str, tokens: Sequence[Token], k: int) -> Iterator[tuple[str, str]]:
    rest = list(tokens[k + 1 :])
    end = next((j for j, t in enumerate(rest) if t.text == ";"), len(rest))
    expr = rest[:end]
    if (
        not expr
        or [t.text for t in expr] in (["null"], ["undefined"])
        or expr[-1].text in (*_CLOSERS, ",", "=>", "?", ":")
    ):
        return
    depth = sum(1 if t.text in _CLOSERS else -1 if t.text in _CLOSERS.values() else 0 for t in expr)
    if depth == 0 and (end < len(rest) or not line[expr[-1].end :].strip()):
        yield "return", line[: expr[0].start] + "null" + line[expr[-1].end :]


_NOT_STATEMENTS: Final = frozenset(
    {
        "const",
        "let",
        "var",
        "val",
        "final",
        "return",
        "import",
        "export",
        "package",
        "function",
        "class",
        "interface",
        "type",
        "enum",
        "if",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "default",
        "break",
        "continue",
        "throw",
        "try",
        "catch",
        "finally",
        "yield",
        "await",
        "super",
        "this",
    }
)


def _statement(tokens: Sequence[Token]) -> bool:
    """Whether the line is one whole assignment or call statement (deleting it still parses)."""
    if len(tokens) < 3 or tokens[-1].text != ";" or tokens[0].text in _NOT_STATEMENTS and tokens[0].text != "this":
        return False
    if not _IDENT.fullmatch(tokens[0].text) or any(t.text == ";" for t in tokens[:-1]):
        return False
    depth = 0
    for t in tokens:
        depth += 1 if t.text in _CLOSERS else -1 if t.text in _CLOSERS.values() else 0
        if depth < 0:
            return False
    return depth == 0 and any(t.text in ("=", "(", "+=", "-=", "++", "--") for t in tokens)


def _hunk_sites(pf: unidiff.PatchedFile, hunk: unidiff.Hunk) -> list[tuple[str, int, int, str]]:
    """``(kind, diff line number, target line number, mutated text)`` of every candidate in one hunk."""
    kept = [ln for ln in hunk if not ln.is_removed]
    lines = [ln.value.rstrip("\r\n") for ln in kept]
    out = []
    for ln, text, tokens in zip(kept, lines, code_tokens(lines)):
        if ln.is_added:
            out += [(kind, ln.diff_line_no, ln.target_line_no, new) for kind, new in candidates(text, tokens)]
    return out


def _pick(sites: list[tuple[str, int, int, str]], per_hunk: int, rng: random.Random) -> list[tuple[str, int, int, str]]:
    """Up to ``per_hunk`` sites, one kind after another (kinds in a drawn order, a drawn site of each)."""
    by_kind: dict[str, list[tuple[str, int, int, str]]] = {}
    for site in sites:
        by_kind.setdefault(site[0], []).append(site)
    for group in by_kind.values():
        rng.shuffle(group)
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    picked: list[tuple[str, int, int, str]] = []
    while len(picked) < per_hunk and any(by_kind.values()):
        for kind in kinds:
            if by_kind[kind] and len(picked) < per_hunk:
                picked.append(by_kind[kind].pop())
    return sorted(picked, key=lambda s: (s[1], s[3]))


def mutants(patch: str, *, per_hunk: int = 3, seed: int = 0, key: str = "") -> list[Mutant]:
    """Up to ``per_hunk`` mutants of each hunk of ``patch`` (see the module docstring); ``key`` (the
    instance id) and ``seed`` fix the draw. A patch that is not a unified diff gives none.

    Returns mutants in hunk order; ``Mutant.patch`` differs from ``patch`` in exactly one ``+`` line."""
    if per_hunk <= 0 or not patch.strip():
        return []
    try:
        patch_set = unidiff.PatchSet(patch)
    except unidiff.UnidiffParseError:
        return []
    text_lines = patch.splitlines(keepends=True)
    out: list[Mutant] = []
    index = -1
    for pf in patch_set:
        path = pf.path
        for hunk in pf:
            index += 1
            if not path.endswith(MUTABLE_SUFFIXES):
                continue
            rng = random.Random(f"{seed}\x00{key}\x00{index}")
            for n, (kind, diff_no, target_no, new) in enumerate(_pick(_hunk_sites(pf, hunk), per_hunk, rng)):
                old = text_lines[diff_no - 1]
                ending = old[len(old.rstrip("\r\n")) :]
                lines = [*text_lines[: diff_no - 1], "+" + new + ending, *text_lines[diff_no:]]
                out.append(
                    Mutant(f"h{index}.m{n}", kind, index, path, target_no, old[1:].rstrip("\r\n"), new, "".join(lines))
                )
    return out
