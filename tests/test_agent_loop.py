"""The built-in shell agent against a scripted OpenAI-compatible server, its commands in a LocalShell over a temp
git repository: submitting, the limits, endpoint retries, untrusted model output, and the trajectory as evidence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from local_shell import LocalShell
from scripted_openai import ScriptedOpenAI, bash, calls, error, raw, scripted_openai, submit, text  # noqa: F401

from pytest_mobilebench.agents.endpoint import AgentInfraError
from pytest_mobilebench.agents.limits import Limits, Price
from pytest_mobilebench.agents.loop import FORMAT_REMINDER, AgentEnd, run_shell_agent
from pytest_mobilebench.agents.prompt import load_template
from pytest_mobilebench.agents.shell import ShellResult
from pytest_mobilebench.agents.trajectory import read_trajectory
from pytest_mobilebench.states import InfraKind

GIT = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one buggy source file, committed."""
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "Greeter.kt").write_text('fun greet(name: String) = "Helo, $name"\n')
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, env={**GIT, "PATH": "/usr/bin:/bin", "HOME": str(root)})
    return root


def _prompt(workdir: Path):
    return load_template().render(
        {
            "problem_statement": "The greeting is misspelt.",
            "repo": "acme/app",
            "base_commit": "abc123",
            "framework": "android",
            "workdir": str(workdir),
        }
    )


def _run(server: ScriptedOpenAI, repo: Path, limits: Limits, model: str = "scripted", **kwargs):
    sleeps: list[float] = []
    path = repo.parent / "trajectory.jsonl"
    outcome = run_shell_agent(
        server.endpoint(model, backoff_s=0.01, retries=kwargs.pop("retries", 3)),
        limits,
        _prompt(repo),
        kwargs.pop("shell", None) or LocalShell(repo),
        path,
        sleep=sleeps.append,
        **kwargs,
    )
    return outcome, read_trajectory(path), sleeps


def test_a_scripted_agent_fixes_the_repository_and_submits(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(
        bash("grep -rn Helo app"),
        bash("sed -i 's/Helo/Hello/' app/Greeter.kt && git diff --stat"),
        submit("fixed the typo in Greeter.kt"),
    )
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=10, price=Price(2.5, 10.0)), model="gpt-4o")
    assert outcome.end is AgentEnd.SUBMITTED and outcome.submission == "fixed the typo in Greeter.kt"
    assert (repo / "app" / "Greeter.kt").read_text() == 'fun greet(name: String) = "Hello, $name"\n'
    u = outcome.usage
    assert (u.calls, u.steps, u.tokens_in, u.tokens_out, u.unmetered_calls) == (3, 3, 300, 30, 0)
    assert u.cost_usd == pytest.approx(300 * 2.5 / 1e6 + 30 * 10.0 / 1e6)
    tools = [line for line in lines if line["role"] == "tool"]
    assert [t["exit_code"] for t in tools[:2]] == [0, 0] and "app/Greeter.kt:1:" in tools[0]["output"]
    assert tools[1]["command"].startswith("sed -i") and "1 file changed" in tools[1]["output"]
    assert lines[-1]["event"] == "end" and lines[-1]["end"] == "submitted" and lines[-1]["usage"]["calls"] == 3
    first = scripted_openai.requests[0]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert (
        "The greeting is misspelt." in first["messages"][1]["content"] and str(repo) in first["messages"][1]["content"]
    )
    assert [t["function"]["name"] for t in first["tools"]] == ["bash", "submit"] and first["tool_choice"] == "auto"
    second = scripted_openai.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call_0"
    assert second[-1]["content"].startswith("exit code: 0\napp/Greeter.kt:1:")


def test_a_looping_model_hits_the_step_limit(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(bash("echo again"))
    scripted_openai.repeat_last = True
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=5))
    assert outcome.end is AgentEnd.STEP_LIMIT and outcome.submission is None
    assert outcome.usage.steps == 5 and len(scripted_openai.requests) == 5
    assert sum(1 for line in lines if line["role"] == "tool") == 5 and lines[-1]["end"] == "agent_step_limit"


