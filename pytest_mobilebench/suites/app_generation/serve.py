"""Serve a built single-page app on ``127.0.0.1`` with history-API fallback.

A request for an existing file under the bundle gets the file; any other ``GET`` (a client-side route such as
``/profile/settings``) gets ``index.html``, as a production SPA host does. The server runs in a daemon thread
on a free port and is closed by the context manager.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, final
from urllib.parse import unquote, urlsplit

__all__ = ["serve_spa"]


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
