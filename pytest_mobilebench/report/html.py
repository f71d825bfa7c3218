"""pytest-html glue; registered by the plugin only when pytest-html is active.

What the pytest-html report (``--html``) gets:

* a headline section above the table: per suite the figures of :mod:`.headline` and a link to the run page
  ``reports/<run_id>/index.html`` (:mod:`.page`), relative to the report file;
* three columns that fit every suite: ``Verdict`` (the reason), ``Figures`` (the suite's own declared
  ``columns``, e.g. ``F2P 1/2 | P2P 3/3`` or ``NavPassRate 0.833``), and ``Cache`` (a badge with the original
  duration when the result came from the result cache: pytest's own Duration column then shows milliseconds);
* per item, relative links to the evidence folder and the run page, and the failure screenshots inline (the
  before/after images of each failed navigation spec, or a result's ``images``), checked to be PNG files
  below :data:`MAX_IMAGE_BYTES`, at most :data:`MAX_IMAGES` per item; a one-colour screenshot is named
  as blank (:func:`image_label`): the app rendered nothing there.

Every text from a result is HTML-escaped before it reaches the report.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, final

import pytest

from pytest_mobilebench.report.headline import is_infra
from pytest_mobilebench.report.progress import item_seconds

__all__ = [
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    "RUN_OUTPUT",
    "TALL_RATIO",
    "HtmlHooks",
    "failure_images",
    "figures_text",
    "image_label",
    "top_of_page",
]

#: ``(summary, run page path)`` set by the plugin's controller once both are written.
RUN_OUTPUT = pytest.StashKey[tuple[dict[str, Any], Path | None]]()

MAX_IMAGES = 8
MAX_IMAGE_BYTES = 1_500_000
_PNG = b"\x89PNG\r\n\x1a\n"
#: a screenshot taller than this many times its width is shown by its top (pytest-html's thumbnail crops the
#: middle of an image, which for a full-page shot of a tall page is its empty middle)
TALL_RATIO = 1.5
_HEADERS = ("Verdict", "Figures", "Cache")


def figures_text(result: Mapping[str, Any], columns: Sequence[Any]) -> str:
    """``"F2P 1/2 | P2P 3/3"`` from the result's properties and the suite's columns (``header``, ``key``)."""
    from pytest_mobilebench.report.page import column_value

    texts = ((column.header, column_value(result, column.key)) for column in columns if column.key != "reason")
    return " | ".join(f"{header} {text}" for header, text in texts if text != "")


def failure_images(result: Mapping[str, Any]) -> list[Path]:
    """PNG files to show inline for a failed item: ``images`` of the result, then ``nav/*.before.png`` /
    ``nav/*.after.png`` in its evidence folder; only regular PNG files below the size cap, at most
    :data:`MAX_IMAGES`."""
    if result.get("passed") is True or not result.get("evidence_dir"):
        return []
    evidence = Path(str(result["evidence_dir"]))
    candidates = [Path(str(p)) for p in result.get("images") or []]
    nav = evidence / "nav"
    if nav.is_dir():
        shots = [p for p in nav.iterdir() if p.name.endswith((".before.png", ".after.png"))]
        candidates += sorted(shots, key=lambda p: (p.name.rsplit(".", 2)[0], p.name.endswith(".after.png")))
    shown = []
    for path in candidates:
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_IMAGE_BYTES:
                continue
            with open(path, "rb") as fh:
                if fh.read(8) != _PNG:
                    continue
        except OSError:
            continue
        shown.append(path)
        if len(shown) == MAX_IMAGES:
            break
    return shown


def image_label(path: Path) -> str:
    """The name an inline screenshot is shown under: the file name, plus ``" (blank: the page rendered one
    colour)"`` when every pixel has the same colour, so a blank thumbnail reads as the app's blank screen
    (failure class C1), not as a broken report. Without Pillow (the ``web`` extra) the name alone."""
    try:
        from PIL import Image
    except ImportError:
        return path.name
    try:
        with Image.open(path) as image:
            extrema = image.convert("RGB").getextrema()
    except (OSError, ValueError):
        return path.name
    return path.name + (" (blank: the page rendered one colour)" if all(lo == hi for lo, hi in extrema) else "")


def top_of_page(path: Path) -> bytes | None:
    """PNG bytes of the top of a tall screenshot (``width x width * TALL_RATIO`` pixels), or None when the
    image is not taller than :data:`TALL_RATIO` times its width, cannot be read, or Pillow is absent."""
    try:
        import io

        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(path) as image:
            width, height = image.size
            if width <= 0 or height <= width * TALL_RATIO:
                return None
            out = io.BytesIO()
            image.crop((0, 0, width, int(width * TALL_RATIO))).save(out, format="PNG")
    except (OSError, ValueError):
        return None
    return out.getvalue()


def _relative(target: Path, base_dir: Path) -> str:
    return Path(os.path.relpath(target.resolve(), base_dir.resolve())).as_posix()


def _headline_html(summary: Mapping[str, Any], page: Path | None, html_dir: Path) -> str:
    from pytest_mobilebench.report.page import model_headlines

    parts = ["<h3>mobilebench</h3>"]
    if page is not None:
        parts.append(
            f'<p><a href="{html.escape(_relative(page, html_dir))}">run page with plots: '
            f"{html.escape(str(summary['run_id']))}</a></p>"
        )
    for name, block in summary.get("headlines", {}).items():
        parts.append(f"<h4>{html.escape(name)}</h4>{model_headlines(block)}")
    if summary.get("invalid_instances"):
        parts.append(f"<p>invalid instances: {int(summary['invalid_instances'])} (the run fails)</p>")
    return "".join(parts)


@final
class HtmlHooks:
    """pytest-html hooks: headline section, suite columns, cached badge, relative links, inline screenshots."""

    def __init__(self, config: pytest.Config | None = None) -> None:
        self.config: Any = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.config = session.config

    def _html_dir(self) -> Path:
        target = Path(os.path.expandvars(str(self.config.getoption("htmlpath")))).expanduser()
        if not target.is_absolute():
            target = Path(self.config.invocation_params.dir) / target
        return target.parent

    def _columns(self, suite_name: str) -> Sequence[Any]:
        from pytest_mobilebench.state import STATE

        state = self.config.stash.get(STATE, None)
        suite = state.suites.get(suite_name) if state is not None else None
        try:
            return tuple(getattr(suite, "columns", ()) or ())
        except Exception:  # noqa: BLE001 - a suite that fails to import shows no figures, the row stays
            return ()

    @pytest.hookimpl
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        output = self.config.stash.get(RUN_OUTPUT, None)
        if output is not None:
            prefix.append(_headline_html(output[0], output[1], self._html_dir()))

    @pytest.hookimpl
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        for title in reversed(_HEADERS):
            cells.insert(2, f"<th>{html.escape(title)}</th>")

    @pytest.hookimpl
    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        result = getattr(report, "mobilebench_result", None) or {}
        if getattr(report, "mobilebench_manifest_error", None) is not None:
            verdict = "invalid_instance"
        else:  # a phase without a benchmark result (a setup error, a plain test) still says what happened
            verdict = str(result.get("reason") or f"{getattr(report, 'outcome', '')} ({getattr(report, 'when', '')})")
        figures = figures_text(result, self._columns(str(result.get("suite", "")))) if result else ""
        cache = f"cached, originally {item_seconds(result, 0.0):.1f} s" if result.get("cached") else ""
        if result and is_infra(result):
            verdict += " (infrastructure, not the model)"
        for text in reversed((verdict, figures, cache)):
            cells.insert(2, f"<td>{html.escape(text)}</td>")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        result = getattr(report, "mobilebench_result", None)
        if call.when == "call" and result:
            import pytest_html

            extras = list(getattr(report, "extras", []))
            html_dir = self._html_dir()
            if result.get("evidence_dir"):
                extras.append(
                    pytest_html.extras.url(_relative(Path(result["evidence_dir"]), html_dir) + "/", name="evidence")
                )
            from pytest_mobilebench.state import STATE

            state = self.config.stash[STATE]
            page = state.reports_dir / state.run_id / "index.html"
            extras.append(pytest_html.extras.url(_relative(page, html_dir), name="run page"))
            for path in failure_images(result):
                top = top_of_page(path)
                encoded = base64.b64encode(top if top is not None else path.read_bytes()).decode("ascii")
                label = image_label(path) + (" (top of a tall page)" if top is not None else "")
                extras.append(pytest_html.extras.png(encoded, name=label))
                if top is not None:  # the whole page, beside its top
                    extras.append(pytest_html.extras.url(_relative(path, html_dir), name=f"{path.name} (whole page)"))
            report.extras = extras
        return report
