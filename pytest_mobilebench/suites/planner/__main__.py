"""``python -m pytest_mobilebench.suites.planner [PATH]``: write the generated tool catalog (docs/planner-tools.md)."""

import sys

from pytest_mobilebench.suites.planner.catalog import main

sys.exit(main(sys.argv[1:]))
