"""What every evaluation protocol (suite) provides to the plugin.

The plugin knows nothing about issue resolution or app generation: it finds manifest files, asks the
suite named in each file to load its records, makes one pytest item per (record, prediction), calls
:meth:`Suite.evaluate` and hands the plain-builtin result to the reports. Suites are registered by name
(:func:`pytest_mobilebench.suites.registry`); other plugins add theirs through the
``pytest_mobilebench_register_suites`` hook.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, final, runtime_checkable

from pytest_mobilebench.options import Option
from pytest_mobilebench.records import EvalContext, LoadedRecord, ManifestError

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import Prediction

__all__ = [
    "GENERIC_HEADLINE",
    "NO_RESULT",
    "Column",
    "EvalContext",
    "Headline",
    "LoadedRecord",
    "ManifestError",
    "Option",
    "RegradeUnsupported",
    "INFRA_REASON",
    "ItemResult",
    "LiveCandidate",
    "ResultContractError",
    "Suite",
    "SuiteContractError",
    "SuiteBase",
    "SuiteSurface",
    "check_suite",
]


@dataclasses.dataclass(frozen=True)
class Column:
    """One report column of a suite: ``header`` over the item's junit property ``key``.

    ``key`` names a property in the result's ``properties``; ``f2p`` and similar transition names are shown
    as ``<key>_passed/<key>_total`` when those two properties exist.
    """

    header: str
    key: str


@dataclasses.dataclass(frozen=True)
class Headline:
    """How a suite's one headline figure reads, declared once (on its surface): the suite's ``summarize()``
    labels its ``headline`` with it, and the reports use it when there is no table to read (a suite or a model
    with no result: an interrupted run, a model that finished nothing), so the figure keeps one label and one
    format whatever the selection.

    Attributes:
        label: the figure's name as shown (``"resolution rate"``, ``"NavPassRate"``, ``"Overall"``, ``"Pass@1"``).
        kind: ``"rate"`` (value = numerator / denominator, with a Wilson 95% interval) or ``"score"`` (a weighted
            figure such as the planner's Overall: no interval; shown ``n/a (<why>)`` when it has no value).
        over_items: True when the figure is items passed / items eligible (evaluated minus infrastructure
            errors), so the report may compute it from the results alone when the suite's table has none.
    """

    label: str
    kind: Literal["rate", "score"] = "rate"
    over_items: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("rate", "score"):
            raise ValueError(f"headline kind must be 'rate' or 'score', not {self.kind!r}")
        if self.over_items and self.kind != "rate":
            raise ValueError("a headline over items is a rate (numerator / denominator), not a score")


#: the headline of a suite that declares none: items passed / eligible
GENERIC_HEADLINE: Final = Headline("pass rate", over_items=True)

#: why a headline figure has no value when its suite (or model) has no result
NO_RESULT: Final = "no result"


@dataclasses.dataclass(frozen=True)
class SuiteSurface:
    """What a suite shows before its implementation is imported: enough to declare its options and markers,
    show its columns and route files to it. A built-in suite's surface lives in
    ``pytest_mobilebench/suites/declared/<name>.py`` and imports nothing heavy; the implementation
    (``module``'s ``SUITE``) is imported when an item of the suite is collected or run.

    Attributes:
        name: the suite name.
        module: dotted module exposing ``SUITE``, the implementation.
        options, columns, fixtures, fixture_module: exactly the implementation's (checked when it is imported).
        markers: markers declared at start-up; the implementation's ``markers`` holds at least these (markers
            computed from registries, such as frameworks', are declared when the implementation is imported).
        datasets: glob patterns of the ``--dataset`` file names the suite's ``load_dataset`` may read (``()``:
            it reads none, so a dataset never imports it).
        headline: the label and kind of the suite's headline figure (:class:`Headline`); its ``summarize()``
            reads them from here.
        plots: dotted module whose ``plots(table) -> list[FigureSpec]`` draws the suite's own figures on the run
            page (:mod:`pytest_mobilebench.report.page`), or None: the page draws only the generic ones.
    """

    name: str
    module: str
    options: tuple[Option, ...]
    markers: Mapping[str, str]
    columns: tuple[Column, ...]
    fixtures: tuple[str, ...] = ()
    fixture_module: str | None = None
    datasets: tuple[str, ...] = ()
    headline: Headline = GENERIC_HEADLINE
    plots: str | None = None


@dataclasses.dataclass(frozen=True)
class LiveCandidate:
    """A live agent's candidate, made before its evaluation (a suite's ``produce_live``).

    Attributes:
        prediction: the row the agent's work became, as written to the run's predictions file and read back as a
            file prediction: the item evaluates it exactly as ``--predictions`` of that file would.
        attach: ``result -> result``: the evaluated result with the agent's record (mode, model, end, usage,
            transcript, what was taken) and its ``agent_*`` properties.
    """

    prediction: Prediction
    attach: Callable[[dict[str, Any]], dict[str, Any]]


@runtime_checkable
class Suite(Protocol):
    """One evaluation protocol: a folder ``pytest_mobilebench/suites/<name>/`` whose ``SUITE`` implements this.

    Every member is required (the registry checks them when the suite is registered, see
    :func:`check_suite`); a suite with nothing to say returns an empty value. Optional members:

    - ``produce_live(record, prediction, ctx) -> LiveCandidate | dict``, of a suite whose ``live_model`` names a
      model: under ``--predictions=live`` the item asks it for the candidate (agent in a sandbox, patch or files
      taken, row written), then calls ``evaluate`` with the file prediction it returns; a dict instead is the
      item's finished result (no candidate could be made: an infrastructure failure). A live suite without it
      (the planner: the agent acts inside the evaluated episode) gets the live prediction in ``evaluate``;
    - ``plots_module``, the dotted module drawing the suite's run-page figures (its surface's ``plots``
      entry), or a ``plots`` function itself;
    - ``headline``, a :class:`Headline` (the label and kind of its ``summarize()["headline"]``, used by the
      reports when a suite or model has no result); without it the reports say :data:`GENERIC_HEADLINE`.
    """

    name: str
    #: the suite's own command-line options
    options: tuple[Option, ...]
    #: marker name -> description; every marker a record carries is declared here
    markers: Mapping[str, str]
    #: report columns (html, run page), in display order
    columns: tuple[Column, ...]
    #: names of pytest fixtures each item of this suite requests; values reach ``evaluate`` via ``ctx.fixture``
    fixtures: tuple[str, ...]
    #: dotted module of the suite's own ``@pytest.fixture`` functions (registered as a plugin), or None
    fixture_module: str | None
    #: the closed reason vocabulary: a str-valued Enum whose members have a bool property ``is_infra``
    reasons: type[enum.Enum]

    def load(self, path: Path, document: Any) -> Sequence[LoadedRecord | ManifestError]:
        """Turn one parsed manifest into records; a broken entry becomes a ManifestError alone.

        ``document`` is a :class:`pytest_mobilebench.manifest.YamlDocument` (``.data`` is the mapping,
        ``.line_of(...)`` gives lines for messages).
        """

    def load_dataset(self, path: Path, options: Mapping[str, Any]) -> Sequence[LoadedRecord | ManifestError] | None:
        """Records of a ``--dataset`` file, or None when the file is not a dataset dialect this suite reads."""

    def evaluate(self, record: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        """Evaluate one candidate and return a plain-builtin result.

        The result has at least ``reason`` (a value of the suite's closed str-Enum vocabulary), ``passed``
        (bool: the item's headline success), ``retryable`` (True exactly for infrastructure outcomes, which are
        never cached) and ``properties`` (a flat ``{name: str|int|float|bool}`` that goes to junit
        ``user_properties``); infrastructure results also carry ``infra_kind``. The plugin adds
        ``instance_id``, ``suite``, ``model_name_or_path``, ``evidence_dir`` and ``cache_key``. It never raises
        for a candidate's fault.
        """

    def summarize(
        self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Suite-level tables for the run summary, from every item's result and the run's options.

        Always has ``"headline"``: ``{"label": str, "numerator": int, "denominator": int, "value": float | None,
        "ci95": [lo, hi] | None, "note": str}`` (the suite's own headline figure, e.g. resolution rate, Pass@1).
        """

    def cache_material(self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]) -> Any:
        """Extra result-cache key material beyond the record, prediction and keyed options (None: nothing)."""

    def finish_run(self, options: Mapping[str, Any], run_id: str, results: Sequence[Mapping[str, Any]]) -> None:
        """Run-level cleanup on the controller after the last item (images, emulators); may do nothing."""

    def live_model(self, options: Mapping[str, Any]) -> str | None:
        """The model this suite drives itself under ``--predictions=live`` (the items' model name), from its own
        options (``options[dest]``); None when the suite has no live mode.

        Raises:
            ValueError: the suite has a live mode but its options are incomplete; the message names the options
                (and environment variables) to give.
        """

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        """Grade again from an evidence folder, through the same grading function as the live run."""


