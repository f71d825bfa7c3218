"""read_yaml: one parse with libyaml's C loader, data equal to yaml.safe_load, lines from the node marks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytest_mobilebench.manifest import read_yaml, yamlfile
from pytest_mobilebench.records import ManifestError

MANIFEST = """\
# a comment line
suite: issue_resolution
repo: acme/app
defaults: &d
  difficulty: easy
instances:
  - instance_id: acme__app-1
    base_commit: "abc"
    created: 2026-01-06
    <<: *d

  - instance_id: acme__app-2
    FAIL_TO_PASS:
      - "a.test.js::x > y"
    flag: yes
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_c_loader_is_used_when_pyyaml_has_libyaml() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML was built without libyaml")
    assert yamlfile._LOADER is yaml.CSafeLoader


def test_data_equals_safe_load_and_lines_come_from_the_marks(tmp_path: Path) -> None:
    doc = read_yaml(_write(tmp_path, MANIFEST))
    assert doc.data == yaml.safe_load(MANIFEST)  # anchors, merge keys, dates, booleans as the safe loader builds them
    assert doc.line_of("suite") == 2
    assert doc.line_of("instances") == 6
    assert doc.line_of("instances", 0) == 7
    assert doc.line_of("instances", 1) == 12
    assert doc.line_of("instances", 1, "FAIL_TO_PASS") == 13
    assert doc.line_of("instances", 0, "created") == 9
    assert doc.line_of("instances", 0, "absent_field") == 7
    assert doc.line_of("instances", 5) == 6  # past the end: the key's line
    assert doc.line_of("missing") is None


@pytest.mark.parametrize(
    ("text", "line", "where"),
    [
        # libyaml puts "end of input" on the line after the last: it is reported on the last line.
        ("suite: issue_resolution\nrepo: acme/app\ninstances:\n  - instance_id: [unclosed", 4, "end of the file"),
        ("suite: issue_resolution\nrepo: acme/app\ninstances:\n  - instance_id: [unclosed\n", 4, "end of the file"),
        ("suite: x\nrepo: a\n  bad: indent\nmore: 1\n", 3, "column"),
        ("suite: x\n\tinstances: []\n", 2, "column"),
    ],
)
def test_syntax_errors_name_an_existing_line(tmp_path: Path, text: str, line: int, where: str) -> None:
    with pytest.raises(ManifestError) as info:
        read_yaml(_write(tmp_path, text))
    assert info.value.line == line
    assert "YAML syntax error" in str(info.value) and where in str(info.value)
    assert f"m.yaml:{line}:" in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "must be a YAML mapping, got NoneType"),
        ("- a\n- b\n", "must be a YAML mapping, got list"),
        ("a: 1\n---\nb: 2\n", "YAML syntax error"),  # a second document
        ("a: !!python/object:os.system {}\n", "YAML syntax error"),  # the safe constructor refuses it
    ],
)
def test_documents_that_are_not_one_safe_mapping_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        read_yaml(_write(tmp_path, text))


def test_unreadable_file_is_a_manifest_error(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_bytes(b"suite: \xff\xfe\n")
    with pytest.raises(ManifestError, match="cannot read manifest"):
        read_yaml(path)


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        # a second top-level list would silently replace the first: its instances vanish without a word
        (
            "suite: issue_resolution\ninstances:\n  - instance_id: a-1\ninstances:\n  - instance_id: a-2\n",
            4,
            "instances",
        ),
        # a second gold list in one entry would silently replace the first
        (
            "suite: s\ninstances:\n  - instance_id: a-1\n    FAIL_TO_PASS: [x]\n    FAIL_TO_PASS: [y]\n",
            5,
            "FAIL_TO_PASS",
        ),
        # nested mappings too
        ("suite: s\nenvironment:\n  node: '20'\n  node: '18'\n", 4, "node"),
    ],
)
def test_a_duplicate_key_is_an_error_naming_its_line(tmp_path: Path, text: str, line: int, key: str) -> None:
    with pytest.raises(ManifestError) as info:
        read_yaml(_write(tmp_path, text))
    assert info.value.line == line and repr(key) in str(info.value), str(info.value)


def test_merge_keys_and_shared_anchors_are_not_duplicates(tmp_path: Path) -> None:
    text = "d: &d {a: 1}\nitems:\n  - {<<: *d, b: 2}\n  - {<<: *d, b: 3}\n  - *d\n"
    assert read_yaml(_write(tmp_path, text)).data["items"][2] == {"a": 1}


def test_an_alias_bomb_is_read_without_walking_every_copy(tmp_path: Path) -> None:
    rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(8)]
    read_yaml(_write(tmp_path, "\n".join(rows) + "\n"))  # 10**9 leaves if walked copy by copy


# ----------------------------------------------------------------------- stored parses (issue 23)
# Only what the fast reading (yaml-rs, tests/test_manifest_fastyaml.py) leaves to libyaml is stored: these
# manifests hold a YAML 1.1 boolean ("flag: yes") so that libyaml reads them.


def _stored(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.json"))


def test_a_stored_parse_is_read_back_for_the_same_bytes_and_dropped_when_a_byte_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "suite: x\nflag: yes\ninstances:\n  - instance_id: a\n    n: 1\n  - instance_id: b\n    n: 2.5\n"
    )
    first = read_yaml(manifest, cache)
    assert len(_stored(cache)) == 1
    parsed: list[object] = []
    real = yamlfile._parse
    monkeypatch.setattr(yamlfile, "_parse", lambda *a: parsed.append(a) or real(*a))
    again = read_yaml(manifest, cache)
    assert parsed == [] and again == first  # same data, same lines, nothing parsed
    manifest.write_text(manifest.read_text().replace("n: 1", "n: 3"))
    changed = read_yaml(manifest, cache)
    assert len(parsed) == 1 and changed.data["instances"][0]["n"] == 3 and len(_stored(cache)) == 1


@pytest.mark.parametrize(
    "text",
    [
        "suite: x\ncreated: 2024-01-02\n",  # a date: JSON would give a string back
        "suite: x\n1: one\n",  # an int key: JSON would give '1' back
        "suite: x\nv: .nan\n",  # NaN is not JSON
    ],
)
def test_a_document_json_cannot_hold_exactly_is_never_stored(tmp_path: Path, text: str) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    first = read_yaml(manifest, tmp_path / "cache")
    assert _stored(tmp_path / "cache") == []
    assert read_yaml(manifest, tmp_path / "cache").data.keys() == first.data.keys()


def test_a_broken_or_foreign_stored_parse_is_ignored_and_errors_are_never_stored(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    manifest = tmp_path / "m.yaml"
    manifest.write_text("suite: x\nrepo: a/b\nflag: yes\n")
    read_yaml(manifest, cache)
    (stored,) = _stored(cache)
    stored.write_text('{"format": 1, "sha256": "0", "data": {"suite": "forged"}}')  # another file's bytes
    assert read_yaml(manifest, cache).data["suite"] == "x"
    stored.write_text("{half")
    assert read_yaml(manifest, cache).data["suite"] == "x"
    bad = tmp_path / "bad.yaml"
    bad.write_text("suite: x\nsuite: y\n")
    for _ in range(2):
        with pytest.raises(ManifestError, match="occurs twice"):
            read_yaml(bad, cache)