def test_a_text_reply_gets_a_format_reminder_and_counts_as_a_step(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(text("I think I should look at the code."), submit("done"))
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=5))
    assert outcome.end is AgentEnd.SUBMITTED and outcome.usage.steps == 2
    assert scripted_openai.requests[1]["messages"][-1] == {"role": "user", "content": FORMAT_REMINDER}
    assert any(line.get("event") == "format_reminder" for line in lines)
    scripted_openai.push(*[text("thinking")] * 3)
    outcome, _, _ = _run(scripted_openai, repo, Limits(max_steps=3))
    assert outcome.end is AgentEnd.STEP_LIMIT  # a model that never calls a tool ends at the step limit


def test_the_token_limit_counts_prompt_and_completion_tokens(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(bash("true"))
    scripted_openai.repeat_last = True
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=50, max_tokens=250))
    assert outcome.end is AgentEnd.TOKEN_LIMIT  # 110 tokens a call: 220 < 250 asks again, 330 stops
    assert (outcome.usage.calls, outcome.usage.tokens_in + outcome.usage.tokens_out) == (3, 330)
    assert lines[-1]["end"] == "agent_token_limit"


def test_the_cost_limit_uses_the_models_price(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(bash("true"))
    scripted_openai.repeat_last = True
    limits = Limits(max_steps=50, max_cost_usd=0.2, price=Price(1000.0, 1000.0))  # 0.11 USD a call
    outcome, lines, _ = _run(scripted_openai, repo, limits)
    assert outcome.end is AgentEnd.COST_LIMIT and outcome.usage.calls == 2
    assert outcome.usage.cost_usd == pytest.approx(0.22) and lines[-1]["usage"]["cost_usd"] == pytest.approx(0.22)


def test_an_unpriced_model_has_no_cost_and_the_trajectory_says_the_limit_cannot_apply(
    scripted_openai: ScriptedOpenAI, repo: Path
) -> None:
    scripted_openai.push(bash("true"))
    scripted_openai.repeat_last = True
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=4, max_cost_usd=0.000001))
    assert outcome.end is AgentEnd.STEP_LIMIT and outcome.usage.cost_usd is None
    notes = [line["message"] for line in lines if line.get("event") == "note"]
    assert notes and "no price" in notes[0] and "--mb-agent-max-cost 1e-06 is ignored" in notes[0]
    assert lines[0]["event"] == "start" and lines[0]["price"] == "unpriced"


def test_a_reply_without_usage_is_counted_as_unmetered(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(
        bash("true", usage=None), submit("done", usage={"prompt_tokens": -5, "completion_tokens": "x"})
    )
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=5, max_tokens=10))
    assert outcome.end is AgentEnd.SUBMITTED and outcome.usage.unmetered_calls == 2 and outcome.usage.tokens_in == 0
    assert [line["usage"]["usage_reported"] for line in lines if line["role"] == "assistant"] == [False, False]


def test_an_endpoint_failing_twice_is_retried_and_the_retries_are_in_the_trajectory(
    scripted_openai: ScriptedOpenAI, repo: Path
) -> None:
    scripted_openai.push(error(500), error(502), bash("echo ok"), submit("done"))
    outcome, lines, sleeps = _run(scripted_openai, repo, Limits(max_steps=5))
    assert outcome.end is AgentEnd.SUBMITTED and outcome.usage.calls == 2 and len(scripted_openai.requests) == 4
    retries = [line for line in lines if line.get("event") == "retry"]
    assert [(r["attempt"], r["status"], r["kind"]) for r in retries] == [
        (1, 500, "agent_http_error"),
        (2, 502, "agent_http_error"),
    ]
    assert len(sleeps) == 2 and 0.01 <= sleeps[0] < sleeps[1] <= 0.03  # exponential backoff from backoff_s


