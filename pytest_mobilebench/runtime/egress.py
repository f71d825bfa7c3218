"""The one way out of an agent sandbox: a harness-run HTTP forwarder to the model endpoint.

A user's agent program (``--mb-agent-command``) runs inside the sandbox and may need the model. Its only
network peer is the relay of :mod:`~pytest_mobilebench.runtime.agent_sandbox` (``127.0.0.1:18080`` in the
sandbox), which pipes bytes to the Unix socket of a :class:`ModelForwarder` in this process. The forwarder
answers plain HTTP and sends on only requests whose path is under the endpoint's own path (``/v1/...`` for
``http://host:port/v1``), to that endpoint's origin, with the harness's API key (the sandbox never holds it)
and only the ``Content-Type`` / ``Accept`` headers of the request. Anything else gets 403 and is counted.

Accounting (what the run page and junit show per item): calls, prompt / completion tokens (the endpoint's
``usage`` of each JSON answer), model seconds. ``budget(tokens_in, tokens_out)`` may name a limit the run
reached (``"agent_token_limit"``...): further requests are answered 429 and the limit is recorded.

Endpoint failures (connection refused, a deadline missed, 5xx) are retried with backoff (0.5 s, 1 s, 2 s ...);
still failing, the request is answered 502 and the failure is recorded in :attr:`ModelForwarder.failures` (the
caller decides it is infrastructure: nothing in the sandbox can make the endpoint refuse connections). A 429 of
the endpoint is passed on after the retries: an agent's pacing is its own. Each attempt is under the deadlines
of :mod:`pytest_mobilebench.http_deadlines` (connect, whole reply: a reply trickled a byte at a time ends at
``timeout_s``), and the seconds of failed attempts and the waits before their retries are counted apart
(:attr:`ForwarderUsage.lost_seconds`): the endpoint's time, not the program's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import http.server
import json
import shutil
import socketserver
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, final
from urllib.parse import urlsplit

import httpcore

from pytest_mobilebench.http_deadlines import AttemptClock, DeadlineBackend, Deadlines

__all__ = ["ForwarderUsage", "ModelForwarder"]


class _Late(Exception):
    """An attempt to the endpoint missed a deadline."""


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


#: the largest request body forwarded and the largest answer read (bytes)
MAX_BODY_BYTES: Final[int] = 8 << 20
MAX_ANSWER_BYTES: Final[int] = 32 << 20


@dataclasses.dataclass
class ForwarderUsage:
    """What went through the forwarder (mutable; read it after the agent ended).

    Attributes:
        calls: requests answered by the endpoint (any status); refused: requests refused by the forwarder
            (outside the endpoint's path, over a limit); tokens_in / tokens_out: the endpoint's ``usage``
            sums; model_seconds: wall seconds spent waiting for the endpoint; limit: the first limit reached;
            lost_seconds / failed_attempts: the seconds of failed attempts (refused, late, 5xx, 429 retried) and
            the waits before their retries, and their number; lost_kind: the last failed attempt's kind.
    """

    calls: int = 0
    refused: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model_seconds: float = 0.0
    limit: str | None = None
    lost_seconds: float = 0.0
    failed_attempts: int = 0
    lost_kind: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    forwarder: ModelForwarder


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _UnixHTTPServer
    protocol_version = "HTTP/1.1"

    def address_string(self) -> str:
        return "sandbox"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self._forward("POST")

    def do_GET(self) -> None:
        self._forward("GET")

    def _forward(self, method: str) -> None:
        fwd = self.server.forwarder
        length = int(self.headers.get("Content-Length") or 0)
        if not fwd.allowed(self.path) or length > MAX_BODY_BYTES or length < 0:
            fwd.count_refused()
            self._answer(403, b'{"error": "the sandbox may reach the model endpoint only"}')
            return
        body = self.rfile.read(length) if length else None
        limit = fwd.limit_reached()
        if limit is not None:
            fwd.count_refused()
            self._answer(429, json.dumps({"error": f"{limit}: the run's limit is reached"}).encode())
            return
        headers = {k: v for k in ("Content-Type", "Accept") if (v := self.headers.get(k))}
        status, content_type, answer = fwd.send(method, self.path, body, headers)
        self._answer(status, answer, content_type)

    def _answer(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@final
class ModelForwarder:
    """A forwarder to ``base_url`` on a Unix socket in a fresh temporary folder (a context manager).

    Args:
        base_url: the OpenAI-compatible endpoint (``http(s)://host[:port]/path``).
        api_key: sent as ``Authorization: Bearer`` (never given to the sandbox); empty for none.
        timeout_s: the reply deadline of one attempt (seconds to the answer's last byte); connect_timeout_s: its
            connect deadline; retries: attempts after the first on failure.
        budget: ``(tokens_in, tokens_out) -> limit name or None``, asked before each request.

    Attributes:
        socket_path: the Unix socket (mode 0666, in a 0755 folder the relay mounts).
        path_prefix: the endpoint's path (``/v1``); the sandbox's base URL keeps it.
        failures: ``[(kind, message)]`` of requests still failing after the retries (``agent_unreachable``,
            ``agent_http_error``).

    Raises:
        ValueError: ``base_url`` is not an http(s) URL with a host.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str = "",
        *,
        timeout_s: float = 120.0,
        retries: int = 3,
        budget: Callable[[int, int], str | None] | None = None,
        connect_timeout_s: float = 10.0,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the model endpoint {base_url!r} is not an http(s) URL with a host")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path_prefix = parts.path.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.retries = max(0, int(retries))
        self.budget = budget
        self.usage = ForwarderUsage()
        self.failures: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._dir = Path(tempfile.mkdtemp(prefix="mobilebench-egress-"))
        self._dir.chmod(0o755)
        self.socket_path = self._dir / "model.sock"
        self._server: _UnixHTTPServer | None = None

    def __enter__(self) -> ModelForwarder:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Listen on :attr:`socket_path` in a daemon thread."""
        server = _UnixHTTPServer(str(self.socket_path), _Handler)
        server.forwarder = self
        self.socket_path.chmod(0o666)
        self._server = server
        threading.Thread(target=server.serve_forever, name="mobilebench-egress", daemon=True).start()

    def close(self) -> None:
        """Stop listening and remove the socket's folder (safe twice)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        shutil.rmtree(self._dir, ignore_errors=True)

    # ------------------------------------------------------------------------------- the handler's side

    def allowed(self, path: str) -> bool:
        """Whether ``path`` (the request target) is under the endpoint's path, with no ``..`` segment."""
        target = path.split("?", 1)[0]
        if not target.startswith("/") or ".." in target.split("/") or "//" in target:
            return False
        return not self.path_prefix or target == self.path_prefix or target.startswith(self.path_prefix + "/")

    def count_refused(self) -> None:
        with self._lock:
            self.usage.refused += 1

    def limit_reached(self) -> str | None:
        with self._lock:
            if self.usage.limit is None and self.budget is not None:
                self.usage.limit = self.budget(self.usage.tokens_in, self.usage.tokens_out)
            return self.usage.limit

    def send(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """``(status, content type, body)`` of the endpoint's answer, retried on connection errors and
        5xx / 429; 502 with the failure recorded when every attempt failed to connect or got 5xx."""
        if self.api_key:
            headers = {**headers, "Authorization": f"Bearer {self.api_key}"}
        failure: tuple[str, str] = ("agent_unreachable", "no attempt")
        for attempt in range(self.retries + 1):
            if attempt:
                wait = min(8.0, 0.5 * 2 ** (attempt - 1))
                time.sleep(wait)
                self._lost(wait, None)
            started = time.monotonic()
            try:
                status, ctype, answer = self._once(method, path, body, headers)
            except _Late as exc:
                failure = ("agent_endpoint_timeout", f"{self.origin}{path}: {exc}")
                self._lost(time.monotonic() - started, failure[0])
                continue
            except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol, OSError) as exc:
                failure = ("agent_unreachable", f"{self.origin}: {type(exc).__name__}: {exc}")
                self._lost(time.monotonic() - started, failure[0])
                continue
            finally:
                with self._lock:
                    self.usage.model_seconds += time.monotonic() - started
            self._account(answer)
            if (status >= 500 or status == 429) and attempt < self.retries:
                self._lost(time.monotonic() - started, "agent_rate_limited" if status == 429 else "agent_http_error")
                continue
            if status < 500:
                return status, ctype, answer
            failure = ("agent_http_error", f"{self.origin}{path}: HTTP {status}")
            break
        with self._lock:
            self.failures.append(failure)
        return 502, "application/json", json.dumps({"error": f"{failure[0]}: {failure[1]}"}).encode()

    def _lost(self, seconds: float, kind: str | None) -> None:
        """Count ``seconds`` lost to the endpoint (a failed attempt of ``kind``, or a wait: ``kind`` None)."""
        with self._lock:
            self.usage.lost_seconds += seconds
            if kind is not None:
                self.usage.failed_attempts += 1
                self.usage.lost_kind = kind

    def _once(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """One attempt under its deadlines (never through the host's proxies).

        Raises:
            _Late: a deadline passed (connect, whole reply).
            httpcore.NetworkError, httpcore.ProtocolError: refused, reset, dropped.
        """
        backend = DeadlineBackend()
        clock = backend.clock = AttemptClock(
            Deadlines(connect_s=min(self.connect_timeout_s, self.timeout_s), reply_s=self.timeout_s)
        )
        try:
            with (
                httpcore.ConnectionPool(ssl_context=_tls(), network_backend=backend, retries=0) as pool,
                pool.stream(method, self.origin + path, headers=list(headers.items()), content=body) as resp,
            ):
                chunks, size = [], 0
                for chunk in resp.iter_stream():
                    chunks.append(chunk[: MAX_ANSWER_BYTES - size])
                    size += len(chunks[-1])
                    if size >= MAX_ANSWER_BYTES:
                        break
                answer = b"".join(chunks)
                ctype = next(
                    (v.decode("latin-1") for k, v in resp.headers if k.lower() == b"content-type"), "application/json"
                )
                return resp.status, ctype, answer
        except httpcore.TimeoutException:
            cut = clock.cut.value if clock.cut is not None else "reply"
            raise _Late(
                f"no complete answer within the {cut} deadline ({clock.bytes_read} bytes in "
                f"{clock.clock() - clock.start:.1f} s)"
            ) from None

    def _account(self, answer: bytes) -> None:
        """Count one answered call and its ``usage`` (an answer that is not JSON counts no tokens)."""
        usage: Any = None
        with contextlib.suppress(ValueError, AttributeError):
            usage = json.loads(answer).get("usage")
        with self._lock:
            self.usage.calls += 1
            if isinstance(usage, dict):
                for key, field in (("prompt_tokens", "tokens_in"), ("completion_tokens", "tokens_out")):
                    value = usage.get(key)
                    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                        setattr(self.usage, field, getattr(self.usage, field) + value)
