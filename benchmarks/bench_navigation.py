"""Navigation throughput: the harness's state-isolated specs vs a bare Playwright loop, same run, same worker.

Both sides open a FRESH browser context per spec on ONE shared Chromium (a context per spec, not a browser per
spec), open the source route, wait for the page to settle with the same DOM-quiet rule, perform the spec's
action (first hint, by role), wait again and read the URL. The harness additionally resolves hints in order,
collects the C1-C4 evidence (snapshot hashes, bounding box, hit test), classifies and writes the evidence
JSON. Rounds alternate between the two sides to spread machine noise. Target: harness / bare <= 1.2.

Usage: ``python benchmarks/bench_navigation.py [--rounds 3]`` (needs /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml

from pytest_mobilebench.suites.app_generation import navigation as nav
from pytest_mobilebench.suites.app_generation.manifest import (
    AppManifest,
    NavCategory,
    parse_manifest,
)
from pytest_mobilebench.suites.app_generation.serve import serve_spa

CASE = ROOT / "cases" / "app_generation" / "tabs_demo.yaml"
DIST = ROOT / "fixtures" / "apps" / "tabs_demo" / "dist"


def bare_loop(browser: Any, base: str, m: AppManifest) -> int:
    """The same navigations with plain Playwright calls; returns how many reached their target route."""
    ok = 0
    for spec in m.nav_tests:
        context = nav.new_mobile_context(browser)
        page = context.new_page()
        page.goto(base + m.route_of(spec.source_screen), wait_until="load")
        page.evaluate(nav._QUIET_JS, [150, 3000])
        if spec.category is not NavCategory.PAGE_EXISTENCE:
            hint = spec.action[0]
            page.get_by_role(hint.role, name=hint.name, exact=True).first.click(timeout=3000)
            page.evaluate(nav._QUIET_JS, [150, 3000])
        ok += nav.path_of(page.url) == nav.path_of("http://x" + m.route_of(spec.target))
        context.close()
    return ok


def harness(browser: Any, base: str, m: AppManifest, out: Path) -> int:
    """The harness's run_specs with evidence written to ``out``; returns passed specs."""
    return sum(1 for e in nav.run_specs(browser, base, m, out_dir=out) if e["passed"])


def main() -> None:
    """Print specs/second per worker for both sides and their ratio."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    m = parse_manifest(CASE, yaml.safe_load(CASE.read_text(encoding="utf-8")))
    # every spec's first hint is a role hint, so the bare loop can run them all
    assert all(s.category is NavCategory.PAGE_EXISTENCE or s.action[0].strategy == "role" for s in m.nav_tests)
    n = len(m.nav_tests)
    handle = nav.launch_browser()
    times: dict[str, float] = {"harness": 0.0, "bare": 0.0}
    try:
        browser = handle.browser()
        with serve_spa(DIST) as base, tempfile.TemporaryDirectory() as tmp:
            bare_loop(browser, base, m)  # warm-up (disk cache, JIT) for both sides
            for r in range(args.rounds):
                order = ("harness", "bare") if r % 2 == 0 else ("bare", "harness")
                for side in order:
                    t0 = time.perf_counter()
                    passed = (
                        harness(browser, base, m, Path(tmp) / f"r{r}")
                        if side == "harness"
                        else bare_loop(browser, base, m)
                    )
                    times[side] += time.perf_counter() - t0
                    assert passed == n, f"{side} passed {passed}/{n}"
    finally:
        handle.close()
    total = n * args.rounds
    hs, bs = total / times["harness"], total / times["bare"]
    print(f"specs per round: {n}, rounds: {args.rounds}, one worker, one Chromium, a context per spec")
    print(f"harness : {hs:6.2f} specs/s  ({times['harness'] / total * 1000:.0f} ms/spec)")
    print(f"bare    : {bs:6.2f} specs/s  ({times['bare'] / total * 1000:.0f} ms/spec)")
    ratio = times["harness"] / times["bare"]
    print(f"overhead: {ratio:.2f}x (target <= 1.2x) -> {'OK' if ratio <= 1.2 else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
