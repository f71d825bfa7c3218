"""Known-answer canaries: two test methods the harness writes into each graded method's test class.

For every graded method ``C#m`` (q and each of Q) the harness adds to the source of ``C`` (after the
candidate's patch and p_t, before the build) ``canary_pass_<nonce>`` (asserts and passes) and
``canary_fail_<nonce>`` (fails on ``org.junit.Assert.fail("mobilebench canary <nonce>")``), and selects
them in the SAME ``am instrument`` call as ``m``: ``-e class C#m,C#canary_pass_<nonce>,C#canary_fail_<nonce>``.
The nonce is random per build (12 hex digits) and drawn until JUnit 4's default method order
(``MethodSorters.DEFAULT``: by ``String.hashCode`` of the name, :func:`java_hash`) runs the failing canary
(and, when a draw allows it, both) AFTER every graded method of its class: code under test that forges
``m``'s result and halts the process then never lets it run, and a forger must know its name.

:func:`canary_problems` judges a run's canary records (pure): in a finished run both must be there, the
passing one passed and the failing one ended on an assertion whose message names the nonce; anything
else is the runner's word being replaced (``runner_compromised``). Planting: :func:`plant` returns the
patch that adds them (the workspace applies it like any other patch, ``apply.canaries.log``).

What this does not stop (an in-process candidate): code under test can read its own test class by
reflection (``getDeclaredMethods``, or the class file's bytes), learn both names and the nonce, and print
a complete stream with the right structure and outcomes before halting. The canaries and
:func:`~pytest_mobilebench.parsers.instrumentation.protocol_problems` defeat every forgery that does not
do that; README "Threat model" says so.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from pytest_mobilebench.parsers.instrumentation import (
    InstrumentationRun,
    TestStatus,
    is_assertion,
)

__all__ = ["CanaryPair", "CanaryPlan", "PlantError", "canary_problems", "java_hash", "make_plan", "plant"]

_IDENT: Final = re.compile(r"^[A-Za-z_$][\w$]*$")
_NONCE_TRIES: Final = 20000
_BOTH_TRIES: Final = 1000


class PlantError(ValueError):
    """The canaries cannot be written (the class's source is missing, ambiguous or not parseable)."""


def java_hash(text: str) -> int:
    """Java's ``String.hashCode`` (signed 32-bit) of ``text`` (over its UTF-16 code units)."""
    h = 0
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] | units[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


@dataclasses.dataclass(frozen=True)
class CanaryPair:
    """The two canaries of one graded method ``target`` (test ids ``C#name``)."""

    target: str
    passing: str
    failing: str
    message: str

    @property
    def selection(self) -> tuple[str, str, str]:
        """What ``am instrument -e class`` selects: the target, then both canaries."""
        return (self.target, self.passing, self.failing)


@dataclasses.dataclass(frozen=True)
class CanaryPlan:
    """The canaries of one build: nonce, the pair of every graded method, and whether the nonce puts
    the failing canary after every target of its class in JUnit 4's default order (``ordered``)."""

    nonce: str
    pairs: Mapping[str, CanaryPair]
    ordered: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (``canaries.json``)."""
        return {
            "nonce": self.nonce,
            "ordered": self.ordered,
            "pairs": {k: dataclasses.asdict(v) for k, v in self.pairs.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CanaryPlan:
        """Inverse of :meth:`to_dict`."""
        return cls(str(data["nonce"]), {k: CanaryPair(**v) for k, v in data["pairs"].items()}, bool(data["ordered"]))


def _pair(target: str, nonce: str) -> CanaryPair:
    cls = target.split("#", 1)[0]
    return CanaryPair(target, f"{cls}#canary_pass_{nonce}", f"{cls}#canary_fail_{nonce}", f"mobilebench canary {nonce}")


def make_plan(targets: Sequence[str], *, token: Callable[[], str] = lambda: secrets.token_hex(6)) -> CanaryPlan:
    """A plan for ``targets`` (``pkg.Class#method``): fresh nonces are drawn (at most 20000) until both
    canaries sort after every target in JUnit 4's default order; failing that (1000 more draws after the
    first one that puts the failing canary after them), that first one; failing that too (a target's hash near the top
    of the int range), ``ordered`` is False.

    Raises:
        PlantError: a target is not ``pkg.Class#method`` with a plain identifier as the method.
    """
    for target in targets:
        cls, _, method = target.partition("#")
        if not method or not _IDENT.match(method) or "$" in cls:
            raise PlantError(f"{target}: canaries need a top-level class and a plain method name")
    bar = max(java_hash(t.partition("#")[2]) for t in targets)  # one nonce for all classes: above every target
    fallback: str | None = None
    nonce = token()
    budget = _NONCE_TRIES
    draw = 0
    while draw < budget:
        fail_after = java_hash(f"canary_fail_{nonce}") > bar
        if fail_after and java_hash(f"canary_pass_{nonce}") > bar:
            fallback = nonce
            break
        if fail_after and fallback is None:
            fallback, budget = (
                nonce,
                min(budget, draw + _BOTH_TRIES),
            )  # the failing one after: look a little longer for both
        nonce, draw = token(), draw + 1
    chosen = fallback or nonce
    return CanaryPlan(chosen, {t: _pair(t, chosen) for t in targets}, fallback is not None)


# ---------------------------------------------------------------------------------------------- planting


class _Masker:
    """Blanks comments and string / char literals of Java or Kotlin source (same length, newlines kept), so
    that braces can be matched; Kotlin string templates (``"${ ... }"``, which may nest strings) are part
    of their literal."""

    def __init__(self, text: str, kotlin: bool) -> None:
        self.text, self.kotlin, self.out = text, kotlin, list(text)

    def blank(self, i: int, j: int) -> None:
        for k in range(i, min(j, len(self.text))):
            if self.out[k] != "\n":
                self.out[k] = " "

    def code(self, i: int, *, template: bool = False) -> int:
        """Scan code from ``i``; in a template, return the index of its closing ``}``."""
        text, n, depth = self.text, len(self.text), 0
        while i < n:
            if text.startswith("//", i):
                j = text.find("\n", i)
                j = n if j < 0 else j
            elif text.startswith("/*", i):
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
            elif text[i] in "\"'":
                j = self.literal(i)
            else:
                if template and text[i] == "{":
                    depth += 1
                elif template and text[i] == "}":
                    if depth == 0:
                        return i
                    depth -= 1
                i += 1
                continue
            self.blank(i, j)
            i = j
        return n

    def literal(self, i: int) -> int:
        """The index just after the string / char literal starting at ``i``."""
        text, n = self.text, len(self.text)
        quote = '"""' if text.startswith('"""', i) else text[i]
        j = i + len(quote)
        while j < n:
            if text.startswith(quote, j):
                return j + len(quote)
            if quote != '"""' and text[j] == "\n":
                return j
            if quote != '"""' and text[j] == "\\":
                j += 2
            elif self.kotlin and quote != "'" and text.startswith("${", j):
                j = self.code(j + 2, template=True) + 1
            else:
                j += 1
        return n


