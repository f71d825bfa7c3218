"""Pure summary statistics used by every suite's report.

Nothing here touches files, processes or the network; every function maps builtins to builtins so
results travel through xdist and JSON unchanged. Conventions for empty inputs are fixed here, once,
and documented per function:

* a rate over an empty denominator is ``0.0`` (:func:`rate`, :func:`pass_at_1`, :func:`stratify`);
* the macro mean of no values is ``0.0`` (:func:`mean`);
* the Wilson interval of no trials is the uninformative ``(0.0, 1.0)`` (:func:`wilson_interval`);
* Fleiss' kappa when every rating falls in one category is ``1.0`` (:func:`fleiss_kappa`).

Sources: MobileDev-Bench (seed 000) for resolution rate and stratified tables; AppEval (seed 003) for
Pass@1, Hit@k, Recall@k and Fleiss' kappa; MobileForge (seed 002) for Borda scores and Wilson
intervals of failure-category proportions; McNemar (1947) for paired model comparisons.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "FILE_COUNT_BINS",
    "CHANGED_LINES_BINS",
    "wilson_interval",
    "borda_scores",
    "rate",
    "pass_at_1",
    "fleiss_kappa",
    "hit_at_k",
    "recall_at_k",
    "file_count_bin",
    "changed_lines_bin",
    "stratify",
    "mean",
    "mcnemar_exact",
]

#: Labels of :func:`file_count_bin`, in table order (MobileDev-Bench, stratified results by gold file count).
FILE_COUNT_BINS: Final[tuple[str, ...]] = ("1", "2-3", "4-5", "6-10", "11+")

#: Labels of :func:`changed_lines_bin`, in table order (MobileDev-Bench, stratified results by gold changed lines).
CHANGED_LINES_BINS: Final[tuple[str, ...]] = ("<=10", "11-50", "51-100", "101-500", ">500")


def _check_count(name: str, value: object) -> int:
    """Return ``value`` if it is a non-negative ``int`` (``bool`` excluded), else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _check_k_of_n(k: object, n: object, k_name: str, n_name: str) -> tuple[int, int]:
    k_i = _check_count(k_name, k)
    n_i = _check_count(n_name, n)
    if k_i > n_i:
        raise ValueError(f"{k_name} ({k_i}) cannot exceed {n_name} ({n_i})")
    return k_i, n_i


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``.

    Used for the failure-category proportions of MobileForge (seed 002, SPEC section 3 "Failure taxonomy":
    "Proportions with Wilson 95% intervals"). With ``p = successes / n``::

        centre = (p + z^2 / (2n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))
        (lower, upper) = (centre - half, centre + half), clipped to [0, 1]

    Args:
        successes: number of successes, ``0 <= successes <= n``.
        n: number of trials, ``>= 0``.
        z: standard-normal quantile; ``1.96`` gives a 95% interval. Must be finite and ``> 0``.

    Returns:
        ``(lower, upper)`` with ``0 <= lower <= upper <= 1``. With ``n == 0`` there is no evidence at all and
        the result is the whole range ``(0.0, 1.0)``.

    Raises:
        ValueError: on a negative or non-int count, ``successes > n``, or a non-positive / non-finite ``z``.
    """
    k, n_i = _check_k_of_n(successes, n, "successes", "n")
    if not (isinstance(z, (int, float)) and math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a finite number > 0, got {z!r}")
    if n_i == 0:
        return (0.0, 1.0)
    p = k / n_i
    z2 = z * z
    denom = 1.0 + z2 / n_i
    centre = (p + z2 / (2 * n_i)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n_i + z2 / (4.0 * n_i * n_i))
    lower = max(0.0, centre - half)
    upper = min(1.0, centre + half)
    # Exact endpoints at the boundaries (floating point can leave 1e-17 residue otherwise).
    if k == 0:
        lower = 0.0
    if k == n_i:
        upper = 1.0
    return (lower, upper)


def borda_scores(rankings: Sequence[Sequence[str]], *, exclude: Collection[str] = ()) -> dict[str, float]:
    """Normalised Borda score per item from list-wise rankings (MobileForge, seed 002, section 4.3 and
    Table 2: "per-model Borda score in [0, 1] aggregated from anchor-reference list-wise ranking").

    Each ranking lists items from MOST to LEAST faithful. Items named in ``exclude`` (typically the anchor,
    i.e. the reference screenshot shuffled into the judge's list) are removed from every ranking first, and
    the remaining order is scored. In a ranking of ``L`` items the item at 0-based position ``i`` earns
    ``L - 1 - i`` points (first: ``L - 1``, last: ``0``). An item's score is::

        score(x) = sum of points x earned / sum of (L_r - 1) over the rankings r in which x appears

    i.e. its points divided by the most it could have earned in those same rankings. So an item ranked first
    everywhere scores ``1.0`` and one ranked last everywhere scores ``0.0``; rankings of different lengths
    (a scenario where a model produced no screen) and items missing from some rankings are handled
    without penalty or bonus for absence.

    Rankings that carry no comparison after exclusion (fewer than 2 items) contribute nothing. An item
    that appears only in such rankings has no score and is absent from the result.

    Args:
        rankings: the accepted rankings (callers drop rankings whose anchor was not first, SPEC section 3).
        exclude: item names removed from every ranking before scoring.

    Returns:
        ``{item: score}`` with scores in ``[0, 1]``, keys sorted by item name.

    Raises:
        ValueError: when a ranking is a bare string (a common mistake) or names an item twice.
    """
    excluded = frozenset(exclude)
    points: dict[str, int] = {}
    attainable: dict[str, int] = {}
    for r_index, ranking in enumerate(rankings):
        if isinstance(ranking, str):
            raise ValueError(f"ranking #{r_index} is a string {ranking!r}, expected a sequence of item names")
        seen: set[str] = set()
        for item in ranking:
            if item in seen:
                raise ValueError(f"ranking #{r_index} names item {item!r} more than once: {list(ranking)!r}")
            seen.add(item)
        kept = [item for item in ranking if item not in excluded]
        length = len(kept)
        if length < 2:
            continue
        for position, item in enumerate(kept):
            points[item] = points.get(item, 0) + (length - 1 - position)
            attainable[item] = attainable.get(item, 0) + (length - 1)
    return {item: points[item] / attainable[item] for item in sorted(points)}


def rate(k: int, n: int) -> float:
    """``k / n`` as a float, with ``0.0`` when ``n == 0``.

    The empty-denominator convention: a report over zero instances shows a 0% rate (and the count 0 beside
    it), never a division error or NaN, so summaries stay valid JSON. Resolution rate = resolved / all
    instances evaluated (MobileDev-Bench, seed 000, Appendix D.4.1; SPEC section 1 "Grading a candidate").

    Raises:
        ValueError: on negative or non-int counts, or ``k > n``.
    """
    k_i, n_i = _check_k_of_n(k, n, "k", "n")
    return k_i / n_i if n_i else 0.0


def pass_at_1(resolved: int, eligible: int) -> float:
    """Pass@1 = N_resolved / N_eligible (AppEval, seed 003, section "Grading"; SPEC section 2).

    ``eligible`` excludes unresolved infrastructure errors, which are reported separately; callers count
    them apart. ``0.0`` when ``eligible == 0`` (see :func:`rate`).

    Raises:
        ValueError: on negative or non-int counts, or ``resolved > eligible``.
    """
    k, n = _check_k_of_n(resolved, eligible, "resolved", "eligible")
    return k / n if n else 0.0


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa of an N x C table of counts (AppEval, seed 003, agreement analysis; SPEC section 2).

    ``table[i][c]`` = how many of the ``m`` raters (systems) put subject (task) ``i`` in category ``c``;
    every row sums to the same ``m >= 2``. With ``N`` rows::

        P_i   = sum_c n_ic (n_ic - 1) / (m (m - 1))
        P_bar = (1 / N) sum_i P_i
        p_c   = (1 / (N m)) sum_i n_ic              (pooled category share)
        P_e   = sum_c p_c^2
        kappa = (P_bar - P_e) / (1 - P_e)

    Degenerate case: ``P_e == 1`` happens exactly when every rating of every subject falls in one
    category; then ``P_bar == 1`` too and the formula is ``0 / 0``. This function returns ``1.0``
    there (the raters agree on everything; there is simply no variation to tell agreement from chance).
    Other libraries return NaN; ``1.0`` is chosen so the value stays a plain JSON number.

    Returns:
        kappa as a float in ``[-1, 1]`` (its lower bound depends on ``m``).

    Raises:
        ValueError: on an empty table, rows of different lengths, fewer than one category, negative or
        non-int counts, rows with different sums, or ``m < 2``.
    """
    rows = [list(row) for row in table]
    if not rows:
        raise ValueError("fleiss_kappa needs at least one subject (row), got an empty table")
    n_cat = len(rows[0])
    if n_cat == 0:
        raise ValueError("fleiss_kappa needs at least one category (column), row #0 is empty")
    m: int | None = None
    for i, row in enumerate(rows):
        if len(row) != n_cat:
            raise ValueError(f"row #{i} has {len(row)} categories, row #0 has {n_cat}")
        for c, value in enumerate(row):
            _check_count(f"table[{i}][{c}]", value)
        total = sum(row)
        if m is None:
            m = total
        elif total != m:
            raise ValueError(f"row #{i} sums to {total} raters, row #0 sums to {m}; every subject needs m ratings")
    assert m is not None
    if m < 2:
        raise ValueError(f"fleiss_kappa needs m >= 2 raters per subject, got m={m}")
    n_sub = len(rows)
    p_i = [sum(n * (n - 1) for n in row) / (m * (m - 1)) for row in rows]
    p_bar = sum(p_i) / n_sub
    p_c = [sum(row[c] for row in rows) / (n_sub * m) for c in range(n_cat)]
    p_e = sum(p * p for p in p_c)
    if math.isclose(p_e, 1.0, rel_tol=0.0, abs_tol=1e-12):
        return 1.0
    return (p_bar - p_e) / (1.0 - p_e)


def _top_k(ranked: Sequence[str], gold: Collection[str], k: int) -> tuple[set[str], set[str]]:
    if isinstance(ranked, str):
        raise ValueError(f"ranked is a string {ranked!r}, expected a sequence of file paths")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if isinstance(gold, str):
        raise ValueError(f"gold is a string {gold!r}, expected a collection of file paths")
    gold_set = set(gold)
    if not gold_set:
        raise ValueError("the gold file set F is empty; Hit@k / Recall@k are undefined for it")
    return set(ranked[:k]), gold_set


def hit_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> int:
    """Hit@k: ``1`` if the first ``k`` entries of ``ranked`` intersect the gold set ``F``, else ``0``
    (AppEval, seed 003, task definition; SPEC section 2).

    ``ranked`` is the agent's list of suspected files, most suspect first, taken as given (the first ``k``
    entries, duplicates included). ``k`` larger than the list just uses the whole list.

    Raises:
        ValueError: when ``k < 1``, ``gold`` is empty, or a bare string is passed for a list.
    """
    top, gold_set = _top_k(ranked, gold, k)
    return 1 if top & gold_set else 0


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Recall@k = |top-k(ranked) & F| / |F| (AppEval, seed 003, task definition; SPEC section 2).

    Same input rules as :func:`hit_at_k`; duplicates in ``ranked`` never count twice.

    Raises:
        ValueError: when ``k < 1``, ``gold`` is empty, or a bare string is passed for a list.
    """
    top, gold_set = _top_k(ranked, gold, k)
    return len(top & gold_set) / len(gold_set)


def file_count_bin(n: int) -> str:
    """Bin of a gold patch's changed-file count: ``"1"``, ``"2-3"``, ``"4-5"``, ``"6-10"``, ``"11+"``
    (MobileDev-Bench, seed 000, Appendix E.1 Table 12 and Table 14; SPEC section 1 "Stratified reporting").

    Raises:
        ValueError: when ``n < 1`` (a gold patch changes at least one file) or ``n`` is not an int.
    """
    n_i = _check_count("file count", n)
    if n_i < 1:
        raise ValueError("file count must be >= 1: a gold patch changes at least one file")
    if n_i == 1:
        return "1"
    if n_i <= 3:
        return "2-3"
    if n_i <= 5:
        return "4-5"
    if n_i <= 10:
        return "6-10"
    return "11+"


def changed_lines_bin(n: int) -> str:
    """Bin of a gold patch's changed-line count (added + removed): ``"<=10"``, ``"11-50"``, ``"51-100"``,
    ``"101-500"``, ``">500"`` (MobileDev-Bench, seed 000, Appendix E.1 Figures 9-10; SPEC section 1
    "Stratified reporting").

    ``0`` (a binary-only or rename-only patch) falls in ``"<=10"``.

    Raises:
        ValueError: when ``n`` is negative or not an int.
    """
    n_i = _check_count("changed lines", n)
    if n_i <= 10:
        return "<=10"
    if n_i <= 50:
        return "11-50"
    if n_i <= 100:
        return "51-100"
    if n_i <= 500:
        return "101-500"
    return ">500"


def stratify(
    rows: Iterable[Mapping[str, Any]],
    key: str | Callable[[Mapping[str, Any]], object],
    success: str | Callable[[Mapping[str, Any]], bool] = "resolved",
) -> dict[str, dict[str, Any]]:
    """Group result rows into strata and count successes (MobileDev-Bench, seed 000, section 5.3 and
    Appendix E: tables by repository, framework, difficulty, category, file-count and line-count bins;
    SPEC section 1 "Stratified reporting").

    Args:
        rows: one mapping per evaluated instance.
        key: a field name (the stratum is ``str(row[key])``) or a function of the row returning the
            stratum (converted with ``str``; enums with a ``str`` value use that value).
        success: a field name whose value must be a ``bool``, or a function of the row returning ``bool``.

    Returns:
        ``{stratum: {"total": int, "resolved": int, "rate": float}}`` with strata sorted by name and
        ``rate = resolved / total`` (never ``0 / 0``: a stratum exists only if it has a row).

    Raises:
        ValueError: naming the row index, when a row lacks the key or success field, or the success value
        is not a ``bool``.
    """
    counts: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        if callable(key):
            raw_stratum = key(row)
        else:
            if key not in row:
                raise ValueError(f"row #{index} has no field {key!r} to stratify by (fields: {sorted(row)!r})")
            raw_stratum = row[key]
        stratum = (
            raw_stratum.value
            if isinstance(raw_stratum, enum.Enum) and isinstance(raw_stratum.value, str)
            else raw_stratum
        )
        name = str(stratum)
        if callable(success):
            ok = success(row)
        else:
            if success not in row:
                raise ValueError(f"row #{index} has no success field {success!r} (fields: {sorted(row)!r})")
            ok = row[success]
        if not isinstance(ok, bool):
            raise ValueError(f"row #{index}: success value must be a bool, got {type(ok).__name__} {ok!r}")
        entry = counts.setdefault(name, [0, 0])
        entry[0] += 1
        entry[1] += int(ok)
    return {
        name: {"total": total, "resolved": good, "rate": good / total} for name, (total, good) in sorted(counts.items())
    }


def mean(xs: Iterable[float]) -> float:
    """Macro (unweighted) mean of per-unit values, e.g. per-instance localization F1 or per-repository
    Pass@1 (SPEC sections 1 "Localization" and 2 "macro over repositories").

    The mean of no values is ``0.0`` by convention (same reason as :func:`rate`: a report over zero units
    shows 0 with a count of 0, never NaN).

    Raises:
        ValueError: when a value is not a finite real number (``bool`` excluded).
    """
    total = 0.0
    count = 0
    for index, x in enumerate(xs):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueError(f"value #{index} is not a finite number: {x!r}")
        total += x
        count += 1
    return total / count if count else 0.0


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value of two paired binary outcomes (two models on the same instances).

    Only the discordant pairs count: ``only_a`` instances resolved by A and not by B, ``only_b`` the
    reverse. Under the null hypothesis (both models equally good) each discordant pair is A's with
    probability 1/2, so with ``n = only_a + only_b`` and ``k = min(only_a, only_b)``::

        p = min(1, 2 * sum_{i=0..k} C(n, i) / 2**n)

    the exact conditional (binomial) form of McNemar's test (Q. McNemar, "Note on the sampling error of
    the difference between correlated proportions or percentages", Psychometrika 12(2), 1947; exact
    form as in M. W. Fagerland, S. Lydersen, P. Laake, BMC Medical Research Methodology 13:91, 2013).
    Computed in integers, so it is exact up to the final division. ``1.0`` when there is no discordant
    pair (nothing tells the models apart).

    Raises:
        ValueError: on negative or non-int counts.
    """
    a = _check_count("only_a", only_a)
    b = _check_count("only_b", only_b)
    n = a + b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a, b) + 1))
    return min(1.0, 2 * tail / 2**n)
