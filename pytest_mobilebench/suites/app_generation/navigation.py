"""Navigation axis: state-isolated navigation testing (MobileForge, seed 002 section 4.2).

Every spec runs in a FRESH browser context (375x812 viewport, touch, mobile, a regular mobile user agent;
service workers blocked; every request off the app's origin refused and recorded by a
:class:`~.serve.RequestGuard`) of one Chromium shared by the worker process, its sandbox on (as an
unprivileged user when the harness is root; ``docs/app-generation-containment.md``): open the source screen's route
directly, wait until the page settles (no request in flight and no DOM mutation for ``quiet_ms``, see :func:`settle`),
perform the one action, settle again, observe. No spec depends on another; an exception inside one spec is that spec's
failure with the error recorded.

Pass rule (SPEC section 3, axis 2):

* ``page_existence``: after opening the target route the URL path still is that route, the page is not blank
  (visible text or an interactive element) and its content hash differs from the hash of a route that surely
  does not exist (the app's own not-found / empty-outlet page), when that probe was not redirected;
* interactive spec, ``overlay: false``: the URL path after the action equals the target screen's route;
* interactive spec, ``overlay: true``: the URL path equals the target's route and a top-layer element the tap
  newly shows appears, or one of the target screen's ``text`` phrases newly shows (:mod:`.tapcheck`; a changed
  content hash alone is not enough);
* either, only when a control tap on a neutral point, in a fresh context at the source route, does not produce
  the same change (:mod:`.tapcheck`, issue 31 item 5).

URL paths are compared without trailing slashes; an app using a hash router (``#/x``) is read from the
fragment. The content hash is sha256 over the whitespace-normalised ``innerText`` of ``<body>`` plus the
depth-tagged sequence of visible element tag names. Interactive elements (for the C1 blank-page test) are
counted through open shadow roots too (web-component toolkits such as Ionic draw their buttons there).

Action hints are tried in order; a hint whose match is visible wins, else the first hint with any match is
used (and the spec will show it as not visible). Strategies: ``role``+``name`` (``get_by_role``, exact name
first, then substring), ``text`` (``get_by_text``, exact first, then substring), ``selector`` (CSS), and
``tab_index``: the 0-based item among the interactive elements of the tab bar in DOM order, hidden ones
included (so a hidden tab does not shift its neighbours' positions), where the tab bar is
the first visible ``[role=tablist]``, else the visible ``nav``/``footer``/fixed-or-sticky element with at least
two interactive items whose bottom edge is lowest on the screen.

The affordance is clicked with a mouse click at its centre, as a finger would tap it (a covered affordance's
tap lands on the cover; ``hit_ok`` records whether ``elementFromPoint`` at the centre is the affordance or a
descendant); an invisible one, or one whose centre stays outside the viewport after scrolling it into view,
is not clicked. The evidence of every spec goes to ``<evidence>/nav/<spec>.json``; a failed spec
also gets ``<spec>.before.png`` (the source route re-rendered in a fresh context) and ``<spec>.after.png``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final
from urllib.parse import urlsplit

from pytest_mobilebench.suites.app_generation import tapcheck
from pytest_mobilebench.suites.app_generation.browser import (
    CHROMIUM_ARGS,
    CHROMIUM_PATH,
    VIEWPORT,
    BrowserHandle,
    close_browser,
    launch_browser,
    mobile_user_agent,
    new_mobile_context,
    refused_of,
)
from pytest_mobilebench.suites.app_generation.failures import classify_failure
from pytest_mobilebench.suites.app_generation.manifest import (
    ActionHint,
    AppManifest,
    NavCategory,
    NavSpec,
)

__all__ = [
    "CHROMIUM_ARGS",
    "CHROMIUM_PATH",
    "VIEWPORT",
    "BrowserHandle",
    "NetTracker",
    "close_browser",
    "content_hash",
    "launch_browser",
    "nav_rates",
    "mobile_user_agent",
    "new_mobile_context",
    "refused_of",
    "path_of",
    "run_spec",
    "run_specs",
    "settle",
]

NOT_FOUND_PROBE: Final = "/__mobilebench_no_such_route__"

_QUIET_JS: Final = """([quietMs, maxMs]) => new Promise(resolve => {
  const start = performance.now(); let last = start;
  const obs = new MutationObserver(() => { last = performance.now(); });
  obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const tick = () => {
    const now = performance.now();
    if (now - last >= quietMs || now - start >= maxMs) { obs.disconnect(); resolve(now - start); }
    else setTimeout(tick, 20);
  };
  setTimeout(tick, 20);
})"""

_INTERACTIVE_SEL: Final = (
    'a[href], button, input:not([type="hidden"]), select, textarea, [role="button"], [role="link"], '
    '[role="tab"], [role="menuitem"], [onclick], [tabindex]:not([tabindex="-1"])'
)

_SNAPSHOT_JS: Final = """(interactiveSel) => {
  const shown = el => el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const body = document.body;
  const text = (body ? body.innerText : '').replace(/\\s+/g, ' ').trim();
  const parts = [];
  const walk = (el, depth) => {
    for (const c of el.children) {
      if (c.tagName === 'SCRIPT' || c.tagName === 'STYLE' || c.tagName === 'NOSCRIPT') continue;
      if (!shown(c)) continue;
      parts.push(depth + ':' + c.tagName.toLowerCase());
      walk(c, depth + 1);
    }
  };
  if (body) walk(body, 0);
  const deep = root => {
    let out = [...root.querySelectorAll(interactiveSel)];
    for (const host of root.querySelectorAll('*')) if (host.shadowRoot) out = out.concat(deep(host.shadowRoot));
    return out;
  };
  let interactive = 0;
  for (const el of deep(document)) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && shown(el)) interactive += 1;
  }
  return {text, structure: parts.join('|'), interactive};
}"""

_TAB_JS: Final = """([index, interactiveSel]) => {
  const shown = el => { const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && el.checkVisibility({opacityProperty: true, visibilityProperty: true}); };
  const items = bar => [...bar.querySelectorAll(interactiveSel)]
    .filter(el => !el.parentElement || !el.parentElement.closest(interactiveSel) ||
                  !bar.contains(el.parentElement.closest(interactiveSel)));
  let bar = [...document.querySelectorAll('[role="tablist"]')].find(shown) || null;
  if (!bar) {
    const cands = [...document.querySelectorAll('nav, footer, body *')].filter(el => {
      if (!shown(el)) return false;
      const tag = el.tagName;
      const pos = getComputedStyle(el).position;
      return (tag === 'NAV' || tag === 'FOOTER' || pos === 'fixed' || pos === 'sticky') && items(el).length >= 2;
    });
    cands.sort((a, b) => b.getBoundingClientRect().bottom - a.getBoundingClientRect().bottom);
    bar = cands[0] || null;
  }
  if (!bar) return null;
  const its = items(bar);
  return index < its.length ? its[index] : null;
}"""

_AFFORDANCE_JS: Final = """(el) => {
  const classes = n => typeof n.className === 'string' && n.className
      ? '.' + n.className.trim().split(/\\s+/).slice(0, 3).join('.') : '';
  const describe = n => n ? n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + classes(n) : null;
  const r0 = el.getBoundingClientRect();
  if (!(r0.width > 0 && r0.height > 0 && el.checkVisibility({opacityProperty: true, visibilityProperty: true})))
    return {visible: false};
  const vw = window.innerWidth, vh = window.innerHeight;
  const inside = r => {
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    return x >= 0 && x < vw && y >= 0 && y < vh;
  };
  let r = r0;
  if (!inside(r)) {
    el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
    r = el.getBoundingClientRect();
  }
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
  const inView = inside(r);
  let ok = false, hit = null;
  if (inView) {
    const h = document.elementFromPoint(cx, cy);
    ok = !!h && (h === el || el.contains(h));
    hit = describe(h);
  }
  return {visible: true, bbox: [r.left, r.top, r.width, r.height], in_viewport: inView, hit_ok: ok, hit: hit};
}
"""


def _no_affordance() -> dict[str, Any]:
    """An affordance record when none was found: every field of a found one, empty (a fresh dict each call)."""
    return {
        "found": False,
        "hint": None,
        "strategy": None,
        "visible": False,
        "bbox": None,
        "in_viewport": False,
        "hit_ok": False,
        "hit": None,
    }


def path_of(url: str) -> str:
    """The route of a URL: its path without trailing slash (``/`` for the root), or the ``#/...`` fragment path
    for hash routers."""
    parts = urlsplit(url)
    path = parts.path
    if parts.fragment.startswith("/"):
        path = parts.fragment.split("?", 1)[0]
    stripped = path.strip("/")
    return "/" + stripped if stripped else "/"


def content_hash(snapshot: Mapping[str, Any]) -> str:
    """sha256 hex of the normalised visible text and visible element structure of a page snapshot."""
    text = re.sub(r"\s+", " ", str(snapshot["text"])).strip()
    return hashlib.sha256(f"{text}\n{snapshot['structure']}".encode()).hexdigest()


@final
class NetTracker:
    """Counts a page's in-flight requests (Playwright ``request`` / ``requestfinished`` / ``requestfailed``)."""

    def __init__(self, page: Any) -> None:
        self.inflight = 0
        page.on("request", self._up)
        page.on("requestfinished", self._down)
        page.on("requestfailed", self._down)

    def _up(self, _request: Any) -> None:
        self.inflight += 1

    def _down(self, _request: Any) -> None:
        self.inflight = max(0, self.inflight - 1)


