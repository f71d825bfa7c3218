"""Efficiency axis (MobileForge section 4.1): price-table validation and per-run cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench.suites.app_generation.efficiency import (
    DEFAULT_PRICE_TABLE,
    PriceTableError,
    RunRecordError,
    load_price_table,
    run_cost,
)

TABLE = {
    "alpha": {"input_per_mtok": 2.0, "output_per_mtok": 8.0},
    "Beta-Large": {"input_per_mtok": 0.5, "output_per_mtok": 1.5},
    "alpha-mini": {"input_per_mtok": 0.1, "output_per_mtok": 0.4},
}


def _record(**overrides: object) -> dict[str, object]:
    record: dict[str, object] = {
        "model": "alpha",
        "input_tokens": 250_000,
        "output_tokens": 40_000,
        "llm_calls": 12,
        "llm_seconds": 95.5,
    }
    record.update(overrides)
    return record


def _table_file(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_default_table_is_dated_and_valid() -> None:
    raw = json.loads(DEFAULT_PRICE_TABLE.read_text(encoding="utf-8"))
    assert raw["written"] == "2026-11-29"
    assert "--mb-price-table" in raw["note"]
    table = load_price_table()
    assert table["gpt-5"] == {"input_per_mtok": 1.25, "output_per_mtok": 10.0}
    assert len(table) == len(raw["models"])


def test_cost_formula() -> None:
    # 250k in * $2/M = $0.50; 40k out * $8/M = $0.32 -> $0.82
    out = run_cost(_record(), TABLE)
    assert out == {
        "model": "alpha",
        "price_key": "alpha",
        "input_tokens": 250_000,
        "output_tokens": 40_000,
        "total_tokens": 290_000,
        "llm_calls": 12,
        "llm_seconds": 95.5,
        "cost_usd": 0.82,
        "warning": None,
    }


def test_case_insensitive_exact_match_but_never_prefix() -> None:
    # 1M in * 0.5 + 2M out * 1.5 = 3.5
    out = run_cost(_record(model="beta-large", input_tokens=1_000_000, output_tokens=2_000_000), TABLE)
    assert (out["price_key"], out["cost_usd"]) == ("Beta-Large", 3.5)
    # "alpha-max" must not be priced as "alpha" (or "alpha-mini")
    missing = run_cost(_record(model="alpha-max"), TABLE)
    assert missing["cost_usd"] is None and missing["price_key"] is None
    assert "alpha-max" in missing["warning"] and "--mb-price-table" in missing["warning"]
    # token figures are still reported without a price
    assert missing["total_tokens"] == 290_000


def test_model_name_or_path_fallback_and_integral_floats() -> None:
    record = _record(input_tokens=1_000_000.0, output_tokens=0)
    del record["model"]
    record["model_name_or_path"] = "alpha-mini"
    out = run_cost(record, TABLE)
    assert (out["model"], out["input_tokens"], out["cost_usd"]) == ("alpha-mini", 1_000_000, 0.1)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("input_tokens", -1, "'input_tokens': must be >= 0"),
        ("output_tokens", "12", "'output_tokens': must be a non-negative integer"),
        ("llm_calls", 1.5, "'llm_calls': must be a non-negative integer"),
        ("llm_calls", True, "'llm_calls': must be a non-negative integer"),
        ("llm_seconds", -0.1, "'llm_seconds': must be >= 0"),
        ("llm_seconds", float("nan"), "'llm_seconds': must be a number"),
        ("model", "", "'model': must be a non-empty string"),
    ],
)
def test_record_validation_names_the_field(field: str, value: object, message: str) -> None:
    with pytest.raises(RunRecordError, match=message):
        run_cost(_record(**{field: value}), TABLE)


def test_missing_record_field() -> None:
    record = _record()
    del record["llm_seconds"]
    with pytest.raises(RunRecordError, match="'llm_seconds': missing"):
        run_cost(record, TABLE)


def test_flat_table_and_notes(tmp_path: Path) -> None:
    path = _table_file(
        tmp_path,
        {"_comment": "mine", "m1": {"input_per_mtok": 1, "output_per_mtok": 2, "note": "contract price"}},
    )
    assert load_price_table(path) == {"m1": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"models": {"m1": {"input_per_mtok": "1.25", "output_per_mtok": 2}}},
            r"model 'm1': field 'input_per_mtok': must be a number >= 0, got '1.25'",
        ),
        (
            {"models": {"m1": {"input_per_mtok": 1, "output_per_mtok": -2}}},
            r"model 'm1': field 'output_per_mtok': must be a number >= 0",
        ),
        ({"models": {"m1": {"input_per_mtok": 1}}}, r"model 'm1': field 'output_per_mtok': missing"),
        (
            {"models": {"m1": {"input_per_mtok": 1, "output_per_mtok": 2, "input_per_mtoken": 3}}},
            r"model 'm1': unknown field\(s\) 'input_per_mtoken'",
        ),
        ({"models": {"m1": [1, 2]}}, r"model 'm1': expected an object"),
        (
            {"models": {"m1": {"input_per_mtok": 1, "output_per_mtok": 2, "note": 5}}},
            r"model 'm1': field 'note': must be a string",
        ),
        ({"models": []}, r"field 'models': expected an object"),
        ([1, 2], r"expected a JSON object"),
    ],
)
def test_table_validation_names_file_model_field(tmp_path: Path, document: object, message: str) -> None:
    path = _table_file(tmp_path, document)
    with pytest.raises(PriceTableError, match=message) as info:
        load_price_table(path)
    assert str(path) in str(info.value)


def test_table_unreadable_or_not_json(tmp_path: Path) -> None:
    with pytest.raises(PriceTableError, match="cannot read price table"):
        load_price_table(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "models": {,}\n}', encoding="utf-8")
    with pytest.raises(PriceTableError, match=r"bad.json:2: invalid JSON"):
        load_price_table(bad)
