"""The framework registry and its three built-in frameworks (android, flutter, react-native).

Everything framework-specific goes through :func:`get`: ``frameworks.get("react-native").test_rule(files)``,
``.plan(files, test_files, ...)``, ``.runner_config(...)``, ``.tool_path(path)``, ``.infer_recipe(...)``.
See :mod:`.registry` for the :class:`Framework` protocol, the packages :mod:`.android` (Gradle modules,
MobileDev-Bench Appendix A.7), :mod:`.flutter` and :mod:`.react_native` for the rules and each one's
``recipe`` module, :mod:`.gradle` for the Gradle knowledge they share and :mod:`.recipe` for the shared
recipe machinery. A third-party framework (a device platform) is added with :func:`register`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_mobilebench.frameworks.android import ANDROID
from pytest_mobilebench.runtime.environment import Environment, effective_install
from pytest_mobilebench.frameworks.flutter import FLUTTER
from pytest_mobilebench.frameworks.gradle import CompileFailures, compile_failed_modules
from pytest_mobilebench.plan import PlanError, TestPlan
from pytest_mobilebench.frameworks.react_native import REACT_NATIVE
from pytest_mobilebench.frameworks.registry import (
    Files,
    Framework,
    FrameworkError,
    get,
    names,
    register,
    unregister,
)
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    from pytest_mobilebench.frameworks.recipe import EnvRecipe
    from pytest_mobilebench.runtime.base import WorkspaceSpec

__all__ = [
    "PLANNING_FILES",
    "CompileFailures",
    "Environment",
    "Files",
    "Framework",
    "FrameworkError",
    "PlanError",
    "TestPlan",
    "compile_failed_modules",
    "default_test_rule",
    "get",
    "infer_recipe",
    "workspace_recipe",
    "is_test_file",
    "names",
    "plan_tests",
    "production_built",
    "read_config",
    "register",
    "unregister",
]

for _framework in (ANDROID, FLUTTER, REACT_NATIVE):
    register(_framework)


def default_test_rule(framework: str) -> Callable[[str], bool]:
    """The test-file rule of ``framework`` under the runner's DEFAULT discovery (no project configuration);
    use ``get(framework).test_rule(files)`` with the project's files where they are known.

    Raises:
        FrameworkError: for an unknown framework.
    """
    return get(framework).test_rule({})


def is_test_file(path: str, framework: str) -> bool:
    """Whether ``path`` is a test file of ``framework`` under :func:`default_test_rule`.

    Raises:
        FrameworkError: for an unknown framework.
    """
    return default_test_rule(framework)(path)


class _PlanningFiles(Mapping[str, tuple[str, ...]]):
    """framework name -> the globs its planner reads (a live view of the registry)."""

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return get(name).planning_files

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(names())

    def __len__(self) -> int:
        return len(names())


PLANNING_FILES: Mapping[str, tuple[str, ...]] = _PlanningFiles()


def read_config(framework: Framework, reader: Callable[[Sequence[str]], Mapping[str, bytes]]) -> dict[str, bytes]:
    """The files ``framework.config_paths`` names, read with ``reader`` until no new path is named
    (a pointer such as ``"jest": "./jest.json"`` needs a second read). At most four reads."""
    files: dict[str, bytes] = {}
    asked: set[str] = set()
    for _ in range(4):
        wanted = [p for p in framework.config_paths(files) if p not in asked]
        if not wanted:
            break
        asked |= set(wanted)
        files.update(reader(wanted))
    return files


def plan_tests(
    framework: str,
    repo_dir: Path,
    test_files: Sequence[str],
    *,
    test_command: str | None = None,
    test_targets: Sequence[str] = (),
) -> TestPlan:
    """The test plan of a checkout (reads the framework's planning files from ``repo_dir``).

    Raises:
        PlanError: unknown framework, or no runnable test among the files.
    """
    try:
        fw = get(framework)
    except FrameworkError as exc:
        raise PlanError(f"framework {framework!r} is not one of {', '.join(names())}") from exc
    files = {p.relative_to(repo_dir).as_posix(): p.read_bytes()
             for g in fw.planning_files for p in sorted(repo_dir.glob(g)) if p.is_file()}  # fmt: skip
    return fw.plan(files, test_files, test_command=test_command, test_targets=test_targets)


def production_built(framework: str, output: str, plan: TestPlan) -> bool:
    """``get(framework).production_built(output, plan)``."""
    return get(framework).production_built(output, plan)


def infer_recipe(repo_dir: Path, framework: str, environment: Environment | Mapping[str, object]) -> EnvRecipe:
    """The environment recipe of a checkout, honouring the typed ``environment`` the same way everywhere.

    ``install`` and the toolchain pins go to the framework's inference; ``recipe`` replaces the inferred
    Dockerfile; ``image`` makes a ready image the environment layer (``FROM <image>``). With ``recipe`` or
    ``image`` and an ``install``, nothing is inferred (the repository may not be inferable at all). A
    replaced layer runs its tests as root (:meth:`EnvRecipe.with_environment_layer`). ``install_env`` and
    ``registry_replacements`` precede the install command, inferred or given
    (:func:`~pytest_mobilebench.runtime.environment.effective_install`).

    Raises:
        FrameworkError: unknown framework. RecipeError: the recipe cannot be inferred (file and value named).
        pydantic.ValidationError: ``environment`` has an unknown key (the field is named).
    """
    recipe = _inferred(repo_dir, framework, environment)
    env = environment if isinstance(environment, Environment) else Environment.from_mapping(environment)
    command = effective_install(env, recipe.install_command)  # install_env, registry_replacements
    return recipe if command == recipe.install_command else dataclasses.replace(recipe, install_command=command)


def _inferred(repo_dir: Path, framework: str, environment: Environment | Mapping[str, object]) -> EnvRecipe:
    """:func:`infer_recipe` before the install overrides of
    :func:`~pytest_mobilebench.runtime.environment.effective_install`."""
    from pytest_mobilebench.runtime.environment import recipe_overrides
    from pytest_mobilebench.frameworks.recipe import EnvRecipe

    env = environment if isinstance(environment, Environment) else Environment.from_mapping(environment)
    fw = get(framework)
    dockerfile = env.recipe or (f"ARG BASE_IMAGE\nFROM {env.image}\n" if env.image else None)
    if dockerfile is not None and env.install is not None:
        source = "environment.recipe" if env.recipe else "environment.image"
        return EnvRecipe(fw.name, {}, {"dockerfile": source}, dockerfile, {}, env.install)
    recipe = fw.infer_recipe(repo_dir, recipe_overrides(env))
    if dockerfile is None:
        return recipe
    return recipe.with_environment_layer(dockerfile)


def workspace_recipe(repo_dir: Path, spec: WorkspaceSpec) -> EnvRecipe:
    """The container runtime's recipe factory (:data:`pytest_mobilebench.runtime.recipe.RecipeFactory`):
    :func:`infer_recipe` of ``spec.environment`` (the typed environment record plus ``framework``), the
    same fields the local runtime honours (``install`` ...).

    Raises:
        InfraError("image_build_failed"): no framework given, a bad environment record, or the recipe
            cannot be inferred (the message carries the recipe's own explanation: file and missing value).
    """
    import pydantic

    from pytest_mobilebench.frameworks.recipe import RecipeError
    from pytest_mobilebench.runtime.base import InfraError

    framework = spec.environment.get("framework")
    if not framework:
        raise InfraError(
            InfraKind.IMAGE_BUILD_FAILED, f"{spec.instance_id}: the environment record names no 'framework'"
        )
    try:
        return infer_recipe(repo_dir, str(framework), spec.environment)
    except (RecipeError, FrameworkError, pydantic.ValidationError) as exc:
        raise InfraError(InfraKind.IMAGE_BUILD_FAILED, f"{spec.instance_id}: no environment recipe: {exc}") from exc
