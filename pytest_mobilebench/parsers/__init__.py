"""Log parsers: turn a test run's output and result files into per-test states.

One parser per result format, registered by name:

* ``"junit"`` (:mod:`.junit`): Gradle ``build/test-results/**/TEST-*.xml`` (Android, SPEC section 1).
* ``"flutter"`` (:mod:`.flutter`): the ``flutter test --machine`` JSON event stream in the output text.
* ``"jest"`` (:mod:`.jest`): a ``jest --json`` report, from a ``.json`` result file or the output text.

A parser is a pure function ``(output: str, files: Mapping[str, bytes]) -> ParseResult`` where ``files``
maps paths relative to the repository to the bytes the run left there. All registered parsers also take
the keyword ``root_dir`` (the repository's absolute path where the tests ran), used by the formats whose
ids contain file paths. Test id formats are documented in each module and in ``docs/test-ids.md``.

Usage::

    from pytest_mobilebench.parsers import get_parser
    result = get_parser("jest")(output_text, {"jest-results.json": data}, root_dir="/testbed")
    result.tests["src/a.test.ts::math > adds"]  # TestState.PASS
    console_counts("jest", output_text)          # (3, 1): what jest's own "Tests:" line said, or None
"""

from __future__ import annotations

# Importing the format modules registers them.
from pytest_mobilebench.parsers import flutter as flutter
from pytest_mobilebench.parsers import instrumentation as instrumentation
from pytest_mobilebench.parsers import jest as jest
from pytest_mobilebench.parsers import junit as junit
from pytest_mobilebench.parsers._core import (
    PARSERS,
    ConsoleCounter,
    ParseError,
    Parser,
    ParseResult,
    ResultBuilder,
    console_counts,
    get_parser,
    register,
    register_console,
    relative_to_root,
    strip_ansi,
)

__all__ = [
    "PARSERS",
    "ConsoleCounter",
    "ParseError",
    "ParseResult",
    "Parser",
    "ResultBuilder",
    "console_counts",
    "get_parser",
    "register",
    "register_console",
    "relative_to_root",
    "strip_ansi",
]
