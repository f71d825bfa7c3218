"""Live mode against a scripted OpenAI-compatible server on loopback: the live episode, the recorded trajectory
and its offline replay grade the same; endpoint failures are infrastructure outcomes."""

from __future__ import annotations

import functools
import json
import socket
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from scripted_openai import is_check

from pytest_mobilebench.manifest import read_yaml
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.suites.planner import SUITE, grade_runs
from pytest_mobilebench.suites.planner.agent import (
    AgentEndpoint,
    AgentInfraError,
    run_live,
)
from pytest_mobilebench.suites.planner.grading import grade

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases" / "planner"


@functools.lru_cache(maxsize=1)
def _records() -> dict:
    return {r.instance_id: r for p in sorted(CASES.glob("*.yaml")) for r in SUITE.load(p, read_yaml(p))}


class ScriptedModel:
    """Answers chat completions from a script: each entry is a list of (tool, arguments) calls, or a string
    (a final text answer). Records every request body and Authorization header."""

    def __init__(self, script: list, status: int = 200, raw: bytes | None = None) -> None:
        self.script, self.status, self.raw = list(script), status, raw
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        self.checks = 0

    def reply(self) -> dict:
        turn = self.script.pop(0) if self.script else "I am done."
        usage = {"prompt_tokens": 100, "completion_tokens": 7}
        if isinstance(turn, str):
            return {"choices": [{"message": {"role": "assistant", "content": turn}}], "usage": usage}
        calls = [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(turn)
        ]
        return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": calls}}], "usage": usage}


@pytest.fixture
def server() -> Iterator[tuple[str, list[ScriptedModel]]]:
    holder: list[ScriptedModel] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            model = holder[0]
            length = int(self.headers.get("Content-Length", 0))
            payload = self.rfile.read(length)
            if is_check(payload):  # a live run's endpoint check: not the model's script
                model.checks += 1
                return self._answer(
                    200, json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode()
                )
            model.requests.append(json.loads(payload))
            model.auth.append(self.headers.get("Authorization"))
            self._answer(model.status, model.raw if model.raw is not None else json.dumps(model.reply()).encode())

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", holder
    finally:
        httpd.shutdown()
        httpd.server_close()


def _script_of(calls) -> list:
    return [[(c.tool, c.arguments)] for c in calls]


def test_live_gold_script_grades_like_its_replay(server) -> None:
    url, holder = server
    task = _records()["msg-airplane-recover"].record
    holder.append(ScriptedModel(_script_of(task.gold_calls)))
    calls, usage, transcript, episode = run_live(task, AgentEndpoint(url, "scripted", "sk-test"))
    live = grade(task, episode)
    [replayed] = grade_runs(task, [calls])
    assert live == replayed and live["score"] == 1.0 and live["errors_recovered"] == 1
    assert usage == {"input_tokens": 400, "output_tokens": 28, "requests": 4}
    first = holder[0].requests[0]
    assert first["model"] == "scripted" and first["messages"][-1]["content"] == task.query
    offered = [t["function"]["name"] for t in first["tools"]]
    assert "send_message" in offered and "set_toggle" not in offered
    assert "set_toggle" in [t["function"]["name"] for t in holder[0].requests[1]["tools"]]  # recovery tool joined
    assert holder[0].auth[0] == "Bearer sk-test"
    assert (
        transcript[3]["role"] == "tool" and json.loads(transcript[3]["content"])["error"]["code"] == "permission_denied"
    )


def test_text_answer_ends_the_episode_as_finish(server) -> None:
    url, holder = server
    task = _records()["eml-booking-code"].record
    holder.append(ScriptedModel([[("search_emails", {"query": "Lisbon"})], "The code is QZ7K2P."]))
    calls, _, _, episode = run_live(task, AgentEndpoint(url, "scripted"))
    assert calls[-1].tool == "Finish" and calls[-1].arguments == {"answer": "The code is QZ7K2P."}
    assert grade(task, episode)["score"] == 1.0 and holder[0].auth[0] is None


def test_live_loop_stops_at_the_step_limit(server) -> None:
    url, holder = server
    task = _records()["med-like-song"].record
    holder.append(ScriptedModel([[("search_music", {"query": "x"})] * 4] * 10))
    calls, usage, _, episode = run_live(task, AgentEndpoint(url, "scripted"))
    assert len(calls) == 15 and len(episode.steps) == 15 and usage["requests"] == 4


