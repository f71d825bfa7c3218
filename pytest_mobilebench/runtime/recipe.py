"""What the container runtime needs of an environment recipe, and the build-context contract it keeps.

The runtime names no framework: a suite resolves the recipe (framework knowledge,
:mod:`pytest_mobilebench.frameworks.recipe`) and hands the runtime a :data:`RecipeFactory`; the runtime
builds whatever :class:`EnvRecipeLike` it gets. Build-context contract:

- every environment Dockerfile starts ``ARG BASE_IMAGE`` / ``FROM ${BASE_IMAGE}`` (a Debian bookworm image);
- the context always holds :data:`HOST_CA_CONTEXT_FILE` (the host CA bundle, PEM, may be empty), which the
  Dockerfile installs under ``/usr/local/share/ca-certificates/`` before ``update-ca-certificates``;
- the context holds every file of ``recipe.context_files`` and the npm tarballs of
  ``recipe.context_packages`` (``npm pack <spec>`` on the host, renamed to the given file name);
- ``recipe.test_user`` says how the instance layer hands the image to the unprivileged :data:`TEST_USER`
  (:class:`UserHandover`; None: tests run as root).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol, final

from pytest_mobilebench.runtime.base import WorkspaceSpec

__all__ = [
    "HOST_CA_CONTEXT_FILE",
    "TEST_USER",
    "TEST_USER_NAME",
    "EnvRecipeLike",
    "NodePackages",
    "RecipeFactory",
    "UserHandover",
]

#: Build-context file every environment Dockerfile COPYs: the host's CA bundle (PEM, possibly several
#: certificates, possibly empty). The docker runtime always places it in the build context; the
#: Dockerfile installs it as ``/usr/local/share/ca-certificates/host-ca.crt`` and runs
#: ``update-ca-certificates`` so that apt, git, curl, Node, Dart and the JDK trust a TLS-intercepting proxy.
HOST_CA_CONTEXT_FILE: Final[str] = "host-ca.crt"

#: the unprivileged user instance images run their tests as (issue 7, item 3): ``uid:gid``, and its name
TEST_USER: Final[str] = "10001:10001"
TEST_USER_NAME: Final[str] = "mobilebench"


@final
@dataclasses.dataclass(frozen=True)
class UserHandover:
    """How an instance image hands its work tree to the unprivileged test user (issue 7, item 3).

    The instance layer (:func:`pytest_mobilebench.runtime.dockerfiles.instance_dockerfile`), as root after the
    dependency install, creates :data:`TEST_USER` (``mobilebench``, home ``/home/mobilebench``), gives it
    every file of ``/testbed`` except the folders named in ``root_dirs`` (at any depth, contents included:
    installed dependencies stay root's, read-only to the tests), creates each path of ``root_dirs[name]``
    inside those folders for the user, runs ``handover``, sets ``env`` and labels the image; the runtime
    then runs every command of its containers as that user.

    Attributes:
        root_dirs: folder name -> writable paths inside it (``{"node_modules": (".cache",)}``).
        handover: bash run as root after that, for the toolchain's own caches outside ``/testbed`` (tool
            folders stay root's and readable; working areas the runner writes go to the user); "" for none.
            It relies on the layout the recipe's own Dockerfile installed.
        env: variables of every later command (``{"GRADLE_USER_HOME": ...}``), e.g. where those working
            areas are.
    """

    root_dirs: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    handover: str = ""
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins, keys sorted."""
        return {
            "root_dirs": {name: list(paths) for name, paths in sorted(self.root_dirs.items())},
            "handover": self.handover,
            "env": dict(sorted(self.env.items())),
        }


class EnvRecipeLike(Protocol):
    """What the builder needs from an environment recipe (:class:`pytest_mobilebench.frameworks.recipe.EnvRecipe` has
    it).

    Attributes:
        dockerfile: the environment layer; starts with ``ARG BASE_IMAGE`` / ``FROM ${BASE_IMAGE}``.
        context_files: ``{context-relative file name: bytes or str}`` shipped with the Dockerfile.
        install_command: shell command run in ``/testbed`` at instance build time (deps, warm-up).
        context_packages: ``{context file name: "npmpkg@version"}`` the host packs for the env build.
        test_user: how the instance layer hands the image to the unprivileged test user (None: root).
    """

    @property
    def dockerfile(self) -> str:
        """The environment Dockerfile."""
        ...

    @property
    def context_files(self) -> Mapping[str, bytes | str]:
        """Extra build-context files."""
        ...

    @property
    def install_command(self) -> str:
        """The instance layer's dependency installation."""
        ...

    @property
    def context_packages(self) -> Mapping[str, str]:
        """npm tarballs packed on the host into the environment build context."""
        ...

    @property
    def test_user(self) -> UserHandover | None:
        """The hand-over to the unprivileged test user, or None."""
        ...

    def key(self) -> str:
        """A stable content hash of the recipe (hex)."""
        ...


#: ``(host checkout of the base commit, spec) -> recipe``; raises ``InfraError("image_build_failed")``
#: naming the instance and why no recipe could be inferred.
RecipeFactory = Callable[[Path, WorkspaceSpec], EnvRecipeLike]
#: ``recipe -> {context file: "npmpkg@version"}`` the host packs into the environment build context.
NodePackages = Callable[[EnvRecipeLike], Mapping[str, str]]
