"""The worker's Chromium and its fresh mobile contexts (split from :mod:`.navigation`, which re-exports them).

Chromium runs with its sandbox on, as an unprivileged user in a network namespace of its own when the harness is
root, on the process's one Playwright driver started in a session of its own; every context is 375x812, touch,
mobile, with a regular mobile user agent, service workers blocked and, with a base URL, a
:class:`~.serve.RequestGuard` refusing every request off the app's origin (``docs/app-generation-containment.md``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, final

from pytest_mobilebench.suites.app_generation.serve import RequestGuard

__all__ = [
    "BROWSER_UID",
    "CHROMIUM_ARGS",
    "CHROMIUM_PATH",
    "MOBILE_UA",
    "VIEWPORT",
    "BrowserHandle",
    "close_browser",
    "launch_browser",
    "mobile_user_agent",
    "new_mobile_context",
    "refused_of",
]

CHROMIUM_PATH: Final = "/usr/bin/chromium"
#: Chromium's own sandbox stays on (Playwright's ``chromium_sandbox=True``); ``AutomationControlled`` off
#: makes ``navigator.webdriver`` false, as in a browser a person runs
CHROMIUM_ARGS: Final = (
    "--disable-blink-features=AutomationControlled",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # ways out that are not requests, so no route sees them (issue 18, item 2): WebRTC sends no UDP (a realm
    # the init script misses), and its constructors and WebTransport's are removed from every frame of a
    # guarded context (:data:`_NO_RAW_SOCKETS`), since TURN-over-TCP would still connect
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
#: run before any script of every frame of a guarded context: WebRTC's constructors (STUN / TURN to any
#: address and port the page names) and WebTransport are deleted from the realm. A worker's realm keeps
#: WebTransport (no init script runs there; ``--disable-quic`` does not stop it): what stops its packets is
#: Chromium's network namespace (:func:`_unprivileged_launcher`; docs/app-generation-containment.md)
_NO_RAW_SOCKETS: Final = """(() => {
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceTransport",
                      "RTCSctpTransport", "RTCRtpSender", "RTCRtpReceiver", "RTCRtpTransceiver", "WebTransport"]) {
    try { delete globalThis[name]; } catch (e) { /* not there in this build */ }
  }
})();"""
#: Playwright's default switch that announces automation (``navigator.webdriver``, the info bar)
_IGNORED_DEFAULT_ARGS: Final = ("--enable-automation",)
#: the regular user agent of Chromium on an Android phone (the reduced form every Chromium sends since 110)
MOBILE_UA: Final = (
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 "
    "Mobile Safari/537.36"
)
#: the unprivileged user Chromium runs as when the harness is root (Chromium's sandbox refuses root)
BROWSER_UID: Final = 65534
#: seed 002 section 4.2 / SPEC section 3: a phone-sized viewport
VIEWPORT: Final = {"width": 375, "height": 812}


_DRIVER: dict[str, Any] = {"pw": None, "users": 0}


@contextlib.contextmanager
def _driver_in_own_session() -> Iterator[None]:
    """Playwright's driver (and so the Chromium it launches) starts in a session of its own.

    A Ctrl-C at a terminal signals the terminal's whole process group: the driver died mid-call and the run
    ended with a stray ``Connection closed while reading from the driver`` traceback after pytest's summary.
    Out of that group, only pytest sees the Ctrl-C; its teardown closes Chromium and stops the driver, and a
    driver whose pytest died sees its stdin close and exits, closing Chromium. Done with ``setsid`` in front of
    Playwright's own Node.js (``PLAYWRIGHT_NODEJS_PATH`` while the driver starts); without ``setsid`` or that
    Node.js, the driver starts as before.
    """
    import playwright

    node = os.environ.get("PLAYWRIGHT_NODEJS_PATH") or str(Path(playwright.__file__).parent / "driver" / "node")
    setsid = shutil.which("setsid")
    if setsid is None or not os.access(node, os.X_OK):
        yield
        return
    folder = Path(tempfile.mkdtemp(prefix="mb-driver-"))
    wrapper = folder / "node"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(setsid)} {shlex.quote(node)} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o700)
    before = os.environ.get("PLAYWRIGHT_NODEJS_PATH")
    os.environ["PLAYWRIGHT_NODEJS_PATH"] = str(wrapper)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PLAYWRIGHT_NODEJS_PATH", None)
        else:
            os.environ["PLAYWRIGHT_NODEJS_PATH"] = before
        shutil.rmtree(folder, ignore_errors=True)


def _driver_acquire() -> Any:
    """The process's one Playwright sync driver (Playwright allows one per thread), reference-counted, in a
    session of its own (:func:`_driver_in_own_session`)."""
    if _DRIVER["pw"] is None:
        from playwright.sync_api import sync_playwright

        with _driver_in_own_session():
            _DRIVER["pw"] = sync_playwright().start()
    _DRIVER["users"] += 1
    return _DRIVER["pw"]


def _driver_release() -> None:
    """Drop one reference; the last one stops the driver (which ends its Chromiums). A stale Ctrl-C raised by
    the stop (see :meth:`BrowserHandle.close`) is dropped: the driver is gone or going either way."""
    _DRIVER["users"] -= 1
    if _DRIVER["users"] <= 0 and _DRIVER["pw"] is not None:
        driver, _DRIVER["pw"], _DRIVER["users"] = _DRIVER["pw"], None, 0
        with contextlib.suppress(Exception, KeyboardInterrupt):
            driver.stop()


_WRAPPER: Final = """#!/bin/sh
# pytest-mobilebench: Chromium as an unprivileged user, its sandbox on (the sandbox refuses root), in a
# network namespace of its own (no interface up: it reaches no port of this host; pages are answered by the
# harness through Playwright's pipe)
dir=/nonexistent
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) dir="${{arg#--user-data-dir=}}"; chown -R {uid}:{uid} "$dir";; esac
done
exec {unshare} --net -- {setpriv} --reuid={uid} --regid={uid} --clear-groups --inh-caps=-all --no-new-privs \\
  /usr/bin/env HOME="$dir" {chromium} "$@"
