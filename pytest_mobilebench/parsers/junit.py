"""JUnit XML parser: Gradle ``build/test-results/**/TEST-*.xml`` (and any JUnit-style XML report).

Input: the result files, ``{relative path: bytes}``; every key ending in ``.xml`` is read, in sorted
path order (other keys are ignored with one warning). The command output text is not used.

Accepted shapes: a ``<testsuite>`` root (Gradle, one file per class), a ``<testsuites>`` root, and
``<testsuite>`` elements nested in each other (Ant / jest-junit style). Per ``<testcase>``:

* a ``<failure>`` or ``<error>`` child -> ``FAIL`` (message: the child's ``message`` attribute, else its
  text; several children are joined by a newline);
* else a ``<skipped>`` child -> ``SKIP`` (JUnit ``@Ignore``, failed assumptions);
* else ``PASS``.

Reruns: each ``<flakyFailure>`` / ``<flakyError>`` child (Surefire's ``rerunFailingTestsCount``, Gradle's
``mergeReruns``: failed, then passed on a rerun) and each ``<rerunFailure>`` / ``<rerunError>`` child (a
rerun that failed again) is one more execution that failed. Every execution goes through the
duplicate-id rule of :class:`~pytest_mobilebench.parsers.ResultBuilder`, so a test that failed and then
passed on a rerun is ``FAIL`` (``docs/test-ids.md``, "Retries"), with a warning listing the executions.

Other children (``<system-out>`` with CDATA, ``<properties>``) are ignored.

Test id: ``"{classname}#{name}"``, both attributes exactly as the XML parser returns them (no trimming,
no other normalisation). ``classname`` falls back to the ``name`` of the innermost enclosing
``<testsuite>`` when the attribute is absent, and to ``""`` when there is none either. Kotlin backtick
names contain spaces and dots and parameterised names contain brackets, commas and ``=``, so the
class and the test name are never joined with ``"."``. Examples (from ``fixtures/logs/junit``)::

    demo.CalcTest#addIsWrong
    demo.ParamTest#adds[1: add(2, 2) = 5]
    demo.OuterTest$InnerTest#innerPasses
    com.example.LoginViewModelTest#login with empty password shows an error

Damage, per file, never affecting the other files:

* characters XML 1.0 forbids (control characters in captured output, ``&#27;`` references), bytes that
  are not valid in the file's encoding, and an unknown declared encoding are replaced by U+FFFD before
  parsing, with one warning per file (``"<file>: 2 characters not allowed in XML replaced by U+FFFD"``);
* a file that still does not parse (cut off by a killed test JVM, broken markup) is read again testcase
  by testcase: every ``<testcase>`` element that parses on its own is kept, each one that does not is
  dropped with a warning naming its line (the first 20 per file; then one warning counts the rest), and a warning says
  ``"<file>: truncated at line L, N testcases recovered (<parser error>)"`` (``malformed`` instead of ``truncated`` when
  the error is not on the last line);
* a file that yields no testcase at all gives a warning and the other files are still parsed.

:class:`ParseError` only when no file yields anything (every file unreadable, or no XML file at all). Duplicate ids
follow the rule of :class:`~pytest_mobilebench.parsers.ResultBuilder` (``FAIL > PASS > SKIP``, with a warning).
"""

from __future__ import annotations

import bisect
import codecs
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeAlias, cast

from pytest_mobilebench.parsers._core import (
    ParseError,
    ParseResult,
    ResultBuilder,
    register,
    register_console,
)
from pytest_mobilebench.states import TestState

__all__ = ["gradle_console_counts", "junit_test_id", "parse_junit"]

#: One ``<testcase>``: its id and the states (with messages) of its executions, in order.
_Case: TypeAlias = tuple[str, list[tuple[TestState, str]]]

#: Children recording an earlier execution that failed (Surefire / Gradle rerun reports).
_RERUN_TAGS: Final = frozenset({"flakyFailure", "flakyError", "rerunFailure", "rerunError"})

