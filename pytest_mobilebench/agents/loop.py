"""The built-in shell agent: a model behind an OpenAI-compatible endpoint drives one tool, a shell in its sandbox.

The loop runs in the harness process; commands run in the sandbox through a :class:`~.shell.Shell`. Per step
(one model call): the conversation so far and the tools (``bash(command)``, ``submit(note)``) are sent; each tool
call of the reply runs in order and its result goes back as a ``tool`` message; a reply without a tool call
gets a format reminder (the step still counts). ``submit`` ends the run: its note is the agent's summary, kept as
:attr:`AgentOutcome.submission` and never used as the candidate (the caller TAKES the candidate, e.g. with
``git diff`` of the work tree). Before each call the limits are checked, in this order: steps, wall time, tokens,
cost; the first one reached ends the run with its :class:`AgentEnd`. The wall time is the agent's own: the run's
elapsed time less what the endpoint lost (its failed attempts and the waits before their retries, recorded as
``endpoint_lost_seconds``). It holds during a call too: neither a command's timeout nor a model call in flight
runs past it (a call cut there ends the run ``agent_timeout``; the endpoint's own deadlines, below the wall time,
make a stalled reply a failed attempt first). Endpoint failures (after :func:`~.endpoint.chat`'s retries) raise
:class:`AgentInfraError`: infrastructure, not the agent's outcome. The trajectory (:mod:`.trajectory`) is written line
by line.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from pytest_mobilebench.agents.endpoint import AgentInfraError, Attempt, CapReached, Endpoint, chat
from pytest_mobilebench.agents.limits import Limits
from pytest_mobilebench.agents.prompt import Prompt
from pytest_mobilebench.agents.shell import Shell, ShellResult, bound_output
from pytest_mobilebench.agents.tools import Toolbox, ToolCallError, declare
from pytest_mobilebench.agents.trajectory import Trajectory

__all__ = ["FORMAT_REMINDER", "AgentEnd", "AgentInfraError", "AgentOutcome", "Usage", "run_shell_agent"]

FORMAT_REMINDER: Final = (
    "Your reply had no tool call. Reply with one tool call: `bash` to run a command in the "
    "repository, or `submit` when you are done."
)
#: the longest submit note kept (the note is a summary; anything longer is the model's text, cut)
NOTE_CHARS: Final = 10_000
#: the longest command line run (a longer one would fail to start: the kernel's argument limit is ~2 MB)
COMMAND_CHARS: Final = 100_000
#: tool calls run per reply; the others get an error result (the step limit bounds model calls, and a reply
#: holding thousands of calls would otherwise run thousands of commands in one step)
CALLS_PER_REPLY: Final = 20


@dataclasses.dataclass(frozen=True)
class Usage:
    """What a run spent: model ``calls`` (successful ones), ``tokens_in`` / ``tokens_out`` (summed ``usage``),
    ``model_seconds`` (time in successful calls), ``cost_usd`` (None when the model is unpriced), ``steps``
    (model calls the loop made), ``unmetered_calls`` (replies without a ``usage`` block: their tokens are 0),
    ``endpoint_failed_attempts`` and ``endpoint_lost_seconds`` (the endpoint's failed attempts and the seconds they
    and the waits before their retries took: infrastructure's time, not charged to the wall-time limit)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model_seconds: float = 0.0
    cost_usd: float | None = None
    steps: int = 0
    unmetered_calls: int = 0
    endpoint_failed_attempts: int = 0
    endpoint_lost_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            **dataclasses.asdict(self),
            "model_seconds": round(self.model_seconds, 3),
            "endpoint_lost_seconds": round(self.endpoint_lost_seconds, 3),
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


@enum.unique
class AgentEnd(str, enum.Enum):
    """How a run ended; every member is the agent's own outcome (endpoint failures raise instead)."""

    SUBMITTED = "submitted"
    STEP_LIMIT = "agent_step_limit"
    COST_LIMIT = "agent_cost_limit"
    TOKEN_LIMIT = "agent_token_limit"
    TIMEOUT = "agent_timeout"


@dataclasses.dataclass(frozen=True)
class AgentOutcome:
    """The run's ``end``, its ``usage``, the ``submission`` note (None unless submitted; never the patch) and its
    wall-clock ``seconds`` (the agent's own: ``seconds - usage.endpoint_lost_seconds``)."""

    end: AgentEnd
    usage: Usage
    submission: str | None
    seconds: float = 0.0


def _text(content: Any) -> str | None:
    """An assistant ``content``: a text, None, or a list of parts (their ``text`` joined)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, default=str)


def _calls(message: dict[str, Any], step: int) -> list[dict[str, Any]]:
    """The reply's tool calls, normalised to ``{"id", "name", "arguments"}`` (ids made when missing)."""
    raw = message.get("tool_calls")
    out = []
    for i, call in enumerate(raw if isinstance(raw, list) else []):
        call = call if isinstance(call, dict) else {}
        fn = call.get("function") if isinstance(call.get("function"), dict) else {}
        args = fn.get("arguments", "")
        ident = call.get("id")
        out.append(
            {
                "id": ident[:200] if isinstance(ident, str) and ident else f"call_{step}_{i}",
                "name": fn.get("name"),
                "arguments": args if isinstance(args, str) else json.dumps(args),
            }
        )
    return out


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _observation(result: ShellResult) -> str:
    if result.timed_out:
        return f"timed out after {result.seconds:.0f}s (the command was killed); its output so far:\n{result.output}"
    return f"exit code: {result.exit_code}\n{result.output}"


class _Run:
    """One run's mutable state; the tools are its methods (declared once, schema and dispatch alike)."""

    def __init__(
        self,
        endpoint: Endpoint,
        limits: Limits,
        shell: Shell,
        trajectory: Trajectory,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self.endpoint, self.limits, self.shell, self.trajectory = endpoint, limits, shell, trajectory
        self.clock, self.sleep = clock, sleep
        self.start = clock()
        self.usage = Usage(cost_usd=0.0 if limits.price is not None else None)
        self.submission: str | None = None
        self.toolbox = Toolbox([declare(self.bash), declare(self.submit)])
        self.record: dict[str, Any] = {}

    # ------------------------------------------------------------------------------------------ tools

    def bash(self, command: str) -> str:
        """Run a command line with bash in the repository's work tree; returns its exit code and output (stdout
        and stderr; the middle of a long output is elided). Each call starts a fresh shell in the work tree.

        Args:
            command: the command line, e.g. "grep -rn 'onCreate' app/src | head -20".
        """
        if not command.strip():
            raise ToolCallError("the command is empty")
        if len(command) > COMMAND_CHARS:
            raise ToolCallError(
                f"the command has {len(command)} characters (at most {COMMAND_CHARS}); write a "
                "long file in several commands"
            )
        if not _is_utf8(command):
            raise ToolCallError("the command is not valid Unicode text (a lone surrogate)")
        remaining = self.remaining()
        if remaining is not None and remaining <= 0:
            raise ToolCallError("not run: the wall-time limit is reached")
        timeout = self.limits.command_timeout_s if remaining is None else min(self.limits.command_timeout_s, remaining)
        result = self.shell.run(command, timeout)
        output = bound_output(result.output, self.limits.output_chars)
        self.record = {
            "command": command,
            "exit_code": result.exit_code,
            "output": output,
            "timed_out": result.timed_out,
            "seconds": round(result.seconds, 3),
        }
        return _observation(dataclasses.replace(result, output=output))

    def submit(self, note: str) -> str:
        """End the work. Your changes in the work tree are what is evaluated; the note is only a summary.

        Args:
            note: a short summary of what you changed and why.
        """
        self.submission = bound_output(note.encode("utf-8", "replace").decode("utf-8"), NOTE_CHARS)
        self.record = {"note": self.submission}
        return "submitted"

    # ------------------------------------------------------------------------------------------ loop

    def remaining(self) -> float | None:
        """Seconds of the wall-time limit left: the limit minus the run's time so far, less the time the endpoint
        lost (failed attempts and the waits before their retries); None without a limit."""
        charged = self.clock() - self.start - self.usage.endpoint_lost_seconds
        return None if self.limits.wall_s is None else self.limits.wall_s - charged

    def limit_reached(self) -> AgentEnd | None:
        """The first limit reached before the next call (steps, wall time, tokens, cost), or None."""
        u, lim = self.usage, self.limits
        remaining = self.remaining()
        if u.steps >= lim.max_steps:
            return AgentEnd.STEP_LIMIT
        if remaining is not None and remaining <= 0:
            return AgentEnd.TIMEOUT
        if lim.max_tokens is not None and u.tokens_in + u.tokens_out >= lim.max_tokens:
            return AgentEnd.TOKEN_LIMIT
        if lim.max_cost_usd is not None and u.cost_usd is not None and u.cost_usd >= lim.max_cost_usd:
            return AgentEnd.COST_LIMIT
        return None

    def _on_retry(self, attempt: Attempt) -> None:
        """A failed attempt: its time and the wait before the next one are the endpoint's, not the agent's."""
        u = self.usage
        self.usage = dataclasses.replace(
            u,
            endpoint_failed_attempts=u.endpoint_failed_attempts + 1,
            endpoint_lost_seconds=u.endpoint_lost_seconds + attempt.seconds + (attempt.wait_s or 0.0),
        )
        self.trajectory.write(
            self.usage.steps,
            "harness",
            event="retry",
            **attempt.as_dict(),
            lost_seconds=round(self.usage.endpoint_lost_seconds, 3),
        )

    def ask(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """One step: a model call, its usage counted; returns the assistant message as sent back."""
        self.usage = dataclasses.replace(self.usage, steps=self.usage.steps + 1)
        step = self.usage.steps
        completion = chat(
            self.endpoint,
            messages,
            self.toolbox.schemas(),
            on_retry=self._on_retry,
            sleep=self.sleep,
            cap=self.remaining,
        )
        u = self.usage
        tokens_in, tokens_out = u.tokens_in + completion.tokens_in, u.tokens_out + completion.tokens_out
        price = self.limits.price
        self.usage = dataclasses.replace(
            u,
            calls=u.calls + 1,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            model_seconds=u.model_seconds + completion.seconds,
            cost_usd=None if price is None else price.cost(tokens_in, tokens_out),
            unmetered_calls=u.unmetered_calls + (not completion.usage_reported),
        )
        text, calls = _text(completion.message.get("content")), _calls(completion.message, step)
        self.trajectory.write(
            step,
            "assistant",
            message=text,
            tool_calls=calls,
            usage={
                "tokens_in": completion.tokens_in,
                "tokens_out": completion.tokens_out,
                "seconds": round(completion.seconds, 3),
                "usage_reported": completion.usage_reported,
                "cost_usd": self.usage.as_dict()["cost_usd"],
            },
        )
        sent = [
            {"id": c["id"], "type": "function", "function": {"name": str(c["name"]), "arguments": c["arguments"]}}
            for c in calls
        ]
        return {"role": "assistant", "content": text, **({"tool_calls": sent} if sent else {})}

    def act(self, call: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call (errors become the tool's result); returns the ``tool`` message."""
        self.record = {}
        try:
            content = str(self.toolbox.call(call["name"], call["arguments"]))
        except ToolCallError as exc:
            content = f"error: {exc}"
            self.record = {**self.record, "error": str(exc)}
        self.trajectory.write(
            self.usage.steps, "tool", tool_call_id=call["id"], tool=str(call["name"])[:200], **self.record
        )
        return {"role": "tool", "tool_call_id": call["id"], "content": content}

    def refuse(self, call: dict[str, Any]) -> dict[str, Any]:
        """The result of a call past :data:`CALLS_PER_REPLY` (not run)."""
        error = f"not run: at most {CALLS_PER_REPLY} tool calls are run per reply"
        self.trajectory.write(
            self.usage.steps, "tool", tool_call_id=call["id"], tool=str(call["name"])[:200], error=error
        )
        return {"role": "tool", "tool_call_id": call["id"], "content": f"error: {error}"}

    def go(self, prompt: Prompt) -> AgentOutcome:
        messages: list[dict[str, Any]] = prompt.messages()
        self._start_lines(messages)
        while (end := self.limit_reached()) is None:
            try:
                reply = self.ask(messages)
            except CapReached as cut:  # the wall time ran out while the model was answering
                self.trajectory.write(
                    self.usage.steps,
                    "harness",
                    event="call_cut",
                    seconds=round(cut.seconds, 3),
                    message="the wall-time limit ended a model call in flight",
                )
                return self.finish(AgentEnd.TIMEOUT)
            messages.append(reply)
            if not reply.get("tool_calls"):
                messages.append({"role": "user", "content": FORMAT_REMINDER})
                self.trajectory.write(self.usage.steps, "user", message=FORMAT_REMINDER, event="format_reminder")
                continue
            for number, call in enumerate(_calls(reply, self.usage.steps)):
                messages.append(self.act(call) if number < CALLS_PER_REPLY else self.refuse(call))
                if self.submission is not None:
                    return self.finish(AgentEnd.SUBMITTED)
        return self.finish(end)

    def _start_lines(self, messages: list[dict[str, Any]]) -> None:
        price = self.limits.price
        lim = {k: v for k, v in dataclasses.asdict(self.limits).items() if k != "price"}
        self.trajectory.write(
            0,
            "harness",
            event="start",
            model=self.endpoint.model,
            limits=lim,
            price=dataclasses.asdict(price) if price else "unpriced",
            tools=list(self.toolbox.tools),
        )
        if price is None:
            self.trajectory.write(
                0,
                "harness",
                event="note",
                message=(
                    f"model {self.endpoint.model!r} has no price in the price table: cost is not computed and a cost "
                    "limit cannot apply"
                    + (
                        ""
                        if self.limits.max_cost_usd is None
                        else f" (--mb-agent-max-cost {self.limits.max_cost_usd} is ignored)"
                    )
                ),
            )
        for m in messages:
            self.trajectory.write(0, m["role"], message=m["content"])

    def finish(self, end: AgentEnd) -> AgentOutcome:
        seconds = self.clock() - self.start
        lost = self.usage.endpoint_lost_seconds
        self.trajectory.write(
            self.usage.steps,
            "harness",
            event="end",
            end=end.value,
            usage=self.usage.as_dict(),
            seconds=round(seconds, 3),
            agent_seconds=round(seconds - lost, 3),
            endpoint_lost_seconds=round(lost, 3),
        )
        return AgentOutcome(end, self.usage, self.submission if end is AgentEnd.SUBMITTED else None, seconds)


def run_shell_agent(
    endpoint: Endpoint,
    limits: Limits,
    prompt: Prompt,
    shell: Shell,
    trajectory_path: Path,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> AgentOutcome:
    """Run the shell agent until it submits or reaches a limit (see the module docstring).

    Args:
        endpoint: the model endpoint.
        limits: steps, tokens, cost (with the model's price), wall time, command timeout, output bound.
        prompt: the rendered prompt (:meth:`.prompt.PromptTemplate.render`).
        shell: runs the agent's commands in its sandbox.
        trajectory_path: the JSONL file written line by line (replaced if present).
        clock, sleep: monotonic seconds and the wait between endpoint retries (tests pass fakes).

    Raises:
        AgentInfraError: the endpoint failed after its retries (the trajectory ends with an ``aborted`` line).
        Exception: whatever ``shell.run`` raises (e.g. the runtime's ``InfraError``), after the ``aborted`` line.
    """
    with Trajectory(trajectory_path) as trajectory:
        run = _Run(endpoint, limits, shell, trajectory, clock, sleep)
        try:
            return run.go(prompt)
        except BaseException as exc:  # Ctrl-C too: the lines so far stay, and say why the run stopped
            trajectory.write(
                run.usage.steps,
                "harness",
                event="aborted",
                error=f"{type(exc).__name__}: {exc}"[:4000],
                usage=run.usage.as_dict(),
                **({"kind": exc.kind} if isinstance(exc, AgentInfraError) else {}),
            )
            raise