class RegradeUnsupported(NotImplementedError):
    """The suite keeps no evidence it can grade again (:meth:`SuiteBase.regrade`'s default): a ``--mb-regrade`` run
    keeps the item's live result and says so (:func:`pytest_mobilebench.regrade_run.regrade_one`)."""


class SuiteBase:
    """A :class:`Suite` with no-op defaults, so a suite writes only what varies: its ``name``, ``reasons``,
    ``load`` and ``evaluate`` (and whatever else it has to say). The defaults: no options, markers, columns,
    fixtures or fixture module; reads no dataset; a generic ``summarize`` (items passed over eligible, with a
    Wilson 95% interval: :data:`GENERIC_HEADLINE`); no cache material beyond the record and prediction; nothing
    to clean up; no live mode; no re-grade from evidence (``regrade`` raises :class:`RegradeUnsupported`, which a
    ``--mb-regrade`` run reports for the item). A subclass is checked at registration like any suite.
    """

    name: str
    reasons: type[enum.Enum]
    options: tuple[Option, ...] = ()
    markers: Mapping[str, str] = MappingProxyType({})
    columns: tuple[Column, ...] = ()
    fixtures: tuple[str, ...] = ()
    fixture_module: str | None = None

    def load_dataset(self, path: Path, options: Mapping[str, Any]) -> Sequence[LoadedRecord | ManifestError] | None:
        """None: this suite reads no ``--dataset`` file."""
        return None

    def summarize(
        self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """``{"headline": ...}``: items passed over eligible (infrastructure outcomes left out), Wilson 95%."""
        from pytest_mobilebench.metrics import wilson_interval  # not at start-up: this module loads with the plugin

        eligible = [r for r in results if not self._is_infra(r)]
        passed = sum(1 for r in eligible if r.get("passed") is True)
        n = len(eligible)
        label = getattr(self, "headline", GENERIC_HEADLINE).label
        return {
            "headline": {
                "label": label,
                "numerator": passed,
                "denominator": n,
                "value": passed / n if n else None,
                "ci95": list(wilson_interval(passed, n)) if n else None,
                "note": "items passed over eligible (infrastructure outcomes excluded)",
            }
        }

    def _is_infra(self, result: Mapping[str, Any]) -> bool:
        reason = result.get("reason")
        member = next((m for m in self.reasons if m.value == reason), None)
        return reason == INFRA_REASON or bool(getattr(member, "is_infra", False))

    def cache_material(self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]) -> Any:
        """None: nothing beyond the record, the prediction and the keyed options."""
        return None

    def finish_run(self, options: Mapping[str, Any], run_id: str, results: Sequence[Mapping[str, Any]]) -> None:
        """Nothing to clean up."""

    def live_model(self, options: Mapping[str, Any]) -> str | None:
        """None: no live mode."""
        return None

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        """No re-grade from evidence.

        Raises:
            RegradeUnsupported: always (a suite that can re-grade overrides this).
        """
        raise RegradeUnsupported(f"suite {self.name!r} cannot re-grade from an evidence folder")


