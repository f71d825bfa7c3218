"""Predictions: what a candidate produced for each instance.

``--predictions PATH`` (repeatable) reads SWE-bench prediction files: JSON lines, a JSON list, or a JSON
object keyed by ``instance_id``. Every prediction has ``instance_id`` and ``model_name_or_path``; the
issue-resolution suites read ``model_patch``, the app-generation suite ``project_path`` and the run
record. Fields beyond these are kept as they are. Two pseudo-predictions exist for validating instances:
``gold`` (the reference fix) and ``empty`` (no change at all).

Patch-file dialects are detected per entry (``docs/datasets.md``): an entry with ``org``, ``repo``,
``number`` and ``fix_patch`` and no ``instance_id`` (a MobileDev-Bench / Multi-SWE-bench patch file) is
read as ``instance_id = f"{org}__{repo}-{number}"``, ``model_patch = fix_patch`` and
``model_name_or_path = model`` (the file's stem when the entry names no model, as Multi-SWE-bench patch
files do not).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, final

from pytest_mobilebench.suggest import did_you_mean

__all__ = [
    "EMPTY",
    "GOLD",
    "GOLD_PATCH",
    "PSEUDO",
    "Predictions",
    "PredictionsError",
    "from_patch_file_entry",
    "load_predictions",
]

GOLD: Final = "gold"
EMPTY: Final = "empty"
PSEUDO: Final = frozenset({GOLD, EMPTY})
#: Sentinel ``model_patch`` of the gold pseudo-prediction: the suite substitutes the instance's own fix.
GOLD_PATCH: Final = "<gold>"


class PredictionsError(ValueError):
    """A predictions file is unusable; the message names the file and line (or entry) and the problem."""


def _entries(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(f"{path}: cannot read predictions: {exc}") from exc
    stripped = text.lstrip()
    if not stripped:
        raise PredictionsError(f"{path}: the predictions file is empty")
    if stripped[0] in "[{":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            if stripped[0] == "{":  # maybe JSON lines whose first line is an object
                doc = None
            else:
                raise PredictionsError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
        if isinstance(doc, list):
            for i, entry in enumerate(doc):
                yield f"{path}: entry #{i + 1}", entry
            return
        if isinstance(doc, dict):
            single = isinstance(doc.get("instance_id"), str) or all(k in doc for k in _PATCH_FILE_KEYS)
            if single:
                yield f"{path}:1", doc  # a single JSON-lines entry
                return
            for key, entry in doc.items():
                if isinstance(entry, dict):
                    if "instance_id" in entry and entry["instance_id"] != key:
                        raise PredictionsError(
                            f"{path}: key {key!r}: the entry's instance_id {entry['instance_id']!r} differs from its key"
                        )
                    entry = {"instance_id": key, **entry}
                yield f"{path}: key {key!r}", entry
            return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"{path}:{lineno}", json.loads(line)
        except json.JSONDecodeError as exc:
            raise PredictionsError(f"{path}:{lineno}: line is not valid JSON: {exc.msg} (column {exc.colno})") from exc


_PATCH_FILE_KEYS: Final = ("org", "repo", "number", "fix_patch")


def from_patch_file_entry(entry: dict[str, Any], loc: str, *, default_model: str) -> dict[str, Any]:
    """A MobileDev-Bench / Multi-SWE-bench patch-file entry in SWE-bench prediction form; other entries
    are returned unchanged.

    Raises:
        PredictionsError: ``org``/``repo`` empty or not strings, or ``number`` not an integer.
    """
    if "instance_id" in entry or not all(k in entry for k in _PATCH_FILE_KEYS):
        return entry
    org, repo, number = entry["org"], entry["repo"], entry["number"]
    if not (isinstance(org, str) and org and isinstance(repo, str) and repo):
        raise PredictionsError(f"{loc}: patch-file entry: 'org' and 'repo' must be non-empty strings")
    if isinstance(number, bool) or not isinstance(number, int):
        raise PredictionsError(f"{loc}: patch-file entry {org}/{repo}: 'number' must be an integer, got {number!r}")
    model = entry.get("model") or default_model
    rest = {k: v for k, v in entry.items() if k not in ("fix_patch", "model")}
    return {
        **rest,
        "instance_id": f"{org}__{repo}-{number}",
        "model_name_or_path": model,
        "model_patch": entry["fix_patch"],
        "patch_dialect": "mobiledev-bench" if "model" in entry else "multi-swe-bench",
    }


@final
class Predictions:
    """All predictions of a run, keyed by ``(instance_id, model_name_or_path)``.

    Attributes:
        sources: the files (or pseudo names) they came from.
        pseudo: ``"gold"`` or ``"empty"`` when a pseudo-prediction was asked for, else None.
    """

    def __init__(self, entries: Mapping[tuple[str, str], dict[str, Any]], sources: tuple[str, ...], pseudo: str | None) -> None:
        self._entries = dict(entries)
        self.sources = sources
        self.pseudo = pseudo

    @property
    def models(self) -> list[str]:
        """Model names present, sorted (the pseudo name for pseudo-predictions)."""
        if self.pseudo:
            return [self.pseudo]
        return sorted({model for _, model in self._entries})

    @property
    def instance_ids(self) -> set[str]:
        """Instance ids that have at least one prediction (empty for pseudo-predictions)."""
        return {iid for iid, _ in self._entries}

    def get(self, instance_id: str, model: str) -> dict[str, Any] | None:
        """The prediction of ``model`` for ``instance_id``; pseudo-predictions exist for every instance."""
        if self.pseudo == GOLD:
            return {"instance_id": instance_id, "model_name_or_path": GOLD, "model_patch": GOLD_PATCH}
        if self.pseudo == EMPTY:
            return {"instance_id": instance_id, "model_name_or_path": EMPTY, "model_patch": ""}
        return self._entries.get((instance_id, model))

    def __len__(self) -> int:
        return len(self._entries)


def load_predictions(specs: Iterable[str], *, base_dir: Path | None = None) -> Predictions:
    """Read ``--predictions`` values: file paths, or one of the pseudo names ``gold`` / ``empty``.

    Args:
        specs: the option's values, in order.
        base_dir: folder relative paths are resolved against (the invocation directory).

    Raises:
        PredictionsError: unreadable file, a line that is not JSON, an entry that is not an object, a
            missing or non-string ``instance_id`` / ``model_name_or_path``, a non-string ``model_patch``,
            the same (instance, model) twice, or a pseudo name mixed with files.
    """
    specs = list(specs)
    pseudo = [s for s in specs if s in PSEUDO]
    if pseudo:
        if len(specs) != 1:
            raise PredictionsError(f"--predictions={pseudo[0]} cannot be combined with other predictions")
        return Predictions({}, (pseudo[0],), pseudo[0])
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    where: dict[tuple[str, str], str] = {}
    for spec in specs:
        path = Path(spec)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not path.exists():
            raise PredictionsError(
                f"{spec}: no such predictions file{did_you_mean(spec, PSEUDO)}; --predictions takes "
                f"{' or '.join(repr(p) for p in sorted(PSEUDO, reverse=True))} or a PATH"
            )
        for loc, entry in _entries(path):
            if not isinstance(entry, dict):
                raise PredictionsError(f"{loc}: a prediction must be a JSON object, got {type(entry).__name__}")
            entry = from_patch_file_entry(entry, loc, default_model=path.stem)
            iid = entry.get("instance_id")
            if not isinstance(iid, str) or not iid:
                raise PredictionsError(f"{loc}: missing or non-string 'instance_id'")
            model = entry.get("model_name_or_path")
            if not isinstance(model, str) or not model:
                raise PredictionsError(f"{loc}: instance {iid!r}: missing or non-string 'model_name_or_path'")
            patch = entry.get("model_patch")
            if patch is not None and not isinstance(patch, str):
                raise PredictionsError(f"{loc}: instance {iid!r}: 'model_patch' must be a string or null")
            key = (iid, model)
            if key in entries:
                raise PredictionsError(
                    f"{loc}: duplicate prediction for instance {iid!r} by model {model!r} (first at {where[key]})"
                )
            entries[key] = {**entry, "_predictions_dir": str(path.parent.resolve())}
            where[key] = loc
    return Predictions(entries, tuple(specs), None)
