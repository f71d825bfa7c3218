"""Serve a built single-page app on ``127.0.0.1`` with history-API fallback, and keep its page in.

A request for an existing file under the bundle gets the file; any other ``GET`` (a client-side route such as
``/profile/settings``) gets ``index.html``, as a production SPA host does. The server runs in a daemon thread
on a free port and is closed by the context manager. The suite serves only a fresh folder holding the built
files (:func:`stage_files`), so specs, anchors and evidence are never under the served root.

:class:`RequestGuard` (issue 18, item 2) is installed on every browser context that shows the candidate's
page: every request whose origin (scheme, host, port) is not the served app's is aborted by Playwright's
``context.route("**/*")`` (other local ports, outside addresses, any scheme), the app's own requests are
fetched by Playwright's driver (outside the browser, whose network namespace has no interface up) and
fulfilled, every WebSocket is refused
by ``context.route_web_socket`` unless it goes to the app's own origin, and what Chromium refuses by itself
(``file://`` from an ``http`` page: "Not allowed to load local resource") is recorded from the request and
console events. Each refusal is kept as ``{"url", "by"}`` (``by``: ``route``, ``websocket`` or
``browser``), at most :data:`MAX_REFUSED` per guard.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, final
from urllib.parse import unquote, urlsplit

from pytest_mobilebench.runtime.channel import safe_relpath

__all__ = ["MAX_REFUSED", "RequestGuard", "origin_of", "serve_spa", "stage_files"]

#: refusals kept per guard (the rest are counted in ``RequestGuard.dropped``)
MAX_REFUSED: Final[int] = 100
_LOCAL_REFUSAL: Final = re.compile(r"Not allowed to load local resource: (\S+)")
_NOT_NETWORK: Final = ("data:", "blob:", "about:")


def origin_of(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of a URL, the port made explicit for http / https / ws / wss."""
    parts = urlsplit(url)
    default = {"http": 80, "ws": 80, "https": 443, "wss": 443}.get(parts.scheme)
    try:
        port = parts.port or default
    except ValueError:
        port = -1
    return parts.scheme, (parts.hostname or ""), port


@final
class RequestGuard:
    """Refuses and records every request of a browser context that leaves the app's origin (module docstring).

    Args:
        base_url: the served app, e.g. ``http://127.0.0.1:41234``; ``ws://`` to the same host and port is
            the same origin for WebSockets.
    """

    def __init__(self, base_url: str) -> None:
        scheme, host, port = origin_of(base_url)
        self.origin = (scheme, host, port)
        self._ws_origin = ({"http": "ws", "https": "wss"}.get(scheme, scheme), host, port)
        self.refused: list[dict[str, str]] = []
        self.dropped = 0
        self._seen: set[tuple[str, str]] = set()

    def install(self, context: Any) -> Any:
        """Route every request and WebSocket of ``context`` through the guard; returns ``context``."""
        context.route("**/*", self._route)
        context.route_web_socket(re.compile(r".*"), self._websocket)
        context.on("request", self._request)
        context.on("console", self._console)
        return context

    def allowed(self, url: str) -> bool:
        """Whether ``url`` is the app's own origin (or no network at all: ``data:``, ``blob:``, ``about:``)."""
        return url.startswith(_NOT_NETWORK) or origin_of(url) == self.origin

    def _record(self, url: str, by: str) -> None:
        entry = (url[:300], "browser" if by == "browser" else by)
        if entry in self._seen:  # Chromium reports one refused file:// load as a request and a console line
            return
        self._seen.add(entry)
        if len(self.refused) >= MAX_REFUSED:
            self.dropped += 1
            return
        self.refused.append({"url": entry[0], "by": by})

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(_NOT_NETWORK):
            route.continue_()
            return
        if self.allowed(url):
            self._fetch_for(route)
            return
        self._record(url, "route")
        route.abort("blockedbyclient")

    @staticmethod
    def _fetch_for(route: Any) -> None:
        """Answer an own-origin request from outside the browser: Playwright's driver fetches it from the app
        server (redirects handed to the page as they are) and fulfils the page's request, so Chromium itself
        needs no network (it runs in a network namespace of its own, :mod:`.navigation`)."""
        try:
            response = route.fetch(max_redirects=0)
        except Exception:  # noqa: BLE001 - the server is gone (the item is ending): the page sees a failed load
            route.abort("connectionrefused")
            return
        route.fulfill(response=response)

    def _websocket(self, ws: Any) -> None:
        if origin_of(ws.url) == self._ws_origin:
            ws.connect_to_server()
            return
        self._record(ws.url, "websocket")
        ws.close()

    def _request(self, request: Any) -> None:
        url = request.url
        if not url.startswith(("http:", "https:", "ws:", "wss:")) and not self.allowed(url):
            self._record(url, "browser")  # refused by Chromium itself (file://), never routed

    def _console(self, message: Any) -> None:
        found = _LOCAL_REFUSAL.search(str(getattr(message, "text", "")))
        if found:
            self._record(found.group(1), "browser")


def stage_files(files: Mapping[str, bytes], dest: Path) -> Path:
    """Write ``{relative name: bytes}`` into the fresh folder ``dest`` (created; must not exist), every name
    through :func:`~pytest_mobilebench.runtime.channel.safe_relpath`; returns ``dest``.

    Raises:
        FileExistsError: ``dest`` exists. ChannelError: an unsafe name.
    """
    dest.mkdir(parents=True, exist_ok=False)
    for name, data in sorted(files.items()):
        target = dest / safe_relpath(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


@final
class _SpaHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with fallback to ``/index.html`` for paths that are not files; quiet logs; no caching."""

    def send_head(self) -> Any:
        path = unquote(urlsplit(self.path).path)
        local = Path(self.translate_path(path))
        if not local.is_file():
            self.path = "/index.html"
        return super().send_head()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@final
class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def serve_spa(root: Path) -> Iterator[str]:
    """Serve ``root`` (a folder with ``index.html``) and yield its base URL, e.g. ``http://127.0.0.1:41234``.

    Raises:
        FileNotFoundError: ``root/index.html`` is missing.
    """
    if not (root / "index.html").is_file():
        raise FileNotFoundError(f"{root} has no index.html to serve")
    handler = functools.partial(_SpaHandler, directory=str(root))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name=f"spa-{server.server_address[1]}", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
