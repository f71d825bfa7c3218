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

import contextlib
import enum
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
from pytest_mobilebench.runtime.local import LocalRuntime
from pytest_mobilebench.runtime.sandbox import SandboxRuntime
from pytest_mobilebench.suites.app_generation import build as build_axis
from pytest_mobilebench.suites.app_generation import capture, efficiency, judges, maintainability, ranking
from pytest_mobilebench.suites.app_generation import navigation as nav_axis
from pytest_mobilebench.suites.app_generation.failures import (
    FAILURE_CLASSES,
    FailureClass,
    failure_table,
)
from pytest_mobilebench.suites.app_generation.manifest import (
    AppManifest,
    NavCategory,
    parse_manifest,
    parse_prediction,
)
from pytest_mobilebench.suites.app_generation.rates import headline
from pytest_mobilebench.suites.app_generation.serve import serve_spa, stage_files
from pytest_mobilebench.suites.app_generation import container
from pytest_mobilebench.suites.declared import app_generation as surface
from pytest_mobilebench.records import EvalContext, LoadedRecord, ManifestError
from pytest_mobilebench.suites.base import LiveCandidate
from pytest_mobilebench.states import InfraKind

__all__ = ["SUITE", "AppGenReason", "AppGenerationSuite", "resolve_project"]

SUITE_NAME: Final = "app_generation"


@enum.unique
class AppGenReason(str, enum.Enum):
    """The closed reason vocabulary of this suite (one per item).

    ``ok``: built and every spec passed; ``nav_failed``: built, some spec failed; ``build_failed``: tsc or vite
    reported errors (or the project has no ``src/``); ``missing_prediction``: no project for this app and
    model; ``invalid_prediction``: the prediction's fields or paths are unusable; ``infra_error``: the
    harness's environment failed (npm, Chromium, price table) - never the candidate's fault.
    """

    OK = "ok"
    NAV_FAILED = "nav_failed"
    BUILD_FAILED = "build_failed"
    MISSING_PREDICTION = "missing_prediction"
    INVALID_PREDICTION = "invalid_prediction"
    INFRA_ERROR = "infra_error"

    @property
    def is_infra(self) -> bool:
        """True when the outcome says nothing about the candidate."""
        return self is AppGenReason.INFRA_ERROR


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


_PRICE_CACHE: dict[str, dict[str, dict[str, float]]] = {}


def _price_table(path: str | None) -> dict[str, dict[str, float]]:
    key = path or str(efficiency.DEFAULT_PRICE_TABLE)
    if key not in _PRICE_CACHE:
        _PRICE_CACHE[key] = efficiency.load_price_table(key)
    return _PRICE_CACHE[key]


