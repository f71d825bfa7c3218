"""The app-generation suite: multi-screen app generation judged on five axes (MobileForge, seed 002; SPEC §3).

One pytest item is one generated project (a prediction) for one app (a manifest under
``cases/app_generation/``). :meth:`AppGenerationSuite.evaluate` runs, in order:

1. build (:mod:`.build`): the candidate's ``src/`` in a clean pinned Vite + React + TS + Tailwind scaffold,
   ``tsc --noEmit`` and ``vite build`` with zero errors, run in a container (:mod:`.container`,
   ``build_mode = "container"``; no daemon: ``infra_error`` ``daemon_unreachable``, or on this host with
   ``mb_trust_candidates``: ``"host"``); route count, page files, route coverage. A ``prebuilt_dist`` is
   used as given only with ``mb_trust_candidates`` (``build_mode = "prebuilt"``) and ``mb_app_build`` not
   ``"always"``; a prediction without a ``src/`` folder is ``build_failed`` (``build_failure = "no_source"``);
2. navigation (:mod:`.navigation`): every spec state-isolated in a fresh browser context; NavPassRate overall
   and per category; C1-C4 failure classes (:mod:`.failures`) for failed interactive specs;
3. maintainability (:mod:`.maintainability`): LoC, ReuseRate, DeadCompRate, ColorConsistency;
4. visual capture (:mod:`.capture`): a 375x812 screenshot of every non-overlay screen, judged across models
   in :meth:`AppGenerationSuite.summarize` (:mod:`.judges`; anchor-reference list-wise, Borda: :mod:`.ranking`);
5. efficiency (:mod:`.efficiency`): tokens, calls, LLM seconds and list-price cost.

What "passed" means for the pytest item: the project builds with zero errors AND every navigation spec
passes (NavPassRate == 1.0); ``reason`` says which part failed. All figures travel as properties; models
are compared in the summary tables, not by item verdicts.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final

from pytest_mobilebench.metrics import mean
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.suites.app_generation import build as build_axis
from pytest_mobilebench.suites.app_generation import efficiency, judges, ranking
from pytest_mobilebench.suites.app_generation.failures import failure_table
from pytest_mobilebench.suites.app_generation.manifest import (
    AppManifest,
    AppPrediction,
    NavCategory,
    parse_manifest,
    parse_prediction,
)
from pytest_mobilebench.suites.app_generation import steps
from pytest_mobilebench.suites.app_generation.rates import headline
from pytest_mobilebench.suites.app_generation.reasons import AppGenReason, grade_navigation
from pytest_mobilebench.suites.app_generation import container
from pytest_mobilebench.suites.declared import app_generation as surface
from pytest_mobilebench.records import EvalContext, LoadedRecord, ManifestError
from pytest_mobilebench.suites.base import LiveCandidate, SuiteBase

__all__ = ["SUITE", "AppGenReason", "AppGenerationSuite", "resolve_project"]

SUITE_NAME: Final = "app_generation"


_ARCHIVE_SUFFIXES: Final = (".zip", ".tar.gz", ".tgz", ".tar")
_SKIP_DIRS: Final = frozenset({"node_modules", "dist", ".git", ".vite-cache"})
#: what a prediction's archive may expand to (declared member sizes, summed before extracting), and members
MAX_ARCHIVE_BYTES: Final[int] = 1 << 30
MAX_ARCHIVE_MEMBERS: Final[int] = 200_000


def _bound_archive(archive: Path, sizes: Sequence[int]) -> None:
    if len(sizes) > MAX_ARCHIVE_MEMBERS or sum(sizes) > MAX_ARCHIVE_BYTES:
        raise ValueError(
            f"{archive}: expands to {sum(sizes)} bytes in {len(sizes)} members, over the bound of "
            f"{MAX_ARCHIVE_BYTES} bytes / {MAX_ARCHIVE_MEMBERS} members"
        )


def _safe_extract(archive: Path, dest: Path) -> None:
    """Extract a prediction's archive; sizes bounded first (zipfile stops each member at its declared size).

    Raises:
        ValueError: a member escaping ``dest``, or an archive over :data:`MAX_ARCHIVE_BYTES` /
            :data:`MAX_ARCHIVE_MEMBERS`.
    """
    dest.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            _bound_archive(archive, [info.file_size for info in zf.infolist()])
            for info in zf.infolist():
                target = (dest / info.filename).resolve()
                if not target.is_relative_to(dest.resolve()):
                    raise ValueError(f"{archive}: member {info.filename!r} escapes the extraction folder")
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tf:
            members = tf.getmembers()  # reads the whole (decompressed) stream once, writing nothing
            _bound_archive(archive, [m.size for m in members])
            tf.extractall(dest, members=members, filter="data")


def resolve_project(path: Path, scratch: Path) -> Path:
    """The project root of a prediction's ``project_path``: the folder itself, or an archive extracted into
    ``scratch``; descends into a single top-level folder when the root has no ``src/``.

    Raises:
        FileNotFoundError: the path does not exist.
        ValueError: an unsupported file type or an unsafe archive member.
    """
    if not path.exists():
        raise FileNotFoundError(f"project_path {path} does not exist")
    if path.is_file():
        if not path.name.endswith(_ARCHIVE_SUFFIXES):
            raise ValueError(f"project_path {path} is neither a folder nor a .zip/.tar.gz archive")
        if scratch.exists():
            shutil.rmtree(scratch)
        _safe_extract(path, scratch)
        path = scratch
    if not (path / "src").is_dir():
        subdirs = [p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "__MACOSX"))]
        if len(subdirs) == 1 and (subdirs[0] / "src").is_dir():
            return subdirs[0]
    return path


def _tree_digest(root: Path) -> str:
    """sha256 over relative paths and contents of a project (or archive file), skipping build outputs."""
    h = hashlib.sha256()
    if root.is_file():
        h.update(root.read_bytes())
        return h.hexdigest()
    if not root.is_dir():
        return "absent"
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts[:-1]) or not p.is_file():
            continue
        h.update(rel.as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _inputs_digest(project: Path) -> str:
    """sha256 over the build inputs of a project folder (names, contents and refusals), or why there are none."""
    try:
        files, refused = container.build_inputs(project)
    except (OSError, ValueError) as exc:
        return f"unreadable: {exc}"
    h = hashlib.sha256()
    for name, data in sorted(files.items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    h.update("\n".join(refused).encode())
    return h.hexdigest()


def _parsed(prediction: Prediction | None, result: dict[str, Any], ctx: EvalContext) -> AppPrediction | dict[str, Any]:
    """The file prediction's fields, or the finished result when there is no project to build (a pseudo-prediction,
    no ``project_path`` nor ``prebuilt_dist``) or its fields are unusable."""
    if prediction is not None and prediction.kind is not PredictionKind.FILE:
        detail = f"the {prediction.kind.value} pseudo-prediction has no project to build"
        return steps.finish(result, AppGenReason.MISSING_PREDICTION, detail, ctx)
    if prediction is None or not (prediction.get("project_path") or prediction.get("prebuilt_dist")):
        return steps.finish(result, AppGenReason.MISSING_PREDICTION, "no prediction for this app and model", ctx)
    try:
        return parse_prediction(prediction.fields, prediction.source_dir)
    except ValueError as exc:
        return steps.finish(result, AppGenReason.INVALID_PREDICTION, str(exc), ctx)


def _fresh_result(record: LoadedRecord, model: str, ctx: EvalContext) -> dict[str, Any]:
    """An item's result before any axis is measured: reason ``ok``, not passed, no figures yet."""
    manifest: AppManifest = record.record
    return {
        "instance_id": record.instance_id,
        "suite": SUITE_NAME,
        "app": manifest.app,
        "model_name_or_path": model,
        "reason": AppGenReason.OK.value,
        "passed": False,
        "detail": "",
        "retryable": False,
        "properties": {},
        "nav": [],
        "nav_specs": len(manifest.nav_tests),
        "evidence": {
            "dir": str(ctx.evidence_dir),
            "screens": {},
            "reference_screens": {
                sid: s.screenshot for sid, s in manifest.screens.items() if s.screenshot and not s.overlay
            },
        },
        "axes": {},
    }