@pytest.mark.parametrize(
    ("status", "raw", "kind"),
    [
        (500, b"{}", "agent_http_error"),
        (200, b"<html>proxy login</html>", "agent_bad_response"),
        (200, b'{"choices": []}', "agent_bad_response"),
    ],
)
def test_endpoint_failures_are_infra(server, status: int, raw: bytes, kind: str) -> None:
    url, holder = server
    holder.append(ScriptedModel([], status=status, raw=raw))
    with pytest.raises(AgentInfraError) as info:
        run_live(_records()["med-like-song"].record, AgentEndpoint(url, "scripted"))
    assert info.value.kind == kind


def test_unreachable_endpoint_is_infra() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(AgentInfraError) as info:
        run_live(_records()["med-like-song"].record, AgentEndpoint(f"http://127.0.0.1:{port}/v1", "m", timeout_s=2))
    assert info.value.kind == "agent_unreachable"


@pytest.fixture
def no_agent_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The live options come from the command line only."""
    for name in ("MOBILEBENCH_AGENT_BASE_URL", "MOBILEBENCH_AGENT_MODEL", "MOBILEBENCH_AGENT_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _settings_case(pytester: pytest.Pytester) -> Path:
    cases = pytester.mkdir("cases")
    (cases / "settings.yaml").write_text((CASES / "settings.yaml").read_text())
    return pytester.path / "reports"


def test_live_mode_through_the_plugin_matches_offline_replay(server, pytester: pytest.Pytester, no_agent_env) -> None:
    """``--predictions=live``: the item, junit and summaries carry the endpoint's model name; the live run's
    recorded trajectory, replayed offline as a prediction, gets the same score and properties."""
    url, holder = server
    rec = _records()["set-volume-ask"]
    task = rec.record
    holder.append(ScriptedModel(_script_of(task.gold_calls)))
    reports = _settings_case(pytester)
    res = pytester.runpytest_inprocess(
        "cases/settings.yaml",
        "-k",
        "set-volume-ask",
        "--predictions=live",
        f"--mb-agent-base-url={url}",
        "--mb-agent-model=scripted-live",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
        "--junitxml=j.xml",
    )
    res.assert_outcomes(passed=1)
    assert holder[0].requests[0]["model"] == "scripted-live"
    summary = json.loads((reports / "latest" / "summary.json").read_text())
    live = summary["instances"]["set-volume-ask"]
    assert live["mode"] == "live" and live["agent_model"] == "scripted-live"
    assert live["model_name_or_path"] == "scripted-live" and list(summary["by_model"]) == ["scripted-live"]
    assert Path(live["evidence_dir"]).parent.name == "scripted-live"
    tables = summary["suite_tables"]["planner"]["by_model"]
    assert list(tables) == ["scripted-live"] and tables["scripted-live"]["tokens"]["output_tokens"] == 21
    junit = ET.parse(pytester.path / "j.xml").getroot()
    [case] = junit.iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["agent_model"] == "scripted-live" and props["mode"] == "live"
    recorded = json.loads((Path(live["evidence_dir"]) / "trajectory.json").read_text())
    assert recorded["usage"] == {"input_tokens": 300, "output_tokens": 21, "requests": 3}
    preds = pytester.path / "replay.jsonl"
    preds.write_text(
        json.dumps(
            {"instance_id": "set-volume-ask", "model_name_or_path": "replayed", "trajectory": recorded["runs"][0]}
        )
        + "\n"
    )
    res2 = pytester.runpytest_inprocess(
        "cases/settings.yaml",
        "-k",
        "set-volume-ask",
        f"--predictions={preds}",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
    )
    res2.assert_outcomes(passed=1)
    offline = json.loads((reports / "latest" / "summary.json").read_text())["instances"]["set-volume-ask"]
    assert offline["planner"]["runs"] == live["planner"]["runs"]
    assert offline["score"] == live["score"] == 1.0


@pytest.mark.e2e
def test_live_mode_under_xdist_workers_carry_the_endpoints_model(
    server, pytester: pytest.Pytester, no_agent_env
) -> None:
    """``-n 2``: each worker derives the live model from the same options; the item runs live on a worker."""
    url, holder = server
    holder.append(ScriptedModel(_script_of(_records()["set-volume-ask"].record.gold_calls)))
    reports = _settings_case(pytester)
    res = pytester.runpytest(
        "cases/settings.yaml",
        "-k",
        "set-volume-ask",
        "--predictions=live",
        "-n",
        "2",
        f"--mb-agent-base-url={url}",
        "--mb-agent-model=scripted-live",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
    )
    res.assert_outcomes(passed=1)
    summary = json.loads((reports / "latest" / "summary.json").read_text())
    live = summary["instances"]["set-volume-ask"]
    assert live["mode"] == "live" and live["model_name_or_path"] == "scripted-live" and live["score"] == 1.0
    assert holder[0].requests and holder[0].requests[0]["model"] == "scripted-live"


LIVE_PREDICTION = Prediction("med-like-song", "scripted", PredictionKind.LIVE)


class _Ctx:
    def __init__(self, folder: Path, agent: AgentEndpoint, repeat: int) -> None:
        self.evidence_dir, self.options, self.run_id, self._agent = folder, {"mb_trials": repeat}, "r", agent
        self.messages: list[str] = []

    def fixture(self, name: str):
        assert name == "planner_agent"
        return self._agent

    def progress(self, message: str) -> None:
        self.messages.append(message)


def test_live_repeats_make_k_episodes(server, tmp_path: Path) -> None:
    """--mb-trials 2 in live mode: two episodes; the first good, the second gives up -> pass^k fails."""
    url, holder = server
    rec = _records()["med-like-song"]
    gold = _script_of(rec.record.gold_calls)
    holder.append(ScriptedModel([*gold, "I could not find it."]))
    ctx = _Ctx(tmp_path, AgentEndpoint(url, "scripted"), repeat=2)
    result = SUITE.evaluate(rec, LIVE_PREDICTION, ctx)
    assert [run["score"] for run in result["planner"]["runs"]] == [1.0, 0.0]
    assert result["reason"] == "failed" and result["properties"]["score"] == 0.5
    assert result["planner"]["usage"]["requests"] == len(gold) + 1
    assert (tmp_path / "transcript-1.json").exists() and (tmp_path / "transcript-2.json").exists()
    assert len(ctx.messages) == 2


def test_live_infra_error_is_retryable(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = _Ctx(tmp_path, AgentEndpoint(f"http://127.0.0.1:{port}/v1", "m", timeout_s=2), repeat=1)
    result = SUITE.evaluate(_records()["med-like-song"], LIVE_PREDICTION, ctx)
    assert result["reason"] == "infra_error" and result["retryable"] and result["infra_kind"] == "agent_unreachable"


def test_empty_is_a_finish_only_run_even_with_an_endpoint(server, pytester: pytest.Pytester, no_agent_env) -> None:
    """``--predictions=empty`` never asks the endpoint: a ``Finish``-only replay under the model name ``empty``."""
    url, holder = server
    holder.append(ScriptedModel(_script_of(_records()["set-volume-ask"].record.gold_calls)))
    reports = _settings_case(pytester)
    res = pytester.runpytest_inprocess(
        "cases/settings.yaml",
        "-k",
        "set-volume-ask",
        "--predictions=empty",
        f"--mb-agent-base-url={url}",
        "--mb-agent-model=scripted-live",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
    )
    res.assert_outcomes(failed=1)
    assert holder[0].requests == []
    item = json.loads((reports / "latest" / "summary.json").read_text())["instances"]["set-volume-ask"]
    assert item["mode"] == "offline" and item["model_name_or_path"] == "empty" and item["score"] == 0.0
    assert json.loads((Path(item["evidence_dir"]) / "trajectory.json").read_text())["runs"] == [
        [{"tool": "Finish", "arguments": {}}]
    ]


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        (
            (),
            ["--mb-agent-base-url (or $MOBILEBENCH_AGENT_BASE_URL)", "--mb-agent-model (or $MOBILEBENCH_AGENT_MODEL)"],
        ),
        (("--mb-agent-base-url=http://127.0.0.1:9/v1",), ["--mb-agent-model (or $MOBILEBENCH_AGENT_MODEL)"]),
        (("--mb-agent-model=m",), ["--mb-agent-base-url (or $MOBILEBENCH_AGENT_BASE_URL)"]),
    ],
)
def test_live_without_the_endpoint_options_is_a_usage_error(
    pytester: pytest.Pytester, no_agent_env, given: tuple[str, ...], missing: list[str]
) -> None:
    reports = _settings_case(pytester)
    res = pytester.runpytest_inprocess(
        "cases/settings.yaml", "--predictions=live", *given, f"--mb-reports-dir={reports}", "-p", "no:cacheprovider"
    )
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    err = res.stderr.str()
    assert "--predictions: live: no suite can produce candidates from a model endpoint" in err
    assert f"suite 'planner': live mode needs {' and '.join(missing)}" in err
    assert f"suite 'issue_resolution': live mode needs {' and '.join(missing)}" in err
    assert f"suite 'device_repair': live mode needs {' and '.join(missing)}" in err
    assert f"suite 'app_generation': live mode needs {' and '.join(missing)}" in err
    assert not (reports / "latest").exists()


def test_live_options_from_the_environment(server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    url, holder = server
    holder.append(ScriptedModel(_script_of(_records()["set-volume-ask"].record.gold_calls)))
    monkeypatch.setenv("MOBILEBENCH_AGENT_BASE_URL", url)
    monkeypatch.setenv("MOBILEBENCH_AGENT_MODEL", "env-model")
    reports = _settings_case(pytester)
    res = pytester.runpytest_inprocess(
        "cases/settings.yaml",
        "-k",
        "set-volume-ask",
        "--predictions=live",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
    )
    res.assert_outcomes(passed=1)
    assert list(json.loads((reports / "latest" / "summary.json").read_text())["by_model"]) == ["env-model"]


def test_suites_that_cannot_run_a_users_program_error_instead_of_scoring_nothing(
    server, pytester: pytest.Pytester, no_agent_env
) -> None:
    """Under ``--predictions=live`` with a user's agent program (``--mb-agent-command``), which neither the
    planner (its candidate is the tool calls of the built-in loop on its in-process sandbox) nor app generation
    runs, each item fails with the reason naming the option and the suite before anything runs: never evaluated
    as an empty candidate, and never silently run with the built-in agent instead (the endpoint is not asked)."""
    url, holder = server
    holder.append(ScriptedModel(_script_of(_records()["set-volume-ask"].record.gold_calls)))
    reports = _settings_case(pytester)
    record = (ROOT / "cases" / "app_generation" / "tabs_demo.yaml").read_text()
    (pytester.path / "cases" / "tabs_demo.yaml").write_text(record.replace("../../fixtures/", f"{ROOT}/fixtures/"))
    res = pytester.runpytest_inprocess(
        "cases",
        "-k",
        "set-volume-ask or tabs_demo",
        "--predictions=live",
        f"--mb-agent-base-url={url}",
        "--mb-agent-model=scripted-live",
        "--mb-agent-command=./my-agent",
        f"--mb-reports-dir={reports}",
        "-p",
        "no:cacheprovider",
    )
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(
        [
            (
                "*--predictions=live: suite 'app_generation': --mb-agent-command: app generation runs "
                "only the built-in agent live*"
            )
        ],
        consecutive=False,
    )
    res.stdout.fnmatch_lines(
        [
            (
                "*--predictions=live: suite 'planner': --mb-agent-command: the planner suite runs only "
                "the built-in agent live*"
            )
        ],
        consecutive=False,
    )
    assert holder[0].requests == []
    summary = json.loads((reports / "latest" / "summary.json").read_text())
    assert summary["instances"] == {} and sorted(summary["not_run_instances"]) == ["set-volume-ask", "tabs_demo"]
    assert not (reports / "latest" / "scripted-live").exists()


def test_planner_live_model_names_what_is_missing() -> None:
    assert SUITE.live_model({"mb_agent_base_url": "http://h/v1", "mb_agent_model": "m"}) == "m"
    with pytest.raises(ValueError, match=r"needs --mb-agent-model \(or \$MOBILEBENCH_AGENT_MODEL\)$"):
        SUITE.live_model({"mb_agent_base_url": "http://h/v1", "mb_agent_model": None})
    with pytest.raises(ValueError, match=r"^--mb-agent-command: the planner suite runs only the built-in agent live"):
        SUITE.live_model({"mb_agent_base_url": "http://h/v1", "mb_agent_model": "m", "mb_agent_command": "./agent"})


def test_only_the_live_pseudo_prediction_runs_live(tmp_path: Path) -> None:
    """An endpoint is never asked for a file prediction without a trajectory: that is invalid, not live."""
    ctx = _Ctx(tmp_path, AgentEndpoint("http://127.0.0.1:9/v1", "m", timeout_s=1), repeat=1)
    file = Prediction.from_entry({"instance_id": "med-like-song", "model_name_or_path": "m", "model_patch": ""})
    result = SUITE.evaluate(_records()["med-like-song"], file, ctx)
    assert result["reason"] == "invalid_prediction" and "no 'trajectory'" in result["detail"]


def test_the_endpoint_enters_the_result_cache_key() -> None:
    """A live verdict from one endpoint is never served for another endpoint of the same model name."""
    from pytest_mobilebench.cache import keyed_options

    options = {"mb_agent_base_url": "http://a/v1", "mb_agent_model": "m", "mb_trials": 2, "mb_agent_timeout": 9.0}
    keyed = keyed_options(SUITE, options)  # the shared agent options key a suite that names the agent fixture
    assert {"mb_agent_base_url", "mb_agent_model", "mb_trials"} <= set(keyed) and "mb_agent_timeout" not in keyed
    assert keyed["mb_agent_base_url"] == "http://a/v1" and keyed["mb_trials"] == 2
