"""The fast reading of manifests (yaml-rs): whenever it answers, data and lines are exactly libyaml's (PyYAML's
YAML 1.1 safe loader); every construct the two read otherwise sends the file to libyaml."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml
import yaml_rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_mobilebench.manifest import fastyaml, read_yaml, yamlfile
from pytest_mobilebench.records import ManifestError

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = sorted((ROOT / "cases").rglob("*.yaml"))


def _typed(value: Any) -> Any:
    """``value`` with the type of every scalar and key spelled out (``1 == True == 1.0`` in Python)."""
    if isinstance(value, dict):
        return [(_typed(k), _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, repr(value))


def _libyaml(text: str) -> yamlfile.YamlDocument | None:
    try:
        return yamlfile._parse(Path("m.yaml"), text)
    except ManifestError:
        return None


def _assert_agrees(text: str) -> bool:
    """Whether the fast reading answered; when it did, that it equals libyaml's reading in every respect."""
    fast = fastyaml.fast_read(text)
    if fast is None:
        return False
    exact = _libyaml(text)
    assert exact is not None, f"yaml-rs read a text libyaml refuses: {text!r}"
    data, key_lines, item_lines = fast
    assert _typed(data) == _typed(exact.data), text
    assert key_lines == exact.key_lines, text
    assert {k: [line for line, _ in v] for k, v in item_lines.items()} == {
        k: [line for line, _ in v] for k, v in exact.item_lines.items()
    }, text
    return True


# ------------------------------------------------------------------ the constructs read otherwise


@pytest.mark.parametrize(
    "text",
    [
        # YAML 1.1 implicit types yaml-rs reads as strings
        "a: yes\n",
        "a: No\n",
        "on: x\n",
        "a: [OFF]\n",
        "a: 12:30\n",
        "a: 190:20:30.15\n",
        "a: 1_000\n",
        "a: 0b101\n",
        "a: 2001-12-14\n",
        "a: 2001-12-14 21:59:43.10 -5\n",
        "a:\n  - 2001-12-14\n    21:59:43\n",
        "a: {<<: {b: 1}}\n",
        "a: =\n",
        # numbers yaml-rs reads where PyYAML keeps a string, or reads another number
        "a: 017\n",
        "a: 08\n",
        "a: 0o17\n",
        "a: 1e3\n",
        "a: 1.0e1\n",
        "a: -.5\n",
        "a: .NaN\n",
        "a: .nAN\n",
        "a: _1\n",
        "a: 0X1\n",
        "a: [5.e3]\n",
        # what yaml-rs accepts and libyaml refuses or reads otherwise
        "a:\n\tb: 1\n",
        "a: b\rc: d\n",
        "a: b\n---\nc: d\n",
        "%YAML 1.1\n---\na: b\n",
        "a: !foo bar\n",
        "a: !!binary aGVsbG8=\n",
        "a: &x 1\nb: *x\n",
        "{a: 1}: x\n",
        "a: {x, {b: c}}\n",
        "- : x\n",
        "a: [x:]\n",
        "a: [:+5]\n",
        "a: {f:?0}\n",
        "a: {?b: c}\n",
        "a: {b: ?c}\n",
        "a: {f:,}\n",
        "a: {id: >x}\n",
        "a: [b,\nc]\n",
        "a: b\u2028c\n",
        "a: b\x85c\n",
        "\ufeffa: b\n",
        "a: |\n",
        "a: |1\n\n",
        "k: |+\n  - x\n  text",
        "a: b",
        'a: "\\ud800"\n',
        'a: "\\q"\n',
        "a: b\n  - 'c\nd: !t e\nf: g'\n",
        '- a\n  - "c\nd: &x e\nf: g"\n',
        # a quoted key's colon with the value right after it: libyaml types the value, yaml-rs does not
        'a: {"b":yes}\n',
        "a: {'b':on}\n",
        'a: ["b":yes]\n',
        'a: {"x" :yes}\n',
        'a: {"b":017}\n',
        'a: {"b":12:30}\n',
        # keys libyaml's duplicate check compares as text (yaml-rs keeps both)
        'a:\n  1: x\n  "1": y\n',
        'a: {1: x, "1": y}\n',
        'a:\n  true: x\n  "true": y\n',
        'a:\n  ~: x\n  "~": y\n',
    ],
)
def test_a_construct_read_otherwise_is_left_to_libyaml(text: str) -> None:
    assert fastyaml.fast_read(text) is None


