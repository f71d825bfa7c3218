"""The issue-resolution protocol (MobileDev-Bench; SPEC section 1): the suite object and its loading half.

Collecting a manifest imports only what loading needs (issue 23): this module, the manifest's models
(:mod:`.manifest`, with the framework registry the validation consults) and the markers. The evaluating
half (:mod:`.evaluation`: patches, policy, the test run, parsers, grading, the summary tables) is imported
the first time an item of the suite runs, summarizes or re-grades, through :func:`_evaluator`; see
:mod:`.evaluation`'s docstring for what ``evaluate`` does.

Names of the evaluating half that this package has always exported (``regrade``, ``resolve_patches``,
``runtime_for``, ``workspace_spec``, ``parse_run``, ``headline``, ``infra_callouts``,
``apply_failure_detail``, ...: :data:`_FROM_EVALUATION`) stay importable from here: a module-level
``__getattr__`` (PEP 562) imports :mod:`.evaluation` on their first access.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, cast, final

from pytest_mobilebench.manifest.yamlfile import YamlDocument
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import Reason
from pytest_mobilebench.records import EvalContext, LoadedRecord, ManifestError
from pytest_mobilebench.suites.base import LiveCandidate, SuiteBase
from pytest_mobilebench.suites.declared import issue_resolution as surface
from pytest_mobilebench.suites.issue_resolution.manifest import load_manifest
from pytest_mobilebench.suites.issue_resolution.markers import FrameworkMarkers

if TYPE_CHECKING:
    from pytest_mobilebench.predictions import Prediction
    from pytest_mobilebench.suites.issue_resolution.evaluation import IssueResolutionEvaluator
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

__all__ = [
    "SUITE",
    "IssueResolutionSuite",
    "apply_failure_detail",
    "docker_answers",
    "headline",
    "infra_callouts",
    "parse_run",
    "regrade",
]

#: names provided by :mod:`.evaluation`, imported on first access (:func:`__getattr__`)
_FROM_EVALUATION: Final = frozenset(
    {
        "EVALUATOR",
        "IssueResolutionEvaluator",
        "apply_failure_detail",
        "headline",
        "infra_callouts",
        "parse_run",
        "regrade",
        "repo_cache",
        "resolve_patches",
        "runtime_for",
        "workspace_spec",
    }
)


def __getattr__(name: str) -> Any:
    """``regrade``, ``resolve_patches`` and the other :data:`_FROM_EVALUATION` names, from :mod:`.evaluation`.

    Raises:
        AttributeError: ``name`` is none of them (the import system then tries a submodule of that name).
    """
    if name in _FROM_EVALUATION:
        return getattr(_evaluation_module(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _evaluation_module() -> ModuleType:
    """:mod:`.evaluation`, imported on first use: the one import of the evaluating half.

    An import statement (not :mod:`importlib`), so that the result cache's code fingerprint
    (:func:`pytest_mobilebench.cache.suite_fingerprint`, which reads imports inside functions too) covers it;
    ``import a.b.evaluation``, not ``from a.b import evaluation``: the latter would return the package's
    attribute even after ``sys.modules`` dropped the module (as an in-process pytester run does with the
    modules first imported during it), and a dropped evaluation module holds the dropped
    :mod:`~pytest_mobilebench.predictions` classes the plugin no longer makes predictions of.
    """
    import pytest_mobilebench.suites.issue_resolution.evaluation as evaluation

    return evaluation


def _evaluator() -> IssueResolutionEvaluator:
    """The evaluating half's :data:`~.evaluation.EVALUATOR` (:func:`_evaluation_module`)."""
    return cast("IssueResolutionEvaluator", _evaluation_module().EVALUATOR)


def docker_answers(timeout_s: float = 5) -> bool:
    """Whether the docker SDK is installed and a daemon answers ``ping`` within ``timeout_s``."""
    try:
        from pytest_mobilebench.runtime.daemon import connect

        connect(timeout_s=timeout_s)
    except InfraError:
        return False
    return True


