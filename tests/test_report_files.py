"""One report file per model (the evidence folders' encoding, report/names.py): the file name encoding is
collision-free, reversible and never a special path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_mobilebench.report.names import MAX_ENCODED
from pytest_mobilebench.report.names import folder_name as encode_name
from pytest_mobilebench.report.names import name_of as decode_name


@given(st.text(max_size=60))
def test_every_name_round_trips_to_one_plain_path_component(name: str) -> None:
    encoded = encode_name(name)
    assert re.fullmatch(r"[A-Za-z0-9._%~-]+", encoded) and encoded not in (".", "..")
    if "~" in encoded:  # too long to keep whole: shortened with its digest, distinct but not reversible
        assert len(encoded) <= MAX_ENCODED
    else:
        assert decode_name(encoded) == name  # reversible, hence two names never share a file


def test_names_that_would_shape_a_path_are_encoded() -> None:
    assert encode_name("org/model-a") == "org%2fmodel-a"
    assert (encode_name("."), encode_name(".."), encode_name("")) == ("%2e", "%2e.", "%")
    assert encode_name("a%2Fb") != encode_name("a/b")  # the escape character itself is escaped
    assert encode_name("model b (v2)") == "model%20b%20%28v2%29"


def test_a_string_that_no_name_encodes_to_is_refused() -> None:
    for bad in ("a/b", "%2E", "a~0f"):
        with pytest.raises(ValueError):
            decode_name(bad)


def test_evidence_with_lone_surrogates_is_written_and_read_back_unchanged(tmp_path: Path) -> None:
    """A jest title or message the candidate's code made of half a surrogate pair decodes to a str UTF-8
    cannot hold; the evidence writers escape it (``\\ud800``) instead of raising (a harness error would
    make the candidate's run infrastructure), and JSON reads it back as it was."""
    from pytest_mobilebench.files import append_jsonl, atomic_write_json, atomic_write_text, read_json

    data = {"tests": {"a.test.js::lone \ud800 suite > \udc00": "PASS", "é": "FAIL"}}
    atomic_write_json(tmp_path / "parsed.json", data)
    assert read_json(tmp_path / "parsed.json") == data
    append_jsonl(tmp_path / "results.jsonl", data)
    append_jsonl(tmp_path / "results.jsonl", data)
    lines = (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [data, data]
    atomic_write_text(tmp_path / "log.txt", "received '\ud83d'\n")
    assert (tmp_path / "log.txt").read_text(encoding="utf-8") == "received '\\ud83d'\n"
