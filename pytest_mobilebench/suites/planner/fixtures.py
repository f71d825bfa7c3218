"""The planner suite's pytest fixtures (registered by the plugin; a ``conftest.py`` overrides one by name)."""

from __future__ import annotations

import os

import pytest

from pytest_mobilebench.suites.planner.agent import AgentEndpoint

__all__ = ["planner_agent"]


@pytest.fixture
def planner_agent(request: pytest.FixtureRequest) -> AgentEndpoint | None:
    """The live agent endpoint from ``--mb-agent-base-url`` / ``--mb-agent-model`` (key from the environment
    variable ``MOBILEBENCH_AGENT_API_KEY``), or None without a base URL; the suite asks for it only for
    ``--predictions=live`` items.

    Raises:
        pytest.UsageError: a base URL without a model name.
    """
    url = request.config.getoption("mb_agent_base_url", None)
    if not url:
        return None
    model = request.config.getoption("mb_agent_model", None)
    if not model:
        raise pytest.UsageError("--mb-agent-base-url needs --mb-agent-model (or MOBILEBENCH_AGENT_MODEL)")
    timeout = float(request.config.getoption("mb_agent_timeout", None) or 120.0)
    return AgentEndpoint(url, model, os.environ.get("MOBILEBENCH_AGENT_API_KEY", ""), timeout)