@pytest.mark.parametrize(
    "text",
    [
        'a: "20"\nb: 20\n',  # a quoted number stays a string in both; the plain one is an int in both
        "created: '2024-11-08'\n",  # a quoted date is a string in both
        "a: [x, 'yes', \"on\"]\n",
        "a: true\nb: ~\nc:\nd: null\ne: -3\nf: 0.25\n",
        "problem_statement: |\n  text\n  more\n\nb: x\n",
        "instances:\n- {id: a, n: 1}\n- id: b\n",
    ],
)
def test_texts_both_read_alike_are_read_fast_and_exactly(text: str) -> None:
    assert _assert_agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: b\r\nc: d\r\n",  # CRLF reads as LF in both
        "problem_statement: |\n  Steps: * tap > open `menu` {x [y @user & co ![img](a.png) :smile: \\d+ 12:30 yes\n"
        "  ? what\n\n  - not a list\nb: x\n",  # a block scalar's body is text, never a node
        "instances:\n  - id: a\n    problem_statement: >-\n      a > b * c\n      `x`\n    n: 1\n",
        "a: caf\u00e9 \u00a0 \u3000 \u4e2d\u6587 \U0001f600\n",  # NBSP, CJK, emoji: printable for PyYAML
        'a: "C:\\\\Users"\n',  # an escaped backslash
        'a: "\\x41\\N\\u00e9\\U0001F600\\e\\0\\ b\\\n  \\ c"\n',  # escapes PyYAML writes
    ],
)
def test_common_real_world_texts_are_read_fast(text: str) -> None:
    assert _assert_agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "a:\n  [x, y]\n",
        "a:\n [x] # c\n",  # a flow sequence on the line after its key
        'a: [b, "]",\n  c, "["]\n',
        'a: [x #]\n  , "[" ]\n',  # over lines, brackets in quotes or comments balancing
        "a: |\n    x\n  y\n",
        "- a: |\n   x\n  b: 1\n",
        "a: |\n  x\nb: >\n  y\n\n",
        "a: |\n  text\n b: yes\n",
        "a: |\n    x\n  b: on\n",
        "- |\n  x\n- >\n y\n",
        "a: |2\n   x\n  yes\n",
        "a: |\n\n   x\n  y: 017\n",  # bodies that end where YAML ends them, and what follows them
    ],
)
def test_odd_layouts_are_read_exactly_or_left_to_libyaml(text: str) -> None:
    _assert_agrees(text)


def _nested(depth: int) -> str:
    """A sequence nested ``depth`` deep in lines of 7 compact entries, each line indented past the last."""
    lines, column = [], 2
    while depth > 0:
        step = min(7, depth)
        depth -= step
        lines.append(" " * column + "- " * step + ("x" if depth == 0 else ""))
        column += 2 * step
    return "a:\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "deep",
    ["a:\n  " + "- " * 100_000 + "x\n", _nested(999), _nested(3000)],
    ids=["one-line", "999-lines", "3000-lines"],
)
def test_nesting_that_would_overflow_yaml_rss_stack_never_reaches_it(tmp_path: Path, deep: str) -> None:
    """yaml-rs dies of a stack overflow (the whole pytest run with it) on the first and third; libyaml refuses
    more than 1,000 levels with a syntax error."""
    assert fastyaml.fast_read(deep) is None
    manifest = tmp_path / "m.yaml"
    manifest.write_text(deep, encoding="utf-8")
    with pytest.raises(ManifestError, match="nesting depth"):
        read_yaml(manifest)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: " + "1" * 200_000 + "x\n",  # a number-shaped token (quadratic backtracking before)
        "a:\n" + "".join(f"- '0b{i:b}'\n" for i in range(40_000)),  # 40,000 distinct quoted suspects
        "".join(f"a{' ' * 1000}{i}: 1\n" for i in range(3_000)),  # blanks inside keys
    ],
)
def test_adversarial_texts_are_read_in_linear_time(text: str) -> None:
    """Each took minutes (quadratic) before; now well under a second. The timeout only catches a hang."""
    _assert_agrees(text)


