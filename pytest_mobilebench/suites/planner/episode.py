"""One episode: a task's fresh sandbox, its action space, the step limit, and the executor that turns a tool call
into structured feedback. Offline replay and the live agent loop both go through :meth:`Episode.call`.

Rules (MobilePA-Bench, seed 004, "Experimental Evaluation": N = 15 recalled tools, at most 15 steps):

* the action space starts as the recalled tools + :data:`~.recall.ALWAYS_AVAILABLE` + the task's skill loaders;
  a successful skill loader adds that skill's tools;
* a call to a tool outside the action space, an unknown tool, or arguments that do not match the schema is a
  failed step with an ``unavailable`` / ``invalid_arguments`` error and changes nothing;
* an error names its recovery tools (``set_toggle`` for a setting that is off, ``unlock_app`` for a locked
  app ...); they join the action space, as a phone offers "turn on location?" when an app needs it;
* a failed call is rolled back entirely (a SQLite savepoint), so a refused composite call leaves no partial write;
* steps after the 15th and calls after ``Finish`` are not executed; they are counted (``over_limit``,
  ``after_finish``) and graded as if absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_mobilebench.suites.planner.catalog import catalog
from pytest_mobilebench.suites.planner.recall import ALWAYS_AVAILABLE, recall_tools
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError
from pytest_mobilebench.suites.planner.tools.planner import SKILLS

__all__ = ["MAX_STEPS", "Call", "Episode", "Step", "TrajectoryError", "parse_trajectory"]

MAX_STEPS: Final = 15


class TrajectoryError(ValueError):
    """A recorded trajectory is not a list of ``{"tool": str, "arguments": object}`` (the message says where)."""


@dataclass(frozen=True)
class Call:
    """One recorded tool call: the tool's name and its arguments (a mapping, or the raw JSON text the model sent)."""

    tool: str
    arguments: Any


def parse_trajectory(raw: Any, where: str = "trajectory") -> list[Call]:
    """``[{"tool": ..., "arguments": {...}}]`` -> calls. ``arguments`` may be a JSON string (OpenAI style).

    Raises:
        TrajectoryError: not a list, an entry without a string ``tool``, or extra keys.
    """
    if not isinstance(raw, list):
        raise TrajectoryError(f"{where}: must be a list of tool calls, got {type(raw).__name__}")
    calls = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("tool"), str):
            raise TrajectoryError(f"{where}[{i}]: each call needs a string 'tool'")
        extra = set(entry) - {"tool", "arguments", "expect_error"}
        if extra:
            raise TrajectoryError(f"{where}[{i}]: unknown keys {sorted(extra)}")
        calls.append(Call(entry["tool"], entry.get("arguments", {})))
    return calls


@dataclass
class Step:
    """An executed (or refused) call and what the agent saw.

    Attributes:
        tool: the name the agent used.
        arguments: the arguments after schema validation (defaults filled) when valid, else as sent.
        ok: the call succeeded.
        error: the error code when it did not (``""`` otherwise).
        feedback: exactly what the agent received.
    """

    tool: str
    arguments: Any
    ok: bool
    error: str
    feedback: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "ok": self.ok,
            "error": self.error,
            "feedback": self.feedback,
        }


@dataclass
class Episode:
    """A running episode over a fresh sandbox.

    Attributes:
        sandbox: the device state.
        action_space: tool names the agent may call now, in presentation order.
        steps: executed steps, at most :data:`MAX_STEPS`.
        finished: ``Finish`` was called.
        over_limit: calls refused because the step limit was reached.
        after_finish: calls sent after ``Finish``.
    """

    sandbox: Sandbox
    action_space: list[str]
    steps: list[Step] = field(default_factory=list)
    finished: bool = False
    over_limit: int = 0
    after_finish: int = 0
    loaded_skills: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, sandbox: Sandbox, query: str, history: Sequence[str], skills: Iterable[str]) -> Episode:
        """The task's episode: recalled tools, always-available tools, then the task's skill loaders."""
        space = [*recall_tools(query, history), *ALWAYS_AVAILABLE, *(f"load_skill_{s}" for s in skills)]
        return cls(sandbox, list(dict.fromkeys(space)))

    @property
    def done(self) -> bool:
        """No further call will execute."""
        return self.finished or len(self.steps) >= MAX_STEPS

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The current action space in OpenAI tool format."""
        tools = catalog()
        return [tools[name].schema for name in self.action_space]

    def call(self, name: str, arguments: Any) -> dict[str, Any] | None:
        """Execute one call; returns the feedback, or None when the call was not executed (limit, after Finish)."""
        if self.finished:
            self.after_finish += 1
            return None
        if len(self.steps) >= MAX_STEPS:
            self.over_limit += 1
            return None
        step = self._execute(name, arguments)
        self.steps.append(step)
        self.sandbox.log(
            name,
            step.arguments if isinstance(step.arguments, dict) else {"raw": str(step.arguments)},
            step.ok,
            step.error,
        )
        return step.feedback

    def _execute(self, name: str, arguments: Any) -> Step:
        db = self.sandbox.db
        try:
            tool = catalog().get(name)
            if tool is None or name not in self.action_space:
                raise ToolError(
                    "unavailable", f"no tool {name!r} in your action space", "call one of the tools you were given"
                )
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments or "{}")
                except json.JSONDecodeError as exc:
                    raise ToolError("invalid_arguments", f"arguments are not valid JSON: {exc.msg}") from None
            valid = tool.validate(arguments)
            db.execute("SAVEPOINT tool_call")
            try:
                result = tool.func(self.sandbox, **valid)
            except BaseException:
                db.execute("ROLLBACK TO tool_call")
                db.execute("RELEASE tool_call")
                raise
            db.execute("RELEASE tool_call")
        except ToolError as err:
            self.action_space.extend(t for t in err.tools if t not in self.action_space)
            return Step(name, arguments, False, err.code, err.feedback())
        if tool.domain == "skill":
            self.loaded_skills.append(result["skill"])
            self.action_space.extend(t for t in SKILLS[result["skill"]] if t not in self.action_space)
        if name == "Finish":
            self.finished = True
        return Step(name, valid, True, "", {"ok": True, "result": _plain(json.loads(json.dumps(result, default=str)))})


def _plain(value: Any) -> Any:
    """JSON-ready feedback with whole floats written as integers (``319`` rather than ``319.0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