def test_an_endpoint_failing_forever_is_infra_with_its_kind(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(bash("echo before"))
    scripted_openai.final = error(503)
    with pytest.raises(AgentInfraError) as info:
        _run(scripted_openai, repo, Limits(max_steps=5), retries=2)
    assert info.value.kind == InfraKind.AGENT_HTTP_ERROR and len(info.value.attempts) == 3
    assert len(scripted_openai.requests) == 1 + 3 and "after 3 attempts" in str(info.value)
    lines = read_trajectory(repo.parent / "trajectory.jsonl")
    assert [line["command"] for line in lines if line["role"] == "tool"] == ["echo before"]  # kept
    assert lines[-1]["event"] == "aborted" and lines[-1]["kind"] == "agent_http_error"


def test_rate_limiting_honours_retry_after_then_is_its_own_kind(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(error(429, retry_after="2"), submit("done"))
    outcome, _, sleeps = _run(scripted_openai, repo, Limits(max_steps=5))
    assert outcome.end is AgentEnd.SUBMITTED and sleeps == [2.0]
    scripted_openai.final = error(429)
    with pytest.raises(AgentInfraError) as info:
        _run(scripted_openai, repo, Limits(max_steps=5), retries=1)
    assert info.value.kind == InfraKind.AGENT_RATE_LIMITED


@pytest.mark.parametrize("status", [401, 404, 400])
def test_a_client_error_is_not_retried(scripted_openai: ScriptedOpenAI, repo: Path, status: int) -> None:
    scripted_openai.push(error(status))
    with pytest.raises(AgentInfraError) as info:
        _run(scripted_openai, repo, Limits(max_steps=5))
    assert info.value.kind == InfraKind.AGENT_HTTP_ERROR and f"HTTP {status} (not retried)" in str(info.value)
    assert len(scripted_openai.requests) == 1


@pytest.mark.parametrize("body", [b"<html>proxy login</html>", b'{"choices": []}', b'{"choices": [{"message": 3}]}'])
def test_a_body_that_is_no_chat_completion_is_a_bad_response(
    scripted_openai: ScriptedOpenAI, repo: Path, body: bytes
) -> None:
    scripted_openai.push(raw(body))
    with pytest.raises(AgentInfraError) as info:
        _run(scripted_openai, repo, Limits(max_steps=5))
    assert info.value.kind == InfraKind.AGENT_BAD_RESPONSE and len(scripted_openai.requests) == 1


def test_malformed_and_unknown_tool_calls_are_error_observations(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    """The model's arguments are untrusted: not JSON, not an object, wrong types, extra keys, an unknown tool,
    an empty command; each is shown to the model as an error and the run goes on."""
    scripted_openai.push(
        calls(("bash", "{not json")),
        calls(("bash", "[1, 2]")),
        calls(("bash", {"command": 7})),
        calls(("bash", {"command": "ls", "sudo": True})),
        calls(("rm_rf", {})),
        calls(("bash", {"command": "  "})),
        calls((None, "{}")),
        submit("done"),
    )
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=10))
    assert outcome.end is AgentEnd.SUBMITTED and outcome.usage.steps == 8
    errors = [line["error"] for line in lines if line["role"] == "tool" and "error" in line]
    assert len(errors) == 7
    assert "not valid JSON" in errors[0] and "must be a JSON object" in errors[1]
    assert "command: Input should be a valid string" in errors[2] and "sudo: Extra inputs" in errors[3]
    assert "unknown tool 'rm_rf'; the tools are: bash, submit" in errors[4] and "empty" in errors[5]
    shown = scripted_openai.requests[1]["messages"][-1]
    assert shown["role"] == "tool" and shown["content"].startswith("error: the arguments of bash are not valid JSON")


def test_several_calls_in_one_reply_run_in_order_until_submit(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(
        calls(("bash", {"command": "echo one > a"}), ("submit", {"note": "n"}), ("bash", {"command": "echo two > b"}))
    )
    outcome, _, _ = _run(scripted_openai, repo, Limits(max_steps=3))
    assert outcome.end is AgentEnd.SUBMITTED and (repo / "a").exists() and not (repo / "b").exists()


def test_a_submitted_patch_is_only_a_note(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    """A ``submit`` carrying a patch changes nothing: the work tree is what it was, the note is cut."""
    patch = "diff --git a/app/Greeter.kt b/app/Greeter.kt\n--- a/app/Greeter.kt\n+++ b/app/Greeter.kt\n" + "+x\n" * 9000
    scripted_openai.push(submit(patch))
    outcome, _, _ = _run(scripted_openai, repo, Limits(max_steps=3))
    assert outcome.end is AgentEnd.SUBMITTED and len(outcome.submission) <= 10_000 and "elided" in outcome.submission
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True)
    assert status.stdout == ""


def test_huge_output_is_shown_with_head_and_tail(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    script = f"{sys.executable} -c \"print('HEAD' + 'x' * 200000 + 'TAIL')\""
    scripted_openai.push(bash(script), submit("done"))
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=3, output_chars=1000))
    shown = scripted_openai.requests[1]["messages"][-1]["content"]
    assert outcome.end is AgentEnd.SUBMITTED and len(shown) <= 1000 + len("exit code: 0\n")
    assert shown.startswith("exit code: 0\nHEAD") and shown.rstrip().endswith("TAIL") and "characters elided" in shown
    [tool] = [line for line in lines if line["role"] == "tool" and line["tool"] == "bash"]
    assert tool["output"] == shown.removeprefix("exit code: 0\n")


def test_a_hanging_command_times_out_and_the_wall_limit_caps_it(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(bash("sleep 30"), bash("sleep 30"))
    scripted_openai.repeat_last = True
    # the wall limit leaves room for a second request on a loaded machine; the step limit is never what ends it
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=1000, command_timeout_s=0.5, wall_s=5.0))
    tools = [line for line in lines if line["role"] == "tool"]
    assert tools[0]["timed_out"] and tools[0]["exit_code"] is None and tools[0]["seconds"] < 5
    assert outcome.end is AgentEnd.TIMEOUT and outcome.seconds < 20
    assert "timed out after" in scripted_openai.requests[1]["messages"][-1]["content"]


