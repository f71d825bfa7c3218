"""What the planner suite shows the user at start-up: its options, its own marker, report columns and fixtures.

The implementation (:mod:`pytest_mobilebench.suites.planner`) adds the markers of its capability dimensions,
buckets and domains, declared when it is imported (:class:`pytest_mobilebench.suites.base.SuiteSurface`).
"""

from __future__ import annotations

from typing import Final

from pytest_mobilebench.suites.base import Column, Option, SuiteSurface

__all__ = ["COLUMNS", "FIXTURES", "MARKERS", "OPTIONS", "SURFACE", "trial_count"]


def trial_count(text: str) -> int:
    """``--mb-trials`` value: an int >= 1.

    Raises:
        ValueError: anything else (argparse reports it as a usage error).
    """
    value = int(text)
    if value < 1:
        raise ValueError(f"--mb-trials needs K >= 1, got {value}")
    return value


OPTIONS: Final[tuple[Option, ...]] = (
    Option(("--mb-agent-base-url",), "mb_agent_base_url", "planner live mode (--predictions=live): "
           "OpenAI-compatible endpoint (…/v1); the key comes from MOBILEBENCH_AGENT_API_KEY",
           env="MOBILEBENCH_AGENT_BASE_URL", keyed=True),  # another endpoint never serves this one's verdicts
    Option(("--mb-agent-model",), "mb_agent_model", "planner live mode (--predictions=live): the model name "
           "(the items' model name)", env="MOBILEBENCH_AGENT_MODEL", keyed=True),
    Option(("--mb-agent-timeout",), "mb_agent_timeout", "planner live mode: seconds per request",
           default=120.0, type=float),
    Option(("--mb-trials", "--mb-repeat"), "mb_trials", "planner: trials per task for pass@1 / pass^k (live: K "
           "episodes on fresh sandboxes; recorded: the prediction's 'trajectories' must hold K; default: live 1, "
           "recorded as many as the prediction holds)", default=None, type=trial_count, keyed=True),
)

MARKERS: Final[dict[str, str]] = {"planner": "planner suite: MobilePA-Bench-style stateful sandbox tasks"}

COLUMNS: Final[tuple[Column, ...]] = (Column("Score", "score"), Column("Bucket", "bucket"), Column("Steps", "steps"),
                                      Column("Errors met/recovered", "errors"))

#: the agent endpoint each item requests (:mod:`pytest_mobilebench.suites.planner.fixtures`)
FIXTURES: Final[tuple[str, ...]] = ("planner_agent",)

SURFACE: Final = SuiteSurface(
    name="planner", module="pytest_mobilebench.suites.planner", options=OPTIONS, markers=MARKERS, columns=COLUMNS,
    fixtures=FIXTURES, fixture_module="pytest_mobilebench.suites.planner.fixtures",
)
