"""The run page in a real Chromium: it renders with no console error, every plot is drawn, no script runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_page import AG_PLOTS, IR_PLOTS, make_page

pytestmark = pytest.mark.chromium

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def test_run_page_renders_every_plot_without_console_errors(browser, tmp_path: Path) -> None:
    page_file, _ = make_page(tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    expected = [f"plot-issue_resolution-{k}" for k in IR_PLOTS] + [f"plot-app_generation-{k}" for k in AG_PLOTS]
    assert sorted(page.eval_on_selector_all("figure.plot", "els => els.map(e => e.id)")) == sorted(expected)
    for element_id in expected:
        box = page.locator(f"#{element_id} svg").bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 100, element_id
        assert page.locator(f"#{element_id} svg path").count() > 5, element_id  # axes and bars were drawn
    assert page.locator("figure.plot").count() == len(expected)
    assert page.evaluate("window.__pwned === undefined")  # the candidate's text stayed text
    assert page.locator("table.headline").count() == 2
    assert messages == [] and failed == []
    page.close()
