"""What one agent run may spend, and what a model's tokens cost.

Limits (:class:`Limits`): model calls (steps), tokens (prompt + completion, summed over calls, from each
response's ``usage``), cost in USD, wall-clock seconds, seconds per command, characters of output per command.
Each is checked before the next model call; hitting one ends the run as the candidate's outcome (``AgentEnd``).

Prices: a JSON file (``--mb-agent-prices``; the default :data:`DEFAULT_PRICES` ships in the package)::

    {"as_of": "2025-06", "unit": "USD per 1M tokens",
     "models": {"gpt-4o": {"input": 2.5, "output": 10.0}, ...}}

cost = tokens_in * input / 1e6 + tokens_out * output / 1e6. A model is looked up by its exact name, then by the
part after its last ``/`` (``openai/gpt-4o`` -> ``gpt-4o``); a model the table lacks has no price: its cost is
None and a cost limit cannot apply (the trajectory says so).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pytest_mobilebench.agents.shell import MIN_OUTPUT_CHARS

__all__ = ["DEFAULT_PRICES", "Limits", "Price", "PriceError", "load_prices", "price_of"]

DEFAULT_PRICES: Final = Path(__file__).resolve().parent / "prices.json"


class PriceError(ValueError):
    """A price table that cannot be used: the message names the file and the model or field."""


@dataclasses.dataclass(frozen=True)
class Price:
    """USD per one million tokens: ``input`` (prompt) and ``output`` (completion); ``source`` names the table."""

    input: float
    output: float
    source: str = ""

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """USD for ``tokens_in`` prompt and ``tokens_out`` completion tokens."""
        return tokens_in * self.input / 1e6 + tokens_out * self.output / 1e6


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one agent run may spend (None: no limit of that kind).

    Attributes:
        max_steps: model calls; a reply without a tool call counts too.
        max_tokens: prompt + completion tokens over all calls.
        max_cost_usd: USD over all calls (applies only when ``price`` is known).
        wall_s: wall-clock seconds from the first call; a command's timeout never runs past it.
        command_timeout_s: seconds per shell command.
        output_chars: characters of one command's output shown to the model (head and tail kept).
        price: the model's price (None: unpriced, cost not computed).
    """

    max_steps: int
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    wall_s: float | None = None
    command_timeout_s: float = 120.0
    output_chars: int = 10_000
    price: Price | None = None

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")
        for name in ("max_tokens", "max_cost_usd", "wall_s"):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number or None, got {value}")
        if not (self.command_timeout_s > 0 and math.isfinite(self.command_timeout_s)):
            raise ValueError(f"command_timeout_s must be a positive number, got {self.command_timeout_s}")
        if self.output_chars < MIN_OUTPUT_CHARS:
            raise ValueError(f"output_chars must be at least {MIN_OUTPUT_CHARS}, got {self.output_chars}")


def _rate(path: Path, model: str, entry: Mapping[str, Any], field: str) -> float:
    value = entry.get(field)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PriceError(
            f"{path}: models.{model}.{field}: a price must be a number >= 0 (USD per 1M tokens), got {value!r}"
        )
    return float(value)


def load_prices(path: Path | str | None = None) -> dict[str, Price]:
    """The price table in ``path`` (default :data:`DEFAULT_PRICES`) as ``{model: Price}``.

    Raises:
        PriceError: the file is missing, not JSON, or an entry lacks a number for ``input`` / ``output``.
    """
    path = Path(path) if path else DEFAULT_PRICES
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PriceError(f"{path}: cannot read the price table: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise PriceError(f"{path}: not JSON: {exc}") from None
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict):
        raise PriceError(f"{path}: needs an object 'models' mapping model names to {{'input', 'output'}} prices")
    table = {}
    for model, entry in models.items():
        if not isinstance(entry, dict):
            raise PriceError(f"{path}: models.{model}: needs an object with 'input' and 'output'")
        table[str(model)] = Price(_rate(path, model, entry, "input"), _rate(path, model, entry, "output"), str(path))
    return table


def price_of(model: str, table: Mapping[str, Price]) -> Price | None:
    """The price of ``model``: its exact name, else the name after its last ``/``; None when unpriced."""
    return table.get(model) or table.get(model.rsplit("/", 1)[-1])
