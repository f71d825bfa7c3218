"""Code-maintainability metrics of a generated React + TypeScript + Tailwind project (MobileForge axis 4).

Source: MobileForge (seed 002), section 4.1 "Code Maintainability" and Table 3: total LoC, mean LoC per
file, ReuseRate (mean number of importers per shared component), DeadCompRate (share of declared
components never imported) and ColorConsistency (share of Tailwind colour-token uses that belong to the
app's small recurring palette). The paper names the indicators but not their exact counting rules; the
rules below are ours and are written out in full in ``docs/app-generation-metrics.md``.

Every source file is parsed with tree-sitter (``tree-sitter-typescript``: the ``tsx`` grammar for ``.tsx``,
the ``typescript`` grammar for ``.ts``); nothing here uses regular expressions on source code. Regular
expressions are applied only to single Tailwind class tokens taken from string nodes of the syntax tree.

Pure functions of the project directory: no processes, no network. The public entry points are
:func:`measure` and :func:`parse_routes`.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Final, final

import tree_sitter
import tree_sitter_typescript

__all__ = [
    "DEFAULT_ALIASES",
    "PAGE_DIR_NAMES",
    "PALETTE_MIN_USES",
    "ComponentInfo",
    "MaintainabilityReport",
    "color_of_class",
    "measure",
    "parse_routes",
]

#: A colour must be used at least this many times in the whole app to belong to its recurring palette.
#: Two uses are still a pair (a base colour and its hover shade on one button, say); three uses means
#: the colour is applied to several elements, i.e. it behaves as a design token. See the docs.
PALETTE_MIN_USES: Final[int] = 3

#: Import-path aliases resolved like relative imports: ``@/x`` is ``src/x`` (the Vite + shadcn default).
DEFAULT_ALIASES: Final[Mapping[str, str]] = {"@/": "src/"}

#: A source file with one of these directory names (case-insensitive) anywhere under ``src/`` is a page module.
PAGE_DIR_NAMES: Final[frozenset[str]] = frozenset({"pages", "page", "screens", "screen", "views", "view", "routes"})

#: Entry modules (paths relative to the project): the scaffold's root; never "shared".
_ENTRY_MODULES: Final[frozenset[str]] = frozenset(
    {"src/main.tsx", "src/main.ts", "src/index.tsx", "src/index.ts", "src/App.tsx", "src/App.ts"}
)
#: The root component module the Vite scaffold's ``main.tsx`` renders; its ``default``/``App`` export is live.
_APP_MODULES: Final[frozenset[str]] = frozenset({"src/App.tsx", "src/App.ts"})

_TSX: Final = tree_sitter.Language(tree_sitter_typescript.language_tsx())
_TS: Final = tree_sitter.Language(tree_sitter_typescript.language_typescript())

_JSX_NODES: Final = frozenset({"jsx_element", "jsx_self_closing_element", "jsx_fragment"})
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
_ROUTER_CALLS: Final = frozenset({"createBrowserRouter", "createHashRouter", "createMemoryRouter", "useRoutes"})
_PASCAL: Final = re.compile(r"^[A-Z][A-Za-z0-9_]*$")
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
# Report types
# ----------------------------------------------------------------------------------------------------------


@final
@dataclasses.dataclass(frozen=True)
class ComponentInfo:
    """One declared component.

    Attributes:
        file: the declaring file, relative to the project directory, POSIX (``"src/components/Tab.tsx"``).
        name: the local name (``"default"`` for an anonymous default-exported component).
        line: 1-based line of the declaration.
        kind: ``"function"`` (declaration or function expression), ``"arrow"`` or ``"class"``.
        exported_as: the export names the file gives it, sorted (``("TabBar", "default")``).
        importers: the files (other than ``file``) that import it, sorted; see :func:`measure`.
        used_in_file: it is referenced in its own file outside its own declaration (JSX, route element ...).
        shared: it counts as a shared component (ReuseRate's population).
        dead: it counts as dead (DeadCompRate's numerator).
    """

    file: str
    name: str
    line: int
    kind: str
    exported_as: tuple[str, ...]
    importers: tuple[str, ...]
    used_in_file: bool
    shared: bool
    dead: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (tuples become lists)."""
        d = dataclasses.asdict(self)
        d["exported_as"] = list(self.exported_as)
        d["importers"] = list(self.importers)
        return d


@final
@dataclasses.dataclass(frozen=True)
class MaintainabilityReport:
    """The maintainability axis of one generated project (MobileForge, section 4.1 and Table 3).

    Attributes:
        file_count: number of source files (``.ts``/``.tsx`` under ``src/``, ``.d.ts`` excluded).
        total_loc: non-blank, non-comment lines over all source files.
        loc_per_file: ``total_loc / file_count``; ``None`` without source files.
        loc_by_file: ``{file: loc}`` (POSIX paths relative to the project directory).
        components: every declared component, in file then line order.
        component_count: ``len(components)``.
        shared_component_count: components with ``shared``.
        dead_component_count: components with ``dead``.
        reuse_rate: mean ``len(importers)`` over shared components; ``None`` when there are none.
        dead_comp_rate: ``dead_component_count / component_count``; ``None`` without components.
        color_counts: ``{colour: uses}`` over all class strings.
        color_uses: total colour-token uses.
        palette: the recurring palette (colours with ``>= palette_min_uses`` uses), sorted.
        palette_uses: uses of palette colours.
        palette_min_uses: the threshold ``K`` used.
        color_consistency: ``palette_uses / color_uses``; ``None`` without colour uses.
        page_modules: files counted as page/route modules, sorted.
        routes: route paths as :func:`parse_routes` returns them.
        parse_error_files: files whose syntax tree contains errors (still measured; tree-sitter recovers).
        unresolved_imports: relative/aliased imports of script modules that match no source file, as
            ``{"file", "line", "specifier"}``.
    """

    file_count: int
    total_loc: int
    loc_per_file: float | None
    loc_by_file: Mapping[str, int]
    components: tuple[ComponentInfo, ...]
    component_count: int
    shared_component_count: int
    dead_component_count: int
    reuse_rate: float | None
    dead_comp_rate: float | None
    color_counts: Mapping[str, int]
    color_uses: int
    palette: tuple[str, ...]
    palette_uses: int
    palette_min_uses: int
    color_consistency: float | None
    page_modules: tuple[str, ...]
    routes: tuple[str, ...]
    parse_error_files: tuple[str, ...]
    unresolved_imports: tuple[Mapping[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        """The report as plain builtins (dicts, lists, str, int, float, None) for JSON and xdist."""
        return {
            "file_count": self.file_count,
            "total_loc": self.total_loc,
            "loc_per_file": self.loc_per_file,
            "loc_by_file": dict(self.loc_by_file),
            "components": [c.to_dict() for c in self.components],
            "component_count": self.component_count,
            "shared_component_count": self.shared_component_count,
            "dead_component_count": self.dead_component_count,
            "reuse_rate": self.reuse_rate,
            "dead_comp_rate": self.dead_comp_rate,
            "color_counts": dict(self.color_counts),
            "color_uses": self.color_uses,
            "palette": list(self.palette),
            "palette_uses": self.palette_uses,
            "palette_min_uses": self.palette_min_uses,
            "color_consistency": self.color_consistency,
            "page_modules": list(self.page_modules),
            "routes": list(self.routes),
            "parse_error_files": list(self.parse_error_files),
            "unresolved_imports": [dict(u) for u in self.unresolved_imports],
        }


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
class _File:
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


def _text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
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
    for node in _walk(tree.root_node):
        if node.type == "comment":
            for i in range(node.start_byte, node.end_byte):
                if masked[i] not in (0x0A, 0x0D):
                    masked[i] = 0x20
    return sum(1 for line in bytes(masked).split(b"\n") if line.strip())


def _string_value(node: tree_sitter.Node | None) -> str | None:
    """The literal value of a ``string`` or substitution-free ``template_string`` node, else ``None``."""
    if node is None:
        return None
    if node.type == "jsx_expression" and node.named_child_count == 1:
        return _string_value(node.named_children[0])
    if node.type == "string":
        return _text(node)[1:-1]
    if node.type == "template_string" and not any(c.type == "template_substitution" for c in node.children):
        return _text(node)[1:-1]
    return None


def _callee_name(call: tree_sitter.Node) -> str:
    fn = call.child_by_field_name("function")
    return _text(fn) if fn is not None else ""


def _contains_jsx(node: tree_sitter.Node) -> bool:
    return any(n.type in _JSX_NODES for n in _walk(node))


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
    if value.type == "call_expression" and _callee_name(value) in _COMPONENT_WRAPPERS:
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
            return _text(value)
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
                    if _text(base) in _COMPONENT_BASES:
                        return True
    body = cls.child_by_field_name("body")
    if body is None:
        return False
    for member in body.named_children:
        if member.type == "method_definition" and _text(member.child_by_field_name("name")) == "render":
            if _returns_jsx(member):
                return True
    return False


def _function_kind(fn: tree_sitter.Node) -> str:
    return "arrow" if fn.type == "arrow_function" else "function"


class _Resolver:
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


def _analyze_file(f: _File, resolver: _Resolver) -> None:
    """Fill imports, exports, components, references, declarators and colour uses of one parsed file."""
    root = f.tree.root_node
    f.loc = _count_loc(f.source, f.tree)

    def resolve(spec_node: tree_sitter.Node | None, line: int) -> str | None:
        spec = _string_value(spec_node)
        if spec is None:
            return None
        target, scriptish = resolver.resolve(f.rel, spec)
        if target is None and scriptish:
            f.unresolved.append((line, spec))
        return target

    def add_component(name: str, line: int, kind: str, node: tree_sitter.Node) -> None:
        f.components.append(_Decl(name, line, kind, node.start_byte, node.end_byte))

    def declaration(node: tree_sitter.Node, exported: bool, default: bool) -> None:
        """A top-level declaration (possibly under ``export``)."""
        if node.type in ("function_declaration", "generator_function_declaration"):
            name = _text(node.child_by_field_name("name"))
            if _PASCAL.match(name) and _returns_jsx(node):
                add_component(name, _line(node), "function", node)
            if exported:
                f.exports["default" if default else name] = ("local", name)
        elif node.type in ("class_declaration", "abstract_class_declaration"):
            name = _text(node.child_by_field_name("name"))
            if _PASCAL.match(name) and _is_class_component(node):
                add_component(name, _line(node), "class", node)
            if exported:
                f.exports["default" if default else name] = ("local", name)
        elif node.type in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                if decl.type != "variable_declarator":
                    continue
                name_node = decl.child_by_field_name("name")
                if name_node is None or name_node.type != "identifier":
                    continue
                name = _text(name_node)
                value = decl.child_by_field_name("value")
                if value is not None:
                    f.declarators[name] = value
                    for sub in _walk(value):
                        if sub.type == "call_expression" and _callee_name(sub) == "import":
                            args = sub.child_by_field_name("arguments")
                            spec = _string_value(args.named_children[0]) if args and args.named_child_count else None
                            target = resolver.resolve(f.rel, spec)[0] if spec is not None else None
                            if target is not None:
                                f.lazy_targets[name] = target
                fn = _unwrap_function(value)
                if fn is not None and _PASCAL.match(name) and _returns_jsx(fn):
                    add_component(name, _line(decl), _function_kind(fn), decl)
                elif value is not None and value.type == "class" and _PASCAL.match(name) and _is_class_component(value):
                    add_component(name, _line(decl), "class", decl)
                elif value is not None and value.type != "identifier":
                    wrapped = _wrapped_identifier(value)
                    if wrapped is not None:
                        f.aliases[name] = wrapped  # const Card = memo(CardImpl)
                if exported:
                    f.exports[name] = ("local", name)

    for stmt in root.named_children:
        if stmt.type == "import_statement":
            if any(c.type == "type" for c in stmt.children):
                continue  # import type {...}: no runtime binding
            target = resolve(stmt.child_by_field_name("source"), _line(stmt))
            if target is None:
                continue
            clause = next((c for c in stmt.named_children if c.type == "import_clause"), None)
            if clause is None:
                f.bindings.append(_Binding(None, target, "*side-effect"))
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    f.bindings.append(_Binding(_text(part), target, "default"))
                elif part.type == "namespace_import":
                    ident = next((c for c in part.named_children if c.type == "identifier"), None)
                    f.bindings.append(_Binding(_text(ident), target, "*"))
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type != "import_specifier" or any(c.type == "type" for c in spec.children):
                            continue
                        name = _text(spec.child_by_field_name("name"))
                        alias = spec.child_by_field_name("alias")
                        f.bindings.append(_Binding(_text(alias) if alias else name, target, name))
        elif stmt.type == "export_statement":
            source = stmt.child_by_field_name("source")
            decl = stmt.child_by_field_name("declaration")
            value = stmt.child_by_field_name("value")
            is_default = any(c.type == "default" for c in stmt.children)
            if source is not None:
                target = resolve(source, _line(stmt))
                if target is None:
                    continue
                for c in stmt.children:
                    if c.type == "*":
                        f.star_sources.append(target)
                    elif c.type == "namespace_export":
                        ident = next((x for x in c.named_children if x.type in ("identifier", "string")), None)
                        f.exports[_text(ident)] = ("ns", target)
                    elif c.type == "export_clause":
                        for spec in c.named_children:
                            if spec.type != "export_specifier":
                                continue
                            name = _text(spec.child_by_field_name("name"))
                            alias = spec.child_by_field_name("alias")
                            f.exports[_text(alias) if alias else name] = ("from", target, name)
            elif decl is not None:
                declaration(decl, exported=True, default=is_default)
            elif value is not None:
                fn = _unwrap_function(value)
                wrapped = _wrapped_identifier(value)
                if wrapped is not None:  # `export default Foo;` or `export default memo(Foo);`
                    f.exports["default"] = ("local", wrapped)
                elif fn is not None and _returns_jsx(fn):
                    add_component("default", _line(stmt), _function_kind(fn), stmt)
                    f.exports["default"] = ("local", "default")
                elif value.type == "class" and _is_class_component(value):
                    add_component("default", _line(stmt), "class", stmt)
                    f.exports["default"] = ("local", "default")
            else:
                for c in stmt.children:
                    if c.type == "export_clause":
                        for spec in c.named_children:
                            if spec.type != "export_specifier":
                                continue
                            name = _text(spec.child_by_field_name("name"))
                            alias = spec.child_by_field_name("alias")
                            f.exports[_text(alias) if alias else name] = ("local", name)
        else:
            declaration(stmt, exported=False, default=False)

    # Dynamic imports anywhere (lazy pages, code splitting): a namespace import of the module.
    for node in _walk(root):
        if node.type == "call_expression" and _callee_name(node) == "import":
            args = node.child_by_field_name("arguments")
            target = resolve(args.named_children[0] if args and args.named_child_count else None, _line(node))
            if target is not None:
                f.bindings.append(_Binding(None, target, "*"))

    # References: identifier occurrences that are not import/export specifiers nor declaration names.
    for node in _walk(root):
        if node.type not in ("identifier", "shorthand_property_identifier"):
            continue
        parent = node.parent
        if parent is None:
            continue
        if parent.type in ("import_specifier", "import_clause", "namespace_import", "export_specifier", "namespace_export"):
            continue
        if parent.type == "export_statement":
            continue  # `export default Foo;` exports, it does not use
        if parent.type in ("function_declaration", "class_declaration", "variable_declarator", "generator_function_declaration"):
            if parent.child_by_field_name("name") == node:
                continue
        f.references.append((_text(node), node.start_byte))

    f.colors = _class_colors(root, f.declarators)


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
                parts.append(_text(child))
        tokens.extend(t for t in "".join(parts).split() if _SENTINEL not in t)

    def collect(node: tree_sitter.Node) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "string":
                key = (n.start_byte, n.end_byte)
                if key not in seen_strings:
                    seen_strings.add(key)
                    tokens.extend(_text(n)[1:-1].split())
                continue
            if n.type == "template_string":
                key = (n.start_byte, n.end_byte)
                if key not in seen_strings:
                    seen_strings.add(key)
                    template_tokens(n)
                continue
            if n.type == "identifier":
                name = _text(n)
                if name in declarators and name not in seen_idents:
                    seen_idents.add(name)
                    stack.append(declarators[name])
                continue
            stack.extend(n.children)

    for node in _walk(root):
        if node.type == "jsx_attribute":
            name_node = node.named_children[0] if node.named_child_count else None
            attr = _text(name_node)
            if attr in ("className", "class") or attr.endswith("ClassName"):
                for value in node.named_children[1:]:
                    collect(value)
        elif node.type == "call_expression" and _callee_name(node) in _CLASS_FUNCS:
            args = node.child_by_field_name("arguments")
            if args is not None:
                collect(args)
    colours: list[str] = []
    for token in tokens:
        colour = color_of_class(token)
        if colour is not None:
            colours.append(colour)
    return colours


# ----------------------------------------------------------------------------------------------------------
# Project-level analysis
# ----------------------------------------------------------------------------------------------------------


class _Project:
    def __init__(self, project_dir: Path, aliases: Mapping[str, str]) -> None:
        project_dir = Path(project_dir)
        if not project_dir.is_dir():
            raise NotADirectoryError(f"{project_dir}: not a directory (expected a generated project)")
        self.project_dir = project_dir
        src = project_dir / "src"
        paths: list[Path] = []
        if src.is_dir():
            for p in sorted(src.rglob("*")):
                rel_parts = p.relative_to(project_dir).parts
                if "node_modules" in rel_parts or not p.is_file():
                    continue
                if p.suffix in (".ts", ".tsx") and not p.name.endswith(".d.ts"):
                    paths.append(p)
        rels = {p.relative_to(project_dir).as_posix(): p for p in paths}
        self.resolver = _Resolver(set(rels), aliases)
        self.files: dict[str, _File] = {}
        tsx_parser = tree_sitter.Parser(_TSX)
        ts_parser = tree_sitter.Parser(_TS)
        for rel, path in rels.items():
            source = path.read_bytes()
            parser = tsx_parser if path.suffix == ".tsx" else ts_parser
            tree = parser.parse(source)
            f = _File(rel=rel, source=source, tree=tree)
            _analyze_file(f, self.resolver)
            self.files[rel] = f

    # -- symbol resolution -------------------------------------------------------------------------------

    def resolve_export(self, file: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> tuple[str, str] | None:
        """The (declaring file, local name) behind export ``name`` of ``file``, through re-export chains."""
        if (file, name) in seen or file not in self.files:
            return None
        seen = seen | {(file, name)}
        f = self.files[file]
        ref = f.exports.get(name)
        if ref is not None:
            if ref[0] == "from":
                return self.resolve_export(ref[1], ref[2], seen)
            if ref[0] == "ns":
                return None
            return self.resolve_local(file, ref[1], seen)
        if name != "default":
            for star in f.star_sources:
                found = self.resolve_export(star, name, seen)
                if found is not None:
                    return found
        return None

    def resolve_local(self, file: str, local: str, seen: frozenset[tuple[str, str]] = frozenset()) -> tuple[str, str] | None:
        """A local name of ``file``: an import binding is followed to its declaration, otherwise it is local."""
        f = self.files[file]
        visited = {local}
        while local in f.aliases and f.aliases[local] not in visited:  # const Card = memo(CardImpl)
            local = f.aliases[local]
            visited.add(local)
        for b in f.bindings:
            if b.local == local:
                if b.imported.startswith("*"):
                    return None
                return self.resolve_export(b.target, b.imported, seen)
        return (file, local)

    def export_names(self, file: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if file in seen or file not in self.files:
            return set()
        f = self.files[file]
        names = set(f.exports)
        for star in f.star_sources:
            names |= {n for n in self.export_names(star, seen | {file}) if n != "default"}
        return names

    def imported_symbols(self, file: str) -> set[tuple[str, str]]:
        """Every (declaring file, local name) that ``file`` imports (named, default, namespace, dynamic)."""
        out: set[tuple[str, str]] = set()
        for b in self.files[file].bindings:
            if b.imported == "*side-effect":
                continue
            if b.imported == "*":
                for name in self.export_names(b.target):
                    found = self.resolve_export(b.target, name)
                    if found is not None:
                        out.add(found)
            else:
                found = self.resolve_export(b.target, b.imported)
                if found is not None:
                    out.add(found)
        return out

    # -- routes --------------------------------------------------------------------------------------------

    def routes_and_elements(self) -> tuple[list[str], set[str]]:
        """Route paths (project order, de-duplicated) and the files declaring route element components."""
        paths: list[str] = []
        element_files: set[str] = set()
        seen_arrays: set[tuple[str, int]] = set()

        def add(path: str) -> None:
            if path not in paths:
                paths.append(path)

        def element_file(file: str, ref: tree_sitter.Node) -> None:
            """Resolve a component reference (identifier or ``NS.Name``) to its declaring file."""
            f = self.files[file]
            if ref.type == "member_expression":
                obj = _text(ref.child_by_field_name("object"))
                prop = _text(ref.child_by_field_name("property"))
                for b in f.bindings:
                    if b.local == obj and b.imported == "*":
                        found = self.resolve_export(b.target, prop)
                        if found is not None:
                            element_files.add(found[0])
                return
            name = _text(ref)
            if not _PASCAL.match(name):
                return
            if name in f.lazy_targets:
                element_files.add(f.lazy_targets[name])
                return
            found = self.resolve_local(file, name)
            if found is not None and found[0] in self.files and any(
                c.name == found[1] for c in self.files[found[0]].components
            ):
                element_files.add(found[0])

        def leaf_elements(file: str, node: tree_sitter.Node) -> None:
            """Record the leaf JSX elements (no element children) of an ``element`` value, attributes skipped."""
            stack = [node]
            while stack:
                n = stack.pop()
                if n.type == "jsx_self_closing_element":
                    name = n.child_by_field_name("name")
                    if name is not None:
                        element_file(file, name)
                    continue
                if n.type == "jsx_element":
                    kids = [c for c in n.named_children if c.type in _JSX_NODES or c.type == "jsx_expression"]
                    if not any(any(d.type in _JSX_NODES for d in _walk(k)) for k in kids):
                        open_tag = n.child_by_field_name("open_tag")
                        name = open_tag.child_by_field_name("name") if open_tag is not None else None
                        if name is not None:
                            element_file(file, name)
                        continue
                    stack.extend(kids)
                    continue
                if n.type in ("jsx_opening_element", "jsx_attribute"):
                    continue
                stack.extend(n.named_children)

        def jsx_route(file: str, node: tree_sitter.Node, prefix: str) -> None:
            stack: list[tuple[tree_sitter.Node, str]] = [(node, prefix)]
            while stack:
                n, pre = stack.pop()
                if n.type in ("jsx_element", "jsx_self_closing_element"):
                    tag = n if n.type == "jsx_self_closing_element" else n.child_by_field_name("open_tag")
                    tag_name = _text(tag.child_by_field_name("name")) if tag is not None else ""
                    if tag is not None and (tag_name == "Route" or tag_name.endswith(".Route")):
                        attrs = {
                            _text(a.named_children[0]): (a.named_children[1] if a.named_child_count > 1 else None)
                            for a in tag.named_children
                            if a.type == "jsx_attribute" and a.named_child_count
                        }
                        path = _string_value(attrs["path"]) if "path" in attrs else None
                        here = _join(pre, path) if path is not None else pre
                        if path is not None or "index" in attrs:
                            add(here)
                        element = attrs.get("element")
                        if element is not None:
                            leaf_elements(file, element)
                        for key in ("Component", "component"):
                            v = attrs.get(key)
                            if v is not None and v.type == "jsx_expression" and v.named_child_count:
                                element_file(file, v.named_children[0])
                        if n.type == "jsx_element":
                            for child in reversed(n.named_children):
                                if child.type not in ("jsx_opening_element", "jsx_closing_element"):
                                    stack.append((child, here))
                        continue
                    if n.type == "jsx_element":
                        for child in reversed(n.named_children):
                            if child.type not in ("jsx_opening_element", "jsx_closing_element"):
                                stack.append((child, pre))
                        continue
                for child in reversed(n.named_children):
                    stack.append((child, pre))

        def config_array(file: str, node: tree_sitter.Node | None, prefix: str) -> None:
            """Route objects of an array literal, or of the declaration an identifier names (also imported)."""
            if node is None:
                return
            if node.type in ("as_expression", "satisfies_expression", "parenthesized_expression"):
                config_array(file, node.named_children[0] if node.named_child_count else None, prefix)
                return
            if node.type == "identifier":
                name = _text(node)
                f = self.files[file]
                if name in f.declarators:
                    config_array(file, f.declarators[name], prefix)
                    return
                found = self.resolve_local(file, name)
                if found is not None and found[0] != file and found[0] in self.files:
                    value = self.files[found[0]].declarators.get(found[1])
                    config_array(found[0], value, prefix)
                return
            if node.type != "array":
                return
            key = (file, node.start_byte)
            if key in seen_arrays:
                return
            seen_arrays.add(key)
            for obj in node.named_children:
                if obj.type != "object":
                    continue
                pairs = {
                    _text(p.child_by_field_name("key")).strip("'\""): p.child_by_field_name("value")
                    for p in obj.named_children
                    if p.type == "pair"
                }
                path = _string_value(pairs.get("path"))
                here = _join(prefix, path) if path is not None else prefix
                index = pairs.get("index")
                if path is not None or (index is not None and _text(index) == "true"):
                    add(here)
                element = pairs.get("element")
                if element is not None:
                    leaf_elements(file, element)
                for comp_key in ("Component", "component"):
                    v = pairs.get(comp_key)
                    if v is not None and v.type in ("identifier", "member_expression"):
                        element_file(file, v)
                lazy = pairs.get("lazy")
                if lazy is not None:
                    for sub in _walk(lazy):
                        if sub.type == "call_expression" and _callee_name(sub) == "import":
                            args = sub.child_by_field_name("arguments")
                            spec = args.named_children[0] if args and args.named_child_count else None
                            spec_value = _string_value(spec)
                            if spec_value is not None:
                                target, _ = self.resolver.resolve(file, spec_value)
                                if target is not None:
                                    element_files.add(target)
                config_array(file, pairs.get("children"), here)

        for rel, f in self.files.items():
            jsx_route(rel, f.tree.root_node, "")
            for node in _walk(f.tree.root_node):
                if node.type == "call_expression":
                    callee = _callee_name(node)
                    if callee in _ROUTER_CALLS or callee.rsplit(".", 1)[-1] in _ROUTER_CALLS:
                        args = node.child_by_field_name("arguments")
                        if args is not None and args.named_child_count:
                            config_array(rel, args.named_children[0], "")
        return paths, element_files


def _join(prefix: str, path: str) -> str:
    """Join a nested route path to its parent's; absolute children keep their own path."""
    if path.startswith("/"):
        joined = path
    else:
        joined = prefix.rstrip("/") + "/" + path
    joined = re.sub(r"/{2,}", "/", joined)
    if len(joined) > 1:
        joined = joined.rstrip("/") or "/"
    return joined


def parse_routes(project_dir: Path, *, aliases: Mapping[str, str] = DEFAULT_ALIASES) -> list[str]:
    """Route paths a generated React Router project declares.

    Sources (every ``.ts``/``.tsx`` file under ``src/``): ``<Route path="...">`` JSX elements (including
    ``<X.Route>``; nested ``<Route>`` children join their parent's path, index routes take the parent's
    path, path-less layout routes pass their parent's path on), and route objects ``{ path: "..." }`` in
    the array given to ``createBrowserRouter`` / ``createHashRouter`` / ``createMemoryRouter`` /
    ``useRoutes`` (an array literal, or a variable holding one, in the same file or imported from another
    project file), following ``children`` arrays the same way. Paths are kept as written (``":id"``
    segments, ``"*"``), made absolute, with duplicate and trailing slashes removed. Nesting across files
    (a ``<Routes>`` rendered inside a route element of another file) is not joined.

    Args:
        project_dir: the generated project (the directory that holds ``src/``).
        aliases: import aliases, as for :func:`measure`.

    Returns:
        The distinct absolute route paths in order of first appearance (files in path order).

    Raises:
        NotADirectoryError: when ``project_dir`` is not a directory.
    """
    routes, _ = _Project(project_dir, aliases).routes_and_elements()
    return routes


def _is_page_module(rel: str) -> bool:
    parts = PurePosixPath(rel).parts[1:-1]  # directories under src/
    return any(p.lower() in PAGE_DIR_NAMES for p in parts)


def measure(
    project_dir: Path,
    *,
    palette_min_uses: int = PALETTE_MIN_USES,
    aliases: Mapping[str, str] = DEFAULT_ALIASES,
) -> MaintainabilityReport:
    """Measure the maintainability axis of one generated project (MobileForge, section 4.1, Table 3).

    Definitions (full text in ``docs/app-generation-metrics.md``):

    * Source files: ``.ts`` and ``.tsx`` files under ``<project_dir>/src/`` (recursively), except ``*.d.ts``
      and anything under ``node_modules``.
    * LoC of a file: physical lines holding at least one non-whitespace character outside comment nodes of
      the syntax tree. ``total_loc`` sums them; ``loc_per_file = total_loc / file_count``.
    * Component: a module-level PascalCase function declaration, function expression or arrow function
      (possibly wrapped in ``memo``/``forwardRef``) with a ``return`` (or expression body) containing JSX,
      a PascalCase class that extends ``(React.)Component``/``PureComponent`` or has a ``render`` method
      returning JSX, or an anonymous such function/class under ``export default`` (named ``"default"``).
    * Imports resolve ``./``, ``../`` and alias (``@/`` -> ``src/``) specifiers to source files, trying the
      path itself (``.ts``/``.tsx``; ``.js``/``.jsx`` mapped to ``.ts``/``.tsx``), then ``.tsx``, ``.ts``,
      ``/index.tsx``, ``/index.ts``. ``import type`` binds nothing. Re-exports (``export {X} from``,
      ``export *``, import-then-export) are followed to the declaring file; a pure re-export is not an import.
      A namespace import (``import * as NS``) or a dynamic ``import()`` imports every export of the module.
    * importers(C): the files other than C's own that import C (by any of the routes above).
    * Page modules: files under a directory named pages/page/screens/screen/views/view/routes, plus the
      files declaring route element components (see :func:`parse_routes`). Entry modules: ``src/main``,
      ``src/index``, ``src/App`` (``.ts``/``.tsx``).
    * Shared component: declared in a file that is neither a page nor an entry module, and imported by at
      least one other file. ``reuse_rate`` = mean ``len(importers)`` over shared components.
    * Dead component: no importer, not referenced in its own file outside its own declaration (JSX use,
      route ``element``/``Component``, passed as a value), and not the root component (the ``default`` or
      ``App`` export of ``src/App.tsx``, which the scaffold's entry renders). ``dead_comp_rate`` = dead /
      declared.
    * ColorConsistency: colour uses (see :func:`color_of_class`) in class strings: ``className``/``class``/
      ``*ClassName`` attribute values (string and template literals, ternaries, calls, arrays, objects,
      and same-file variables they name) and the arguments of ``clsx``/``cn``/``classnames``/``classNames``/
      ``cx``/``twMerge``/``twJoin``/``cva`` calls; each string node is read once. The recurring palette is the
      set of colours used at least ``palette_min_uses`` times in the app; ``color_consistency`` = uses of
      palette colours / all colour uses.

    Args:
        project_dir: the generated project (the directory that holds ``src/``). A project without ``src/``
            gives an empty report (zero counts, ``None`` rates).
        palette_min_uses: the palette threshold ``K`` (default :data:`PALETTE_MIN_USES` = 3), ``>= 1``.
        aliases: import-specifier prefixes mapped to project paths (default ``{"@/": "src/"}``).

    Returns:
        A :class:`MaintainabilityReport`.

    Raises:
        NotADirectoryError: when ``project_dir`` is not a directory.
        ValueError: when ``palette_min_uses < 1``.
    """
    if isinstance(palette_min_uses, bool) or not isinstance(palette_min_uses, int) or palette_min_uses < 1:
        raise ValueError(f"palette_min_uses must be an int >= 1, got {palette_min_uses!r}")
    project = _Project(project_dir, aliases)
    files = project.files
    routes, element_files = project.routes_and_elements()
    page_modules = sorted({rel for rel in files if _is_page_module(rel)} | element_files)

    importers: dict[tuple[str, str], set[str]] = {}
    for rel in files:
        for symbol in project.imported_symbols(rel):
            if symbol[0] != rel:
                importers.setdefault(symbol, set()).add(rel)

    components: list[ComponentInfo] = []
    for rel, f in files.items():
        exported: dict[str, list[str]] = {}
        for export_name, ref in f.exports.items():
            if ref[0] == "local":
                exported.setdefault(ref[1], []).append(export_name)
        for decl in f.components:
            users = importers.get((rel, decl.name), set())
            used_here = any(
                name == decl.name and not (decl.start <= pos < decl.end) for name, pos in f.references
            )
            exports = tuple(sorted(exported.get(decl.name, [])))
            is_root = rel in _APP_MODULES and ("default" in exports or "App" in exports)
            shared = bool(users) and rel not in page_modules and rel not in _ENTRY_MODULES
            dead = not users and not used_here and not is_root
            components.append(
                ComponentInfo(
                    file=rel,
                    name=decl.name,
                    line=decl.line,
                    kind=decl.kind,
                    exported_as=exports,
                    importers=tuple(sorted(users)),
                    used_in_file=used_here,
                    shared=shared,
                    dead=dead,
                )
            )

    shared_list = [c for c in components if c.shared]
    dead_count = sum(1 for c in components if c.dead)
    loc_by_file = {rel: f.loc for rel, f in files.items()}
    total_loc = sum(loc_by_file.values())
    color_counts = Counter(colour for f in files.values() for colour in f.colors)
    color_uses = sum(color_counts.values())
    palette = tuple(sorted(c for c, n in color_counts.items() if n >= palette_min_uses))
    palette_uses = sum(color_counts[c] for c in palette)
    unresolved = tuple(
        {"file": rel, "line": line, "specifier": spec} for rel, f in files.items() for line, spec in f.unresolved
    )
    return MaintainabilityReport(
        file_count=len(files),
        total_loc=total_loc,
        loc_per_file=(total_loc / len(files)) if files else None,
        loc_by_file=loc_by_file,
        components=tuple(components),
        component_count=len(components),
        shared_component_count=len(shared_list),
        dead_component_count=dead_count,
        reuse_rate=(sum(len(c.importers) for c in shared_list) / len(shared_list)) if shared_list else None,
        dead_comp_rate=(dead_count / len(components)) if components else None,
        color_counts=dict(sorted(color_counts.items())),
        color_uses=color_uses,
        palette=palette,
        palette_uses=palette_uses,
        palette_min_uses=palette_min_uses,
        color_consistency=(palette_uses / color_uses) if color_uses else None,
        page_modules=tuple(page_modules),
        routes=tuple(routes),
        parse_error_files=tuple(rel for rel, f in files.items() if f.tree.root_node.has_error),
        unresolved_imports=unresolved,
    )
