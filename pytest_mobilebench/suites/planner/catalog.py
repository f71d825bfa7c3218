"""The tool catalog: every tool declared ONCE as a typed Python function; schema, recall text and behaviour
all come from that declaration.

A declaration (:func:`.declare.tool`, in a module listed in :data:`.tools.MODULES`)::

    @tool("contacts", write=True)
    def add_contact(sb: Sandbox, name: str, phone: str, email: str = "") -> dict:
        '''Add a person to the address book.

        Args:
            name: full name as it should appear.
            phone: phone number, digits with an optional leading +.
            email: e-mail address, optional.
        '''

gives :attr:`Tool.schema` (OpenAI function format, parameters from a pydantic model built from the
signature, descriptions from the ``Args:`` section), :attr:`Tool.recall_text` (what BM25 indexes) and
:meth:`Tool.run` (validates the arguments against that same model, then calls the function).

``python -m pytest_mobilebench.suites.planner [PATH]`` writes ``docs/planner-tools.md`` (:func:`main`).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pydantic

from pytest_mobilebench.suites.planner import tools as tool_modules
from pytest_mobilebench.suites.planner.declare import DOMAINS, META_DOMAINS, ToolMark, declared
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError

__all__ = ["CATALOG", "DOMAINS", "META_DOMAINS", "Tool", "catalog", "tools_markdown"]

#: words users say about each domain's app, added to every recall text of that domain (one place).
DOMAIN_WORDS: Final[dict[str, str]] = {
    "contacts": "contact phone number person address book call dial ring",
    "messaging": "sms text message chat conversation tell write",
    "calendar": "calendar event appointment meeting schedule class agenda today tomorrow week monday tuesday "
    "wednesday thursday friday saturday sunday",
    "clock": "clock alarm wake timer countdown minutes morning",
    "settings": "settings system toggle switch device phone screen sound",
    "files": "files storage gallery photo picture image video document folder download",
    "notes": "notes note reminder todo list remember remind",
    "email": "email e-mail mail inbox message sender",
    "maps": "maps map navigation directions route place location go drive",
    "wallet": "wallet money pay payment card bank transfer",
    "shopping": "shopping shop buy order food delivery grocery cart dish menu restaurant hungry eat",
    "travel": "travel trip flight hotel booking fly stay",
    "media": "music audio song track playlist play listen",
    "security": "security privacy permission lock protect app",
    "memory": "memory remember user preference profile know about me update correct forget",
    "subagent": "delegate agent hand off",
    "skill": "skill",
    "dialogue": "",
}

_ARG_LINE: Final = re.compile(r"^\s{4,}(\w+):\s*(.+)$")


@dataclass(frozen=True)
class Tool:
    """One declared tool.

    Attributes:
        name: the function name (the tool's name for the agent).
        domain: one of :data:`DOMAINS` or :data:`META_DOMAINS`.
        write: True when the tool may change the database.
        skill: the skill whose loader adds this tool to the action space ("" for catalog tools).
        func: the implementation ``func(sb, **arguments) -> result``.
        model: pydantic model of the arguments (``extra="forbid"``).
        description: the docstring's first paragraph.
        arg_docs: ``{argument: description}`` from the docstring's ``Args:`` section.
    """

    name: str
    domain: str
    write: bool
    skill: str
    func: Callable[..., Any]
    model: type[pydantic.BaseModel]
    description: str
    arg_docs: dict[str, str]

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI chat-completions tool entry ``{"type": "function", "function": {...}}``."""
        params = _drop_titles(self.model.model_json_schema())
        params.setdefault("required", [])
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    @property
    def recall_text(self) -> str:
        """Name words, domain, description and argument documentation: the text recall ranks."""
        words = self.name.replace("_", " ")
        return " ".join([words, DOMAIN_WORDS[self.domain], self.description, *self.arg_docs.values()])

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Arguments checked against the schema, defaults filled in.

        Raises:
            ToolError: ``invalid_arguments`` naming each wrong field (missing, unknown, wrong type or value).
        """
        if not isinstance(arguments, Mapping):
            raise ToolError("invalid_arguments", f"arguments must be an object, got {type(arguments).__name__}")
        try:
            return self.model.model_validate(dict(arguments)).model_dump()
        except pydantic.ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
            raise ToolError(
                "invalid_arguments",
                f"{self.name}: {problems}",
                "call the tool again with arguments matching its schema",
            ) from None

    def run(self, sb: Sandbox, arguments: Any) -> Any:
        """Validate, then execute against ``sb``; a refusal raises :class:`ToolError`."""
        return self.func(sb, **self.validate(arguments))


def _drop_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _drop_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_drop_titles(v) for v in node]
    return node


def _parse_doc(func: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(func) or ""
    summary = doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    args: dict[str, str] = {}
    in_args = False
    for line in (func.__doc__ or "").splitlines():
        if line.strip() == "Args:":
            in_args = True
            continue
        match = _ARG_LINE.match(line) if in_args else None
        if match:
            args[match.group(1)] = match.group(2).strip()
        elif in_args and line.strip() and not line.startswith(" " * 12):
            in_args = False
    return summary, args


#: every declared tool by name, in the order of :data:`pytest_mobilebench.suites.planner.tools.MODULES` and of
#: the declarations in each (filled by the first :func:`catalog` call)
CATALOG: Final[dict[str, Tool]] = {}


def _make(func: Callable[..., Any], mark: ToolMark) -> Tool:
    """The :class:`Tool` of one declaration.

    Raises:
        ValueError: an argument without a type or without a docstring line.
    """
    summary, arg_docs = _parse_doc(func)
    hints = typing.get_type_hints(func, include_extras=True)
    fields: dict[str, Any] = {}
    for pname, param in list(inspect.signature(func).parameters.items())[1:]:
        if pname not in hints or pname not in arg_docs:
            raise ValueError(f"tool {func.__name__!r}: argument {pname!r} needs a type and an Args: line")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (hints[pname], pydantic.Field(default, description=arg_docs[pname]))
    model = pydantic.create_model(f"{func.__name__}_args", __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    return Tool(func.__name__, mark.domain, mark.write, mark.skill, func, model, summary, arg_docs)


def catalog() -> dict[str, Tool]:
    """All declared tools by name: the declarations of the modules listed in
    :data:`pytest_mobilebench.suites.planner.tools.MODULES`, made into tools on the first call.

    Raises:
        ValueError: a tool declared twice, or a declaration :func:`_make` refuses.
    """
    if not CATALOG:
        made: dict[str, Tool] = {}
        for module in tool_modules.MODULES:
            for func, mark in declared(module):
                if func.__name__ in made:
                    raise ValueError(f"tool {func.__name__!r} declared twice")
                made[func.__name__] = _make(func, mark)
        CATALOG.update(made)
    return CATALOG


def tools_markdown() -> str:
    """``docs/planner-tools.md``: every tool by domain with its arguments, generated from the declarations."""
    tools_ = catalog()
    lines = [
        "# Planner tool catalog",
        "",
        "Generated by `python -m pytest_mobilebench.suites.planner` from the tool declarations in",
        "`pytest_mobilebench/suites/planner/tools/`; do not edit by hand (a test checks it is up to date).",
        "",
        (
            f"{len(tools_)} tools: {sum(1 for t in tools_.values() if not t.skill)} in the recall catalog, "
            f"{sum(1 for t in tools_.values() if t.skill)} added by skill loaders."
        ),
        "",
    ]
    for domain in DOMAINS + META_DOMAINS:
        members = sorted((t for t in tools_.values() if t.domain == domain), key=lambda t: t.name)
        lines += [f"## {domain} ({len(members)})", "", "| tool | kind | description | arguments |", "|---|---|---|---|"]
        for t in members:
            props = t.schema["function"]["parameters"].get("properties", {})
            required = set(t.schema["function"]["parameters"].get("required", []))
            args = "<br>".join(f"`{a}`{'' if a in required else '?'}: {_type_of(p)}" for a, p in props.items())
            kind = ("write" if t.write else "read") + (f", skill `{t.skill}`" if t.skill else "")
            lines.append(f"| `{t.name}` | {kind} | {t.description.replace('|', '/')} | {args or '-'} |")
        lines.append("")
    return "\n".join(lines)


def _type_of(prop: Mapping[str, Any]) -> str:
    if "enum" in prop:
        return " / ".join(f"`{v}`" for v in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(_type_of(p) for p in prop["anyOf"])
    if prop.get("type") == "array":
        return f"list of {_type_of(prop.get('items', {}))}"
    return str(prop.get("type", "any"))


def main(argv: list[str]) -> int:
    """Write the catalog document to ``argv[0]`` (default ``docs/planner-tools.md``)."""
    target = Path(argv[0]) if argv else Path("docs/planner-tools.md")
    target.write_text(tools_markdown(), encoding="utf-8")
    print(f"wrote {target} ({len(catalog())} tools)")
    return 0
