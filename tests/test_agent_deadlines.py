"""Every limit of a live agent is a deadline on the whole operation, and the endpoint's lost time is not the agent's.

A scripted loopback endpoint that trickles (headers at once, then one byte at a time), stalls before its headers
or never accepts: each attempt ends at its connect, first-byte or reply deadline (``agent_endpoint_timeout``,
retried), the agent's wall time cuts a call in flight (``agent_timeout``), and failed attempts with their retry
waits are recorded as ``endpoint_lost_seconds`` and not charged to the wall-time limit.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_shell import LocalShell
from scripted_openai import ScriptedOpenAI, bash, scripted_openai, submit, text, trickled  # noqa: F401
from test_agent_loop import _prompt, repo  # noqa: F401 (fixture)

from pytest_mobilebench.agents import options as agent_options
from pytest_mobilebench.http_deadlines import Deadlines
from pytest_mobilebench.agents.endpoint import AgentInfraError, CapReached, Endpoint, chat
from pytest_mobilebench.agents.limits import Limits
from pytest_mobilebench.agents.loop import AgentEnd, run_shell_agent
from pytest_mobilebench.agents.trajectory import read_trajectory
from pytest_mobilebench.states import InfraKind

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def full_backlog() -> Iterator[str]:
    """A URL whose listener never accepts and whose accept queue is full: a new connection is never made."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = []
        try:
            for _ in range(4):  # fill the queue (Linux keeps backlog + 1); later SYNs are dropped
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", port))
                fillers.append(s)
            time.sleep(0.2)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            for s in fillers:
                s.close()


def test_a_trickled_reply_ends_at_the_reply_deadline(scripted_openai: ScriptedOpenAI) -> None:
    """Headers at once, then a byte every 0.3 s: a per-read timeout never fires; the reply deadline does."""
    scripted_openai.push(trickled(text("x" * 200), 0.3), trickled(text("y" * 200), 0.3))
    start = time.monotonic()
    with pytest.raises(AgentInfraError) as info:
        chat(scripted_openai.endpoint(timeout_s=1.0, retries=1), MESSAGES, sleep=lambda s: None)
    took = time.monotonic() - start
    assert info.value.kind == InfraKind.AGENT_ENDPOINT_TIMEOUT and len(info.value.attempts) == 2
    assert "the reply not complete within the reply deadline (1.0 s;" in str(info.value)
    assert all(0.9 <= a.seconds <= 1.6 for a in info.value.attempts) and took < 3.5


def test_the_first_byte_deadline_is_its_own(scripted_openai: ScriptedOpenAI) -> None:
    late = text("late")
    late.delay_s = 3.0
    scripted_openai.push(late)
    start = time.monotonic()
    with pytest.raises(AgentInfraError) as info:
        chat(scripted_openai.endpoint(timeout_s=30.0, retries=0, first_byte_timeout_s=0.5), MESSAGES)
    assert time.monotonic() - start < 2.0
    assert "no first byte of the reply within the first_byte deadline (0.5 s; 0 bytes" in str(info.value)
    assert info.value.kind == InfraKind.AGENT_ENDPOINT_TIMEOUT


def test_a_connection_never_accepted_ends_at_the_connect_deadline(full_backlog: str) -> None:
    start = time.monotonic()
    with pytest.raises(AgentInfraError) as info:
        chat(Endpoint(full_backlog, "m", timeout_s=30.0, retries=0, connect_timeout_s=0.5), MESSAGES)
    assert time.monotonic() - start < 2.5
    assert info.value.kind == InfraKind.AGENT_ENDPOINT_TIMEOUT and "no connection within the connect deadline" in str(
        info.value
    )


def test_a_healthy_reply_is_not_cut(scripted_openai: ScriptedOpenAI) -> None:
    """A reply trickled inside its deadlines arrives whole."""
    scripted_openai.push(trickled(text("ok"), 0.005))
    done = chat(scripted_openai.endpoint(timeout_s=10.0, first_byte_timeout_s=2.0, retries=0), MESSAGES)
    assert done.message["content"] == "ok" and done.attempts == ()