def _mask(text: str, kotlin: bool = False) -> str:
    """``text`` with comments and string / char literals blanked (same length), for brace matching."""
    masker = _Masker(text, kotlin)
    masker.code(0)
    return "".join(masker.out)


def _closing_brace(text: str, simple: str, kotlin: bool) -> int:
    """Index of the ``}`` closing top-level class ``simple`` in Java / Kotlin source ``text``."""
    masked = _mask(text, kotlin)
    found = list(re.finditer(rf"\b(?:class|object)\s+{re.escape(simple)}\b", masked))
    if len(found) != 1:
        raise PlantError(f"{len(found)} declarations of class {simple}")
    open_at = masked.find("{", found[0].end())
    if open_at < 0:
        raise PlantError(f"class {simple} has no body")
    depth = 0
    for i in range(open_at, len(masked)):
        depth += {"{": 1, "}": -1}.get(masked[i], 0)
        if depth == 0:
            return i
    raise PlantError(f"class {simple}: unbalanced braces")


def _methods(pair: CanaryPair, kotlin: bool) -> str:
    passing, failing = pair.passing.split("#", 1)[1], pair.failing.split("#", 1)[1]
    token = pair.message.rsplit(" ", 1)[1]
    if kotlin:
        return (
            f'\n    @org.junit.Test\n    fun {passing}() {{ org.junit.Assert.assertEquals("{token}", "{token}") }}\n'
            f'\n    @org.junit.Test\n    fun {failing}() {{ org.junit.Assert.fail("{pair.message}") }}\n'
        )
    return (
        f'\n    @org.junit.Test\n    public void {passing}() {{ org.junit.Assert.assertEquals("{token}", '
        f'"{token}"); }}\n'
        f'\n    @org.junit.Test\n    public void {failing}() {{ org.junit.Assert.fail("{pair.message}"); }}\n'
    )


