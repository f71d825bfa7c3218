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
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Final, final

import tree_sitter

from pytest_mobilebench.suites.app_generation.tsx import (
    JSX_NODES,
    PASCAL,
    ROUTER_CALLS,
    TS,
    TSX,
    Resolver,
    SourceFile,
    analyze_file,
    callee_name,
    node_text,
    string_value,
    walk_nodes,
)

__all__ = [
    "DEFAULT_ALIASES",
    "PAGE_DIR_NAMES",
    "PALETTE_MIN_USES",
    "ComponentInfo",
    "MaintainabilityReport",
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
        self.resolver = Resolver(set(rels), aliases)
        self.files: dict[str, SourceFile] = {}
        tsx_parser = tree_sitter.Parser(TSX)
        ts_parser = tree_sitter.Parser(TS)
        for rel, path in rels.items():
            source = path.read_bytes()
            parser = tsx_parser if path.suffix == ".tsx" else ts_parser
            tree = parser.parse(source)
            f = SourceFile(rel=rel, source=source, tree=tree)
            analyze_file(f, self.resolver)
            self.files[rel] = f

    # -- symbol resolution -------------------------------------------------------------------------------

    def resolve_export(
        self, file: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()
    ) -> tuple[str, str] | None:
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

    def resolve_local(
        self, file: str, local: str, seen: frozenset[tuple[str, str]] = frozenset()
    ) -> tuple[str, str] | None:
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
        routes = _Routes(self)
        for rel, f in self.files.items():
            routes.jsx_route(rel, f.tree.root_node, "")
            for node in walk_nodes(f.tree.root_node):
                if node.type == "call_expression":
                    callee = callee_name(node)
                    if callee in ROUTER_CALLS or callee.rsplit(".", 1)[-1] in ROUTER_CALLS:
                        args = node.child_by_field_name("arguments")
                        if args is not None and args.named_child_count:
                            routes.config_array(rel, args.named_children[0], "")
        return routes.paths, routes.element_files


class _Routes:
    """The route readers of :meth:`_Project.routes_and_elements`: JSX ``<Route>`` trees and route-object
    arrays (``createBrowserRouter([...])``), collecting paths and the files of route element components."""

    def __init__(self, project: _Project) -> None:
        self.project = project
        self.paths: list[str] = []
        self.element_files: set[str] = set()
        self.seen_arrays: set[tuple[str, int]] = set()

    def add(self, path: str) -> None:
        if path not in self.paths:
            self.paths.append(path)

    def element_file(self, file: str, ref: tree_sitter.Node) -> None:
        """Resolve a component reference (identifier or ``NS.Name``) to its declaring file."""
        project = self.project
        f = project.files[file]
        if ref.type == "member_expression":
            obj = node_text(ref.child_by_field_name("object"))
            prop = node_text(ref.child_by_field_name("property"))
            for b in f.bindings:
                if b.local == obj and b.imported == "*":
                    found = project.resolve_export(b.target, prop)
                    if found is not None:
                        self.element_files.add(found[0])
            return
        name = node_text(ref)
        if not PASCAL.match(name):
            return
        if name in f.lazy_targets:
            self.element_files.add(f.lazy_targets[name])
            return
        found = project.resolve_local(file, name)
        if (
            found is not None
            and found[0] in project.files
            and any(c.name == found[1] for c in project.files[found[0]].components)
        ):
            self.element_files.add(found[0])

    def leaf_elements(self, file: str, node: tree_sitter.Node) -> None:
        """Record the leaf JSX elements (no element children) of an ``element`` value, attributes skipped."""
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "jsx_self_closing_element":
                name = n.child_by_field_name("name")
                if name is not None:
                    self.element_file(file, name)
                continue
            if n.type == "jsx_element":
                kids = [c for c in n.named_children if c.type in JSX_NODES or c.type == "jsx_expression"]
                if not any(any(d.type in JSX_NODES for d in walk_nodes(k)) for k in kids):
                    open_tag = n.child_by_field_name("open_tag")
                    name = open_tag.child_by_field_name("name") if open_tag is not None else None
                    if name is not None:
                        self.element_file(file, name)
                    continue
                stack.extend(kids)
                continue
            if n.type in ("jsx_opening_element", "jsx_attribute"):
                continue
            stack.extend(n.named_children)

    def jsx_route(self, file: str, node: tree_sitter.Node, prefix: str) -> None:
        """Every ``<Route>`` under ``node``, nested paths joined to their parents'."""
        stack: list[tuple[tree_sitter.Node, str]] = [(node, prefix)]
        while stack:
            n, pre = stack.pop()
            if n.type in ("jsx_element", "jsx_self_closing_element"):
                tag = n if n.type == "jsx_self_closing_element" else n.child_by_field_name("open_tag")
                tag_name = node_text(tag.child_by_field_name("name")) if tag is not None else ""
                is_route = tag is not None and (tag_name == "Route" or tag_name.endswith(".Route"))
                if is_route:
                    pre = self.route_tag(file, tag, pre)
                if n.type == "jsx_element":
                    for child in reversed(n.named_children):
                        if child.type not in ("jsx_opening_element", "jsx_closing_element"):
                            stack.append((child, pre))
                    continue
                if is_route:
                    continue  # a self-closing <Route/>: its attributes were read
            for child in reversed(n.named_children):
                stack.append((child, pre))

    def route_tag(self, file: str, tag: tree_sitter.Node, prefix: str) -> str:
        """One ``<Route path=... element=... Component=...>`` tag; returns the path its children are under."""
        attrs = {
            node_text(a.named_children[0]): (a.named_children[1] if a.named_child_count > 1 else None)
            for a in tag.named_children
            if a.type == "jsx_attribute" and a.named_child_count
        }
        path = string_value(attrs["path"]) if "path" in attrs else None
        here = _join(prefix, path) if path is not None else prefix
        if path is not None or "index" in attrs:
            self.add(here)
        element = attrs.get("element")
        if element is not None:
            self.leaf_elements(file, element)
        for key in ("Component", "component"):
            v = attrs.get(key)
            if v is not None and v.type == "jsx_expression" and v.named_child_count:
                self.element_file(file, v.named_children[0])
        return here

    def config_array(self, file: str, node: tree_sitter.Node | None, prefix: str) -> None:
        """Route objects of an array literal, or of the declaration an identifier names (also imported)."""
        if node is None:
            return
        if node.type in ("as_expression", "satisfies_expression", "parenthesized_expression"):
            self.config_array(file, node.named_children[0] if node.named_child_count else None, prefix)
            return
        if node.type == "identifier":
            name = node_text(node)
            files = self.project.files
            if name in files[file].declarators:
                self.config_array(file, files[file].declarators[name], prefix)
                return
            found = self.project.resolve_local(file, name)
            if found is not None and found[0] != file and found[0] in files:
                self.config_array(found[0], files[found[0]].declarators.get(found[1]), prefix)
            return
        if node.type != "array" or (file, node.start_byte) in self.seen_arrays:
            return
        self.seen_arrays.add((file, node.start_byte))
        for obj in node.named_children:
            if obj.type == "object":
                self.route_object(file, obj, prefix)

    def route_object(self, file: str, obj: tree_sitter.Node, prefix: str) -> None:
        """One ``{path, index, element, Component, lazy, children}`` route object."""
        pairs = {
            node_text(p.child_by_field_name("key")).strip("'\""): p.child_by_field_name("value")
            for p in obj.named_children
            if p.type == "pair"
        }
        path = string_value(pairs.get("path"))
        here = _join(prefix, path) if path is not None else prefix
        index = pairs.get("index")
        if path is not None or (index is not None and node_text(index) == "true"):
            self.add(here)
        element = pairs.get("element")
        if element is not None:
            self.leaf_elements(file, element)
        for comp_key in ("Component", "component"):
            v = pairs.get(comp_key)
            if v is not None and v.type in ("identifier", "member_expression"):
                self.element_file(file, v)
        lazy = pairs.get("lazy")
        if lazy is not None:
            self.lazy_route(file, lazy)
        self.config_array(file, pairs.get("children"), here)

    def lazy_route(self, file: str, lazy: tree_sitter.Node) -> None:
        """The files a route's ``lazy: () => import("...")`` loads are route element files."""
        for sub in walk_nodes(lazy):
            if sub.type == "call_expression" and callee_name(sub) == "import":
                args = sub.child_by_field_name("arguments")
                spec = args.named_children[0] if args and args.named_child_count else None
                spec_value = string_value(spec)
                if spec_value is not None:
                    target, _ = self.project.resolver.resolve(file, spec_value)
                    if target is not None:
                        self.element_files.add(target)


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


def _importers(project: _Project) -> dict[tuple[str, str], set[str]]:
    """``{(declaring file, name): files other than the declaring one that import it}``."""
    importers: dict[tuple[str, str], set[str]] = {}
    for rel in project.files:
        for symbol in project.imported_symbols(rel):
            if symbol[0] != rel:
                importers.setdefault(symbol, set()).add(rel)
    return importers


def _component_infos(
    files: Mapping[str, SourceFile], importers: Mapping[tuple[str, str], set[str]], page_modules: list[str]
) -> list[ComponentInfo]:
    """Every declared component with its importers, its exports and whether it is shared or dead (the
    definitions in :func:`measure`)."""
    components: list[ComponentInfo] = []
    for rel, f in files.items():
        exported: dict[str, list[str]] = {}
        for export_name, ref in f.exports.items():
            if ref[0] == "local":
                exported.setdefault(ref[1], []).append(export_name)
        for decl in f.components:
            users = importers.get((rel, decl.name), set())
            used_here = any(name == decl.name and not (decl.start <= pos < decl.end) for name, pos in f.references)
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
    return components


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
    * ColorConsistency: colour uses (see :func:`~.tsx.color_of_class`) in class strings: ``className``/``class``/
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

    components = _component_infos(files, _importers(project), page_modules)

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