@final
class IssueResolutionSuite(SuiteBase):
    """The ``issue_resolution`` suite (implements :class:`pytest_mobilebench.suites.base.Suite`): loads here,
    evaluates, summarizes and re-grades through :mod:`.evaluation` (imported when first needed)."""

    name = surface.SURFACE.name
    options = surface.OPTIONS
    markers = FrameworkMarkers(surface.MARKERS)
    columns = surface.COLUMNS
    plots_module = surface.SURFACE.plots
    fixtures = surface.FIXTURES
    fixture_module = None
    reasons = Reason
    item_trials = True  # --predictions=live --mb-trials K: one item per trial (report/trials.py)

    def load(self, path: Path, document: YamlDocument | Mapping[str, Any]) -> list[LoadedRecord | ManifestError]:
        """Load a manifest (see :mod:`pytest_mobilebench.suites.issue_resolution.manifest`)."""
        if not isinstance(document, YamlDocument):
            document = YamlDocument(path=path, data=dict(document), key_lines={}, item_lines={})
        return load_manifest(document)

    def load_dataset(self, path: Path, options: Mapping[str, Any]) -> list[LoadedRecord | ManifestError] | None:
        """SWE-bench, Multi-SWE-bench or MobileDev-Bench rows, detected per file (:mod:`.dialects`)."""
        from pytest_mobilebench.suites.issue_resolution import dialects

        return dialects.load_dataset(path, options)

    def cache_material(self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]) -> Any:
        """Live items: the prompt template's and the price table's contents; else nothing beyond the record,
        the prediction and the keyed options."""
        if prediction is not None and prediction.is_live():
            from pytest_mobilebench.agents.options import agent_material

            return agent_material(options)
        return None

    def evaluate(self, record: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        """Evaluate one prediction (:meth:`.evaluation.IssueResolutionEvaluator.evaluate`). Never raises for
        the candidate's fault."""
        return _evaluator().evaluate(record, prediction, ctx)

    def produce_live(
        self, record: LoadedRecord, prediction: Prediction, ctx: EvalContext
    ) -> LiveCandidate | dict[str, Any]:
        """``--predictions=live``: the agent's patch as a file prediction (:func:`.live.produce_live`), or the
        item's result when none could be made (the sandbox or the endpoint failed: :func:`.evaluation.guarded`).
        Under ``--mb-audit`` / ``--mb-validate`` no agent runs: those grade the benchmark's own patches."""
        evaluation = _evaluation_module()
        if ctx.options.get("mb_audit") or ctx.options.get("mb_validate"):
            return LiveCandidate(prediction, lambda result: result)
        from pytest_mobilebench.suites.issue_resolution.live import produce_live

        instance: IssueInstance = record.record
        model = prediction.model_name_or_path
        base = evaluation.base_fields(instance, model)
        started = time.monotonic()
        made = evaluation.guarded(record, base, ctx, lambda: produce_live(instance, ctx, model, trial=prediction.trial))
        if isinstance(made, dict):
            made["duration_s"] = round(time.monotonic() - started, 3)
            made["properties"]["duration_s"] = made["duration_s"]
        return made

    def summarize(
        self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Per-repository, per-framework, difficulty, category, gold-size and artifact tables; localization
        means (:meth:`.evaluation.IssueResolutionEvaluator.summarize`)."""
        return _evaluator().summarize(results, options=options)

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        """A new result from the item's evidence, through the evaluator's ``_finish`` (:mod:`.regrading`)."""
        from pytest_mobilebench.suites.issue_resolution.regrading import regrade_result

        return regrade_result(_evaluator(), record.record, evidence_dir)

    def live_model(self, options: Mapping[str, Any]) -> str | None:
        """The model of ``--predictions=live`` (:func:`.live.live_model`: an agent in each instance's sandbox).

        Raises:
            ValueError: the endpoint or the model is missing (the message names the options).
        """
        from pytest_mobilebench.suites.issue_resolution.live import live_model

        return live_model(options)


SUITE = IssueResolutionSuite()