def settle(page: Any, tracker: NetTracker | None = None, *, quiet_ms: int = 150, max_ms: int = 3000) -> float:
    """Wait until the page is settled: no request in flight and no DOM mutation for ``quiet_ms``.

    With a :class:`NetTracker` the network condition is checked after each DOM-quiet window (cheaper than
    Playwright's ``networkidle``, which always waits 500 ms); without one, ``networkidle`` is awaited first.
    Gives up after ``max_ms`` (long-polling or animated pages never settle) and returns the seconds waited.
    """
    start = time.monotonic()
    if tracker is None:
        with contextlib.suppress(Exception):  # never idle; the DOM check still runs
            page.wait_for_load_state("networkidle", timeout=max_ms)
    while True:
        left_ms = max_ms - (time.monotonic() - start) * 1000
        page.evaluate(_QUIET_JS, [quiet_ms, max(quiet_ms, int(left_ms))])
        if tracker is None or tracker.inflight == 0 or (time.monotonic() - start) * 1000 >= max_ms:
            return time.monotonic() - start


def _snapshot(page: Any) -> dict[str, Any]:
    snap = page.evaluate(_SNAPSHOT_JS, _INTERACTIVE_SEL)
    return {
        "text": snap["text"],
        "structure": snap["structure"],
        "interactive": int(snap["interactive"]),
        "hash": content_hash(snap),
    }