#: members every suite must have: (name, is_method)
_REQUIRED: tuple[tuple[str, bool], ...] = (
    ("name", False),
    ("options", False),
    ("markers", False),
    ("columns", False),
    ("fixtures", False),
    ("fixture_module", False),
    ("reasons", False),
    ("load", True),
    ("load_dataset", True),
    ("evaluate", True),
    ("summarize", True),
    ("cache_material", True),
    ("finish_run", True),
    ("regrade", True),
    ("live_model", True),
)


class SuiteContractError(TypeError):
    """A suite object does not implement :class:`Suite` (the message lists every missing or wrong member)."""


def check_suite(suite: Any, name: str | None = None) -> None:
    """Check ``suite`` against :class:`Suite` at registration.

    Raises:
        SuiteContractError: a member is missing, a method is not callable, a declaration has the wrong type,
            or ``name`` (the registry key) differs from ``suite.name``.
    """
    problems = [f"missing {attr!r}" for attr, _ in _REQUIRED if not hasattr(suite, attr)]
    problems += [
        f"{attr!r} is not callable"
        for attr, method in _REQUIRED
        if method and hasattr(suite, attr) and not callable(getattr(suite, attr))
    ]
    if not problems:
        if name is not None and suite.name != name:
            problems.append(f"registered as {name!r} but its name is {suite.name!r}")
        if not all(isinstance(o, Option) for o in suite.options):
            problems.append("'options' must hold pytest_mobilebench.suites.base.Option objects")
        if not all(isinstance(c, Column) for c in suite.columns):
            problems.append("'columns' must hold pytest_mobilebench.suites.base.Column objects")
        if not isinstance(getattr(suite, "headline", GENERIC_HEADLINE), Headline):
            problems.append("'headline' must be a pytest_mobilebench.suites.base.Headline")
        if not isinstance(suite.markers, Mapping):
            problems.append("'markers' must map marker names to descriptions")
        if isinstance(suite.fixtures, str) or not all(isinstance(f, str) for f in suite.fixtures):
            problems.append("'fixtures' must be a tuple of fixture names")
        reasons = suite.reasons
        if not (
            isinstance(reasons, type)
            and issubclass(reasons, enum.Enum)
            and all(isinstance(m.value, str) and isinstance(getattr(m, "is_infra", None), bool) for m in reasons)
        ):
            problems.append("'reasons' must be a str-valued Enum whose members have a bool 'is_infra'")
    if problems:
        raise SuiteContractError(
            f"suite {name or getattr(suite, 'name', suite)!r} does not implement Suite: " + "; ".join(problems)
        )


