"""The agent's trajectory as JSON lines, written as the run goes (each line flushed), so an interrupted run keeps
every step it finished.

Every line is an object with ``step`` (the model call it belongs to; 0 before the first), ``role``
(``system`` / ``user`` / ``assistant`` / ``tool`` / ``harness``) and ``t`` (seconds since the run started), then
by role:

- ``system`` / ``user``: ``message`` (the text sent; ``event: "format_reminder"`` for the harness's reminder).
- ``assistant``: ``message`` (its text or None), ``tool_calls`` (``[{"id", "name", "arguments"}]``, the
  arguments as the raw text the model sent), ``usage`` (``tokens_in``, ``tokens_out``, ``seconds``,
  ``usage_reported``, ``cost_usd`` so far or None when unpriced).
- ``tool``: ``tool_call_id``, ``tool``, and for ``bash``: ``command``, ``exit_code``, ``output`` (as shown to the
  model), ``timed_out``, ``seconds``; for ``submit``: ``note``; for a call that could not run: ``error``.
- ``harness``: ``event`` = ``start`` (model, limits, price or ``unpriced``), ``retry`` (a failed endpoint attempt:
  ``attempt``, ``kind``, ``error``, ``status``, ``wait_s``), ``end`` (``end``, ``usage``), ``aborted`` (an
  exception stopped the run: ``error``), ``note`` (``message``).

Text fields are cut (head and tail kept) at :data:`TEXT_CHARS` characters: the model's text is untrusted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final

from pytest_mobilebench.agents.shell import bound_output

__all__ = ["TEXT_CHARS", "Trajectory", "read_trajectory"]

TEXT_CHARS: Final = 200_000


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return bound_output(value, TEXT_CHARS)
    if isinstance(value, dict):
        return {str(k)[:200]: _bounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_bounded(v) for v in value]
    return value


class Trajectory:
    """An open trajectory file (``with Trajectory(path) as t: t.write(step, role, **fields)``); the parent folder
    is created; an existing file is replaced."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = self.path.open("w", encoding="utf-8")
        self._start = time.monotonic()
        self.lines = 0

    def write(self, step: int, role: str, **fields: Any) -> None:
        """Append one line and flush it."""
        line = {
            "step": step,
            "role": role,
            "t": round(time.monotonic() - self._start, 3),
            **{k: _bounded(v) for k, v in fields.items()},
        }
        # ASCII escapes: a lone surrogate the model sent is written as a \u escape, never an encoding error
        self._file.write(json.dumps(line, default=str) + "\n")
        self._file.flush()
        self.lines += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Trajectory:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def read_trajectory(path: Path) -> list[dict[str, Any]]:
    """The lines of a trajectory file; a torn last line (the process died mid-write) is dropped.

    Raises:
        ValueError: a line other than the last is not a JSON object (names the file and line).
    """
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    out = []
    for number, text in enumerate(lines, 1):
        try:
            value = json.loads(text)
        except ValueError:
            if number == len(lines):
                break
            raise ValueError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(value, dict):
            raise ValueError(f"{path}:{number}: not a JSON object")
        out.append(value)
    return out
