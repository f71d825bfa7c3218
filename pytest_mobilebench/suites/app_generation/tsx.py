"""Per-file analysis of TSX / TypeScript sources for the maintainability metrics: tree-sitter parsing,
component declarations, bindings and imports of one file, and the Tailwind colour uses of its class strings.

Every source file is parsed with tree-sitter (``tree-sitter-typescript``: the ``tsx`` grammar for ``.tsx``,
the ``typescript`` grammar for ``.ts``); regular expressions are applied only to single Tailwind class tokens
taken from string nodes of the syntax tree. Rules: ``docs/app-generation-metrics.md``. Used by
:mod:`pytest_mobilebench.suites.app_generation.maintainability`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath
from typing import Final

import tree_sitter
import tree_sitter_typescript

__all__ = [
    "JSX_NODES",
    "PASCAL",
    "ROUTER_CALLS",
    "TS",
    "TSX",
    "Resolver",
    "SourceFile",
    "analyze_file",
    "callee_name",
    "color_of_class",
    "node_text",
    "string_value",
    "walk_nodes",
]


TSX: Final = tree_sitter.Language(tree_sitter_typescript.language_tsx())
TS: Final = tree_sitter.Language(tree_sitter_typescript.language_typescript())

JSX_NODES: Final = frozenset({"jsx_element", "jsx_self_closing_element", "jsx_fragment"})
_FUNCTION_NODES: Final = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "generator_function_declaration",
        "generator_function",
        "method_definition",
        "class_declaration",
        "class",
    }
)
#: Wrappers whose first argument is the component: ``memo(() => ...)``, ``React.forwardRef(...)``.
_COMPONENT_WRAPPERS: Final = frozenset({"memo", "forwardRef", "React.memo", "React.forwardRef"})
_COMPONENT_BASES: Final = frozenset({"Component", "PureComponent", "React.Component", "React.PureComponent"})
#: Calls whose string arguments are class lists (clsx and friends, tailwind-merge, class-variance-authority).
_CLASS_FUNCS: Final = frozenset({"clsx", "cn", "classnames", "classNames", "cx", "twMerge", "twJoin", "cva"})
ROUTER_CALLS: Final = frozenset({"createBrowserRouter", "createHashRouter", "createMemoryRouter", "useRoutes"})
PASCAL: Final = re.compile(r"^[A-Z][A-Za-z0-9_]*$")
_SENTINEL: Final = "\x00"

_PALETTE_NAMES: Final = (
    "slate|gray|zinc|neutral|stone|red|orange|amber|yellow|lime|green|emerald|teal|cyan|sky|blue|indigo|"
    "violet|purple|fuchsia|pink|rose"
)
_SHADES: Final = "50|100|200|300|400|500|600|700|800|900|950"
_COLOR_CLASS: Final = re.compile(
    r"^(?:bg|text|border(?:-[xytrblse])?|divide|outline|ring(?:-offset)?|from|via|to|fill|stroke|decoration"
    r"|accent|caret|placeholder|shadow)-"
    rf"(?:(?P<named>(?:{_PALETTE_NAMES})-(?:{_SHADES}))|(?P<bw>black|white)|\[(?P<arb>[^\]\s]+)\])"
    r"(?:/(?:\d+(?:\.\d+)?|\[[^\]]+\]))?$"
)
_HEX: Final = re.compile(r"^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$")
_COLOR_FN: Final = re.compile(r"^(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(.*\)$")


def color_of_class(token: str) -> str | None:
    """Return the colour named by one Tailwind class token, or ``None`` if it names no colour.

    Variants (``hover:``, ``md:``, ``dark:`` ...), the important flag (``!``) and the opacity modifier
    (``/50``) are stripped, so ``md:hover:!bg-blue-500/50`` names ``"blue-500"``. Utilities: ``bg``,
    ``text``, ``border`` (and ``border-x/y/t/r/b/l/s/e``), ``divide``, ``outline``, ``ring``,
    ``ring-offset``, ``from``, ``via``, ``to``, ``fill``, ``stroke``, ``decoration``, ``accent``, ``caret``,
    ``placeholder``, ``shadow``. Colours: a default-palette name with a shade (``blue-500``), ``black``,
    ``white``, or an arbitrary value that is a colour (``[#1A2B3C]`` -> ``"#1a2b3c"``, ``[#abc]`` ->
    ``"#aabbcc"``, ``[rgb(1_2_3)]`` -> ``"rgb(1,2,3)"``, ``[color:var(--x)]`` -> ``"var(--x)"``).
    ``text-[14px]``, ``bg-transparent`` and ``text-lg`` name no colour.

    Args:
        token: one whitespace-free class token as written in the source.

    Returns:
        The normalised colour key (the same for every utility: ``bg-blue-500`` and ``text-blue-500`` both
        give ``"blue-500"``), or ``None``.
    """
    depth = 0
    cut = 0
    for i, ch in enumerate(token):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0:
            cut = i + 1
    base = token[cut:].strip("!")
    if base.startswith("-"):
        return None
    m = _COLOR_CLASS.match(base)
    if m is None:
        return None
    if m.group("named"):
        return m.group("named")
    if m.group("bw"):
        return m.group("bw")
    value = m.group("arb").replace("_", "").lower()
    hinted = value.startswith("color:")
    if hinted:
        value = value[len("color:") :]
    if _HEX.match(value):
        digits = value[1:]
        if len(digits) in (3, 4):
            digits = "".join(c * 2 for c in digits)
        return "#" + digits
    if _COLOR_FN.match(value) or (hinted and value):
        return value.replace(" ", "")
    return None


# ----------------------------------------------------------------------------------------------------------
# Per-file analysis
# ----------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Binding:
    """``import {imported as local} from target``; ``imported`` is a name, ``"default"`` or ``"*"``."""

    local: str | None
    target: str
    imported: str


@dataclasses.dataclass(frozen=True)
class _Decl:
    name: str
    line: int
    kind: str
    start: int
    end: int


@dataclasses.dataclass
class SourceFile:
    rel: str
    source: bytes
    tree: tree_sitter.Tree
    loc: int = 0
    bindings: list[_Binding] = dataclasses.field(default_factory=list)
    # export name -> ("local", local name) | ("from", target file, name) | ("ns", target file)
    exports: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    star_sources: list[str] = dataclasses.field(default_factory=list)
    components: list[_Decl] = dataclasses.field(default_factory=list)
    references: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    declarators: dict[str, tree_sitter.Node] = dataclasses.field(default_factory=dict)
    lazy_targets: dict[str, str] = dataclasses.field(default_factory=dict)
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)
    colors: list[str] = dataclasses.field(default_factory=list)
    unresolved: list[tuple[int, str]] = dataclasses.field(default_factory=list)


def node_text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def walk_nodes(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """Pre-order traversal of ``node`` and all its descendants."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _line(node: tree_sitter.Node) -> int:
    return node.start_point[0] + 1


def _count_loc(source: bytes, tree: tree_sitter.Tree) -> int:
    """Lines with at least one non-whitespace byte outside comment nodes."""
    masked = bytearray(source)
    for node in walk_nodes(tree.root_node):
        if node.type == "comment":
            for i in range(node.start_byte, node.end_byte):
                if masked[i] not in (0x0A, 0x0D):
                    masked[i] = 0x20
    return sum(1 for line in bytes(masked).split(b"\n") if line.strip())


def string_value(node: tree_sitter.Node | None) -> str | None:
    """The literal value of a ``string`` or substitution-free ``template_string`` node, else ``None``."""
    if node is None:
        return None
    if node.type == "jsx_expression" and node.named_child_count == 1:
        return string_value(node.named_children[0])
    if node.type == "string":
        return node_text(node)[1:-1]
    if node.type == "template_string" and not any(c.type == "template_substitution" for c in node.children):
        return node_text(node)[1:-1]
    return None


def callee_name(call: tree_sitter.Node) -> str:
    fn = call.child_by_field_name("function")
    return node_text(fn) if fn is not None else ""


def _contains_jsx(node: tree_sitter.Node) -> bool:
    return any(n.type in JSX_NODES for n in walk_nodes(node))


def _own_returns(body: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """``return_statement`` nodes of a function body, not of functions nested in it."""
    stack = list(body.children)
    while stack:
        node = stack.pop()
        if node.type == "return_statement":
            yield node
        if node.type in _FUNCTION_NODES:
            continue
        stack.extend(node.children)


def _returns_jsx(fn: tree_sitter.Node) -> bool:
    body = fn.child_by_field_name("body")
    if body is None:
        return False
    if body.type != "statement_block":  # arrow function with an expression body
        return _contains_jsx(body)
    return any(_contains_jsx(r) for r in _own_returns(body))


_WRAPPER_NODES: Final = ("parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression")


def _peel(value: tree_sitter.Node) -> tree_sitter.Node | None:
    """One wrapper layer off ``value``: parentheses, ``as``/``satisfies``/``!``, or a memo/forwardRef call.

    Returns the wrapped node, ``None`` when the wrapper is empty, or ``value`` itself when it is no wrapper.
    """
    if value.type in _WRAPPER_NODES:
        return value.named_children[0] if value.named_child_count else None
    if value.type == "call_expression" and callee_name(value) in _COMPONENT_WRAPPERS:
        args = value.child_by_field_name("arguments")
        return args.named_children[0] if args is not None and args.named_child_count else None
    return value


def _unwrap_function(value: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The function node behind ``value``: through parentheses, ``as``/``satisfies`` and memo/forwardRef."""
    while value is not None:
        if value.type in ("arrow_function", "function_expression", "function"):
            return value
        inner = _peel(value)
        if inner is value:
            return None
        value = inner
    return None


def _wrapped_identifier(value: tree_sitter.Node | None) -> str | None:
    """``Card`` for ``memo(Card)``, ``React.memo(forwardRef(Card))``, ``(Card as FC)``; else ``None``."""
    while value is not None:
        if value.type == "identifier":
            return node_text(value)
        inner = _peel(value)
        if inner is value:
            return None
        value = inner
    return None


def _is_class_component(cls: tree_sitter.Node) -> bool:
    for child in cls.children:
        if child.type == "class_heritage":
            for clause in child.children:
                if clause.type == "extends_clause":
                    base = clause.child_by_field_name("value")
                    if node_text(base) in _COMPONENT_BASES:
                        return True
    body = cls.child_by_field_name("body")
    if body is None:
        return False
    for member in body.named_children:
        if member.type == "method_definition" and node_text(member.child_by_field_name("name")) == "render":
            if _returns_jsx(member):
                return True
    return False


def _function_kind(fn: tree_sitter.Node) -> str:
    return "arrow" if fn.type == "arrow_function" else "function"


class Resolver:
    """Maps an import specifier in one file to a source file of the project (or ``None``)."""

    def __init__(self, rel_paths: set[str], aliases: Mapping[str, str]) -> None:
        self.rel_paths = rel_paths
        self.aliases = dict(aliases)

    def base_of(self, importer: str, spec: str) -> str | None:
        if spec.startswith("./") or spec.startswith("../") or spec in (".", ".."):
            parts = list(PurePosixPath(importer).parent.parts)
            for seg in spec.split("/"):
                if seg in ("", "."):
                    continue
                if seg == "..":
                    if not parts:
                        return None
                    parts.pop()
                else:
                    parts.append(seg)
            return "/".join(parts)
        for prefix, replacement in self.aliases.items():
            if spec.startswith(prefix):
                return (replacement.rstrip("/") + "/" + spec[len(prefix) :]).strip("/")
        return None

    def resolve(self, importer: str, spec: str) -> tuple[str | None, bool]:
        """``(file or None, is_project_script)``: the second is False for packages and non-script assets."""
        base = self.base_of(importer, spec)
        if base is None:
            return None, False
        candidates: list[str] = []
        suffix = PurePosixPath(base).suffix
        if suffix in (".ts", ".tsx"):
            candidates.append(base)
        elif suffix in (".js", ".jsx", ".mjs"):
            stem = base[: -len(suffix)]
            candidates += [stem + ".ts", stem + ".tsx"]
        elif suffix and suffix not in (".ts", ".tsx"):
            # ".css", ".svg", ".json" ... : an asset, not a script module (a dotted name like "./a.b" is tried too)
            candidates += [base + ".tsx", base + ".ts"]
            for c in candidates:
                if c in self.rel_paths:
                    return c, True
            return None, False
        candidates += [base + ".tsx", base + ".ts", base + "/index.tsx", base + "/index.ts"]
        for c in candidates:
            if c in self.rel_paths:
                return c, True
        return None, True


def analyze_file(f: SourceFile, resolver: Resolver) -> None:
    """Fill imports, exports, components, references, declarators and colour uses of one parsed file."""
    root = f.tree.root_node
    f.loc = _count_loc(f.source, f.tree)
    analysis = _Analysis(f, resolver)
    for stmt in root.named_children:
        if stmt.type == "import_statement":
            analysis.import_statement(stmt)
        elif stmt.type == "export_statement":
            analysis.export_statement(stmt)
        else:
            analysis.declaration(stmt, exported=False, default=False)
    analysis.dynamic_imports(root)
    f.references.extend(_references(root))
    f.colors = _class_colors(root, f.declarators)


#: parents whose identifier child names, never uses: import/export specifiers and clauses
_NAMING_PARENTS: Final = (
    "import_specifier",
    "import_clause",
    "namespace_import",
    "export_specifier",
    "namespace_export",
)
#: declarations whose ``name`` field declares, never uses
_DECLARING_PARENTS: Final = (
    "function_declaration",
    "class_declaration",
    "variable_declarator",
    "generator_function_declaration",
)


def _references(root: tree_sitter.Node) -> list[tuple[str, int]]:
    """``(identifier, byte offset)`` of every identifier occurrence that is not an import/export specifier, an
    ``export default Foo;`` (which exports, not uses) nor a declaration's name."""
    out = []
    for node in walk_nodes(root):
        if node.type not in ("identifier", "shorthand_property_identifier"):
            continue
        parent = node.parent
        if parent is None or parent.type in _NAMING_PARENTS or parent.type == "export_statement":
            continue
        if parent.type in _DECLARING_PARENTS and parent.child_by_field_name("name") == node:
            continue
        out.append((node_text(node), node.start_byte))
    return out


_NAMED_DECLARATIONS: Final = (
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
    "abstract_class_declaration",
)


class _Analysis:
    """The statement readers of :func:`analyze_file`, each filling its part of one :class:`SourceFile`."""

    def __init__(self, f: SourceFile, resolver: Resolver) -> None:
        self.f = f
        self.resolver = resolver

    def resolve(self, spec_node: tree_sitter.Node | None, line: int) -> str | None:
        """The file a module specifier names; an unresolved script-like one is recorded with its line."""
        spec = string_value(spec_node)
        if spec is None:
            return None
        target, scriptish = self.resolver.resolve(self.f.rel, spec)
        if target is None and scriptish:
            self.f.unresolved.append((line, spec))
        return target

    def add_component(self, name: str, line: int, kind: str, node: tree_sitter.Node) -> None:
        self.f.components.append(_Decl(name, line, kind, node.start_byte, node.end_byte))

    def declaration(self, node: tree_sitter.Node, exported: bool, default: bool) -> None:
        """A top-level declaration (possibly under ``export``)."""
        if node.type in _NAMED_DECLARATIONS:
            self.named_declaration(node, exported, default)
        elif node.type in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                if decl.type == "variable_declarator":
                    self.variable(decl, exported)

    def named_declaration(self, node: tree_sitter.Node, exported: bool, default: bool) -> None:
        """``function Name() {...}`` / ``class Name ... {...}``: a component when it renders JSX."""
        name = node_text(node.child_by_field_name("name"))
        if node.type.endswith("function_declaration"):
            if PASCAL.match(name) and _returns_jsx(node):
                self.add_component(name, _line(node), "function", node)
        elif PASCAL.match(name) and _is_class_component(node):
            self.add_component(name, _line(node), "class", node)
        if exported:
            self.f.exports["default" if default else name] = ("local", name)

    def variable(self, decl: tree_sitter.Node, exported: bool) -> None:
        """``const Name = ...``: its value kept, a lazy ``import()`` target, a component (arrow function or class
        expression), or an alias of a wrapped component (``const Card = memo(CardImpl)``)."""
        name_node = decl.child_by_field_name("name")
        if name_node is None or name_node.type != "identifier":
            return
        name = node_text(name_node)
        value = decl.child_by_field_name("value")
        if value is not None:
            self.f.declarators[name] = value
            self.lazy_target(name, value)
        fn = _unwrap_function(value)
        if fn is not None and PASCAL.match(name) and _returns_jsx(fn):
            self.add_component(name, _line(decl), _function_kind(fn), decl)
        elif value is not None and value.type == "class" and PASCAL.match(name) and _is_class_component(value):
            self.add_component(name, _line(decl), "class", decl)
        elif value is not None and value.type != "identifier":
            wrapped = _wrapped_identifier(value)
            if wrapped is not None:
                self.f.aliases[name] = wrapped
        if exported:
            self.f.exports[name] = ("local", name)

    def lazy_target(self, name: str, value: tree_sitter.Node) -> None:
        """The file an ``import("...")`` inside ``value`` loads, kept as ``name``'s lazy target."""
        for sub in walk_nodes(value):
            if sub.type == "call_expression" and callee_name(sub) == "import":
                args = sub.child_by_field_name("arguments")
                spec = string_value(args.named_children[0]) if args and args.named_child_count else None
                target = self.resolver.resolve(self.f.rel, spec)[0] if spec is not None else None
                if target is not None:
                    self.f.lazy_targets[name] = target

    def import_statement(self, stmt: tree_sitter.Node) -> None:
        """The runtime bindings of an ``import`` (``import type`` binds nothing)."""
        if any(c.type == "type" for c in stmt.children):
            return
        target = self.resolve(stmt.child_by_field_name("source"), _line(stmt))
        if target is None:
            return
        clause = next((c for c in stmt.named_children if c.type == "import_clause"), None)
        if clause is None:
            self.f.bindings.append(_Binding(None, target, "*side-effect"))
            return
        for part in clause.named_children:
            if part.type == "identifier":
                self.f.bindings.append(_Binding(node_text(part), target, "default"))
            elif part.type == "namespace_import":
                ident = next((c for c in part.named_children if c.type == "identifier"), None)
                self.f.bindings.append(_Binding(node_text(ident), target, "*"))
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier" or any(c.type == "type" for c in spec.children):
                        continue
                    name = node_text(spec.child_by_field_name("name"))
                    alias = spec.child_by_field_name("alias")
                    self.f.bindings.append(_Binding(node_text(alias) if alias else name, target, name))

    def export_statement(self, stmt: tree_sitter.Node) -> None:
        """An ``export``: a re-export from another file, an exported declaration, ``export default <value>``,
        or a local ``export { a as b }``."""
        source = stmt.child_by_field_name("source")
        decl = stmt.child_by_field_name("declaration")
        value = stmt.child_by_field_name("value")
        if source is not None:
            self.re_export(stmt, source)
        elif decl is not None:
            self.declaration(decl, exported=True, default=any(c.type == "default" for c in stmt.children))
        elif value is not None:
            self.default_export(stmt, value)
        else:
            for c in stmt.children:
                if c.type == "export_clause":
                    for name, alias in _export_specifiers(c):
                        self.f.exports[alias] = ("local", name)

    def re_export(self, stmt: tree_sitter.Node, source: tree_sitter.Node) -> None:
        """``export * from``, ``export * as ns from``, ``export { a as b } from``."""
        target = self.resolve(source, _line(stmt))
        if target is None:
            return
        for c in stmt.children:
            if c.type == "*":
                self.f.star_sources.append(target)
            elif c.type == "namespace_export":
                ident = next((x for x in c.named_children if x.type in ("identifier", "string")), None)
                self.f.exports[node_text(ident)] = ("ns", target)
            elif c.type == "export_clause":
                for name, alias in _export_specifiers(c):
                    self.f.exports[alias] = ("from", target, name)

    def default_export(self, stmt: tree_sitter.Node, value: tree_sitter.Node) -> None:
        """``export default Foo;`` / ``memo(Foo)`` (an alias), or an anonymous component exported as default."""
        fn = _unwrap_function(value)
        wrapped = _wrapped_identifier(value)
        if wrapped is not None:
            self.f.exports["default"] = ("local", wrapped)
        elif fn is not None and _returns_jsx(fn):
            self.add_component("default", _line(stmt), _function_kind(fn), stmt)
            self.f.exports["default"] = ("local", "default")
        elif value.type == "class" and _is_class_component(value):
            self.add_component("default", _line(stmt), "class", stmt)
            self.f.exports["default"] = ("local", "default")

    def dynamic_imports(self, root: tree_sitter.Node) -> None:
        """``import("...")`` anywhere (lazy pages, code splitting): a namespace import of the module."""
        for node in walk_nodes(root):
            if node.type == "call_expression" and callee_name(node) == "import":
                args = node.child_by_field_name("arguments")
                target = self.resolve(args.named_children[0] if args and args.named_child_count else None, _line(node))
                if target is not None:
                    self.f.bindings.append(_Binding(None, target, "*"))


def _export_specifiers(clause: tree_sitter.Node) -> Iterator[tuple[str, str]]:
    """``(name, exported as)`` of each specifier of an ``export { ... }`` clause."""
    for spec in clause.named_children:
        if spec.type == "export_specifier":
            name = node_text(spec.child_by_field_name("name"))
            alias = spec.child_by_field_name("alias")
            yield name, node_text(alias) if alias else name


# ----------------------------------------------------------------------------------------------------------
# Class strings and colours
# ----------------------------------------------------------------------------------------------------------


def _class_colors(root: tree_sitter.Node, declarators: Mapping[str, tree_sitter.Node]) -> list[str]:
    """Colour uses in the class strings of one file (see the docs, "ColorConsistency")."""
    seen_strings: set[tuple[int, int]] = set()
    seen_idents: set[str] = set()
    tokens: list[str] = []

    def template_tokens(node: tree_sitter.Node) -> None:
        parts: list[str] = []
        for child in node.children:
            if child.type == "template_substitution":
                parts.append(_SENTINEL)
                collect(child)
            elif child.type != "`":
                parts.append(node_text(child))
        tokens.extend(t for t in "".join(parts).split() if _SENTINEL not in t)

    def collect(node: tree_sitter.Node) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "string":
                key = (n.start_byte, n.end_byte)
                if key not in seen_strings:
                    seen_strings.add(key)
                    tokens.extend(node_text(n)[1:-1].split())
                continue
            if n.type == "template_string":
                key = (n.start_byte, n.end_byte)
                if key not in seen_strings:
                    seen_strings.add(key)
                    template_tokens(n)
                continue
            if n.type == "identifier":
                name = node_text(n)
                if name in declarators and name not in seen_idents:
                    seen_idents.add(name)
                    stack.append(declarators[name])
                continue
            stack.extend(n.children)

    for node in walk_nodes(root):
        if node.type == "jsx_attribute":
            name_node = node.named_children[0] if node.named_child_count else None
            attr = node_text(name_node)
            if attr in ("className", "class") or attr.endswith("ClassName"):
                for value in node.named_children[1:]:
                    collect(value)
        elif node.type == "call_expression" and callee_name(node) in _CLASS_FUNCS:
            args = node.child_by_field_name("arguments")
            if args is not None:
                collect(args)
    colours: list[str] = []
    for token in tokens:
        colour = color_of_class(token)
        if colour is not None:
            colours.append(colour)
    return colours
