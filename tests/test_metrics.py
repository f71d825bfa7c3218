"""Hand-computed checks of pytest_mobilebench.metrics."""

from __future__ import annotations

import enum
import json
import math

import pytest

from pytest_mobilebench.metrics import (
    CHANGED_LINES_BINS,
    FILE_COUNT_BINS,
    borda_scores,
    changed_lines_bin,
    file_count_bin,
    fleiss_kappa,
    hit_at_k,
    mean,
    pass_at_1,
    rate,
    recall_at_k,
    stratify,
    wilson_interval,
)

# --------------------------------------------------------------------------------------------- Wilson


def test_wilson_7_of_10_by_hand() -> None:
    # p = 0.7, z^2 = 3.8416, denom = 1 + 3.8416/10 = 1.38416
    # centre = (0.7 + 3.8416/20) / 1.38416 = 0.89208 / 1.38416 = 0.644492...
    # half   = 1.96 / 1.38416 * sqrt(0.7*0.3/10 + 3.8416/400) = 1.416021 * 0.174940 = 0.247719...
    lo, hi = wilson_interval(7, 10)
    assert lo == pytest.approx(0.644492 - 0.247719, abs=1e-5)
    assert hi == pytest.approx(0.644492 + 0.247719, abs=1e-5)
    assert (round(lo, 4), round(hi, 4)) == (0.3968, 0.8922)


def test_wilson_boundaries_are_exact() -> None:
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0
    # upper for 0/10: centre = half = (z^2/20)/1.38416 -> 2 * 0.19208 / 1.38416 = 0.277540...
    assert hi == pytest.approx(2 * 0.19208 / 1.38416, abs=1e-6)
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0
    assert lo == pytest.approx(1 - 2 * 0.19208 / 1.38416, abs=1e-6)


def test_wilson_no_trials_is_whole_range() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_wider_z_is_wider() -> None:
    lo95, hi95 = wilson_interval(30, 64)
    lo99, hi99 = wilson_interval(30, 64, z=2.576)
    assert lo99 < lo95 < 30 / 64 < hi95 < hi99


@pytest.mark.parametrize(
    ("k", "n", "z"),
    [(-1, 10, 1.96), (11, 10, 1.96), (1, -2, 1.96), (1, 10, 0.0), (1, 10, float("nan")), (True, 10, 1.96)],
)
def test_wilson_rejects_bad_input(k: int, n: int, z: float) -> None:
    with pytest.raises(ValueError):
        wilson_interval(k, n, z)


# --------------------------------------------------------------------------------------------- Borda


def test_borda_by_hand() -> None:
    rankings = [
        ["A", "B", "C"],  # A 2, B 1, C 0 (max 2 each)
        ["B", "A", "C"],  # B 2, A 1, C 0
        ["A", "C"],  # A 1, C 0 (max 1 each)
    ]
    # A: (2+1+1)/(2+2+1) = 4/5; B: (1+2)/(2+2) = 3/4; C: 0/5
    assert borda_scores(rankings) == {"A": 0.8, "B": 0.75, "C": 0.0}


def test_borda_excludes_anchor_before_scoring() -> None:
    rankings = [["ref", "m1", "m2", "m3"], ["ref", "m2", "m1", "m3"]]
    # without ref: [m1, m2, m3] -> 2,1,0 and [m2, m1, m3] -> 2,1,0; max 2 per ranking
    assert borda_scores(rankings, exclude={"ref"}) == {"m1": 0.75, "m2": 0.75, "m3": 0.0}
    # with the anchor kept, the anchor takes the top and nobody else can reach 1.0
    kept = borda_scores(rankings)
    assert kept["ref"] == 1.0
    assert kept["m1"] == pytest.approx((2 + 1) / 6)


def test_borda_single_item_rankings_carry_nothing() -> None:
    assert borda_scores([["ref", "m1"]], exclude={"ref"}) == {}
    assert borda_scores([]) == {}
    assert borda_scores([["x", "y"], ["z"]]) == {"x": 1.0, "y": 0.0}


