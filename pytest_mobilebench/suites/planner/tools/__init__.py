"""The tool declarations, one module per group of domains. :data:`MODULES` lists them: the catalog makes the
tools of exactly these (:func:`pytest_mobilebench.suites.planner.catalog.catalog`)."""

from typing import Final

from pytest_mobilebench.suites.planner.tools import content, device, planner, security, services, settings

__all__ = ["MODULES"]

#: every module of tool declarations, in catalog order
MODULES: Final = (content, device, settings, services, security, planner)