#: the reason of a result the plugin makes itself when a suite raised or broke the result contract; it is an
#: infrastructure outcome in every suite
INFRA_REASON: Final[str] = "infra_error"

_SCALARS: Final = (str, int, float, bool)


class ResultContractError(ValueError):
    """A suite's ``evaluate`` returned something that is not a valid result (the message says what)."""


@final
@dataclasses.dataclass(frozen=True)
class ItemResult:
    """One item's checked result; ``retryable`` follows from the reason (its ``is_infra``), never from the suite.

    Attributes:
        reason: a value of the suite's ``reasons`` vocabulary, or :data:`INFRA_REASON`.
        passed: the item's headline success (never True for an infrastructure reason).
        retryable: True exactly for infrastructure reasons: never cached, retried by the next run.
        infra_kind: what failed, for infrastructure reasons (``container_died``, ``harness_error`` ...).
        detail: one human-readable line or paragraph.
        properties: flat ``{name: str | int | float | bool}``, the junit ``user_properties``.
        fields: the suite's own further fields (plain builtins), kept as they are.
    """

    reason: str
    passed: bool
    retryable: bool
    infra_kind: str | None
    detail: str
    properties: Mapping[str, str | int | float | bool]
    fields: Mapping[str, Any]

    @classmethod
    def from_suite(cls, suite: Suite, raw: Mapping[str, Any]) -> ItemResult:
        """Check ``raw`` (what ``suite.evaluate`` returned) against the result contract.

        Raises:
            ResultContractError: not a mapping, a reason outside the suite's vocabulary, a non-bool ``passed``,
                an infrastructure reason that passed, or a property that is not a flat scalar.
        """
        if not isinstance(raw, Mapping):
            raise ResultContractError(f"suite {suite.name!r} returned {type(raw).__name__}, not a mapping")
        reason = raw.get("reason")
        vocabulary = {m.value: m for m in suite.reasons}
        if reason != INFRA_REASON and reason not in vocabulary:
            raise ResultContractError(
                f"suite {suite.name!r} returned reason {reason!r}, not one of {', '.join(sorted(vocabulary))}"
            )
        infra = reason == INFRA_REASON or bool(vocabulary[reason].is_infra)
        passed = raw.get("passed")
        if not isinstance(passed, bool) or (infra and passed):
            raise ResultContractError(f"suite {suite.name!r} returned passed={passed!r} with reason {reason!r}")
        properties = raw.get("properties") or {}
        bad = [k for k, v in properties.items() if not isinstance(k, str) or not isinstance(v, _SCALARS)]
        if bad:
            raise ResultContractError(f"suite {suite.name!r}: properties {bad} are not flat str/int/float/bool values")
        known = {"reason", "passed", "retryable", "infra_kind", "detail", "properties"}
        return cls(
            reason=str(reason),
            passed=passed,
            retryable=infra,
            infra_kind=(str(raw["infra_kind"]) if infra and raw.get("infra_kind") else None),
            detail=str(raw.get("detail") or ""),
            properties=dict(properties),
            fields={k: v for k, v in raw.items() if k not in known},
        )

    @classmethod
    def harness_error(cls, detail: str, kind: str = "harness_error") -> ItemResult:
        """The result the plugin records when a suite raised or broke the contract: infrastructure, retried."""
        return cls(
            reason=INFRA_REASON,
            passed=False,
            retryable=True,
            infra_kind=kind,
            detail=detail,
            properties={"infra_error": kind},
            fields={},
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins for xdist, JSON and the reports (the suite's fields first, the checked ones over them)."""
        out = dict(self.fields)
        out.update(
            reason=self.reason,
            passed=self.passed,
            retryable=self.retryable,
            detail=self.detail,
            properties=dict(self.properties),
        )
        if self.infra_kind is not None:
            out["infra_kind"] = self.infra_kind
        return out
