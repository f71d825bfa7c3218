""" "Did you mean ...?" for mistyped names: pseudo-predictions, manifest keys, instance ids.

One helper so every message suggests the same way: :func:`difflib.get_close_matches` with its ratio cut-off
(``SequenceMatcher.ratio() >= cutoff``; 0.6 is difflib's default and catches one dropped or swapped letter in
short words such as ``gld`` -> ``gold``, ``framwork`` -> ``framework``, ``FAIL_TO_PAS`` -> ``FAIL_TO_PASS``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest", "did_you_mean"]


def closest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The choice most similar to ``word`` (ratio >= ``cutoff``), or None; exact matches are not suggestions."""
    pool = sorted({c for c in choices if c != word})
    matches = difflib.get_close_matches(word, pool, n=1, cutoff=cutoff)
    return matches[0] if matches else None


def did_you_mean(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``" (did you mean 'x'?)"`` for the closest choice, or ``""`` when nothing is close enough."""
    match = closest(word, choices, cutoff=cutoff)
    return f" (did you mean {match!r}?)" if match else ""
