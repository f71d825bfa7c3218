"""JUnit XML parser: Gradle ``build/test-results/**/TEST-*.xml`` (and any JUnit-style XML report).

Input: the result files, ``{relative path: bytes}``; every key ending in ``.xml`` is read, in sorted
path order (other keys are ignored with one warning). The command output text is not used.

Accepted shapes: a ``<testsuite>`` root (Gradle, one file per class), a ``<testsuites>`` root, and
``<testsuite>`` elements nested in each other (Ant / jest-junit style). Per ``<testcase>``:

* a ``<failure>`` or ``<error>`` child -> ``FAIL`` (message: the child's ``message`` attribute, else its
  text; several children are joined by a newline);
* else a ``<skipped>`` child -> ``SKIP`` (JUnit ``@Ignore``, failed assumptions);
* else ``PASS``.

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

Damage: a file cut off mid-element (a crashed or killed test JVM) keeps every ``<testcase>`` whose end
tag was read; the partial one is dropped and a warning says
``"<file>: truncated at line L, N testcases recovered (<parser error>)"`` (``malformed`` instead of
``truncated`` when the error is not on the last line: the testcases before it are kept the same way). A file that is not XML at all gives a warning
and the other files are still parsed. :class:`ParseError` only when no file yields anything (every
file unreadable, or no XML file at all). Duplicate ids follow the rule of
:class:`~pytest_mobilebench.parsers.ResultBuilder` (``FAIL > PASS > SKIP``, with a warning).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any, cast

from pytest_mobilebench.parsers._core import ParseError, ParseResult, ResultBuilder, register
from pytest_mobilebench.states import TestState

__all__ = ["parse_junit", "junit_test_id"]


def junit_test_id(classname: str, name: str) -> str:
    """The test id of one ``<testcase>``: ``f"{classname}#{name}"`` (see the module docstring)."""
    return f"{classname}#{name}"


def _strip_ns(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if "}" in tag else tag


def _case_outcome(case: ET.Element) -> tuple[TestState, str]:
    """State and message of one complete ``<testcase>`` element."""
    problems: list[str] = []
    skipped = False
    for child in case:
        tag = _strip_ns(child.tag)
        if tag in ("failure", "error"):
            text = child.get("message") or (child.text or "").strip() or child.get("type") or tag
            problems.append(text)
        elif tag == "skipped":
            skipped = True
    if problems:
        return TestState.FAIL, "\n".join(problems)
    if skipped:
        return TestState.SKIP, ""
    return TestState.PASS, ""


def _parse_file(data: bytes, builder: ResultBuilder) -> tuple[int, tuple[int, str] | None]:
    """Feed one XML file into ``builder``.

    Returns:
        (number of testcases recovered, ``(line, parser error text)`` or None when the file is well-formed).
    """
    parser: ET.XMLPullParser[Any] = ET.XMLPullParser(events=("start", "end"))
    suites: list[str] = []
    recovered = 0

    def drain() -> None:
        # read_events() re-raises, in order, a ParseError that feed()/close() queued: every event
        # before it has been handled by then, so complete testcases before the damage are kept.
        nonlocal recovered
        for pair in parser.read_events():
            event, elem = cast("tuple[str, ET.Element]", pair)  # "start" / "end" events carry elements
            tag = _strip_ns(elem.tag)
            if event == "start":
                if tag == "testsuite":
                    suites.append(elem.get("name", ""))
                continue
            if tag == "testsuite":
                if suites:
                    suites.pop()
            elif tag == "testcase":
                classname = elem.get("classname")
                if classname is None:
                    classname = suites[-1] if suites else ""
                state, message = _case_outcome(elem)
                builder.add(junit_test_id(classname, elem.get("name", "")), state, message)
                recovered += 1
                elem.clear()  # CDATA output and stack traces can be large

    error: ET.ParseError | None = None
    try:
        parser.feed(data)
        drain()
        parser.close()  # raises on a file cut off before its root element closed
        drain()
    except ET.ParseError as exc:
        error = exc
    if error is None:
        return recovered, None
    line = getattr(error, "position", (0, 0))[0]
    return recovered, (line, str(error))


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
        count, error = _parse_file(files[path], builder)
        if error is None:
            usable += 1
            continue
        line, reason = error
        errors.append(f"{path}: line {line}: {reason}")
        # An error on the last line means the input ended early; anywhere else the XML is broken.
        damage = "truncated" if line >= files[path].count(b"\n") + 1 else "malformed"
        if count:
            usable += 1
            builder.warn(f"{path}: {damage} at line {line}, {count} testcases recovered ({reason})")
        else:
            builder.warn(f"{path}: unreadable at line {line}, no testcase recovered ({reason})")
    if not usable:
        raise ParseError(f"junit: no usable result file; first error: {errors[0]}")
    return builder.build()
