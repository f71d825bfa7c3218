"""The agent sandbox (runtime.agent_sandbox) in Docker, on the bundled counter instance: no network at all, the
hidden tests absent, the patch taken (untracked, binary, mode changes) whatever the agent prints or does to
``.git``, what it leaves running stopped, a fork bomb held by the process limit, the disk limit its own outcome,
and with a model route only the harness's forwarder reachable (host ports, outside addresses refused)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from interrupts import interruptible

from pytest_mobilebench import frameworks
from pytest_mobilebench.runtime.base import WorkspaceSpec
from pytest_mobilebench.runtime.egress import ModelForwarder
from pytest_mobilebench.runtime.provider import DockerProvider
from pytest_mobilebench.runtime.agent_sandbox import LABEL_ROLE, AgentSandboxRuntime
from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
COUNTER_2_BASE = "342201a1266bcd3fca3a2fb81139e1746468d728"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]


def _spec(run_id: str) -> WorkspaceSpec:
    return WorkspaceSpec(
        "mobilebench__counter-2",
        "mobilebench/counter",
        COUNTER_2_BASE,
        str(ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"),
        {
            "node": "20.18.0",
            "package_manager": "npm",
            "install": "npm ci --no-audit --no-fund",
            "framework": "react-native",
        },
        run_id,
    )


@pytest.fixture(scope="module")
def runtime() -> AgentSandboxRuntime:
    from pytest_mobilebench.runtime.daemon import connect

    rt = DockerProvider(frameworks.workspace_recipe).runtime(
        {"mb_pids_limit": 128, "mb_mem_limit": "1g"}, "sandbox-tests", client=connect()
    )
    rt.disk_limit = "200m"  # polled (overlay over ext4 has no quota): a writer past it is killed
    assert isinstance(rt, AgentSandboxRuntime)
    return rt


@pytest.fixture()
def sandbox(runtime: AgentSandboxRuntime) -> Iterator:
    box = runtime.agent_sandbox(_spec("sandbox-tests"))
    try:
        yield box
    finally:
        box.close()


class _Endpoint(http.server.BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body.decode()})
        answer = json.dumps({"ok": True, "usage": {"prompt_tokens": 7, "completion_tokens": 3}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture()
def endpoint() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Endpoint.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_the_sandbox_is_the_base_tree_offline_as_the_test_user_without_the_hidden_tests(sandbox) -> None:
    assert sandbox.base_commit == COUNTER_2_BASE
    who = sandbox.run("id -u; pwd; git rev-parse HEAD; ls __tests__", 30)
    assert who.exit_code == 0
    lines = who.output.split()
    assert lines[:3] == ["10001", "/testbed", COUNTER_2_BASE]
    assert "clamp.test.js" not in who.output  # added by the test patch only
    hidden = sandbox.run("cat __tests__/clamp.test.js; git log --all --oneline | wc -l; git cat-file -t 73ff7f2f", 30)
    assert "No such file" in hidden.output and "clamps below" not in hidden.output
    assert hidden.output.split()[-4:-1] != ["73ff7f2f"]  # the fix commit is not in the depth-1 history
    net = sandbox.run(
        "ip -o addr 2>/dev/null | grep -v ' lo ' ; curl -sS -m 5 http://1.1.1.1/ ; "
        "python3 -c 'import socket; socket.create_connection((\"172.17.0.1\", 22), 3)'",
        60,
    )
    assert net.exit_code != 0
    assert "Couldn't connect" in net.output and "Network is unreachable" in net.output


def test_the_patch_is_taken_not_printed_and_tampering_with_git_changes_nothing(sandbox) -> None:
    edit = sandbox.run(
        "printf 'new\\n' > notes.txt && printf '\\x00\\x01\\x02' > blob.bin && chmod +x package.json && "
        "echo '// changed' >> src/counter.js && "
        # the agent's own .git: a moved base tag, an fsmonitor hook printing a fake diff, a commit
        "git tag -f mobilebench-base HEAD~0 && git config core.fsmonitor 'echo diff --git a/x b/x' && "
        "git -c user.name=a -c user.email=a@b add -A && git -c user.name=a -c user.email=a@b commit -qm agent && "
        "git tag -f mobilebench-base HEAD && echo 'diff --git a/fake b/fake'",
        60,
    )
    assert edit.exit_code == 0, edit.output
    taken = sandbox.take_patch()
    assert taken.error is None and not taken.too_large
    files = [line.split(" b/")[-1] for line in taken.patch.splitlines() if line.startswith("diff --git")]
    assert sorted(files) == ["blob.bin", "notes.txt", "package.json", "src/counter.js"]
    assert "GIT binary patch" in taken.patch and "new mode 100755" in taken.patch and "fake" not in taken.patch


def test_an_unreadable_file_and_a_leftover_process_do_not_stop_the_taking(sandbox) -> None:
    run = sandbox.run(
        "echo secret > hidden.txt && chmod 000 hidden.txt && "
        "(nohup sh -c 'while :; do echo late >> src/counter.js; sleep 0.2; done' >/dev/null 2>&1 &) ; "
        "echo started",
        30,
    )
    assert run.exit_code == 0
    first = sandbox.take_patch()
    second = sandbox.take_patch()
    assert "hidden.txt" in first.patch and "+secret" in first.patch
    assert first.patch == second.patch  # the writer was stopped before the first take


def test_a_timeout_ends_the_command_not_the_sandbox_and_a_fork_bomb_is_held(sandbox) -> None:
    slow = sandbox.run("sleep 60", 2)
    assert slow.timed_out and slow.exit_code is None or slow.exit_code in (124, 137)
    bomb = sandbox.run("b() { b | b & }; b", 5)
    assert bomb.timed_out or "Resource temporarily unavailable" in bomb.output
    after = sandbox.run("echo alive", 30)
    assert after.exit_code == 0 and after.output.strip().endswith("alive")


def test_filling_the_disk_is_the_commands_outcome(sandbox) -> None:
    fill = sandbox.run("head -c 400M /dev/zero > big.bin; sleep 10", 60)
    assert fill.exit_code is None and "disk limit" in fill.output
    assert sandbox.run("rm -f big.bin; echo ok", 30).output.strip().endswith("ok")


def test_a_large_patch_is_refused_as_too_large(sandbox) -> None:
    assert sandbox.run("head -c 300000 /dev/urandom | base64 > big.txt", 30).exit_code == 0
    taken = sandbox.take_patch(max_bytes=100_000)
    assert taken.too_large and taken.patch == "" and taken.size_bytes == 100_001


def test_with_a_model_route_only_the_forwarder_is_reachable(runtime, endpoint: str) -> None:
    port = endpoint.split(":")[2].split("/")[0]
    with ModelForwarder(endpoint, "sk-harness-only") as fwd:
        box = runtime.agent_sandbox(_spec("sandbox-tests"), forwarder=fwd)
        try:
            assert box.model_url == "http://127.0.0.1:18080/v1"
            ok = box.run(
                f"curl -sS -m 10 -d '{{\"q\": 1}}' -H 'Content-Type: application/json' "
                f"{box.model_url}/chat/completions",
                60,
            )
            assert '"ok": true' in ok.output
            refused = box.run(  # one stream: stdout and stderr read apart can arrive in either order
                f"exec 2>&1; curl -sS -m 5 http://127.0.0.1:{port}/v1/chat/completions; "  # the endpoint's own address
                "curl -sS -m 5 http://172.17.0.1:2375/ ; curl -sS -m 5 http://1.1.1.1/ ; "  # host, outside
                "curl -sS -m 5 -o /dev/null -w '%{http_code}\\n' -d x http://127.0.0.1:18080/admin; "  # off the path
                "curl -sS -m 5 -o /dev/null -w '%{http_code}\\n' -d x 'http://127.0.0.1:18080/v1/../admin'; "
                "env | grep -c sk-harness-only",
                120,
            )
            assert refused.output.count("Couldn't connect") + refused.output.count("unreachable") >= 3, refused.output
            assert refused.output.split()[-3:] == ["403", "403", "0"], refused.output
        finally:
            box.close()
        names = {
            c.labels.get(LABEL_ROLE)
            for c in runtime.client.containers.list(all=True, filters={"label": f"mobilebench.owner={runtime.owner}"})
        }
        assert not names & {"agent", "relay"}  # both removed
    assert [s["auth"] for s in _Endpoint.seen] == ["Bearer sk-harness-only"]
    assert _Endpoint.seen[0]["path"] == "/v1/chat/completions" and fwd.usage.calls == 1
    assert (fwd.usage.tokens_in, fwd.usage.tokens_out, fwd.usage.refused) == (7, 3, 2)


_INTERRUPTED = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import test_agent_sandbox_docker as t
from pytest_mobilebench import frameworks
from pytest_mobilebench.runtime.daemon import connect
from pytest_mobilebench.runtime.provider import DockerProvider
rt = DockerProvider(frameworks.workspace_recipe).runtime({}, sys.argv[2], client=connect())
box = rt.agent_sandbox(t._spec(sys.argv[2]))
try:
    print("RUNNING", flush=True)
    box.run("sleep 120", 150)
finally:
    box.close()
"""


def test_ctrl_c_during_a_command_removes_the_sandbox(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from pytest_mobilebench.runtime.daemon import connect

    run_id = f"sandbox-sigint-{time.time_ns()}"
    proc = interruptible(
        [sys.executable, "-c", _INTERRUPTED, str(Path(__file__).parent), run_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "RUNNING"
    client = connect()
    assert client.containers.list(filters={"label": f"mobilebench.run_id={run_id}"})
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert "KeyboardInterrupt" in err
    assert client.containers.list(all=True, filters={"label": f"mobilebench.run_id={run_id}"}) == []
