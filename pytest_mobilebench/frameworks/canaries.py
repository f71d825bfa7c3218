"""Known-answer canaries for the Gradle / JUnit and Flutter runners (issue 17, item 1). Pure.

Each canary is written by the harness after the candidate's patch and the test patch, named with a per-run
random nonce, next to the graded tests, in the same runner process: one test that must fail on an
assertion and one that must pass. Jest has its own, with a result channel
(:mod:`pytest_mobilebench.frameworks.react_native.harness`).

* JUnit (Gradle): a class ``mobilebench.c<nonce>.Canary<nonce>Test`` in the test source set of the first
  graded test file's module (``<module>/src/test/java/...``, which Gradle's ``test`` / ``test<Variant>UnitTest``
  task of that module compiles and runs whatever filter the plan has not set: the plan runs the module's
  whole unit-test task). JUnit 4 unless the graded file uses ``org.junit.jupiter``. Its static initialiser
  loads every class the graded file imports (``Class.forName``, failures ignored), so their static
  initialisers run in the canary's JVM too. Ids: ``mobilebench.c<nonce>.Canary<nonce>Test#mustFail`` /
  ``#mustPass`` (:func:`pytest_mobilebench.parsers.junit.junit_test_id`).
* Flutter: ``<folder of the first graded file>/mbcanary_<nonce>_test.dart``, importing what the graded
  file imports (single-line ``import '...'`` directives, copied), added to the ``flutter test`` command.
  Ids: ``<path>::mobilebench canary <nonce> must fail`` / ``... must pass``.

:func:`canary_findings` is the check: exactly (FAIL, PASS) in the parsed results, else one finding
(``runner_compromised``, never resolved, never infra).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import secrets
from collections.abc import Mapping
from typing import Any, Final, final

from pytest_mobilebench.parsers.flutter import flutter_test_id
from pytest_mobilebench.parsers.junit import junit_test_id
from pytest_mobilebench.states import TestState

__all__ = ["CANARY_PARSERS", "Canary", "canary_findings", "flutter_canary", "junit_canary", "with_flutter_canary"]

#: the parsers whose runs get a canary file here (jest has its own harness: frameworks/react_native/harness.py)
CANARY_PARSERS: Final[frozenset[str]] = frozenset({"junit", "flutter"})

_SOURCE_SET: Final = re.compile(r"^(?P<module>(?:.*/)?)src/(?P<set>test\w*)/(?:java|kotlin)/")
_JVM_IMPORT: Final = re.compile(r"^\s*import\s+(?!static\s)([A-Za-z_][\w.]*\.[A-Z]\w*)\s*;?\s*$", re.M)
_DART_IMPORT: Final = re.compile(r"""^\s*import\s+(['"])[^'"\n]+\1[^;\n]*;\s*$""", re.M)


@final
@dataclasses.dataclass(frozen=True)
class Canary:
    """One canary file: repository path, text and the ``(must-fail id, must-pass id)`` it reports."""

    path: str
    source: str
    ids: tuple[str, str]
    nonce: str

    def to_dict(self) -> dict[str, Any]:
        """What re-grading needs: path, ids, nonce."""
        return {"path": self.path, "ids": list(self.ids), "nonce": self.nonce}


def junit_canary(test_file: str, text: str, nonce: str | None = None) -> Canary | None:
    """The JUnit canary for the module of ``test_file`` (``app/src/test/java/a/FooTest.kt``), or None when
    the file is not in a ``src/test*/java|kotlin`` source set."""
    match = _SOURCE_SET.match(test_file)
    if match is None:
        return None
    nonce = nonce or secrets.token_hex(8)
    package, cls = f"mobilebench.c{nonce}", f"Canary{nonce}Test"
    path = f"{match['module']}src/{match['set']}/java/mobilebench/c{nonce}/{cls}.java"
    jupiter = "org.junit.jupiter" in text
    test_import = "org.junit.jupiter.api.Test" if jupiter else "org.junit.Test"
    assert_import = "org.junit.jupiter.api.Assertions.assertEquals" if jupiter else "org.junit.Assert.assertEquals"
    loads = "".join(f'    try {{ Class.forName("{name}"); }} catch (Throwable e) {{ }}\n'
                    for name in dict.fromkeys(_JVM_IMPORT.findall(text)))  # fmt: skip
    value = int(nonce[:6], 16)
    source = (
        "// mobilebench known-answer canary: written by the harness, never by the project\n"
        f"package {package};\n\nimport {test_import};\nimport static {assert_import};\n\n"
        f"public class {cls} {{\n  static {{\n{loads}  }}\n\n"
        f"  @Test\n  public void mustFail() {{ assertEquals({value}, {value + 1}); }}\n\n"
        f"  @Test\n  public void mustPass() {{ assertEquals({value}, {value}); }}\n}}\n"
    )
    ids = (junit_test_id(f"{package}.{cls}", "mustFail"), junit_test_id(f"{package}.{cls}", "mustPass"))
    return Canary(path=path, source=source, ids=ids, nonce=nonce)


def flutter_canary(test_file: str, text: str, nonce: str | None = None) -> Canary:
    """The Flutter canary next to ``test_file`` (``test/counter_test.dart``), importing what it imports."""
    nonce = nonce or secrets.token_hex(8)
    path = posixpath.join(posixpath.dirname(test_file), f"mbcanary_{nonce}_test.dart")
    imports = [m.group(0).strip() for m in _DART_IMPORT.finditer(text)]
    own = "import 'package:flutter_test/flutter_test.dart';"
    lines = ["// mobilebench known-answer canary: written by the harness, never by the project",
             *dict.fromkeys([own, *(i for i in imports if "flutter_test.dart" not in i)])]  # fmt: skip
    fail, ok = f"mobilebench canary {nonce} must fail", f"mobilebench canary {nonce} must pass"
    value = int(nonce[:6], 16)
    lines += ["", "void main() {", f"  test('{fail}', () {{ expect({value}, {value + 1}); }});",
              f"  test('{ok}', () {{ expect({value}, {value}); }});", "}", ""]  # fmt: skip
    return Canary(
        path=path, source="\n".join(lines), ids=(flutter_test_id(path, fail), flutter_test_id(path, ok)), nonce=nonce
    )


def with_flutter_canary(command: str, canary: Canary) -> str | None:
    """The planned ``flutter test --machine <files>`` command with the canary's path added after
    ``--machine``; None for a command of another shape (a custom ``test_command``)."""
    if command.count("flutter test --machine ") != 1:
        return None
    return command.replace("flutter test --machine ", f"flutter test --machine {canary.path} ", 1)


def canary_findings(tests: Mapping[str, TestState], ids: tuple[str, str] | list[str]) -> list[str]:
    """``[]`` when the canaries report exactly (FAIL, PASS) in ``tests``, else the one finding."""
    got = tuple(tests.get(i) for i in ids)
    if got == (TestState.FAIL, TestState.PASS):
        return []
    shown = tuple(s.value if s is not None else "missing" for s in got)
    return [f"canary outcomes are {shown} in the report, expected exactly (FAIL, PASS)"]
