"""The one client of an OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint (live agents, the planner).

Request: ``{"model", "messages", "tools"?, "tool_choice": "auto"?}`` with ``Authorization: Bearer <api_key>`` when a
key is given. A reply counts when it is JSON whose ``choices[0].message`` is an object.

Retries (:func:`chat`): a refused or dropped connection, a request timeout, HTTP 5xx and HTTP 429 are retried up
to ``Endpoint.retries`` times, waiting ``backoff_s * 2**attempt`` seconds (capped at :data:`MAX_BACKOFF_S`, plus
up to 10% jitter), or the server's ``Retry-After`` (seconds or an HTTP date, capped at :data:`MAX_RETRY_AFTER_S`)
for 429 and 503. Each failed attempt is reported to ``on_retry`` before the wait (the trajectory records it).
Any other 4xx (401 bad key, 404 no such model, 400 a request the server refuses) is not retried. After the last
attempt the failure is an :class:`AgentInfraError`: an infrastructure outcome, never the model's score.

Deadlines (:mod:`.deadlines`): each attempt must connect within ``connect_timeout_s``, get the reply's first byte
within ``first_byte_timeout_s`` and its last byte within ``timeout_s`` of its start, whatever pace the server
keeps (a reply trickled one byte at a time ends at the deadline); a late endpoint is ``agent_endpoint_timeout``,
retried like a dropped connection. The caller's own bound (``cap``: the agent's wall time) cuts an attempt too,
raising :class:`CapReached` (the caller's outcome).
"""

from __future__ import annotations

import dataclasses
import email.utils
import functools
import json
import random
import ssl
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import httpcore

from pytest_mobilebench.http_deadlines import AttemptClock, Cut, DeadlineBackend, Deadlines
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

__all__ = [
    "CHECK_MESSAGE",
    "AgentInfraError",
    "Attempt",
    "CapReached",
    "Completion",
    "Endpoint",
    "chat",
    "check",
    "retry_wait",
]

MAX_BACKOFF_S: Final = 30.0
MAX_RETRY_AFTER_S: Final = 120.0
#: the largest response body read (a chat completion is kilobytes; a runaway proxy page is not read whole)
MAX_BODY_BYTES: Final = 32 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where the model lives.

    Attributes:
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended).
        model: the model name sent in every request.
        api_key: the bearer key (from ``MOBILEBENCH_AGENT_API_KEY``; empty: no ``Authorization`` header).
        timeout_s: the reply deadline: seconds from an attempt's start to the reply's last byte.
        retries: attempts after the first for a retryable failure (0: no retry).
        backoff_s: the first wait between attempts, doubled each time.
        connect_timeout_s: the connect deadline of an attempt (TCP and TLS), seconds.
        first_byte_timeout_s: seconds from the request sent to the reply's first byte (None: only the reply
            deadline bounds it; a non-streaming endpoint sends nothing until the model is done).
    """

    base_url: str
    model: str
    api_key: str = dataclasses.field(default="", repr=False)  # never in a repr, a log line or a traceback
    timeout_s: float = 120.0
    retries: int = 3
    backoff_s: float = 1.0
    connect_timeout_s: float = 10.0
    first_byte_timeout_s: float | None = None

    @property
    def deadlines(self) -> Deadlines:
        """The deadlines of one attempt (:mod:`.deadlines`)."""
        return Deadlines(min(self.connect_timeout_s, self.timeout_s), self.first_byte_timeout_s, self.timeout_s)

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


class AgentInfraError(InfraError):
    """The endpoint failed (not the model's decision) after the retries; ``kind`` is an ``InfraKind`` value
    (``agent_unreachable``, ``agent_endpoint_timeout``, ``agent_http_error``, ``agent_rate_limited``,
    ``agent_bad_response``); ``attempts`` lists every failed attempt."""

    def __init__(self, kind: InfraKind, message: str, attempts: Sequence[Attempt] = ()) -> None:
        super().__init__(kind, message)
        self.attempts = tuple(attempts)


class CapReached(Exception):
    """The caller's cap (``chat(cap=...)``) ended an attempt after ``seconds``: the caller's outcome, not the
    endpoint's failure."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the caller's time ran out {seconds:.1f} s into a model call")
        self.seconds = seconds


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One failed attempt: its number (1-based), what failed, the HTTP status (None: no response), the wait
    before the next attempt in seconds (None: no further attempt), and the seconds the attempt took."""

    number: int
    kind: InfraKind
    error: str
    status: int | None
    wait_s: float | None
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.number,
            "kind": self.kind.value,
            "error": self.error,
            "status": self.status,
            "wait_s": self.wait_s,
            "seconds": round(self.seconds, 3),
        }


@dataclasses.dataclass(frozen=True)
class Completion:
    """A chat completion: the assistant ``message`` (``choices[0].message``), the token counts of its
    ``usage`` block (0 when absent; ``usage_reported`` False then), the seconds of the successful attempt, the
    failed attempts before it, and the whole decoded body."""

    message: dict[str, Any]
    tokens_in: int
    tokens_out: int
    usage_reported: bool
    seconds: float
    attempts: tuple[Attempt, ...]
    body: dict[str, Any]


class _Failure(Exception):
    def __init__(
        self,
        kind: InfraKind,
        error: str,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool = True,
        body: bytes = b"",
        no_connection: bool = False,
    ) -> None:
        super().__init__(error)
        self.kind, self.error, self.status, self.retry_after, self.retryable = (
            kind,
            error,
            status,
            retry_after,
            retryable,
        )
        self.body, self.no_connection = body, no_connection


def _retry_after(value: str | None, now: float) -> float | None:
    """``Retry-After`` as seconds to wait: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now) if when.tzinfo is not None else None


