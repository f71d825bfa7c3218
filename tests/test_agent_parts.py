"""The live agent's parts on their own: the endpoint client's failures and retries, output bounding, the prompt
template, the price table, tool declarations and the shared options."""

from __future__ import annotations

import email.utils
import json
import socket
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scripted_openai import ScriptedOpenAI, error, scripted_openai, text  # noqa: F401

from pytest_mobilebench.agents import options as agent_options
from pytest_mobilebench.agents.endpoint import AgentInfraError, Endpoint, _retry_after, chat, retry_wait
from pytest_mobilebench.agents.limits import DEFAULT_PRICES, Limits, PriceError, load_prices, price_of
from pytest_mobilebench.agents.prompt import DEFAULT_PROMPT, FIELDS, PromptError, load_template
from pytest_mobilebench.agents.shell import MIN_OUTPUT_CHARS, OutputBound, bound_output
from pytest_mobilebench.agents.tools import Toolbox, ToolCallError, declare
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

FIELD_VALUES = {"problem_statement": "p", "repo": "r", "base_commit": "c", "framework": "f", "workdir": "w"}
MESSAGES = [{"role": "user", "content": "hi"}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------------------------ endpoint


def test_refused_connections_are_retried_then_unreachable() -> None:
    sleeps: list[float] = []
    with pytest.raises(AgentInfraError) as info:
        chat(
            Endpoint(f"http://127.0.0.1:{_free_port()}/v1", "m", retries=2, backoff_s=0.5),
            MESSAGES,
            sleep=sleeps.append,
        )
    assert info.value.kind == InfraKind.AGENT_UNREACHABLE and isinstance(info.value, InfraError)
    assert len(info.value.attempts) == 3 and len(sleeps) == 2 and 0.5 <= sleeps[0] <= 0.55 and 1.0 <= sleeps[1] <= 1.1


def test_a_silent_endpoint_times_out_and_is_its_own_kind() -> None:
    with socket.socket() as listener:  # accepts connections (backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        start = time.monotonic()
        with pytest.raises(AgentInfraError) as info:
            chat(Endpoint(url, "m", timeout_s=0.3, retries=1), MESSAGES, sleep=lambda s: None)
    assert info.value.kind == InfraKind.AGENT_ENDPOINT_TIMEOUT and len(info.value.attempts) == 2
    assert time.monotonic() - start < 5


def test_the_key_is_sent_as_bearer_and_only_when_given(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(text("a"), text("b"))
    done = chat(scripted_openai.endpoint(api_key="sk-test"), MESSAGES)
    chat(scripted_openai.endpoint(), MESSAGES, [])
    assert scripted_openai.auth == ["Bearer sk-test", None] and scripted_openai.paths[0] == "/v1/chat/completions"
    assert done.message["content"] == "a" and (done.tokens_in, done.tokens_out, done.usage_reported) == (100, 10, True)
    assert "tools" not in scripted_openai.requests[1] and scripted_openai.requests[1]["model"] == "scripted"


def test_retry_after_as_seconds_or_date_and_backoff_capped() -> None:
    now = time.time()
    assert _retry_after("3", now) == 3.0 and _retry_after("soon", now) is None and _retry_after(None, now) is None
    assert _retry_after(email.utils.formatdate(now + 10, usegmt=True), now) == pytest.approx(10, abs=1.5)
    endpoint = Endpoint("http://h/v1", "m", backoff_s=1.0)
    assert retry_wait(endpoint, 0, 9999.0) == 120.0  # a server's Retry-After is capped
    assert 30.0 <= retry_wait(endpoint, 10, None) <= 33.0 and 4.0 <= retry_wait(endpoint, 2, None) <= 4.4


def test_service_unavailable_with_retry_after_waits_that_long(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(error(503, retry_after="1.5"), text("ok"))
    sleeps: list[float] = []
    done = chat(scripted_openai.endpoint(), MESSAGES, sleep=sleeps.append)
    assert sleeps == [1.5] and done.attempts[0].status == 503 and done.attempts[0].wait_s == 1.5


# ------------------------------------------------------------------------------------------------ output bound


@given(st.text(max_size=3000), st.integers(MIN_OUTPUT_CHARS, 2000))
def test_bounded_output_fits_keeps_both_ends_and_is_idempotent(text_: str, limit: int) -> None:
    out = bound_output(text_, limit)
    assert len(out) <= limit and bound_output(out, limit) == out
    if len(text_) <= limit:
        assert out == text_
    else:
        keep = (limit - 200) // 2
        assert out.startswith(text_[:keep]) and out.endswith(text_[len(text_) - keep :]) and "elided" in out


@given(st.lists(st.binary(max_size=700), max_size=30), st.integers(MIN_OUTPUT_CHARS, 1500))
def test_streamed_bound_matches_the_whole_or_keeps_both_ends(chunks: list[bytes], limit: int) -> None:
    bound = OutputBound(limit)
    for chunk in chunks:
        bound.feed(chunk)
    whole = b"".join(chunks)
    out = bound.text()
    assert len(out) <= limit and bound.total == len(whole)
    if len(whole) <= limit:
        assert out == bound_output(whole.decode("utf-8", "replace"), limit)
    else:
        assert "bytes elided" in out or "characters elided" in out


def test_a_limit_too_small_for_the_note_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 400"):
        bound_output("x", 10)
    with pytest.raises(ValueError, match="output_chars"):
        Limits(max_steps=1, output_chars=100)


# ------------------------------------------------------------------------------------------------ prompt


def test_the_default_prompt_uses_every_field_and_inserts_values_verbatim() -> None:
    template = load_template()
    assert template.path == DEFAULT_PROMPT and template.system and template.task
    prompt = template.render({**FIELD_VALUES, "problem_statement": "crash in ${workdir} at {0} costs $5"})
    for name in FIELDS - {"problem_statement"}:
        assert f"${name}" not in prompt.task
    assert "crash in ${workdir} at {0} costs $5" in prompt.task and "`w`" in prompt.task
    assert [m["role"] for m in prompt.messages()] == ["system", "user"]


def test_an_unknown_field_names_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "p.md"
    bad.write_text("<!-- task -->\nFix $problem_statement\nin ${repository}\n")
    with pytest.raises(PromptError, match=rf"^{bad}:3: unknown field '\$repository' \(fields: base_commit, "):
        load_template(bad)
    bad.write_text("costs 5$ today\n")
    with pytest.raises(PromptError, match=r":1: a '\$' that is no field \(write '\$\$'"):
        load_template(bad)
    with pytest.raises(PromptError, match="cannot read the prompt template"):
        load_template(tmp_path / "missing.md")


def test_a_template_without_markers_is_the_task_and_a_missing_value_is_named(tmp_path: Path) -> None:
    plain = tmp_path / "plain.md"
    plain.write_text("Only $repo, costs $$3\n")
    prompt = load_template(plain).render(FIELD_VALUES)
    assert prompt.system == "" and prompt.task == "Only r, costs $3" and len(prompt.messages()) == 1
    with pytest.raises(PromptError, match=r"plain.md: no value for field\(s\) repo"):
        load_template(plain).render({"workdir": "w"})
    twice = tmp_path / "twice.md"
    twice.write_text("<!-- task -->\na\n<!-- task -->\nb\n")
    with pytest.raises(PromptError, match="exactly one"):
        load_template(twice)


# ------------------------------------------------------------------------------------------------ prices


def test_the_shipped_price_table_loads_and_names_are_matched(tmp_path: Path) -> None:
    table = load_prices()
    assert len(table) >= 5 and price_of("gpt-4o", table) is not None
    assert price_of("openai/gpt-4o", table) == price_of("gpt-4o", table) and price_of("my-local-model", table) is None
    assert price_of("gpt-4o", table).source == str(DEFAULT_PRICES)
    assert table["gpt-4o"].cost(1_000_000, 1_000_000) == pytest.approx(12.5)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("{", "not JSON"),
        ('{"models": []}', "needs an object 'models'"),
        ('{"models": {"m": {"input": 1}}}', r"models.m.output: a price must be a number >= 0"),
        ('{"models": {"m": {"input": -1, "output": 2}}}', r"models.m.input"),
        ('{"models": {"m": {"input": true, "output": 2}}}', r"models.m.input"),
    ],
)
def test_a_bad_price_table_names_the_file_and_field(tmp_path: Path, doc: str, message: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(doc)
    with pytest.raises(PriceError, match=message) as info:
        load_prices(path)
    assert str(path) in str(info.value)


# ------------------------------------------------------------------------------------------------ tools


def test_one_declaration_gives_the_schema_and_the_check() -> None:
    def grep(pattern: str, limit: int = 10) -> str:
        """Search the code.

        Args:
            pattern: a regular expression.
            limit: at most this many lines.
        """
        return f"{pattern}:{limit}"

    box = Toolbox([declare(grep)])
    [schema] = box.schemas()
    params = schema["function"]["parameters"]
    assert schema["function"]["description"] == "Search the code."
    assert (
        params["required"] == ["pattern"] and params["properties"]["limit"]["description"] == "at most this many lines."
    )
    assert params["additionalProperties"] is False and "title" not in json.dumps(params)
    assert box.call("grep", '{"pattern": "x"}') == "x:10" and box.call("grep", {"pattern": "y", "limit": 2}) == "y:2"
    with pytest.raises(ToolCallError, match="limit: Input should be a valid integer"):
        box.call("grep", '{"pattern": "x", "limit": "2"}')  # strict: no silent conversion
    with pytest.raises(ToolCallError, match="pattern: Field required"):
        box.call("grep", "")


# ------------------------------------------------------------------------------------------------ options


def test_endpoint_and_limits_from_the_shared_options(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(agent_options.API_KEY_ENV, "sk-env")
    defaults = {o.dest: o.default for o in agent_options.AGENT_OPTIONS}
    with pytest.raises(
        ValueError,
        match=r"needs --mb-agent-base-url \(or \$MOBILEBENCH_AGENT_BASE_URL\) and "
        r"--mb-agent-model \(or \$MOBILEBENCH_AGENT_MODEL\)",
    ):
        agent_options.endpoint_and_limits(defaults)
    endpoint, limits = agent_options.endpoint_and_limits(
        {
            **defaults,
            "mb_agent_base_url": "http://h/v1",
            "mb_agent_model": "gpt-4o-mini",
            "mb_agent_retries": 0,
            "mb_agent_max_cost": 1.5,
        }
    )
    assert (endpoint.api_key, endpoint.retries, endpoint.timeout_s) == ("sk-env", 0, 120.0)
    assert limits.max_steps == 100 and limits.max_cost_usd == 1.5 and limits.price is not None
    prices = tmp_path / "p.json"
    prices.write_text('{"models": {"gpt-4o-mini": {"input": 0, "output": 0}}}')
    _, own = agent_options.endpoint_and_limits(
        {**defaults, "mb_agent_base_url": "u", "mb_agent_model": "gpt-4o-mini", "mb_agent_prices": str(prices)}
    )
    assert own.price.cost(10**9, 10**9) == 0.0
    before = agent_options.agent_material({"mb_agent_prices": str(prices)})
    prices.write_text('{"models": {}}')
    assert agent_options.agent_material({"mb_agent_prices": str(prices)}) != before  # content, not path


def test_the_shared_options_are_declared_once_and_listed_with_the_suites(pytestconfig: pytest.Config) -> None:
    group = pytestconfig._parser.getgroup("mobilebench")  # noqa: SLF001
    names = [n for option in group.options for n in option.names()]
    for flag in ("--mb-agent-base-url", "--mb-agent-max-steps", "--mb-agent-prompt", "--mb-trials", "--mb-repeat"):
        assert names.count(flag) == 1
    from pytest_mobilebench.suites import builtin_registry

    listed = [o.dest for o in builtin_registry().options()]
    assert listed.count("mb_trials") == 1 and "mb_agent_wall_time" in listed
    assert agent_options.keyed_for(("mb_runtime",)) == [] and agent_options.keyed_for(("mb_agent",))


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--mb-agent-max-steps", "0"),
        ("--mb-agent-wall-time", "-1"),
        ("--mb-agent-max-cost", "nan"),
        ("--mb-trials", "0"),
    ],
)
def test_out_of_range_limits_are_usage_errors(pytester: pytest.Pytester, flag: str, value: str) -> None:
    res = pytester.runpytest_inprocess(f"{flag}={value}", "-p", "no:cacheprovider")
    assert res.ret == pytest.ExitCode.USAGE_ERROR and flag.lstrip("-") in res.stderr.str()


def test_the_key_never_shows_in_a_repr() -> None:
    endpoint = Endpoint("http://h/v1", "m", api_key="sk-secret-123")
    assert "sk-secret" not in repr(endpoint) and "sk-secret" not in str(endpoint)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


@given(st.one_of(JSON, st.text(max_size=50)), st.one_of(st.sampled_from(["bash", "submit", "x"]), JSON))
def test_any_arguments_the_model_sends_are_parsed_or_refused_for_the_model(args, name) -> None:
    seen: list[str] = []

    def bash(command: str) -> str:
        """Run.

        Args:
            command: the command.
        """
        seen.append(command)
        return "ran"

    toolbox = Toolbox([declare(bash)])
    raw_args = args if isinstance(args, str) else json.dumps(args)
    try:
        assert toolbox.call(name, raw_args) == "ran" and isinstance(seen[-1], str)
    except ToolCallError as exc:
        assert str(exc)


@given(JSON)
def test_any_message_shape_gives_tool_calls_or_none(message) -> None:
    from pytest_mobilebench.agents.loop import _calls, _text

    shaped = message if isinstance(message, dict) else {"tool_calls": message, "content": message}
    for call in _calls(shaped, 1):
        assert isinstance(call["id"], str) and isinstance(call["arguments"], str)
    assert _text(shaped.get("content")) is None or isinstance(_text(shaped.get("content")), str)


def test_a_bad_agent_option_is_one_usage_error_before_anything_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MOBILEBENCH_AGENT_BASE_URL", "MOBILEBENCH_AGENT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    cases = pytester.mkdir("cases")
    (cases / "settings.yaml").write_text(
        (Path(__file__).parents[1] / "cases" / "planner" / "settings.yaml").read_text()
    )
    bad = pytester.path / "prices.json"
    bad.write_text("{")
    res = pytester.runpytest_inprocess(
        "cases",
        "--predictions=live",
        "--mb-agent-base-url=http://127.0.0.1:9/v1",
        "--mb-agent-model=m",
        f"--mb-agent-prices={bad}",
        "-p",
        "no:cacheprovider",
        f"--mb-reports-dir={pytester.path / 'reports'}",
    )
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert f"suite 'planner': {bad}: not JSON" in res.stderr.str()
    assert agent_options.live_model({"mb_agent_base_url": "u", "mb_agent_model": "m"}, prompt=True) == "m"
    with pytest.raises(PromptError, match="cannot read"):
        agent_options.live_model(
            {"mb_agent_base_url": "u", "mb_agent_model": "m", "mb_agent_prompt": str(pytester.path / "none.md")},
            prompt=True,
        )
