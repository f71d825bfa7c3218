"""The planner suite: mobile planner agents in a stateful sandbox (MobilePA-Bench, seed 004; SPEC §4).

One pytest item is one task (``cases/planner/*.yaml``) for one model. The candidate is a trajectory of tool
calls: recorded in the prediction (``trajectory``, or ``trajectories`` for repeated runs), the task's own gold
(``--predictions=gold``), a ``Finish``-only one (``--predictions=empty``), or produced live by a model endpoint
(``--predictions=live`` with ``--mb-agent-base-url`` / ``--mb-agent-model``: the items carry the endpoint's model
name; the live run's calls are recorded, then graded exactly like a recorded prediction). A user's program
(``--mb-agent-command``) is refused for this suite (:meth:`PlannerSuite.live_model`).
Every trajectory is replayed on a fresh sandbox and graded by :func:`.grading.grade`; nothing the candidate
reports about itself (a ``Finish`` claim, its own step results, its token counts for grading) is trusted.

Trials (``--mb-trials K``, alias ``--mb-repeat``): one item still stands for one task; it holds K runs (K live
episodes, each on a fresh sandbox, or the prediction's ``trajectories``: a list of K recorded trajectories, one per
trial). Without the option a recorded prediction brings as many trials as it holds (1 for ``trajectory``); with it
the count must be K. The item passes when every run scores 1.0 (pass^k); its ``score`` property is the mean over
runs (the pass@1 estimate); the summary's ``trials`` table is :func:`pytest_mobilebench.stats.trials.trial_summary`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from pytest_mobilebench.agents.options import live_model
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.suites.base import SuiteBase
from pytest_mobilebench.records import EvalContext, LoadedRecord, ManifestError
from pytest_mobilebench.suites.declared import planner as surface
from pytest_mobilebench.suites.planner.declare import DOMAINS
from pytest_mobilebench.suites.planner.episode import (
    Call,
    TrajectoryError,
    parse_trajectory,
)
from pytest_mobilebench.suites.planner.grading import episode_delta, grade
from pytest_mobilebench.suites.planner.report import summarize_results
from pytest_mobilebench.suites.planner.tasks import load_tasks
from pytest_mobilebench.suites.planner.model import BUCKETS, DIMENSIONS, Task, replay

__all__ = ["SUITE", "PlannerReason", "PlannerSuite", "grade_runs"]

SUITE_NAME: Final = surface.SURFACE.name


@enum.unique
class PlannerReason(str, enum.Enum):
    """One per item: ``passed`` (every run scored 1.0), ``failed``, ``missing_prediction``,
    ``invalid_prediction`` (the trajectory is not a list of tool calls, or the wrong number of runs),
    ``infra_error`` (the live endpoint failed: never the model's score, retried on the next run)."""

    PASSED = "passed"
    FAILED = "failed"
    MISSING_PREDICTION = "missing_prediction"
    INVALID_PREDICTION = "invalid_prediction"
    INFRA_ERROR = "infra_error"

    @property
    def is_infra(self) -> bool:
        return self is PlannerReason.INFRA_ERROR


def _result(reason: PlannerReason, detail: str, **extra: Any) -> dict[str, Any]:
    props = extra.pop("properties", {})
    return {
        "reason": reason.value,
        "passed": reason is PlannerReason.PASSED,
        "retryable": reason.is_infra,
        "detail": detail,
        "properties": {"reason": reason.value, **props},
        **extra,
    }


def grade_runs(task: Task, runs: Sequence[Sequence[Call]], evidence: Path | None = None) -> list[dict[str, Any]]:
    """Replay and grade each run's calls on a fresh sandbox; with ``evidence``, write per run the steps (what
    the agent saw), the operation log and the state delta. The one grading path of live, offline and regrade."""
    graded = []
    for k, calls in enumerate(runs):
        episode = replay(task, list(calls))
        result = grade(task, episode)
        graded.append(result)
        if evidence is not None:
            folder = evidence / f"run-{k + 1}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "steps.json").write_text(json.dumps([s.as_dict() for s in episode.steps], indent=1, default=str))
            (folder / "op_log.json").write_text(json.dumps(episode.sandbox.op_log(), indent=1, default=str))
            (folder / "delta.json").write_text(json.dumps(episode_delta(task, episode), indent=1, default=str))
            (folder / "grade.json").write_text(json.dumps(result, indent=1))
    return graded


def _meta(task: Task, graded: list[dict[str, Any]], usage: Mapping[str, int]) -> dict[str, Any]:
    """The suite fields of a result: what the run-level tables group by, and every run's grade."""
    return {
        "dimension": task.dimension,
        "bucket": task.bucket,
        "domain": task.domain,
        "recovery_task": any("expect_error" in s for s in task.gold),
        "usage": dict(usage),
        "runs": graded,
    }


def _reported_usage(raw: Any) -> dict[str, int]:
    """The prediction's self-reported token counts (reported, never graded); anything but ints is dropped."""
    if not isinstance(raw, Mapping):
        return {}
    return {
        k: v
        for k, v in raw.items()
        if k in ("input_tokens", "output_tokens") and isinstance(v, int) and not isinstance(v, bool) and v >= 0
    }


def _calls_json(calls: Sequence[Call]) -> list[dict[str, Any]]:
    return [{"tool": c.tool, "arguments": c.arguments} for c in calls]


class PlannerSuite(SuiteBase):
    """The ``planner`` suite (implements :class:`pytest_mobilebench.suites.base.Suite`)."""

    name: Final = SUITE_NAME
    reasons = PlannerReason
    options = surface.OPTIONS
    markers = MappingProxyType(
        {
            **surface.MARKERS,
            **{d: f"planner capability dimension {d}" for d in DIMENSIONS},
            **{b: f"planner verification bucket {b}" for b in BUCKETS},
            **{f"planner_{d}": f"planner tasks of the {d} domain" for d in DOMAINS},
        }
    )
    columns = surface.COLUMNS
    plots_module = surface.SURFACE.plots
    fixtures = surface.FIXTURES
    fixture_module = surface.SURFACE.fixture_module

    def load(self, path: Path, document: Any) -> Sequence[LoadedRecord | ManifestError]:
        """Every task of a manifest as a record (markers: suite, dimension, bucket, ``planner_<domain>``)."""
        data = document.data if hasattr(document, "data") else document
        line_of = getattr(document, "line_of", None)
        out: list[LoadedRecord | ManifestError] = []
        for i, entry in enumerate(load_tasks(path, data, line_of)):
            if isinstance(entry, ManifestError):
                out.append(entry)
                continue
            line = line_of("tasks", i) if line_of else None
            out.append(
                LoadedRecord(
                    SUITE_NAME,
                    entry.id,
                    path,
                    line,
                    entry,
                    f"{SUITE_NAME}:{entry.domain}",
                    (SUITE_NAME, entry.dimension, entry.bucket, f"planner_{entry.domain}"),
                )
            )
        return out

    def cache_material(self, record: LoadedRecord, prediction: Prediction | None, options: Mapping[str, Any]) -> Any:
        """Nothing beyond the task record, prediction and keyed options (replay is deterministic)."""
        return None

    def live_model(self, options: Mapping[str, Any]) -> str:
        """``--mb-agent-model``: the model ``--predictions=live`` drives at ``--mb-agent-base-url``.

        A user's program (``--mb-agent-command``) is refused, never ignored: the planner's candidate is a
        trajectory of tool calls the built-in loop makes on the in-process mobile sandbox (:mod:`.agent`); a
        program in a shell has no channel to those tools, and nothing of a work tree it could edit is graded.

        Raises:
            ValueError: ``--mb-agent-command`` given (the message names it and the suite), either option is
                missing (the message names both flags and environment variables), or another agent option is
                unusable (:func:`pytest_mobilebench.agents.options.live_model`).
        """
        if options.get("mb_agent_command"):
            raise ValueError(
                "--mb-agent-command: the planner suite runs only the built-in agent live (its candidate "
                "is the tool calls it makes on the planner's mobile sandbox, which a program in a shell "
                "cannot reach); give --mb-agent-base-url and --mb-agent-model without it"
            )
        return live_model(options)

    # ------------------------------------------------------------------------------------------ evaluate

    def _offline_runs(self, task: Task, prediction: Prediction, trials: int | None) -> list[list[Call]]:
        if prediction.kind is PredictionKind.GOLD:
            return [task.gold_calls] * (trials or 1)
        if prediction.kind is PredictionKind.EMPTY:
            return [[Call("Finish", {})]] * (trials or 1)
        fields = prediction.fields
        if "trajectories" in fields:
            raw = fields["trajectories"]
            if not isinstance(raw, list) or not raw or (trials is not None and len(raw) != trials):
                want = f"{trials} trials (--mb-trials {trials})" if trials else "at least one trial"
                raise TrajectoryError(f"'trajectories' must be a list of {want}, one trajectory per trial")
            return [parse_trajectory(r, f"trajectories[{k}]") for k, r in enumerate(raw)]
        if "trajectory" not in fields:
            raise TrajectoryError("the prediction has no 'trajectory'")
        if trials not in (None, 1):
            raise TrajectoryError(f"--mb-trials {trials} needs 'trajectories' with {trials} trials")
        return [parse_trajectory(fields["trajectory"])]

    def _live_runs(
        self, task: Task, agent: Any, trials: int, ctx: EvalContext
    ) -> tuple[list[list[Call]], dict[str, int]]:
        from pytest_mobilebench.suites.planner.agent import run_live

        runs, usage = [], {"input_tokens": 0, "output_tokens": 0, "requests": 0}
        for k in range(trials):  # run_live starts each trial on a fresh sandbox (tasks.new_episode)
            ctx.progress(f"{task.id}: planner live run {k + 1}/{trials} with {agent.model}")
            calls, used, transcript, _ = run_live(task, agent)
            runs.append(calls)
            usage = {key: usage[key] + used[key] for key in usage}
            (ctx.evidence_dir / f"transcript-{k + 1}.json").write_text(json.dumps(transcript, indent=1, default=str))
        return runs, usage

    def evaluate(self, record: LoadedRecord, prediction: Prediction | None, ctx: EvalContext) -> dict[str, Any]:
        """Replay (or run live, then replay) and grade; see the module docstring."""
        from pytest_mobilebench.suites.planner.agent import AgentInfraError

        task: Task = record.record
        trials = ctx.options.get("mb_trials")
        live = prediction is not None and prediction.is_live()
        agent = ctx.fixture("planner_agent") if live else None
        if live and agent is None:  # a conftest's planner_agent gave no endpoint
            return _result(
                PlannerReason.INFRA_ERROR,
                "--predictions=live but the planner_agent fixture gave no endpoint (--mb-agent-base-url)",
                infra_kind=InfraKind.AGENT_NOT_CONFIGURED.value,
                properties={"infra_error": InfraKind.AGENT_NOT_CONFIGURED.value},
            )
        usage: dict[str, int] = {}
        try:
            if live:
                runs, usage = self._live_runs(task, agent, int(trials or 1), ctx)
            elif prediction is None:
                return _result(
                    PlannerReason.MISSING_PREDICTION,
                    "no trajectory for this task and model",
                    planner=_meta(task, [], {}),
                )
            else:
                runs = self._offline_runs(task, prediction, trials)
                usage = _reported_usage(prediction.get("usage"))
        except AgentInfraError as exc:
            return _result(
                PlannerReason.INFRA_ERROR, str(exc), infra_kind=exc.kind, properties={"infra_error": exc.kind}
            )
        except TrajectoryError as exc:
            return _result(PlannerReason.INVALID_PREDICTION, str(exc), planner=_meta(task, [], {}))
        record_doc = {
            "mode": "live" if live else "offline",
            "runs": [_calls_json(r) for r in runs],
            "usage": usage,
            "agent_model": agent.model if live else None,
        }
        (ctx.evidence_dir / "trajectory.json").write_text(json.dumps(record_doc, indent=1, default=str))
        return self._verdict(
            task, grade_runs(task, runs, ctx.evidence_dir), usage, record_doc["mode"], record_doc["agent_model"]
        )

    def _verdict(
        self,
        task: Task,
        graded: list[dict[str, Any]],
        usage: Mapping[str, int],
        mode: str,
        agent_model: str | None = None,
    ) -> dict[str, Any]:
        first = graded[0]
        all_pass = all(g["score"] == 1.0 for g in graded)
        props = {
            "score": round(sum(g["score"] for g in graded) / len(graded), 6),
            "pass_k": all_pass,
            "runs": len(graded),
            "dimension": task.dimension,
            "bucket": task.bucket,
            "domain": task.domain,
            "mode": mode,
            "primary": first["primary"],
            "state_match": first["state_match"],
            "steps": first["steps"],
            "errors": f"{first['errors_met']}/{first['errors_recovered']}",
            "errors_met": first["errors_met"],
            "errors_recovered": first["errors_recovered"],
            "memory_gate": "n/a" if first["gates"]["memory"] is None else first["gates"]["memory"],
            "skill_gate": "n/a" if first["gates"]["skill"] is None else first["gates"]["skill"],
            "minefield": bool(first["minefields"]),
            "collateral": len(first["collateral"]),
            "extra_skill_loads": len(first["extra_skill_loads"]),
            "input_tokens": int(usage.get("input_tokens", 0)),
            "output_tokens": int(usage.get("output_tokens", 0)),
            **({"agent_model": agent_model} if agent_model else {}),
        }
        reason = PlannerReason.PASSED if all_pass else PlannerReason.FAILED
        detail = " | ".join(f"run {k + 1}: score {g['score']}: {g['detail']}" for k, g in enumerate(graded))
        runs = {"trial_outcomes": [g["score"] == 1.0 for g in graded]} if len(graded) > 1 else {}  # compare's trials
        return _result(
            reason, detail, properties=props, planner={**_meta(task, graded, usage), "model": agent_model}, **runs
        )

    def regrade(self, record: LoadedRecord, evidence_dir: Path) -> dict[str, Any]:
        """Grade again from ``trajectory.json`` in an evidence folder, through :func:`grade_runs`."""
        doc = json.loads((Path(evidence_dir) / "trajectory.json").read_text())
        runs = [parse_trajectory(r, f"runs[{k}]") for k, r in enumerate(doc["runs"])]
        return self._verdict(
            record.record, grade_runs(record.record, runs), doc.get("usage") or {}, doc["mode"], doc.get("agent_model")
        )

    def summarize(
        self, results: Sequence[Mapping[str, Any]], *, options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Per model: per-dimension success (Wilson 95%), Overall, per domain / bucket, errors, tokens, pass^k."""
        from pytest_mobilebench.report.trials import bootstrap_options

        return summarize_results(results, bootstrap_options(options))


SUITE: Final = PlannerSuite()