def test_a_number_too_long_for_python_is_a_manifest_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("a: " + "9" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ManifestError, match="m.yaml"):
        read_yaml(manifest)


def test_every_string_the_yaml12_table_types_is_typed_by_yaml_rs_when_plain() -> None:
    """A string in yaml-rs's reading matching ``_YAML12_TYPED`` must have been quoted: checked on samples."""
    samples = [
        "0",
        "-12",
        "+7",
        "08",
        "0o17",
        "0x1F",
        ".5",
        "1.",
        "1.5e3",
        "-2E-4",
        "+.inf",
        ".NaN",
        "true",
        "FALSE",
        "Null",
        "~",
        "123456789012345678901234567890",
    ]
    for sample in samples:
        assert fastyaml._YAML12_TYPED.match(sample), sample
        assert not isinstance(yaml_rs.loads(f"a: {sample}\n")["a"], str), sample


@given(st.from_regex(fastyaml._YAML12_TYPED, fullmatch=True))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_the_yaml12_table_never_names_a_string_yaml_rs_keeps(sample: str) -> None:
    if "\n" in sample:  # from_regex may add a final line break before \Z
        return
    assert not isinstance(yaml_rs.loads(f"a: {sample}\n")["a"], str), sample


# ------------------------------------------------------------------ generated and mutated documents

_SCALARS = [
    "x",
    "owner__app-1",
    "a.test.js::suite > works",
    "yes",
    "no",
    "On",
    "017",
    "08",
    "0o7",
    "1e3",
    "12:30",
    "2024-01-02",
    "1_0",
    "-.5",
    ".inf",
    ".NaN",
    "~",
    "null",
    "true",
    "=",
    "<<",
    "'yes'",
    '"017"',
    "'it''s'",
    '"a\\tb"',
    "20",
    "-3",
    "0.25",
    "9c6228e0",
    "http://x.y/z?q=1#f",
    "a: b",
    "- x",
    "[a, b]",
    "{a: 1}",
    "",
    "|\n  text\n",
    ">-\n  folded\n\n  text\n",
    "|+\n  kept\n\n",
    "&a x",
    "*a",
    "!!str yes",
    "? x",
]
_KEYS = ["instance_id", "FAIL_TO_PASS", "on", "yes", "1", "017", "a b", "'q'", "<<", "x"]


