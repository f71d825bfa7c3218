"""Predictions: what a candidate produced for each instance.

``--predictions PATH`` (repeatable) reads SWE-bench prediction files: JSON lines, a JSON list, or a JSON
object keyed by ``instance_id``. Every prediction has ``instance_id`` and ``model_name_or_path``; the
issue-resolution suites read ``model_patch``, the app-generation suite ``project_path`` and the run
record. Fields beyond these are kept as they are. Three pseudo-predictions exist: ``gold`` (the reference
fix) and ``empty`` (no change at all) validate instances; ``live`` means the suite produces the candidate itself
from a model endpoint. The live model's name is the suite's (:meth:`Suite.live_model
<pytest_mobilebench.suites.base.Suite.live_model>`, from its own options): items, junit and summaries carry it.
A suite without a live mode never gets a live prediction: :meth:`Predictions.get` raises for its items.

Trials (docs/live-agents.md, "Trials"): a prediction may carry a trial index ``trial`` (an int >= 1), one
attempt of K at the same instance by the same model. A file's rows are keyed by ``(instance_id,
model_name_or_path, trial)``: several rows of one instance and model are refused unless each names a distinct
``trial`` (rows with and without ``trial`` for one pair are refused too). ``--predictions=live --mb-trials K``
gives trials ``1..K`` to the suites that run one item per trial (:meth:`Predictions.trials`). The trial index
is part of the prediction's result-cache key, so no trial reuses another's verdict.

:meth:`Predictions.get` returns a typed :class:`Prediction`: its :class:`PredictionKind` (``FILE``, ``GOLD``,
``EMPTY``, ``LIVE``) says what it is, never a field's text, so a file entry whose ``model_patch`` reads like a
harness word is only a (bad) patch of a candidate. A prediction crosses a process boundary as plain builtins
(:meth:`Prediction.to_builtins` / :meth:`Prediction.from_builtins`).

A withheld patch (docs/live-agents.md): a live run whose taken ``git diff`` is over the sandbox's bound writes
no text for it; its row says so in the field ``patch_too_large``: ``{"bytes": int, "max_bytes": int}`` (bytes
of diff git gave, at least ``max_bytes + 1``; the bound), with ``model_patch`` ``""``. It reads as
:attr:`Prediction.withheld` (an :class:`OversizedPatch`), which the suites grade as the policy's refusal
(``patch_too_large``), as the live run did; a row with the field and a non-empty ``model_patch`` is refused.
A file may carry the field: it only ever costs the candidate its item.

Patch-file dialects are detected per entry (``docs/datasets.md``): an entry with ``org``, ``repo``,
``number`` and ``fix_patch`` and no ``instance_id`` (a MobileDev-Bench / Multi-SWE-bench patch file) is
read as ``instance_id = f"{org}__{repo}-{number}"``, ``model_patch = fix_patch`` and
``model_name_or_path = model`` (the file's stem when the entry names no model, as Multi-SWE-bench patch
files do not).
"""

from __future__ import annotations

import copy
import enum
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Protocol, final

from pytest_mobilebench.suggest import closest, did_you_mean

__all__ = [
    "EMPTY",
    "GOLD",
    "LIVE",
    "PSEUDO",
    "WITHHELD_FIELD",
    "OversizedPatch",
    "Prediction",
    "PredictionKind",
    "Predictions",
    "PredictionsError",
    "from_patch_file_entry",
    "LiveSuite",
    "live_predictions",
    "load_predictions",
]


class PredictionKind(enum.Enum):
    """What a prediction is: ``FILE`` (a candidate's entry of a predictions file), ``GOLD`` (the suite
    substitutes the instance's own reference fix, under the trusted runtime), ``EMPTY`` (no change at all) or
    ``LIVE`` (the suite asks its model endpoint for the candidate). The values are the ``--predictions``
    pseudo names (``FILE`` has none)."""

    FILE = "file"
    GOLD = "gold"
    EMPTY = "empty"
    LIVE = "live"


