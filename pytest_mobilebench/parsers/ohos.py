"""HarmonyOS ``aa test`` output (Hypium / ArkXTest runner), parsed per test (pure).

The Hypium report printer (``OhReport``) writes, per spec (``it``)::

    OHOS_REPORT_SUM: 1                                  <- specs in the suite
    OHOS_REPORT_STATUS: class=CalcSuite
    OHOS_REPORT_STATUS: test=addsTwo
    OHOS_REPORT_STATUS_CODE: 1                          <- spec start
    OHOS_REPORT_STATUS: class=CalcSuite
    OHOS_REPORT_STATUS: stack=Error: expect 4 equals 3   <- only on -1 / -2
    OHOS_REPORT_STATUS: stream=Error in addsTwo, expect 4 equals 3
    OHOS_REPORT_STATUS: test=addsTwo
    OHOS_REPORT_STATUS_CODE: -2                         <- spec end
    OHOS_REPORT_STATUS: skipReason=...                  <- after a code 0: the spec was skipped
    OHOS_REPORT_RESULT: stream=Tests run: 1, Failure: 1, Error: 0, Pass: 0, Ignore: 0
    OHOS_REPORT_CODE: -1                                <- end of the run

End codes: ``0`` pass (or skipped, when a ``skipReason`` follows), ``-1`` error (an uncaught error in the
spec: not an assertion), ``-2`` failure (an ``expect`` assertion failed). A spec started but never ended,
or a run without ``OHOS_REPORT_CODE``, means the app or the runner died. Test id: ``"{class}#{test}"``.
Lines of other tools interleaved in the output are ignored; a value continues on following lines until
the next ``OHOS_REPORT_`` line.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any, Final

__all__ = ["OhosRun", "OhosStatus", "OhosTest", "parse_ohos"]


@enum.unique
class OhosStatus(str, enum.Enum):
    """Final status of one spec."""

    PASSED = "passed"
    FAILED = "failed"  # -2: an expect() assertion
    ERROR = "error"  # -1: an uncaught error
    SKIPPED = "skipped"
    INCOMPLETE = "incomplete"


_CODES: Final = {0: OhosStatus.PASSED, -1: OhosStatus.ERROR, -2: OhosStatus.FAILED}


@dataclasses.dataclass(frozen=True)
class OhosTest:
    """One spec: start / end counts, final status, the end block's ``stream`` and ``stack`` text."""

    __test__ = False

    test_id: str
    starts: int
    ends: int
    status: OhosStatus
    message: str
    stack: str

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {**dataclasses.asdict(self), "status": self.status.value}


@dataclasses.dataclass(frozen=True)
class OhosRun:
    """A whole ``aa test`` output: specs, ``OHOS_REPORT_SUM`` total, result code and summary stream."""

    tests: dict[str, OhosTest]
    declared: int | None
    result_code: int | None
    summary: str
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {
            "tests": {k: v.to_dict() for k, v in self.tests.items()},
            "declared": self.declared,
            "result_code": self.result_code,
            "summary": self.summary,
            "warnings": list(self.warnings),
        }


_LINE_RE: Final = re.compile(
    r"^(OHOS_REPORT_STATUS|OHOS_REPORT_RESULT): ([A-Za-z]+)=(.*)$"
    r"|^(OHOS_REPORT_STATUS_CODE|OHOS_REPORT_CODE|OHOS_REPORT_SUM): (-?\d+)\s*$"
    r"|^(OHOS_REPORT_\w+):"
)


class _Acc:
    def __init__(self) -> None:
        self.block: dict[str, str] = {}
        self.key: tuple[dict[str, str], str] | None = None
        self.starts: dict[str, int] = {}
        self.ends: dict[str, list[tuple[int, str, str]]] = {}
        self.skipped: set[str] = set()
        self.last: str | None = None
        self.result: dict[str, str] = {}
        self.result_code: int | None = None
        self.declared: int | None = None
        self.warnings: list[str] = []

    def status(self, key: str, value: str) -> None:
        if key == "skipReason" and "test" not in self.block and self.last is not None:
            self.skipped.add(self.last)
            self.key = None
            return
        self.block[key] = value
        self.key = (self.block, key)

    def code(self, code: int, lineno: int) -> None:
        cls, test = self.block.get("class"), self.block.get("test")
        if cls is None or test is None:
            self.warnings.append(f"output line {lineno}: status code {code} without class and test")
        else:
            test_id = f"{cls}#{test}"
            self.last = test_id
            if code == 1:
                self.starts[test_id] = self.starts.get(test_id, 0) + 1
                self.ends.setdefault(test_id, [])
            else:
                if code not in _CODES:
                    self.warnings.append(f"output line {lineno}: unknown status code {code} for {test_id}")
                self.starts.setdefault(test_id, 0)
                self.ends.setdefault(test_id, []).append(
                    (code, self.block.get("stream", ""), self.block.get("stack", ""))
                )
        self.block, self.key = {}, None

    def tests(self) -> dict[str, OhosTest]:
        out = {}
        for test_id, ends in self.ends.items():
            if ends:
                code, message, stack = ends[-1]
                status = _CODES.get(code, OhosStatus.ERROR)
                if status is OhosStatus.PASSED and test_id in self.skipped:
                    status = OhosStatus.SKIPPED
            else:
                status, message, stack = OhosStatus.INCOMPLETE, "", ""
            out[test_id] = OhosTest(
                test_id, self.starts.get(test_id, 0), len(ends), status, message.strip(), stack.strip()
            )
        return out


def parse_ohos(text: str) -> OhosRun:
    """Parse ``aa test`` Hypium output (see the module docstring). Never raises on damaged text."""
    acc = _Acc()
    for lineno, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        match = _LINE_RE.match(raw)
        if match is None:
            if acc.key is not None and raw.strip():
                target, key = acc.key
                target[key] += "\n" + raw
            continue
        if match.group(1) == "OHOS_REPORT_STATUS":
            acc.status(match.group(2), match.group(3))
        elif match.group(1) == "OHOS_REPORT_RESULT":
            acc.result[match.group(2)] = match.group(3)
            acc.key = (acc.result, match.group(2))
        elif match.group(4) == "OHOS_REPORT_STATUS_CODE":
            acc.code(int(match.group(5)), lineno)
        elif match.group(4) == "OHOS_REPORT_CODE":
            acc.result_code, acc.key = int(match.group(5)), None
        elif match.group(4) == "OHOS_REPORT_SUM":
            acc.declared, acc.key = int(match.group(5)), None
        else:
            acc.key = None
    return OhosRun(
        tests=acc.tests(),
        declared=acc.declared,
        result_code=acc.result_code,
        summary=acc.result.get("stream", "").strip(),
        warnings=tuple(acc.warnings),
    )
