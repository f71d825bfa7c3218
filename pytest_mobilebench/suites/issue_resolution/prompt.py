"""What a live issue-resolution agent is told: the prompt rendered for an instance, and the model name a user's
program goes by. Read by the built-in agent (:mod:`.live`) and the user's program (:mod:`.live_command`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.runtime.agent_sandbox import AgentSandbox

if TYPE_CHECKING:
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

__all__ = ["COMMAND_MODEL", "render_prompt"]

#: the model name of a user's program given no ``--mb-agent-model``
COMMAND_MODEL: Final = "agent-command"


def render_prompt(options: Mapping[str, Any], instance: IssueInstance) -> Any:
    """The prompt of ``--mb-agent-prompt`` (default: the package's template) for ``instance``."""
    from pytest_mobilebench.agents.prompt import load_template

    return load_template(options.get("mb_agent_prompt")).render(
        {
            "problem_statement": instance.problem_statement,
            "repo": instance.repo,
            "base_commit": instance.base_commit,
            "framework": instance.framework,
            "workdir": AgentSandbox.workdir,
        }
    )
