"""The agent's prompt: a template file (the default ships in the package; ``--mb-agent-prompt PATH`` replaces
it), rendered with one instance's fields.

File format: UTF-8 text with ``string.Template`` fields (``$repo`` or ``${repo}``; ``$$`` is a literal ``$``),
so braces in code samples need no escaping. An optional line ``<!-- system -->`` starts the system message and
a line ``<!-- task -->`` starts the first user message; without markers the whole file is the user message.

Fields (:data:`FIELDS`, issue resolution's): ``problem_statement``, ``repo``, ``base_commit``, ``framework``,
``workdir`` (the work tree's path in the sandbox); a suite with other fields passes its own set and default
template to :func:`load_template` (device repair adds ``target`` and ``layout``; app generation:
:data:`pytest_mobilebench.suites.app_generation.live.FIELDS`). A field value is inserted as it is, never read as a
template itself (a problem statement holding ``$workdir`` stays as written).
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = ["DEFAULT_PROMPT", "FIELDS", "Prompt", "PromptError", "PromptTemplate", "load_template"]

DEFAULT_PROMPT: Final = Path(__file__).resolve().parent / "prompts" / "issue_resolution.md"
FIELDS: Final = frozenset({"problem_statement", "repo", "base_commit", "framework", "workdir"})
SYSTEM_MARK: Final = "<!-- system -->"
TASK_MARK: Final = "<!-- task -->"


class PromptError(ValueError):
    """A template that cannot be rendered: the message names the file, the line and the field."""


@dataclasses.dataclass(frozen=True)
class Prompt:
    """A rendered prompt: the system message (empty: none is sent) and the first user message."""

    system: str
    task: str

    def messages(self) -> list[dict[str, str]]:
        """The conversation's opening messages."""
        head = [{"role": "system", "content": self.system}] if self.system else []
        return [*head, {"role": "user", "content": self.task}]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _check(path: Path, text: str, fields: frozenset[str] = FIELDS) -> None:
    """Every ``$`` field is one of ``fields`` or ``$$``; else :class:`PromptError` naming file, line, field."""
    for match in string.Template.pattern.finditer(text):
        name = match.group("named") or match.group("braced")
        if match.group("invalid") is not None:
            raise PromptError(
                f"{path}:{_line_of(text, match.start())}: a '$' that is no field (write '$$' for a "
                f"literal '$'; fields: {', '.join(sorted(fields))})"
            )
        if name is not None and name not in fields:
            raise PromptError(
                f"{path}:{_line_of(text, match.start())}: unknown field '${name}' (fields: {', '.join(sorted(fields))})"
            )


@dataclasses.dataclass(frozen=True)
class PromptTemplate:
    """A checked template: ``path`` it came from, its ``system`` and ``task`` parts (unrendered), the ``fields``
    it was checked against."""

    path: Path
    system: str
    task: str
    fields: frozenset[str] = FIELDS

    def render(self, fields: Mapping[str, str]) -> Prompt:
        """The prompt for one instance.

        Raises:
            PromptError: a field the template uses is missing from ``fields`` (names the file and the field).
        """
        missing = sorted(self.fields - set(fields))
        used = {
            m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(self.system + self.task)
        }
        if used & set(missing):
            raise PromptError(f"{self.path}: no value for field(s) {', '.join(sorted(used & set(missing)))}")
        values = {k: str(v) for k, v in fields.items()}
        return Prompt(
            string.Template(self.system).substitute(values).strip(),
            string.Template(self.task).substitute(values).strip(),
        )


def _split(path: Path, text: str) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    marks = {i: line.strip() for i, line in enumerate(lines) if line.strip() in (SYSTEM_MARK, TASK_MARK)}
    if not marks:
        return "", text
    if list(marks.values()).count(SYSTEM_MARK) > 1 or list(marks.values()).count(TASK_MARK) != 1:
        raise PromptError(f"{path}: needs exactly one '{TASK_MARK}' line and at most one '{SYSTEM_MARK}' line")
    parts: dict[str, str] = {}
    bounds = [*sorted(marks), len(lines)]
    for start, end in zip(bounds, bounds[1:]):
        parts[marks[start]] = "".join(lines[start + 1 : end])
    if "".join(lines[: bounds[0]]).strip():
        raise PromptError(f"{path}:1: text before the first '{SYSTEM_MARK}' / '{TASK_MARK}' line")
    return parts.get(SYSTEM_MARK, ""), parts[TASK_MARK]


def load_template(
    path: Path | str | None = None, *, default: Path = DEFAULT_PROMPT, fields: frozenset[str] = FIELDS
) -> PromptTemplate:
    """The template in ``path`` (default ``default``: :data:`DEFAULT_PROMPT`, the issue-resolution one), checked
    against ``fields``.

    Raises:
        PromptError: unreadable file, misplaced markers, an unknown field or a stray ``$``.
    """
    path = Path(path) if path else default
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"{path}: cannot read the prompt template: {exc}") from None
    _check(path, text, fields)
    system, task = _split(path, text)
    if not task.strip():
        raise PromptError(f"{path}: the task part is empty")
    return PromptTemplate(path, system, task, fields)