GOLD: Final = PredictionKind.GOLD.value
EMPTY: Final = PredictionKind.EMPTY.value
LIVE: Final = PredictionKind.LIVE.value
PSEUDO: Final = frozenset({GOLD, EMPTY, LIVE})
#: the pseudo names in the order messages list them
_PSEUDO_ORDER: Final = (GOLD, EMPTY, LIVE)


class PredictionsError(ValueError):
    """A predictions file is unusable; the message names the file and line (or entry) and the problem."""


#: a row's field saying its patch was withheld as too large (see the module docstring)
WITHHELD_FIELD: Final = "patch_too_large"


@final
@dataclass(frozen=True)
class OversizedPatch:
    """A taken patch the harness withheld as too large (the row's ``patch_too_large``).

    Attributes:
        size_bytes: bytes of ``git diff`` read (more than ``max_bytes``; reading stops at ``max_bytes + 1``).
        max_bytes: the bound it went over.
    """

    size_bytes: int
    max_bytes: int

    def to_field(self) -> dict[str, int]:
        """The row's ``patch_too_large`` value."""
        return {"bytes": self.size_bytes, "max_bytes": self.max_bytes}

    @classmethod
    def of_entry(cls, entry: Mapping[str, Any], loc: str) -> OversizedPatch | None:
        """The entry's withheld patch (None without the field).

        Raises:
            PredictionsError: the field is not ``{"bytes": int, "max_bytes": int}`` with ``0 <= max_bytes <
                bytes``, or the entry also carries a non-empty ``model_patch`` (naming ``loc``).
        """
        value = entry.get(WITHHELD_FIELD)
        if value is None:
            return None
        ints = (
            isinstance(value, Mapping)
            and set(value) == {"bytes", "max_bytes"}
            and all(isinstance(value[k], int) and not isinstance(value[k], bool) for k in ("bytes", "max_bytes"))
        )
        if not ints or not 0 <= value["max_bytes"] < value["bytes"]:
            raise PredictionsError(
                f'{loc}: field {WITHHELD_FIELD!r} must be {{"bytes": int, "max_bytes": int}} '
                f"with 0 <= max_bytes < bytes, got {value!r}"
            )
        if entry.get("model_patch"):
            raise PredictionsError(
                f"{loc}: field {WITHHELD_FIELD!r}: a withheld patch has no text, but 'model_patch' is not empty"
            )
        return cls(int(value["bytes"]), int(value["max_bytes"]))


