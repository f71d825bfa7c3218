"""Maintainability axis (MobileForge section 4.1, Table 3) on hand-counted TSX fixtures.

Fixtures: ``fixtures/apps/metrics/shop`` (JSX routes, barrel files, alias import, lazy page, class
component) and ``fixtures/apps/metrics/configured`` (createBrowserRouter config imported from another
file, namespace import, forwardRef/memo wrappers, cva). Every expected number below was counted by hand
from the fixture files; the counts are written out next to each assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench.suites.app_generation.maintainability import (
    MaintainabilityReport,
    measure,
    parse_routes,
)
from pytest_mobilebench.suites.app_generation.tsx import color_of_class

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "apps" / "metrics"
SHOP = FIXTURES / "shop"
CONFIGURED = FIXTURES / "configured"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _component(report: MaintainabilityReport, file: str, name: str):
    matches = [c for c in report.components if c.file == file and c.name == name]
    assert len(matches) == 1, (file, name, report.components)
    return matches[0]


# ---------------------------------------------------------------------------------------------------------
# shop fixture
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop() -> MaintainabilityReport:
    return measure(SHOP)


def test_shop_loc_per_file(shop: MaintainabilityReport) -> None:
    # Non-blank, non-comment lines, counted by hand:
    #   main.tsx 10 lines - 1 blank = 9
    #   App.tsx 35 lines - 3 blank - 1 "//" line = 31
    #   pages/Home.tsx 19 lines - 1 blank - 3 lines of /* */ = 15 ({/* */} in JSX and "Shop // not a
    #     comment" JSX text are code)
    #   pages/Search.tsx 14 - 1 = 13; pages/Profile.tsx 13 - 2 = 11; pages/Settings.tsx 5 - 1 blank - 1 "//" = 3
    #   components/TabBar.tsx 30 - 5 = 25; Card.tsx 13 - 2 = 11; Badge.tsx 10 - 2 = 8; index.ts 2;
    #   Header.tsx 7 - 1 = 6; Unused.tsx 3 - 1 = 2; lib/cn.ts 3.  vite-env.d.ts is excluded (.d.ts).
    assert shop.loc_by_file == {
        "src/App.tsx": 31,
        "src/components/Badge.tsx": 8,
        "src/components/Card.tsx": 11,
        "src/components/Header.tsx": 6,
        "src/components/TabBar.tsx": 25,
        "src/components/Unused.tsx": 2,
        "src/components/index.ts": 2,
        "src/lib/cn.ts": 3,
        "src/main.tsx": 9,
        "src/pages/Home.tsx": 15,
        "src/pages/Profile.tsx": 11,
        "src/pages/Search.tsx": 13,
        "src/pages/Settings.tsx": 3,
    }
    assert shop.file_count == 13
    assert shop.total_loc == 139
    assert shop.loc_per_file == pytest.approx(139 / 13)


def test_shop_components_and_kinds(shop: MaintainabilityReport) -> None:
    # 14 components: App.tsx NotFound + App; pages Home, Search, Profile (arrow), Settings; TabBar.tsx TabItem +
    # TabBar; Card.tsx Card + CardFooter; Badge.tsx Badge (memo arrow) + OldBadge; Header (class); Unused (arrow).
    # lib/cn.ts returns a string, not JSX: not a component.
    found = {(c.file, c.name, c.kind) for c in shop.components}
    assert found == {
        ("src/App.tsx", "NotFound", "function"),
        ("src/App.tsx", "App", "function"),
        ("src/pages/Home.tsx", "Home", "function"),
        ("src/pages/Search.tsx", "Search", "function"),
        ("src/pages/Profile.tsx", "Profile", "arrow"),
        ("src/pages/Settings.tsx", "Settings", "function"),
        ("src/components/TabBar.tsx", "TabItem", "function"),
        ("src/components/TabBar.tsx", "TabBar", "function"),
        ("src/components/Card.tsx", "Card", "function"),
        ("src/components/Card.tsx", "CardFooter", "function"),
        ("src/components/Badge.tsx", "Badge", "arrow"),
        ("src/components/Badge.tsx", "OldBadge", "function"),
        ("src/components/Header.tsx", "Header", "class"),
        ("src/components/Unused.tsx", "Unused", "arrow"),
    }
    assert shop.component_count == 14
    assert _component(shop, "src/components/TabBar.tsx", "TabBar").exported_as == ("TabBar", "default")
    assert _component(shop, "src/components/TabBar.tsx", "TabBar").line == 20


def test_shop_importers_resolve_barrels_aliases_extensions_and_lazy(shop: MaintainabilityReport) -> None:
    # TabBar: Home (default import), Search (named import), Profile (default import with ".tsx" suffix) = 3
    assert _component(shop, "src/components/TabBar.tsx", "TabBar").importers == (
        "src/pages/Home.tsx",
        "src/pages/Profile.tsx",
        "src/pages/Search.tsx",
    )
    # Card through the barrel: Home imports "../components" (index.ts), Search "../components/index" = 2;
    # the barrel's own `export {...} from` is not an import.
    assert _component(shop, "src/components/Card.tsx", "Card").importers == (
        "src/pages/Home.tsx",
        "src/pages/Search.tsx",
    )
    # Badge through `export * from "./Badge"` in the barrel = 1; Header through the "@/" alias = 1
    assert _component(shop, "src/components/Badge.tsx", "Badge").importers == ("src/pages/Search.tsx",)
    assert _component(shop, "src/components/Header.tsx", "Header").importers == ("src/pages/Profile.tsx",)
    # Settings only through lazy(() => import("./pages/Settings"))
    assert _component(shop, "src/pages/Settings.tsx", "Settings").importers == ("src/App.tsx",)
    assert _component(shop, "src/App.tsx", "App").importers == ("src/main.tsx",)
    assert shop.unresolved_imports == ()


def test_shop_shared_reuse_and_dead(shop: MaintainabilityReport) -> None:
    # Shared (non-page, non-entry file, >= 1 importer): TabBar 3, Card 2, Badge 1, Header 1 -> ReuseRate 7/4.
    shared = {c.name: len(c.importers) for c in shop.components if c.shared}
    assert shared == {"TabBar": 3, "Card": 2, "Badge": 1, "Header": 1}
    assert shop.shared_component_count == 4
    assert shop.reuse_rate == pytest.approx(1.75)
    # Dead: CardFooter (re-exported by the barrel, imported by nobody), OldBadge, Unused (only `export default
    # Unused;`). TabItem and NotFound have no importer but are rendered in their own file: alive. 3/14.
    assert {c.name for c in shop.components if c.dead} == {"CardFooter", "OldBadge", "Unused"}
    assert _component(shop, "src/components/TabBar.tsx", "TabItem").used_in_file is True
    assert _component(shop, "src/App.tsx", "NotFound").used_in_file is True
    assert shop.dead_component_count == 3
    assert shop.dead_comp_rate == pytest.approx(3 / 14)


def test_shop_page_modules_and_routes(shop: MaintainabilityReport) -> None:
    # pages/* by directory; App.tsx because its NotFound is a route element.
    assert shop.page_modules == (
        "src/App.tsx",
        "src/pages/Home.tsx",
        "src/pages/Profile.tsx",
        "src/pages/Search.tsx",
        "src/pages/Settings.tsx",
    )
    # "/profile" index route repeats its parent; "settings/" nests under "/profile"; "*" becomes "/*".
    assert shop.routes == ("/", "/search", "/profile", "/profile/settings", "/*")
    assert parse_routes(SHOP) == ["/", "/search", "/profile", "/profile/settings", "/*"]


def test_shop_color_consistency(shop: MaintainabilityReport) -> None:
    # Colour uses by hand:
    #   gray-200: TabBar border, Search input border, CardFooter border               = 3
    #   white:    TabBar bg, Home button text, Card (via const cardClass), Badge, OldBadge, Header = 6
    #   blue-600: TabItem (ternary in cn), Home button bg, Search focus:ring, Header bg-blue-600/90 = 4
    #   gray-500: TabItem (ternary), CardFooter, NotFound                               = 3
    #   gray-50:  Home, Search, Profile                                                 = 3
    #   gray-900: Home h1, Card h2, Profile dark:bg, Settings                           = 4
    #   one-offs: blue-700 (hover in template literal), #ff5a5f, rose-500 (clsx object key),
    #             rgb(255,0,0) (bg-[rgb(255,_0,_0)]), emerald-400                       = 5
    # total 28; palette (>= 3 uses) = the first six colours, 23 uses -> 23/28. text-[15px] is a size.
    assert shop.color_counts == {
        "#ff5a5f": 1,
        "blue-600": 4,
        "blue-700": 1,
        "emerald-400": 1,
        "gray-200": 3,
        "gray-50": 3,
        "gray-500": 3,
        "gray-900": 4,
        "rgb(255,0,0)": 1,
        "rose-500": 1,
        "white": 6,
    }
    assert shop.color_uses == 28
    assert shop.palette == ("blue-600", "gray-200", "gray-50", "gray-500", "gray-900", "white")
    assert shop.palette_uses == 23
    assert shop.palette_min_uses == 3
    assert shop.color_consistency == pytest.approx(23 / 28)


def test_report_to_dict_is_plain_json(shop: MaintainabilityReport) -> None:
    data = shop.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["reuse_rate"] == pytest.approx(1.75)
    assert isinstance(data["components"], list) and isinstance(data["components"][0]["importers"], list)
    assert data["routes"][0] == "/"


# ---------------------------------------------------------------------------------------------------------
# configured fixture
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def configured() -> MaintainabilityReport:
    return measure(CONFIGURED)


def test_configured_routes_from_imported_router_config() -> None:
    # main.tsx: createBrowserRouter(routes), `routes` imported from routes.tsx; "/" with children
    # index (-> "/"), "item/:id" (-> "/item/:id"), "/about" (absolute, lazy); top-level "*".
    assert parse_routes(CONFIGURED) == ["/", "/item/:id", "/about", "/*"]


def test_configured_loc(configured: MaintainabilityReport) -> None:
    # main 7-2=5, routes 16-1=15, screens/index 2, Feed 9-1=8, Detail 9-1=8, About 3, Shell 11-1=10,
    # ui/Button 22-3=19, List 14, Icon 3, Legacy 5-1=4 -> 91 over 11 files
    assert configured.total_loc == 91
    assert configured.file_count == 11
    assert configured.loc_by_file["src/ui/Button.tsx"] == 19


def test_configured_components_reuse_dead(configured: MaintainabilityReport) -> None:
    # 8 components: Shell, About's Component, Detail, Feed, Button (forwardRef arrow), Icon, Legacy
    # (React.memo(function ...)), List.
    assert configured.component_count == 8
    assert _component(configured, "src/ui/Button.tsx", "Button").kind == "arrow"
    assert _component(configured, "src/ui/Legacy.tsx", "Legacy").kind == "function"
    # Namespace import `* as Screens` from the "@/screens" barrel imports Feed and Detail; the lazy route
    # imports screens/About.tsx; Shell is imported by routes.tsx.
    assert _component(configured, "src/screens/Feed.tsx", "Feed").importers == ("src/routes.tsx",)
    assert _component(configured, "src/screens/Detail.tsx", "Detail").importers == ("src/routes.tsx",)
    assert _component(configured, "src/screens/About.tsx", "Component").importers == ("src/routes.tsx",)
    # Shell is a route element (page module) although it lives in layout/.
    assert "src/layout/Shell.tsx" in configured.page_modules
    # Shared: Button (Shell, Detail) 2, List (Feed) 1, Icon (Button) 1 -> 4/3
    shared = {c.name: len(c.importers) for c in configured.components if c.shared}
    assert shared == {"Button": 2, "List": 1, "Icon": 1}
    assert configured.reuse_rate == pytest.approx(4 / 3)
    # Dead: Legacy only -> 1/8
    assert [c.name for c in configured.components if c.dead] == ["Legacy"]
    assert configured.dead_comp_rate == pytest.approx(1 / 8)


def test_configured_colors_and_threshold(configured: MaintainabilityReport) -> None:
    # #1a2b3c: cva primary bg-[#1A2B3C], ghost text-[#1a2b3c], Icon stroke-[#1a2b3c] = 3
    # white: cva primary, Shell text-white, Icon fill-white = 3
    # slate-300: divide-slate-300, border-x-slate-300, md:hover:text-slate-300/75 = 3
    # slate-100: cva ghost hover:bg-slate-100, Feed bg-slate-100 = 2
    # once: indigo-500, purple-500, pink-500 (gradient), red-500 (!bg-red-500), #112233 (text-[#123]),
    #       hsl(210,40%,50%), black = 7          total 18; palette (K=3) 9 uses -> 0.5
    assert configured.color_uses == 18
    assert configured.palette == ("#1a2b3c", "slate-300", "white")
    assert configured.color_consistency == pytest.approx(9 / 18)
    # K=2 adds slate-100: 11/18
    assert measure(CONFIGURED, palette_min_uses=2).color_consistency == pytest.approx(11 / 18)


# ---------------------------------------------------------------------------------------------------------
# colour tokens
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "colour"),
    [
        ("bg-blue-500", "blue-500"),
        ("text-blue-500", "blue-500"),
        ("md:hover:!bg-blue-500/50", "blue-500"),
        ("border-t-gray-200", "gray-200"),
        ("ring-offset-slate-950", "slate-950"),
        ("from-indigo-500", "indigo-500"),
        ("fill-white", "white"),
        ("bg-[#1A2B3C]", "#1a2b3c"),
        ("bg-[#abc]", "#aabbcc"),
        ("text-[rgb(1,_2,_3)]", "rgb(1,2,3)"),
        ("bg-[color:var(--brand)]", "var(--brand)"),
        ("group-[.is-open]:bg-red-50", "red-50"),
        ("text-[14px]", None),
        ("bg-transparent", None),
        ("text-lg", None),
        ("bg-blue-550", None),
        ("bg-gradient-to-r", None),
        ("border-2", None),
        ("bg-[url(/a.png)]", None),
        ("-text-red-500", None),
    ],
)
def test_color_of_class(token: str, colour: str | None) -> None:
    assert color_of_class(token) == colour


# ---------------------------------------------------------------------------------------------------------
# edge cases on small generated trees
# ---------------------------------------------------------------------------------------------------------


def test_loc_ignores_comments_but_not_strings(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "src/a.ts": (
                "/* header\n"  # comment only
                "   more */\n"  # comment only
                "const a = '// not a comment'; // trailing\n"  # code
                "\n"  # blank
                "   \t\n"  # blank
                "const b = `\n"  # code
                "/* inside a template */\n"  # code (string content)
                "`; /* c */ const c = 1;\n"  # code
                "// end\n"  # comment only
            ),
        },
    )
    report = measure(tmp_path)
    assert report.loc_by_file == {"src/a.ts": 4}


def test_component_shapes_and_type_imports(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "src/components/Anon.tsx": "export default () => <div className='bg-red-500' />;\n",
            "src/components/Klass.tsx": (
                "import { Component } from 'react';\n"
                "export const Klass = class extends Component { render() { return <p/>; } };\n"
            ),
            "src/components/Types.tsx": "export type Props = { a: number };\nexport function Typed() "
            "{ return <b/>; }\n",
            "src/components/NotComp.tsx": "export function helper() { return <i/>; }\nexport const CONST = 3;\n",
            "src/pages/Page.tsx": (
                "import Anon from '../components/Anon';\n"
                "import { Klass } from '../components/Klass';\n"
                "import type { Props } from '../components/Types';\n"
                "import '../components/NotComp';\n"
                "import { Gone } from '../components/Gone';\n"
                "import logo from '../assets/logo.svg';\n"
                "export default function Page(p: Props) { return <><Anon/><Klass/></>; }\n"
            ),
        },
    )
    report = measure(tmp_path)
    names = {(c.file, c.name): c for c in report.components}
    # lower-case `helper` is not a component; anonymous default export is named "default"
    assert set(names) == {
        ("src/components/Anon.tsx", "default"),
        ("src/components/Klass.tsx", "Klass"),
        ("src/components/Types.tsx", "Typed"),
        ("src/pages/Page.tsx", "Page"),
    }
    assert names[("src/components/Anon.tsx", "default")].importers == ("src/pages/Page.tsx",)
    assert names[("src/components/Klass.tsx", "Klass")].kind == "class"
    # `import type` binds nothing and Typed is never imported: dead; Page has no importer: dead too.
    assert names[("src/components/Types.tsx", "Typed")].dead is True
    assert names[("src/pages/Page.tsx", "Page")].dead is True
    assert report.dead_comp_rate == pytest.approx(2 / 4)
    assert report.reuse_rate == pytest.approx(1.0)
    # the missing module is reported; the .svg asset is not a script module
    assert [dict(u) for u in report.unresolved_imports] == [
        {"file": "src/pages/Page.tsx", "line": 5, "specifier": "../components/Gone"}
    ]
    assert report.routes == ()


def test_root_component_is_alive_without_main(tmp_path: Path) -> None:
    _write(tmp_path, {"src/App.tsx": "export default function App() { return <div/>; }\n"})
    report = measure(tmp_path)
    assert report.components[0].dead is False
    assert report.dead_comp_rate == 0.0
    assert report.reuse_rate is None  # no shared components
    assert report.color_consistency is None  # no colour uses


def test_syntax_errors_are_reported_not_fatal(tmp_path: Path) -> None:
    _write(tmp_path, {"src/Broken.tsx": "export function Broken() { return <div>;\n"})
    report = measure(tmp_path)
    assert report.parse_error_files == ("src/Broken.tsx",)
    assert report.file_count == 1


def test_project_without_src_and_bad_arguments(tmp_path: Path) -> None:
    report = measure(tmp_path)
    assert (report.file_count, report.total_loc, report.loc_per_file, report.dead_comp_rate) == (0, 0, None, None)
    with pytest.raises(NotADirectoryError, match="missing"):
        measure(tmp_path / "missing")
    with pytest.raises(ValueError, match="palette_min_uses"):
        measure(tmp_path, palette_min_uses=0)


def test_use_routes_and_nested_layout_routes(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "src/App.tsx": (
                "import { useRoutes, Route, Routes } from 'react-router-dom';\n"
                "const table = [{ path: 'shop', children: [{ path: ':id' }, { index: true }] }];\n"
                "export function A() { return useRoutes(table); }\n"
                "export function B() {\n"
                "  return (<Routes><Route element={<div/>}><Route path={'inbox'} /><Route path=\"/x/\" />"
                "</Route></Routes>);\n"
                "}\n"
            ),
        },
    )
    assert parse_routes(tmp_path) == ["/inbox", "/x", "/shop", "/shop/:id"]


def test_memo_wrapped_exports_reach_the_component(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "src/ui/Card.tsx": (
                "import { memo } from 'react';\n"
                "function CardImpl() { return <div/>; }\n"
                "export default memo(CardImpl);\n"
            ),
            "src/ui/Row.tsx": (
                "import React from 'react';\nconst RowImpl = () => <li/>;\nexport const Row = React.memo(RowImpl);\n"
            ),
            "src/pages/Home.tsx": (
                "import Card from '../ui/Card';\n"
                "import { Row } from '../ui/Row';\n"
                "export default function Home() { return <><Card/><Row/></>; }\n"
            ),
            "src/pages/About.tsx": "import Card from '../ui/Card';\nexport const About = () => <Card/>;\n",
        },
    )
    report = measure(tmp_path)
    card = _component(report, "src/ui/Card.tsx", "CardImpl")
    row = _component(report, "src/ui/Row.tsx", "RowImpl")
    assert card.exported_as == ("default",) and card.importers == ("src/pages/About.tsx", "src/pages/Home.tsx")
    assert row.importers == ("src/pages/Home.tsx",)
    assert card.shared and row.shared
    assert report.reuse_rate == pytest.approx(1.5)  # (2 + 1) / 2