def test_the_callers_cap_cuts_an_attempt_in_flight(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(trickled(text("z" * 200), 0.2))
    start = time.monotonic()
    with pytest.raises(CapReached) as info:
        chat(scripted_openai.endpoint(timeout_s=30.0, retries=3), MESSAGES, cap=lambda: 0.6)
    assert 0.5 <= info.value.seconds <= 1.2 and time.monotonic() - start < 2.0
    assert len(scripted_openai.requests) == 1  # the caller's cut is not retried


def test_deadline_options_reach_the_endpoint_and_are_checked() -> None:
    endpoint = agent_options.endpoint_of(
        {
            "mb_agent_base_url": "http://h/v1",
            "mb_agent_model": "m",
            "mb_agent_timeout": 50.0,
            "mb_agent_connect_timeout": 4.0,
            "mb_agent_first_byte_timeout": 20.0,
        }
    )
    assert endpoint.deadlines == Deadlines(connect_s=4.0, first_byte_s=20.0, reply_s=50.0)
    with pytest.raises(ValueError, match="first_byte_s must be a positive number"):
        Deadlines(first_byte_s=0.0)


# ------------------------------------------------------------------------------------------------ the agent


def _agent(server: ScriptedOpenAI, repo: Path, limits: Limits, **endpoint):
    path = repo.parent / "trajectory.jsonl"
    outcome = run_shell_agent(
        server.endpoint(backoff_s=0.01, **endpoint), limits, _prompt(repo), LocalShell(repo), path
    )
    return outcome, read_trajectory(path)


def test_the_wall_time_cuts_a_trickled_call(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    """The endpoint's deadline is far; the agent's wall time (1 s) ends the call in flight, not 5x later."""
    scripted_openai.push(trickled(bash("echo late " + "x" * 300), 0.2))
    start = time.monotonic()
    outcome, lines = _agent(scripted_openai, repo, Limits(max_steps=5, wall_s=1.0), timeout_s=60.0)
    assert time.monotonic() - start < 2.5
    assert outcome.end is AgentEnd.TIMEOUT and outcome.usage.calls == 0
    assert [line["event"] for line in lines if line["role"] == "harness"][-2:] == ["call_cut", "end"]


def test_stalled_attempts_that_recover_are_not_charged_to_the_agent(
    scripted_openai: ScriptedOpenAI, repo: Path
) -> None:
    """Two attempts stall past the 0.6 s reply deadline (1.2 s lost, over the 1 s wall time); the retry answers
    and the agent finishes its work: the lost time is the endpoint's, shown beside the agent's own."""
    stalled = text("never sent")
    stalled.delay_s = 2.0
    scripted_openai.push(stalled, stalled, bash("sed -i 's/Helo/Hello/' app/Greeter.kt"), submit("fixed"))
    outcome, lines = _agent(scripted_openai, repo, Limits(max_steps=5, wall_s=1.0), timeout_s=0.6, retries=3)
    assert outcome.end is AgentEnd.SUBMITTED, lines[-3:]
    assert "Hello" in (repo / "app" / "Greeter.kt").read_text()
    u = outcome.usage
    assert u.endpoint_failed_attempts == 2 and u.endpoint_lost_seconds >= 1.2
    end = lines[-1]
    assert end["event"] == "end" and end["endpoint_lost_seconds"] >= 1.2
    assert end["agent_seconds"] == pytest.approx(end["seconds"] - end["endpoint_lost_seconds"], abs=0.01)
    assert end["agent_seconds"] < 1.0 < end["seconds"]
    retries = [line for line in lines if line.get("event") == "retry"]
    assert [r["kind"] for r in retries] == ["agent_endpoint_timeout"] * 2


def test_an_endpoint_late_on_every_attempt_is_infrastructure(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.final = trickled(text("w" * 200), 0.2)
    start = time.monotonic()
    with pytest.raises(AgentInfraError) as info:
        _agent(scripted_openai, repo, Limits(max_steps=5, wall_s=2.0), timeout_s=0.5, retries=2)
    assert info.value.kind == InfraKind.AGENT_ENDPOINT_TIMEOUT and len(info.value.attempts) == 3
    assert time.monotonic() - start < 4.0


# ------------------------------------------------------------------------------------------------ a user's program


def test_the_forwarder_cuts_a_trickled_answer_and_counts_the_lost_time(scripted_openai: ScriptedOpenAI) -> None:
    """A user's program's requests go through the forwarder: a reply trickled past the deadline is a failed
    attempt (``agent_endpoint_timeout``), retried; its seconds and the wait are the endpoint's."""
    from test_live_issue_resolution_units import _post

    from pytest_mobilebench.runtime.egress import ModelForwarder

    scripted_openai.push(trickled(text("x" * 200), 0.2), text("ok"))
    start = time.monotonic()
    with ModelForwarder(scripted_openai.url, retries=1, timeout_s=0.6) as fwd:
        assert _post(fwd, "/v1/chat/completions") == 200
    assert time.monotonic() - start < 3.0 and fwd.failures == []
    u = fwd.usage
    assert (u.failed_attempts, u.lost_kind) == (1, "agent_endpoint_timeout") and 0.6 + 0.5 <= u.lost_seconds < 2.0
    scripted_openai.final = trickled(text("y" * 200), 0.2)
    with ModelForwarder(scripted_openai.url, retries=0, timeout_s=0.5) as late:
        assert _post(late, "/v1/chat/completions") == 502
    assert [kind for kind, _ in late.failures] == ["agent_endpoint_timeout"]


def test_a_program_out_of_time_after_the_endpoint_lost_it_time_is_infrastructure() -> None:
    from types import SimpleNamespace

    from pytest_mobilebench.runtime.base import InfraError
    from pytest_mobilebench.runtime.egress import ForwarderUsage
    from pytest_mobilebench.suites.issue_resolution.live_command import _endpoint_failed

    timed_out, finished = SimpleNamespace(timed_out=True), SimpleNamespace(timed_out=False)
    lost = SimpleNamespace(
        failures=[], usage=ForwarderUsage(lost_seconds=30.0, failed_attempts=1, lost_kind="agent_endpoint_timeout")
    )
    with pytest.raises(InfraError) as info:
        _endpoint_failed(lost, timed_out, "http://h/v1")  # type: ignore[arg-type]
    assert info.value.kind == "agent_endpoint_timeout" and "lost 30.0 s to 1 failed attempt" in str(info.value)
    _endpoint_failed(lost, finished, "http://h/v1")  # type: ignore[arg-type]  # it finished: its own outcome
    clean = SimpleNamespace(failures=[], usage=ForwarderUsage())
    _endpoint_failed(clean, timed_out, "http://h/v1")  # type: ignore[arg-type]  # its own time-out
