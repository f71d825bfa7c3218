"""Bug-fix evidence of a candidate, and the order the miner lists candidates in (pure).

A mined candidate is worth validating first when it looks like one bug fix: the message says so, it
references the issue it closes, and its change is small and focused. :func:`evidence` scores a commit from
its message and its non-test ``--numstat`` lines; :func:`ranked` sorts candidates by that score, highest
first, ties newest first (the history's order). Signals and weights (each named in the result):

* ``fix word in subject`` (+4): ``fix``, ``bug``, ``bugfix``, ``hotfix``, ``crash``, ``regression``, ``broken``
  (any inflection) in the first line; ``fix word in body`` (+1) when only the body has one;
* ``issue reference`` (+3): a closing keyword with an issue (``fixes #12``, ``closes org/repo#12``) or an
  issue URL (``/issues/12``);
* ``small focused diff`` (+2): at most 3 non-test files and 60 non-test lines; ``small diff`` (+1): at most
  10 files and 300 lines;
* ``feature/refactor/chore subject`` (-2): a conventional-commit type that is not a fix (``feat``,
  ``refactor``, ``chore``, ``docs``, ``style``, ``build``, ``ci``, ``perf``, ``test``) or a ``[NEW]`` /
  ``[IMPROVE]`` tag.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Final, TypeVar, final

from pytest_mobilebench.mining.gitsource import Commit, FileStat

__all__ = ["NO_EVIDENCE", "Evidence", "evidence", "ranked"]

_FIX_WORDS: Final = re.compile(
    r"\b(?:fix(?:e[sd]|ing)?|bug(?:fix(?:es)?|s)?|hotfix(?:es)?|crash(?:e[sd]|ing)?|regressions?|broken)\b",
    re.IGNORECASE,
)
_ISSUE_REF: Final = re.compile(
    r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?#\d+\b|/issues/\d+\b", re.IGNORECASE
)
_NOT_A_FIX: Final = re.compile(
    r"^(?:feat|feature|refactor|chore|docs|style|build|ci|perf|test)(?:\([^)]*\))?!?:|^\[(?:NEW|IMPROVE)\]",
    re.IGNORECASE,
)


@final
@dataclasses.dataclass(frozen=True)
class Evidence:
    """A commit's bug-fix evidence: ``score`` (sum of the signals' weights) and ``signals`` (their names)."""

    score: int
    signals: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """Plain builtins (provenance, report)."""
        return {"score": self.score, "signals": list(self.signals)}


def evidence(commit: Commit, source_files: Sequence[FileStat]) -> Evidence:
    """The evidence of ``commit`` whose non-test change is ``source_files`` (module docstring's weights)."""
    signals: list[tuple[str, int]] = []
    subject = commit.subject
    body = commit.message.strip()[len(subject) :]
    if _FIX_WORDS.search(subject):
        signals.append(("fix word in subject", 4))
    elif _FIX_WORDS.search(body):
        signals.append(("fix word in body", 1))
    if _ISSUE_REF.search(commit.message):
        signals.append(("issue reference", 3))
    lines = sum(f.added + f.removed for f in source_files)
    if len(source_files) <= 3 and lines <= 60:
        signals.append(("small focused diff", 2))
    elif len(source_files) <= 10 and lines <= 300:
        signals.append(("small diff", 1))
    if _NOT_A_FIX.search(subject) and not _FIX_WORDS.search(subject.split(":", 1)[0]):
        signals.append(("feature/refactor/chore subject", -2))
    return Evidence(sum(w for _, w in signals), tuple(name for name, _ in signals))


#: a candidate made without a scan's evidence (score 0, no signal)
NO_EVIDENCE: Final = Evidence(0, ())

T = TypeVar("T")


def ranked(items: Sequence[T], scores: Sequence[int]) -> list[T]:
    """``items`` (newest first) by score, highest first; equal scores keep their order (a stable sort)."""
    order = sorted(range(len(items)), key=lambda i: -scores[i])
    return [items[i] for i in order]
