"""Predictions: what a candidate produced for each instance.

``--predictions PATH`` (repeatable) reads SWE-bench prediction files: JSON lines, a JSON list, or a JSON
object keyed by ``instance_id``. Every prediction has ``instance_id`` and ``model_name_or_path``; the
issue-resolution suites read ``model_patch``, the app-generation suite ``project_path`` and the run
record. Fields beyond these are kept as they are. Three pseudo-predictions exist: ``gold`` (the reference
fix) and ``empty`` (no change at all) validate instances; ``live`` means the suite produces the candidate itself
from a model endpoint. The live model's name is the suite's (:meth:`Suite.live_model
<pytest_mobilebench.suites.base.Suite.live_model>`, from its own options): items, junit and summaries carry it.
A suite without a live mode never gets a live prediction: :meth:`Predictions.get` raises for its items.

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
from typing import TYPE_CHECKING, Any, Final, final

from pytest_mobilebench.suggest import did_you_mean

if TYPE_CHECKING:
    from pytest_mobilebench.suites.base import Suite

__all__ = [
    "EMPTY",
    "GOLD",
    "GOLD_PATCH",
    "LIVE",
    "LIVE_PATCH",
    "PSEUDO",
    "Predictions",
    "PredictionsError",
    "from_patch_file_entry",
    "live_predictions",
    "load_predictions",
]

GOLD: Final = "gold"
EMPTY: Final = "empty"
LIVE: Final = "live"
PSEUDO: Final = frozenset({GOLD, EMPTY, LIVE})
#: the pseudo names in the order messages list them
_PSEUDO_ORDER: Final = (GOLD, EMPTY, LIVE)
#: Sentinel ``model_patch`` of the gold pseudo-prediction: the suite substitutes the instance's own fix.
GOLD_PATCH: Final = "<gold>"
#: Sentinel ``model_patch`` of the live pseudo-prediction: the suite asks its model endpoint for the candidate.
LIVE_PATCH: Final = "<live>"


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
        pseudo: ``"gold"``, ``"empty"`` or ``"live"`` when a pseudo-prediction was asked for, else None.
        live_model: with ``live``, the model the live suites drive (the items' model name), else None.
        not_live: with ``live``, suite name -> why that suite cannot run live (no live mode, or its live
            options are incomplete); only suites in ``live_suites`` get live predictions.
        live_suites: with ``live``, the suites that drive ``live_model``.
    """

    def __init__(self, entries: Mapping[tuple[str, str], dict[str, Any]], sources: tuple[str, ...], pseudo: str | None,
                 *, live_model: str | None = None, live_suites: frozenset[str] = frozenset(),
                 not_live: Mapping[str, str] | None = None) -> None:
        self._entries = dict(entries)
        self.sources = sources
        self.pseudo = pseudo
        self.live_model = live_model
        self.live_suites = live_suites
        self.not_live = dict(not_live or {})

    @property
    def models(self) -> list[str]:
        """Model names present, sorted (the pseudo name for gold / empty, the live model for live)."""
        if self.pseudo == LIVE and self.live_model:
            return [self.live_model]
        if self.pseudo:
            return [self.pseudo]
        return sorted({model for _, model in self._entries})

    @property
    def instance_ids(self) -> set[str]:
        """Instance ids that have at least one prediction (empty for pseudo-predictions)."""
        return {iid for iid, _ in self._entries}

    def get(self, instance_id: str, model: str, suite: str | None = None) -> dict[str, Any] | None:
        """The prediction of ``model`` for ``instance_id`` of ``suite``; pseudo-predictions exist for every
        instance (``live`` only for instances of a suite in ``live_suites``).

        Raises:
            PredictionsError: ``live`` for an instance of a suite that cannot run live (the message says why
                and what to give instead).
        """
        if self.pseudo == LIVE:
            if suite not in self.live_suites:
                raise PredictionsError(self.not_live.get(str(suite)) or f"--predictions=live: suite {suite!r} has no live mode")
            return {"instance_id": instance_id, "model_name_or_path": self.live_model, "model_patch": LIVE_PATCH}
        if self.pseudo == GOLD:
            return {"instance_id": instance_id, "model_name_or_path": GOLD, "model_patch": GOLD_PATCH}
        if self.pseudo == EMPTY:
            return {"instance_id": instance_id, "model_name_or_path": EMPTY, "model_patch": ""}
        return self._entries.get((instance_id, model))

    def __len__(self) -> int:
        return len(self._entries)


