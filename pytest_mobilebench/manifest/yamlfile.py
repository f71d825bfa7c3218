"""Reading manifest files with line numbers, so every error can point at its place.

A manifest is one YAML mapping per file. :func:`read_yaml` returns the data together with the line of
each top-level key and of each entry of the ``instances`` (or another named) sequence, taken from
PyYAML's node marks.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

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


def read_yaml(path: Path) -> YamlDocument:
    """Parse one YAML file that must hold a mapping.

    Raises:
        ManifestError: unreadable file, YAML syntax error (with the line and column PyYAML reports), or a
            document that is not a mapping.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(path, f"cannot read manifest: {exc}") from exc
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        col = f" (column {mark.column + 1})" if mark is not None else ""
        raise ManifestError(path, f"YAML syntax error: {problem}{col}", line=line) from exc
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
