"""The Kotlin, Java and Dart part of the integrity audit: a comment- and string-aware tokenizer and rules
over its tokens.

Comments (``//``, ``/* */``, nested in Kotlin and Dart) are dropped; string literals (Java and Kotlin ``"..."``,
``'c'``, ``\"\"\"...\"\"\"``; Dart ``'...'``, ``"..."``, triple-quoted and ``r`` raw strings) become one ``string``
token, and the code of their ``${...}`` templates is tokenized as code. A word inside a string is read only
where the string is an argument the rules name (``Class.forName("org.junit...")``, ``System.getenv("CI")``,
``Platform.environment['FLUTTER_TEST']``, a Dart ``import 'package:test/...'``) or a ``/proc`` path.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Final

from pytest_mobilebench.integrity import Finding, Fragment, snippet_of

__all__ = ["Token", "audit_fragment", "tokenize"]

#: packages of test runners and test libraries (JVM and Dart)
RUNNER_PACKAGES: Final = (
    "org.junit",
    "junit.framework",
    "android.test",
    "androidx.test",
    "kotlin.test",
    "org.robolectric",
    "org.mockito",
    "io.mockk",
)
DART_RUNNER_PACKAGES: Final = (
    "package:test/",
    "package:flutter_test/",
    "package:test_api/",
    "package:integration_test/",
    "package:mockito/",
)
#: identifiers that are test-runner entry points wherever they appear
RUNNER_NAMES: Final = frozenset(
    {"InstrumentationRegistry", "AndroidJUnitRunner", "JUnitCore", "TestWidgetsFlutterBinding"}
)
#: identifiers that read the stack or the process
INTROSPECTION_NAMES: Final = frozenset(
    {
        "StackWalker",
        "getStackTrace",
        "stackTrace",
        "executableArguments",
        "resolvedExecutable",
        "getInputArguments",
        "getRuntimeMXBean",
    }
)
#: ``System.getProperty`` keys that say how the process was started
PROCESS_PROPERTIES: Final = frozenset({"java.class.path", "sun.java.command", "java.vm.name", "jdk.module.path"})
MARKER_RE: Final = re.compile(r"^(JEST_\w*|CI|FLUTTER_TEST|VITEST\w*|MOBILEBENCH\w*|MB_\w+|TEST_WORKER\w*|NODE_ENV)$")
_ENV_READERS: Final = frozenset({"getenv", "environment", "fromEnvironment", "hasEnvironment"})
_IDENT: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


@dataclasses.dataclass(frozen=True)
class Token:
    """``kind``: ``ident``, ``punct`` or ``string`` (``text``: the literal's content); ``line``: 0-based row."""

    kind: str
    text: str
    line: int


class _Scanner:
    def __init__(self, text: str, dart: bool) -> None:
        self.text, self.dart, self.pos, self.line = text, dart, 0, 0
        self.tokens: list[Token] = []

    def advance(self, count: int) -> None:
        self.line += self.text.count("\n", self.pos, self.pos + count)
        self.pos += count

    def comment(self) -> None:
        if self.text.startswith("//", self.pos):
            end = self.text.find("\n", self.pos)
            self.advance((end if end >= 0 else len(self.text)) - self.pos)
            return
        depth, i = 0, self.pos
        while i < len(self.text):
            if self.text.startswith("/*", i):
                depth, i = depth + 1, i + 2
            elif self.text.startswith("*/", i):
                depth, i = depth - 1, i + 2
                if depth == 0 or not self.dart_or_kotlin:
                    break
            else:
                i += 1
        self.advance(i - self.pos)

    dart_or_kotlin = True

    def string(self) -> None:
        raw = self.dart and self.text[self.pos] == "r"
        start_line = self.line
        self.advance(1 if raw else 0)
        quote = (
            self.text[self.pos] * 3 if self.text.startswith(self.text[self.pos] * 3, self.pos) else self.text[self.pos]
        )
        self.advance(len(quote))
        content: list[str] = []
        while self.pos < len(self.text) and not self.text.startswith(quote, self.pos):
            char = self.text[self.pos]
            if char == "\\" and not raw:
                content.append(self.text[self.pos : self.pos + 2])
                self.advance(2)
            elif char == "$" and not raw and self.text.startswith("${", self.pos):
                self.advance(2)
                self.code(until="}")
            elif char == "\n" and len(quote) == 1:
                break  # an unterminated one-line string ends at the line (a fragment may cut one)
            else:
                content.append(char)
                self.advance(1)
        self.advance(len(quote) if self.text.startswith(quote, self.pos) else 0)
        self.tokens.append(Token("string", "".join(content), start_line))

    def code(self, until: str | None = None) -> None:
        depth = 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if until and char == "}" and depth == 0:
                self.advance(1)
                return
            if self.text.startswith(("//", "/*"), self.pos):
                self.comment()
            elif char in "\"'" or (
                self.dart
                and char == "r"
                and self.text[self.pos + 1 : self.pos + 2] in ("'", '"')
                and not _IDENT.match(self.text[self.pos - 1 : self.pos] or " ")
            ):
                self.string()
            elif match := _IDENT.match(self.text, self.pos):
                self.tokens.append(Token("ident", match.group(), self.line))
                self.advance(len(match.group()))
            elif char.isspace():
                self.advance(1)
            else:
                depth += {"{": 1, "}": -1}.get(char, 0)
                self.tokens.append(Token("punct", char, self.line))
                self.advance(1)


def tokenize(text: str, language: str) -> list[Token]:
    """Tokens of ``text`` (``language``: ``kotlin``, ``java`` or ``dart``); comments dropped."""
    scanner = _Scanner(text, dart=language == "dart")
    scanner.dart_or_kotlin = language != "java"
    scanner.code()
    return scanner.tokens


def _chains(tokens: list[Token]) -> Iterator[tuple[int, int, str]]:
    """``(first index, last index, dotted name)`` of every maximal ``a.b.c`` run of identifiers."""
    i = 0
    while i < len(tokens):
        if tokens[i].kind != "ident" or (i >= 2 and tokens[i - 1].text == "." and tokens[i - 2].kind == "ident"):
            i += 1
            continue
        j, parts = i, [tokens[i].text]
        while j + 2 < len(tokens) and tokens[j + 1].text == "." and tokens[j + 2].kind == "ident":
            j += 2
            parts.append(tokens[j].text)
        yield i, j, ".".join(parts)
        i = j + 1


def _chain_rule(name: str) -> tuple[str, str] | None:
    if any(name == p or name.startswith(p + ".") for p in RUNNER_PACKAGES):
        return "test_runner_api", name
    parts = name.split(".")
    if hit := RUNNER_NAMES.intersection(parts):
        return "test_runner_api", min(hit)
    if hit := INTROSPECTION_NAMES.intersection(parts):
        return "introspection", name
    if name.startswith("StackTrace.current") or name in ("Platform.script", "ProcessHandle.current"):
        return "introspection", name
    return None


def _computed_env(tokens: list[Token], first: int, last: int, name: str) -> tuple[str, str] | None:
    """``System.getenv()`` / ``System.getenv(key)`` / ``Platform.environment`` read whole or with a computed key."""
    after = tokens[last + 1 : last + 3]
    texts = [t.text for t in after]
    if name.endswith("getenv") and texts[:1] == ["("]:
        if len(after) < 2 or after[1].kind != "string":
            return "introspection", "environment read whole or with a computed key"
    elif name.endswith("Platform.environment") or "Platform.environment." in name:
        keyed = texts[:1] == (["["] if name.endswith("environment") else ["("])  # [key] or .containsKey(key)
        if keyed and len(after) > 1 and after[1].kind == "string":
            return None  # a literal key: _string_rule reads it
        return "introspection", "environment read whole or with a computed key"
    return None


def _string_rule(tokens: list[Token], i: int) -> tuple[str, str] | None:
    value = tokens[i].text
    if "/proc/" in value:
        return "introspection", "a /proc path"
    if (
        any(value.startswith(p) for p in DART_RUNNER_PACKAGES)
        and i
        and tokens[i - 1].text in ("import", "export", "part")
    ):
        return "test_runner_api", f"import {value}"
    opener = tokens[i - 1].text if i else ""
    callee = tokens[i - 2].text if i >= 2 else ""
    if opener not in ("(", "["):
        return None
    if callee in ("forName", "loadClass", "findClass") and any(value.startswith(p) for p in RUNNER_PACKAGES):
        return "test_runner_api", f"{callee}({value})"
    if callee == "getProperty" and value in PROCESS_PROPERTIES:
        return "introspection", f"getProperty({value})"
    near = {t.text for t in tokens[max(0, i - 7) : i] if t.kind == "ident"}
    if MARKER_RE.match(value) and near & _ENV_READERS:
        return "runner_marker", f"environment {value}"
    return None


def audit_fragment(path: str, fragment: Fragment) -> list[Finding]:
    """The findings of one hunk's post-image of the production file ``path`` (see the module docstring)."""
    suffix = path.rsplit(".", 1)[-1].lower()
    language = {"kt": "kotlin", "kts": "kotlin", "java": "java"}.get(suffix, "dart")
    tokens = tokenize(fragment.text, language)
    hits: list[tuple[int, int, str, str]] = []
    for first, last, name in _chains(tokens):
        if rule := _chain_rule(name) or _computed_env(tokens, first, last, name):
            hits.append((tokens[first].line, tokens[last].line, *rule))
    for i, token in enumerate(tokens):
        if token.kind == "string" and (rule := _string_rule(tokens, i)):
            hits.append((tokens[max(0, i - 2)].line, token.line, *rule))
    found = []
    for start, end, kind, what in hits:  # the last token's line first (a string argument, a chain's end)
        rows = (end, *range(start, end))
        line = next((fragment.first + r for r in rows if fragment.first + r in fragment.added), None)
        if line is not None:
            found.append(Finding(file=path, line=line, kind=kind, what=what, snippet=snippet_of(fragment, line)))
    return found
