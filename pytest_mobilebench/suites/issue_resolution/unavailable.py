"""The ``environment_unavailable`` verdict of an issue-resolution item (issue 30, item 3). Pure.

An instance whose dependencies this machine cannot fetch
(:class:`pytest_mobilebench.runtime.base.EnvironmentUnavailable`: a package or version the registry lacks, a host
outside the registries) is judged for neither the candidate nor the harness: ``passed`` False, ``retryable`` False (not
infra: retrying cannot help), left out of every rate's denominator and counted apart
(:mod:`pytest_mobilebench.suites.issue_resolution.rates`, :mod:`pytest_mobilebench.report.headline`), naming what is
missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_mobilebench.runtime.base import EnvironmentUnavailable
from pytest_mobilebench.states import Reason

__all__ = ["unavailable_result"]


def unavailable_result(base: Mapping[str, Any], exc: EnvironmentUnavailable) -> dict[str, Any]:
    """The item's result: ``base`` plus ``reason`` ``environment_unavailable``, ``detail`` (the cause, what is
    missing and the install log's lines), ``properties.environment_unavailable`` = ``"<cause>: <subject>"`` (a flat
    string, as every item property is: ``ItemResult.from_suite``), e.g. ``"package_missing: left-pad@9.9.9"``."""
    return {
        **base,
        "reason": Reason.ENVIRONMENT_UNAVAILABLE.value,
        "passed": False,
        "retryable": False,
        "detail": exc.message,
        "properties": {"environment_unavailable": f"{exc.cause}: {exc.subject}"},
    }
