"""The tool declarations, one module per group of domains; importing this package registers them all, in this
order (the catalog's order: :mod:`.planner` imports the app modules before its own tools)."""

from pytest_mobilebench.suites.planner.tools import content, device, settings  # noqa: F401  (isort: skip)
from pytest_mobilebench.suites.planner.tools import services, security  # noqa: F401  (isort: skip)
from pytest_mobilebench.suites.planner.tools import planner  # noqa: F401