#: Characters outside XML 1.0's ``Char`` production (C0 controls but tab/LF/CR, surrogates, U+FFFE/F).
_BAD_CHARS: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CHAR_REF: Final = re.compile(r"&#(?:x([0-9A-Fa-f]{1,8})|([0-9]{1,10}));")
_DECLARATION: Final = re.compile(r"^(\s*)<\?xml\b[^>]*\?>")
_ENCODING: Final = re.compile(rb"^\s*<\?xml\b[^>]*?\bencoding\s*=\s*[\"']([A-Za-z0-9._:-]{1,40})[\"']")
_BOMS: Final = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))

# A start tag's attributes: quoted values may hold ">" and "/"; a "/" directly before ">" ends the tag. "<" is
# not allowed in a tag (not even in a quoted value), so no match runs past the next "<": scans stay linear.
_ATTRS: Final = rb"(?:[^<>\"'/]|/(?!>)|\"[^<\"]*\"|'[^<']*')*"
_CASE_START: Final = re.compile(rb"<testcase\b")
_CASE_TAG: Final = re.compile(rb"<testcase\b" + _ATTRS + rb"(/?)>")
_CASE_END: Final = re.compile(rb"</testcase\s*>")
_SUITE_RE: Final = re.compile(rb"<(/?)testsuite\b(" + _ATTRS + rb")(/?)>")

#: Dropped testcases of one file that get a warning each; the rest are counted in one more warning.
_DROPPED_WARNINGS: Final = 20


def junit_test_id(classname: str, name: str) -> str:
    """The test id of one ``<testcase>``: ``f"{classname}#{name}"`` (see the module docstring)."""
    return f"{classname}#{name}"


def _strip_ns(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if "}" in tag else tag


def _is_xml_char(code: int) -> bool:
    """XML 1.0 ``Char``: tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF."""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _decode(data: bytes) -> tuple[str, list[str]]:
    """``data`` as text in its encoding (byte-order mark, else declaration, else UTF-8), plus notes."""
    notes: list[str] = []
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), None)
    declared = _ENCODING.match(data) if encoding is None else None
    if declared is not None:
        encoding = declared.group(1).decode("ascii")
        try:
            codecs.lookup(encoding)
        except LookupError:
            notes.append(f"unknown encoding {encoding!r} read as UTF-8")
            encoding = None
    try:
        return data.decode(encoding or "utf-8"), notes
    except UnicodeDecodeError as exc:
        notes.append(f"bytes that are not {exc.encoding} replaced by U+FFFD (first at byte {exc.start})")
        return data.decode(encoding or "utf-8", errors="replace"), notes


def _sanitise(data: bytes) -> tuple[bytes, list[str]]:
    """``data`` as UTF-8 XML without its declaration and without characters XML 1.0 forbids, plus notes.

    Line numbers do not change (the declaration is removed in place). Notes say what was replaced,
    e.g. ``"2 characters not allowed in XML replaced by U+FFFD"``.
    """
    text, notes = _decode(data)
    text = _DECLARATION.sub(r"\1", text.lstrip("\ufeff"), count=1)
    text, bad = _BAD_CHARS.subn("\ufffd", text)
    refs = 0

    def fix_ref(match: re.Match[str]) -> str:
        nonlocal refs
        hex_digits, decimal = match.groups()
        if _is_xml_char(int(hex_digits, 16) if hex_digits else int(decimal)):
            return match.group(0)
        refs += 1
        return "&#xFFFD;"

    text = _CHAR_REF.sub(fix_ref, text)
    if bad or refs:
        notes.append(f"{bad + refs} characters not allowed in XML replaced by U+FFFD")
    return text.encode("utf-8"), notes


def _message(child: ET.Element, tag: str) -> str:
    return child.get("message") or (child.text or "").strip() or child.get("type") or tag


