"""Live issue resolution without Docker: the predictions file under concurrent writers, the summary's agent
table, the run page's transcripts (escaped), the live model's options, and the forwarder's rules (only the
endpoint's path, the key added by the harness, retries of 5xx, failures to connect recorded, limits)."""

from __future__ import annotations

import http.client
import http.server
import json
import multiprocessing
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mobilebench.agents.records import agent_table, append_prediction, transcript
from pytest_mobilebench.predictions import load_predictions
from pytest_mobilebench.report.transcripts import transcripts_section
from pytest_mobilebench.runtime.egress import ModelForwarder
from pytest_mobilebench.suites.issue_resolution import SUITE
from pytest_mobilebench.suites.issue_resolution.evaluation import EVALUATOR
from pytest_mobilebench.suites.issue_resolution.live import live_model


def _writer(folder: str, worker: int) -> None:
    for i in range(20):
        append_prediction(
            Path(folder),
            {"instance_id": f"i-{i}", "model_name_or_path": f"m{worker}", "model_patch": f"diff {worker} {i}\n" * 50},
        )


def test_the_predictions_file_takes_concurrent_writers_and_one_line_per_instance_and_model(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    append_prediction(tmp_path, {"instance_id": "i-0", "model_name_or_path": "m0", "model_patch": "again"})
    rows = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 60
    assert {(r["instance_id"], r["model_name_or_path"]) for r in rows} == {
        (f"i-{i}", f"m{w}") for i in range(20) for w in range(3)
    }
    assert [r["model_patch"] for r in rows if (r["instance_id"], r["model_name_or_path"]) == ("i-0", "m0")] == ["again"]
    loaded = load_predictions([str(tmp_path / "predictions.jsonl")])  # the file is a valid predictions file
    assert loaded.get("i-3", "m2", "issue_resolution").model_patch.startswith("diff 2 3")


def test_the_live_model_names_the_missing_options() -> None:
    assert live_model({"mb_agent_base_url": "http://h/v1", "mb_agent_model": "m"}) == "m"
    assert live_model({"mb_agent_command": "python3 agent.py"}) == "agent-command"
    assert SUITE.live_model({"mb_agent_command": "x", "mb_agent_model": "mine"}) == "mine"
    with pytest.raises(ValueError, match=r"live mode needs --mb-agent-model \(or \$MOBILEBENCH_AGENT_MODEL\)"):
        SUITE.live_model({"mb_agent_base_url": "http://h/v1"})


def _live_result(iid: str, end: str, usage: dict, reason: str = "unresolved") -> dict:
    return {
        "instance_id": iid,
        "model_name_or_path": "m",
        "reason": reason,
        "suite": "issue_resolution",
        "repo": "r",
        "framework": "react-native",
        "agent": {
            "mode": "builtin",
            "end": end,
            "usage": usage,
            "submission": "<b>all tests pass</b>",
            "transcript": [{"step": 1, "role": "tool", "text": "$ cat x\n<script>alert(1)</script>", "exit_code": 0}],
            "diff": "diff --git a/x b/x\n+<img src=x onerror=alert(1)>",
        },
    }


def test_the_agent_table_counts_ends_and_sums_usage() -> None:
    a = _live_result(
        "a",
        "submitted",
        {"calls": 3, "steps": 3, "tokens_in": 100, "tokens_out": 10, "model_seconds": 1.5, "cost_usd": 0.01},
        "resolved",
    )
    b = _live_result(
        "b",
        "agent_step_limit",
        {"calls": 5, "steps": 5, "tokens_in": 300, "tokens_out": 30, "model_seconds": 2.5, "cost_usd": None},
    )
    table = agent_table([a, b, {"instance_id": "c", "reason": "resolved"}])
    assert table is not None
    assert table["items"] == 2 and table["ends"] == {"agent_step_limit": 1, "submitted": 1}
    assert (table["total_calls"], table["total_tokens_in"], table["mean_tokens_out"]) == (8, 400, 20)
    assert table["total_cost_usd"] == 0.01 and table["priced_items"] == 1
    assert agent_table([{"instance_id": "c"}]) is None
    assert "agent" in SUITE.summarize([a, b]) and "agent" not in SUITE.summarize(
        [{"instance_id": "c", "repo": "r", "framework": "f"}]
    )


def test_the_transcript_section_escapes_the_agents_text() -> None:
    page = transcripts_section(
        [_live_result("a<b>", "submitted", {"calls": 1, "tokens_in": 5, "tokens_out": 1})],
        anchor="t",
        row_href=lambda i, m: f"#row-{i}",
    )
    assert "<script>" not in page and "<img" not in page and "<b>all" not in page
    assert "&lt;script&gt;" in page and "a&lt;b&gt;" in page and "cost unpriced" in page
    assert page.count("<details") == 2  # the item, its diff
    assert transcripts_section([{"instance_id": "x"}], anchor="t") == ""


def test_a_torn_or_missing_trajectory_still_renders(tmp_path: Path) -> None:
    assert transcript(tmp_path / "none.jsonl") == []
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"step": 1, "role": "tool", "command": "ls", "output": "a\n", "exit_code": 0})
        + "\n"
        + json.dumps(
            {"step": 2, "role": "assistant", "message": "done", "tool_calls": [{"name": "submit", "arguments": "{}"}]}
        )
        + '\n{"step": 3, "ro'
    )
    shown = transcript(path)
    assert [s["role"] for s in shown] == ["tool", "assistant"]
    assert shown[0]["text"] == "$ ls\na\n" and shown[0]["exit_code"] == 0 and "-> submit({})" in shown[1]["text"]


# ------------------------------------------------------------------------------------------ the forwarder