def _num(value: Any) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def grade_navigation(nav: Sequence[Mapping[str, Any]]) -> tuple[AppGenReason, str]:
    """The verdict of a built app from its per-spec navigation records (``{"spec_id", "passed",
    "failure_class"}``): ``ok`` when there is at least one spec and every spec passed, else ``nav_failed``
    with the failed specs (and their C1-C4 class) in the detail."""
    passed = sum(1 for e in nav if e.get("passed"))
    if nav and passed == len(nav):
        return AppGenReason.OK, ""
    failed = [
        str(e.get("spec_id")) + (f" ({e['failure_class']})" if e.get("failure_class") else "")
        for e in nav
        if not e.get("passed")
    ]
    return AppGenReason.NAV_FAILED, f"NavPassRate {passed}/{len(nav)}; failed: {', '.join(failed)}"


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
class AppGenerationSuite:
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
    fixtures = surface.FIXTURES
    fixture_module = None
    reasons = AppGenReason
    item_trials = True  # --predictions=live --mb-trials K: one item per trial (report/trials.py)

    def load_dataset(self, path: Path, options: Mapping[str, Any]) -> None:
        """App generation reads no dataset dialect: its instances are manifests."""
        return None

    def live_model(self, options: Mapping[str, Any]) -> str:
        """The model of ``--predictions=live`` (:func:`.live.live_model`; ValueError naming a missing option)."""
        from pytest_mobilebench.suites.app_generation.live import live_model

        return live_model(options)

    def finish_run(self, options: Mapping[str, Any], run_id: str, results: Sequence[Mapping[str, Any]]) -> None:
        """Nothing to clean up: the browser is a fixture and the scaffold is kept for the next run."""
        return None

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
            return self._finish(result, AppGenReason.INFRA_ERROR, f"live agent: {exc}", ctx, retryable=True)

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
        props: dict[str, Any] = result["properties"]
        if prediction is not None and prediction.kind is not PredictionKind.FILE:
            detail = f"the {prediction.kind.value} pseudo-prediction has no project to build"
            return self._finish(result, AppGenReason.MISSING_PREDICTION, detail, ctx)
        if prediction is None or not (prediction.get("project_path") or prediction.get("prebuilt_dist")):
            return self._finish(result, AppGenReason.MISSING_PREDICTION, "no prediction for this app and model", ctx)
        try:
            pred = parse_prediction(prediction.fields, prediction.source_dir)
        except ValueError as exc:
            return self._finish(result, AppGenReason.INVALID_PREDICTION, str(exc), ctx)
        started = time.monotonic()
        options = ctx.options
        with tempfile.TemporaryDirectory(prefix="mb-appgen-") as tmp_name:
            tmp = Path(tmp_name)
            # -- project source
            project: Path | None = None
            if pred.project_path is not None:
                try:
                    project = resolve_project(Path(pred.project_path), tmp / "extracted")
                except (OSError, ValueError, tarfile.TarError, zipfile.BadZipFile) as exc:
                    return self._finish(result, AppGenReason.INVALID_PREDICTION, str(exc), ctx)
            # -- efficiency (pure; independent of the build)
            try:
                eff = efficiency.run_cost(
                    {
                        "model_name_or_path": pred.model_name_or_path,
                        "input_tokens": pred.input_tokens,
                        "output_tokens": pred.output_tokens,
                        "llm_calls": pred.llm_calls,
                        "llm_seconds": pred.llm_seconds,
                    },
                    _price_table(options.get("mb_price_table")),
                )
            except efficiency.PriceTableError as exc:
                return self._finish(result, AppGenReason.INFRA_ERROR, f"price table: {exc}", ctx, retryable=False)
            result["axes"]["efficiency"] = eff
            props.update(
                input_tokens=eff["input_tokens"],
                output_tokens=eff["output_tokens"],
                llm_calls=eff["llm_calls"],
                llm_seconds=eff["llm_seconds"],
            )
            if eff["cost_usd"] is not None:
                props["cost_usd"] = eff["cost_usd"]
            # -- maintainability and static route figures
            report: maintainability.MaintainabilityReport | None = None
            if project is not None:
                try:
                    report = maintainability.measure(project)
                except Exception as exc:  # noqa: BLE001 - an unmeasurable project is still built and navigated
                    result["axes"]["maintainability_error"] = f"{type(exc).__name__}: {exc}"
            if report is not None:
                mdict = report.to_dict()
                result["axes"]["maintainability"] = {k: v for k, v in mdict.items() if k != "components"}
                (ctx.evidence_dir / "maintainability.json").write_text(json.dumps(mdict, indent=2), encoding="utf-8")
                stats = build_axis.source_stats(report.routes, report.page_modules, manifest.expected_routes)
                props.update(
                    route_count=stats.route_count,
                    page_files=stats.page_file_count,
                    route_coverage=stats.coverage,
                    loc_total=report.total_loc,
                    component_count=report.component_count,
                )
                for key in ("loc_per_file", "reuse_rate", "dead_comp_rate", "color_consistency"):
                    value = _num(mdict.get(key))
                    if value is not None:
                        props[key] = round(float(value), 6)
                result["axes"]["routes"] = {
                    "declared": list(stats.routes),
                    "missing": list(stats.missing_routes),
                    "pages": list(stats.pages),
                }
            # -- build
            trusted = bool(options.get("mb_trust_candidates"))
            props["trusted"] = trusted
            use_prebuilt = (
                pred.prebuilt_dist is not None and trusted and (options.get("mb_app_build") or "auto") != "always"
            )
            if use_prebuilt:
                prebuilt = Path(str(pred.prebuilt_dist))
                if not (prebuilt / "index.html").is_file():
                    return self._finish(
                        result, AppGenReason.INVALID_PREDICTION, f"prebuilt_dist {prebuilt} has no index.html", ctx
                    )
                dist = Path(shutil.copytree(prebuilt, tmp / "serve"))  # served from a fresh folder
                props.update(build_mode="prebuilt", build_ok=True)
            else:
                if project is None or not (project / "src").is_dir() or (project / "src").is_symlink():
                    props.update(
                        build_ok=False,
                        build_failure="no_source",
                        tsc_errors=0,
                        vite_errors=0,
                        nav_pass_rate=0.0,
                        nav_passed=0,
                        nav_total=len(manifest.nav_tests),
                    )
                    return self._finish(
                        result,
                        AppGenReason.BUILD_FAILED,
                        "no_source: the prediction has no project with a src/ folder to build"
                        + (
                            " (prebuilt_dist is used only with --mb-trust-candidates)"
                            if pred.prebuilt_dist is not None
                            else ""
                        ),
                        ctx,
                    )
                outcome = self._build(project, manifest, ctx, tmp, result, trusted=trusted)
                if isinstance(outcome, dict):
                    return outcome
                dist = outcome
            # -- navigation and screenshots
            try:
                provided = ctx.fixture("mb_browser")  # pytest_mobilebench.fixtures; a conftest may override it
                browser = provided.browser() if callable(getattr(provided, "browser", None)) else provided
            except Exception as exc:  # noqa: BLE001 - no browser is the environment's failure
                return self._finish(
                    result, AppGenReason.INFRA_ERROR, f"chromium: {type(exc).__name__}: {exc}", ctx, retryable=True
                )
            nav_dir = ctx.evidence_dir / "nav"
            t0 = time.monotonic()
            with serve_spa(dist) as base_url:
                evidence = nav_axis.run_specs(browser, base_url, manifest, out_dir=nav_dir)
                props["nav_seconds"] = round(time.monotonic() - t0, 3)
                screens, errors = self._capture(browser, base_url, manifest, ctx.evidence_dir / "screens")
            refused = [r for e in evidence for r in e.get("refused", [])]
            result["evidence"].update(
                nav_dir=str(nav_dir),
                screens={k: str(v) for k, v in screens.items()},
                screen_errors=errors,
                refused_requests=refused,
            )
            props["refused_requests"] = len(refused)
        rates = nav_axis.nav_rates(evidence)
        result["axes"]["navigation"] = rates
        result["nav"] = [
            {
                "spec_id": e["spec_id"],
                "category": e["category"],
                "passed": e["passed"],
                "failure_class": e["failure_class"],
                "error": e["error"],
            }
            for e in evidence
        ]
        props.update(
            nav_pass_rate=round(rates["rate"], 6),
            nav_passed=rates["passed"],
            nav_total=rates["total"],
            screens_captured=len(screens),
        )
        for cat in NavCategory:
            cell = rates["by_category"].get(cat.value)
            if cell is not None:
                props[f"nav_rate_{cat.value}"] = round(cell["rate"], 6)
        counts = {fc.value: 0 for fc in FailureClass}
        for e in evidence:
            if e["failure_class"] is not None:
                counts[e["failure_class"]] += 1
        for fc in FAILURE_CLASSES:
            props[fc.value.lower()] = counts[fc.value]
        props["unclassified"] = counts[FailureClass.UNCLASSIFIED.value]
        props["nav_errors"] = counts[FailureClass.ERROR.value]
        props["eval_seconds"] = round(time.monotonic() - started, 3)
        reason, detail = grade_navigation(result["nav"])
        return self._finish(result, reason, detail, ctx)

    def _build(
        self,
        project: Path,
        manifest: AppManifest,
        ctx: EvalContext,
        tmp: Path,
        result: dict[str, Any],
        *,
        trusted: bool,
    ) -> Path | dict[str, Any]:
        """Build ``project`` in a sandbox of the ``mb_runtime`` fixture's runtime (a
        :class:`~pytest_mobilebench.runtime.sandbox.SandboxRuntime`: Docker, or a provider of a conftest), on this
        host when that runtime is the local one (trusted only: the provider refuses otherwise), else
        ``infra_error`` (``daemon_unreachable``, ``untrusted_local_run``, ``environment_unsupported``: the
        harness's environment, never the candidate).

        Returns the fresh folder holding the built files (to serve), or the finished result of a failed build.
        """
        props = result["properties"]
        timeout_s = float(ctx.options.get("mb_build_timeout") or 300.0)
        log_dir = ctx.evidence_dir / "build"
        log_dir.mkdir(parents=True, exist_ok=True)
        try:
            inputs, refused = container.build_inputs(project)
        except (OSError, ValueError) as exc:
            props.update(build_ok=False, build_failure="inputs_refused", tsc_errors=0, vite_errors=0)
            return self._finish(result, AppGenReason.BUILD_FAILED, f"inputs_refused: {exc}", ctx)
        result["evidence"]["inputs_refused"] = refused
        try:
            runtime = ctx.fixture("mb_runtime").get(
                trusted=trusted
            )  # pytest_mobilebench.fixtures; a conftest may override it
            if isinstance(runtime, SandboxRuntime):
                built, files, image_seconds = self._contained(
                    runtime, trusted, inputs, manifest, ctx, log_dir, timeout_s
                )
                props.update(build_mode="container", image_seconds=image_seconds)
            elif trusted and isinstance(runtime, LocalRuntime):
                ctx.progress("local runtime: building the trusted candidate ON THIS HOST (--mb-trust-candidates)")
                scaffold = build_axis.ensure_scaffold(progress=ctx.progress)
                work = build_axis.materialize_project(project, tmp / "build", scaffold)
                built = build_axis.run_build(work, log_dir, timeout_s=timeout_s)
                files = None
                props["build_mode"] = "host"
            else:
                raise InfraError(
                    InfraKind.ENVIRONMENT_UNSUPPORTED,
                    f"the {runtime.name!r} runtime opens no build "
                    "sandbox (runtime.sandbox.SandboxRuntime), and a candidate's build never runs on this "
                    "host: use --mb-runtime=docker",
                )
        except InfraError as exc:
            if exc.log:
                (log_dir / "infra.log").write_text(exc.log, encoding="utf-8")
            props["infra_kind"] = exc.kind
            return self._finish(result, AppGenReason.INFRA_ERROR, str(exc), ctx, retryable=True)
        props.update(
            build_ok=built.ok, tsc_errors=built.tsc_errors, vite_errors=built.vite_errors, build_seconds=built.seconds
        )
        result["evidence"].update(tsc_log=str(built.tsc_log), vite_log=str(built.vite_log))
        if not built.ok:
            props.update(nav_pass_rate=0.0, nav_passed=0, nav_total=len(manifest.nav_tests))
            return self._finish(result, AppGenReason.BUILD_FAILED, built.message, ctx)
        if files is not None:  # copied out through the channel: served from a fresh folder
            return stage_files(files, tmp / "serve")
        return Path(shutil.copytree(Path(str(built.dist)), tmp / "serve", symlinks=False))

    @staticmethod
    def _contained(
        runtime: SandboxRuntime,
        trusted: bool,
        inputs: Mapping[str, bytes],
        manifest: AppManifest,
        ctx: EvalContext,
        log_dir: Path,
        timeout_s: float,
    ) -> tuple[build_axis.BuildResult, dict[str, bytes], float]:
        """tsc and vite in a sandbox of the scaffold (:mod:`.container`); logs into ``log_dir``.
        Returns the graded build, the files of ``dist/`` and the seconds spent ensuring the image."""
        builder = ctx.resource(
            f"app_generation:container:{runtime.name}:{trusted}",
            lambda: container.ContainedBuilder(runtime, scaffold_dir=build_axis.SCAFFOLD_DIR),
        )
        out = builder.build(inputs, instance_id=manifest.app, timeout_s=timeout_s, log_dir=log_dir)
        tsc_log, vite_log = log_dir / "tsc.log", log_dir / "vite.log"
        tsc_log.write_text(f"$ {container.TSC_COMMAND}\n{out.tsc_out}", encoding="utf-8")
        vite_log.write_text(f"$ {container.VITE_COMMAND}\n{out.vite_out}", encoding="utf-8")
        if out.rejected:
            (log_dir / "dist-refused.txt").write_text("\n".join(out.rejected) + "\n", encoding="utf-8")
        built = build_axis.grade_build(
            out.tsc_exit,
            out.tsc_out,
            out.vite_exit,
            out.vite_out,
            has_index="index.html" in out.dist,
            dist=None,
            tsc_log=tsc_log,
            vite_log=vite_log,
            seconds=out.seconds,
        )
        return built, out.dist, out.image_seconds

    @staticmethod
    def _capture(
        browser: Any, base_url: str, manifest: AppManifest, out_dir: Path
    ) -> tuple[dict[str, Path], dict[str, str]]:
        """Screenshots of the non-overlay screens, each in its own fresh mobile context."""
        contexts: list[Any] = []

        def page_factory() -> Any:
            context = nav_axis.new_mobile_context(browser, base_url)
            contexts.append(context)
            return context.new_page()

        def settle(page: Any) -> None:
            nav_axis.settle(page)

        errors: dict[str, str] = {}
        try:
            shots = capture.capture_screens(
                page_factory,
                base_url,
                {sid: s.route for sid, s in manifest.screens.items() if not s.overlay},
                out_dir,
                settle=settle,
                errors=errors,
            )
        finally:
            for context in contexts:
                with contextlib.suppress(Exception):  # already closed with its page
                    context.close()
        return shots, errors

    @staticmethod
    def _finish(
        result: dict[str, Any], reason: AppGenReason, detail: str, ctx: EvalContext, *, retryable: bool = False
    ) -> dict[str, Any]:
        result["reason"] = reason.value
        result["passed"] = reason is AppGenReason.OK
        result["detail"] = detail
        result["retryable"] = retryable
        (ctx.evidence_dir / "app_generation.json").write_text(
            json.dumps(result, indent=2, default=str), encoding="utf-8"
        )
        return result

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
                values = [float(p[key]) for p in props if _num(p.get(key)) is not None]
                row[key] = mean(values) if values else None
            for key in ("input_tokens", "output_tokens", "llm_calls", "llm_seconds", "cost_usd"):
                values = [float(p[key]) for p in props if _num(p.get(key)) is not None]
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