def _refuse_harness_markers(entry: Mapping[str, Any], loc: str, iid: str) -> None:
    """A file may not speak for the harness: the pseudo-predictions' sentinels (``<gold>`` would apply the
    instance's own fix under the trusted runtime, ``<live>`` would switch a suite to its endpoint) and keys
    starting with ``_`` (the harness's own, left out of the result-cache key) are refused.

    Raises:
        PredictionsError: naming the file and line, the instance and the field.
    """
    patch = entry.get("model_patch")
    if patch in (GOLD_PATCH, LIVE_PATCH):
        raise PredictionsError(
            f"{loc}: instance {iid!r}: 'model_patch' is the harness's {patch} marker; use --predictions="
            f"{GOLD if patch == GOLD_PATCH else LIVE} instead of a file"
        )
    reserved = sorted(k for k in entry if isinstance(k, str) and k.startswith("_"))
    if reserved:
        raise PredictionsError(f"{loc}: instance {iid!r}: field {reserved[0]!r}: names starting with '_' are the harness's own")


def live_predictions(suites: Iterable[Suite], options: Mapping[str, Any]) -> Predictions:
    """The ``live`` pseudo-prediction: each suite's :meth:`~pytest_mobilebench.suites.base.Suite.live_model`
    from the run's options; the suites that name a model run live, the others' items get an error.

    Raises:
        PredictionsError: no suite can run live (the message names, per suite, what is missing: the options
            of an incomplete live mode, or that it has none), or the live suites name different models.
    """
    models: dict[str, str] = {}
    incomplete: dict[str, str] = {}  # suite -> what its live mode lacks
    absent: list[str] = []  # suites without a live mode
    for suite in suites:
        try:
            model = suite.live_model(options)
        except ValueError as exc:
            incomplete[suite.name] = str(exc)
            continue
        if model:
            models[suite.name] = str(model)
        else:
            absent.append(suite.name)
    if not models:
        missing = [f"suite {name!r}: {why}" for name, why in sorted(incomplete.items())]
        if absent:
            missing.append(f"no live mode: {', '.join(sorted(absent))}")
        raise PredictionsError("live: no suite can produce candidates from a model endpoint: " + "; ".join(missing))
    if len(set(models.values())) > 1:
        named = ", ".join(f"{name}: {model!r}" for name, model in sorted(models.items()))
        raise PredictionsError(f"live: the live suites name different models ({named}); a live run drives one model")
    not_live = {name: f"--predictions=live: suite {name!r}: {why}" for name, why in incomplete.items()}
    not_live |= {name: f"--predictions=live: suite {name!r} has no live mode (it cannot produce a candidate "
                       "itself); give its predictions with --predictions=PATH" for name in absent}
    return Predictions({}, (LIVE,), LIVE, live_model=next(iter(models.values())), live_suites=frozenset(models),
                       not_live=not_live)


def load_predictions(specs: Iterable[str], *, base_dir: Path | None = None, suites: Iterable[Suite] = (),
                     options: Mapping[str, Any] | None = None) -> Predictions:
    """Read ``--predictions`` values: file paths, or one of the pseudo names ``gold`` / ``empty`` / ``live``.

    Args:
        specs: the option's values, in order.
        base_dir: folder relative paths are resolved against (the invocation directory).
        suites: the registered suites (read only for ``live``, see :func:`live_predictions`).
        options: the suites' options by ``dest`` (read only for ``live``).

    Raises:
        PredictionsError: unreadable file, a line that is not JSON, an entry that is not an object, a
            missing or non-string ``instance_id`` / ``model_name_or_path``, a non-string ``model_patch``,
            the same (instance, model) twice, a pseudo name mixed with files, or ``live`` that no suite can run.
    """
    specs = list(specs)
    pseudo = [s for s in specs if s in PSEUDO]
    if pseudo:
        if len(specs) != 1:
            raise PredictionsError(f"--predictions={pseudo[0]} cannot be combined with other predictions")
        if pseudo[0] == LIVE:
            return live_predictions(suites, options or {})
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
                f"{', '.join(repr(p) for p in _PSEUDO_ORDER)} or a PATH"
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
            _refuse_harness_markers(entry, loc, iid)
            key = (iid, model)
            if key in entries:
                raise PredictionsError(
                    f"{loc}: duplicate prediction for instance {iid!r} by model {model!r} (first at {where[key]})"
                )
            entries[key] = {**entry, "_predictions_dir": str(path.parent.resolve())}
            where[key] = loc
    return Predictions(entries, tuple(specs), None)
