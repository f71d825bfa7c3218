"""The fast reading of manifests as PyYAML writes them: multi-line strings double-quoted (every escape, folded with
escaped line breaks and blanks) or single-quoted, read by yaml-rs exactly as libyaml reads them (data, key lines,
entry lines), and a quoted scalar's text never taken for nodes unless it surely is one."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
import yaml_rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_manifest_fastyaml import _assert_agrees

from pytest_mobilebench.manifest import fastyaml, yamlfile

ROOT = Path(__file__).resolve().parents[1]


def _both(text: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``(libyaml's reading, yaml-rs's reading)``, each ``("ok", data)`` or ``("error",)``."""
    try:
        exact: tuple[Any, ...] = ("ok", yaml.load(text, Loader=yamlfile._LOADER))
    except yaml.YAMLError:
        exact = ("error",)
    try:
        fast: tuple[Any, ...] = ("ok", yaml_rs.loads(text, parse_datetime=False))
    except Exception:  # noqa: BLE001 - any refusal
        fast = ("error",)
    return exact, fast


def _escapes() -> list[str]:
    """Every character after a backslash of ASCII, a sample beyond; every \\x code, every 97th \\u code and its
    upper-case spelling, \\U codes up to past U+10FFFF; short and non-hex codes."""
    one = [chr(c) for c in range(0x20, 0x7F)] + [chr(c) for c in range(0x80, 0x3000, 13)] + ["\U0001f600"]
    codes = [f"x{c:02x}" for c in range(0x100)] + [f"u{c:04X}" for c in range(0, 0x10000, 97)]
    codes += [f"u{c:04x}" for c in (0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xFFFE, 0xFFFF)]
    codes += [f"U{c:08x}" for c in (*range(0, 0x110000, 0x1234), 0x10FFFF, 0x110000, 0xD800, 0xFFFFFFFF)]
    return one + codes + ["x4", "xg0", "u12", "U1234567", "u00e", "x"]


def test_every_escape_yaml_rs_reads_is_read_as_libyaml_reads_it() -> None:
    """The fast reading accepts any escape: that is sound only because yaml-rs reads each as libyaml does or
    refuses the text (libyaml reads it then, and words the error)."""
    for escape in _escapes():
        for text in (f'a: "x\\{escape}y"\n', f'a: "\\{escape}"\n'):
            exact, fast = _both(text)
            assert fast == ("error",) or fast == exact, text
            if fastyaml.fast_read(text) is not None:
                assert _assert_agrees(text)


_WORDS = [
    "diff",
    "--git",
    "a/src/x.js",
    "@@",
    "-1,3",
    "+1,3",
    "*p",
    "&&",
    "!x",
    "|",
    ">",
    "<",
    "`x`",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    ": ",
    "- ",
    "? ",
    "#",
    " #",
    "'",
    '"',
    "\\",
    "\\n",
    "yes",
    "017",
    "1e3",
    "~",
    "null",
    "%",
    "---",
    "...",
    "caf\u00e9",
    "\u00a0",
    "\u2028",
    "\x85",
    "\x07",
    "\t",
    "\u4e2d",
    "\U0001f600",
    "@Override",
    "/**",
    "*/",
]


@st.composite
def _strings(draw: st.DrawFn) -> str:
    """Patch-like text: words, blanks and line breaks of every kind PyYAML must quote or escape."""
    blanks = st.sampled_from([" ", "  ", "\n", "\n ", "   \n", "\n\n"])
    pieces = draw(st.lists(st.one_of(st.sampled_from(_WORDS), blanks), max_size=40))
    return "".join(pieces)


@st.composite
def _release(draw: st.DrawFn) -> str:
    """A release manifest as ``yaml.safe_dump`` writes it (any width, with or without unicode), instances holding
    generated strings under the release format's fields."""
    instances = []
    for n in range(draw(st.integers(1, 3))):
        fields = {"instance_id": f"o__a-{n}", "base_commit": "9c6228e0" * 5}
        for name in draw(
            st.lists(
                st.sampled_from(["patch", "test_patch", "problem_statement", "hints_text"]), unique=True, max_size=3
            )
        ):
            fields[name] = draw(_strings())
        fields["FAIL_TO_PASS"] = draw(st.lists(_strings(), max_size=2))
        instances.append(fields)
    doc = {"suite": "issue_resolution", "repo": "o/a", "title": draw(_strings()), "instances": instances}
    return yaml.safe_dump(
        doc, sort_keys=False, width=draw(st.sampled_from([20, 40, 80, 1000])), allow_unicode=draw(st.booleans())
    )


@given(_release())
@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
def test_pyyaml_dumps_read_fast_only_as_libyaml_reads_them(text: str) -> None:
    _assert_agrees(text)


