"""A navigation spec passes only on a change tied to its tap and to its target (issue 31, item 5).

Marked ``chromium``: the attacker bundles under fixtures/apps/tabs_demo_atk_*/dist (built by make_fixtures.py from
``tabs_demo/src``) run in Debian's Chromium through Playwright; the in-page rules run on pages set by the test.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_mobilebench.suites.app_generation import navigation as nav
from pytest_mobilebench.suites.app_generation import tapcheck
from pytest_mobilebench.suites.app_generation.manifest import (
    AppManifest,
    parse_manifest,
)
from pytest_mobilebench.suites.app_generation.serve import serve_spa

ROOT = Path(__file__).resolve().parents[1]
APPS = ROOT / "fixtures" / "apps"
CASE = ROOT / "cases" / "app_generation" / "tabs_demo.yaml"
SEL = nav._INTERACTIVE_SEL

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(not Path(nav.CHROMIUM_PATH).exists(), reason=f"{nav.CHROMIUM_PATH} is absent"),
]


@pytest.fixture(scope="module")
def manifest() -> AppManifest:
    return parse_manifest(CASE, yaml.safe_load(CASE.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    handle = nav.launch_browser()
    yield handle.browser()
    handle.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = nav.new_mobile_context(browser)
    yield context.new_page()
    context.close()


def _run(browser: Any, app: str, m: AppManifest, *ids: str) -> dict[str, dict[str, Any]]:
    m = m.model_copy(update={"nav_tests": [s for s in m.nav_tests if s.id in ids]})
    with serve_spa(APPS / app / "dist") as url:
        return {e["spec_id"]: e for e in nav.run_specs(browser, url, m)}


@pytest.mark.parametrize(
    "app",
    [
        "tabs_demo_atk_tap_rewrites_line",
        "tabs_demo_atk_body_toggles_div",
        "tabs_demo_atk_timer_rewrites_text",
        "tabs_demo_atk_any_tap_opens_dialog",
    ],
)
def test_an_overlay_faked_by_a_tap_listener_is_c4(browser: Any, manifest: AppManifest, app: str) -> None:
    evs = _run(browser, app, manifest, "child-search-filters", "tab-search-to-home")
    assert evs["tab-search-to-home"]["passed"]  # the rest of the app is honest and still passes
    e = evs["child-search-filters"]
    # the tap hit the Filters button and the page changed: "the content changed after the tap" held
    assert e["clicked"] and e["affordance"]["hit_ok"] and e["hash_after"] != e["hash_before"]
    assert (e["passed"], e["failure_class"]) == (False, "C4")
    if app.endswith("opens_dialog"):  # a real-looking dialog, but any tap opens it: the neutral tap did too
        assert [layer["role"] for layer in e["new_layers"]] == ["dialog"]
        assert e["control"]["same_change"] and e["control"]["new_layers"] and e["control"]["hit"] is not None
    else:  # a rewritten line or an in-flow div is no overlay: no control is needed to fail it
        assert e["new_layers"] == [] and e["control"] is None


def test_an_honest_overlay_is_its_tap_own(browser: Any, manifest: AppManifest) -> None:
    e = _run(browser, "tabs_demo", manifest, "child-search-filters")["child-search-filters"]
    assert e["passed"] and e["failure_class"] is None
    assert [(layer["tag"], layer["role"], layer["label"]) for layer in e["new_layers"]] == [
        ("div", "dialog", "Filter options")
    ]
    control = e["control"]
    assert control["error"] is None and not control["same_change"] and control["new_layers"] == []
    assert control["path_after"] == "/search"
    x, y, w, h = e["affordance"]["bbox"]
    cx, cy = control["point"]
    assert not (x - 12 <= cx <= x + w + 12 and y - 12 <= cy <= y + h + 12)  # never on the affordance


class _Injecting:
    """A browser whose every fresh context first runs ``script`` in its pages (the candidate's own code)."""

    def __init__(self, browser: Any, script: str) -> None:
        self.version = browser.version
        self._browser, self._script = browser, script

    def new_context(self, **kw: Any) -> Any:
        context = self._browser.new_context(**kw)
        context.add_init_script(self._script)
        return context


def test_a_route_any_tap_reaches_is_c4(browser: Any, manifest: AppManifest) -> None:
    """A route spec whose target route the neutral tap reaches too: the route is not the affordance's."""
    spec = next(s for s in manifest.nav_tests if s.id == "tab-home-to-search")
    any_tap = _Injecting(browser, "document.addEventListener('click', () => history.pushState({}, '', '/search'))")
    with serve_spa(APPS / "tabs_demo" / "dist") as url:
        e = nav.run_spec(any_tap, url, manifest, spec)
        honest = nav.run_spec(browser, url, manifest, spec)
    assert honest["passed"] and not honest["control"]["same_change"]
    assert e["path_after"] == "/search" and e["control"]["same_change"]
    assert (e["passed"], e["failure_class"]) == (False, "C4")


def test_new_layers_are_new_elements_not_new_text(page: Any) -> None:
    page.set_content("""<body style="margin:0"><main style="height:700px">content</main>
      <nav id="bar" style="position:fixed;bottom:0;left:0;right:0;height:56px;z-index:10">Home Search</nav></body>""")
    before = tapcheck.layers_shown(page)
    page.evaluate("document.getElementById('bar').textContent = 'Filters applied ' + Math.random()")
    assert tapcheck.new_layers(page, before) == []  # the bar was shown before: rewriting it shows nothing new
    page.evaluate("""() => {
      const badge = Object.assign(document.createElement('span'), {textContent: '3'});
      badge.style.cssText = 'position:fixed;top:0;right:0;width:16px;height:16px;z-index:99';
      const flow = Object.assign(document.createElement('div'), {textContent: 'Filter options'});
      document.body.append(badge, flow);
    }""")
    assert tapcheck.new_layers(page, before) == []  # a badge too small to be a layer; an in-flow div
    page.evaluate("""() => {
      const sheet = document.createElement('div');
      sheet.style.cssText = 'position:fixed;inset:0;z-index:50;background:#0006';
      sheet.innerHTML = '<div role="dialog" aria-label="Sort">Sort by</div>';
      const dlg = document.createElement('dialog'); dlg.textContent = 'Share'; document.body.append(sheet, dlg);
      dlg.show();
    }""")
    found = sorted((layer["tag"], layer["text"]) for layer in tapcheck.new_layers(page, before))
    assert found == [("dialog", "Share"), ("div", "Sort by")]  # outermost layers only: the sheet, not its dialog


def test_neutral_points_avoid_what_can_be_tapped(page: Any) -> None:
    page.set_content("""<meta name="viewport" content="width=device-width"><body style="margin:0">
      <header style="position:sticky;top:0;height:60px">Title</header>
      <button style="display:block;width:375px;height:100px">Go</button>
      <label style="display:block;height:60px"><input type="checkbox"> Outdoor</label>
      <div id="card" style="height:100px;cursor:pointer">a card</div>
      <div id="empty" style="height:400px"></div></body>""")
    points = page.evaluate(tapcheck.NEUTRAL_JS, [tapcheck.GRID_STEP, [0, 500, 375, 60], SEL])
    assert {hit for _x, _y, hit in points} == {"div#empty", "body"}  # below the page's last element: body
    assert min(y for _x, y, _hit in points) >= 320  # not the sticky header, button, label or pointer card
    assert all(not (500 <= y <= 560) for _x, y, _hit in points)  # the affordance's box is left alone
    x, y, hit = tapcheck.pick_neutral_point(page, None, SEL, random.Random(0))
    assert hit in ("div#empty", "body") and 0 <= x < 375 and 320 <= y < 812


def test_a_page_with_no_neutral_point_shows_no_tied_change(page: Any) -> None:
    page.set_content('<body style="margin:0;cursor:pointer"><div style="height:900px">tap anywhere</div></body>')
    run = tapcheck.control_tap(
        page,
        lambda: None,
        overlay=True,
        target_route="/",
        affordance_bbox=None,
        interactive_sel=SEL,
        path_of=nav.path_of,
    )
    assert run["point"] is None and "no neutral point" in str(run["error"])
    assert not tapcheck.tied({"control": run}) and not tapcheck.tied({"control": None})


def _with_text(m: AppManifest, *phrases: str) -> AppManifest:
    """The manifest with the ``filters`` overlay declaring ``phrases`` as its text."""
    screens = {**m.screens, "filters": m.screens["filters"].model_copy(update={"text": list(phrases)})}
    return m.model_copy(update={"screens": screens})


@pytest.mark.parametrize(
    ("app", "phrase"),
    [
        ("tabs_demo_atk_tap_rewrites_line", "Showing filtered activities"),
        ("tabs_demo_atk_body_toggles_div", "filter   OPTIONS"),
    ],
)
def test_a_target_phrase_any_tap_shows_is_c4(browser: Any, manifest: AppManifest, app: str, phrase: str) -> None:
    e = _run(browser, app, _with_text(manifest, phrase), "child-search-filters")["child-search-filters"]
    assert e["target_text"] == [phrase] and e["new_layers"] == []  # the tap showed the target's phrase ...
    assert e["control"]["target_text"] == [phrase] and e["control"]["same_change"]  # ... and so did a neutral tap
    assert (e["passed"], e["failure_class"]) == (False, "C4")


def test_a_target_phrase_only_the_affordance_shows_passes(browser: Any, manifest: AppManifest) -> None:
    """An in-flow panel (no layer) that the Filters button alone opens passes on the target's declared phrase."""
    panel = _Injecting(
        browser,
        """document.addEventListener('click', e => {
      const button = e.target.closest && e.target.closest('button');
      if (button && button.textContent.includes('Filters'))
        document.querySelector('main').append(Object.assign(document.createElement('p'),
            {textContent: 'Outdoor only'}));
    });""",
    )
    spec = next(s for s in manifest.nav_tests if s.id == "child-search-filters")
    with serve_spa(APPS / "tabs_demo_c4_no_handler" / "dist") as url:
        declared = nav.run_spec(panel, url, _with_text(manifest, "Outdoor only"), spec)
        undeclared = nav.run_spec(panel, url, manifest, spec)
    assert declared["passed"] and declared["target_text"] == ["Outdoor only"] and declared["new_layers"] == []
    assert declared["control"]["target_text"] == [] and not declared["control"]["same_change"]
    assert (undeclared["passed"], undeclared["failure_class"]) == (False, "C4")  # no phrase declared, no layer


def test_newly_shown_ignores_case_and_spacing() -> None:
    assert tapcheck.newly_shown(["Filter  options", "Home", ""], "Home Search", "Home filter OPTIONS") == [
        "Filter  options"
    ]
    assert tapcheck.newly_shown(["Home"], "", "") == []
