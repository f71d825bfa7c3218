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


HOSTILE_CONFTEST = '''
import enum
from pytest_mobilebench.suites.base import Column, LoadedRecord

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
    model = '<script>window.__pwned = 3</script>'
    (pytester.path / "p.jsonl").write_text(json.dumps({"instance_id": "h-1", "model_name_or_path": model,
                                                       "model_patch": "x"}) + "\n")
    result = pytester.runpytest("--predictions=p.jsonl", "--mb-run-id=h", "--html=reports/report.html",
                                "-p", "no:cacheprovider")
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
