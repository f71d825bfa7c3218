"""Environment recipes inferred from repository files (MobileDev-Bench Section 3.3 and Appendix A.5).

``infer_recipe(repo_dir, framework)`` reads a repository checked out at its base commit (nothing is run)
and returns an :class:`EnvRecipe`: exact toolchain versions, the evidence line of each, the environment
layer's Dockerfile and the instance layer's dependency install command. The docker runtime builds the
layered images (base -> environment -> instance) from it; ``EnvRecipe.key()`` is the content hash in the
environment image's tag, so one environment image serves every instance with the same toolchain.

Build-context contract with the docker runtime:

- every Dockerfile starts ``ARG BASE_IMAGE`` / ``FROM ${BASE_IMAGE}`` (a Debian bookworm image);
- the context always holds :data:`HOST_CA_CONTEXT_FILE` (the host CA bundle, PEM, may be empty), which
  the Dockerfile installs under ``/usr/local/share/ca-certificates/`` before ``update-ca-certificates``;
- the context holds every file of ``recipe.context_files``;
- the context also holds the npm tarballs of ``recipe.context_packages`` (react-native:
  :func:`node_context_packages`; ``npm pack <spec>`` on the host, renamed to the given file name);
- ``recipe.test_user`` says how the instance layer hands the image to the unprivileged test user
  (:class:`~.common.UserHandover`; None: tests run as root).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_mobilebench.runtime.recipes.common import HOST_CA_CONTEXT_FILE, EnvRecipe, RecipeError
from pytest_mobilebench.runtime.recipes.node import node_context_packages

__all__ = [
    "HOST_CA_CONTEXT_FILE",
    "EnvRecipe",
    "RecipeError",
    "infer_recipe",
    "node_context_packages",
]

def infer_recipe(repo_dir: Path, framework: str, *, overrides: Mapping[str, Any] | None = None) -> EnvRecipe:
    """Infer the environment recipe of a repository checked out at its base commit.

    Args:
        repo_dir: the repository root (a work tree or an export of the base commit).
        framework: a registered framework (:func:`pytest_mobilebench.frameworks.names`).
        overrides: recipe override keys (:func:`pytest_mobilebench.frameworks.environment.recipe_overrides`
            maps the typed environment to them); each given key replaces the inferred value (and its
            source reads ``"override"``). ``install_command`` replaces the dependency install command.

    Returns:
        The recipe; see :mod:`.node`, :mod:`.android` and :mod:`.flutter` for the precedence of sources.

    Raises:
        RecipeError: unknown framework, unreadable/invalid build files, or a version that cannot be inferred
            (the message names the file and the value).
    """
    from pytest_mobilebench import frameworks

    repo = Path(repo_dir)
    if not repo.is_dir():
        raise RecipeError(f"{repo}: not a directory")
    try:
        fw = frameworks.get(framework)
    except frameworks.FrameworkError as exc:
        raise RecipeError(f"framework {framework!r} is not one of {', '.join(frameworks.names())}") from exc
    return fw.infer_recipe(repo, dict(overrides or {}))