def _hint_candidates(page: Any, hint: ActionHint) -> list[Any]:
    """Element handles matching one hint (at most 10), exact matches first."""
    if hint.strategy == "tab_index":
        handle = page.evaluate_handle(_TAB_JS, [hint.tab_index, _INTERACTIVE_SEL]).as_element()
        return [handle] if handle is not None else []
    if hint.strategy == "role":
        locs = (
            [page.get_by_role(hint.role, name=hint.name, exact=True), page.get_by_role(hint.role, name=hint.name)]
            if hint.name is not None
            else [page.get_by_role(hint.role)]
        )
    elif hint.strategy == "text":
        locs = [page.get_by_text(hint.text, exact=True), page.get_by_text(hint.text)]
    else:
        locs = [page.locator(hint.selector)]
    for loc in locs:
        handles = loc.element_handles()[:10]
        if handles:
            return handles
    return []


def _locate(page: Any, hints: Sequence[ActionHint]) -> tuple[dict[str, Any], Any]:
    """The affordance per the module rules: ``(affordance evidence, element handle or None)``.

    One in-page evaluation per candidate measures visibility, scrolls it into view when its centre is
    outside the viewport, and hit-tests its centre with ``document.elementFromPoint``.
    """
    first: tuple[dict[str, Any], Any] | None = None
    for i, hint in enumerate(hints):
        handles: list[Any] = []
        with contextlib.suppress(Exception):  # an invalid selector is that hint's miss
            handles = _hint_candidates(page, hint)
        for h in handles:
            probe = h.evaluate(_AFFORDANCE_JS)
            info = {
                "found": True,
                "hint": i,
                "strategy": hint.strategy,
                "visible": bool(probe["visible"]),
                "bbox": [round(v, 1) for v in probe["bbox"]] if probe.get("bbox") else None,
                "in_viewport": bool(probe.get("in_viewport", False)),
                "hit_ok": bool(probe.get("hit_ok", False)),
                "hit": probe.get("hit"),
            }
            if info["visible"]:
                return info, h
            if first is None:
                first = (info, h)
    if first is not None:
        return first
    return _no_affordance(), None


