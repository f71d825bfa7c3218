"""Is a tap's change tied to the tap and to its target? (issue 31, item 5)

A page-wide tap listener (``document.addEventListener('click', ...)``) that rewrites a visible line changes the
page after ANY tap, so "the content changed after the tap" says nothing about the affordance. An interactive
spec therefore passes only on a change that is

* **target-like**: for an overlay spec, a top-layer element that was not shown before the tap is shown after it
  (:data:`LAYERS_JS`: a visible ``role=dialog`` / ``alertdialog``, ``aria-modal=true``, ``<dialog open>``, an open
  popover, or a ``position: fixed | absolute`` element with a positive ``z-index`` covering at least
  :data:`MIN_LAYER_AREA` of the viewport; outermost ones only). "Not shown before" is element identity: the
  elements shown before the tap are held by the harness (a Playwright handle, out of the page's reach), so
  rewriting the text of a fixed bar that was already there is no new layer; or one of the target screen's
  phrases (``Screen.text`` in the manifest) not visible before the tap and visible after it. For a route spec the
  target-like change is the URL reaching the target route (:mod:`.navigation`);
* **tied to the tap**: a control tap, in a fresh context of its own opened at the same source route (state
  isolation as for every spec), on a NEUTRAL point does not produce it. A neutral point is chosen by the harness
  at random (:class:`random.SystemRandom`) among the points of a 24-px grid where ``document.elementFromPoint``
  lands on a non-interactive element (:data:`NEUTRAL_JS`): no interactive element, ``label``, ``summary``,
  editable element or shadow host at or above it, no ``cursor: pointer``, no fixed or sticky ancestor (tab bars,
  headers), and outside the spec's affordance (its box widened by :data:`AFFORDANCE_MARGIN` px). If the neutral
  tap produces a target-like change too (any new top-layer element or target phrase for an overlay spec, the target
  route for a route spec), the change is not the affordance's: the spec fails, classified C4 (:mod:`.failures`).

A page offering no neutral point cannot show its change is tied to the tap: the spec fails with
``control.error`` saying so. What an in-page candidate can still do is in the README ("Threat model", App
generation).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypedDict

__all__ = [
    "AFFORDANCE_MARGIN",
    "GRID_STEP",
    "LAYERS_JS",
    "MIN_LAYER_AREA",
    "NEUTRAL_JS",
    "ControlRun",
    "control_tap",
    "layers_shown",
    "new_layers",
    "newly_shown",
    "pick_neutral_point",
    "texts_shown",
    "tied",
]

#: px between the grid points probed for a neutral tap
GRID_STEP: Final = 24
#: px around the affordance's box where no neutral point is taken
AFFORDANCE_MARGIN: Final = 12
#: fraction of the viewport a positioned (not dialog-role) element must cover to count as a layer
MIN_LAYER_AREA: Final = 0.02

#: ``(minArea) -> Element[]``: the outermost visible top-layer elements of the page (open shadow roots too)
LAYERS_JS: Final = """(minArea) => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const all = [];
  const walk = root => {
    for (const el of root.querySelectorAll('*')) { all.push(el); if (el.shadowRoot) walk(el.shadowRoot); }
  };
  walk(document);
  const dialogish = el => {
    if (el.matches('[role="dialog"], [role="alertdialog"], [aria-modal="true"], dialog[open]')) return true;
    try { return el.matches(':popover-open'); } catch (e) { return false; }
  };
  const layers = all.filter(el => {
    const r = el.getBoundingClientRect();
    const w = Math.min(r.right, vw) - Math.max(r.left, 0), h = Math.min(r.bottom, vh) - Math.max(r.top, 0);
    if (!(w > 0 && h > 0) || !el.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
    if (dialogish(el)) return true;
    const cs = getComputedStyle(el);
    const z = parseInt(cs.zIndex, 10);
    return (cs.position === 'fixed' || cs.position === 'absolute') && z > 0 && w * h >= minArea * vw * vh;
  });
  return layers.filter(el => !layers.some(o => o !== el && o.contains(el)));
}"""

#: ``([before, describe]) -> [{tag, role, label, text, bbox}]``: layers shown now that ``before`` does not hold
_NEW_LAYERS_JS: Final = """([now, before]) => now.filter(el => !before.includes(el)).map(el => {
  const r = el.getBoundingClientRect();
  return {tag: el.tagName.toLowerCase(), role: el.getAttribute('role'), label: el.getAttribute('aria-label'),
          text: (el.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 120),
          bbox: [r.left, r.top, r.width, r.height].map(v => Math.round(v))};
})"""

#: ``([step, avoid, interactiveSel]) -> [[x, y, hit]]``: grid points whose hit-tested element is neutral
NEUTRAL_JS: Final = """([step, avoid, interactiveSel]) => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const blocked = interactiveSel + ', label, summary, details, [contenteditable=""], [contenteditable="true"]';
  const describe = n => n.tagName.toLowerCase() + (n.id ? '#' + n.id : '');
  const neutral = hit => {
    if (!hit || hit.closest(blocked)) return false;
    for (let n = hit; n; n = n.parentElement) {
      if (n.shadowRoot) return false;
      const cs = getComputedStyle(n);
      if (cs.position === 'fixed' || cs.position === 'sticky' || cs.cursor === 'pointer') return false;
    }
    return true;
  };
  const out = [];
  for (let y = step / 2; y < vh - 2; y += step) {
    for (let x = step / 2; x < vw - 2; x += step) {
      if (avoid && x >= avoid[0] && x <= avoid[0] + avoid[2] && y >= avoid[1] && y <= avoid[1] + avoid[3]) continue;
      const hit = document.elementFromPoint(x, y);
      if (neutral(hit)) out.push([x, y, describe(hit)]);
    }
  }
  return out;
}"""


def layers_shown(page: Any) -> Any:
    """A Playwright handle on the array of top-layer elements shown now (held by the harness, not the page)."""
    return page.evaluate_handle(LAYERS_JS, MIN_LAYER_AREA)


def new_layers(page: Any, before: Any) -> list[dict[str, Any]]:
    """Top-layer elements shown now that the handle ``before`` (:func:`layers_shown`) does not hold.

    Returns:
        ``[{"tag", "role", "label", "text" (first 120 characters), "bbox": [x, y, w, h] (px)}]``.
    """
    now = layers_shown(page)
    try:
        return list(page.evaluate(_NEW_LAYERS_JS, [now, before]))
    finally:
        now.dispose()


def texts_shown(page: Any, texts: Sequence[str]) -> list[str]:
    """The phrases of ``texts`` the page's visible text (``body.innerText``) holds, case and spacing ignored."""
    if not texts:
        return []
    shown = _norm(str(page.evaluate("() => document.body ? document.body.innerText : ''")))
    return [t for t in texts if _norm(t) and _norm(t) in shown]