class _Upstream(http.server.BaseHTTPRequestHandler):
    fail_first = 0
    seen: list[tuple[str, str | None, str | None]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        cls = type(self)
        cls.seen.append((self.path, self.headers.get("Authorization"), self.headers.get("X-Agent")))
        if cls.fail_first > 0:
            cls.fail_first -= 1
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps({"usage": {"prompt_tokens": 40, "completion_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture()
def upstream() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Upstream.seen, _Upstream.fail_first = [], 0
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("sandbox", timeout=30)
        self._path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self._path)


def _post(fwd: ModelForwarder, path: str, headers: dict | None = None) -> int:
    conn = _UnixConnection(fwd.socket_path)
    conn.request("POST", path, body=b"{}", headers={"Content-Type": "application/json", **(headers or {})})
    status = conn.getresponse().status
    conn.close()
    return status


def test_the_forwarder_sends_only_the_endpoints_path_with_the_harness_key(upstream: str) -> None:
    with ModelForwarder(upstream, "sk-real", retries=0) as fwd:
        assert _post(fwd, "/v1/chat/completions", {"Authorization": "Bearer sk-agent", "X-Agent": "1"}) == 200
        for path in ("/admin", "/v1/../admin", "/v10/x", "//evil/v1/x", "http://evil/v1/x"):
            assert _post(fwd, path) == 403, path
    assert _Upstream.seen == [("/v1/chat/completions", "Bearer sk-real", None)]
    assert (fwd.usage.calls, fwd.usage.refused, fwd.usage.tokens_in, fwd.usage.tokens_out) == (1, 5, 40, 2)
    assert not fwd.socket_path.parent.exists()  # closed: the socket's folder is gone


def test_the_forwarder_retries_5xx_and_records_what_never_connected(upstream: str) -> None:
    _Upstream.fail_first = 2
    with ModelForwarder(upstream, retries=2) as fwd:
        assert _post(fwd, "/v1/chat/completions") == 200
    assert len(_Upstream.seen) == 3 and fwd.failures == []
    with ModelForwarder("http://127.0.0.1:9/v1", retries=1) as dead:
        assert _post(dead, "/v1/chat/completions") == 502
    assert [kind for kind, _ in dead.failures] == ["agent_unreachable"]


def test_the_forwarder_refuses_past_the_runs_limit(upstream: str) -> None:
    budget = lambda tokens_in, tokens_out: "agent_token_limit" if tokens_in + tokens_out >= 80 else None
    with ModelForwarder(upstream, retries=0, budget=budget) as fwd:
        assert [_post(fwd, "/v1/chat/completions") for _ in range(3)] == [200, 200, 429]
    assert fwd.usage.limit == "agent_token_limit" and fwd.usage.calls == 2
    with pytest.raises(ValueError, match="not an http"):
        ModelForwarder("file:///etc/passwd")


def _counter_1():
    from pytest_mobilebench.manifest.yamlfile import read_yaml

    manifest = Path(__file__).resolve().parents[1] / "cases" / "examples" / "mobilebench__counter.yaml"
    (record,) = [r for r in SUITE.load(manifest, read_yaml(manifest)) if r.instance_id.endswith("-1")]
    return record


class _Ctx:
    def __init__(self, tmp: Path, runtime: object) -> None:
        self.run_id, self.evidence_dir, self.options = "run-x", tmp / "run-x" / "m" / "i", {}
        self.evidence_dir.mkdir(parents=True)
        self._runtime = runtime

    def fixture(self, name: str) -> object:
        assert name == "mb_runtime"
        return self

    def get(self, *, trusted: bool = False) -> object:
        return self._runtime

    def progress(self, message: str) -> None:
        return None


def test_a_runtime_without_sandboxes_is_infrastructure_and_a_huge_patch_is_the_policys(tmp_path: Path) -> None:
    from pytest_mobilebench.agents.records import patch_row
    from pytest_mobilebench.predictions import Prediction, PredictionKind
    from pytest_mobilebench.runtime.agent_sandbox import TakenPatch

    class LocalLike:
        name = "local"

    record = _counter_1()
    result = SUITE.produce_live(
        record, Prediction(record.instance_id, "m", PredictionKind.LIVE), _Ctx(tmp_path, LocalLike())
    )
    assert isinstance(result, dict)  # no candidate: the item's result, never an evaluation
    assert (result["reason"], result["infra_kind"], result["retryable"]) == (
        "infra_error",
        "platform_unavailable",
        True,
    )
    taken = TakenPatch("", "abc", (1 << 20) + 1, too_large=True, max_bytes=1 << 20)
    row = patch_row(record.instance_id, "m", taken)
    assert row["model_patch"] == "" and row["patch_too_large"] == {"bytes": (1 << 20) + 1, "max_bytes": 1 << 20}
    base = {"instance_id": record.instance_id, "flags": [], "model_name_or_path": "m"}
    huge = EVALUATOR._grade_candidate(
        record.record, Prediction.from_entry(row), _Ctx(tmp_path / "live", LocalLike()), dict(base)
    )
    assert huge["reason"] == "policy_violation" and huge["passed"] is False and not huge["retryable"]
    assert huge["policy_violations"] == [f"patch_too_large: the taken patch has over {1 << 20} bytes"]
    # the written row, re-read from a file, is refused the same way (never an empty patch)
    (tmp_path / "p.jsonl").write_text(json.dumps(row) + "\n")
    again = load_predictions([str(tmp_path / "p.jsonl")]).get(record.instance_id, "m")
    assert again.withheld is not None and again.withheld.max_bytes == 1 << 20
    regraded = EVALUATOR._grade_candidate(record.record, again, _Ctx(tmp_path / "file", LocalLike()), dict(base))
    assert (regraded["reason"], regraded["policy_violations"]) == (huge["reason"], huge["policy_violations"])
