"""The test plan record: how one instance's tests run and where their results land. Ground floor (the standard
library only): the framework modules make plans, the trust layer and the runtime read them without loading
any framework."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, final

__all__ = ["PlanError", "TestPlan"]


class PlanError(ValueError):
    """No test plan can be made (no runnable test file among the test patch's files, unknown framework)."""


@final
@dataclasses.dataclass(frozen=True)
class TestPlan:
    """How to run one instance's tests and where their results land.

    Attributes:
        command: exact shell command, run at the repository root (POSIX ``sh`` syntax).
        result_globs: repository-relative globs (``**`` allowed) of the result files to collect.
        parser: registered parser name (:mod:`pytest_mobilebench.parsers`): ``"junit"``, ``"flutter"``,
            ``"jest"``.
        modules: Gradle project paths targeted (android), else ``()``.
    """

    __test__ = False  # not a pytest test class, despite the name

    command: str
    result_globs: tuple[str, ...]
    parser: str
    modules: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (lists for tuples) for evidence files."""
        return {
            "command": self.command,
            "result_globs": list(self.result_globs),
            "parser": self.parser,
            "modules": list(self.modules),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestPlan:
        """Inverse of :meth:`to_dict`. ``KeyError`` when ``command`` or ``parser`` is missing."""
        return cls(
            command=str(data["command"]),
            result_globs=tuple(str(g) for g in data.get("result_globs", ())),
            parser=str(data["parser"]),
            modules=tuple(str(m) for m in data.get("modules", ())),
        )