@final
@dataclass(frozen=True)
class Prediction:
    """One prediction for one instance, as a suite receives it.

    Attributes:
        instance_id, model_name_or_path: the item it is for (the live model's name for ``LIVE``, the pseudo
            name for ``GOLD`` / ``EMPTY``).
        kind: what it is; suites branch on this, never on a field's text.
        fields: the entry's fields as a read-only mapping (a file entry in full, ``instance_id`` and
            ``model_name_or_path`` included; only those two for a pseudo-prediction). Never a harness key
            (``_`` names are refused when a file is read).
        source_dir: the folder of the predictions file (relative paths in the entry resolve against it),
            None for pseudo-predictions. Not part of the result-cache key.
        trial: the trial index (``1..K``) of one of K attempts, None for a single attempt; part of the key.
        withheld: for ``FILE``, the patch the harness withheld as too large (the row's ``patch_too_large``),
            else None; read from ``fields``, never given.

    Raises:
        TypeError: ``kind`` is not a :class:`PredictionKind`.
        PredictionsError: a ``FILE`` entry's ``patch_too_large`` is unusable (:meth:`OversizedPatch.of_entry`).
    """

    instance_id: str
    model_name_or_path: str
    kind: PredictionKind
    fields: Mapping[str, Any] = field(default_factory=dict)
    source_dir: str | None = None
    trial: int | None = None
    withheld: OversizedPatch | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, PredictionKind):
            raise TypeError(f"Prediction.kind must be a PredictionKind, got {self.kind!r}")
        base = {"instance_id": self.instance_id, "model_name_or_path": self.model_name_or_path}
        frozen = MappingProxyType(copy.deepcopy({**dict(self.fields), **base}))
        object.__setattr__(self, "fields", frozen)
        if self.kind is PredictionKind.FILE:
            object.__setattr__(self, "withheld", OversizedPatch.of_entry(frozen, f"instance {self.instance_id!r}"))

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any], source_dir: str | Path | None = None) -> Prediction:
        """A ``FILE`` prediction of one (already validated) predictions-file entry; whatever its fields say."""
        trial = entry.get("trial")
        return cls(
            str(entry["instance_id"]),
            str(entry["model_name_or_path"]),
            PredictionKind.FILE,
            entry,
            None if source_dir is None else str(source_dir),
            trial if isinstance(trial, int) else None,
        )

    @property
    def model_patch(self) -> str | None:
        """The candidate's patch text: the entry's ``model_patch`` for ``FILE`` (None when absent or null),
        ``""`` for ``EMPTY``, None for ``GOLD`` (the suite knows the fix) and ``LIVE`` (not produced yet)."""
        if self.kind is PredictionKind.EMPTY:
            return ""
        if self.kind is PredictionKind.FILE:
            patch = self.fields.get("model_patch")
            return patch if isinstance(patch, str) else None
        return None

    def is_live(self) -> bool:
        """Whether the suite produces the candidate itself from its model endpoint (the one test live suites use)."""
        return self.kind is PredictionKind.LIVE

    def get(self, name: str, default: Any = None) -> Any:
        """One field of the entry (``fields.get``)."""
        return self.fields.get(name, default)

    def key_material(self) -> dict[str, Any]:
        """What the result-cache key covers: the kind and the fields (not ``source_dir``), plain builtins."""
        out = {"kind": self.kind.value, "fields": dict(self.fields)}
        return out if self.trial is None else {**out, "trial": self.trial}

    def to_builtins(self) -> dict[str, Any]:
        """The JSON-able form that crosses process boundaries; :meth:`from_builtins` reads it back."""
        return {
            "instance_id": self.instance_id,
            "model_name_or_path": self.model_name_or_path,
            "kind": self.kind.value,
            "fields": copy.deepcopy(dict(self.fields)),
            "source_dir": self.source_dir,
            "trial": self.trial,
        }

    @classmethod
    def from_builtins(cls, data: Mapping[str, Any]) -> Prediction:
        """The inverse of :meth:`to_builtins`.

        Raises:
            ValueError: an unknown ``kind``.
        """
        return cls(
            str(data["instance_id"]),
            str(data["model_name_or_path"]),
            PredictionKind(data["kind"]),
            dict(data.get("fields") or {}),
            data.get("source_dir"),
            data.get("trial"),
        )


