"""A scripted model for live issue-resolution runs: one script per instance, chosen by a marker in the prompt.

Several agents talk to it at once under ``-n 2``; each request's conversation says which instance it is (a
marker of the problem statement in its first user message) and how far it got (the number of assistant
messages in it), so each agent gets its own script's next turn whatever the interleaving, and a retried request
gets the same turn again. ``failures[marker] = N`` answers that instance's next N requests with HTTP 500.
``trials[marker] = [script, ...]``: the n-th conversation of that instance (``--mb-trials``: one per trial) follows
the n-th script (the last one past the end); a later request finds its script by its first assistant turn, so
the scripts' first turns must differ.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scripted_openai import Turn, error, is_check, text

__all__ = ["ByInstance", "by_instance", "git_diff", "heredoc_patch"]


class ByInstance:
    """The server: ``scripts[marker] = [Turn, ...]``; ``loop`` = markers whose last turn repeats forever."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Turn]] = {}
        self.failures: dict[str, int] = {}
        self.loop: set[str] = set()
        self.trials: dict[str, list[list[Turn]]] = {}
        self._started: dict[str, int] = {}
        self.requests: list[tuple[str, int]] = []
        self.auth: list[str | None] = []
        self.checks = 0  # the endpoint checks of live runs (answered "ok", apart from the scripts)
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def turn_for(self, payload: dict[str, Any]) -> Turn:
        messages = payload.get("messages") or []
        first = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        step = sum(1 for m in messages if m.get("role") == "assistant")
        with self._lock:
            marker = next((m for m in [*self.scripts, *self.trials] if m in first), None)
            self.requests.append((marker or "?", step))
            if marker is None:
                return error(400, b'{"error": {"message": "no script for this prompt"}}')
            if self.failures.get(marker, 0) > 0:
                self.failures[marker] -= 1
                return error(500)
            script = self._trial_script(marker, messages, step) if marker in self.trials else self.scripts[marker]
            if step < len(script):
                return script[step]
            return script[-1] if marker in self.loop else text("I am done.")

    def _trial_script(self, marker: str, messages: list[dict[str, Any]], step: int) -> list[Turn]:
        scripts = self.trials[marker]
        if step == 0:
            started = self._started.get(marker, 0)
            self._started[marker] = started + 1
            return scripts[min(started, len(scripts) - 1)]
        said = next(m for m in messages if m.get("role") == "assistant")
        return next(s for s in scripts if _calls_of(s[0].body["choices"][0]["message"]) == _calls_of(said))  # type: ignore[index]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"
                payload = json.loads(raw)
                if is_check(raw):
                    server.checks += 1
                    turn = text("ok")
                else:
                    server.auth.append(self.headers.get("Authorization"))
                    turn = server.turn_for(payload) if self.path.endswith("/chat/completions") else error(404)
                body = turn.encoded()
                self.send_response(turn.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        return Handler

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def by_instance() -> Iterator[ByInstance]:
    server = ByInstance()
    try:
        yield server
    finally:
        server.stop()


def git_diff(repo: Path, base: str, fix: str, *paths: str) -> str:
    """``git diff base fix -- paths`` of a local repository (a bundle or a mirror)."""
    return subprocess.run(
        ["git", "diff", base, fix, "--", *paths], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def heredoc_patch(diff: str) -> str:
    """A shell command writing ``diff`` with a quoted heredoc and applying it with ``patch -p1``."""
    assert "MB_EOF" not in diff
    return f"cat > /tmp/fix.diff <<'MB_EOF'\n{diff}MB_EOF\npatch -p1 < /tmp/fix.diff"


def _calls_of(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """An assistant message's tool calls as ``(name, parsed arguments)``."""
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]
