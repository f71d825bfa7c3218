"""The planner suite's pytest fixtures (registered by the plugin; a ``conftest.py`` overrides one by name)."""

from __future__ import annotations

import pytest

from pytest_mobilebench.agents.endpoint import Endpoint

__all__ = ["planner_agent"]


@pytest.fixture
def planner_agent(request: pytest.FixtureRequest) -> Endpoint | None:
    """The live agent endpoint of the shared options (:func:`pytest_mobilebench.agents.options.endpoint_of`:
    ``--mb-agent-base-url`` / ``--mb-agent-model`` / ``--mb-agent-timeout`` / ``--mb-agent-retries``, key from
    ``MOBILEBENCH_AGENT_API_KEY``), or None without a base URL; the suite asks for it only for
    ``--predictions=live`` items.

    Raises:
        pytest.UsageError: a base URL without a model name.
    """
    from pytest_mobilebench.agents.options import AGENT_OPTIONS, endpoint_of

    options = {o.dest: request.config.getoption(o.dest, None) for o in AGENT_OPTIONS}
    if not options["mb_agent_base_url"]:
        return None
    try:
        return endpoint_of(options)
    except ValueError as exc:
        raise pytest.UsageError(
            f"--mb-agent-base-url needs --mb-agent-model (or MOBILEBENCH_AGENT_MODEL) ({exc})"
        ) from None
