"""Command line of pytest-mobilebench outside pytest: ``python -m pytest_mobilebench <command> ...``.

Commands:
    compare SUMMARY... [--json OUT] [--html OUT]
                                      paired model comparison with the exact McNemar test
                                      (:mod:`pytest_mobilebench.compare`); --html writes the run
                                      page's "Model comparison" section as a self-contained page
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a command; exit status 2 on an unknown command."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "compare":
        from pytest_mobilebench.compare import main as compare_main

        return compare_main(rest)
    print(f"error: unknown command {command!r} (known: compare)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