def newly_shown(texts: Sequence[str], before: str, after: str) -> list[str]:
    """The phrases of ``texts`` absent from the visible text ``before`` and present in ``after`` (pure)."""
    b, a = _norm(before), _norm(after)
    return [t for t in texts if _norm(t) and _norm(t) not in b and _norm(t) in a]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _widened(bbox: Sequence[float] | None) -> list[float] | None:
    if not bbox:
        return None
    x, y, w, h = bbox
    m = AFFORDANCE_MARGIN
    return [x - m, y - m, w + 2 * m, h + 2 * m]


def pick_neutral_point(
    page: Any, affordance_bbox: Sequence[float] | None, interactive_sel: str, rng: random.Random | None = None
) -> tuple[float, float, str] | None:
    """A neutral point ``(x, y, hit element)`` in CSS px, chosen at random; ``None`` when the page has none."""
    points = page.evaluate(NEUTRAL_JS, [GRID_STEP, _widened(affordance_bbox), interactive_sel])
    if not points:
        return None
    x, y, hit = (rng or random.SystemRandom()).choice(points)
    return float(x), float(y), str(hit)


class ControlRun(TypedDict):
    """The control tap's evidence (plain builtins through xdist and JSON). ``point`` ``[x, y]`` in CSS px,
    ``hit`` the element tapped, ``new_layers`` as :func:`new_layers`, ``target_text`` the target's phrases it
    newly showed; ``same_change``: the neutral tap produced a
    target-like change too (see the module docstring); ``error``: why no control tap could be made."""

    point: list[float] | None
    hit: str | None
    path_after: str | None
    new_layers: list[dict[str, Any]]
    target_text: list[str]
    same_change: bool
    error: str | None


def control_tap(
    page: Any,
    settle: Callable[[], None],
    *,
    overlay: bool,
    target_route: str,
    affordance_bbox: Sequence[float] | None,
    interactive_sel: str,
    path_of: Callable[[str], str],
    target_text: Sequence[str] = (),
) -> ControlRun:
    """Tap a neutral point of ``page`` and record what changed.

    Args:
        page: the source route, opened in a fresh context of its own and settled (the caller owns the context).
        settle: waits as after the spec's own tap.
        overlay: the spec's kind (which change is target-like).
        target_route: the target's route, normalised as :func:`path_of` gives it.
        affordance_bbox: ``[x, y, w, h]`` of the spec's affordance (no neutral point there).
        interactive_sel: the CSS selector of interactive elements.
        path_of: URL -> route.
        target_text: the target screen's phrases (``Screen.text``): one newly shown is a target-like change.

    Raises:
        Whatever Playwright raises (the caller records it as the spec's error).
    """
    before = layers_shown(page)
    text_before = texts_shown(page, target_text) if overlay else []
    point = pick_neutral_point(page, affordance_bbox, interactive_sel)
    if point is None:
        return ControlRun(
            point=None,
            hit=None,
            path_after=None,
            new_layers=[],
            target_text=[],
            same_change=False,
            error="no neutral point: every point of the page is interactive or fixed, so no change can "
            "be shown to be the tap's own",
        )
    x, y, hit = point
    page.mouse.click(x, y)
    settle()
    layers = new_layers(page, before)
    path_after = path_of(page.url)
    texts = [t for t in texts_shown(page, target_text) if t not in text_before] if overlay else []
    same = bool(layers or texts) if overlay else path_after == target_route
    return ControlRun(
        point=[round(x, 1), round(y, 1)],
        hit=hit,
        path_after=path_after,
        new_layers=layers,
        target_text=texts,
        same_change=same,
        error=None,
    )


def tied(evidence: Mapping[str, Any]) -> bool:
    """The spec's change is tied to its tap: a control ran without error and did not produce the same change."""
    control = evidence.get("control")
    return bool(control) and control.get("error") is None and not control.get("same_change")
