"""Visual-fidelity axis of app generation: screenshots, anchor-reference list-wise judging, Borda, rubric.

Source: MobileForge (seed 002), section 4.3 "Anchor-Reference List-Wise Visual Evaluation" and Table 2.
For one screen, the judge ranks the N candidate screenshots (one per model) plus the reference design
itself, anonymised and shuffled in as a hidden anchor, from most to least faithful. A ranking is valid only
if the anchor is ranked first (it is pixel-identical to the reference, so any judge that compares must put
it first); otherwise it is discarded and the judge is asked again. Accepted rankings are aggregated into a
per-model Borda score in [0, 1] (:func:`pytest_mobilebench.metrics.borda_scores`); the per-call anchor pass
rate is reported beside it. A point-wise 4-dimension rubric (Layout 30%, Style 25%, Content 25%,
Consistency 20%, each 1-5) is kept as an absolute baseline.

Judges:

* :class:`PerceptualJudge` (offline default, deterministic): ranks by perceptual-hash distance to the
  reference (pHash + dHash, ImageHash over Pillow), ties broken by mean absolute pixel difference.
* :class:`ChatJudge`: an OpenAI-compatible ``/chat/completions`` endpoint with image inputs (data URLs).

Side effects live at the edges: :func:`capture_screens` drives a Playwright page the caller provides (the
caller owns the browser), :class:`ChatJudge` does HTTP. Everything else is pure.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import os
import random
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol, final, runtime_checkable

from pytest_mobilebench import metrics

__all__ = [
    "ANCHOR",
    "RUBRIC_DIMENSIONS",
    "RUBRIC_WEIGHTS",
    "VIEWPORT",
    "ChatJudge",
    "Judge",
    "JudgeAttempt",
    "JudgeConfigError",
    "JudgeOutcome",
    "JudgeResponseError",
    "JudgeTransportError",
    "PerceptualJudge",
    "PointwiseJudge",
    "PointwiseRubric",
    "RubricScore",
    "acceptance_rate",
    "anchor_pass_rate",
    "borda_over_screens",
    "capture_screens",
    "judge_screen",
    "parse_ranking",
]

#: The label of the hidden anchor (the reference shuffled in among the candidates) in attempts and rankings.
ANCHOR: Final[str] = "<reference>"

#: Screenshot viewport, seed 002 section 4.2 (iPhone X size).
VIEWPORT: Final[Mapping[str, int]] = {"width": 375, "height": 812}

#: The point-wise rubric, seed 002 section 4.3: Layout 30%, Style 25%, Content 25%, Consistency 20%.
RUBRIC_DIMENSIONS: Final[tuple[str, ...]] = ("layout", "style", "content", "consistency")
RUBRIC_WEIGHTS: Final[Mapping[str, float]] = {"layout": 0.30, "style": 0.25, "content": 0.25, "consistency": 0.20}

#: Expected normalised Hamming distance between perceptual hashes of unrelated images (about half the bits
#: differ); the perceptual rubric maps this distance or more to score 1.
_UNRELATED_DISTANCE: Final[float] = 0.5


class JudgeConfigError(ValueError):
    """A judge is not configured (missing endpoint or model); the message names the option and variable."""


class JudgeResponseError(ValueError):
    """A judge's answer cannot be read as a ranking or a rubric score; such a call counts as a failed attempt."""


class JudgeTransportError(RuntimeError):
    """The judge endpoint could not be reached or answered with an HTTP error: an infrastructure failure."""


# ----------------------------------------------------------------------------------------------------------
# Screenshots
# ----------------------------------------------------------------------------------------------------------


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
    try:
        page.wait_for_load_state("networkidle", timeout=timeout_ms)
    except Exception:  # noqa: BLE001 - pages that poll never go idle; the screenshot is still meaningful
        pass
    try:
        page.evaluate("document.fonts ? document.fonts.ready.then(() => true) : true")
    except Exception:  # noqa: BLE001 - a crashed page is still photographed below
        pass


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
            try:
                page.close()
            except Exception:  # noqa: BLE001 - closing a crashed page
                pass
    return shots