@st.composite
def _documents(draw: st.DrawFn) -> str:
    """A manifest-shaped YAML text: top-level keys, a sequence of mappings, scalars of every kind above."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        lines.append(f"{draw(st.sampled_from(_KEYS))}: {draw(st.sampled_from(_SCALARS))}")
    lines.append("instances:")
    indent = draw(st.sampled_from(["", "  "]))
    for _ in range(draw(st.integers(0, 3))):
        fields = draw(st.lists(st.tuples(st.sampled_from(_KEYS), st.sampled_from(_SCALARS)), min_size=1, max_size=3))
        for i, (key, value) in enumerate(fields):
            prefix = f"{indent}- " if i == 0 else f"{indent}  "
            value = value.replace("\n", "\n" + indent + "  ")
            lines.append(f"{prefix}{key}: {value}")
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# note", f"{indent}  # note"])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


@given(_documents())
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_generated_documents_read_fast_only_as_libyaml_reads_them(text: str) -> None:
    _assert_agrees(text)


_NOISE = list(" \n-:#'\"[]{},|>?!&*%@`\\0123456789eyYnNoO.+_~=<\t") + [
    "yes",
    "\n  ",
    "\n- ",
    ": ",
    "- ",
    "|\n",
    ">\n",
    "--- ",
    "0x1",
    "1e3",
    "12:30",
    "2024-01-02",
    "<<: ",
    "\\u00e9",
    "é",
    "\u2028",
    "\ufeff",
    "\r\n",
    "&a ",
    "*a",
    "!!str ",
    "? ",
]


@given(st.sampled_from(BUNDLED), st.integers(0, 10**6), st.integers(1, 3))
@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_bundled_manifests_read_fast_only_as_libyaml_reads_them(path: Path, seed: int, edits: int) -> None:
    rnd = random.Random(seed)
    lines = path.read_text(encoding="utf-8").split("\n")
    start = rnd.randrange(len(lines))
    text = "\n".join(lines[:3] + lines[start : start + 12]) + "\n"
    for _ in range(edits):
        at, noise, op = rnd.randrange(len(text) + 1), rnd.choice(_NOISE), rnd.random()
        text = (
            text[:at] + noise + text[at:]
            if op < 0.5
            else text[:at] + noise + text[at + len(noise) :]
            if op < 0.8
            else text[:at] + text[at + rnd.randint(1, 4) :]
        )
    _assert_agrees(text)


# ------------------------------------------------------------------ the bundled manifests and read_yaml


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_manifests_agree(path: Path) -> None:
    _assert_agrees(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "name",
    [
        "examples/mobilebench__counter.yaml",
        "issue_resolution/jellyfin__jellyfin-expo.yaml",
        "planner/calendar.yaml",
        "app_generation/tabs_demo.yaml",
        "device_repair/mobilebench__calc.yaml",
    ],
)
def test_the_bundled_manifests_take_the_fast_reading(name: str) -> None:
    assert _assert_agrees((ROOT / "cases" / name).read_text(encoding="utf-8")), name


def test_read_yaml_reads_fast_and_gives_a_fields_line_from_libyaml_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "suite: issue_resolution\nrepo: a/b\ninstances:\n  - instance_id: a-1\n    base_commit: x\n\n"
        "  - instance_id: a-2\n    # a comment\n    FAIL_TO_PASS: [t]\n",
        encoding="utf-8",
    )
    parses: list[str] = []
    real = yamlfile._parse
    monkeypatch.setattr(yamlfile, "_parse", lambda path, text: parses.append(text) or real(path, text))
    doc = read_yaml(manifest, tmp_path / "cache")
    assert parses == [] and doc.text is not None  # the fast reading, nothing stored
    assert not (tmp_path / "cache").exists()
    assert (doc.line_of("repo"), doc.line_of("instances", 0), doc.line_of("instances", 1)) == (2, 4, 7)
    assert doc.line_of("instances", 1, "FAIL_TO_PASS") == 9 and len(parses) == 1
    assert doc.line_of("instances", 0, "base_commit") == 5 and len(parses) == 1  # parsed once
    assert doc.line_of("instances", 0, "absent") == 4
    exact = real(manifest, manifest.read_text())
    assert (doc.data, doc.key_lines) == (exact.data, exact.key_lines)


def test_without_yaml_rs_every_file_is_read_by_libyaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastyaml, "_loads", lambda text: None)
    path = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"
    doc = read_yaml(path)
    assert doc.text is None and doc.data == yaml.safe_load(path.read_text(encoding="utf-8"))


def test_a_validation_error_in_a_fast_read_manifest_names_the_fields_line(tmp_path: Path) -> None:
    from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest

    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "suite: issue_resolution\nrepo: a/b\nframework: react-native\ninstances:\n"
        "  - instance_id: a__b-1\n    base_commit: 9c6228e09c6228e09c6228e09c6228e09c6228e0\n    FAIL_TO_PASS: [t]\n"
        "    difficulty: impossible\n",
        encoding="utf-8",
    )
    doc = read_yaml(manifest)
    assert doc.text is not None
    (error,) = [e for e in load_manifest(doc) if isinstance(e, ManifestError)]
    assert error.line == 8 and error.instance_id == "a__b-1", error
