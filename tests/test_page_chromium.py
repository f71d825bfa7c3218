"""The run page in a real Chromium: it renders with no console error, every plot is drawn, no script runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_page import AG_PLOTS, IR_PLOTS, make_page
from test_page_sections import audit_page, compare_html, comparison_page

pytestmark = pytest.mark.chromium

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


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
    assert page.locator("#comparison-issue_resolution table.comparison tr.pair").count() == 1  # m1 vs m2
    assert page.locator("#comparison-app_generation table.comparison tr.pair").count() == 1
    assert messages == [] and failed == []
    page.close()


def _open(browser, target: Path):
    """``target`` in a new tab; returns the tab and the list its console errors / warnings / failed loads go to."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: messages.append(f"failed: {r.url}"))
    page.goto(target.as_uri())
    page.wait_for_load_state("load")
    return page, messages


def test_comparison_and_audit_sections_render_without_console_errors(browser, tmp_path: Path) -> None:
    page, messages = _open(browser, comparison_page(tmp_path / "cmp"))
    section = page.locator("#comparison-issue_resolution")
    assert section.is_visible()
    p_cell = section.locator('td[data-figure="mcnemar_p"]')
    assert p_cell.inner_text() == "0.25" and p_cell.bounding_box()["width"] > 10
    link = section.locator(".disagreements a", has_text="A").first
    href = link.get_attribute("href")
    link.click()
    assert page.evaluate("location.hash") == href
    assert page.locator(f"tr{href}").is_visible() and page.locator(f"tr{href} td").first.inner_text() == "i1"
    assert messages == []
    page.close()

    page, messages = _open(browser, audit_page(tmp_path / "audit"))
    rows = page.locator("#audit-issue_resolution table.audit tbody tr")
    assert rows.count() == 3 and rows.first.is_visible()
    assert page.locator("#audit-issue_resolution table.audit-overview tr").count() == 8
    assert page.evaluate("window.__pwned === undefined")
    assert "window.__pwned = 1" in rows.first.inner_text()  # the hostile test id is shown as text
    assert messages == []
    page.close()

    page, messages = _open(browser, compare_html(tmp_path / "cli"))
    assert page.locator('#comparison td[data-figure="mcnemar_p"]').inner_text() == "0.25"
    assert messages == []
    page.close()


HOSTILE_CONFTEST = '''
import enum
from pytest_mobilebench.suites.base import Column
from pytest_mobilebench.records import LoadedRecord

EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


class Reason(str, enum.Enum):
    OK = "ok"
    WRONG = "wrong"

    @property
    def is_infra(self):
        return False


class HostileSuite:
    """Everything a candidate controls (its output, its model name) is markup meant to run in the reports."""

    name = "hostile"
    options = ()
    markers = {"hostile": "hostile results"}
    columns = (Column("Said", "said"),)
    fixtures = ("tmp_path_factory",)
    fixture_module = None
    reasons = Reason

    def load(self, path, document):
        return [LoadedRecord(suite="hostile", instance_id=e["id"], source=path, line=None, record=dict(e),
                             group="hostile", markers=("hostile",)) for e in document.data["instances"]]

    def load_dataset(self, path, options):
        return None

    def evaluate(self, record, prediction, ctx):
        return {"reason": "wrong", "passed": False, "retryable": False, "detail": EVIL,
                "properties": {"said": EVIL}}

    def summarize(self, results, *, options=None):
        return {"headline": {"label": EVIL, "numerator": 0, "denominator": len(results), "value": 0.0,
                             "ci95": None, "note": EVIL}}

    def cache_material(self, record, prediction, options):
        return None

    def finish_run(self, options, run_id, results):
        return None

    def regrade(self, record, evidence_dir):
        return {}

    def live_model(self, options):
        return None


def pytest_mobilebench_register_suites(registry):
    registry.register(HostileSuite())
'''


def test_hostile_results_stay_text_in_the_run_page_and_the_html_report(browser, pytester: pytest.Pytester) -> None:
    import json

    pytester.makeconftest(HOSTILE_CONFTEST)
    pytester.makefile(".yaml", hostile="suite: hostile\ninstances:\n  - {id: h-1}\n")
    model = "<script>window.__pwned = 3</script>"
    (pytester.path / "p.jsonl").write_text(
        json.dumps({"instance_id": "h-1", "model_name_or_path": model, "model_patch": "x"}) + "\n"
    )
    result = pytester.runpytest(
        "--predictions=p.jsonl", "--mb-run-id=h", "--html=reports/report.html", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    for target in (pytester.path / "reports" / "h" / "index.html", pytester.path / "reports" / "report.html"):
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        page.goto(target.as_uri())
        page.wait_for_load_state("load")
        page.wait_for_timeout(300)
        assert page.evaluate("window.__pwned === undefined"), target
        assert "window.__pwned = 1" in page.inner_text("body"), target  # shown as text
        assert errors == [], target
        page.close()
