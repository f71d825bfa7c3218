"""Command line of pytest-mobilebench outside pytest: ``python -m pytest_mobilebench <command> ...``.

Commands:
    compare SUMMARY... [--json OUT] [--html OUT]
                                      paired model comparison with the exact McNemar test
                                      (:mod:`pytest_mobilebench.compare`); --html writes the run
                                      page's "Model comparison" section as a self-contained page
    mine REPO [--framework FW] [--since DATE] [--commits SHA,...] [--limit N] [--out DIR] [--no-validate] ...
                                      instances from a repository's first-parent history, validated with
                                      the gold patches (:mod:`pytest_mobilebench.mining`, docs/mining.md)
    dataset check FILE... [--run RUN_DIR] [--cutoff DATE] [--framework FW] [--repo [OWNER/NAME=]PATH]
                                      lint a manifest or release; exit 1 with one line per finding
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


def compare_main(argv: Sequence[str]) -> int:
    """``compare SUMMARY... [--json OUT] [--html OUT]``: print the text table of
    :func:`pytest_mobilebench.compare.compare`; write the JSON / the HTML page
    (:func:`pytest_mobilebench.report.page.comparison_page`) when asked. Exit 2 on bad input."""
    from pytest_mobilebench.compare import (
        CompareError,
        compare,
        load_outcomes,
        render_text,
    )
    from pytest_mobilebench.report.files import atomic_write_text
    from pytest_mobilebench.report.page import comparison_page

    parser = argparse.ArgumentParser(prog="python -m pytest_mobilebench compare",
                                     description="Paired comparison of the models in run summaries (exact McNemar test).")
    parser.add_argument("summaries", nargs="+", type=Path, help="run summary files (reports/<run_id>/summary.json)")
    parser.add_argument("--json", type=Path, default=None, help="also write the comparison as JSON here")
    parser.add_argument("--html", type=Path, default=None, help="also write a self-contained HTML page here")
    args = parser.parse_args(argv)
    try:
        report = compare(load_outcomes(args.summaries))
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render_text(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    if args.html:
        atomic_write_text(args.html, comparison_page(report, [str(p) for p in args.summaries]))
    return 0


#: the exit status of a ``mine`` that Ctrl-C interrupted (pytest's ``ExitCode.INTERRUPTED``)
INTERRUPTED = 2


#: the exit status of a ``mine`` that found no candidate (``--no-validate``) or validated none
NOTHING_KEPT = 1


def mine_main(argv: Sequence[str]) -> int:
    """``mine REPO ...``: :func:`pytest_mobilebench.mining.pipeline.mine`; prints the report table. Exit 2 on bad
    input, and on Ctrl-C (after the table of what finished, as pytest's ``ExitCode.INTERRUPTED``); exit 1 with a
    message when nothing validated (or, under ``--no-validate``, no candidate was found)."""
    from pytest_mobilebench.mining.gitsource import MiningError
    from pytest_mobilebench.mining.pipeline import FORMATS, MineOptions, mine
    from pytest_mobilebench.mining.report import nothing_kept, render

    p = argparse.ArgumentParser(prog="python -m pytest_mobilebench mine",
                                description="Mine issue-resolution instances from a repository's first-parent history.")
    p.add_argument("repo", help="a local work tree or bare mirror, a git bundle, or a clone URL")
    p.add_argument("--repo-name", dest="name", help="owner/name (default: read off REPO: <owner>+<name>, or the URL)")
    p.add_argument("--ref", help="where the first-parent history starts (default HEAD, else main / master)")
    p.add_argument("--framework", help="android | flutter | react-native (default: inferred from root build files)")
    p.add_argument("--since", help="only commits after this date (git's --since: 2024-01-01, '2 years ago')")
    p.add_argument("--commits", default="", help="comma-separated commits to examine instead of the history")
    p.add_argument("--limit", type=int, help="stop after N candidates")
    p.add_argument("--out", type=Path, default=Path("mined"), help="output folder (default: mined)")
    p.add_argument("--no-validate", dest="validate", action="store_false", help="the static scan only")
    p.add_argument("--validate-runs", dest="runs", type=int, default=2, help="validation repeats (flaky tests are those whose state differs), default 2")
    p.add_argument("-n", "--workers", type=int, default=0, help="pytest-xdist workers of the validation run")
    p.add_argument("--runtime", default="auto", choices=("auto", "docker", "local"), help="--mb-runtime of the validation")
    p.add_argument("--audit", action=argparse.BooleanOptionalAction, default=True,
                   help="run --mb-audit on the kept instances (default; --no-audit skips it)")
    p.add_argument("--issues", type=Path, help="a local issue export (JSON / JSON lines of {number, title, body})")
    p.add_argument("--format", dest="formats", action="append", default=[], choices=FORMATS,
                   help="also write the kept instances as JSON lines in this dialect (repeatable)")
    p.add_argument("--max-files", type=int, default=50, help="reject fixes touching more non-test files (default 50)")
    p.add_argument("--max-lines", type=int, default=2000, help="reject fixes changing more non-test lines (default 2000)")
    args = vars(p.parse_args(argv))
    args["commits"] = tuple(c.strip() for c in args["commits"].split(",") if c.strip())
    args["formats"] = tuple(args["formats"])
    args["progress"] = True
    try:
        report = mine(MineOptions(**args))
    except MiningError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # during the scan: no traceback, as pytest ends on Ctrl-C
        print("mine: interrupted (Ctrl-C) while scanning the history: nothing validated; re-run the same command",
              file=sys.stderr)
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
    c.add_argument("--run", dest="runs", type=Path, action="append", default=[],
                   help="a run folder (reports/<run_id>): gold ids no run of it reported are findings (repeatable)")
    c.add_argument("--cutoff", help="instances created before this date (YYYY-MM-DD) are findings (contamination)")
    c.add_argument("--framework", help="framework of release rows that name none (as --dataset-framework)")
    c.add_argument("--repo", dest="repos", action="append", default=[], metavar="[OWNER/NAME=]PATH",
                   help="a local copy (work tree, mirror, bundle) of a repository: commits it lacks are findings (repeatable)")
    args = p.parse_args(argv)
    try:
        findings, checked = check(CheckOptions(tuple(args.files), tuple(args.runs), args.cutoff, args.framework, tuple(args.repos)))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(findings, checked))
    return 1 if findings else 0


def export_main(argv: Sequence[str]) -> int:
    """``export ...``: write one JSON line per selected instance (to ``--out``, default stdout); build, save
    and push environment images on request. Exit 2 on bad input or a failed build, 5 when nothing is selected."""
    import os

    from pytest_mobilebench.export import ExportError, collect_records
    from pytest_mobilebench.report.files import atomic_write_text

    parser = argparse.ArgumentParser(prog="python -m pytest_mobilebench export",
                                     description="Task inputs of a selection, as JSON lines, for an external agent.")
    parser.add_argument("paths", nargs="*", help="manifests or folders (as given to pytest)")
    parser.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    parser.add_argument("-m", dest="markexpr", default=None, help="pytest -m expression")
    parser.add_argument("--dataset", action="append", default=[], help="a benchmark release file (as pytest --dataset)")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON lines here (default: stdout)")
    parser.add_argument("--images", action="store_true", help="build (or reuse) each instance's environment image")
    parser.add_argument("--save", type=Path, default=None, metavar="DIR", help="docker save each image to DIR/<tag>.tar")
    parser.add_argument("--mb-registry", default=None, metavar="HOST:PORT", help="push each image to this registry")
    parser.add_argument("--mb-repo-url-template", default=os.environ.get("MOBILEBENCH_REPO_URL_TEMPLATE") or
                        "https://github.com/{owner}/{name}", help="clone URL template for records without repo_url")
    args = parser.parse_args(argv)
    selection = [*args.paths, *(["-k", args.keyword] if args.keyword else []), *(["-m", args.markexpr] if args.markexpr else []),
                 *(f"--dataset={d}" for d in args.dataset)]
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
            image = build_image(record, row, client=client, run_id="export",
                                progress=lambda m: print(f"[export] {m}", file=sys.stderr))
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
    commands = {"compare": compare_main, "mine": mine_main, "dataset": dataset_main, "export": export_main}
    if command in commands:
        return commands[command](rest)
    print(f"error: unknown command {command!r} (known: {', '.join(commands)})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
