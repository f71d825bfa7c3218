"""Command line of pytest-mobilebench outside pytest: ``python -m pytest_mobilebench <command> ...``.

Commands:
    compare SUMMARY... [--json OUT] [--html OUT]
                                      paired model comparison with the exact McNemar test
                                      (:mod:`pytest_mobilebench.compare`); --html writes the run
                                      page's "Model comparison" section as a self-contained page
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


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a command; exit status 2 on an unknown command."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "compare":
        return compare_main(rest)
    print(f"error: unknown command {command!r} (known: compare)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
