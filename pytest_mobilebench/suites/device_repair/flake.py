"""The device flake policy (pure): per-test attempts, and which passes came only on a retry.

The state runner retries an infrastructure outcome with the same candidate bytes (:mod:`.flow`); a crash,
a deadline or an instrumentation failure the candidate's code could cause is among them
(:data:`~.contract.CANDIDATE_REACHABLE`). A peer's lenient rule counts a target that passes on any attempt
(Android Bench: "passed on any of 3 attempts"). Here a resolved item whose decisive state (``candidate``;
``S_fix`` for a gold item) had an earlier attempt that ran the target without it passing, or that ended in a
candidate-reachable outcome, is **passed_flaky**: still ``resolved`` (the lenient figure counts it), but
reported apart, and the strict headline does not count it. An earlier attempt that failed before the
target ran for reasons no candidate reaches (the device went offline, the boot timed out) does not make a
pass flaky: that is the harness's retry, not the test's.

Shapes: :func:`attempts_per_test` gives ``{test id: [outcome per attempt]}`` (``TargetOutcome`` values, or
``"not_run"``), the target first, then the regression tests in name order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_mobilebench.metrics import wilson_interval
from pytest_mobilebench.suites.device_repair.contract import CANDIDATE_REACHABLE

__all__ = ["attempts_per_test", "decisive_state", "passed_flaky", "strict_and_lenient"]


def decisive_state(mode: str) -> str:
    """The state whose outcome decides the item: ``candidate``, or ``S_fix`` for a gold item."""
    return "S_fix" if mode == "gold" else "candidate"


def _of(attempts: Sequence[Mapping[str, Any]], state: str) -> list[Mapping[str, Any]]:
    return [a for a in attempts if a.get("state") == state]


def attempts_per_test(attempts: Sequence[Mapping[str, Any]], state: str, target: str) -> dict[str, list[str]]:
    """Each test's outcome in each attempt of ``state`` (the runner's ``attempt_log`` rows)."""
    rows = _of(attempts, state)
    names = sorted({name for a in rows for name in (a.get("regression") or {})})
    out = {target: [str(a.get("target") or "not_run") for a in rows]}
    for name in names:
        out.setdefault(name, [str((a.get("regression") or {}).get(name) or "not_run") for a in rows])
    return out


def passed_flaky(passed: bool, attempts: Sequence[Mapping[str, Any]], state: str) -> bool:
    """Whether a pass came only on a retry (see the module docstring)."""
    earlier = _of(attempts, state)[:-1]
    return passed and any(a.get("target") not in (None, "passed") or a.get("infra_kind") in CANDIDATE_REACHABLE
                          for a in earlier)  # fmt: skip


def strict_and_lenient(eligible: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(strict, lenient)`` rates over the eligible results: strict counts ``passed`` without
    ``passed_flaky``, lenient every ``passed``; each ``{"numerator", "denominator", "value", "ci95"}``
    (Wilson 95%)."""
    out = []
    for count in (sum(1 for r in eligible if r.get("passed") and not r.get("passed_flaky")),
                  sum(1 for r in eligible if r.get("passed"))):  # fmt: skip
        lo, hi = wilson_interval(count, len(eligible))
        out.append({"numerator": count, "denominator": len(eligible),
                    "value": round(count / len(eligible), 6) if eligible else None, "ci95": [lo, hi]})  # fmt: skip
    return out[0], out[1]
