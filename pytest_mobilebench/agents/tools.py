"""Tools declared once: a typed Python callable gives both the OpenAI function schema and the argument check.

A tool is a function (or bound method) with annotated parameters and a docstring: its first paragraph is the
description, its ``Args:`` section describes each parameter. :class:`Toolbox` turns each into
``{"type": "function", "function": {"name", "description", "parameters": <JSON schema>}}`` and, for a call the
model sent, checks the raw ``arguments`` text against the same pydantic model before calling the function.

Everything the model sends is untrusted: arguments that are not JSON, not an object, of the wrong type, with
unknown keys, or a tool that does not exist give a :class:`ToolCallError` whose message is shown to the model as
the tool's result (the loop never crashes on them).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import typing
from collections.abc import Callable, Sequence
from typing import Any

import pydantic

__all__ = ["Tool", "ToolCallError", "Toolbox", "declare"]


class ToolCallError(ValueError):
    """A call the model sent that cannot run; the message is written for the model."""


def _doc_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.cleandoc(fn.__doc__ or "")
    head, _, rest = doc.partition("\nArgs:\n")
    described: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        match = re.match(r"\s+(\w+):\s*(.*)", line)
        if match and len(line) - len(line.lstrip()) <= 4:
            current = match.group(1)
            described[current] = match.group(2).strip()
        elif current and line.strip():
            described[current] += " " + line.strip()
        elif not line.strip():
            current = None
    return " ".join(head.split("\n\n")[0].split()), described


def _without_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_without_titles(v) for v in schema]
    return schema


@dataclasses.dataclass(frozen=True)
class Tool:
    """One tool: its ``name``, ``description``, the pydantic ``arguments`` model and the ``function`` it calls."""

    name: str
    description: str
    arguments: type[pydantic.BaseModel]
    function: Callable[..., Any]

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry."""
        parameters = _without_titles(self.arguments.model_json_schema())
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": parameters},
        }


def declare(fn: Callable[..., Any], name: str | None = None) -> Tool:
    """The :class:`Tool` of ``fn`` (its parameters need annotations; ``name`` defaults to ``fn.__name__``).

    Raises:
        TypeError: a parameter without an annotation, or ``*args`` / ``**kwargs``.
    """
    hints = typing.get_type_hints(fn)
    description, described = _doc_parts(fn)
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name not in hints:
            raise TypeError(f"tool {fn.__name__}: parameter {param.name!r} needs an annotation and a name")
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints[param.name], pydantic.Field(default, description=described.get(param.name)))
    model = pydantic.create_model(
        f"{fn.__name__}_arguments", __config__=pydantic.ConfigDict(extra="forbid", strict=True), **fields
    )
    return Tool(name or fn.__name__, description, model, fn)


def _error_text(exc: pydantic.ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())


class Toolbox:
    """The tools offered to the model, by name."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = {t.name: t for t in tools}

    def schemas(self) -> list[dict[str, Any]]:
        """Every tool's OpenAI ``tools`` entry."""
        return [t.schema() for t in self.tools.values()]

    def parse(self, name: Any, raw: Any) -> tuple[Tool, dict[str, Any]]:
        """The tool and the checked keyword arguments of one call the model sent.

        ``raw`` is the call's ``arguments``: a JSON text (an object already decoded is accepted too).

        Raises:
            ToolCallError: unknown tool, arguments not a JSON object, or not matching the tool's parameters.
        """
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise ToolCallError(f"unknown tool {str(name)[:100]!r}; the tools are: {', '.join(self.tools)}")
        try:  # an empty text is no arguments (some servers send "" for a call without parameters)
            args = (json.loads(raw) if raw.strip() else {}) if isinstance(raw, str) else raw
        except ValueError as exc:
            raise ToolCallError(
                f"the arguments of {tool.name} are not valid JSON ({exc}); send a JSON object such "
                f"as {self._example(tool)}"
            ) from None
        if not isinstance(args, dict):
            raise ToolCallError(f"the arguments of {tool.name} must be a JSON object such as {self._example(tool)}")
        try:
            checked = tool.arguments.model_validate(args)
        except pydantic.ValidationError as exc:
            raise ToolCallError(
                f"invalid arguments for {tool.name}: {_error_text(exc)}; send a JSON object such as "
                f"{self._example(tool)}"
            ) from None
        return tool, checked.model_dump()

    @staticmethod
    def _example(tool: Tool) -> str:
        return json.dumps({name: f"<{name}>" for name in tool.arguments.model_fields})

    def call(self, name: Any, raw: Any) -> Any:
        """Parse and run one call; returns what the tool's function returns.

        Raises:
            ToolCallError: as :meth:`parse`.
        """
        tool, args = self.parse(name, raw)
        return tool.function(**args)
