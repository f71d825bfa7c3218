"""Live mode: drive a model through an OpenAI-compatible ``/chat/completions`` endpoint with tools, inside one
episode, and record the trajectory it produced (graded afterwards by replay, like any offline prediction).

Protocol per request: ``{"model", "messages", "tools": the current action space, "tool_choice": "auto"}``, sent
by the shared client :func:`pytest_mobilebench.agents.endpoint.chat`. Each returned tool call is one step
(executed in order; the feedback goes back as a ``tool`` message). An answer without tool calls ends the episode
as ``Finish(answer=<its text>)``. The loop stops at ``Finish`` or the step limit. Endpoint failures (connection
refused, timeout, HTTP 5xx / 429 after the client's retries with backoff, another HTTP error at once, a body that
is not a chat completion) raise :class:`AgentInfraError`: an infrastructure outcome, retried on the next run,
never the model's score.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_mobilebench.agents.endpoint import AgentInfraError, Endpoint, chat
from pytest_mobilebench.suites.planner.episode import Call, Episode
from pytest_mobilebench.suites.planner.model import Task, new_episode

__all__ = ["SYSTEM_PROMPT", "AgentEndpoint", "AgentInfraError", "run_live"]

SYSTEM_PROMPT = (
    "You are a mobile planner agent operating the user's phone through tools. Use only the tools you are given; "
    "load a skill to get its tools; search the user's memory when the request depends on personal facts; "
    "delegate to a sub-agent when no tool can do a step; ask the user when the request is ambiguous. "
    "Tool results are JSON; errors explain how to recover. Call Finish with a short answer when done. "
    "You have at most 15 tool calls."
)

#: the planner's endpoint is the shared one (``--mb-agent-*`` options; key from ``MOBILEBENCH_AGENT_API_KEY``)
AgentEndpoint = Endpoint


def _history_messages(history: list[str]) -> list[dict[str, str]]:
    out = []
    for turn in history:
        role, _, text = turn.partition(":")
        out.append({"role": "assistant" if role.strip() == "assistant" else "user", "content": text.strip()})
    return out


def run_live(task: Task, endpoint: AgentEndpoint) -> tuple[list[Call], dict[str, int], list[dict[str, Any]], Episode]:
    """One live episode of ``task``.

    Returns:
        ``(calls, usage, transcript, episode)``: the recorded calls in order, ``{"input_tokens",
        "output_tokens", "requests"}`` summed over requests (the endpoint's ``usage`` block), every message
        exchanged, and the live episode (its state should equal a replay of ``calls``).

    Raises:
        AgentInfraError: the endpoint failed.
    """
    episode = new_episode(task)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        *_history_messages(task.history),
        {"role": "user", "content": task.query},
    ]
    calls: list[Call] = []
    usage = {"input_tokens": 0, "output_tokens": 0, "requests": 0}
    while not episode.done:
        completion = chat(endpoint, messages, episode.tool_schemas())
        usage["requests"] += 1
        usage["input_tokens"] += completion.tokens_in
        usage["output_tokens"] += completion.tokens_out
        message = completion.message
        tool_calls = message.get("tool_calls") or []
        messages.append(
            {
                "role": "assistant",
                "content": message.get("content"),
                **({"tool_calls": tool_calls} if tool_calls else {}),
            }
        )
        if not tool_calls:
            call = Call("Finish", {"answer": str(message.get("content") or "")})
            calls.append(call)
            episode.call(call.tool, call.arguments)
            break
        for tc in tool_calls:
            tc = tc if isinstance(tc, dict) else {}
            fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
            call = Call(str(fn.get("name", "")), fn.get("arguments", "{}"))
            feedback = episode.call(call.tool, call.arguments)
            if feedback is None:
                break
            calls.append(call)
            messages.append({"role": "tool", "tool_call_id": tc.get("id", ""), "content": json.dumps(feedback)})
    return calls, usage, messages, episode