"""


def _unprivileged_launcher(executable: str, folder: Path) -> str:
    """The executable Playwright starts: ``executable`` itself, or (when this process is root) a wrapper in
    ``folder`` that hands Playwright's profile folder to :data:`BROWSER_UID` and ``exec`` s Chromium as that
    user through ``setpriv``, in a network namespace of its own (``unshare --net``: a worker's WebTransport,
    which no init script reaches, has no interface to send from); the pipe to Playwright is inherited.

    Raises:
        FileNotFoundError: root, and ``setpriv`` / ``unshare`` (util-linux) is not on PATH, or ``unshare
            --net`` is refused here (no ``CAP_SYS_ADMIN``).
    """
    if os.geteuid() != 0:
        return executable
    setpriv, unshare = shutil.which("setpriv"), shutil.which("unshare")
    if setpriv is None or unshare is None:
        raise FileNotFoundError(
            "setpriv and unshare (util-linux) are needed to run Chromium unprivileged, with its "
            "sandbox, in a network namespace of its own"
        )
    probe = subprocess.run([unshare, "--net", "--", "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        raise FileNotFoundError(
            f"unshare --net is refused here ({probe.stderr.strip() or probe.returncode}): Chromium "
            "would share this host's network (needs CAP_SYS_ADMIN)"
        )
    wrapper = folder / "chromium-unprivileged"
    wrapper.write_text(
        _WRAPPER.format(
            uid=BROWSER_UID,
            setpriv=shlex.quote(setpriv),
            unshare=shlex.quote(unshare),
            chromium=shlex.quote(executable),
        ),
        encoding="utf-8",
    )
    wrapper.chmod(0o700)
    return str(wrapper)


@final
class BrowserHandle:
    """One Chromium for a worker process, on the process's shared Playwright driver; relaunches Chromium if
    it died.

    Chromium runs with its sandbox on (never ``--no-sandbox``), as :data:`BROWSER_UID` and in a network
    namespace of its own when this process is root, without Playwright's ``--enable-automation`` and with
    ``AutomationControlled`` off.

    Attributes:
        executable: the Chromium binary (Debian's ``/usr/bin/chromium`` by default).
        launches: how many times Chromium was launched (1 unless it crashed).
    """

    def __init__(self, executable: str = CHROMIUM_PATH, headless: bool = True) -> None:
        self.executable = executable
        self.headless = headless
        self.launches = 0
        self._folder = Path(tempfile.mkdtemp(prefix="mb-chromium-"))
        self._pw: Any = _driver_acquire()
        self._browser: Any = None
        try:
            self._launcher = _unprivileged_launcher(executable, self._folder)
            self.browser()
        except Exception:
            self._pw = None
            _driver_release()
            shutil.rmtree(self._folder, ignore_errors=True)
            raise

    def browser(self) -> Any:
        """The connected ``playwright.sync_api.Browser`` (launched on first use or after a crash)."""
        if self._pw is None:
            raise RuntimeError("the browser handle is closed")
        if self._browser is None or not self._browser.is_connected():
            self._browser = self._pw.chromium.launch(
                executable_path=self._launcher,
                headless=self.headless,
                chromium_sandbox=True,
                args=list(CHROMIUM_ARGS),
                ignore_default_args=list(_IGNORED_DEFAULT_ARGS),
            )
            self.launches += 1
        return self._browser

    def close(self) -> None:
        """Close Chromium and release the driver (idempotent; never raises, also after Ctrl-C).

        A Ctrl-C that lands while a route handler runs (the harness answers every page request from one) is
        kept by Playwright's sync API and raised once more by the next call on the driver, after pytest has
        already handled it: that stale ``KeyboardInterrupt`` must not escape the session's teardown (the run
        would die of the signal, exit -2, instead of ending with its summary and exit 2). The close is tried a
        second time; the driver's stop ends Chromium in any case.
        """
        if self._browser is not None:
            for _attempt in range(2):
                try:
                    self._browser.close()
                    break
                except KeyboardInterrupt:  # the stale one described above: try again
                    continue
                except Exception:  # noqa: BLE001 - already gone
                    break
            self._browser = None
        if self._pw is not None:
            self._pw = None
            _driver_release()
        shutil.rmtree(self._folder, ignore_errors=True)


def launch_browser(executable: str = CHROMIUM_PATH) -> BrowserHandle:
    """Factory for ``ctx.resource("chromium", launch_browser, close_browser)``.

    Raises:
        FileNotFoundError: ``executable`` does not exist (the caller reports an infra error).
    """
    if not Path(executable).exists():
        raise FileNotFoundError(f"Chromium not found at {executable}")
    return BrowserHandle(executable)


def close_browser(handle: BrowserHandle) -> None:
    """Closer for :func:`launch_browser`."""
    handle.close()


def mobile_user_agent(browser: Any) -> str:
    """:data:`MOBILE_UA` for the major version of ``browser`` (``"156.0.8078.114"`` -> ``Chrome/156.0.0.0``)."""
    major = str(getattr(browser, "version", "") or "").split(".")[0]
    return MOBILE_UA.format(major=major if major.isdigit() else "130")


def new_mobile_context(browser: Any, base_url: str | None = None) -> Any:
    """A fresh ``BrowserContext``: 375x812, touch, mobile, service workers blocked, a regular mobile user
    agent; with ``base_url`` a :class:`~.serve.RequestGuard` for that origin is installed and kept as the
    context's ``mb_guard`` attribute (its ``refused`` list is the evidence)."""
    context = browser.new_context(
        viewport=dict(VIEWPORT),
        has_touch=True,
        is_mobile=True,
        service_workers="block",
        user_agent=mobile_user_agent(browser),
    )
    if base_url is not None:
        guard = RequestGuard(base_url)
        guard.install(context)
        context.add_init_script(_NO_RAW_SOCKETS)
        context.mb_guard = guard
    return context


def refused_of(context: Any) -> list[dict[str, str]]:
    """The requests the context's guard refused (``[]`` without a guard)."""
    guard = getattr(context, "mb_guard", None)
    return list(guard.refused) if guard is not None else []
