"""The steps of one app-generation evaluation (:meth:`.AppGenerationSuite.evaluate` runs them in order): the
efficiency and maintainability figures, the build (or a trusted prebuilt folder), the navigation specs and the
screenshots, and the navigation figures. Each writes its figures into the item's ``result`` (its ``axes``,
``evidence`` and ``properties``); a step that ends the item returns the finished result (:func:`finish`)."""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_mobilebench.records import EvalContext
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.local import LocalRuntime
from pytest_mobilebench.runtime.sandbox import SandboxRuntime
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.suites.app_generation import build as build_axis
from pytest_mobilebench.suites.app_generation import capture, container, efficiency, maintainability
from pytest_mobilebench.suites.app_generation import navigation as nav_axis
from pytest_mobilebench.suites.app_generation.failures import FAILURE_CLASSES, FailureClass
from pytest_mobilebench.suites.app_generation.manifest import AppManifest, AppPrediction, NavCategory
from pytest_mobilebench.suites.app_generation.reasons import AppGenReason
from pytest_mobilebench.suites.app_generation.serve import serve_spa, stage_files

__all__ = [
    "build",
    "capture_screens",
    "dist_of",
    "finish",
    "measure_efficiency",
    "measure_maintainability",
    "navigate",
    "number",
    "record_navigation",
]

_PRICE_CACHE: dict[str, dict[str, dict[str, float]]] = {}


def _price_table(path: str | None) -> dict[str, dict[str, float]]:
    key = path or str(efficiency.DEFAULT_PRICE_TABLE)
    if key not in _PRICE_CACHE:
        _PRICE_CACHE[key] = efficiency.load_price_table(key)
    return _PRICE_CACHE[key]


