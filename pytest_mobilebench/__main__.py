"""Command line of pytest-mobilebench outside pytest: ``python -m pytest_mobilebench <command> ...``.

Commands:
    compare SUMMARY... [--json OUT] [--html OUT]
                                      paired model comparison with the exact McNemar test
                                      (:mod:`pytest_mobilebench.compare`); --html writes the run
                                      page's "Model comparison" section as a self-contained page
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
    from pytest_mobilebench.compare import CompareError, compare, load_outcomes, render_text
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
    if command == "compare":
        return compare_main(rest)
    if command == "export":
        return export_main(rest)
    print(f"error: unknown command {command!r} (known: compare, export)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
