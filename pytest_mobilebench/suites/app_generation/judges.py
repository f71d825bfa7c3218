"""Visual judges of app generation (MobileForge, seed 002 section 4.3): list-wise ranking and the rubric.

A list-wise judge ranks candidate screenshots from most to least faithful to a reference design
(:class:`Judge`); the anchor protocol around it is :mod:`.ranking`. A point-wise 4-dimension rubric
(Layout 30%, Style 25%, Content 25%, Consistency 20%, each 1-5) is kept as an absolute baseline
(:class:`PointwiseJudge`, :class:`RubricScore`).

Judges:

* :class:`PerceptualJudge` (offline default, deterministic): ranks by perceptual-hash distance to the
  reference (pHash + dHash, ImageHash over Pillow), ties broken by mean absolute pixel difference.
* :class:`ChatJudge`: an OpenAI-compatible ``/chat/completions`` endpoint with image inputs (data URLs);
  its answers are read by :func:`parse_ranking` and :class:`PointwiseRubric`.

Only :class:`ChatJudge` has side effects (HTTP); everything else is pure.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol, final, runtime_checkable

__all__ = [
    "RUBRIC_DIMENSIONS",
    "RUBRIC_WEIGHTS",
    "ChatJudge",
    "Judge",
    "JudgeConfigError",
    "JudgeResponseError",
    "JudgeTransportError",
    "PerceptualJudge",
    "PointwiseJudge",
    "PointwiseRubric",
    "RubricScore",
    "parse_ranking",
]

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
    return math.floor(x + 0.5)


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

    def _compare(
        self, ref: tuple[Any, Any, list[int], list[int]], cand: tuple[Any, Any, list[int], list[int]]
    ) -> dict[str, float]:
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
                            raise JudgeResponseError(
                                f"rubric dimension {d!r}: expected an integer 1..5, got {lowered[d]!r}"
                            )
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
