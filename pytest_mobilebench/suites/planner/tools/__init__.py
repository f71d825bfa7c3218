"""The tool declarations, one module per group of domains; importing this package registers them all."""

from pytest_mobilebench.suites.planner.tools import content, device, planner, services  # noqa: F401