def test_a_command_never_runs_past_the_wall_time(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(bash("sleep 30"))
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=10, command_timeout_s=60, wall_s=1.5))
    [tool] = [line for line in lines if line["role"] == "tool"]
    assert tool["timed_out"] and tool["seconds"] < 5 and outcome.end is AgentEnd.TIMEOUT


class _Exploding:
    """A shell whose second command raises (a runtime's container died mid-run, Ctrl-C); before that it reads
    the trajectory file as it is on disk at that moment."""

    def __init__(self, inner: LocalShell, trajectory: Path) -> None:
        self.inner, self.trajectory, self.count, self.on_disk = inner, trajectory, 0, ""

    def run(self, command: str, timeout_s: float) -> ShellResult:
        self.count += 1
        if self.count == 2:
            self.on_disk = self.trajectory.read_text()
            raise KeyboardInterrupt
        return self.inner.run(command, timeout_s)


def test_the_trajectory_survives_an_exception_mid_run(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(bash("echo first"), bash("echo second"), submit("never"))
    shell = _Exploding(LocalShell(repo), repo.parent / "trajectory.jsonl")
    with pytest.raises(KeyboardInterrupt):
        _run(scripted_openai, repo, Limits(max_steps=5), shell=shell)
    assert '"output": "first\\n"' in shell.on_disk  # flushed line by line, not at the end
    assert '"command": "echo second"' not in shell.on_disk
    lines = read_trajectory(repo.parent / "trajectory.jsonl")
    assert [line["output"] for line in lines if line["role"] == "tool"] == ["first\n"]
    assert lines[-1]["event"] == "aborted" and lines[-1]["error"].startswith("KeyboardInterrupt")
    assert lines[-1]["usage"]["calls"] == 2


def test_huge_model_text_is_cut_in_the_trajectory(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(text("y" * 1_000_000), submit("done"))
    _run(scripted_openai, repo, Limits(max_steps=3))
    path = repo.parent / "trajectory.jsonl"
    [reply] = [line for line in read_trajectory(path) if line["role"] == "assistant" and line["message"]]
    assert len(reply["message"]) <= 200_000 and path.stat().st_size < 400_000
    assert all(json.loads(line) for line in path.read_text().splitlines())


def test_lone_surrogates_and_oversized_commands_are_refused_not_crashes(
    scripted_openai: ScriptedOpenAI, repo: Path
) -> None:
    """JSON can carry a lone surrogate (``\\ud800``) no file or process accepts as UTF-8: the model's text is
    escaped in the trajectory, such a command is refused, a note is repaired; so is a command over 100,000
    characters (it could not start)."""
    scripted_openai.push(
        calls(("bash", '{"command": "echo \\ud800"}'), content="bad \ud800 text"),
        bash("echo " + "x" * 100_001),
        calls(("submit", '{"note": "n\\udfff"}')),
    )
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=5))
    errors = [line["error"] for line in lines if line["role"] == "tool" and "error" in line]
    assert "not valid Unicode text" in errors[0] and "100006 characters (at most 100000)" in errors[1]
    assert outcome.end is AgentEnd.SUBMITTED and outcome.submission == "n?"
    assert [line["message"] for line in lines if line["role"] == "assistant"][0] == "bad \ud800 text"


