"""What the app-generation suite shows the user: its options, markers and report columns.

Declared once here (imported at start-up, without the implementation); the plugin adds the options to the command line,
the markers to the ini and the columns to the html report (:class:`pytest_mobilebench.suites.base.Suite`).
"""

from __future__ import annotations

from typing import Final

from pytest_mobilebench.suites.base import Column, Headline, Option, SuiteSurface

__all__ = ["COLUMNS", "FIXTURES", "HEADLINE", "MARKERS", "OPTIONS", "SURFACE"]

OPTIONS: Final[tuple[Option, ...]] = (
    Option(
        ("--mb-price-table",), "mb_price_table", "app generation: JSON price table (USD per million tokens)", keyed=True
    ),
    Option(
        ("--mb-judge-base-url",),
        "mb_judge_base_url",
        "app generation: OpenAI-compatible judge endpoint",
        env="MOBILEBENCH_JUDGE_BASE_URL",
    ),
    Option(
        ("--mb-judge-model",),
        "mb_judge_model",
        "app generation: judge model name",
        env="MOBILEBENCH_JUDGE_MODEL",
        keyed=True,
    ),
    Option(("--mb-chromium",), "mb_chromium", "app generation: Chromium executable", default="/usr/bin/chromium"),
    Option(
        ("--mb-app-build",),
        "mb_app_build",
        "app generation: 'auto' uses a prediction's prebuilt_dist only with --mb-trust-candidates (else it "
        "builds from source, in a container); 'always' builds from source",
        default="auto",
        choices=("auto", "always"),
        keyed=True,
    ),
    Option(
        ("--mb-build-timeout",),
        "mb_build_timeout",
        "app generation: seconds for tsc and vite each",
        default=300.0,
        type=float,
    ),
)

MARKERS: Final[dict[str, str]] = {"app_generation": "app-generation instances (MobileForge)"}

COLUMNS: Final[tuple[Column, ...]] = (
    Column("Verdict", "reason"),
    Column("tsc errors", "tsc_errors"),
    Column("vite errors", "vite_errors"),
    Column("NavPassRate", "nav_pass_rate"),
)

#: the browser and the runtime source (whose runtime opens the build sandbox; the local runtime, trusted only,
#: builds on this host) each item requests; see pytest_mobilebench.fixtures
FIXTURES: Final[tuple[str, ...]] = ("mb_browser", "mb_runtime", "mb_agent")

#: the headline: navigation specs passed / specs run (pooled over apps), Wilson 95% interval; not items
HEADLINE: Final = Headline("NavPassRate", kind="rate")

SURFACE: Final = SuiteSurface(
    name="app_generation",
    module="pytest_mobilebench.suites.app_generation",
    plots="pytest_mobilebench.suites.app_generation.plots",
    options=OPTIONS,
    markers=MARKERS,
    columns=COLUMNS,
    fixtures=FIXTURES,
    headline=HEADLINE,
)