@final
@dataclasses.dataclass(frozen=True)
class _Probe:
    """The not-found fingerprint of an app: hash at a route that surely does not exist, if not redirected."""

    hash: str | None


def _probe_not_found(browser: Any, base_url: str, settle_kw: Mapping[str, Any]) -> _Probe:
    context = new_mobile_context(browser, base_url)
    try:
        page = context.new_page()
        tracker = NetTracker(page)
        page.goto(base_url + NOT_FOUND_PROBE, wait_until="load", timeout=15000)
        settle(page, tracker, **settle_kw)
        if path_of(page.url) != NOT_FOUND_PROBE:
            return _Probe(None)
        return _Probe(_snapshot(page)["hash"])
    except Exception:  # noqa: BLE001 - no probe: page existence falls back to the path and blankness checks
        return _Probe(None)
    finally:
        context.close()


def _shot(page: Any, path: Path) -> str | None:
    try:
        page.screenshot(path=str(path))
        return str(path)
    except Exception:  # noqa: BLE001 - a screenshot is evidence, never a verdict
        return None


def run_spec(
    browser: Any,
    base_url: str,
    manifest: AppManifest,
    spec: NavSpec,
    *,
    out_dir: Path | None = None,
    not_found_hash: str | None = None,
    quiet_ms: int = 150,
    max_settle_ms: int = 3000,
) -> dict[str, Any]:
    """Run one navigation spec in a fresh context and return its evidence dict (plain builtins).

    Args:
        browser: a connected Playwright ``Browser``.
        base_url: where the bundle is served, e.g. ``http://127.0.0.1:41234``.
        manifest: the app (routes of source / target / known screens).
        spec: the spec to run.
        out_dir: where ``<spec>.json`` and, on failure, the before/after screenshots go (``None``: nowhere).
        not_found_hash: the app's not-found fingerprint (see the module docstring), if any.
        quiet_ms, max_settle_ms: settle parameters (:func:`settle`).

    Returns:
        The evidence dict described in :mod:`.failures`, plus ``target``, ``source``, ``url_before``,
        ``url_after``, ``seconds``, ``failure_class``, ``screenshots`` and ``refused`` (the requests the
        page made off its origin, ``[{"url", "by"}]``: :class:`~.serve.RequestGuard`).
    """
    start = time.monotonic()
    source_route = manifest.route_of(spec.source_screen)
    target_route = path_of("http://x" + manifest.route_of(spec.target))
    ev = _new_evidence(spec, source_route)
    settle_kw = {"quiet_ms": quiet_ms, "max_ms": max_settle_ms}
    context = None
    page = None
    try:
        context = new_mobile_context(browser, base_url)
        page = context.new_page()
        tracker = NetTracker(page)
        page.goto(base_url + source_route, wait_until="load", timeout=15000)
        settle(page, tracker, **settle_kw)
        before = _snapshot(page)
        ev.update(
            url_before=page.url,
            path_before=path_of(page.url),
            hash_before=before["hash"],
            visible_text_len=len(before["text"]),
            interactive_count=before["interactive"],
        )
        if spec.category is NavCategory.PAGE_EXISTENCE:
            ev.update(url_after=page.url, path_after=ev["path_before"], hash_after=before["hash"])
            blank = ev["visible_text_len"] == 0 and ev["interactive_count"] == 0
            ev["passed"] = (
                ev["path_after"] == target_route
                and not blank
                and (not_found_hash is None or before["hash"] != not_found_hash)
            )
        else:
            pair = (source_route, target_route)
            _tap_and_observe(browser, base_url, page, tracker, manifest, spec, ev, before, pair, settle_kw)
    except Exception as exc:  # noqa: BLE001 - one spec's failure, recorded, never another's
        ev["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
        ev["passed"] = False
    routes = {sid: s.route for sid, s in manifest.screens.items()}
    fc = classify_failure(ev, routes, spec.target)
    ev["failure_class"] = fc.value if fc is not None else None
    if not ev["passed"] and out_dir is not None:
        _failure_screenshots(browser, base_url, page, source_route, spec, ev, out_dir, settle_kw)
    if context is not None:
        ev["refused"] = refused_of(context) + ev["refused"]
        with contextlib.suppress(Exception):  # the browser may have crashed; the spec is already recorded
            context.close()
    ev["seconds"] = round(time.monotonic() - start, 3)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{spec.id}.json").write_text(json.dumps(ev, indent=2), encoding="utf-8")
    return ev


def _new_evidence(spec: NavSpec, source_route: str) -> dict[str, Any]:
    """The evidence dict of ``spec`` before anything ran (not passed, nothing clicked, still on the source)."""
    return {
        "spec_id": spec.id,
        "category": spec.category.value,
        "source": spec.source_screen,
        "target": spec.target,
        "overlay": spec.overlay,
        "passed": False,
        "error": None,
        "url_before": None,
        "url_after": None,
        "path_before": source_route,
        "path_after": source_route,
        "hash_before": "",
        "hash_after": "",
        "visible_text_len": 0,
        "interactive_count": 0,
        "clicked": False,
        "affordance": _no_affordance(),
        "failure_class": None,
        "screenshots": [],
        "seconds": 0.0,
        "refused": [],
        "new_layers": [],
        "target_text": [],
        "control": None,
    }


def _tap_and_observe(
    browser: Any,
    base_url: str,
    page: Any,
    tracker: NetTracker,
    manifest: AppManifest,
    spec: NavSpec,
    ev: dict[str, Any],
    before: dict[str, Any],
    routes: tuple[str, str],
    settle_kw: dict[str, int],
) -> None:
    """An action spec: locate the affordance, tap its centre when it is in view, settle, observe; a
    target-like change passes only when a control tap on a neutral point does not make it too
    (:mod:`.tapcheck`). ``routes`` is ``(source route, target path)``; the findings go into ``ev``."""
    source_route, target_route = routes
    aff, _handle = _locate(page, spec.action)
    ev["affordance"] = aff
    layers = tapcheck.layers_shown(page) if spec.overlay else None
    if aff["in_viewport"]:
        x, y, w, h = aff["bbox"]
        page.mouse.click(x + w / 2, y + h / 2)  # a finger's tap: lands on whatever is on top
        ev["clicked"] = True
        settle(page, tracker, **settle_kw)
    after = _snapshot(page)
    ev.update(url_after=page.url, path_after=path_of(page.url), hash_after=after["hash"])
    texts = manifest.screens[spec.target].text if spec.overlay else []
    if layers is not None:
        ev["new_layers"] = tapcheck.new_layers(page, layers)
        ev["target_text"] = tapcheck.newly_shown(texts, before["text"], after["text"])
    target_like = ev["path_after"] == target_route and (
        bool(ev["new_layers"] or ev["target_text"]) if spec.overlay else True
    )
    if target_like:  # is it the tap's own? (tapcheck)
        ev["control"], refused = _control(
            browser, base_url, source_route, target_route, spec.overlay, aff["bbox"], settle_kw, texts
        )
        ev["refused"] = refused
    ev["passed"] = target_like and tapcheck.tied(ev)


def _failure_screenshots(
    browser: Any,
    base_url: str,
    page: Any,
    source_route: str,
    spec: NavSpec,
    ev: dict[str, Any],
    out_dir: Path,
    settle_kw: dict[str, int],
) -> None:
    """A failed spec's evidence: the page after the action and the source screen rendered afresh (before)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if page is not None:
        shot = _shot(page, out_dir / f"{spec.id}.after.png")
        if shot:
            ev["screenshots"].append(shot)
    before_shot = _rerender_before(browser, base_url, source_route, out_dir / f"{spec.id}.before.png", settle_kw)
    if before_shot:
        ev["screenshots"].insert(0, before_shot)


def _control(
    browser: Any,
    base_url: str,
    source_route: str,
    target_route: str,
    overlay: bool,
    bbox: Sequence[float] | None,
    settle_kw: Mapping[str, Any],
    texts: Sequence[str],
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The control tap (:func:`.tapcheck.control_tap`) in a fresh context opened at the source route: its
    evidence and the requests that context's guard refused. Raises what Playwright raises."""
    context = new_mobile_context(browser, base_url)
    try:
        page = context.new_page()
        tracker = NetTracker(page)
        page.goto(base_url + source_route, wait_until="load", timeout=15000)
        settle(page, tracker, **settle_kw)
        run = tapcheck.control_tap(
            page,
            lambda: settle(page, tracker, **settle_kw),
            overlay=overlay,
            target_route=target_route,
            affordance_bbox=bbox,
            interactive_sel=_INTERACTIVE_SEL,
            path_of=path_of,
            target_text=texts,
        )
        return dict(run), refused_of(context)
    finally:
        with contextlib.suppress(Exception):  # a crashed browser: the error is already on its way up
            context.close()


def _rerender_before(browser: Any, base_url: str, route: str, path: Path, settle_kw: Mapping[str, Any]) -> str | None:
    """Screenshot of the source route in a fresh context (state isolation makes it the spec's start state)."""
    context = None
    try:
        context = new_mobile_context(browser, base_url)
        page = context.new_page()
        tracker = NetTracker(page)
        page.goto(base_url + route, wait_until="load", timeout=15000)
        settle(page, tracker, **settle_kw)
        return _shot(page, path)
    except Exception:  # noqa: BLE001 - evidence only
        return None
    finally:
        if context is not None:
            context.close()


def run_specs(
    browser: Any,
    base_url: str,
    manifest: AppManifest,
    *,
    out_dir: Path | None = None,
    quiet_ms: int = 150,
    max_settle_ms: int = 3000,
) -> list[dict[str, Any]]:
    """Run every spec of ``manifest`` independently (see :func:`run_spec`); one evidence dict per spec."""
    settle_kw = {"quiet_ms": quiet_ms, "max_settle_ms": max_settle_ms}
    needs_probe = any(s.category is NavCategory.PAGE_EXISTENCE for s in manifest.nav_tests)
    probe = (
        _probe_not_found(browser, base_url, {"quiet_ms": quiet_ms, "max_ms": max_settle_ms})
        if needs_probe
        else _Probe(None)
    )
    return [
        run_spec(browser, base_url, manifest, spec, out_dir=out_dir, not_found_hash=probe.hash, **settle_kw)
        for spec in manifest.nav_tests
    ]


def nav_rates(evidence: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """NavPassRate overall and per category (seed 002 section 4.1 "Navigation Correctness").

    Returns:
        ``{"passed": int, "total": int, "rate": float, "by_category": {cat: {"passed", "total", "rate"}}}``;
        a rate over zero specs is 0.0, and categories without specs are omitted.
    """
    by: dict[str, list[int]] = {}
    for ev in evidence:
        cell = by.setdefault(str(ev["category"]), [0, 0])
        cell[0] += int(bool(ev["passed"]))
        cell[1] += 1
    passed = sum(c[0] for c in by.values())
    total = sum(c[1] for c in by.values())
    return {
        "passed": passed,
        "total": total,
        "rate": passed / total if total else 0.0,
        "by_category": {k: {"passed": p, "total": t, "rate": p / t if t else 0.0} for k, (p, t) in sorted(by.items())},
    }
