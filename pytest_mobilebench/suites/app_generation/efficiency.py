"""Efficiency axis of app generation: tokens, LLM calls, LLM wall-clock time and dollar cost.

Source: MobileForge (seed 002), section 4.1 "Efficiency" ("input and output tokens, LLM call count,
wall-clock LLM time, and a dollar-cost estimate from the model card list price") and Table 2 / Figure 3.

The cost comes from a price table the user controls (``--mb-price-table``); the packaged default
``prices.json`` is a convenience snapshot dated when it was written. A model missing from the table gets
``cost_usd = None`` and a warning, never an invented or "closest match" price.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = [
    "DEFAULT_PRICE_TABLE",
    "PriceTableError",
    "RunRecordError",
    "load_price_table",
    "run_cost",
]

#: The packaged default price table (USD per million tokens, dated inside the file).
DEFAULT_PRICE_TABLE: Final[Path] = Path(__file__).with_name("prices.json")

_PRICE_FIELDS: Final = ("input_per_mtok", "output_per_mtok")
_NOTE_FIELDS: Final = frozenset({"note", "source"})


class PriceTableError(ValueError):
    """The price table is malformed; the message names the file, the model and the field."""


class RunRecordError(ValueError):
    """A run record's efficiency field is missing, negative or not a number; the message names the field."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_price_table(path: str | Path = DEFAULT_PRICE_TABLE) -> dict[str, dict[str, float]]:
    """Load and validate a list-price table.

    Format (JSON object)::

        {"written": "2026-11-29", "currency": "USD", "unit": "per million tokens", "note": "...",
         "models": {"gpt-5": {"input_per_mtok": 1.25, "output_per_mtok": 10.0}, ...}}

    The metadata keys are optional. A flat object without ``"models"`` is read as the model mapping
    itself, skipping keys that start with ``_``. Each model entry must have ``input_per_mtok`` and
    ``output_per_mtok`` (finite numbers >= 0, USD per 1,000,000 tokens) and may have string ``note`` /
    ``source`` fields; any other key is an error (it catches typos such as ``input_per_mtoken``).

    Args:
        path: the JSON file (default: the packaged :data:`DEFAULT_PRICE_TABLE`).

    Returns:
        ``{model: {"input_per_mtok": float, "output_per_mtok": float}}``.

    Raises:
        PriceTableError: unreadable file, invalid JSON, or a bad entry; the message names the file and,
            where relevant, the model and the field, e.g.
            ``prices.json: model 'gpt-5': field 'input_per_mtok': must be a number >= 0, got '1.25'``.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceTableError(f"{path}: cannot read price table: {exc.strerror or exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PriceTableError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    if not isinstance(document, dict):
        raise PriceTableError(f"{path}: expected a JSON object, got {type(document).__name__}")
    if "models" in document:
        models = document["models"]
        if not isinstance(models, dict):
            raise PriceTableError(f"{path}: field 'models': expected an object, got {type(models).__name__}")
    else:
        models = {k: v for k, v in document.items() if not k.startswith("_")}
    table: dict[str, dict[str, float]] = {}
    for model, entry in models.items():
        where = f"{path}: model {model!r}"
        if not isinstance(entry, dict):
            raise PriceTableError(f"{where}: expected an object with {', '.join(_PRICE_FIELDS)}, got {entry!r}")
        unknown = sorted(set(entry) - set(_PRICE_FIELDS) - _NOTE_FIELDS)
        if unknown:
            raise PriceTableError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
        prices: dict[str, float] = {}
        for field in _PRICE_FIELDS:
            if field not in entry:
                raise PriceTableError(f"{where}: field {field!r}: missing")
            value = entry[field]
            if not _is_number(value) or value < 0:
                raise PriceTableError(f"{where}: field {field!r}: must be a number >= 0, got {value!r}")
            prices[field] = float(value)
        for field in _NOTE_FIELDS & set(entry):
            if not isinstance(entry[field], str):
                raise PriceTableError(f"{where}: field {field!r}: must be a string, got {entry[field]!r}")
        table[str(model)] = prices
    return table


def _count(record: Mapping[str, Any], field: str) -> int:
    if field not in record:
        raise RunRecordError(f"run record field {field!r}: missing")
    value = record[field]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RunRecordError(f"run record field {field!r}: must be a non-negative integer, got {value!r}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise RunRecordError(f"run record field {field!r}: must be a non-negative integer, got {value!r}")
    if value < 0:
        raise RunRecordError(f"run record field {field!r}: must be >= 0, got {value!r}")
    return int(value)


def _seconds(record: Mapping[str, Any], field: str) -> float:
    if field not in record:
        raise RunRecordError(f"run record field {field!r}: missing")
    value = record[field]
    if not _is_number(value):
        raise RunRecordError(f"run record field {field!r}: must be a number of seconds, got {value!r}")
    if value < 0:
        raise RunRecordError(f"run record field {field!r}: must be >= 0, got {value!r}")
    return float(value)


def _lookup(model: str, price_table: Mapping[str, Mapping[str, float]]) -> str | None:
    """The table key for ``model``: exact, else the unique case-insensitive exact match; never a prefix."""
    if model in price_table:
        return model
    folded = [key for key in price_table if key.casefold() == model.casefold()]
    return folded[0] if len(folded) == 1 else None


def run_cost(record: Mapping[str, Any], price_table: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """Efficiency figures of one generation run (MobileForge section 4.1 "Efficiency", Table 2).

    ``cost_usd = input_tokens / 1e6 * input_per_mtok + output_tokens / 1e6 * output_per_mtok``, rounded
    to 1e-6 USD, with the prices of the record's model in ``price_table`` (as returned by
    :func:`load_price_table`). The model is looked up by exact name, then by case-insensitive exact name;
    there is no prefix or "closest" matching (``gpt-5`` must never price ``gpt-5-mini``).

    Args:
        record: the run record: ``model`` (or, failing that, ``model_name_or_path``), ``input_tokens``,
            ``output_tokens``, ``llm_calls`` (non-negative integers; integral floats accepted) and
            ``llm_seconds`` (wall-clock seconds spent in LLM calls, a non-negative number).
        price_table: ``{model: {"input_per_mtok", "output_per_mtok"}}`` in USD per million tokens.

    Returns:
        Plain builtins: ``{"model", "price_key", "input_tokens", "output_tokens", "total_tokens",
        "llm_calls", "llm_seconds", "cost_usd", "warning"}``. ``price_key`` is the table key used (or
        ``None``); when the model is not in the table, ``cost_usd`` is ``None`` and ``warning`` says so;
        otherwise ``warning`` is ``None``.

    Raises:
        RunRecordError: a missing, negative or non-numeric field, or a missing/empty model name, naming
            the field.
    """
    model = record.get("model", record.get("model_name_or_path"))
    if not isinstance(model, str) or not model.strip():
        raise RunRecordError(f"run record field 'model': must be a non-empty string, got {model!r}")
    input_tokens = _count(record, "input_tokens")
    output_tokens = _count(record, "output_tokens")
    llm_calls = _count(record, "llm_calls")
    llm_seconds = _seconds(record, "llm_seconds")
    key = _lookup(model, price_table)
    cost: float | None = None
    warning: str | None = None
    if key is None:
        warning = (
            f"model {model!r} is not in the price table; cost_usd is unknown (supply a table with --mb-price-table)"
        )
    else:
        prices = price_table[key]
        cost = round(
            input_tokens / 1_000_000 * prices["input_per_mtok"] + output_tokens / 1_000_000 * prices["output_per_mtok"],
            6,
        )
    return {
        "model": model,
        "price_key": key,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
        "llm_calls": llm_calls,
        "llm_seconds": llm_seconds,
        "cost_usd": cost,
        "warning": warning,
    }
