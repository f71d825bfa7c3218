"""How a planner tool is declared: the domains, and the ``@tool`` mark a declaration carries. Below the catalog
(:mod:`.catalog`), which makes the tools of the modules :data:`.tools.MODULES` lists; a declaration registers
nothing by being imported."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

__all__ = ["DOMAINS", "META_DOMAINS", "ToolMark", "declared", "tool"]

#: The 14 device domains (MobilePA-Bench Table 2 lists 13 tool domains; notes and reminders are split here).
DOMAINS: Final = (
    "contacts",
    "messaging",
    "calendar",
    "clock",
    "settings",
    "files",
    "notes",
    "email",
    "maps",
    "wallet",
    "shopping",
    "travel",
    "media",
    "security",
)
#: Planner-level tools that are not device apps.
META_DOMAINS: Final = ("memory", "subagent", "skill", "dialogue")

#: the attribute a declared function carries
_MARK: Final = "__planner_tool__"


@dataclasses.dataclass(frozen=True)
class ToolMark:
    """What ``@tool`` says of a function: its ``domain`` (one of :data:`DOMAINS` or :data:`META_DOMAINS`), whether
    it may ``write`` the database, and the ``skill`` whose loader adds it ("" for catalog tools)."""

    domain: str
    write: bool
    skill: str = ""


def tool(domain: str, *, write: bool, skill: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark the decorated function as a tool declaration (see :mod:`.catalog` for the declaration form).

    Raises:
        ValueError: unknown domain.
    """
    if domain not in DOMAINS + META_DOMAINS:
        raise ValueError(f"unknown tool domain {domain!r}")
    mark = ToolMark(domain, write, skill)

    def declare(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, _MARK, mark)
        return func

    return declare


def declared(module: ModuleType) -> list[tuple[Callable[..., Any], ToolMark]]:
    """The tool declarations of ``module``, in definition order (what it merely imports is not its own)."""
    return [
        (obj, getattr(obj, _MARK))
        for obj in vars(module).values()
        if callable(obj) and hasattr(obj, _MARK) and getattr(obj, "__module__", None) == module.__name__
    ]