def retry_wait(endpoint: Endpoint, attempt: int, retry_after: float | None) -> float:
    """Seconds before retry ``attempt`` (0-based): the server's ``Retry-After`` when given (capped at
    :data:`MAX_RETRY_AFTER_S`), else ``backoff_s * 2**attempt`` capped at :data:`MAX_BACKOFF_S`, plus <= 10%
    jitter (so parallel workers do not retry in lockstep)."""
    if retry_after is not None:
        return min(retry_after, MAX_RETRY_AFTER_S)
    base = min(endpoint.backoff_s * (2**attempt), MAX_BACKOFF_S)
    return base * (1.0 + 0.1 * random.random())


def _decode(status: int, body: bytes, url: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise _Failure(
            InfraKind.AGENT_BAD_RESPONSE,
            f"{url}: HTTP {status} but not a chat completion: {body[:200]!r}",
            status,
            retryable=False,
        ) from None
    if not isinstance(message, dict):
        raise _Failure(
            InfraKind.AGENT_BAD_RESPONSE, f"{url}: choices[0].message is not an object", status, retryable=False
        )
    return data  # type: ignore[no-any-return]


def _read(response: httpcore.Response, url: str) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _Failure(
                InfraKind.AGENT_BAD_RESPONSE,
                f"{url}: response body over {MAX_BODY_BYTES} bytes",
                response.status,
                retryable=False,
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _late(endpoint: Endpoint, clock: AttemptClock) -> _Failure | CapReached:
    """The failure of an attempt a deadline ended: the caller's cap, or the endpoint late (which deadline)."""
    cut = clock.cut or Cut.REPLY
    seconds = clock.clock() - clock.start
    if cut is Cut.CAP:
        return CapReached(seconds)
    what = {
        Cut.CONNECT: "no connection",
        Cut.FIRST_BYTE: "no first byte of the reply",
        Cut.REPLY: "the reply not complete",
    }[cut]
    return _Failure(
        InfraKind.AGENT_ENDPOINT_TIMEOUT,
        f"{endpoint.url}: {what} within the {cut.value} deadline "
        f"({endpoint.deadlines.seconds(cut)} s; {clock.bytes_read} bytes received in {seconds:.1f} s)",
    )


def _attempt(
    pool: httpcore.ConnectionPool | httpcore.HTTPProxy,
    endpoint: Endpoint,
    payload: Mapping[str, Any],
    clock: AttemptClock,
) -> dict[str, Any]:
    url = endpoint.url
    content = json.dumps(payload).encode()
    headers = [(b"Content-Type", b"application/json")]  # httpcore adds Host and Content-Length
    if endpoint.api_key:
        headers.append((b"Authorization", f"Bearer {endpoint.api_key}".encode()))
    try:
        with pool.stream("POST", url, headers=headers, content=content) as response:
            body = _read(response, url)
    except httpcore.TimeoutException:
        raise _late(endpoint, clock) from None
    except httpcore.ConnectError as exc:  # refused, no such host
        raise _Failure(InfraKind.AGENT_UNREACHABLE, f"{url}: {type(exc).__name__}: {exc}", no_connection=True) from None
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError) as exc:  # reset, dropped
        raise _Failure(InfraKind.AGENT_UNREACHABLE, f"{url}: {type(exc).__name__}: {exc}") from None
    except httpcore.UnsupportedProtocol as exc:
        raise _Failure(InfraKind.AGENT_UNREACHABLE, f"{url}: {exc}", retryable=False, no_connection=True) from None
    status = response.status
    if status == 429 or status >= 500:
        kind = InfraKind.AGENT_RATE_LIMITED if status == 429 else InfraKind.AGENT_HTTP_ERROR
        after = _retry_after(_header(response, b"retry-after"), time.time()) if status in (429, 503) else None
        raise _Failure(kind, f"{url}: HTTP {status}: {body[:200]!r}", status, after, body=body)
    if status >= 400:
        raise _Failure(
            InfraKind.AGENT_HTTP_ERROR,
            f"{url}: HTTP {status} (not retried): {body[:200]!r}",
            status,
            retryable=False,
            body=body,
        )
    return _decode(status, body, url)


def _header(response: httpcore.Response, name: bytes) -> str | None:
    return next((v.decode("latin-1") for k, v in response.headers if k.lower() == name), None)


def _pool(endpoint: Endpoint, backend: DeadlineBackend) -> httpcore.ConnectionPool | httpcore.HTTPProxy:
    """A connection pool over ``backend``, through the environment's proxy for the endpoint's URL when one is set
    (``https_proxy`` / ``http_proxy``, ``no_proxy`` honoured)."""
    scheme = urllib.parse.urlsplit(endpoint.url)
    proxy = urllib.request.getproxies_environment().get(scheme.scheme)
    if proxy and not urllib.request.proxy_bypass_environment(scheme.hostname or ""):
        return httpcore.HTTPProxy(proxy_url=proxy, ssl_context=_tls(), network_backend=backend, retries=0)
    return httpcore.ConnectionPool(ssl_context=_tls(), network_backend=backend, retries=0)


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    """One TLS context per process (the system's trust store, ``$SSL_CERT_FILE`` honoured): building one per
    request costs a tenth of a second."""
    return ssl.create_default_context()


def _count(usage: Any, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def chat(
    endpoint: Endpoint,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    on_retry: Callable[[Attempt], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    cap: Callable[[], float | None] | None = None,
) -> Completion:
    """One chat completion, retried as the module docstring says.

    Args:
        cap: called before each attempt: the seconds the caller may still spend (None: no bound); an attempt is
            cut there, whichever of its deadlines comes first.

    Raises:
        AgentInfraError: the endpoint failed after the retries (or at once for a non-retryable failure).
        CapReached: the caller's cap ended an attempt (the caller's outcome; earlier failed attempts were
            reported to ``on_retry``).
    """
    payload: dict[str, Any] = {"model": endpoint.model, "messages": list(messages)}
    if tools:
        payload.update(tools=list(tools), tool_choice="auto")
    failed: list[Attempt] = []
    number = 0
    backend = DeadlineBackend()
    with _pool(endpoint, backend) as pool:
        while True:
            number += 1
            left = cap() if cap is not None else None
            clock = backend.clock = AttemptClock(endpoint.deadlines, None if left is None else time.monotonic() + left)
            try:
                body = _attempt(pool, endpoint, payload, clock)
            except _Failure as exc:
                last = not exc.retryable or number > endpoint.retries
                wait = None if last else retry_wait(endpoint, number - 1, exc.retry_after)
                failed.append(Attempt(number, exc.kind, exc.error, exc.status, wait, time.monotonic() - clock.start))
                if on_retry is not None:
                    on_retry(failed[-1])
                if wait is None:
                    tried = f" (after {number} attempts)" if number > 1 else ""
                    raise AgentInfraError(exc.kind, exc.error + tried, failed) from None
                sleep(wait)
                continue
            usage = body.get("usage")
            tokens_in, tokens_out = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
            return Completion(
                body["choices"][0]["message"],
                tokens_in or 0,
                tokens_out or 0,
                tokens_in is not None and tokens_out is not None,
                time.monotonic() - clock.start,
                tuple(failed),
                body,
            )


#: the one message of the endpoint check (:func:`check`); scripted test servers answer it apart from their script
CHECK_MESSAGE: Final = "mobilebench endpoint check: reply with the word ok."


def check(endpoint: Endpoint) -> str | None:
    """One chat request (:data:`CHECK_MESSAGE`, no tools, no retry) telling a wrong endpoint configuration from
    an endpoint that is only unwell, before a live run starts.

    Returns:
        None when the endpoint answered a chat completion; else a note naming a failure that may pass (5xx,
        429, a deadline missed, a dropped reply, a body that is not a completion): the run goes on and its
        items retry as usual.

    Raises:
        ValueError: the configuration is wrong, the message naming what: the URL (no connection, a scheme
            that is not http(s), HTTP 404 not about the model), the key (HTTP 401 / 403) or the model (HTTP
            404 or 400 whose body names it).
    """
    backend = DeadlineBackend()
    with _pool(endpoint, backend) as pool:
        backend.clock = AttemptClock(endpoint.deadlines)
        try:
            _attempt(
                pool,
                endpoint,
                {"model": endpoint.model, "messages": [{"role": "user", "content": CHECK_MESSAGE}]},
                backend.clock,
            )
        except _Failure as exc:
            return _judge(endpoint, exc)
    return None


def _judge(endpoint: Endpoint, failure: _Failure) -> str | None:
    """:func:`check`'s verdict on one failed request (see there)."""
    said = failure.body[:300].decode("utf-8", "replace")
    about_model = endpoint.model in said or "model" in said.lower()
    if failure.no_connection:
        raise ValueError(
            f"--mb-agent-base-url {endpoint.base_url}: no connection ({failure.error}); is the URL right "
            "and the server up?"
        )
    if failure.status in (401, 403):
        raise ValueError(
            f"the endpoint refused the key (HTTP {failure.status} from {endpoint.url}): check "
            f"$MOBILEBENCH_AGENT_API_KEY; it said: {said}"
        )
    if failure.status == 404 and not about_model:
        raise ValueError(
            f"--mb-agent-base-url {endpoint.base_url}: {endpoint.url} answered HTTP 404 (no chat "
            f"completions there; the URL should end at the API root, e.g. .../v1); it said: {said}"
        )
    if failure.status in (400, 404) and about_model:
        raise ValueError(
            f"--mb-agent-model {endpoint.model!r}: the endpoint refused the model (HTTP "
            f"{failure.status} from {endpoint.url}); it said: {said}"
        )
    return f"the endpoint check failed in a way that may pass ({failure.kind.value}): {failure.error}"