def _case(case: ET.Element, suite_name: str | None) -> _Case:
    """Id and executions of one complete ``<testcase>``.

    A failed testcase is its ``<failure>`` / ``<error>`` execution followed by its ``<rerun*>`` ones; a
    passed or skipped one is its ``<flaky*>`` executions followed by the final outcome.
    """
    classname = case.get("classname")
    if classname is None:
        classname = suite_name or ""
    runs: list[tuple[TestState, str]] = []
    problems: list[str] = []
    skipped = False
    for child in case:
        tag = _strip_ns(child.tag) if isinstance(child.tag, str) else ""
        if tag in ("failure", "error"):
            problems.append(_message(child, tag))
        elif tag in _RERUN_TAGS:
            runs.append((TestState.FAIL, f"{tag}: {_message(child, tag)}"))
        elif tag == "skipped":
            skipped = True
    if problems:
        runs.insert(0, (TestState.FAIL, "\n".join(problems)))
    else:
        runs.append((TestState.SKIP if skipped else TestState.PASS, ""))
    return junit_test_id(classname, case.get("name", "")), runs


def _pull_cases(data: bytes) -> tuple[list[_Case], tuple[int, str] | None]:
    """Testcases of a whole file with the streaming parser; stops at the first error.

    Returns:
        (testcases completed before any error, ``(line, parser error text)`` or None when well-formed).
    """
    parser: ET.XMLPullParser[Any] = ET.XMLPullParser(events=("start", "end"))
    suites: list[str] = []
    cases: list[_Case] = []

    def drain() -> None:
        # read_events() re-raises, in order, a ParseError that feed()/close() queued: every event
        # before it has been handled by then, so complete testcases before the damage are kept.
        for pair in parser.read_events():
            event, elem = cast("tuple[str, ET.Element]", pair)  # "start" / "end" events carry elements
            tag = _strip_ns(elem.tag)
            if tag == "testsuite":
                if event == "start":
                    suites.append(elem.get("name", ""))
                elif suites:
                    suites.pop()
            elif tag == "testcase" and event == "end":
                cases.append(_case(elem, suites[-1] if suites else None))
                elem.clear()  # CDATA output and stack traces can be large

    try:
        parser.feed(data)
        drain()
        parser.close()  # raises on a file cut off before its root element closed
        drain()
    except ET.ParseError as exc:
        return cases, (getattr(exc, "position", (1, 0))[0], str(exc))
    return cases, None


def _suite_tags(data: bytes) -> list[tuple[int, str | None]]:
    """``(offset, name)`` of every ``<testsuite>`` start tag and ``(offset, None)`` of every end tag."""
    tags: list[tuple[int, str | None]] = []
    for match in _SUITE_RE.finditer(data):
        closing, attrs, empty = match.groups()
        if closing:
            tags.append((match.start(), None))
        elif not empty:
            try:
                name = ET.fromstring(b"<s" + attrs + b"/>").get("name", "")
            except ET.ParseError:
                name = ""
            tags.append((match.start(), name))
    return tags


def _case_elements(data: bytes) -> Iterator[tuple[int, bytes | None]]:
    """``(offset, element bytes or None)`` for every ``<testcase`` of ``data``, in order.

    An element runs from its start tag to a self-closing end or to the first ``</testcase>`` before the
    next ``<testcase``; None when there is no such end (broken start tag, cut off, damaged end tag).
    Every byte belongs to at most one element, so the work is linear in the size of the file.
    """
    starts = [m.start() for m in _CASE_START.finditer(data)]
    for number, start in enumerate(starts):
        limit = starts[number + 1] if number + 1 < len(starts) else len(data)
        tag = _CASE_TAG.match(data, start, limit)
        if tag is None:
            yield start, None
        elif tag.group(1):
            yield start, data[start : tag.end()]
        else:
            end = _CASE_END.search(data, tag.end(), limit)
            yield start, None if end is None else data[start : end.end()]


def _salvage_cases(data: bytes, warnings: list[str]) -> list[_Case]:
    """Every ``<testcase>`` element of a damaged file that parses on its own; one warning per lost one.

    The classname fallback (innermost enclosing ``<testsuite name>``) is followed through the suite
    tags met before each element.
    """
    suite_tags = iter(_suite_tags(data))
    pending = next(suite_tags, None)
    stack: list[str] = []
    cases: list[_Case] = []
    newlines = [m.start() for m in re.finditer(rb"\n", data)]
    dropped = 0
    for start, element in _case_elements(data):
        while pending is not None and pending[0] < start:
            if pending[1] is not None:
                stack.append(pending[1])
            elif stack:
                stack.pop()
            pending = next(suite_tags, None)
        try:
            if element is None:
                raise ET.ParseError("its tags end nowhere before the next testcase or the end of the file")
            cases.append(_case(ET.fromstring(element), stack[-1] if stack else None))
        except ET.ParseError as exc:
            dropped += 1
            if dropped <= _DROPPED_WARNINGS:
                line = bisect.bisect_left(newlines, start) + 1
                reason = str(exc).rsplit(": line ", 1)[0]  # the position inside the element alone means nothing
                warnings.append(f"line {line}: testcase dropped, it cannot be read on its own ({reason})")
    if dropped > _DROPPED_WARNINGS:
        warnings.append(f"{dropped - _DROPPED_WARNINGS} more testcases dropped")
    return cases