# ----------------------------------------------------------------------------------------------------------
# Judges
# ----------------------------------------------------------------------------------------------------------


@runtime_checkable
class Judge(Protocol):
    """A list-wise visual judge (seed 002 section 4.3)."""

    def rank(self, reference: Path, candidates: Sequence[Path]) -> list[int]:
        """Rank ``candidates`` from most to least faithful to ``reference``.

        ``candidates`` are the model screenshots with the reference itself (the anchor) shuffled in; the
        judge does not know which one it is. Returns a permutation of ``range(len(candidates))``.

        Raises:
            JudgeResponseError: the judge's answer could not be read (the call is retried as an attempt).
            JudgeTransportError: the judge is unreachable (propagates: an infrastructure error).
        """
        ...


@runtime_checkable
class PointwiseJudge(Protocol):
    """A point-wise rubric judge (seed 002 section 4.3 baseline)."""

    def score(self, reference: Path, candidate: Path) -> RubricScore:
        """Score one candidate against the reference on the four rubric dimensions."""
        ...


@final
@dataclasses.dataclass(frozen=True)
class RubricScore:
    """A point-wise rubric score (seed 002 section 4.3: Layout 30%, Style 25%, Content 25%, Consistency 20%).

    Attributes:
        scores: ``{dimension: 1..5 or None}`` for each of :data:`RUBRIC_DIMENSIONS`; ``None`` marks a
            dimension the judge cannot assess (the perceptual judge's ``consistency``).
        overall: the weighted mean over the assessed dimensions, weights renormalised to sum to 1; in [1, 5].
    """

    scores: Mapping[str, int | None]
    overall: float

    @staticmethod
    def of(scores: Mapping[str, int | None]) -> RubricScore:
        """Build a score from per-dimension values, computing ``overall``.

        Raises:
            ValueError: a dimension is missing, unknown, not an int in 1..5 (or ``None``), or all are ``None``.
        """
        if set(scores) != set(RUBRIC_DIMENSIONS):
            raise ValueError(f"rubric dimensions must be {list(RUBRIC_DIMENSIONS)}, got {sorted(scores)}")
        for dim, value in scores.items():
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
                raise ValueError(f"rubric dimension {dim!r}: must be an integer 1..5, got {value!r}")
        assessed = {d: v for d, v in scores.items() if v is not None}
        if not assessed:
            raise ValueError("rubric score has no assessed dimension")
        weight = sum(RUBRIC_WEIGHTS[d] for d in assessed)
        overall = sum(RUBRIC_WEIGHTS[d] * v for d, v in assessed.items()) / weight
        return RubricScore({d: scores[d] for d in RUBRIC_DIMENSIONS}, overall)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins: ``{"scores": {...}, "overall": float}``."""
        return {"scores": dict(self.scores), "overall": self.overall}


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def _similarity_to_score(similarity: float) -> int:
    """Map a similarity in [0, 1] to 1..5: ``round_half_up(1 + 4 * similarity)``."""
    return _round_half_up(1 + 4 * min(1.0, max(0.0, similarity)))


@final
class PerceptualJudge:
    """Offline, deterministic judge: perceptual-hash distance to the reference (ImageHash over Pillow).

    Distance of a candidate ``c`` to the reference ``r`` (``hash_size`` ``h``, ``B = h * h`` bits per hash)::

        d_hash(c) = (hamming(phash(c), phash(r)) + hamming(dhash(c), dhash(r))) / (2 B)      in [0, 1]
        d_pix(c)  = mean |gray(c) - gray(r)| / 255 over ``thumb x thumb`` grayscale thumbnails  in [0, 1]

    :meth:`rank` orders candidates by ``(d_hash, d_pix, index)`` ascending: the hash distance decides, the
    pixel difference breaks hash ties (a near copy and the exact anchor often share all hash bits), the
    index makes the order total. The anchor, pixel-identical to the reference, has distance ``(0, 0)``.

    :meth:`score` maps distances to the 1-5 rubric (see :meth:`score`).
    """

    def __init__(self, *, hash_size: int = 16, thumb: int = 64) -> None:
        """Args: ``hash_size`` (bits per side of each hash, >= 2), ``thumb`` (thumbnail side, >= 8).

        Raises:
            ValueError: on out-of-range sizes.
        """
        if hash_size < 2 or thumb < 8:
            raise ValueError(f"hash_size must be >= 2 and thumb >= 8, got {hash_size}, {thumb}")
        self.hash_size = hash_size
        self.thumb = thumb

    def _load(self, path: Path) -> Any:
        from PIL import Image

        with Image.open(path) as img:
            img.load()
            return img.convert("RGB")

    def _features(self, path: Path) -> tuple[Any, Any, list[int], list[int]]:
        import imagehash
        from PIL import Image

        img = self._load(path)
        gray = img.convert("L").resize((self.thumb, self.thumb), Image.Resampling.BILINEAR)
        small = img.resize((self.thumb, self.thumb), Image.Resampling.BILINEAR)
        # 4 levels per channel -> 64-bin joint colour histogram
        hist = [0] * 64
        rgb = small.tobytes()
        for k in range(0, len(rgb), 3):
            hist[(rgb[k] >> 6) * 16 + (rgb[k + 1] >> 6) * 4 + (rgb[k + 2] >> 6)] += 1
        return (
            imagehash.phash(img, hash_size=self.hash_size),
            imagehash.dhash(img, hash_size=self.hash_size),
            list(gray.tobytes()),
            hist,
        )

    def distances(self, reference: Path, candidate: Path) -> dict[str, float]:
        """``{"phash", "dhash", "hash", "pixel", "color"}`` distances of ``candidate`` to ``reference``.

        ``phash``/``dhash``: normalised Hamming distances in [0, 1]; ``hash``: their mean (``d_hash``);
        ``pixel``: ``d_pix``; ``color``: ``1 - histogram intersection`` of 64-bin RGB histograms, in [0, 1].
        """
        return self._compare(self._features(Path(reference)), self._features(Path(candidate)))

    def _compare(self, ref: tuple[Any, Any, list[int], list[int]], cand: tuple[Any, Any, list[int], list[int]]) -> dict[str, float]:
        rp, rd, rg, rh = ref
        cp, cd, cg, ch = cand
        bits = self.hash_size * self.hash_size
        phash = int(rp - cp) / bits
        dhash = int(rd - cd) / bits
        pixel = sum(abs(a - b) for a, b in zip(rg, cg)) / (len(rg) * 255)
        total = sum(rh)
        color = 1.0 - sum(min(a, b) for a, b in zip(rh, ch)) / total
        return {"phash": phash, "dhash": dhash, "hash": (phash + dhash) / 2, "pixel": pixel, "color": color}

    def rank(self, reference: Path, candidates: Sequence[Path]) -> list[int]:
        """Indices of ``candidates`` by ascending ``(d_hash, d_pix, index)``; see the class docstring."""
        ref = self._features(Path(reference))
        keyed = []
        for i, cand in enumerate(candidates):
            d = self._compare(ref, self._features(Path(cand)))
            keyed.append((d["hash"], d["pixel"], i))
        return [i for _, _, i in sorted(keyed)]

    def score(self, reference: Path, candidate: Path) -> RubricScore:
        """Perceptual 1-5 rubric, each score ``round_half_up(1 + 4 * s)`` of a similarity ``s`` in [0, 1]:

        * layout: ``s = max(0, 1 - phash / 0.5)`` (global structure; 0.5 is the distance of unrelated images),
        * content: ``s = max(0, 1 - dhash / 0.5)`` (edges and gradients: text blocks, icons),
        * style: ``s = 1 - color`` (colour-histogram intersection),
        * consistency: ``None``: cross-page consistency cannot be judged from one image pair offline, so the
          overall score renormalises the other three weights (0.30, 0.25, 0.25 -> 0.375, 0.3125, 0.3125).
        """
        d = self.distances(reference, candidate)
        return RubricScore.of(
            {
                "layout": _similarity_to_score(1 - d["phash"] / _UNRELATED_DISTANCE),
                "style": _similarity_to_score(1 - d["color"]),
                "content": _similarity_to_score(1 - d["dhash"] / _UNRELATED_DISTANCE),
                "consistency": None,
            }
        )


# ----------------------------------------------------------------------------------------------------------
# Chat-completions judge
# ----------------------------------------------------------------------------------------------------------

_RANK_SYSTEM: Final = (
    "You are a meticulous reviewer of mobile app user interfaces. You compare screenshots of implementations "
    "with a design and judge visual fidelity only: layout, styling (colours, typography, spacing) and content."
)


def _rank_instruction(n: int) -> str:
    return (
        f"The first image is the REFERENCE design of one mobile app screen. It is followed by {n} CANDIDATE "
        f"screenshots labelled Candidate 1 to Candidate {n}. Rank all {n} candidates from the most to the least "
        "visually faithful to the reference, judging each candidate only by how closely it matches the "
        "reference (layout, style, content); a candidate that matches the reference exactly ranks first. "
        f'Answer with JSON only, in the form {{"ranking": [...]}}, listing every candidate number from 1 to {n} '
        "exactly once, most faithful first."
    )


def _data_url(path: Path) -> str:
    suffix = path.suffix.lower()
    mime = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}.get(suffix)
    if mime is None:
        raise ValueError(f"{path}: unsupported image type {suffix!r} (png, jpg, jpeg, webp)")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _json_values(text: str) -> Iterable[Any]:
    """Every JSON object or array that starts at a ``{`` or ``[`` of ``text`` and parses, in order."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        yield value


def _as_label_number(item: Any) -> int | None:
    if isinstance(item, bool):
        return None
    if isinstance(item, int):
        return item
    if isinstance(item, float) and item.is_integer():
        return int(item)
    if isinstance(item, str):
        digits = re.findall(r"\d+", item)
        if len(digits) == 1:
            return int(digits[0])
    return None


def _check_permutation(numbers: Sequence[int | None], n: int) -> list[int] | None:
    if len(numbers) == n and sorted(x for x in numbers if x is not None) == list(range(1, n + 1)):
        return [x - 1 for x in numbers if x is not None]
    return None


def parse_ranking(text: str, n: int) -> list[int]:
    """Read a ranking of ``n`` candidates (1-based labels) from a judge's answer; return 0-based indices.

    Tried in order: a JSON object with a ``ranking`` key (any case; items may be numbers or strings such as
    ``"Candidate 3"``), anywhere in the text (code fences allowed); a bare JSON array; the last line whose
    numbers, in order, are exactly ``1..n`` once each (``"3 > 1 > 2"``).

    Raises:
        JudgeResponseError: no reading gives a permutation of ``1..n``.
    """
    values = list(_json_values(text))
    for value in values:
        if isinstance(value, dict):
            for key, items in value.items():
                if str(key).lower() == "ranking" and isinstance(items, list):
                    found = _check_permutation([_as_label_number(i) for i in items], n)
                    if found is not None:
                        return found
    for value in values:
        if isinstance(value, list):
            found = _check_permutation([_as_label_number(i) for i in value], n)
            if found is not None:
                return found
    for line in reversed(text.splitlines()):
        numbers = [int(x) for x in re.findall(r"\d+", line)]
        found = _check_permutation(numbers, n)
        if found is not None:
            return found
    excerpt = " ".join(text.split())[:200]
    raise JudgeResponseError(f"cannot read a ranking of candidates 1..{n} from the judge's answer: {excerpt!r}")


@final
class PointwiseRubric:
    """Prompt and parser of the 4-dimension point-wise rubric (seed 002 section 4.3) for chat judges."""

    DESCRIPTIONS: Final[Mapping[str, str]] = {
        "layout": "placement, size and order of regions and elements (bars, lists, cards, tab bar)",
        "style": "colours, typography, spacing, corner radii, icons",
        "content": "the same texts, labels, numbers and images as the reference, not placeholders",
        "consistency": "coherence with the reference's design language (navigation chrome, palette, spacing rhythm)",
    }

    def prompt(self) -> str:
        """The user instruction sent with the reference image followed by the candidate image."""
        dims = "; ".join(f"{d} ({self.DESCRIPTIONS[d]})" for d in RUBRIC_DIMENSIONS)
        return (
            "The first image is the REFERENCE design of one mobile app screen; the second is a CANDIDATE "
            f"implementation. Score the candidate's visual fidelity to the reference on four dimensions: {dims}. "
            "Each score is an integer from 1 (unrelated) to 5 (indistinguishable). Answer with JSON only, in the "
            'form {"layout": n, "style": n, "content": n, "consistency": n}.'
        )

    def parse(self, text: str) -> RubricScore:
        """Read the four scores from an answer: a JSON object (any key case), else ``Layout: 4``-style lines.

        Raises:
            JudgeResponseError: a dimension is missing or not an integer 1..5.
        """
        found: dict[str, int] = {}
        for value in _json_values(text):
            if isinstance(value, dict):
                lowered = {str(k).lower(): v for k, v in value.items()}
                if all(d in lowered for d in RUBRIC_DIMENSIONS):
                    for d in RUBRIC_DIMENSIONS:
                        number = _as_label_number(lowered[d])
                        if number is None or not 1 <= number <= 5:
                            raise JudgeResponseError(f"rubric dimension {d!r}: expected an integer 1..5, got {lowered[d]!r}")
                        found[d] = number
                    return RubricScore.of(found)
        for d in RUBRIC_DIMENSIONS:
            m = re.search(rf"(?i)\b{d}\b[^0-9\n]{{0,20}}([0-9]+(?:\.[0-9]+)?)", text)
            if m is None:
                raise JudgeResponseError(f"rubric dimension {d!r} missing from the judge's answer: {text[:200]!r}")
            value = float(m.group(1))
            if not value.is_integer() or not 1 <= value <= 5:
                raise JudgeResponseError(f"rubric dimension {d!r}: expected an integer 1..5, got {m.group(1)!r}")
            found[d] = int(value)
        return RubricScore.of(found)


@final
class ChatJudge:
    """A judge behind an OpenAI-compatible chat-completions endpoint with image input.

    Each call POSTs ``{base_url}/chat/completions`` with ``model``, ``temperature`` and one user message
    whose content is text parts and ``image_url`` parts carrying the screenshots as base64 data URLs; the
    answer is ``choices[0].message.content``. :meth:`rank` asks for ``{"ranking": [...]}`` over candidates
    labelled 1..N (parsed by :func:`parse_ranking`); :meth:`score` uses :class:`PointwiseRubric`.
    """

    ENV_BASE_URL: Final = "MOBILEBENCH_JUDGE_BASE_URL"
    ENV_MODEL: Final = "MOBILEBENCH_JUDGE_MODEL"
    ENV_API_KEY: Final = "MOBILEBENCH_JUDGE_API_KEY"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        temperature: float = 0.0,
        rubric: PointwiseRubric | None = None,
    ) -> None:
        """Args: endpoint root (``https://host/v1``; a URL already ending in ``/chat/completions`` is used
        as is), model name, optional bearer key, HTTP timeout in seconds, sampling temperature.

        Raises:
            JudgeConfigError: empty ``base_url`` or ``model``.
        """
        if not base_url:
            raise JudgeConfigError(f"judge endpoint missing: pass --mb-judge-base-url or set {self.ENV_BASE_URL}")
        if not model:
            raise JudgeConfigError(f"judge model missing: pass --mb-judge-model or set {self.ENV_MODEL}")
        base = base_url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.temperature = temperature
        self.rubric = rubric or PointwiseRubric()

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None) -> ChatJudge:
        """Configure from run options (``mb_judge_base_url``, ``mb_judge_model``, ``mb_judge_api_key``),
        falling back to the environment (``MOBILEBENCH_JUDGE_BASE_URL``, ``..._MODEL``, ``..._API_KEY``).

        Raises:
            JudgeConfigError: no endpoint or no model from either source.
        """
        options = options or {}
        env = os.environ if env is None else env
        return cls(
            base_url=options.get("mb_judge_base_url") or env.get(cls.ENV_BASE_URL, ""),
            model=options.get("mb_judge_model") or env.get(cls.ENV_MODEL, ""),
            api_key=options.get("mb_judge_api_key") or env.get(cls.ENV_API_KEY) or None,
        )

    def _complete(self, content: list[dict[str, Any]], system: str | None = None) -> str:
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": content})
        body = json.dumps({"model": self.model, "temperature": self.temperature, "messages": messages}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", errors="replace")
            raise JudgeTransportError(f"judge {self.url}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise JudgeTransportError(f"judge {self.url}: {exc}") from exc
        try:
            payload = json.loads(raw)
            message = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise JudgeResponseError(f"judge {self.url}: not a chat-completions answer: {raw[:200]!r}") from exc
        if isinstance(message, list):  # content parts
            message = "".join(p.get("text", "") for p in message if isinstance(p, dict))
        if not isinstance(message, str):
            raise JudgeResponseError(f"judge {self.url}: message content is {type(message).__name__}, not text")
        return message

    def rank(self, reference: Path, candidates: Sequence[Path]) -> list[int]:
        """Ask for a ranking of ``candidates`` (labelled 1..N) against ``reference``; 0-based indices back."""
        content: list[dict[str, Any]] = [
            {"type": "text", "text": _rank_instruction(len(candidates))},
            {"type": "text", "text": "REFERENCE:"},
            {"type": "image_url", "image_url": {"url": _data_url(Path(reference))}},
        ]
        for i, cand in enumerate(candidates, start=1):
            content.append({"type": "text", "text": f"Candidate {i}:"})
            content.append({"type": "image_url", "image_url": {"url": _data_url(Path(cand))}})
        return parse_ranking(self._complete(content, _RANK_SYSTEM), len(candidates))

    def score(self, reference: Path, candidate: Path) -> RubricScore:
        """Point-wise rubric score of ``candidate`` against ``reference`` (:class:`PointwiseRubric`)."""
        content: list[dict[str, Any]] = [
            {"type": "text", "text": self.rubric.prompt()},
            {"type": "text", "text": "REFERENCE:"},
            {"type": "image_url", "image_url": {"url": _data_url(Path(reference))}},
            {"type": "text", "text": "CANDIDATE:"},
            {"type": "image_url", "image_url": {"url": _data_url(Path(candidate))}},
        ]
        return self.rubric.parse(self._complete(content, _RANK_SYSTEM))


# ----------------------------------------------------------------------------------------------------------
# Anchor-reference list-wise protocol
# ----------------------------------------------------------------------------------------------------------


@final
@dataclasses.dataclass(frozen=True)
class JudgeAttempt:
    """One judge call of the anchor protocol.

    Attributes:
        order: the labels in the order the judge saw them (models and :data:`ANCHOR`).
        ranking: the judge's ranking as labels, most faithful first; ``None`` if the answer was unusable.
        anchor_first: the anchor was ranked first (the call passed the sanity check).
        error: why the answer was unusable, else ``None``.
    """

    order: tuple[str, ...]
    ranking: tuple[str, ...] | None
    anchor_first: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {
            "order": list(self.order),
            "ranking": None if self.ranking is None else list(self.ranking),
            "anchor_first": self.anchor_first,
            "error": self.error,
        }


@final
@dataclasses.dataclass(frozen=True)
class JudgeOutcome:
    """The anchor-protocol result for one screen (seed 002 section 4.3).

    Attributes:
        screen_id: the screen judged (``None`` if the caller gave none).
        models: the models compared, sorted.
        attempts: every call made, in order (at most ``max_attempts``; the last passed if ``accepted``).
        accepted: some call ranked the anchor first; its ranking counts.
        ranking: the accepted ranking without the anchor (models, most faithful first), else ``None``.
    """

    screen_id: str | None
    models: tuple[str, ...]
    attempts: tuple[JudgeAttempt, ...]
    accepted: bool
    ranking: tuple[str, ...] | None

    @property
    def anchor_passed(self) -> bool:
        """Alias of ``accepted``: the anchor was placed first within the allowed attempts."""
        return self.accepted

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins; :meth:`from_dict` reverses it."""
        return {
            "screen_id": self.screen_id,
            "models": list(self.models),
            "attempts": [a.to_dict() for a in self.attempts],
            "accepted": self.accepted,
            "ranking": None if self.ranking is None else list(self.ranking),
        }

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> JudgeOutcome:
        """Rebuild an outcome from :meth:`to_dict` output (after JSON / xdist transport)."""
        return JudgeOutcome(
            screen_id=data.get("screen_id"),
            models=tuple(data["models"]),
            attempts=tuple(
                JudgeAttempt(
                    order=tuple(a["order"]),
                    ranking=None if a.get("ranking") is None else tuple(a["ranking"]),
                    anchor_first=bool(a["anchor_first"]),
                    error=a.get("error"),
                )
                for a in data["attempts"]
            ),
            accepted=bool(data["accepted"]),
            ranking=None if data.get("ranking") is None else tuple(data["ranking"]),
        )


def judge_screen(
    reference: Path,
    candidates: Mapping[str, Path],
    judge: Judge,
    *,
    rng: random.Random,
    max_attempts: int = 3,
    screen_id: str | None = None,
) -> JudgeOutcome:
    """Anchor-reference list-wise judging of one screen (seed 002 section 4.3).

    Each attempt shuffles ``[anchor] + model screenshots`` with ``rng`` (a fresh order per attempt, so a
    judge's position bias is not repeated), where the anchor is ``reference`` itself, and asks
    ``judge.rank(reference, shuffled_paths)``. The attempt passes if the anchor is ranked first; its ranking,
    anchor removed, is accepted and judging stops. Otherwise (anchor not first, an unreadable answer, or an
    index list that is not a permutation) the attempt is recorded and the judge is asked again, up to
    ``max_attempts`` calls; if none passes, the screen's outcome is discarded (``accepted=False``).

    With a single model the ranking has two entries (anchor and model); it carries no comparison between
    models (its Borda contribution is empty) but the anchor check still tests that the judge tells the true
    design from the model's rendering.

    Args:
        reference: the reference screenshot of the screen.
        candidates: ``{model: screenshot}``, at least one; no model may be named :data:`ANCHOR`.
        judge: any :class:`Judge`.
        rng: the source of the shuffles (seed it for reproducible runs).
        max_attempts: calls allowed, >= 1 (default 3).
        screen_id: recorded in the outcome.

    Returns:
        A :class:`JudgeOutcome`.

    Raises:
        ValueError: no candidates, a model named ``ANCHOR``, or ``max_attempts < 1``.
        FileNotFoundError: the reference or a candidate file is missing (naming the model).
        JudgeTransportError: from the judge (an infrastructure failure, not a judge verdict).
    """
    if not candidates:
        raise ValueError(f"screen {screen_id!r}: no candidate screenshots to judge")
    if ANCHOR in candidates:
        raise ValueError(f"screen {screen_id!r}: a model may not be named {ANCHOR!r}")
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"max_attempts must be an int >= 1, got {max_attempts!r}")
    reference = Path(reference)
    if not reference.is_file():
        raise FileNotFoundError(f"screen {screen_id!r}: reference screenshot {reference} not found")
    for model, path in candidates.items():
        if not Path(path).is_file():
            raise FileNotFoundError(f"screen {screen_id!r}: screenshot of model {model!r} not found: {path}")
    models = tuple(sorted(candidates))
    items: list[tuple[str, Path]] = [(ANCHOR, reference)] + [(m, Path(candidates[m])) for m in models]
    attempts: list[JudgeAttempt] = []
    for _ in range(max_attempts):
        order = list(items)
        rng.shuffle(order)
        labels = tuple(label for label, _ in order)
        try:
            indices = judge.rank(reference, [path for _, path in order])
        except JudgeResponseError as exc:
            attempts.append(JudgeAttempt(labels, None, False, str(exc)))
            continue
        indices = list(indices)
        if any(isinstance(i, bool) or not isinstance(i, int) for i in indices) or sorted(indices) != list(
            range(len(order))
        ):
            attempts.append(
                JudgeAttempt(labels, None, False, f"judge returned {list(indices)!r}, not a permutation of 0..{len(order) - 1}")
            )
            continue
        ranked = tuple(labels[i] for i in indices)
        passed = ranked[0] == ANCHOR
        attempts.append(JudgeAttempt(labels, ranked, passed))
        if passed:
            return JudgeOutcome(screen_id, models, tuple(attempts), True, ranked[1:])
    return JudgeOutcome(screen_id, models, tuple(attempts), False, None)


def _outcomes(outcomes: Iterable[JudgeOutcome | Mapping[str, Any]]) -> list[JudgeOutcome]:
    return [o if isinstance(o, JudgeOutcome) else JudgeOutcome.from_dict(o) for o in outcomes]


def borda_over_screens(outcomes: Iterable[JudgeOutcome | Mapping[str, Any]]) -> dict[str, float]:
    """Per-model Borda score in [0, 1] over the accepted rankings (seed 002 section 4.3, Table 2).

    Only accepted outcomes count (discarded screens contribute nothing); the anchor is already removed
    from accepted rankings. Scoring is :func:`pytest_mobilebench.metrics.borda_scores`: in a ranking of
    ``L`` models the one at 0-based position ``i`` earns ``L - 1 - i``; a model's score is its points over the
    most it could have earned in the rankings where it appears. A model that appears only in discarded
    outcomes or only in single-model rankings has no score and is absent.

    Args:
        outcomes: :class:`JudgeOutcome` objects or their ``to_dict()`` form.

    Returns:
        ``{model: score}``, keys sorted.
    """
    rankings = [list(o.ranking) for o in _outcomes(outcomes) if o.accepted and o.ranking is not None]
    return metrics.borda_scores(rankings, exclude=(ANCHOR,))


def anchor_pass_rate(outcomes: Iterable[JudgeOutcome | Mapping[str, Any]]) -> float:
    """Per-call anchor pass rate (seed 002 section 4.3 (i)): calls that ranked the anchor first / all calls.

    Every attempt is a call, including unreadable answers (which did not place the anchor first). ``0.0``
    without calls (the project's empty-denominator convention, :func:`pytest_mobilebench.metrics.rate`).
    """
    attempts = [a for o in _outcomes(outcomes) for a in o.attempts]
    return metrics.rate(sum(1 for a in attempts if a.anchor_first), len(attempts))


def acceptance_rate(outcomes: Iterable[JudgeOutcome | Mapping[str, Any]]) -> float:
    """Share of screens whose ranking was accepted within the allowed attempts; ``0.0`` without screens."""
    items = _outcomes(outcomes)
    return metrics.rate(sum(1 for o in items if o.accepted), len(items))
