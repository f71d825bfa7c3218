"""A scripted OpenAI-compatible chat-completions server on loopback, standing in for a model in tests.

Each request to ``POST <url>/chat/completions`` takes the next :class:`Turn` of the script: a chat completion
(tool calls or a text answer, with a ``usage`` block) or an HTTP error (``error(500)``, ``error(429,
retry_after=1)``); ``respond``, when set, answers from the request itself first (e.g. from the last tool result). When
the script is empty the server answers ``final`` (default: a text answer), or repeats the last turn with
``repeat_last=True`` (a model that loops). Every request body and ``Authorization`` header is recorded. Tests import the
``scripted_openai`` fixture::

    from scripted_openai import bash, error, scripted_openai, submit  # noqa: F401 (fixture)

    def test_x(scripted_openai):
        scripted_openai.push(error(500), bash("ls"), submit("done"))
        endpoint = scripted_openai.endpoint(backoff_s=0.01)
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pytest_mobilebench.agents.endpoint import CHECK_MESSAGE, Endpoint

__all__ = [
    "ScriptedOpenAI",
    "Turn",
    "bash",
    "calls",
    "error",
    "is_check",
    "raw",
    "scripted_openai",
    "submit",
    "text",
    "trickled",
]

DEFAULT_USAGE = {"prompt_tokens": 100, "completion_tokens": 10}


@dataclasses.dataclass
class Turn:
    """One answer: ``status``, ``body`` (a dict is sent as JSON), extra ``headers``, ``delay_s`` before answering,
    ``trickle_s``: when set, the headers at once, then the body one byte every ``trickle_s`` seconds."""

    body: dict[str, Any] | bytes
    status: int = 200
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    delay_s: float = 0.0
    trickle_s: float | None = None

    def encoded(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


def _completion(message: dict[str, Any], usage: dict[str, int] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def calls(*pairs: tuple[str, Any], content: str | None = None, usage: dict[str, int] | None = DEFAULT_USAGE) -> Turn:
    """A reply with tool calls ``(name, arguments)``: a dict is sent as JSON text, a str as it is (malformed
    arguments are a str that is not JSON)."""
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for i, (name, args) in enumerate(pairs)
    ]
    return Turn(_completion({"role": "assistant", "content": content, "tool_calls": tool_calls}, usage))


def bash(command: str, **kwargs: Any) -> Turn:
    """A reply calling ``bash`` with ``command``."""
    return calls(("bash", {"command": command}), **kwargs)


def submit(note: str = "done", **kwargs: Any) -> Turn:
    """A reply calling ``submit`` with ``note``."""
    return calls(("submit", {"note": note}), **kwargs)


def text(content: str, usage: dict[str, int] | None = DEFAULT_USAGE) -> Turn:
    """A reply without tool calls."""
    return Turn(_completion({"role": "assistant", "content": content}, usage))


def error(
    status: int, body: bytes = b'{"error": {"message": "scripted failure"}}', retry_after: str | None = None
) -> Turn:
    """An HTTP error answer (``Retry-After`` when given)."""
    return Turn(body, status, {"Retry-After": retry_after} if retry_after is not None else {})


def trickled(turn: Turn, every_s: float) -> Turn:
    """``turn`` sent as a trickle: its headers at once, then one byte of its body every ``every_s`` seconds."""
    return dataclasses.replace(turn, trickle_s=every_s)


def is_check(payload: bytes) -> bool:
    """Whether a request body is the harness's endpoint check (one user message, :data:`CHECK_MESSAGE`)."""
    try:
        messages = json.loads(payload).get("messages")
    except (ValueError, AttributeError):
        return False
    return isinstance(messages, list) and len(messages) == 1 and messages[0].get("content") == CHECK_MESSAGE


def raw(body: bytes, status: int = 200) -> Turn:
    """Any body, sent as it is."""
    return Turn(body, status)


class ScriptedOpenAI:
    """The server: ``url`` (``http://127.0.0.1:<port>/v1``), ``push`` turns, read ``requests`` / ``auth``."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.script: list[Turn] = []
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.paths: list[str] = []
        #: the endpoint checks a live run makes before it starts (answered ``check_answer``, not from the script)
        self.checks: list[dict[str, Any]] = []
        self.check_answer: Turn | None = None
        self.final: Turn = text("I am done.")
        self.repeat_last = False
        #: when set, called with each request body before the script: a Turn answers, None falls to the script
        self.respond: Callable[[dict[str, Any]], Turn | None] | None = None
        self._lock = threading.Lock()
        self._last: Turn | None = None
        self._httpd = ThreadingHTTPServer((host, 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-openai", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def endpoint(self, model: str = "scripted", **kwargs: Any) -> Endpoint:
        """An :class:`Endpoint` for this server (keyword arguments as the dataclass's)."""
        return Endpoint(self.url, model, **kwargs)

    def push(self, *turns: Turn) -> ScriptedOpenAI:
        with self._lock:
            self.script.extend(turns)
        return self

    def next_turn(self) -> Turn:
        with self._lock:
            if self.script:
                self._last = self.script.pop(0)
                return self._last
            return self._last if self.repeat_last and self._last is not None else self.final

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                payload = self.rfile.read(length)
                if is_check(payload):
                    server.checks.append({"auth": self.headers.get("Authorization"), **json.loads(payload)})
                    turn = server.check_answer or text("ok")
                    return self._send(turn, turn.encoded())
                with server._lock:
                    server.paths.append(self.path)
                    server.auth.append(self.headers.get("Authorization"))
                    try:
                        server.requests.append(json.loads(payload))
                    except ValueError:
                        server.requests.append({"_unreadable": payload.decode("utf-8", "replace")})
                dynamic = server.respond(server.requests[-1]) if server.respond is not None else None
                turn = dynamic or (server.next_turn() if self.path.endswith("/chat/completions") else error(404))
                if turn.delay_s:
                    time.sleep(turn.delay_s)
                self._send(turn, turn.encoded())

            def _send(self, turn: Turn, body: bytes) -> None:
                try:
                    self.send_response(turn.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in turn.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if turn.trickle_s is None:
                        self.wfile.write(body)
                    for i in range(len(body) if turn.trickle_s is not None else 0):
                        time.sleep(turn.trickle_s)  # type: ignore[arg-type]
                        self.wfile.write(body[i : i + 1])
                except OSError:  # the client gave up (a deadline cut it)
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def start(self) -> ScriptedOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """A started :class:`ScriptedOpenAI` on loopback, stopped after the test."""
    server = ScriptedOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