def _read_file(path: str, raw: bytes, builder: ResultBuilder) -> tuple[int, str | None]:
    """Feed one XML file's testcases into ``builder``; returns (testcases read, error text or None).

    Warnings about the file (replaced characters, damage, dropped testcases) go to ``builder``.
    """
    data, notes = _sanitise(raw)
    for note in notes:
        builder.warn(f"{path}: {note}")
    cases, error = _pull_cases(data)
    if error is not None:
        line, reason = error
        dropped: list[str] = []
        salvaged = _salvage_cases(data, dropped)
        if len(salvaged) >= len(cases):
            cases = salvaged
        # An error on the last line means the input ended early; anywhere else the XML is broken.
        damage = "truncated" if line >= data.count(b"\n") + 1 else "malformed"
        if cases:
            builder.warn(f"{path}: {damage} at line {line}, {len(cases)} testcases recovered ({reason})")
            for note in dropped:
                builder.warn(f"{path}: {note}")
        else:
            builder.warn(f"{path}: unreadable at line {line}, no testcase recovered ({reason})")
    for test_id, runs in cases:
        for state, message in runs:
            builder.add(test_id, state, message)
    return len(cases), None if error is None else f"{path}: line {error[0]}: {error[1]}"


@register("junit")
def parse_junit(output: str, files: Mapping[str, bytes], *, root_dir: str | None = None) -> ParseResult:
    """Parse JUnit XML result files into a :class:`ParseResult` (ids and rules: module docstring).

    Args:
        output: the command output; unused (JUnit results live in files), accepted for the common
            :data:`~pytest_mobilebench.parsers.Parser` signature.
        files: ``{relative path: bytes}``; keys ending in ``.xml`` are parsed, others ignored.
        root_dir: unused (JUnit ids contain no paths); accepted so all parsers share one call shape.

    Raises:
        ParseError: no ``.xml`` file among ``files``, or every XML file is unreadable and no testcase
            was recovered; the message names the first bad file and its line.
    """
    del output, root_dir
    builder = ResultBuilder()
    xml_paths = sorted(p for p in files if p.lower().endswith(".xml"))
    others = sorted(p for p in files if not p.lower().endswith(".xml"))
    if not xml_paths:
        listed = ", ".join(others[:5]) or "no files at all"
        raise ParseError(f"junit: no .xml result file among the result files ({listed})")
    if others:
        builder.warn(f"ignored {len(others)} non-XML result file(s): {', '.join(others[:5])}")
    errors: list[str] = []
    usable = 0
    for path in xml_paths:
        count, error = _read_file(path, files[path], builder)
        if error is not None:
            errors.append(error)
        usable += bool(count) or error is None
    if not usable:
        raise ParseError(f"junit: no usable result file; first error: {errors[0]}")
    return builder.build()


#: Gradle's test task summary, e.g. ``9 tests completed, 3 failed, 1 skipped`` (printed only when a test failed).
_CONSOLE_SUMMARY: Final = re.compile(
    r"^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?[ \t\r]*$", re.MULTILINE
)


@register_console("junit")
def gradle_console_counts(output: str) -> tuple[int, int] | None:
    """``(completed - failed - skipped, failed)`` summed over Gradle's summary lines, None without one."""
    matches = _CONSOLE_SUMMARY.findall(output)
    if not matches:
        return None
    failed = sum(int(f) for _, f, _ in matches)
    return sum(int(n) - int(f) - int(k or 0) for n, f, k in matches), failed
