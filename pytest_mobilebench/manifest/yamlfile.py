"""Reading manifest files with line numbers, so every error can point at its place.

A manifest is one YAML mapping per file. :func:`read_yaml` returns the data together with the line of
each top-level key and of each entry of the ``instances`` (or another named) sequence, taken from
PyYAML's node marks.

The file is parsed once: libyaml's C parser and composer (``yaml.CSafeLoader``, which keeps the node
marks) build the node tree, the data is constructed from that same tree with the safe constructor, and
the lines are read off it. Without libyaml the pure-Python ``yaml.SafeLoader`` does the same, slower.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Final

import yaml

from pytest_mobilebench.suites.base import ManifestError

__all__ = ["YamlDocument", "read_yaml"]


@dataclasses.dataclass(frozen=True)
class YamlDocument:
    """A parsed manifest.

    Attributes:
        path: the file.
        data: the document (a mapping).
        key_lines: 1-based line of each top-level key.
        item_lines: for each top-level key holding a sequence, the 1-based line of each entry, and for
            entries that are mappings, the line of each of their keys: ``{key: [(line, {field: line})]}``.
    """

    path: Path
    data: dict[str, Any]
    key_lines: dict[str, int]
    item_lines: dict[str, list[tuple[int, dict[str, int]]]]

    def line_of(self, key: str, index: int | None = None, field: str | None = None) -> int | None:
        """Best-known line of a top-level key, an entry of its sequence, or a field of that entry."""
        if index is None:
            return self.key_lines.get(key)
        entries = self.item_lines.get(key, [])
        if index >= len(entries):
            return self.key_lines.get(key)
        line, fields = entries[index]
        return fields.get(field, line) if field else line


#: libyaml's C loader when PyYAML was built with it (marks kept), else the pure-Python one.
_LOADER: Final[type[yaml.SafeLoader | yaml.CSafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    """Parse ``text`` once: its root node (None for an empty document) and the data built from that node.

    Raises:
        yaml.YAMLError: syntax error, several documents, or a tag the safe constructor refuses.
    """
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def _duplicate_key(root: yaml.Node | None) -> tuple[str, int] | None:
    """The first key that occurs twice in one mapping of the tree, with its 1-based line, or None.

    PyYAML keeps the last value of a repeated key without a word (a second ``instances:`` list would drop
    the first one's instances; a second ``FAIL_TO_PASS`` would replace the gold list). Merge keys (``<<``)
    may repeat; a node reached through several aliases is walked once (an alias bomb stays cheap).
    """
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value != "<<":
                    if key_node.value in keys:
                        return key_node.value, key_node.start_mark.line + 1
                    keys.add(key_node.value)
                stack += [key_node, value_node]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    return None


def _error_place(text: str, mark: Any) -> tuple[int | None, str]:
    """1-based line and a ``" (column C)"`` / ``" (at the end of the file)"`` suffix for a YAML error mark.

    libyaml places an error at the end of the input on the line after the last one; that is reported as
    the last line of the file, so the line always exists.
    """
    if mark is None:
        return None, ""
    last = max(1, len(text.splitlines()))
    if mark.line + 1 > last:
        return last, " (at the end of the file)"
    return mark.line + 1, f" (column {mark.column + 1})"


def read_yaml(path: Path) -> YamlDocument:
    """Parse one YAML file that must hold a mapping.

    Raises:
        ManifestError: unreadable file, YAML syntax error (with the line and column PyYAML reports), a key
            repeated in one mapping (its second line), or a document that is not a mapping.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(path, f"cannot read manifest: {exc}") from exc
    try:
        node, data = _compose_and_construct(text)
    except yaml.YAMLError as exc:
        line, where = _error_place(text, getattr(exc, "problem_mark", None))
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(path, f"YAML syntax error: {problem}{where}", line=line) from exc
    duplicate = _duplicate_key(node)
    if duplicate is not None:
        raise ManifestError(path, f"key {duplicate[0]!r} occurs twice in one mapping (YAML keeps only the last)",
                            line=duplicate[1])
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise ManifestError(path, f"a manifest must be a YAML mapping, got {type(data).__name__}", line=1)
    key_lines: dict[str, int] = {}
    item_lines: dict[str, list[tuple[int, dict[str, int]]]] = {}
    for key_node, value_node in node.value:
        key = str(key_node.value)
        key_lines[key] = key_node.start_mark.line + 1
        if isinstance(value_node, yaml.SequenceNode):
            entries = []
            for entry in value_node.value:
                fields: dict[str, int] = {}
                if isinstance(entry, yaml.MappingNode):
                    fields = {str(k.value): k.start_mark.line + 1 for k, _ in entry.value}
                entries.append((entry.start_mark.line + 1, fields))
            item_lines[key] = entries
    return YamlDocument(path=path, data=data, key_lines=key_lines, item_lines=item_lines)
