"""The test helper's subnet claim: two holders at once never get the same 10.213.<n> block (the CI failure of
two xdist workers both putting 10.213.7.1/30 on a veth), and a released block is free again."""

from __future__ import annotations

from netns_daemons import _claim_subnet


def test_two_claims_at_once_get_different_subnets_and_a_released_one_is_reused() -> None:
    with _claim_subnet() as first, _claim_subnet() as second:
        assert first != second
        assert first.startswith("10.213.") and second.startswith("10.213.")
    with _claim_subnet() as again:
        assert again == first