def source_candidates(cls: str) -> list[str]:
    """Glob patterns of the source files that may declare ``cls`` (``pkg.Class`` -> ``**/pkg/Class.java|.kt``)."""
    stem = cls.replace(".", "/")
    return [f"**/{stem}.java", f"**/{stem}.kt"]


def plant(plan: CanaryPlan, sources: Mapping[str, bytes], is_test_path: Callable[[str], bool]) -> str:
    """The unified diff adding every pair of ``plan`` to its class, given the workspace's candidate files
    (``{path: bytes}`` matched by :func:`source_candidates`). Only test paths count: a production file
    declaring the same class (the shadowing attempt) is not where the harness writes.

    Raises:
        PlantError: a class has no, or more than one, test source file, or its body is not found.
    """
    by_class: dict[str, list[CanaryPair]] = {}
    for pair in plan.pairs.values():
        by_class.setdefault(pair.target.split("#", 1)[0], []).append(pair)
    diffs = []
    for cls, pairs in sorted(by_class.items()):
        stem = cls.replace(".", "/")
        files = sorted(p for p in sources if is_test_path(p) and p.endswith((f"/{stem}.java", f"/{stem}.kt")))
        if len(files) != 1:
            raise PlantError(f"{cls}: {len(files)} test source file(s) declare it ({', '.join(files) or 'none'})")
        path = files[0]
        try:
            text = sources[path].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PlantError(f"{path}: not UTF-8 ({exc})") from exc
        at = _closing_brace(text, cls.rsplit(".", 1)[-1], path.endswith(".kt"))
        body = _methods(pairs[0], path.endswith(".kt"))  # the methods of one class share their pair
        new = text[:at] + body + text[at:]
        diffs.append(
            "".join(
                difflib.unified_diff(
                    text.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
                )
            )
        )
    return "".join(d if d.endswith("\n") else d + "\n" for d in diffs)


# ---------------------------------------------------------------------------------------------- judging


def _order(run: InstrumentationRun, pair: CanaryPair) -> bool:
    """Whether a canary started after the target's end (the runner was still writing after q)."""
    target_end = next((i for i, e in enumerate(run.events) if e.test_id == pair.target and not e.is_start), None)
    return target_end is not None and any(
        e.is_start and e.test_id in (pair.passing, pair.failing) for e in run.events[target_end + 1 :]
    )


def _wrong(run: InstrumentationRun, pair: CanaryPair, test_id: str) -> str | None:
    """Why an ENDED canary record is not its known answer (None when it is)."""
    record = run.tests[test_id]
    if record.starts != 1 or record.ends != 1:
        return f"{test_id}: {record.starts} start(s) and {record.ends} end(s)"
    if test_id == pair.passing:
        return None if record.status is TestStatus.PASSED else f"{test_id} must pass, it is {record.status.value}"
    first_line = record.stack.splitlines()[0] if record.stack else ""
    if record.status is TestStatus.FAILED and is_assertion(record.first_exception) and pair.message in first_line:
        return None
    return (
        f"{test_id} must fail on its assertion '{pair.message}', it is {record.status.value} "
        f"({first_line[:120] or 'no stack'})"
    )


def canary_problems(run: InstrumentationRun, pair: CanaryPair) -> tuple[list[str], bool]:
    """Judge the canaries of one run. Returns ``(problems, trusted_after_target)``.

    ``problems`` (the runner's word was replaced): a canary that ended with another outcome than its
    known answer; in a finished run (:attr:`InstrumentationRun.complete`) also a canary missing. In a run
    that crashed or was cut off, the test that was running when it stopped (the last one started, when
    it never ended or the process crashed) is not judged, and a missing canary is not a problem: the run
    simply never reached it. ``trusted_after_target``: a canary started after the target ended, so the
    runner itself was still writing after q (needed before q's own record decides a cut-off run).
    """
    problems = []
    crashed = run.process_crashed or run.aborted is not None
    last = next((e.test_id for e in reversed(run.events) if e.is_start), None)
    for test_id in (pair.passing, pair.failing):
        record = run.tests.get(test_id)
        if record is None or record.ends == 0:
            if run.complete:
                problems.append(f"{test_id} missing from a finished run")
            continue
        if test_id == last and crashed:
            continue
        why = _wrong(run, pair, test_id)
        if why:
            problems.append(why)
    return problems, _order(run, pair)