def test_borda_rejects_duplicates_and_strings() -> None:
    with pytest.raises(ValueError, match="ranking #1 names item 'a' more than once"):
        borda_scores([["a", "b"], ["a", "a"]])
    with pytest.raises(ValueError, match="ranking #0 is a string"):
        borda_scores(["abc"])


# --------------------------------------------------------------------------------------------- rates


def test_rate_and_pass_at_1() -> None:
    assert rate(3, 4) == 0.75
    assert rate(0, 0) == 0.0
    assert pass_at_1(37, 200) == 0.185
    assert pass_at_1(0, 0) == 0.0
    with pytest.raises(ValueError, match=r"resolved \(5\) cannot exceed eligible \(4\)"):
        pass_at_1(5, 4)
    with pytest.raises(ValueError):
        rate(-1, 3)
    with pytest.raises(ValueError):
        rate(1.0, 3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------- Fleiss

# 10 subjects, 14 raters, 5 categories (the textbook example used to explain Fleiss' kappa).
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_textbook_example_by_hand() -> None:
    # m(m-1) = 182. sum_c n(n-1) per row: 182, 46, 56, 80, 60, 84, 44, 32, 52, 52 -> total 688
    # P_bar = 688 / (10 * 182) = 172/455 = 0.378022
    # column totals 20, 28, 39, 21, 32 of 140 -> p = 1/7, 1/5, 39/140, 3/20, 8/35
    # P_e = sum p^2 = 417/1960 = 0.212755
    # kappa = (172/455 - 417/1960) / (1 - 417/1960) = 4211/20059 = 0.209931
    assert fleiss_kappa(FLEISS_TABLE) == pytest.approx(4211 / 20059, abs=1e-12)
    assert round(fleiss_kappa(FLEISS_TABLE), 3) == 0.210


def test_fleiss_pass_fail_five_systems() -> None:
    # columns (pass, fail), m = 5 systems, m(m-1) = 20
    table = [[5, 0], [4, 1], [0, 5], [2, 3]]
    # P_i = 20/20, 12/20, 20/20, 8/20 -> P_bar = 60/80 = 3/4
    # p = 11/20, 9/20 -> P_e = (121 + 81)/400 = 101/200
    # kappa = (3/4 - 101/200) / (99/200) = (49/200) / (99/200) = 49/99
    assert fleiss_kappa(table) == pytest.approx(49 / 99, abs=1e-12)


def test_fleiss_perfect_and_chance_level() -> None:
    assert fleiss_kappa([[3, 0], [0, 3]]) == pytest.approx(1.0)
    # each subject split 1/1 with 2 raters: P_i = 0, P_e = 1/2 -> kappa = -1
    assert fleiss_kappa([[1, 1], [1, 1]]) == pytest.approx(-1.0)


def test_fleiss_degenerate_single_category_is_one() -> None:
    # every system passes every task: P_e = 1 and P_bar = 1 -> documented convention 1.0
    assert fleiss_kappa([[5, 0], [5, 0], [5, 0]]) == 1.0
    assert fleiss_kappa([[4], [4]]) == 1.0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ([], "empty table"),
        ([[]], "row #0 is empty"),
        ([[2, 1], [2]], "row #1 has 1 categories"),
        ([[2, 1], [1, 1]], "row #1 sums to 2 raters"),
        ([[1, 0], [0, 1]], "m >= 2"),
        ([[3, -1], [1, 1]], r"table\[0\]\[1\] must be >= 0"),
    ],
)
def test_fleiss_rejects_bad_tables(table: list[list[int]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fleiss_kappa(table)


# --------------------------------------------------------------------------------------------- Hit@k


def test_hit_and_recall_at_k() -> None:
    ranked = ["a.kt", "b.kt", "c.kt", "d.kt"]
    gold = {"c.kt", "e.kt"}
    assert [hit_at_k(ranked, gold, k) for k in (1, 2, 3, 10)] == [0, 0, 1, 1]
    assert recall_at_k(ranked, gold, 2) == 0.0
    assert recall_at_k(ranked, gold, 3) == 0.5
    assert recall_at_k(ranked + ["e.kt"], gold, 5) == 1.0
    assert recall_at_k(["c.kt", "c.kt", "e.kt"], gold, 2) == 0.5  # duplicates take a slot, count once
    assert hit_at_k([], gold, 1) == 0


def test_hit_at_k_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        hit_at_k(["a"], {"a"}, 0)
    with pytest.raises(ValueError, match="gold file set F is empty"):
        recall_at_k(["a"], set(), 1)
    with pytest.raises(ValueError, match="ranked is a string"):
        hit_at_k("a.kt", {"a.kt"}, 1)
    with pytest.raises(ValueError, match="gold is a string"):
        recall_at_k(["a.kt"], "a.kt", 1)


# --------------------------------------------------------------------------------------------- bins


@pytest.mark.parametrize(
    ("n", "label"),
    [(1, "1"), (2, "2-3"), (3, "2-3"), (4, "4-5"), (5, "4-5"), (6, "6-10"), (10, "6-10"), (11, "11+"), (400, "11+")],
)
def test_file_count_bin(n: int, label: str) -> None:
    assert file_count_bin(n) == label
    assert label in FILE_COUNT_BINS


@pytest.mark.parametrize(
    ("n", "label"),
    [
        (0, "<=10"),
        (10, "<=10"),
        (11, "11-50"),
        (50, "11-50"),
        (51, "51-100"),
        (100, "51-100"),
        (101, "101-500"),
        (500, "101-500"),
        (501, ">500"),
    ],
)
def test_changed_lines_bin(n: int, label: str) -> None:
    assert changed_lines_bin(n) == label
    assert label in CHANGED_LINES_BINS


def test_bins_reject_bad_counts() -> None:
    with pytest.raises(ValueError, match="at least one file"):
        file_count_bin(0)
    with pytest.raises(ValueError):
        changed_lines_bin(-1)
    with pytest.raises(ValueError):
        changed_lines_bin(2.5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------- stratify


class _Framework(str, enum.Enum):
    ANDROID = "android"
    FLUTTER = "flutter"


def test_stratify_by_field_and_callable() -> None:
    rows = [
        {"repo": "a/x", "framework": _Framework.ANDROID, "files": 1, "resolved": True},
        {"repo": "a/x", "framework": _Framework.ANDROID, "files": 4, "resolved": False},
        {"repo": "b/y", "framework": _Framework.FLUTTER, "files": 2, "resolved": True},
        {"repo": "a/x", "framework": _Framework.ANDROID, "files": 12, "resolved": True},
    ]
    by_repo = stratify(rows, "repo")
    assert by_repo == {
        "a/x": {"total": 3, "resolved": 2, "rate": 2 / 3},
        "b/y": {"total": 1, "resolved": 1, "rate": 1.0},
    }
    assert list(stratify(rows, "framework")) == ["android", "flutter"]
    by_files = stratify(rows, lambda r: file_count_bin(r["files"]))
    assert by_files == {
        "1": {"total": 1, "resolved": 1, "rate": 1.0},
        "11+": {"total": 1, "resolved": 1, "rate": 1.0},
        "2-3": {"total": 1, "resolved": 1, "rate": 1.0},
        "4-5": {"total": 1, "resolved": 0, "rate": 0.0},
    }
    by_custom_success = stratify(rows, "repo", success=lambda r: r["files"] > 3)
    assert by_custom_success["a/x"]["resolved"] == 2
    json.dumps(by_repo)  # plain builtins


def test_stratify_errors_name_the_row() -> None:
    with pytest.raises(ValueError, match="row #1 has no field 'repo'"):
        stratify([{"repo": "a", "resolved": True}, {"resolved": False}], "repo")
    with pytest.raises(ValueError, match="row #0: success value must be a bool"):
        stratify([{"repo": "a", "resolved": "yes"}], "repo")
    with pytest.raises(ValueError, match="row #0 has no success field 'ok'"):
        stratify([{"repo": "a"}], "repo", success="ok")
    assert stratify([], "repo") == {}


# --------------------------------------------------------------------------------------------- mean


def test_mean() -> None:
    assert mean([1.0, 0.0, 0.5]) == 0.5
    assert mean(x for x in (1, 2)) == 1.5
    assert mean([]) == 0.0
    with pytest.raises(ValueError, match="value #1"):
        mean([1.0, math.nan])
    with pytest.raises(ValueError):
        mean([True])
