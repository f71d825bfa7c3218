"""Command line of pytest-mobilebench outside pytest: ``python -m pytest_mobilebench <command> ...``.

Commands:
    compare SUMMARY... [--json OUT] [--html OUT] [--irt]
                                      paired model comparison with the exact McNemar test and a paired
                                      bootstrap of the difference; --irt: difficulty and ability
                                      (:mod:`pytest_mobilebench.compare`); --html writes the run
                                      page's "Model comparison" section as a self-contained page
    mine REPO [--framework FW] [--since DATE] [--commits SHA,...] [--limit N] [--out DIR] [--no-validate] ...
                                      instances from a repository's first-parent history, validated with
                                      the gold patches (:mod:`pytest_mobilebench.mining`, docs/mining.md)
    dataset check FILE... [--run RUN_DIR] [--cutoff DATE] [--framework FW] [--repo [OWNER/NAME=]PATH]
                  [--verify [--strict] [--json OUT] [--threshold X] [--mutants N] [--seed S] ...]
                                      lint a manifest or release; exit 1 with one line per finding;
                                      --verify measures each instance's verifier leak
                                      (:mod:`pytest_mobilebench.mining.verify`)
    integrity RUN_DIR [--judge-url URL --judge-model M] [--json OUT]
                                      the live trajectories' integrity report per model and item;
                                      with a judge endpoint, its review of each flagged one
                                      (:mod:`pytest_mobilebench.agents.integrity_review`)
    export [PATH...] [-k EXPR] [-m MARKEXPR] [--dataset FILE] [--out FILE] [--images] [--save DIR]
           [--mb-registry HOST:PORT] [--mb-repo-url-template T]
                                      the task inputs of the selection as JSON lines for an agent
                                      outside the harness (:mod:`pytest_mobilebench.export`); with
                                      --images / --save / --mb-registry, their environment images too
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def compare_main(argv: Sequence[str]) -> int:
    """``compare SUMMARY... [--json OUT] [--html OUT] [--irt] [--resamples N] [--seed S]``: print the text table of
    :func:`pytest_mobilebench.compare.compare` (with ``--irt`` also :func:`pytest_mobilebench.report.irt.irt_text`
    of :func:`pytest_mobilebench.stats.irt.irt_from_outcomes`, under ``irt`` in the JSON); write the JSON / the
    HTML page (:func:`pytest_mobilebench.report.page.comparison_page`) when asked. Exit 2 on bad input (fewer
    than three models or no shared instance for ``--irt``, scipy missing)."""
    from pytest_mobilebench.compare import (
        CompareError,
        compare,
        load_outcomes,
        render_text,
    )
    from pytest_mobilebench.files import atomic_write_text
    from pytest_mobilebench.report.page import comparison_page

    parser = argparse.ArgumentParser(
        prog="python -m pytest_mobilebench compare",
        description="Paired comparison of the models in run summaries (exact McNemar "
        "test, paired bootstrap of the pass@1 difference; --irt: difficulty and ability).",
    )
    parser.add_argument("summaries", nargs="+", type=Path, help="run summary files (reports/<run_id>/summary.json)")
    parser.add_argument("--json", type=Path, default=None, help="also write the comparison as JSON here")
    parser.add_argument("--html", type=Path, default=None, help="also write a self-contained HTML page here")
    parser.add_argument(
        "--irt",
        action="store_true",
        help="fit one- and two-parameter item-response models "
        "(instance difficulty and discrimination, model ability; three or more models; scipy)",
    )
    parser.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    args = parser.parse_args(argv)
    try:
        outcomes = load_outcomes(args.summaries)
        report = compare(outcomes, resamples=max(1, args.resamples), seed=args.seed)
        if args.irt:
            from pytest_mobilebench.stats.irt import irt_from_outcomes

            report["irt"] = irt_from_outcomes(outcomes)
    except (CompareError, ValueError, RuntimeError) as exc:  # IrtError is a ValueError, IrtUnavailable a RuntimeError
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render_text(report))
    if args.irt:
        from pytest_mobilebench.report.irt import irt_text

        sys.stdout.write(irt_text(report["irt"]))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    if args.html:
        atomic_write_text(args.html, comparison_page(report, [str(p) for p in args.summaries]))
    return 0


#: the exit status of a ``mine`` that Ctrl-C interrupted (pytest's ``ExitCode.INTERRUPTED``)
INTERRUPTED = 2


#: the exit status of a ``mine`` that found no candidate (``--no-validate``) or validated none
NOTHING_KEPT = 1


def _environment_file(path: Path) -> dict[str, Any]:
    """The environment fields of ``mine --environment FILE`` (a YAML mapping, checked as a manifest's
    ``environment`` is).

    Raises:
        ValueError: unreadable file, not a mapping, or a bad field (the file and the field are named).
    """
    import pydantic
    import yaml

    from pytest_mobilebench.runtime.environment import Environment

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: an environment file is a mapping of environment fields, got {type(data).__name__}")
    try:
        Environment.from_mapping(data)
    except pydantic.ValidationError as exc:
        fields = "; ".join(f"environment.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{path}: {fields}") from exc
    return {str(key): value for key, value in data.items() if value is not None}


def mine_main(argv: Sequence[str]) -> int:
    """``mine REPO ...``: :func:`pytest_mobilebench.mining.pipeline.mine`; prints the report table. Exit 2 on bad
    input, and on Ctrl-C (after the table of what finished, as pytest's ``ExitCode.INTERRUPTED``); exit 1 with a
    message when nothing validated (or, under ``--no-validate``, no candidate was found)."""
    from pytest_mobilebench.mining.gitsource import MiningError
    from pytest_mobilebench.mining.pipeline import FORMATS, MineOptions, mine
    from pytest_mobilebench.mining.report import nothing_kept, render

    p = argparse.ArgumentParser(
        prog="python -m pytest_mobilebench mine",
        description="Mine issue-resolution instances from a repository's first-parent history.",
    )
    p.add_argument("repo", help="a local work tree or bare mirror, a git bundle, or a clone URL")
    p.add_argument("--repo-name", dest="name", help="owner/name (default: read off REPO: <owner>+<name>, or the URL)")
    p.add_argument("--ref", help="where the first-parent history starts (default HEAD, else main / master)")
    p.add_argument("--framework", help="android | flutter | react-native (default: inferred from root build files)")
    p.add_argument("--since", help="only commits after this date (git's --since: 2024-01-01, '2 years ago')")
    p.add_argument("--commits", default="", help="comma-separated commits to examine instead of the history")
    p.add_argument("--limit", type=int, help="stop after N candidates")
    p.add_argument("--out", type=Path, default=Path("mined"), help="output folder (default: mined)")
    p.add_argument("--no-validate", dest="validate", action="store_false", help="the static scan only")
    p.add_argument(
        "--validate-runs",
        dest="runs",
        type=int,
        default=2,
        help="validation repeats (flaky tests are those whose state differs), default 2",
    )
    p.add_argument("-n", "--workers", type=int, default=0, help="pytest-xdist workers of the validation run")
    p.add_argument(
        "--runtime", default="auto", choices=("auto", "docker", "local"), help="--mb-runtime of the validation"
    )
    p.add_argument(
        "--audit",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run --mb-audit on the kept instances (default; --no-audit skips it)",
    )
    p.add_argument("--issues", type=Path, help="a local issue export (JSON / JSON lines of {number, title, body})")
    p.add_argument(
        "--format",
        dest="formats",
        action="append",
        default=[],
        choices=FORMATS,
        help="also write the kept instances as JSON lines in this dialect (repeatable)",
    )
    p.add_argument("--max-files", type=int, default=50, help="reject fixes touching more non-test files (default 50)")
    p.add_argument(
        "--max-lines", type=int, default=2000, help="reject fixes changing more non-test lines (default 2000)"
    )
    p.add_argument(
        "--environment",
        dest="environment_file",
        type=Path,
        metavar="FILE",
        help="a YAML mapping of environment fields (install, install_env, registry_replacements, node ...) "
        "set on every candidate, so its validation runs with them",
    )
    args = vars(p.parse_args(argv))
    try:
        args["environment"] = _environment_file(args["environment_file"]) if args["environment_file"] else {}
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args["commits"] = tuple(c.strip() for c in args["commits"].split(",") if c.strip())
    args["formats"] = tuple(args["formats"])
    args["progress"] = True
    try:
        report = mine(MineOptions(**args))
    except MiningError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # during the scan: no traceback, as pytest ends on Ctrl-C
        print(
            "mine: interrupted (Ctrl-C) while scanning the history: nothing validated; re-run the same command",
            file=sys.stderr,
        )
        return INTERRUPTED
    sys.stdout.write(render(report))
    if report.get("interrupted"):
        return INTERRUPTED
    nothing = nothing_kept(report)
    if nothing:
        print(f"mine: {nothing}", file=sys.stderr)
        return NOTHING_KEPT
    return 0


def dataset_main(argv: Sequence[str]) -> int:
    """``dataset check FILE...``: :func:`pytest_mobilebench.mining.check.check`; exit 1 when anything is found."""
    from pytest_mobilebench.mining.check import CheckOptions, check, render

    p = argparse.ArgumentParser(prog="python -m pytest_mobilebench dataset", description="Dataset tools.")
    sub = p.add_subparsers(dest="verb", required=True)
    c = sub.add_parser("check", help="lint manifests or releases (the formats the harness reads)")
    c.add_argument("files", nargs="+", type=Path, help="manifest YAML files, folders of them, or JSON / JSONL releases")
    c.add_argument(
        "--run",
        dest="runs",
        type=Path,
        action="append",
        default=[],
        help="a run folder (reports/<run_id>): gold ids no run of it reported are findings (repeatable)",
    )
    c.add_argument("--cutoff", help="instances created before this date (YYYY-MM-DD) are findings (contamination)")
    c.add_argument("--framework", help="framework of release rows that name none (as --dataset-framework)")
    c.add_argument(
        "--repo",
        dest="repos",
        action="append",
        default=[],
        metavar="[OWNER/NAME=]PATH",
        help="a local copy (work tree, mirror, bundle) of a repository: commits it lacks are findings (repeatable)",
    )
    _verify_arguments(c)
    args = p.parse_args(argv)
    try:
        findings, checked = check(
            CheckOptions(tuple(args.files), tuple(args.runs), args.cutoff, args.framework, tuple(args.repos))
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(findings, checked))
    status = 1 if findings else 0
    if args.verify:
        status = max(status, _verify(args))
    return status


def _verify_arguments(c: argparse.ArgumentParser) -> None:
    """The ``--verify`` options of ``dataset check``."""
    import shlex

    c.add_argument(
        "--verify",
        action="store_true",
        help="run gold, empty and near-miss mutants of the gold patch "
        "through the audit (Docker or the local runtime) and report each instance's verifier leak",
    )
    c.add_argument("--strict", action="store_true", help="with --verify: exit 1 when an instance is weak or unmeasured")
    c.add_argument("--json", type=Path, default=None, help="with --verify: write the report as JSON here")
    c.add_argument("--threshold", type=float, default=0.25, help="a leak above this is weak (default 0.25)")
    c.add_argument(
        "--mutants", type=int, default=3, help="semantic mutants per gold hunk (default 3; 0: hunk drops only)"
    )
    c.add_argument("--seed", type=int, default=0, help="seed of the mutant draw (default 0)")
    c.add_argument(
        "--out", type=Path, default=Path("verify"), help="reports and result cache of the runs (default verify)"
    )
    c.add_argument("--runtime", default="auto", choices=("auto", "docker", "local"), help="--mb-runtime of the runs")
    c.add_argument("-n", "--workers", type=int, default=0, help="pytest-xdist workers of the runs")
    c.add_argument(
        "--pytest-args",
        type=shlex.split,
        default=[],
        help="more pytest arguments, one string (e.g. '-k counter --mb-cache-level=env')",
    )


def _verify(args: argparse.Namespace) -> int:
    """Run ``--verify``; print the report, write ``--json``; 1 under ``--strict`` when something failed."""
    from pytest_mobilebench.mining.verify import VerifyOptions, failed, render_verify, verify
    from pytest_mobilebench.files import atomic_write_text

    report = verify(VerifyOptions(tuple(args.files), args.out, args.threshold, args.mutants, args.seed, args.runtime,
                                  args.workers, tuple(args.pytest_args)))  # fmt: skip
    sys.stdout.write(render_verify(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    problems = failed(report)
    if args.strict and problems:
        print("verify --strict failed: " + "; ".join(problems), file=sys.stderr)
        return 1
    return 0


def integrity_main(argv: Sequence[str]) -> int:
    """``integrity RUN_DIR``: print the run's integrity report; ``--json`` writes it (default with a judge:
    ``RUN_DIR/integrity.json``). Exit 2 on bad input."""
    import os

    from pytest_mobilebench.agents.integrity_review import endpoint_asker, render, review_run
    from pytest_mobilebench.files import atomic_write_text

    p = argparse.ArgumentParser(
        prog="python -m pytest_mobilebench integrity", description="The integrity report of a run's live trajectories."
    )
    p.add_argument("run", type=Path, help="a run folder (reports/<run_id>) or its summary.json")
    p.add_argument(
        "--judge-url",
        help="an OpenAI-compatible endpoint that reviews each flagged trajectory "
        "(key: MOBILEBENCH_JUDGE_API_KEY); default: the counts only, offline",
    )
    p.add_argument("--judge-model", default="", help="the judge's model name")
    p.add_argument("--json", type=Path, default=None, help="write the report as JSON here")
    args = p.parse_args(argv)
    if args.judge_url and not args.judge_model:
        print("error: --judge-url needs --judge-model", file=sys.stderr)
        return 2
    ask = (
        endpoint_asker(args.judge_url, args.judge_model, os.environ.get("MOBILEBENCH_JUDGE_API_KEY", ""))
        if args.judge_url
        else None
    )
    try:
        report = review_run(args.run, ask)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(report))
    out = args.json or (args.run / "integrity.json" if ask is not None and args.run.is_dir() else None)
    if out:
        atomic_write_text(out, json.dumps(report, indent=2) + "\n")
    return 0


def export_main(argv: Sequence[str]) -> int:
    """``export ...``: write one JSON line per selected instance (to ``--out``, default stdout); build, save
    and push environment images on request. Exit 2 on bad input or a failed build, 5 when nothing is selected."""
    import os

    from pytest_mobilebench.export import ExportError, collect_records
    from pytest_mobilebench.files import atomic_write_text

    parser = argparse.ArgumentParser(
        prog="python -m pytest_mobilebench export",
        description="Task inputs of a selection, as JSON lines, for an external agent.",
    )
    parser.add_argument("paths", nargs="*", help="manifests or folders (as given to pytest)")
    parser.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    parser.add_argument("-m", dest="markexpr", default=None, help="pytest -m expression")
    parser.add_argument("--dataset", action="append", default=[], help="a benchmark release file (as pytest --dataset)")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON lines here (default: stdout)")
    parser.add_argument("--images", action="store_true", help="build (or reuse) each instance's environment image")
    parser.add_argument(
        "--save", type=Path, default=None, metavar="DIR", help="docker save each image to DIR/<tag>.tar"
    )
    parser.add_argument("--mb-registry", default=None, metavar="HOST:PORT", help="push each image to this registry")
    parser.add_argument(
        "--mb-repo-url-template",
        default=os.environ.get("MOBILEBENCH_REPO_URL_TEMPLATE") or "https://github.com/{owner}/{name}",
        help="clone URL template for records without repo_url",
    )
    args = parser.parse_args(argv)
    selection = [
        *args.paths,
        *(["-k", args.keyword] if args.keyword else []),
        *(["-m", args.markexpr] if args.markexpr else []),
        *(f"--dataset={d}" for d in args.dataset),
    ]
    try:
        records, invalid = collect_records(selection)
        lines, skipped = _export_lines(records, args)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in invalid + skipped:
        print(f"not exported: {problem}", file=sys.stderr)
    text = "".join(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n" for line in lines)
    if args.out:
        atomic_write_text(args.out, text)
        print(f"exported {len(lines)} instance(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0 if lines else 5


def _export_lines(records: Sequence, args: argparse.Namespace) -> tuple[list[dict], list[str]]:
    """The rows of ``records`` with their images when asked; the records not exported, in words."""
    from pytest_mobilebench.export import build_image, rows, save_image

    want_images = bool(args.images or args.save or args.mb_registry)
    client = None
    if want_images:
        from pytest_mobilebench.runtime.docker import connect

        client = connect(timeout_s=10)
    lines, skipped = [], []
    for record, row in rows(records, url_template=args.mb_repo_url_template):
        if row is None:
            skipped.append(f"{record.instance_id} ({record.suite}: not a repository task)")
            continue
        if want_images and record.suite == "issue_resolution":
            image = build_image(
                record, row, client=client, run_id="export", progress=lambda m: print(f"[export] {m}", file=sys.stderr)
            )
            row.update(environment_image=image.tag, environment_image_id=image.image_id)
            if args.save:
                print(f"[export] saved {save_image(client, image.tag, args.save)}", file=sys.stderr)
            if args.mb_registry:
                from pytest_mobilebench.runtime.hosts import HostImages

                HostImages(client, registry=args.mb_registry).added(image.tag)
                row["environment_image_remote"] = f"{args.mb_registry}/{image.tag}"
        lines.append(row)
    return lines, skipped


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a command; exit status 2 on an unknown command."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    commands = {
        "compare": compare_main,
        "mine": mine_main,
        "dataset": dataset_main,
        "export": export_main,
        "integrity": integrity_main,
    }
    if command in commands:
        return commands[command](rest)
    print(f"error: unknown command {command!r} (known: {', '.join(commands)})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
