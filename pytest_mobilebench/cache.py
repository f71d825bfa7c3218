"""The harness's caches: its one cache folder (repository mirrors, image locks, root file systems, npm packs,
scaffolds) and the result cache of the reports folder (``<reports>/cache/<key[:2]>/<key>.json``).

A result is reused only while its key is unchanged: :func:`result_key` hashes the suite's code
(:func:`suite_fingerprint`: the version plus the source of the suite module and every package module it
imports, transitively), the instance record's content (:func:`record_material`: never where its repository is
cloned from), the model, the prediction, the suite's keyed options and its own cache material.

An entry is read back only when it is a result of the item asking (:func:`read_cached`, :func:`parse_entry`): a
JSON object of :data:`RESULT_SCHEMA` that names the item's key, instance, suite, model and trial and keeps the
result contract; anything else (``[]``, ``{}``, another item's entry, a truncated file) is removed, the item
evaluated again and the entry reported (the result's ``cache_dropped``; the summary's ``cache_dropped`` count).

The key depends on the candidate, not on how it was produced: a live item's key (made before its agent runs)
covers the agent's options; once the agent's candidate is written as a predictions row, the verdict is stored
under that row's own key too (:func:`candidate_key`), the key a re-grade of the run's predictions file computes,
where the agent's options do not enter.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_mobilebench import __version__
from pytest_mobilebench.records import record_material

if TYPE_CHECKING:
    from pytest_mobilebench.options import Option
    from pytest_mobilebench.predictions import Prediction
    from pytest_mobilebench.suites.base import Suite
    from pytest_mobilebench.records import LoadedRecord

__all__ = [
    "PACKAGE_DIR",
    "RESULT_SCHEMA",
    "CacheEntryError",
    "CacheRead",
    "EntryOwner",
    "cache_entry",
    "candidate_key",
    "imports_of",
    "keyed_options",
    "parse_entry",
    "prediction_path",
    "read_cached",
    "result_key",
    "result_path",
    "row_problem",
    "suite_fingerprint",
]


def keyed_options(
    suite: Suite, options: Mapping[str, Any], runtime_options: Sequence[Option] = (), *, live: bool = True
) -> dict[str, Any]:
    """The suite's (its runtime's, and the live agent's when it drives one) options that change what an
    evaluation computes (``Option.keyed``; :func:`pytest_mobilebench.agents.options.keyed_for`: the agent's
    only for a ``live`` prediction, but ``--mb-trials`` where it grades recorded trials)."""
    from pytest_mobilebench.agents.options import keyed_for

    agent = keyed_for(suite.fixtures, live=live, item_trials=bool(getattr(suite, "item_trials", False)))
    return {o.dest: options.get(o.dest) for o in (*suite.options, *runtime_options, *agent) if o.keyed}


#: the package's source folder (what :func:`suite_fingerprint` hashes)
PACKAGE_DIR = Path(__file__).resolve().parent


def module_file(module: str) -> Path | None:
    """The source file of a ``pytest_mobilebench`` module (a package's ``__init__.py``), or None."""
    parts = module.split(".")[1:]
    if not parts:
        return PACKAGE_DIR / "__init__.py"
    for candidate in (
        PACKAGE_DIR.joinpath(*parts[:-1], parts[-1] + ".py"),
        PACKAGE_DIR.joinpath(*parts, "__init__.py"),
    ):
        if candidate.is_file():
            return candidate
    return None


def imports_of(path: Path, module: str) -> set[str]:
    """``pytest_mobilebench`` modules that ``path`` imports anywhere (top level or inside functions)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m == "pytest_mobilebench" or m.startswith("pytest_mobilebench.")}


@functools.cache
def suite_fingerprint(module: str) -> str:
    """Version plus a hash of the source of ``module`` and every package module it imports, transitively.

    A suite's cached verdicts are reused only while the code that computes them is unchanged; a change to
    another suite (or to the plugin's report code) leaves them valid.
    """
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        path = module_file(name)
        if name in seen or path is None:
            continue
        seen[name] = path
        todo.extend(imports_of(path, name) - seen.keys())
    digest = hashlib.sha256(__version__.encode())
    for name in sorted(seen):
        digest.update(name.encode() + b"\0" + seen[name].read_bytes() + b"\0")
    return f"{__version__}+{digest.hexdigest()[:16]}"


def result_key(
    suite: Suite,
    loaded: LoadedRecord,
    model: str | None,
    prediction: Prediction | None,
    options: Mapping[str, Any],
    *,
    runtime_options: Sequence[Option] = (),
) -> str:
    """The result cache key (sha256 hex) of one item; see the module docstring for what it covers."""
    record = loaded.record
    material = {
        "harness": suite_fingerprint(type(suite).__module__),
        "instance_id": loaded.instance_id,
        "model": model,
        "suite": loaded.suite,
        "record": record_material(record),  # the content, never the clone source
        "prediction": prediction.key_material() if prediction is not None else None,
        "options": keyed_options(suite, options, runtime_options, live=prediction is not None and prediction.is_live()),
        "suite_material": suite.cache_material(loaded, prediction, options),
    }
    blob = json.dumps(material, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def candidate_key(
    suite: Suite,
    loaded: LoadedRecord,
    row: Mapping[str, Any],
    source_dir: Path,
    options: Mapping[str, Any],
    *,
    runtime_options: Sequence[Option] = (),
) -> str:
    """The key of a live item's candidate: :func:`result_key` of its predictions ``row`` read as a file's entry
    from the run's folder ``source_dir`` (what ``--predictions <run>/predictions.jsonl`` computes for it).

    Raises:
        KeyError: the row lacks ``instance_id`` or ``model_name_or_path``.
    """
    from pytest_mobilebench.predictions import Prediction

    prediction = Prediction.from_entry(row, source_dir.resolve())
    return result_key(
        suite, loaded, prediction.model_name_or_path, prediction, options, runtime_options=runtime_options
    )


def result_path(reports_dir: Path, key: str) -> Path:
    """Where the cached result of ``key`` is kept: ``<reports>/cache/<key[:2]>/<key>.json``."""
    return reports_dir / "cache" / key[:2] / f"{key}.json"


def prediction_path(reports_dir: Path, key: str) -> Path:
    """Where the prediction row that produced the cached result of ``key`` is kept (an item that wrote one:
    a live agent's), beside it: ``<reports>/cache/<key[:2]>/<key>.prediction.json``."""
    return reports_dir / "cache" / key[:2] / f"{key}.prediction.json"


#: the version of a result-cache entry's shape (the result as the plugin keeps it, plus ``cache_schema``): an
#: entry of another version, or of none (written before entries said theirs), is not read
RESULT_SCHEMA: Final = 1

#: fields of one run's view of a result, never stored in an entry: the cache hit mark and a dropped entry's note
_RUN_FIELDS: Final = frozenset({"cached", "cache_dropped"})

#: fields the plugin adds to every result it keeps, with the type an entry must give them
_PLUGIN_FIELDS: Final = {
    "instance_id": str,
    "suite": str,
    "model_name_or_path": str,
    "cache_key": str,
    "evidence_dir": str,
}


@dataclasses.dataclass(frozen=True)
class EntryOwner:
    """The item a result-cache entry must be the result of: its key and what it names."""

    key: str
    instance_id: str
    suite: str
    model: str
    trial: int | None = None


@dataclasses.dataclass(frozen=True)
class CacheRead:
    """What :func:`read_cached` found.

    Attributes:
        result: the cached result (``cached: True`` added), or None: evaluate the item.
        dropped: ``{"file": the entry's path, "why": in words}`` when an entry was there but is not this
            item's result (it was removed), else None.
    """

    result: dict[str, Any] | None
    dropped: dict[str, str] | None = None


def cache_entry(result: Mapping[str, Any]) -> dict[str, Any]:
    """The result-cache entry of ``result`` (a plain-builtin result with the plugin's fields): the result
    without one run's fields (``cached``, ``cache_dropped``), with ``cache_schema`` = :data:`RESULT_SCHEMA`."""
    return {**{k: v for k, v in result.items() if k not in _RUN_FIELDS}, "cache_schema": RESULT_SCHEMA}


def _named(value: Any) -> str:
    return f"{value!r}" if isinstance(value, (str, int, type(None))) else f"a {type(value).__name__}"


class CacheEntryError(ValueError):
    """A result-cache entry that is not a result of the item asking; the message says why."""


def parse_entry(entry: Any, owner: EntryOwner, suite: Suite) -> dict[str, Any]:
    """``entry`` (a parsed cache file) as ``owner``'s result: the checked verdict over the entry's fields
    (:meth:`~pytest_mobilebench.suites.base.ItemResult.to_dict`), without ``cache_schema``.

    It must be a JSON object of :data:`RESULT_SCHEMA` naming ``owner``'s key, instance id, suite, model and
    trial, with the plugin's fields typed (:data:`_PLUGIN_FIELDS`), a verdict that keeps the result contract
    (:meth:`~pytest_mobilebench.suites.base.ItemResult.from_suite`, ``properties`` a mapping) and no
    infrastructure reason (never cached).

    Raises:
        CacheEntryError: it is not; the message says why, in words.
    """
    from pytest_mobilebench.suites.base import ItemResult, ResultContractError

    if not isinstance(entry, dict):
        raise CacheEntryError(f"not a JSON object but a {type(entry).__name__}")
    if "cache_schema" not in entry:
        raise CacheEntryError("no cache_schema (not a result, or written before entries said their schema)")
    if entry["cache_schema"] != RESULT_SCHEMA:
        raise CacheEntryError(f"cache schema {_named(entry['cache_schema'])}, this harness reads {RESULT_SCHEMA}")
    wrong = [
        f"{field} is {_named(entry.get(field))}"
        for field, kind in _PLUGIN_FIELDS.items()
        if not isinstance(entry.get(field), kind)
    ]
    if not isinstance(entry.get("properties"), dict):
        wrong.append(f"properties is {_named(entry.get('properties'))}")
    if wrong:
        raise CacheEntryError("not a kept result: " + ", ".join(wrong))
    expected = {
        "cache_key": owner.key,
        "instance_id": owner.instance_id,
        "suite": owner.suite,
        "model_name_or_path": owner.model,
        "trial": owner.trial,
    }
    other = [f"{field} {_named(entry.get(field))}" for field, value in expected.items() if entry.get(field) != value]
    if other:
        raise CacheEntryError("the result of another item: " + ", ".join(other))
    try:
        checked = ItemResult.from_suite(suite, {k: v for k, v in entry.items() if k != "cache_schema"})
    except (ResultContractError, TypeError) as exc:
        raise CacheEntryError(f"not a result: {exc}") from None
    if checked.retryable:
        raise CacheEntryError(f"an infrastructure result ({checked.reason}), which is never cached")
    return checked.to_dict()


def row_problem(row: Any, owner: EntryOwner) -> str | None:
    """Why ``row`` (a parsed ``.prediction.json`` beside an entry) is not the prediction row of ``owner``; None
    when it is (an object naming its instance id, model and, if any, trial)."""
    if not isinstance(row, dict):
        return f"its prediction row is not a JSON object but a {type(row).__name__}"
    names = {"instance_id": owner.instance_id, "model_name_or_path": owner.model}
    other = [f"{field} {_named(row.get(field))}" for field, value in names.items() if row.get(field) != value]
    if row.get("trial") not in (None, owner.trial):
        other.append(f"trial {_named(row.get('trial'))}")
    return "its prediction row is another item's: " + ", ".join(other) if other else None


def _parsed(path: Path) -> tuple[bool, Any, str | None]:
    """``(present, data, problem)`` of a JSON file: absent, parsed, or present but unreadable (``problem``)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return False, None, None
    except (OSError, UnicodeDecodeError) as exc:
        return True, None, f"unreadable: {exc}"
    try:
        return True, json.loads(text), None
    except ValueError as exc:
        return True, None, f"not valid JSON ({exc})"


def read_cached(reports_dir: Path, owner: EntryOwner, suite: Suite) -> CacheRead:
    """The cached result of ``owner`` (:func:`result_path`), checked by :func:`parse_entry` and, when a
    prediction row is kept beside it (:func:`prediction_path`), :func:`row_problem`.

    An absent entry is a plain miss. An entry that is not ``owner``'s result (or whose row is not its row) is
    removed with its row and returned as ``CacheRead(None, dropped={"file", "why"})``: the item is evaluated again.
    Never raises for what the files hold; a file that cannot be removed is left (the next write replaces it).
    """
    present, entry, problem = _parsed(result_path(reports_dir, owner.key))
    if not present:
        return CacheRead(None)
    result: dict[str, Any] | None = None
    if problem is None:
        try:
            result = parse_entry(entry, owner, suite)
        except CacheEntryError as exc:
            problem = str(exc)
    if problem is None:
        has_row, row, row_unreadable = _parsed(prediction_path(reports_dir, owner.key))
        if has_row:
            problem = f"its prediction row is {row_unreadable}" if row_unreadable else row_problem(row, owner)
    if result is not None and problem is None:
        return CacheRead({**result, "cached": True})
    for path in (result_path(reports_dir, owner.key), prediction_path(reports_dir, owner.key)):
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
    return CacheRead(None, dropped={"file": str(result_path(reports_dir, owner.key)), "why": problem})
