"""The live agents' command-line options: one set, declared once by the plugin, read by every live suite.

:data:`AGENT_OPTIONS` reach every suite in ``ctx.options`` (the suite registry lists them with its suites'
options, the way the runtime layer lists its common options). A suite whose ``fixtures`` name
:data:`AGENT_FIXTURE` drives the agent: the keyed ones (:func:`keyed_for`) enter its result-cache key, so a
verdict from one endpoint, model or limit is never served for another. The API key never enters a key or a
file: it is read from ``$MOBILEBENCH_AGENT_API_KEY`` when the endpoint is made.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench.options import Option

if TYPE_CHECKING:
    from pytest_mobilebench.agents.endpoint import Endpoint
    from pytest_mobilebench.agents.limits import Limits

__all__ = [
    "AGENT_FIXTURE",
    "AGENT_OPTIONS",
    "API_KEY_ENV",
    "agent_material",
    "check_endpoint",
    "endpoint_and_limits",
    "endpoint_of",
    "keyed_for",
    "limits_of",
    "live_model",
    "missing_endpoint_options",
    "trial_count",
]

#: the fixture a suite names in ``Suite.fixtures`` when it drives the live agent (its value: ``(Endpoint,
#: Limits)`` or None without ``--mb-agent-base-url``)
AGENT_FIXTURE: Final = "mb_agent"
API_KEY_ENV: Final = "MOBILEBENCH_AGENT_API_KEY"
#: what an endpoint needs: (option dest, flag, environment variable)
ENDPOINT_OPTIONS: Final = (
    ("mb_agent_base_url", "--mb-agent-base-url", "MOBILEBENCH_AGENT_BASE_URL"),
    ("mb_agent_model", "--mb-agent-model", "MOBILEBENCH_AGENT_MODEL"),
)


def _positive(kind: type[int] | type[float], flag: str) -> Any:
    def convert(text: str) -> int | float:
        value = kind(text)
        if not value > 0 or value != value or value == float("inf"):
            raise ValueError(f"{flag} needs a positive number, got {text!r}")
        return value

    convert.__name__ = kind.__name__  # argparse names the type in its error message
    return convert


def trial_count(text: str) -> int:
    """``--mb-trials`` value: an int >= 1.

    Raises:
        ValueError: anything else (argparse reports it as a usage error).
    """
    value = int(text)
    if value < 1:
        raise ValueError(f"--mb-trials needs K >= 1, got {value}")
    return value


AGENT_OPTIONS: Final[tuple[Option, ...]] = (
    Option(
        ("--mb-agent-base-url",),
        "mb_agent_base_url",
        "live mode (--predictions=live): the model's "
        "OpenAI-compatible endpoint (…/v1); the key comes from MOBILEBENCH_AGENT_API_KEY",
        env="MOBILEBENCH_AGENT_BASE_URL",
        keyed=True,
    ),
    Option(
        ("--mb-agent-model",),
        "mb_agent_model",
        "live mode: the model name sent to the endpoint (the items' model name)",
        env="MOBILEBENCH_AGENT_MODEL",
        keyed=True,
    ),
    Option(
        ("--mb-agent-timeout",),
        "mb_agent_timeout",
        "live mode: the reply deadline: seconds from a model "
        "request's start to its reply's last byte, whatever pace the endpoint keeps (agent_endpoint_timeout, "
        "retried)",
        default=120.0,
        type=_positive(float, "--mb-agent-timeout"),
    ),
    Option(
        ("--mb-agent-connect-timeout",),
        "mb_agent_connect_timeout",
        "live mode: seconds to connect to the endpoint (TCP and TLS) per request",
        default=10.0,
        type=_positive(float, "--mb-agent-connect-timeout"),
    ),
    Option(
        ("--mb-agent-first-byte-timeout",),
        "mb_agent_first_byte_timeout",
        "live mode: seconds from a request sent to its reply's first byte (default: only the reply deadline)",
        type=_positive(float, "--mb-agent-first-byte-timeout"),
    ),
    Option(
        ("--mb-agent-retries",),
        "mb_agent_retries",
        "live mode: retries of a model request after a refused "
        "connection, a timeout, HTTP 5xx or 429 (exponential backoff; Retry-After honoured)",
        default=3,
        type=int,
    ),
    Option(
        ("--mb-agent-max-steps",),
        "mb_agent_max_steps",
        "live agent: model calls per run (agent_step_limit)",
        default=100,
        type=_positive(int, "--mb-agent-max-steps"),
        keyed=True,
    ),
    Option(
        ("--mb-agent-max-tokens",),
        "mb_agent_max_tokens",
        "live agent: prompt + completion tokens per run (agent_token_limit; default: none)",
        type=_positive(int, "--mb-agent-max-tokens"),
        keyed=True,
    ),
    Option(
        ("--mb-agent-max-cost",),
        "mb_agent_max_cost",
        "live agent: USD per run from the price table (agent_cost_limit; an unpriced model has no cost; default: none)",
        type=_positive(float, "--mb-agent-max-cost"),
        keyed=True,
    ),
    Option(
        ("--mb-agent-wall-time",),
        "mb_agent_wall_time",
        "live agent: wall-clock seconds per run (agent_timeout)",
        default=3600.0,
        type=_positive(float, "--mb-agent-wall-time"),
        keyed=True,
    ),
    Option(
        ("--mb-agent-command-timeout",),
        "mb_agent_command_timeout",
        "live agent: seconds per shell command (the command is killed; the agent sees that it timed out)",
        default=300.0,
        type=_positive(float, "--mb-agent-command-timeout"),
        keyed=True,
    ),
    Option(
        ("--mb-agent-output-chars",),
        "mb_agent_output_chars",
        "live agent: characters of a command's output shown to the model (head and tail kept, the middle elided)",
        default=10_000,
        type=int,
        keyed=True,
    ),
    Option(
        ("--mb-agent-prompt",),
        "mb_agent_prompt",
        "live agent: the prompt template file replacing the "
        "built-in one ($problem_statement, $repo, $base_commit, $framework, $workdir)",
        keyed=True,
    ),
    Option(
        ("--mb-agent-prices",),
        "mb_agent_prices",
        "live agent: price table (JSON, USD per 1M tokens in / out per model) replacing the built-in one",
        keyed=True,
    ),
    Option(
        ("--mb-agent-command",),
        "mb_agent_command",
        "live mode: run this agent program in the sandbox instead of the built-in shell agent",
        keyed=True,
    ),
    Option(
        ("--mb-trials", "--mb-repeat"),
        "mb_trials",
        "trials per task for pass@1 / pass^k (planner live: K "
        "episodes on fresh sandboxes; recorded: the prediction's 'trajectories' must hold K; issue resolution "
        "live: one item per trial, [t1]..[tK]; default: live 1, recorded as many as the prediction holds)",
        default=None,
        type=trial_count,
        keyed=True,
    ),
    # how the trials are summarised (pytest_mobilebench.stats.trials): not keyed, no verdict depends on them
    Option(
        ("--mb-bootstrap-resamples",),
        "mb_bootstrap_resamples",
        "trials: bootstrap resamples of the "
        "intervals of pass@1 (hierarchical: instances, then trials), pass@k and pass^k",
        default=1000,
        type=_positive(int, "--mb-bootstrap-resamples"),
    ),
    Option(
        ("--mb-bootstrap-seed",),
        "mb_bootstrap_seed",
        "trials: the bootstrap's random seed (the same seed, the same intervals)",
        default=0,
        type=int,
    ),
)


def keyed_for(fixtures: Sequence[str], *, live: bool = True, item_trials: bool = False) -> list[Option]:
    """The agent options entering the cache key of a suite requesting ``fixtures`` (those naming
    :data:`AGENT_FIXTURE`); none for a suite that does not drive the agent.

    A prediction that is not ``live`` is a candidate the agent did not make here: the endpoint, model, limits,
    prompt and prices change nothing in its grading, so they stay out of its key (a live item's candidate,
    re-graded from the run's predictions file, then finds the verdict the live item stored under its
    candidate's key). Only ``--mb-trials`` stays, for a suite that grades K recorded trials in one item (not
    ``item_trials``: a suite whose items are single trials reads the trial from the row).
    """
    if AGENT_FIXTURE not in fixtures:
        return []
    return [o for o in AGENT_OPTIONS if o.keyed and (live or (o.dest == "mb_trials" and not item_trials))]


def missing_endpoint_options(options: Mapping[str, Any]) -> list[str]:
    """The endpoint options not given, as ``"--flag (or $ENV)"``."""
    return [f"{flag} (or ${env})" for dest, flag, env in ENDPOINT_OPTIONS if not options.get(dest)]


def endpoint_of(options: Mapping[str, Any]) -> Endpoint:
    """The endpoint of ``--mb-agent-base-url`` / ``--mb-agent-model`` / ``--mb-agent-retries`` and the deadlines
    ``--mb-agent-timeout`` (reply), ``--mb-agent-connect-timeout``, ``--mb-agent-first-byte-timeout``, the key
    from ``$MOBILEBENCH_AGENT_API_KEY``.

    Raises:
        ValueError: base URL or model missing (names the flags and environment variables).
    """
    from pytest_mobilebench.agents.endpoint import Endpoint

    missing = missing_endpoint_options(options)
    if missing:
        raise ValueError(f"live mode needs {' and '.join(missing)}")
    retries = options.get("mb_agent_retries")
    first_byte = options.get("mb_agent_first_byte_timeout")
    return Endpoint(
        str(options["mb_agent_base_url"]),
        str(options["mb_agent_model"]),
        os.environ.get(API_KEY_ENV, ""),
        float(options.get("mb_agent_timeout") or 120.0),
        3 if retries is None else max(0, int(retries)),
        connect_timeout_s=float(options.get("mb_agent_connect_timeout") or 10.0),
        first_byte_timeout_s=None if first_byte is None else float(first_byte),
    )


def check_endpoint(options: Mapping[str, Any]) -> str | None:
    """The endpoint check of a live run (:func:`pytest_mobilebench.agents.endpoint.check`) when
    ``--mb-agent-base-url`` and ``--mb-agent-model`` are given; None (nothing sent) otherwise.

    Returns:
        None, or a note of a failure that may pass.

    Raises:
        ValueError: a wrong URL, key or model (the message names it).
    """
    if missing_endpoint_options(options):
        return None
    from pytest_mobilebench.agents.endpoint import check

    return check(endpoint_of(options))


def limits_of(options: Mapping[str, Any], model: str) -> Limits:
    """The run limits of the ``--mb-agent-*`` options, with ``model``'s price from ``--mb-agent-prices`` (or
    the built-in table).

    Raises:
        ValueError: a limit out of range; :class:`~.limits.PriceError` for an unusable price table.
    """
    from pytest_mobilebench.agents.limits import Limits, load_prices, price_of

    def opt(dest: str) -> Any:
        return options.get(dest, next(o.default for o in AGENT_OPTIONS if o.dest == dest))

    return Limits(
        max_steps=int(opt("mb_agent_max_steps")),
        max_tokens=opt("mb_agent_max_tokens"),
        max_cost_usd=opt("mb_agent_max_cost"),
        wall_s=opt("mb_agent_wall_time"),
        command_timeout_s=float(opt("mb_agent_command_timeout")),
        output_chars=int(opt("mb_agent_output_chars")),
        price=price_of(model, load_prices(opt("mb_agent_prices"))),
    )


def endpoint_and_limits(options: Mapping[str, Any]) -> tuple[Endpoint, Limits]:
    """:func:`endpoint_of` and :func:`limits_of` of the same options.

    Raises:
        ValueError: as those two (the message names the option).
    """
    endpoint = endpoint_of(options)
    return endpoint, limits_of(options, endpoint.model)


def live_model(options: Mapping[str, Any], *, prompt: bool = False) -> str:
    """The model a suite's ``live_model`` names, once every agent option it needs is checked (the endpoint, the
    limits, the price table, and with ``prompt`` the prompt template), so a bad option is one usage error before
    anything runs instead of an error per item.

    Raises:
        ValueError: as :func:`endpoint_and_limits`; :class:`~.prompt.PromptError` for the template.
    """
    endpoint, _ = endpoint_and_limits(options)
    if prompt:
        from pytest_mobilebench.agents.prompt import load_template

        load_template(options.get("mb_agent_prompt"))
    return endpoint.model


def agent_material(options: Mapping[str, Any], *, prompt: Path | None = None) -> dict[str, str]:
    """The contents of the prompt template and the price table in effect (given or built in: ``prompt``, else
    the issue-resolution template) as sha256 hex digests, for a suite's ``cache_material``: editing a file in
    place changes the key, its path unchanged."""
    import hashlib

    from pytest_mobilebench.agents.limits import DEFAULT_PRICES
    from pytest_mobilebench.agents.prompt import DEFAULT_PROMPT

    out = {}
    for dest, default in (("mb_agent_prompt", prompt or DEFAULT_PROMPT), ("mb_agent_prices", DEFAULT_PRICES)):
        try:
            out[dest] = hashlib.sha256(Path(options.get(dest) or default).read_bytes()).hexdigest()
        except OSError as exc:
            out[dest] = f"unreadable: {exc.strerror or exc}"
    return out
