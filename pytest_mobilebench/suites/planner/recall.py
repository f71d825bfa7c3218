"""Tool recall: the top-N catalog tools for a query and its dialogue history (MobilePA-Bench: A_0 = R_N(q, H_0; G)
plus the task's skill loaders, N = 15).

BM25 (Okapi; Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009), with
``k1 = 1.5``, ``b = 0.75`` and the non-negative idf ``ln(1 + (N - n + 0.5) / (n + 0.5))``::

    score(q, d) = sum over query terms t of idf(t) * f(t, d) * (k1 + 1) / (f(t, d) + k1 * (1 - b + b * |d| / avgdl))

Ties are broken by tool name so the ranking is deterministic.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Final

from pytest_mobilebench.suites.planner.catalog import catalog

__all__ = ["ALWAYS_AVAILABLE", "RECALL_N", "BM25Index", "bm25_rank", "recall_tools", "tokenize"]

RECALL_N: Final = 15
#: tools in every action space: the planner's own controls (not device APIs).
ALWAYS_AVAILABLE: Final = ("Finish", "ask_user", "search_user_memory")
_STOP: Final = frozenset(
    {
        "a",
        "an",
        "and",
        "the",
        "to",
        "of",
        "for",
        "in",
        "on",
        "at",
        "by",
        "my",
        "me",
        "i",
        "is",
        "it",
        "be",
        "with",
        "from",
        "or",
        "as",
        "this",
        "that",
        "you",
        "your",
        "please",
        "can",
        "could",
        "would",
        "will",
        "do",
    }
)


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric words without stop words, with a crude plural strip (``events`` -> ``event``)."""
    words = re.findall(r"[a-z0-9]+", text.casefold())
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words if w not in _STOP]


class BM25Index:
    """A fixed document set, tokenized once; :meth:`rank` scores a query against it."""

    def __init__(self, docs: dict[str, str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = {name: Counter(tokenize(text)) for name, text in docs.items()}
        self.length = {name: sum(tf.values()) for name, tf in self.tf.items()}
        self.avgdl = sum(self.length.values()) / max(len(self.tf), 1)
        df = Counter(t for tf in self.tf.values() for t in tf)
        n = len(self.tf)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def rank(self, query: str) -> list[tuple[str, float]]:
        """``[(doc name, score)]``, best first, every document included (score 0 too)."""
        terms = tokenize(query)
        scores = []
        for name, tf in self.tf.items():
            norm = self.k1 * (1 - self.b + self.b * self.length[name] / self.avgdl)
            s = sum(self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if tf[t])
            scores.append((name, s))
        return sorted(scores, key=lambda x: (-x[1], x[0]))


def bm25_rank(query: str, docs: dict[str, str], k1: float = 1.5, b: float = 0.75) -> list[tuple[str, float]]:
    """``[(doc name, score)]``, best first, for every document (score 0 included)."""
    return BM25Index(docs, k1, b).rank(query)


@functools.lru_cache(maxsize=1)
def _catalog_index() -> BM25Index:
    return BM25Index(
        {
            name: t.recall_text
            for name, t in catalog().items()
            if not t.skill and t.domain != "skill" and name not in ALWAYS_AVAILABLE
        }
    )


def recall_tools(query: str, history: Sequence[str] = (), n: int = RECALL_N) -> list[str]:
    """The top-``n`` catalog tools (skill tools and loaders excluded) for the query plus dialogue history."""
    ranked = _catalog_index().rank(" ".join([query, *history]))
    return [name for name, _ in ranked[:n]]
