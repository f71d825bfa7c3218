"""What the planner suite shows the user at start-up: its options, its own marker, report columns and fixtures.

The implementation (:mod:`pytest_mobilebench.suites.planner`) adds the markers of its capability dimensions,
buckets and domains, declared when it is imported (:class:`pytest_mobilebench.suites.base.SuiteSurface`).
"""

from __future__ import annotations

from typing import Final

from pytest_mobilebench.agents.options import AGENT_FIXTURE
from pytest_mobilebench.suites.base import Column, Headline, Option, SuiteSurface

__all__ = ["COLUMNS", "FIXTURES", "HEADLINE", "MARKERS", "OPTIONS", "SURFACE"]


#: the live options are the shared ones (``--mb-agent-*``, ``--mb-trials``: :mod:`pytest_mobilebench.agents.options`)
OPTIONS: Final[tuple[Option, ...]] = ()

MARKERS: Final[dict[str, str]] = {"planner": "planner suite: MobilePA-Bench-style stateful sandbox tasks"}

COLUMNS: Final[tuple[Column, ...]] = (
    Column("Score", "score"),
    Column("Bucket", "bucket"),
    Column("Steps", "steps"),
    Column("Errors met/recovered", "errors"),
)

#: the agent endpoint each item requests (:mod:`pytest_mobilebench.suites.planner.fixtures`); ``mb_agent`` names
#: this suite as an agent driver: the shared agent options key its results
FIXTURES: Final[tuple[str, ...]] = ("planner_agent", AGENT_FIXTURE)

#: the headline: the weighted Overall (MobilePA-Bench 50/10/20/20), a score: no interval, n/a on a subset
HEADLINE: Final = Headline("Overall", kind="score")

SURFACE: Final = SuiteSurface(
    name="planner",
    module="pytest_mobilebench.suites.planner",
    plots="pytest_mobilebench.suites.planner.plots",
    options=OPTIONS,
    markers=MARKERS,
    columns=COLUMNS,
    fixtures=FIXTURES,
    fixture_module="pytest_mobilebench.suites.planner.fixtures",
    headline=HEADLINE,
)