def test_a_reply_with_many_calls_runs_at_most_twenty(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    scripted_openai.push(calls(*[("bash", {"command": f"echo {i} >> log"}) for i in range(50)]), submit("done"))
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=3))
    assert outcome.end is AgentEnd.SUBMITTED and (repo / "log").read_text().split() == [str(i) for i in range(20)]
    sent = scripted_openai.requests[1]["messages"]
    assert sum(1 for m in sent if m["role"] == "tool") == 50  # every call id gets its result, as the API requires
    assert sent[-1]["content"] == "error: not run: at most 20 tool calls are run per reply"


def test_the_agent_reacts_to_what_its_commands_printed(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    """A responder reads the last tool result from the request: the model's next move depends on the sandbox."""

    def respond(request: dict):
        last = request["messages"][-1]
        if last["role"] == "tool" and "Helo" in last["content"]:
            return bash("sed -i 's/Helo/Hello/' app/Greeter.kt && grep -c Hello app/Greeter.kt")
        if last["role"] == "tool" and last["content"] == "exit code: 0\n1\n":
            return submit("fixed")
        return None

    scripted_openai.respond = respond
    scripted_openai.push(bash("cat app/Greeter.kt"))
    outcome, _, _ = _run(scripted_openai, repo, Limits(max_steps=5))
    assert outcome.end is AgentEnd.SUBMITTED and outcome.usage.steps == 3
    assert "Hello" in (repo / "app" / "Greeter.kt").read_text()


def test_a_slow_model_reply_is_cut_at_the_wall_time(scripted_openai: ScriptedOpenAI, repo: Path) -> None:
    """The wall time holds during a call: a reply still in flight when it runs out is cut, nothing of it runs."""
    slow = bash("echo late > late.txt")
    slow.delay_s = 1.2
    scripted_openai.push(slow, submit("too late"))
    outcome, lines, _ = _run(scripted_openai, repo, Limits(max_steps=5, wall_s=1.0))
    assert outcome.end is AgentEnd.TIMEOUT and len(scripted_openai.requests) == 1 and outcome.seconds < 1.15
    assert not (repo / "late.txt").exists() and not [line for line in lines if line["role"] == "tool"]