@final
class AppGenerationSuite(SuiteBase):
    """The ``app_generation`` suite (implements :class:`pytest_mobilebench.suites.base.Suite`).

    Options read from ``ctx.options`` (all optional): ``mb_price_table`` (price table path),
    ``mb_chromium`` (Chromium executable, default ``/usr/bin/chromium``), ``mb_app_build`` (``"auto"``: use
    ``prebuilt_dist`` when given and trusted; ``"always"``: always build from source), ``mb_build_timeout``
    (seconds per tsc / vite command, default 300) and issue resolution's ``mb_trust_candidates``.
    """

    name: Final = SUITE_NAME
    options = surface.OPTIONS
    markers = surface.MARKERS
    columns = surface.COLUMNS
    plots_module = surface.SURFACE.plots
    fixtures = surface.FIXTURES
    fixture_module = None
    reasons = AppGenReason
    item_trials = True  # --predictions=live --mb-trials K: one item per trial (report/trials.py)

    def live_model(self, options: Mapping[str, Any]) -> str:
        """The model of ``--predictions=live`` (:func:`.live.live_model`; ValueError naming a missing option)."""
        from pytest_mobilebench.suites.app_generation.live import live_model

        return live_model(options)

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        """Grade again from ``app_generation.json`` in the evidence folder through :func:`grade_navigation`
        (a stored result that did not reach navigation keeps its reason)."""
        stored = json.loads((evidence_dir / "app_generation.json").read_text(encoding="utf-8"))
        if stored.get("reason") in (AppGenReason.OK.value, AppGenReason.NAV_FAILED.value):
            reason, detail = grade_navigation(stored.get("nav") or [])
            stored.update(reason=reason.value, passed=reason is AppGenReason.OK, detail=detail)
        return stored

    # ------------------------------------------------------------------------------------------ load

    def load(self, path: Path, document: Mapping[str, Any] | Any) -> Sequence[LoadedRecord | ManifestError]:
        """One record per manifest file (one app), or the file's ManifestErrors (file, line, app, field).

        ``document`` is the parsed mapping, or the plugin's ``YamlDocument`` (its ``.data`` is used; lines are
        re-read from ``path``).
        """
        from pydantic import ValidationError

        from pytest_mobilebench.suites.app_generation.manifest import manifest_errors

        if not isinstance(document, Mapping) and isinstance(getattr(document, "data", None), Mapping):
            document = document.data

        try:
            manifest = parse_manifest(path, document)
        except ManifestError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                return manifest_errors(path, document, cause)
            return [exc]
        return [
            LoadedRecord(
                suite=SUITE_NAME,
                instance_id=manifest.app,
                source=path,
                line=1,
                record=manifest,
                group=f"{SUITE_NAME}:{manifest.app}",
                markers=(SUITE_NAME,),
            )
        ]

    def cache_material(
        self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Content digests of what reaches the evaluation, so the plugin's result cache is invalidated when any
        of them changes: the scaffold (every file of ``scaffold/``), the project (its whole tree, or the
        archive's bytes) and, for a project folder, exactly the build inputs (:func:`.container.build_inputs`,
        ``src/dist/`` included), the bundle of ``prebuilt_dist``, and whether candidates are trusted
        (``mb_trust_candidates`` decides whether that bundle is used)."""
        scaffold = hashlib.sha256()
        for path in sorted(build_axis.SCAFFOLD_DIR.iterdir()):
            if path.is_file():
                scaffold.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        out: dict[str, Any] = {"scaffold": scaffold.hexdigest(), "trusted": bool(options.get("mb_trust_candidates"))}
        if prediction is None or prediction.is_live():  # live: the template and price table in effect too
            from pytest_mobilebench.suites.app_generation.live import live_material

            return out if prediction is None else {**out, **live_material(options)}
        try:
            pred = parse_prediction(prediction.fields, prediction.source_dir)
        except ValueError:
            return out
        for key in ("project_path", "prebuilt_dist"):
            value = getattr(pred, key)
            if value is not None:
                out[key] = _tree_digest(Path(value))
        if pred.project_path is not None and Path(pred.project_path).is_dir():
            out["build_inputs"] = _inputs_digest(resolve_project(Path(pred.project_path), Path(pred.project_path)))
        return out

    # -------------------------------------------------------------------------------------- evaluate

    def produce_live(
        self, record: LoadedRecord, prediction: Prediction, ctx: EvalContext
    ) -> LiveCandidate | dict[str, Any]:
        """``--predictions=live``: the agent's project as the file prediction the run's predictions file holds
        (:func:`.live.produce_live`); the item's ``infra_error`` result (retryable) when no project could be made."""
        from pytest_mobilebench.suites.app_generation.live import produce_live

        model = prediction.model_name_or_path or "unknown"
        try:
            return produce_live(record, model, ctx, trial=prediction.trial)
        except InfraError as exc:
            result = _fresh_result(record, model, ctx)
            result["properties"]["infra_kind"] = exc.kind
            return steps.finish(result, AppGenReason.INFRA_ERROR, f"live agent: {exc}", ctx, retryable=True)

    def evaluate(self, record: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        """Evaluate one generated project on the five axes; never raises for a candidate's fault.

        Returns:
            ``{"instance_id", "suite", "app", "model_name_or_path", "reason", "passed", "detail",
            "retryable", "properties", "nav", "evidence", "axes"}`` as plain builtins, where ``nav`` is one
            ``{"spec_id", "category", "passed", "failure_class", "error"}`` per spec, ``evidence`` holds paths
            (logs, nav folder, ``screens`` and ``reference_screens`` as ``{screen_id: png}``) and ``axes``
            the full per-axis figures (maintainability report, efficiency record, navigation rates).
        """
        manifest: AppManifest = record.record
        model = (prediction.model_name_or_path if prediction is not None else "") or "unknown"
        result = _fresh_result(record, model, ctx)
        pred = _parsed(prediction, result, ctx)
        if isinstance(pred, dict):
            return pred
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="mb-appgen-") as tmp_name:
            tmp = Path(tmp_name)
            project: Path | None = None
            if pred.project_path is not None:
                try:
                    project = resolve_project(Path(pred.project_path), tmp / "extracted")
                except (OSError, ValueError, tarfile.TarError, zipfile.BadZipFile) as exc:
                    return steps.finish(result, AppGenReason.INVALID_PREDICTION, str(exc), ctx)
            try:
                steps.measure_efficiency(pred, ctx.options, result)
            except efficiency.PriceTableError as exc:
                return steps.finish(result, AppGenReason.INFRA_ERROR, f"price table: {exc}", ctx, retryable=False)
            steps.measure_maintainability(project, manifest, result, ctx.evidence_dir)
            dist = steps.dist_of(pred, project, manifest, ctx, tmp, result)
            if isinstance(dist, dict):
                return dist
            navigated = steps.navigate(dist, manifest, ctx, result)
            if isinstance(navigated, dict):
                return navigated
        steps.record_navigation(result, *navigated)
        result["properties"]["eval_seconds"] = round(time.monotonic() - started, 3)
        reason, detail = grade_navigation(result["nav"])
        return steps.finish(result, reason, detail, ctx)

    # ------------------------------------------------------------------------------------- summarize

    def summarize(
        self,
        results: Sequence[Mapping[str, Any]],
        *,
        options: Mapping[str, Any] | None = None,
        judge: judges.Judge | None = None,
        seed: int = 0,
    ) -> dict[str, Any]:
        """Per-model table of the five axes, C1-C4 proportions with Wilson 95% intervals, and visual Borda.

        Args:
            results: every item's result from :meth:`evaluate`.
            options: the run's options; with ``mb_judge_base_url`` (or ``MOBILEBENCH_JUDGE_BASE_URL``) set and no
                ``judge`` given, the list-wise judge is a :class:`.judges.ChatJudge` on that endpoint.
            judge: the list-wise visual judge (default: the offline :class:`.judges.PerceptualJudge`, which
                reads the screenshots; every other part of this method is pure).
            seed: seeds the judge's shuffles (per app and screen) for reproducible rankings.

        Returns:
            ``{"models": {model: row}, "failure_classes": table, "visual": {...}, "reasons": {...}}`` where a
            row has ``apps``, ``build_rate``, ``nav_pass_rate`` (mean of per-app rates over built apps and
            over all apps), ``nav_pooled`` (passed / total specs), ``nav_rate_<category>`` (pooled),
            maintainability means, efficiency sums and means, ``reasons`` counts, ``failure_classes`` (the
            :func:`.failures.failure_table` of that model) and ``borda`` (``None`` without a comparison).
        """
        rows: dict[str, dict[str, Any]] = {}
        by_model: dict[str, list[Mapping[str, Any]]] = {}
        for r in results:
            by_model.setdefault(str(r.get("model_name_or_path")), []).append(r)
        all_classes: list[str | None] = []
        for model, items in sorted(by_model.items()):
            evaluated = [r for r in items if r.get("reason") not in (AppGenReason.INFRA_ERROR.value,)]
            props = [r.get("properties", {}) for r in evaluated]
            built = [p for p in props if p.get("build_ok")]
            nav_items = [n for r in evaluated for n in r.get("nav", [])]
            classes = [n.get("failure_class") for n in nav_items]
            all_classes.extend(classes)
            row: dict[str, Any] = {
                "apps": len(items),
                "infra_errors": len(items) - len(evaluated),
                "reasons": _count([str(r.get("reason")) for r in items]),
                "build_rate": (len(built) / len(props)) if props else 0.0,
                "nav_pass_rate": mean(float(p.get("nav_pass_rate", 0.0)) for p in props) if props else 0.0,
                "nav_pass_rate_built": mean(float(p.get("nav_pass_rate", 0.0)) for p in built) if built else 0.0,
                "nav_pooled": _pooled(nav_items),
            }
            for cat in NavCategory:
                row[f"nav_rate_{cat.value}"] = _pooled([n for n in nav_items if n.get("category") == cat.value])
            for key in (
                "loc_total",
                "loc_per_file",
                "reuse_rate",
                "dead_comp_rate",
                "color_consistency",
                "route_coverage",
                "route_count",
                "page_files",
            ):
                values = [float(p[key]) for p in props if steps.number(p.get(key)) is not None]
                row[key] = mean(values) if values else None
            for key in ("input_tokens", "output_tokens", "llm_calls", "llm_seconds", "cost_usd"):
                values = [float(p[key]) for p in props if steps.number(p.get(key)) is not None]
                row[f"{key}_total"] = sum(values) if values else None
                row[f"{key}_mean"] = mean(values) if values else None
            row["failure_classes"] = failure_table(c for c in classes if c is not None)
            rows[model] = row
        if judge is None and (
            (options or {}).get("mb_judge_base_url") or os.environ.get(judges.ChatJudge.ENV_BASE_URL)
        ):
            judge = judges.ChatJudge.from_options(options)
        vis = self._visual(results, judge or judges.PerceptualJudge(), seed)
        for model, row in rows.items():
            row["borda"] = vis["borda"].get(model)
        from pytest_mobilebench.agents.records import agent_table

        return {
            "models": rows,
            "failure_classes": failure_table(c for c in all_classes if c is not None),
            "visual": vis,
            "reasons": _count([str(r.get("reason")) for r in results]),
            "headline": headline(results),
            **({"agent": agents} if (agents := agent_table(results)) is not None else {}),  # live items' usage
        }

    @staticmethod
    def _visual(results: Sequence[Mapping[str, Any]], judge: judges.Judge, seed: int) -> dict[str, Any]:
        """Anchor-reference list-wise judging of every screen that has a reference and a candidate shot."""
        per_app: dict[str, dict[str, Mapping[str, Any]]] = {}
        for r in results:
            per_app.setdefault(str(r.get("app") or r.get("instance_id")), {})[str(r.get("model_name_or_path"))] = r
        outcomes: list[Any] = []
        errors: list[str] = []
        for app, by_model in sorted(per_app.items()):
            refs: dict[str, str] = {}
            for r in by_model.values():
                refs.update(r.get("evidence", {}).get("reference_screens", {}) or {})
            for screen_id, ref in sorted(refs.items()):
                cands = {
                    m: Path(p)
                    for m, r in by_model.items()
                    if (p := (r.get("evidence", {}).get("screens", {}) or {}).get(screen_id)) and Path(p).is_file()
                }
                if not cands or not Path(ref).is_file():
                    continue
                rng = random.Random(f"{seed}:{app}:{screen_id}")
                try:
                    outcomes.append(
                        ranking.judge_screen(Path(ref), cands, judge, rng=rng, screen_id=f"{app}/{screen_id}")
                    )
                except (OSError, ValueError, judges.JudgeTransportError) as exc:
                    errors.append(f"{app}/{screen_id}: {exc}")
        return {
            "judge": type(judge).__name__,
            "screens_judged": len(outcomes),
            "anchor_pass_rate": ranking.anchor_pass_rate(outcomes),
            "acceptance_rate": ranking.acceptance_rate(outcomes),
            "borda": ranking.borda_over_screens(outcomes),
            "outcomes": [o.to_dict() for o in outcomes],
            "errors": errors,
        }


def _count(values: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def _pooled(nav_items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    passed = sum(1 for n in nav_items if n.get("passed"))
    total = len(nav_items)
    return {"passed": passed, "total": total, "rate": passed / total if total else 0.0}


#: the instance the plugin registers under ``app_generation``
SUITE: Final = AppGenerationSuite()