def _entries(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8-sig")  # a leading UTF-8 byte-order mark is read, not refused
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
                            f"{path}: key {key!r}: the entry's instance_id "
                            f"{entry['instance_id']!r} differs from its key"
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
        pseudo: the :class:`PredictionKind` of a pseudo-prediction (``GOLD``, ``EMPTY``, ``LIVE``), else None.
        live_model: with ``live``, the model the live suites drive (the items' model name), else None.
        not_live: with ``live``, suite name -> why that suite cannot run live (no live mode, or its live
            options are incomplete); only suites in ``live_suites`` get live predictions.
        live_suites: with ``live``, the suites that drive ``live_model``.
        live_trials: with ``live``, ``--mb-trials`` (None without it).
    """

    def __init__(
        self,
        entries: Mapping[tuple[str, str, int | None], Prediction],
        sources: tuple[str, ...],
        pseudo: PredictionKind | None,
        *,
        live_model: str | None = None,
        live_suites: frozenset[str] = frozenset(),
        not_live: Mapping[str, str] | None = None,
        live_trials: int | None = None,
    ) -> None:
        self._entries = dict(entries)
        self.live_trials = live_trials
        self._trials: dict[tuple[str, str], list[int]] = {}
        for iid, model, trial in sorted(self._entries, key=lambda k: (k[0], k[1], k[2] or 0)):
            if trial is not None:
                self._trials.setdefault((iid, model), []).append(trial)
        self.sources = sources
        self.pseudo = pseudo
        self.live_model = live_model
        self.live_suites = live_suites
        self.not_live = dict(not_live or {})

    @property
    def models(self) -> list[str]:
        """Model names present, sorted (the pseudo name for gold / empty, the live model for live)."""
        if self.pseudo is PredictionKind.LIVE and self.live_model:
            return [self.live_model]
        if self.pseudo is not None:
            return [self.pseudo.value]
        return sorted({model for _, model, _ in self._entries})

    @property
    def instance_ids(self) -> set[str]:
        """Instance ids that have at least one prediction (empty for pseudo-predictions)."""
        return {iid for iid, _, _ in self._entries}

    def trials(self, instance_id: str, model: str, *, per_item: bool) -> list[int | None]:
        """The trials of an (instance, model) pair, one item each: a file's trial indices (``[None]`` when its
        row has none, or there is no row); with ``live`` and ``--mb-trials K > 1``, ``1..K`` for a suite whose
        items are single trials (``per_item``; a suite that runs K trials inside one item gets ``[None]``)."""
        if self.pseudo is PredictionKind.LIVE:
            k = self.live_trials or 1
            return list(range(1, k + 1)) if per_item and k > 1 else [None]
        return list(self._trials.get((instance_id, model), [])) or [None]

    def get(
        self, instance_id: str, model: str, suite: str | None = None, trial: int | None = None
    ) -> Prediction | None:
        """The prediction of ``model`` for ``instance_id`` of ``suite`` (None when the files hold none);
        pseudo-predictions exist for every instance (``live`` only for instances of a suite in ``live_suites``).

        Raises:
            PredictionsError: ``live`` for an instance of a suite that cannot run live (the message says why
                and what to give instead).
        """
        if self.pseudo is PredictionKind.LIVE:
            if suite not in self.live_suites:
                raise PredictionsError(
                    self.not_live.get(str(suite)) or f"--predictions=live: suite {suite!r} has no live mode"
                )
            return Prediction(instance_id, str(self.live_model), PredictionKind.LIVE, trial=trial)
        if self.pseudo is not None:
            return Prediction(instance_id, self.pseudo.value, self.pseudo)
        return self._entries.get((instance_id, model, trial))

    def __len__(self) -> int:
        return len(self._entries)


def _refuse_harness_keys(entry: Mapping[str, Any], loc: str, iid: str) -> None:
    """A file may not speak for the harness: keys starting with ``_`` (the harness's own, left out of the
    result-cache key) are refused. (What a prediction *is* comes from :class:`PredictionKind`, never from a
    field, so no field value of a file can stand for the gold fix or the live mode.)

    Raises:
        PredictionsError: naming the file and line, the instance and the field.
    """
    reserved = sorted(k for k in entry if isinstance(k, str) and k.startswith("_"))
    if reserved:
        raise PredictionsError(
            f"{loc}: instance {iid!r}: field {reserved[0]!r}: names starting with '_' are the harness's own"
        )


_CANDIDATE_FIELDS: Final = ("instance_id", "model_name_or_path", "model_patch", "project_path")


def _refuse_misspelt_fields(entry: Mapping[str, Any], loc: str, iid: str) -> None:
    """A key that is a near miss of a field the entry lacks (``model_pach`` without ``model_patch``) is a
    typo, not an extra field: refused, so the candidate is not graded as an empty one. Extra fields that
    resemble no such name (``full_output`` ...) are kept as they are.

    Raises:
        PredictionsError: naming the file and line, the instance, the field and the name it resembles.
    """
    for key in entry:
        if not isinstance(key, str) or key in _CANDIDATE_FIELDS:
            continue
        meant = closest(key, _CANDIDATE_FIELDS, cutoff=0.8)
        if meant is not None and meant not in entry:
            raise PredictionsError(
                f"{loc}: instance {iid!r}: field {key!r} is not read (did you mean {meant!r}?); "
                f"without {meant!r} the candidate would be graded as absent"
            )


#: names other harnesses and datasets give the candidate's patch (SWE-bench's gold ``patch`` among them)
PATCH_ALIASES: Final = ("patch", "diff", "prediction", "model_output")
#: fields that make an entry another suite's candidate (app generation, the planner): no patch is expected
_OTHER_CANDIDATES: Final = ("project_path", "prebuilt_dist", "trajectory", "trajectories")
#: a unified diff: a ``diff --git`` header, or ``---`` / ``+++`` file lines followed by a hunk header
_DIFF_SHAPED: Final = re.compile(r"(?m)^diff --git |^--- [^\n]*\n\+\+\+ [^\n]*\n@@ ")


def is_diff_shaped(value: Any) -> bool:
    """Whether ``value`` is a string holding a unified diff (``diff --git`` or ``---``/``+++``/``@@`` lines)."""
    return isinstance(value, str) and _DIFF_SHAPED.search(value) is not None


def _refuse_patch_elsewhere(entry: Mapping[str, Any], loc: str, iid: str) -> None:
    """An entry without a ``model_patch`` text whose patch sits under another key would be graded as an
    empty candidate (``empty_patch``: a whole file scores 0 %): refused instead. Two cases: a known alias
    (:data:`PATCH_ALIASES`) holding a non-empty value, or any other key holding a diff-shaped string
    (:func:`is_diff_shaped`). Entries of other suites (``project_path``, ``trajectory`` ...) and withheld
    patches (``patch_too_large``) are left alone; ``--mb-patch-field`` maps a field explicitly.

    Raises:
        PredictionsError: naming the file and line, the instance, the field, and both ways out.
    """
    if entry.get("model_patch") or entry.get(WITHHELD_FIELD) is not None or any(k in entry for k in _OTHER_CANDIDATES):
        return
    found = next((k for k in PATCH_ALIASES if entry.get(k) not in (None, "")), None)
    found = found or next((k for k, v in entry.items() if k not in PATCH_ALIASES and is_diff_shaped(v)), None)
    if found is not None:
        has = "is empty" if "model_patch" in entry else "is absent"
        raise PredictionsError(
            f"{loc}: instance {iid!r}: field {found!r} holds the candidate's patch but is not read ('model_patch' "
            f"{has}, so the candidate would be graded as an empty patch); rename it to 'model_patch', or read it "
            f"with --mb-patch-field={found}"
        )


def _map_patch_field(entry: dict[str, Any], field_name: str, loc: str, iid: str) -> dict[str, Any]:
    """The entry with ``model_patch`` read from ``field_name`` (``--mb-patch-field``), which is then dropped
    (its text is the ``model_patch``); ``patch_field`` records the mapping. An entry lacking the field has no
    patch (``empty_patch``); ``--mb-patch-field=model_patch`` only says the file's ``model_patch`` is meant.

    Raises:
        PredictionsError: the entry has a non-empty ``model_patch`` as well (which one is meant?).
    """
    if field_name == "model_patch" or field_name not in entry:
        return entry
    if entry.get("model_patch"):
        raise PredictionsError(
            f"{loc}: instance {iid!r}: --mb-patch-field={field_name} but the entry also has a "
            "non-empty 'model_patch': one of them must go"
        )
    rest = {k: v for k, v in entry.items() if k != field_name}
    return {**rest, "model_patch": entry[field_name], "patch_field": field_name}


class LiveSuite(Protocol):
    """What :func:`live_predictions` reads of a suite (a :class:`~pytest_mobilebench.suites.base.Suite` has both):
    this module sits below the suites and names none of them."""

    name: str

    def live_model(self, options: Mapping[str, Any]) -> str | None:
        """The model the suite drives under ``--predictions=live``; ValueError when its options are incomplete."""


def live_predictions(suites: Iterable[LiveSuite], options: Mapping[str, Any]) -> Predictions:
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
    not_live |= {
        name: f"--predictions=live: suite {name!r} has no live mode (it cannot produce a candidate "
        "itself); give its predictions with --predictions=PATH"
        for name in absent
    }
    trials = options.get("mb_trials")
    return Predictions(
        {},
        (LIVE,),
        PredictionKind.LIVE,
        live_model=next(iter(models.values())),
        live_suites=frozenset(models),
        not_live=not_live,
        live_trials=int(trials) if trials else None,
    )


def load_predictions(
    specs: Iterable[str],
    *,
    base_dir: Path | None = None,
    suites: Iterable[LiveSuite] = (),
    options: Mapping[str, Any] | None = None,
    patch_field: str | None = None,
) -> Predictions:
    """Read ``--predictions`` values: file paths, or one of the pseudo names ``gold`` / ``empty`` / ``live``.

    Args:
        specs: the option's values, in order.
        base_dir: folder relative paths are resolved against (the invocation directory).
        suites: the registered suites (read only for ``live``, see :func:`live_predictions`).
        options: the suites' options by ``dest`` (read only for ``live``).
        patch_field: ``--mb-patch-field``: the field every entry's patch is read from (None: ``model_patch``,
            and a patch under an alias or another key is refused, see :func:`_refuse_patch_elsewhere`).

    Raises:
        PredictionsError: unreadable file, a line that is not JSON, an entry that is not an object, a
            missing or non-string ``instance_id`` / ``model_name_or_path``, a non-string ``model_patch``, a
            key that is a near miss of a field the entry lacks (``model_pach`` without ``model_patch``),
            a patch under another field (``patch``, ``diff`` ... or any diff-shaped string) without
            ``model_patch``, the same (instance, model) twice, a pseudo name mixed with files, or ``live`` that
            no suite can run.
    """
    specs = list(specs)
    pseudo = [s for s in specs if s in PSEUDO]
    if pseudo:
        if len(specs) != 1:
            raise PredictionsError(f"--predictions={pseudo[0]} cannot be combined with other predictions")
        kind = PredictionKind(pseudo[0])
        if kind is PredictionKind.LIVE:
            return live_predictions(suites, options or {})
        return Predictions({}, (pseudo[0],), kind)
    entries: dict[tuple[str, str, int | None], Prediction] = {}
    where: dict[tuple[str, str, int | None], str] = {}
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
            if patch_field is not None:
                entry = _map_patch_field(entry, patch_field, loc, iid)
            model = entry.get("model_name_or_path")
            if not isinstance(model, str) or not model:
                raise PredictionsError(f"{loc}: instance {iid!r}: missing or non-string 'model_name_or_path'")
            patch = entry.get("model_patch")
            if patch is not None and not isinstance(patch, str):
                raise PredictionsError(f"{loc}: instance {iid!r}: 'model_patch' must be a string or null")
            _refuse_harness_keys(entry, loc, iid)
            OversizedPatch.of_entry(entry, f"{loc}: instance {iid!r}")
            _refuse_misspelt_fields(entry, loc, iid)
            if patch_field is None:
                _refuse_patch_elsewhere(entry, loc, iid)
            key = (iid, model, _trial_of(entry, loc, iid))
            if key in entries:
                of = "" if key[2] is None else f" trial {key[2]}"
                raise PredictionsError(
                    f"{loc}: duplicate prediction for instance {iid!r} by model {model!r}{of} (first at {where[key]})"
                )
            other = (
                (iid, model, None) if key[2] is not None else next((k for k in entries if k[:2] == (iid, model)), None)
            )
            if other in entries:
                raise PredictionsError(
                    f"{loc}: instance {iid!r} by model {model!r}: rows with and without 'trial' "
                    f"(the other at {where[other]}); give every row of the pair its trial"
                )
            entries[key] = Prediction.from_entry(entry, path.parent.resolve())
            where[key] = loc
    return Predictions(entries, tuple(specs), None)


def _trial_of(entry: Mapping[str, Any], loc: str, iid: str) -> int | None:
    """The row's ``trial`` (an int >= 1), None without one.

    Raises:
        PredictionsError: ``trial`` present but not an int >= 1 (naming the file, line and instance).
    """
    if "trial" not in entry or entry["trial"] is None:
        return None
    trial = entry["trial"]
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 1:
        raise PredictionsError(f"{loc}: instance {iid!r}: field 'trial' must be an integer >= 1, got {trial!r}")
    return trial
