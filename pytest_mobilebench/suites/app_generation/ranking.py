"""Anchor-reference list-wise visual evaluation and its aggregation (MobileForge, seed 002 section 4.3, Table 2).

For one screen, a judge (:mod:`.judges`) ranks the N candidate screenshots (one per model) plus the
reference design itself, anonymised and shuffled in as a hidden anchor, from most to least faithful. A
ranking is valid only if the anchor is ranked first (it is pixel-identical to the reference, so any judge
that compares must put it first); otherwise it is discarded and the judge is asked again
(:func:`judge_screen`). Accepted rankings are aggregated into a per-model Borda score in [0, 1]
(:func:`borda_over_screens`, over :func:`pytest_mobilebench.metrics.borda_scores`); the per-call anchor
pass rate and the share of accepted screens are reported beside it. All functions here are pure.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, final

from pytest_mobilebench import metrics
from pytest_mobilebench.suites.app_generation.judges import Judge, JudgeResponseError

__all__ = [
    "ANCHOR",
    "JudgeAttempt",
    "JudgeOutcome",
    "acceptance_rate",
    "anchor_pass_rate",
    "borda_over_screens",
    "judge_screen",
]

#: The label of the hidden anchor (the reference shuffled in among the candidates) in attempts and rankings.
ANCHOR: Final[str] = "<reference>"


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
                JudgeAttempt(
                    labels, None, False, f"judge returned {list(indices)!r}, not a permutation of 0..{len(order) - 1}"
                )
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
