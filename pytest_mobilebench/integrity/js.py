"""The JavaScript / TypeScript part of the integrity audit: rules over a tree-sitter AST.

Grammars: tree-sitter-javascript (``.js .jsx .mjs .cjs``), tree-sitter-typescript (``.ts .mts .cts``; ``.tsx``
with its TSX grammar). Comments and string contents are never read as code (a string is read only where it
is a module name, an environment key or a ``/proc/self`` path). A runner global (``jest``, ``expect``,
``describe`` ...) counts only when the fragment does not declare the same name (a local ``test`` variable is
not the runner's).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

import tree_sitter
import tree_sitter_javascript
import tree_sitter_typescript

from pytest_mobilebench.integrity import Finding, Fragment, first_added, snippet_of

__all__ = ["audit_fragment"]

#: globals the runners install; ``jest`` / ``expect`` count wherever referenced, the rest when called
VALUE_GLOBALS: Final = frozenset({"jest", "expect", "vi"})
CALLED_GLOBALS: Final = frozenset(
    {
        "describe",
        "it",
        "test",
        "beforeEach",
        "afterEach",
        "beforeAll",
        "afterAll",
        "fit",
        "xit",
        "fdescribe",
        "xdescribe",
        "xtest",
        "pending",
        "fail",
    }
)
GLOBAL_OBJECTS: Final = frozenset({"global", "globalThis", "window", "self"})
#: module names of test runners and their parts (exact, or a prefix ending in ``/`` or ``-``)
RUNNER_MODULES: Final = (
    "@jest/",
    "jest",
    "jest-",
    "expect",
    "babel-jest",
    "ts-jest",
    "vitest",
    "@vitest/",
    "mocha",
    "chai",
    "@testing-library/",
    "react-test-renderer",
)
#: ``object.property`` chains that reach the module system, the stack or the process
INTROSPECTION: Final = frozenset(
    {
        "require.cache",
        "require.main",
        "module.constructor",
        "module.parent",
        "module.children",
        "process.mainModule",
        "process.argv",
        "process.argv0",
        "process.execArgv",
        "process.execPath",
        "Error.captureStackTrace",
        "Error.prepareStackTrace",
        "Error.stackTraceLimit",
    }
)
#: environment variables a test runner or CI sets (``NODE_ENV`` only when compared with ``'test'``)
MARKER_RE: Final = re.compile(r"^(JEST_\w*|CI|FLUTTER_TEST|VITEST\w*|MOBILEBENCH\w*|MB_\w+|TEST_WORKER\w*|__TEST__)$")
_SPACE: Final = re.compile(r"\s+|\?")
_DECLARING: Final = frozenset(
    {
        "variable_declarator",
        "function_declaration",
        "class_declaration",
        "required_parameter",
        "optional_parameter",
        "formal_parameters",
        "import_specifier",
        "namespace_import",
        "import_clause",
        "catch_clause",
        "arrow_function",
    }
)


@functools.cache
def _parser(suffix: str) -> tree_sitter.Parser:
    if suffix == ".tsx":
        language = tree_sitter_typescript.language_tsx()
    elif suffix in (".ts", ".mts", ".cts"):
        language = tree_sitter_typescript.language_typescript()
    else:
        language = tree_sitter_javascript.language()
    return tree_sitter.Parser(tree_sitter.Language(language))


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _text(node: tree_sitter.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _chain(node: tree_sitter.Node | None) -> str:
    """``a.b.c`` of a member expression, whitespace and optional-chaining marks removed."""
    return _SPACE.sub("", _text(node))


def _string_value(node: tree_sitter.Node | None) -> str | None:
    if node is None or node.type not in ("string", "template_string"):
        return None
    if node.type == "template_string" and any(c.type == "template_substitution" for c in node.children):
        return None
    return _text(node)[1:-1]


def _declared(root: tree_sitter.Node) -> set[str]:
    """Names the fragment declares (variables, functions, classes, parameters, imports)."""
    names = set()
    for node in _walk(root):
        if node.type == "identifier" and node.parent is not None and node.parent.type in _DECLARING:
            parent = node.parent
            if parent.type in ("variable_declarator", "function_declaration", "class_declaration"):
                if parent.child_by_field_name("name") != node:
                    continue
            if parent.type == "import_specifier" and (parent.child_by_field_name("alias") or node) != node:
                continue  # `import { expect as e }` declares e
            names.add(_text(node))
        elif node.type == "shorthand_property_identifier_pattern":
            names.add(_text(node))
    return names


def _is_runner_module(name: str) -> bool:
    return any(
        name == m or (m.endswith(("/", "-")) and name.startswith(m)) or name.startswith(m + "/") for m in RUNNER_MODULES
    )


def _module_finding(node: tree_sitter.Node) -> tuple[str, str] | None:
    """A runner module named by ``import ... from``, ``export ... from``, ``require(...)`` or ``import(...)``."""
    source: tree_sitter.Node | None = None
    if node.type in ("import_statement", "export_statement"):
        source = node.child_by_field_name("source")
    elif node.type == "call_expression" and _text(node.child_by_field_name("function")) in ("require", "import"):
        args = node.child_by_field_name("arguments")
        source = args.named_children[0] if args is not None and args.named_children else None
    name = _string_value(source)
    if name is not None and _is_runner_module(name):
        return "test_runner_api", f"module {name}"
    return None


def _env_finding(node: tree_sitter.Node) -> tuple[str, str] | None:
    """``process.env.X`` / ``process.env['X']`` with a marker ``X``; a computed key is introspection."""
    if node.type == "member_expression" and _chain(node.child_by_field_name("object")) == "process.env":
        key: str | None = _text(node.child_by_field_name("property"))
    elif node.type == "subscript_expression" and _chain(node.child_by_field_name("object")) == "process.env":
        key = _string_value(node.child_by_field_name("index"))
        if key is None:
            return "introspection", "process.env read with a computed key"
    else:
        return None
    if MARKER_RE.match(key or ""):
        return "runner_marker", f"process.env.{key}"
    if key == "NODE_ENV" and _compared_with_test(node):
        return "runner_marker", "process.env.NODE_ENV compared with 'test'"
    return None


def _compared_with_test(node: tree_sitter.Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None:
        return False
    if parent.type == "binary_expression":
        return any(_string_value(c) == "test" for c in parent.named_children)
    if parent.type == "switch_statement":
        return any(
            _string_value(n.child_by_field_name("value")) == "test" for n in _walk(parent) if n.type == "switch_case"
        )
    return False


def _destructured_markers(node: tree_sitter.Node) -> tuple[str, str] | None:
    """``const { JEST_WORKER_ID } = process.env``."""
    if node.type != "variable_declarator" or _chain(node.child_by_field_name("value")) != "process.env":
        return None
    pattern = node.child_by_field_name("name")
    if pattern is None or pattern.type != "object_pattern":
        return None
    keys = [
        _text(n) for n in _walk(pattern) if n.type in ("shorthand_property_identifier_pattern", "property_identifier")
    ]
    hits = [k for k in keys if MARKER_RE.match(k) or k == "NODE_ENV"]
    return ("runner_marker", f"process.env.{hits[0]} destructured") if hits else None


def _global_finding(node: tree_sitter.Node, declared: set[str]) -> tuple[str, str] | None:
    kind = node.type
    if kind == "identifier" and _text(node) in VALUE_GLOBALS and _text(node) not in declared:
        parent = node.parent
        if parent is None or parent.type not in _DECLARING or parent.type == "arrow_function":
            return "test_runner_api", f"runner global {_text(node)}"
    if kind == "call_expression":
        callee = node.child_by_field_name("function")
        name = _text(callee)
        if callee is not None and callee.type == "identifier" and name in CALLED_GLOBALS and name not in declared:
            return "test_runner_api", f"runner global {name}()"
    if kind in ("member_expression", "subscript_expression"):
        owner = _chain(node.child_by_field_name("object"))
        if owner in GLOBAL_OBJECTS:
            if kind == "member_expression":
                key: str | None = _text(node.child_by_field_name("property"))
            else:
                key = _string_value(node.child_by_field_name("index"))
                if key is None:
                    return "introspection", f"{owner}[...] read with a computed key"
            if key in VALUE_GLOBALS | CALLED_GLOBALS:
                return "test_runner_api", f"runner global {owner}.{key}"
    return None


def _dynamic(node: tree_sitter.Node) -> tuple[str, str] | None:
    """``process.env`` taken whole (aliased, enumerated), ``eval`` / ``Function`` code, ``require`` of a computed
    name."""
    if node.type == "member_expression" and _chain(node) == "process.env":
        parent = node.parent
        if (
            parent is not None
            and parent.type in ("member_expression", "subscript_expression")
            and parent.child_by_field_name("object") == node
        ):
            return None
        if (
            parent is not None
            and parent.type == "variable_declarator"
            and (parent.child_by_field_name("name") or node).type == "object_pattern"
        ):
            return None  # destructuring: its keys are read by _destructured_markers
        return "introspection", "process.env taken whole"
    if node.type in ("call_expression", "new_expression"):
        callee = node.child_by_field_name("function" if node.type == "call_expression" else "constructor")
        name = _text(callee)
        if name in ("eval", "Function"):
            return "introspection", f"dynamic code ({name})"
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if name in ("require", "import") and first is not None and _string_value(first) is None:
            return "introspection", f"{name}() of a computed name"
    return None


def _introspection(node: tree_sitter.Node) -> tuple[str, str] | None:
    if node.type == "member_expression":
        chain = _chain(node)
        if chain in INTROSPECTION:
            return "introspection", chain
        obj = node.child_by_field_name("object")
        if _text(node.child_by_field_name("property")) == "stack" and obj is not None:
            while obj is not None and obj.type == "parenthesized_expression" and obj.named_children:
                obj = obj.named_children[0]
            made = (
                obj.child_by_field_name("constructor")
                if obj.type == "new_expression"
                else (obj.child_by_field_name("function") if obj.type == "call_expression" else None)
            )
            if made is not None and _text(made).endswith("Error"):
                return "introspection", f"new {_text(made)}().stack"
    value = _string_value(node)
    if value is not None and "/proc/" in value:
        return "introspection", "a /proc path"
    return None


def _rules(node: tree_sitter.Node, declared: set[str]) -> tuple[str, str] | None:
    return (
        _module_finding(node)
        or _env_finding(node)
        or _destructured_markers(node)
        or _global_finding(node, declared)
        or _introspection(node)
        or _dynamic(node)
    )


def audit_fragment(path: str, fragment: Fragment) -> list[Finding]:
    """The findings of one hunk's post-image of the production file ``path`` (see the module docstring)."""
    suffix = "." + path.rsplit(".", 1)[-1].lower()
    tree = _parser(suffix).parse(fragment.text.encode("utf-8"))
    declared = _declared(tree.root_node)
    found = []
    for node in _walk(tree.root_node):
        if node.type == "comment":
            continue
        hit = _rules(node, declared)
        if hit is None:
            continue
        line = first_added(fragment, node.start_point.row, node.end_point.row)
        if line is not None:
            found.append(Finding(file=path, line=line, kind=hit[0], what=hit[1], snippet=snippet_of(fragment, line)))
    return found