def _release_text(seed: int, count: int, **dump: Any) -> str:
    """``count`` instances of the release format as ``benchmarks/bench_collection.py`` generates them, dumped."""
    import runpy
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmark reads its helpers beside it
    try:
        release_instance = runpy.run_path(str(ROOT / "benchmarks" / "bench_collection.py"))["release_instance"]
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rng = random.Random(seed)
    doc = {
        "suite": "issue_resolution",
        "repo": "o/a",
        "framework": "react-native",
        "instances": [release_instance(0, n, rng) for n in range(count)],
    }
    return yaml.safe_dump(doc, sort_keys=False, **dump)


@pytest.mark.parametrize(
    "dump", [{}, {"allow_unicode": True}, {"width": 40}, {"width": 4096}], ids=["default", "unicode", "narrow", "wide"]
)
def test_the_benchmarks_release_format_takes_the_fast_reading(dump: dict[str, Any]) -> None:
    """The shape ``benchmarks/bench_collection.py`` times: patches with annotations, doc comments, escaped quotes,
    brackets and non-ASCII text, folded by PyYAML."""
    assert _assert_agrees(_release_text(0, 30, **dump))


def test_a_fast_read_release_names_the_line_of_a_field_after_folded_patches(tmp_path: Path) -> None:
    """A validation error's line is libyaml's, asked when the error is worded, after folded scalars too."""
    from pytest_mobilebench.manifest import read_yaml
    from pytest_mobilebench.records import ManifestError
    from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest

    text = _release_text(1, 3).replace("difficulty: easy", "difficulty: impossible", 1)
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text, encoding="utf-8")
    doc = read_yaml(manifest)
    assert doc.text is not None  # the fast reading
    (error,) = [e for e in load_manifest(doc) if isinstance(e, ManifestError)]
    assert error.line == text.split("\n").index("  difficulty: impossible") + 1 and error.instance_id == "owner0__app-0"


@pytest.mark.parametrize(
    "text",
    [
        # a quoted scalar's text that looks like nodes: it is text for both
        'a: "x\n  - y: !t\n  &b *c"\nb: 1\n',
        'a: \'x\n  k: "y\n\n  !t\'\nb: "z"\n',
        "- \"a\\\n  \\ @b *c\"\n- 'd'\n",
        'a:\n  b: "x\\\n    \\ y #z"\n  c: d # "e"\n',
        "a: \"x\" # \"y\nb: 'q'''\n",
        # a plain scalar continued by a line that looks like a quoted scalar's start: never taken for one
        "a: b\n  - 'c\nd: !t e\nf: g'\n",
        'a: b\n  - "c\nd: &x e\nf: g"\n',
        "- a\n  - 'b\n- !t c\n- d'\n",
        "a:\n- b: c\n   d: 'e\nf: !t g'\n",
        "a: b\n  c\n  - 'd\ne: !t f\ng: h'\n",
        # quoted scalars this does not follow (a quoted key, after an anchor or a tag, in a flow): all left to the
        # checks
        '"a": "b\n  c"\n',
        'a: &x "b\n  c: !t d"\n',
        'a: ["b\n  c", !t d]\n',
        "a: {b: 'c\n  d'}\n",
        # block scalars: their bodies may hold what looks like quotes (then no quote is followed), and a quoted
        # scalar may hold what looks like a block scalar header
        "a: |2\n   k: 'x\nb: !t y\nc: z'\n",
        "a: |\n  k: 'x\nb: !t y\nc: z'\n",
        "a:  |\n  k: 'x\nb: !t y\nc: z'\n",
        'a: "x: |\n    y"\nb: !t c\nd: "\n  e"\n',
        'a: |\n  text\nb: "c\n  d"\n',
        "- |\n  x\n- 'y'\n",
        # comments and blank lines between
        "a: b\n\n  # c\n  - 'd\ne: !t f\ng: h'\n",
        "a: 'b'\n\n\nc: \"d\n\n  e\"\n",
    ],
)
def test_quoted_scalars_are_followed_only_where_they_surely_start_a_node(text: str) -> None:
    _assert_agrees(text)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "text",
    [
        'a: "' + '\\"' * 100_000 + '"\n',  # escaped quotes, one after another
        "a:\n" + "".join('- "' + "\\" * (2 * (i % 7)) + '"\n' for i in range(30_000)),  # runs of backslashes
        "a:\n" + "".join("- 'x'\n\n\n" for _ in range(30_000)),  # many quoted scalars, blank lines between
        "a: b\n" + "  c 'd'\n" * 50_000,  # quotes inside a plain scalar
    ],
)
def test_quoted_texts_are_read_in_linear_time(text: str) -> None:
    _assert_agrees(text)
