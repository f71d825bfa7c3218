"""The planner task record: a :class:`Task` (its state, gold trajectory, checks and target) and the episodes it
starts (:func:`new_episode`, :func:`replay`). Below both the grader and the task loader (:mod:`.tasks`, which
validates each task's gold through the grader)."""

from __future__ import annotations

from typing import Any, Literal

import pydantic

from pytest_mobilebench.suites.planner.catalog import DOMAINS, catalog
from pytest_mobilebench.suites.planner.episode import Call, Episode, parse_trajectory
from pytest_mobilebench.suites.planner.sandbox import TABLES, Sandbox
from pytest_mobilebench.suites.planner.tools.planner import SKILLS

__all__ = ["BUCKETS", "DIMENSIONS", "CallSpec", "Check", "Harmless", "RowAssertion", "Task", "new_episode", "replay"]

DIMENSIONS = ("basic_tool_use", "subagent_collaboration", "memory_usage", "skill_usage")
BUCKETS = ("tool_call", "state_change", "behaviour")

_Strict = pydantic.ConfigDict(extra="forbid", frozen=True)


class CallSpec(pydantic.BaseModel):
    """An expected call: ``arguments`` {name: value | {any_of} | {contains} | {any: true}}; every other argument
    must be left at its default, except the ``optional`` ones: they may be left out (at their default), and when
    given they must match: ``{name: spec}`` says what they must match; a list of names means "the gold's value
    for it" (the gold's write call paired with this expected call, see :func:`.grading.expected_calls`)."""

    model_config = _Strict
    tool: str
    arguments: dict[str, Any] = {}
    optional: list[str] | dict[str, Any] = []


class Check(pydantic.BaseModel):
    """One behaviour check (exactly one kind set).

    ``delegated``: a successful hand-off to that sub-agent whose fields match ``fields`` (dotted paths into the
    hand-off, values as in :class:`CallSpec`); ``asked_user``: ``before_write`` = ``ask_user`` succeeded before
    the first successful write; ``called``: a successful call matching the spec; ``answer_contains``: the
    ``Finish`` answer contains one of the strings AND that string occurred in an earlier tool result (error
    feedback included: "already done" is evidence) whose call's own arguments do not contain it, and none of
    the ``distractors`` (the task's other candidate values: an answer naming every option is not an answer).
    """

    model_config = _Strict
    delegated: Literal["gui_agent", "vision_agent", "web_agent"] | None = None
    fields: dict[str, Any] = {}
    asked_user: Literal["before_write"] | None = None
    called: CallSpec | None = None
    answer_contains: list[str] | None = None
    distractors: list[str] = []

    @pydantic.model_validator(mode="after")
    def _one_kind(self) -> Check:
        kinds = [k for k in ("delegated", "asked_user", "called", "answer_contains") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(
                f"a check needs exactly one of delegated / asked_user / called / answer_contains, got {kinds}"
            )
        if self.answer_contains is None and self.distractors:
            raise ValueError("distractors belong to an answer_contains check")
        if self.answer_contains is not None and not self.distractors:
            raise ValueError("an answer_contains check needs distractors (the other candidate values it must reject)")
        return self


class Harmless(pydantic.BaseModel):
    """A change the task declares harmless (it widens the allowed delta, :mod:`.collateral`): of rows of ``table``
    matching ``where`` (values as in :class:`CallSpec`), changes to ``columns`` (an added row is then matched to
    the gold's added rows without them); with no ``columns``, any added, removed or changed matching row."""

    model_config = _Strict
    table: str
    columns: list[str] = []
    where: dict[str, Any] = {}


class RowAssertion(pydantic.BaseModel):
    """The gold's final state has a row of ``table`` matching ``where`` (and ``expect``), or none when ``absent``."""

    model_config = _Strict
    table: str
    where: dict[str, Any]
    expect: dict[str, Any] = {}
    absent: bool = False


class Task(pydantic.BaseModel):
    """One planner task (see the module docstring for the fields)."""

    model_config = _Strict
    id: str = pydantic.Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    domain: str
    dimension: Literal["basic_tool_use", "subagent_collaboration", "memory_usage", "skill_usage"]
    bucket: Literal["tool_call", "state_change", "behaviour"]
    query: str = pydantic.Field(min_length=3)
    history: list[str] = []
    now: str
    state: dict[str, list[dict[str, Any]]]
    memory: list[dict[str, Any]] = []
    skills: list[str] = []
    gold: list[dict[str, Any]]
    expected_calls: list[CallSpec] | None = None
    checks: list[Check] = []
    target: list[RowAssertion] = []
    gold_memory_ids: list[str] = []
    gold_skill: str | None = None
    minefields: list[CallSpec] = []
    user_replies: list[str] = []
    subagent_replies: dict[str, Any] = {}
    ignore_columns: list[str] = []
    harmless: list[Harmless] = []
    alternate: list[dict[str, Any]] | None = None

    @pydantic.field_validator("domain")
    @classmethod
    def _domain(cls, v: str) -> str:
        if v not in DOMAINS:
            raise ValueError(f"unknown domain {v!r}; one of {', '.join(DOMAINS)}")
        return v

    @pydantic.field_validator("skills")
    @classmethod
    def _skills(cls, v: list[str]) -> list[str]:
        unknown = [s for s in v if s not in SKILLS]
        if unknown:
            raise ValueError(f"unknown skills {unknown}; known: {sorted(SKILLS)}")
        return v

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> Task:
        if self.bucket == "behaviour" and not self.checks:
            raise ValueError("a behaviour task needs checks")
        if self.bucket == "state_change" and not self.target:
            raise ValueError("a state_change task needs target row assertions")
        if self.gold_skill and self.gold_skill not in self.skills:
            raise ValueError(f"gold_skill {self.gold_skill!r} is not among the task's skills")
        for col in self.ignore_columns:
            table, _, name = col.partition(".")
            if name not in TABLES.get(table, ()):
                raise ValueError(f"ignore_columns: {col!r} is not a table.column")
        for entry in self.harmless:
            unknown = [c for c in [*entry.columns, *entry.where] if c not in TABLES.get(entry.table, ())]
            if entry.table not in TABLES or unknown:
                raise ValueError(f"harmless: unknown table {entry.table!r} or columns {unknown}")
        names = catalog()
        for spec in [*(self.expected_calls or []), *self.minefields, *(c.called for c in self.checks if c.called)]:
            if spec.tool not in names:
                raise ValueError(f"unknown tool {spec.tool!r}")
            unknown = [n for n in spec.optional if n not in names[spec.tool].model.model_fields]
            if unknown:
                raise ValueError(f"{spec.tool}: optional names unknown arguments {unknown}")
        return self

    @property
    def gold_calls(self) -> list[Call]:
        """The gold trajectory as calls."""
        return parse_trajectory(self.gold, "gold")


def new_episode(task: Task) -> Episode:
    """A fresh sandbox seeded with the task's state and memory profile, and the task's starting action space."""
    sb = Sandbox(task.id, task.now, list(task.user_replies), dict(task.subagent_replies))
    sb.seed(task.state)
    sb.seed({"memory": [{"updated_at": task.now, **m} for m in task.memory]})
    return Episode.start(sb, task.query, task.history, task.skills)


def replay(task: Task, calls: list[Call]) -> Episode:
    """Run recorded calls, in order, against a fresh episode of ``task``."""
    episode = new_episode(task)
    for call in calls:
        episode.call(call.tool, call.arguments)
    return episode


# ----------------------------------------------------------------------------------------------- loading
