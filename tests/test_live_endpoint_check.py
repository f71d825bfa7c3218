"""One request to the live endpoint before a live run starts (``agents.endpoint.check``): a wrong URL, key or
model is a usage error (exit 4) naming what is wrong, before any item's image work; an endpoint that is only
unwell (5xx, late) is a warning and the run goes on."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from scripted_openai import ScriptedOpenAI, error, scripted_openai, text, trickled  # noqa: F401 (fixture)

from pytest_mobilebench.agents.endpoint import CHECK_MESSAGE, Endpoint, check

ROOT = Path(__file__).resolve().parents[1]
NO_MODEL = b'{"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_healthy_endpoint_passes_with_one_request(scripted_openai: ScriptedOpenAI) -> None:
    assert check(scripted_openai.endpoint("m", api_key="sk-test")) is None
    [sent] = scripted_openai.checks
    assert sent["model"] == "m" and sent["messages"] == [{"role": "user", "content": CHECK_MESSAGE}]
    assert sent["auth"] == "Bearer sk-test" and "tools" not in sent and scripted_openai.requests == []


@pytest.mark.parametrize(
    ("answer", "model", "names"),
    [
        (error(401), "m", "the endpoint refused the key (HTTP 401"),
        (error(403), "m", "the endpoint refused the key (HTTP 403"),
        (error(404, NO_MODEL), "nope", "--mb-agent-model 'nope': the endpoint refused the model (HTTP 404"),
        (error(400, b'{"error": {"message": "invalid model ID"}}'), "nope", "--mb-agent-model 'nope'"),
        (error(404, b'{"detail": "Not Found"}'), "m", "answered HTTP 404 (no chat completions there"),
    ],
)
def test_a_wrong_key_model_or_path_is_named(scripted_openai: ScriptedOpenAI, answer, model: str, names: str) -> None:
    scripted_openai.check_answer = answer
    with pytest.raises(ValueError, match=None) as info:
        check(scripted_openai.endpoint(model))
    assert names in str(info.value)


def test_no_connection_names_the_url() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(ValueError) as info:
        check(Endpoint(url, "m"))
    assert f"--mb-agent-base-url {url}: no connection" in str(info.value)
    with pytest.raises(ValueError, match="no connection"):
        check(Endpoint("localhost:8000/v1", "m"))  # no scheme


@pytest.mark.parametrize("answer", [error(503), error(429), text("ok")])
def test_an_unwell_endpoint_is_a_note_not_an_error(scripted_openai: ScriptedOpenAI, answer) -> None:
    scripted_openai.check_answer = answer
    note = check(scripted_openai.endpoint("m"))
    assert (note is None) if answer.status == 200 else ("may pass" in note and str(answer.status) in note)


def test_a_late_check_ends_at_the_reply_deadline(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.check_answer = trickled(text("x" * 100), 0.2)
    note = check(scripted_openai.endpoint("m", timeout_s=0.5))
    assert note is not None and "agent_endpoint_timeout" in note


def _live_run(pytester: pytest.Pytester, url: str, model: str = "m") -> pytest.RunResult:
    return pytester.runpytest_inprocess(
        str(ROOT / "cases" / "examples"),
        "--predictions=live",
        f"--mb-agent-base-url={url}",
        f"--mb-agent-model={model}",
        f"--mb-reports-dir={pytester.path / 'reports'}",
        "-p",
        "no:cacheprovider",
    )


def test_a_live_run_with_a_wrong_endpoint_stops_before_any_item(
    pytester: pytest.Pytester, scripted_openai: ScriptedOpenAI
) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    res = _live_run(pytester, url)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--predictions=live: endpoint check: --mb-agent-base-url {url}: no connection" in res.stderr.str()
    assert not (pytester.path / "reports" / "latest").exists()
    scripted_openai.check_answer = error(404, NO_MODEL)
    res = _live_run(pytester, scripted_openai.url, "nope")
    assert res.ret == pytest.ExitCode.USAGE_ERROR and "--mb-agent-model 'nope'" in res.stderr.str()
    assert len(scripted_openai.checks) == 1 and scripted_openai.requests == []
