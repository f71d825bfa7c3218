"""Reading manifest files with line numbers, so every error can point at its place.

A manifest is one YAML mapping per file. :func:`read_yaml` returns the data together with the line of
each top-level key and of each entry of the ``instances`` (or another named) sequence.

Meaning is PyYAML's safe loader's (YAML 1.1). A file is read once, by the first of:

1. :func:`.fastyaml.fast_read`: yaml-rs (Rust), when nothing in the text can read otherwise under YAML 1.1 (see
   that module); the lines are read off the text and checked against the data; a field's line, asked only to
   word an error, comes from libyaml then (:meth:`YamlDocument.line_of`);
2. a parse kept from an earlier run: given a ``cache_dir`` (the plugin passes pytest's cache folder,
   ``.pytest_cache/d/mobilebench-manifests``), a manifest read by libyaml is stored there as JSON, one file
   per manifest path, under the SHA-256 of the manifest's bytes; the next read of the same bytes loads that
   JSON (a changed byte parses again). A document JSON cannot hold exactly (dates, non-string keys, NaN) and
   a file with an error are never stored;
3. libyaml: its C parser and composer (``yaml.CSafeLoader``, which keeps the node marks) build the node tree,
   the data is constructed from that same tree with the safe constructor (in Python: about thirty times the
   cost of ``json`` for the same records), the lines are read off the marks. Without libyaml the pure-Python
   ``yaml.SafeLoader`` does the same, slower.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from pytest_mobilebench.manifest.fastyaml import fast_read
from pytest_mobilebench.suggest import closest
from pytest_mobilebench.records import ManifestError

__all__ = ["YamlDocument", "charge_file_problem", "read_yaml", "unknown_top_keys", "validation_problem"]


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
    #: the file's text when the document was read by :func:`.fastyaml.fast_read`, whose ``item_lines`` hold
    #: no field lines: the first :meth:`line_of` asking for a field parses the text with libyaml for them
    text: str | None = dataclasses.field(default=None, compare=False, repr=False)

    def line_of(self, key: str, index: int | None = None, field: str | None = None) -> int | None:
        """Best-known line of a top-level key, an entry of its sequence, or a field of that entry."""
        if index is None:
            return self.key_lines.get(key)
        entries = self.item_lines.get(key, [])
        if index >= len(entries):
            return self.key_lines.get(key)
        line, fields = entries[index]
        if not field:
            return line
        if self.text is not None:
            fields = self._with_field_lines().item_lines.get(key, entries)[index][1]
        return fields.get(field, line)

    def _with_field_lines(self) -> YamlDocument:
        """This document as libyaml reads it, lines of the fields included (parsed once, on the first ask)."""
        exact = self.__dict__.get("_exact")
        if exact is None:
            try:
                exact = _parse(self.path, self.text or "")
            except ManifestError:  # cannot happen for a text yaml-rs read without a risky construct
                exact = dataclasses.replace(self, text=None)
            object.__setattr__(self, "_exact", exact)
        return exact


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


#: version of the stored form of a parsed manifest (a stored file of another version is parsed again)
_CACHE_FORMAT: Final = 1


def _cache_file(cache_dir: Path, path: Path) -> Path:
    return cache_dir / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32] + ".json")


def _cached(cache_dir: Path | None, path: Path, digest: str) -> YamlDocument | None:
    """The stored parse of ``path`` when it was made from bytes of this ``digest``, else None."""
    if cache_dir is None:
        return None
    try:
        stored = json.loads(_cache_file(cache_dir, path).read_text(encoding="utf-8"))
        if stored["format"] != _CACHE_FORMAT or stored["sha256"] != digest or not isinstance(stored["data"], dict):
            return None
        items = {k: [(int(line), dict(fields)) for line, fields in v] for k, v in stored["item_lines"].items()}
        return YamlDocument(path=path, data=stored["data"], key_lines=dict(stored["key_lines"]), item_lines=items)
    except (OSError, ValueError, KeyError, TypeError):  # absent, half-written by a crash, of another shape
        return None


def _store(cache_dir: Path | None, doc: YamlDocument, digest: str) -> None:
    """Keep ``doc`` for the next read of the same bytes, when JSON holds its data exactly; never raises."""
    if cache_dir is None:
        return
    try:
        text = json.dumps(
            {
                "format": _CACHE_FORMAT,
                "sha256": digest,
                "data": doc.data,
                "key_lines": doc.key_lines,
                "item_lines": doc.item_lines,
            },
            allow_nan=False,
        )
        if json.loads(text)["data"] != doc.data:  # int keys, tuples ...: the stored form would differ
            return
        from pytest_mobilebench.files import atomic_write_text

        atomic_write_text(_cache_file(cache_dir, doc.path), text)
    except (OSError, TypeError, ValueError):  # dates, a read-only or full cache folder: parse next time
        return


def read_yaml(path: Path, cache_dir: Path | None = None) -> YamlDocument:
    """Parse one YAML file that must hold a mapping (through ``cache_dir``'s stored parses when given, see the
    module docstring).

    Raises:
        ManifestError: unreadable file, YAML syntax error (with the line and column PyYAML reports), a key
            repeated in one mapping (its second line), or a document that is not a mapping.
    """
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(path, f"cannot read manifest: {exc}") from exc
    fast = fast_read(text)
    if fast is not None:
        return YamlDocument(path, *fast, text=text)
    digest = hashlib.sha256(raw).hexdigest()
    cached = _cached(cache_dir, path, digest)
    if cached is not None:
        return cached
    doc = _parse(path, text)
    _store(cache_dir, doc, digest)
    return doc


def _parse(path: Path, text: str) -> YamlDocument:
    """:func:`read_yaml` without the cache."""
    try:
        node, data = _compose_and_construct(text)
    except yaml.YAMLError as exc:
        line, where = _error_place(text, getattr(exc, "problem_mark", None))
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(path, f"YAML syntax error: {problem}{where}", line=line) from exc
    except ValueError as exc:  # a value Python cannot hold: an int of more than 4,300 digits
        raise ManifestError(path, f"a value cannot be read: {exc}") from exc
    duplicate = _duplicate_key(node)
    if duplicate is not None:
        raise ManifestError(
            path, f"key {duplicate[0]!r} occurs twice in one mapping (YAML keeps only the last)", line=duplicate[1]
        )
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


def unknown_top_keys(
    doc: YamlDocument | tuple[Path, Mapping[str, Any], Any], allowed: Collection[str], known: Collection[str] = ()
) -> tuple[ManifestError | None, frozenset[str]]:
    """``(problem, suggested)``: one error naming every top-level key of ``doc`` (a :class:`YamlDocument`, or
    ``(path, data, line_of or None)``) outside ``allowed``, each
    with "did you mean" over ``allowed | known`` (``framwork`` -> ``framework``), at the line of the first;
    ``suggested`` are the keys those hints name (a typo'd key leaves its real key missing in every entry:
    that consequence is not a second error). ``(None, frozenset())`` when every key is known.
    """
    path, data, line_of = (doc.path, doc.data, doc.line_of) if isinstance(doc, YamlDocument) else doc
    unknown = sorted(set(data) - set(allowed))
    if not unknown:
        return None, frozenset()
    pool = set(allowed) | set(known)
    hints = {key: closest(key, pool) for key in unknown}
    named = ", ".join(repr(k) + (f" (did you mean {hints[k]!r}?)" if hints[k] else "") for k in unknown)
    noun = "key" if len(unknown) == 1 else "keys"
    problem = ManifestError(path, f"unknown top-level {noun} {named}", line=line_of(unknown[0]) if line_of else None)
    return problem, frozenset(h for h in hints.values() if h)


def validation_problem(
    exc: Any, *, known: Collection[str] = (), skip_missing: Collection[str] = ()
) -> tuple[str | None, str] | None:
    """``(field, message)`` naming EVERY error of a pydantic ``ValidationError``: the first error's field is
    returned apart (it goes into :class:`ManifestError`'s ``field``), the others follow as ``"; also field
    'x': <msg>"``; an unknown key gets "did you mean" over ``known``. Errors that a field of
    ``skip_missing`` is missing are left out (see :func:`unknown_top_keys`); None when no error is left."""
    from pytest_mobilebench.suggest import did_you_mean

    errors = [e for e in exc.errors() if not (e["type"] == "missing" and e["loc"] and str(e["loc"][0]) in skip_missing)]
    if not errors:
        return None
    texts = []
    for e in errors:
        hint = did_you_mean(str(e["loc"][-1]), known) if e["type"] == "extra_forbidden" and e["loc"] else ""
        texts.append((".".join(str(p) for p in e["loc"]) or None, e["msg"] + hint))
    first_field, first = texts[0]
    rest = "".join(f"; also field {f!r}: {m}" if f else f"; also: {m}" for f, m in texts[1:])
    return first_field, first + rest


def charge_file_problem(
    entries: Sequence[Any], problem: ManifestError | None, id_attr: str = "instance_id"
) -> list[Any]:
    """Every entry of a file with a file-level ``problem`` (an unknown top-level key) becomes invalid under its
    own instance id with that reason; an entry with its own errors keeps them after it (``"; also ..."``).
    ``entries`` (records with an ``id_attr``, or ManifestErrors) unchanged when ``problem`` is None."""
    if problem is None:
        return list(entries)
    out: list[Any] = []
    for entry in entries:
        if not isinstance(entry, ManifestError):
            out.append(
                ManifestError(problem.path, problem.message, line=problem.line, instance_id=getattr(entry, id_attr))
            )
            continue
        if entry.message == problem.message:
            out.append(entry)
            continue
        own = (f"field {entry.field!r}: " if entry.field else "") + entry.message
        out.append(
            ManifestError(
                problem.path,
                f"{problem.message}; also {own}",
                line=entry.line or problem.line,
                instance_id=entry.instance_id,
            )
        )
    return out
