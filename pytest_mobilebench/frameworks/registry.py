"""The framework registry: one typed object per framework, checked when it is registered.

Every piece of framework knowledge the harness uses lives behind :class:`Framework`: the runner's own
test-discovery rule, test planning from file contents, result locations and parser, the production-build
check, the runner-configuration policy (watched files), the runner's tools and entry points a candidate
may not touch, recipe inference from the typed ``environment``, and the pytest markers. Patch splitting,
the policy, planning, recipes and the manifest's ``framework`` field all look a framework up here, so a
new platform (a device framework) is one :func:`register` call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pytest_mobilebench.runtime.environment import Environment
from pytest_mobilebench.plan import PlanError, TestPlan

if TYPE_CHECKING:
    from pytest_mobilebench.patch import FileChange
    from pytest_mobilebench.frameworks.recipe import EnvRecipe

__all__ = ["Files", "Framework", "FrameworkError", "get", "names", "register", "unregister"]

#: Repository-relative POSIX path -> file bytes: what planning and the policy read.
Files = Mapping[str, bytes]


class FrameworkError(ValueError):
    """An unknown framework name, or an object that does not implement :class:`Framework`."""


@runtime_checkable
class Framework(Protocol):
    """What the harness needs to know about one framework.

    Attributes:
        name: the manifest spelling (``"android"``, ``"flutter"``, ``"react-native"``).
        parser: the registered parser of its results (:mod:`pytest_mobilebench.parsers`).
        markers: pytest markers every instance of the framework gets.
        planning_files: globs (``**`` allowed) of the files :meth:`plan` reads.
    """

    name: str
    parser: str
    markers: tuple[str, ...]
    planning_files: tuple[str, ...]

    def config_paths(self, files: Files) -> tuple[str, ...]:
        """Globs of the files the test rule and the policy read, given those read so far (a pointer in
        ``package.json`` names one more). Callers read until nothing new is named."""

    def test_rule(self, files: Files) -> Callable[[str], bool]:
        """The runner's test-discovery rule under the configuration in ``files`` (see :meth:`config_paths`)."""

    def plan(
        self,
        files: Files,
        test_files: Sequence[str],
        *,
        test_command: str | None = None,
        test_targets: Sequence[str] = (),
        test_results: Sequence[str] = (),
        environment: Environment = Environment(),
    ) -> TestPlan:
        """The test plan from the contents of :attr:`planning_files`. Raises :class:`PlanError`."""

    def production_built(self, output: str, plan: TestPlan) -> bool:
        """False only when the output shows a production-code build failure."""

    def runner_config(self, change: FileChange, before: Files, after: Files, plan_command: str) -> list[str]:
        """Findings (one sentence each) of ``change`` altering how the tests run or report."""

    def tool_path(self, path: str) -> str | None:
        """Why ``path`` belongs to the runner's tools or entry points (never the candidate's), or None."""

    def infer_recipe(self, repo_dir: Path, overrides: Mapping[str, Any]) -> EnvRecipe:
        """The environment recipe of a checkout at its base commit; ``overrides`` replace inferred values
        (:func:`pytest_mobilebench.runtime.environment.recipe_overrides` of the typed environment).
        The recipe also declares what the docker runtime must know of its images, so that the runtime names
        no framework: ``context_packages`` (npm tarballs packed on the host) and ``test_user`` (the hand-over
        to the unprivileged test user, None for root). Raises ``RecipeError`` naming the file and the value
        that cannot be inferred."""


_REGISTRY: dict[str, Framework] = {}
_ATTRIBUTES: dict[str, type] = {"name": str, "parser": str, "markers": tuple, "planning_files": tuple}


def register(framework: object) -> Framework:
    """Add ``framework`` to the registry (replacing one of the same name) and return it.

    Raises:
        FrameworkError: it lacks a :class:`Framework` method or attribute, or one has the wrong type.
    """
    if not isinstance(framework, Framework):
        missing = [m for m in (*_ATTRIBUTES, *_methods()) if not hasattr(framework, m)]
        raise FrameworkError(f"{framework!r} is not a Framework: missing {', '.join(missing)}")
    for attr, kind in _ATTRIBUTES.items():
        if not isinstance(getattr(framework, attr), kind):
            raise FrameworkError(f"{framework!r}: attribute {attr!r} must be a {kind.__name__}")
    for method in _methods():
        if not callable(getattr(framework, method)):
            raise FrameworkError(f"{framework!r}: {method!r} must be callable")
    _REGISTRY[framework.name] = framework
    return framework


def _methods() -> tuple[str, ...]:
    return ("config_paths", "test_rule", "plan", "production_built", "runner_config", "tool_path", "infer_recipe")


def unregister(name: str) -> None:
    """Remove a framework (a test's or a plugin's own); unknown names are ignored."""
    _REGISTRY.pop(name, None)


def get(name: str) -> Framework:
    """The registered framework called ``name``.

    Raises:
        FrameworkError: no framework of that name (the message lists the known ones).
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise FrameworkError(f"unknown framework {name!r}; expected one of {', '.join(names())}") from None


def names() -> tuple[str, ...]:
    """Registered framework names, sorted."""
    return tuple(sorted(_REGISTRY))


__all__ += ["PlanError", "TestPlan"]