def number(value: Any) -> float | int | None:
    """``value`` when it is an int or a float (never a bool), else None."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def measure_efficiency(pred: AppPrediction, options: Mapping[str, Any], result: dict[str, Any]) -> None:
    """The efficiency axis (pure; independent of the build): tokens, calls, LLM seconds and list-price cost.

    Raises:
        efficiency.PriceTableError: the price table cannot be read (the harness's, never the candidate's).
    """
    props = result["properties"]
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
    result["axes"]["efficiency"] = eff
    props.update(
        input_tokens=eff["input_tokens"],
        output_tokens=eff["output_tokens"],
        llm_calls=eff["llm_calls"],
        llm_seconds=eff["llm_seconds"],
    )
    if eff["cost_usd"] is not None:
        props["cost_usd"] = eff["cost_usd"]


def measure_maintainability(
    project: Path | None, manifest: AppManifest, result: dict[str, Any], evidence: Path
) -> None:
    """The maintainability axis and the static route figures of ``project`` (none without a project; an
    unmeasurable project is still built and navigated: the error is kept as ``maintainability_error``)."""
    if project is None:
        return
    props = result["properties"]
    try:
        report = maintainability.measure(project)
    except Exception as exc:  # noqa: BLE001 - an unmeasurable project is still built and navigated
        result["axes"]["maintainability_error"] = f"{type(exc).__name__}: {exc}"
        return
    mdict = report.to_dict()
    result["axes"]["maintainability"] = {k: v for k, v in mdict.items() if k != "components"}
    (evidence / "maintainability.json").write_text(json.dumps(mdict, indent=2), encoding="utf-8")
    stats = build_axis.source_stats(report.routes, report.page_modules, manifest.expected_routes)
    props.update(
        route_count=stats.route_count,
        page_files=stats.page_file_count,
        route_coverage=stats.coverage,
        loc_total=report.total_loc,
        component_count=report.component_count,
    )
    for key in ("loc_per_file", "reuse_rate", "dead_comp_rate", "color_consistency"):
        value = number(mdict.get(key))
        if value is not None:
            props[key] = round(float(value), 6)
    result["axes"]["routes"] = {
        "declared": list(stats.routes),
        "missing": list(stats.missing_routes),
        "pages": list(stats.pages),
    }


def dist_of(
    pred: AppPrediction,
    project: Path | None,
    manifest: AppManifest,
    ctx: EvalContext,
    tmp: Path,
    result: dict[str, Any],
) -> Path | dict[str, Any]:
    """The folder to serve: a trusted ``prebuilt_dist`` as given (``--mb-trust-candidates``, ``mb_app_build`` not
    ``"always"``), else the project built (:func:`build`); the finished result when there is nothing to serve."""
    props = result["properties"]
    trusted = bool(ctx.options.get("mb_trust_candidates"))
    props["trusted"] = trusted
    if pred.prebuilt_dist is not None and trusted and (ctx.options.get("mb_app_build") or "auto") != "always":
        prebuilt = Path(str(pred.prebuilt_dist))
        if not (prebuilt / "index.html").is_file():
            return finish(result, AppGenReason.INVALID_PREDICTION, f"prebuilt_dist {prebuilt} has no index.html", ctx)
        props.update(build_mode="prebuilt", build_ok=True)
        return Path(shutil.copytree(prebuilt, tmp / "serve"))  # served from a fresh folder
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
        unused = " (prebuilt_dist is used only with --mb-trust-candidates)" if pred.prebuilt_dist is not None else ""
        detail = "no_source: the prediction has no project with a src/ folder to build" + unused
        return finish(result, AppGenReason.BUILD_FAILED, detail, ctx)
    return build(project, manifest, ctx, tmp, result, trusted=trusted)


def navigate(
    dist: Path, manifest: AppManifest, ctx: EvalContext, result: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Path]] | dict[str, Any]:
    """Every navigation spec and a screenshot of every screen, on ``dist`` served locally in the ``mb_browser``
    fixture's browser: ``(per-spec evidence, {screen id: png})``, or the finished ``infra_error`` result when no
    browser could be had (the environment's failure, retried)."""
    props = result["properties"]
    try:
        provided = ctx.fixture("mb_browser")  # pytest_mobilebench.fixtures; a conftest may override it
        browser = provided.browser() if callable(getattr(provided, "browser", None)) else provided
    except Exception as exc:  # noqa: BLE001 - no browser is the environment's failure
        return finish(result, AppGenReason.INFRA_ERROR, f"chromium: {type(exc).__name__}: {exc}", ctx, retryable=True)
    nav_dir = ctx.evidence_dir / "nav"
    t0 = time.monotonic()
    with serve_spa(dist) as base_url:
        evidence = nav_axis.run_specs(browser, base_url, manifest, out_dir=nav_dir)
        props["nav_seconds"] = round(time.monotonic() - t0, 3)
        screens, errors = capture_screens(browser, base_url, manifest, ctx.evidence_dir / "screens")
    refused = [r for e in evidence for r in e.get("refused", [])]
    result["evidence"].update(
        nav_dir=str(nav_dir),
        screens={k: str(v) for k, v in screens.items()},
        screen_errors=errors,
        refused_requests=refused,
    )
    props["refused_requests"] = len(refused)
    return evidence, screens


def record_navigation(
    result: dict[str, Any], evidence: Sequence[Mapping[str, Any]], screens: Mapping[str, Path]
) -> None:
    """The navigation axis from the per-spec ``evidence``: NavPassRate overall and per category, the per-spec
    records (``result["nav"]``), the C1-C4 failure counts and the screens captured."""
    props = result["properties"]
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


def build(
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
        return finish(result, AppGenReason.BUILD_FAILED, f"inputs_refused: {exc}", ctx)
    result["evidence"]["inputs_refused"] = refused
    try:
        runtime = ctx.fixture("mb_runtime").get(
            trusted=trusted
        )  # pytest_mobilebench.fixtures; a conftest may override it
        if isinstance(runtime, SandboxRuntime):
            built, files, image_seconds = contained(runtime, trusted, inputs, manifest, ctx, log_dir, timeout_s)
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
        return finish(result, AppGenReason.INFRA_ERROR, str(exc), ctx, retryable=True)
    props.update(
        build_ok=built.ok, tsc_errors=built.tsc_errors, vite_errors=built.vite_errors, build_seconds=built.seconds
    )
    result["evidence"].update(tsc_log=str(built.tsc_log), vite_log=str(built.vite_log))
    if not built.ok:
        props.update(nav_pass_rate=0.0, nav_passed=0, nav_total=len(manifest.nav_tests))
        return finish(result, AppGenReason.BUILD_FAILED, built.message, ctx)
    if files is not None:  # copied out through the channel: served from a fresh folder
        return stage_files(files, tmp / "serve")
    return Path(shutil.copytree(Path(str(built.dist)), tmp / "serve", symlinks=False))


def contained(
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


def capture_screens(
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


def finish(
    result: dict[str, Any], reason: AppGenReason, detail: str, ctx: EvalContext, *, retryable: bool = False
) -> dict[str, Any]:
    """``result`` with its verdict (``reason``, ``passed``, ``detail``, ``retryable``), written as
    ``app_generation.json`` in the evidence folder."""
    result["reason"] = reason.value
    result["passed"] = reason is AppGenReason.OK
    result["detail"] = detail
    result["retryable"] = retryable
    (ctx.evidence_dir / "app_generation.json").write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return result
