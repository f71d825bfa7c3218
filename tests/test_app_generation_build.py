"""Build axis: error counting, route coverage (pure) and the real scaffold path (npm + tsc + vite)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_mobilebench.suites.app_generation import build

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "fixtures" / "apps" / "tabs_demo"

needs_npm = pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None,
    reason="npm/node not on PATH: the scaffold cannot be installed",
)

# Output of the pinned tsc 5.9.3 / vite 7.3.8 on a broken copy of our own fixture (see the integration test).
TSC_OUT = """src/main.tsx(2,17): error TS2307: Cannot find module './missing' or its corresponding type declarations.
src/main.tsx(4,7): error TS2322: Type 'string' is not assignable to type 'number'.
src/main.tsx(5,7): error TS2322: Type 'number' is not assignable to type 'string'.
"""
VITE_OUT = """error during build:
Build failed with 2 errors:

[UNRESOLVED_IMPORT] Could not resolve './missing' in src/main.tsx
[UNRESOLVED_IMPORT] Could not resolve './missing2' in src/main.tsx
"""


def test_count_tsc_errors() -> None:
    assert build.count_tsc_errors(TSC_OUT) == 3
    assert build.count_tsc_errors("") == 0
    assert build.count_tsc_errors("error TS5058: The specified path does not exist: 'tsconfig.json'.") == 1


def test_count_vite_errors() -> None:
    assert build.count_vite_errors(VITE_OUT, 1) == 2
    assert build.count_vite_errors("Build failed with 1 error:\n", 1) == 1
    assert build.count_vite_errors("[UNRESOLVED_IMPORT] a\n[PARSE_ERROR] b\n", 1) == 2
    assert build.count_vite_errors("Segmentation fault", 139) == 1
    assert build.count_vite_errors("✓ built in 2.79s", 0) == 0


@pytest.mark.parametrize(
    ("declared", "concrete", "ok"),
    [
        ("/", "/", True),
        ("/search/", "/search", True),
        ("/u/:id", "/u/7", True),
        ("/u/:id", "/u", False),
        ("/u/:id?", "/u", True),
        ("/a/b", "/a", False),
        ("*", "/x", False),
        ("/shop/*", "/shop", False),
        ("/Profile", "/profile", False),
    ],
)
def test_route_matches(declared: str, concrete: str, ok: bool) -> None:
    assert build.route_matches(declared, concrete) is ok


def test_route_coverage_and_stats() -> None:
    cov, missing = build.route_coverage(["/", "/search", "/profile", "/profile/settings"], ["/", "/search", "/*"])
    assert cov == 0.5 and missing == ["/profile", "/profile/settings"]
    assert build.route_coverage([], ["/"]) == (1.0, [])
    stats = build.source_stats(["/", "/search", "/*", "/search"], ["src/pages/B.tsx", "src/pages/A.tsx"], ["/", "/x"])
    assert stats.routes == ("/", "/search") and stats.route_count == 2
    assert stats.pages == ("src/pages/A.tsx", "src/pages/B.tsx") and stats.page_file_count == 2
    assert stats.coverage == 0.5 and stats.missing_routes == ("/x",)


def test_scaffold_is_pinned() -> None:
    pkg = json.loads((build.SCAFFOLD_DIR / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((build.SCAFFOLD_DIR / "package-lock.json").read_text(encoding="utf-8"))
    for deps in (pkg["dependencies"], pkg["devDependencies"]):
        for name, spec in deps.items():
            assert spec[0].isdigit(), f"{name} is not pinned: {spec}"
            assert lock["packages"][f"node_modules/{name}"]["version"] == spec
    assert pkg["devDependencies"]["vite"].startswith("7.")
    assert pkg["dependencies"]["react"].startswith("19.")


def test_materialize_needs_src(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no src/"):
        build.materialize_project(tmp_path, tmp_path / "work", tmp_path)


@pytest.fixture(scope="module")
def scaffold() -> Path:
    return build.ensure_scaffold()


@needs_npm
@pytest.mark.e2e
def test_scaffold_build_of_fixture(scaffold: Path, tmp_path: Path) -> None:
    assert (scaffold / ".complete").is_file() and (scaffold / "node_modules" / ".bin" / "vite").exists()
    assert build.ensure_scaffold() == scaffold  # cached: same folder, no reinstall
    work = build.materialize_project(APP, tmp_path / "work", scaffold)
    assert (work / "node_modules").is_symlink()
    result = build.run_build(work, tmp_path / "logs")
    assert result.ok, result.message
    assert (result.tsc_errors, result.vite_errors, result.tsc_exit, result.vite_exit) == (0, 0, 0, 0)
    assert result.dist is not None and (result.dist / "index.html").is_file()
    assert list((result.dist / "assets").glob("*.js")) and list((result.dist / "assets").glob("*.css"))
    assert "vite build" in result.vite_log.read_text(encoding="utf-8")
    assert not (scaffold / "node_modules" / ".vite").exists()  # the shared install stays clean


@needs_npm
@pytest.mark.e2e
def test_scaffold_build_counts_errors(scaffold: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(APP / "src", broken / "src")
    main = broken / "src" / "main.tsx"
    main.write_text(
        main.read_text(encoding="utf-8") + '\nimport Ghost from "./Ghost";\nconst n: number = "x";\n'
        "console.log(Ghost, n);\n",
        encoding="utf-8",
    )
    result = build.run_build(build.materialize_project(broken, tmp_path / "work", scaffold), tmp_path / "logs")
    assert not result.ok and result.dist is None
    assert result.tsc_errors == 2  # TS2307 missing module + TS2322 string -> number
    assert result.vite_errors == 1 and result.vite_exit != 0
    assert "TS2307" in result.tsc_log.read_text(encoding="utf-8")
