"""Evidence folder names (issue 17, item 6): collision-free, reversible, never escaping the run folder;
candidate text printed escaped."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from pytest_mobilebench.report.names import MAX_ENCODED, folder_name, name_of
from pytest_mobilebench.report.terminal import printable


def test_names_that_used_to_share_a_folder_are_distinct() -> None:
    names = ["a/b", "a b", "a:b", "a__b", "a%2fb", "..", ".", "", "%", "a\\b", "a\x00b", "A/B"]
    folders = [folder_name(n) for n in names]
    assert len(set(folders)) == len(names), folders
    assert folder_name("openai/gpt-4o") == "openai%2fgpt-4o" and folder_name("gpt-4o.mini") == "gpt-4o.mini"


@given(st.text(max_size=120))
def test_every_name_round_trips_and_stays_one_plain_component(name: str) -> None:
    folder = folder_name(name)
    if "~" not in folder:  # a name too long to keep whole is shortened with its digest (distinct, not reversible)
        assert name_of(folder) == name
    assert folder not in ("", ".", "..") and "/" not in folder and "\\" not in folder
    assert all(32 < ord(c) < 127 for c in folder) and len(folder) <= MAX_ENCODED


@given(st.text(max_size=60), st.text(max_size=60))
def test_two_names_never_share_a_folder(a: str, b: str) -> None:
    assert (folder_name(a) == folder_name(b)) == (a == b)


def test_long_names_stay_distinct_and_bounded(tmp_path: Path) -> None:
    a, b = "m/" * 300 + "a", "m/" * 300 + "b"
    assert folder_name(a) != folder_name(b) and len(folder_name(a)) <= MAX_ENCODED
    (tmp_path / folder_name(a)).mkdir()  # a valid file-system component
    with pytest.raises(ValueError):
        name_of(folder_name(a))


def test_a_folder_for_dotdot_stays_inside_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for name in ("..", "../..", "/etc", "a/../../b"):
        target = (run / folder_name(name) / folder_name("i")).resolve()
        assert run.resolve() in target.parents


def test_candidate_text_is_escaped_for_the_terminal() -> None:
    assert printable("ok\x1b[2J\rforged\u202e") == "ok\\x1b[2J\\x0dforged\\u202e"
