"""Screenshots of a served app for the visual-fidelity axis (MobileForge, seed 002 section 4.2).

:func:`capture_screens` drives Playwright pages the caller provides (the caller owns the browser): one
fresh page per screen at the 375x812 viewport, opened at the screen's route, left to settle, photographed.
Judging the screenshots is :mod:`.judges`; the anchor protocol and Borda aggregation are :mod:`.ranking`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["VIEWPORT", "capture_screens"]

#: Screenshot viewport, seed 002 section 4.2 (iPhone X size).
VIEWPORT: Final[Mapping[str, int]] = {"width": 375, "height": 812}


def _screen_url(base_url: str, route: str) -> str:
    if route.startswith(("http://", "https://")):
        return route
    return base_url.rstrip("/") + "/" + route.lstrip("/")


def _file_stem(screen_id: str, taken: set[str]) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", screen_id).strip("._") or "screen"
    candidate = stem
    n = 2
    while candidate in taken:
        candidate = f"{stem}-{n}"
        n += 1
    taken.add(candidate)
    return candidate


def _default_settle(page: Any, timeout_ms: int) -> None:
    with contextlib.suppress(Exception):  # pages that poll never go idle; the screenshot is still meaningful
        page.wait_for_load_state("networkidle", timeout=timeout_ms)
    with contextlib.suppress(Exception):  # a crashed page is still photographed below
        page.evaluate("document.fonts ? document.fonts.ready.then(() => true) : true")


def capture_screens(
    page_factory: Callable[[], Any],
    base_url: str,
    screens: Mapping[str, str],
    out_dir: Path,
    *,
    settle: Callable[[Any], None] | None = None,
    timeout_ms: int = 15_000,
    errors: dict[str, str] | None = None,
) -> dict[str, Path]:
    """Screenshot every screen of a served app at its route, 375x812 (seed 002 section 4.2 viewport).

    Each screen gets its own page from ``page_factory`` (so no state leaks between screens), opened
    directly at ``base_url + route``, left to settle, photographed (viewport only, PNG) and closed. The
    browser and its contexts belong to the caller: this function only calls ``page_factory()``,
    ``set_viewport_size``, ``goto``, the settle step, ``screenshot`` and ``page.close()``.

    Args:
        page_factory: returns a fresh Playwright ``Page`` (sync API), e.g.
            ``lambda: browser.new_context(viewport=VIEWPORT).new_page()``.
        base_url: where the built app is served, e.g. ``http://127.0.0.1:41234``.
        screens: ``{screen_id: route}``; a route is a path (``/profile``), a hash route (``#/profile``) or an
            absolute URL.
        out_dir: folder for the PNGs (created); file names are the screen ids made filesystem-safe.
        settle: called with the page after ``goto`` (default: wait for ``networkidle`` up to
            ``timeout_ms``, then for web fonts).
        timeout_ms: navigation timeout in milliseconds.
        errors: if given, receives ``{screen_id: message}`` for each screen that could not be photographed.

    Returns:
        ``{screen_id: png_path}`` for every screen photographed. A navigation timeout still photographs
        what rendered; a screen whose screenshot fails is left out (and reported in ``errors``).

    Raises:
        Whatever ``page_factory`` raises (a dead browser is the caller's infrastructure failure).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    shots: dict[str, Path] = {}
    for screen_id, route in screens.items():
        target = out_dir / f"{_file_stem(screen_id, taken)}.png"
        page = page_factory()
        try:
            page.set_viewport_size(dict(VIEWPORT))
            try:
                page.goto(_screen_url(base_url, route), wait_until="load", timeout=timeout_ms)
            except Exception as exc:  # noqa: BLE001 - photograph whatever rendered; note the navigation error
                if errors is not None:
                    errors[screen_id] = f"navigation: {exc}".splitlines()[0]
            if settle is not None:
                settle(page)
            else:
                _default_settle(page, timeout_ms)
            page.screenshot(path=str(target), full_page=False)
            shots[screen_id] = target
        except Exception as exc:  # noqa: BLE001 - one broken screen must not stop the others
            if errors is not None:
                errors[screen_id] = f"screenshot: {exc}".splitlines()[0]
        finally:
            with contextlib.suppress(Exception):  # closing a crashed page
                page.close()
    return shots
