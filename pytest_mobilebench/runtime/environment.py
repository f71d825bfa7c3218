"""The typed ``environment`` record of an instance, shared by the manifest, the recipes and both runtimes
(a runtime input: it lives with the runtimes, the frameworks read it).

SPEC section 1 "Environment images". Every field is optional: what is missing is inferred from the
repository at its base commit by the framework's recipe (:meth:`Framework.infer_recipe`). The same
record drives the local and the Docker runtime:

* ``install``: the dependency installation, run at the repository root once per workspace (local) or in
  the instance image (Docker); replaces the inferred command in both.
* ``node``, ``package_manager`` (and ``package_manager_version``: the project's pinned ``packageManager``
  version, ``pnpm@10.4.1`` -> ``10.4.1``; yarn 2+ is berry), ``jdk``, ``android_sdk`` (compile SDK platform),
  ``build_tools``, ``gradle``, ``flutter``: toolchain pins replacing the inferred versions (Docker builds them; the
  local runtime uses the host's tools and records the pins only).
* ``install_env``: ``{NAME: value}`` exported for the install (Docker and local), e.g. a dependency's variable
  that skips its binary download; ``registry_replacements``: ``{text: replacement}`` replaced in every
  ``package.json`` and lockfile (``package-lock.json``, ``npm-shrinkwrap.json``, ``yarn.lock``,
  ``pnpm-lock.yaml``; ``node_modules`` and ``.git`` left alone) before the install, e.g. one dependency's
  tarball URL outside the registries by a version the registry serves. Both become part of the effective
  install command (:func:`effective_install`), so they key the dependency and instance images.
* ``recipe``: a whole environment Dockerfile (``ARG BASE_IMAGE`` / ``FROM ${BASE_IMAGE}`` ...) replacing
  the inferred one; ``image``: a ready image used as the environment layer. Docker only; the local
  runtime cannot honour them and says so (:func:`local_unsupported`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["DOCKER_ONLY", "Environment", "effective_install", "local_unsupported", "recipe_overrides"]

#: Fields only an image-building runtime can honour.
DOCKER_ONLY: tuple[str, ...] = ("recipe", "image")

#: Environment field -> the recipe override key it sets (:mod:`pytest_mobilebench.frameworks.recipe`).
_OVERRIDE_KEYS: dict[str, str] = {
    "node": "node",
    "package_manager": "package_manager",
    "package_manager_version": "package_manager_version",
    "jdk": "jdk",
    "android_sdk": "compile_sdk",
    "build_tools": "build_tools",
    "gradle": "gradle",
    "flutter": "flutter",
    "install": "install_command",
}


class Environment(BaseModel):
    """Toolchain of an instance; see the module docstring. Unknown keys are errors naming the field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jdk: str | None = None
    android_sdk: str | None = None
    build_tools: str | None = None
    gradle: str | None = None
    node: str | None = None
    package_manager: Literal["npm", "yarn", "pnpm"] | None = None
    package_manager_version: str | None = None
    flutter: str | None = None
    install: str | None = None
    install_timeout: float | None = Field(default=None, gt=0)
    install_env: dict[str, str] | None = None
    registry_replacements: dict[str, str] | None = None
    recipe: str | None = None
    image: str | None = None

    @field_validator("install_env")
    @classmethod
    def _names(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        bad = [name for name in value or {} if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)]
        if bad:
            raise ValueError(f"not an environment variable name: {', '.join(map(repr, bad))}")
        return value

    @field_validator("registry_replacements")
    @classmethod
    def _texts(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if any(not text for text in value or {}):
            raise ValueError("an empty text to replace")
        return value

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> Environment:
        """Validate a plain mapping (``WorkspaceSpec.environment``); a ``framework`` key is ignored.

        Raises:
            pydantic.ValidationError: an unknown key or a value of the wrong type, naming the field.
        """
        return cls.model_validate({k: v for k, v in (data or {}).items() if k != "framework"})


def recipe_overrides(env: Environment) -> dict[str, str]:
    """The recipe override mapping of ``env`` (only the fields that are set), e.g.
    ``{"install_command": "echo CUSTOM", "compile_sdk": "34"}``."""
    return {key: str(getattr(env, field)) for field, key in _OVERRIDE_KEYS.items() if getattr(env, field) is not None}


def local_unsupported(env: Environment) -> list[str]:
    """Fields of ``env`` a runtime without images cannot honour (``recipe``, ``image``), in field order."""
    return [field for field in DOCKER_ONLY if getattr(env, field) is not None]


#: run by the effective install command with ``[[text, replacement], ...]`` as its argument (see module)
_REPLACE: Final[str] = """import json, os, sys
pairs = json.loads(sys.argv[1])
names = {"package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml"}
for root, dirs, files in os.walk("."):
    dirs[:] = [d for d in dirs if d not in ("node_modules", ".git")]
    for name in sorted(set(files) & names):
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            old = f.read()
        new = old
        for text, by in pairs:
            new = new.replace(text, by)
        if new != old:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            print("mobilebench: registry_replacements changed " + path)
"""


def effective_install(env: Environment, command: str) -> str:
    """``command`` preceded by ``env``'s ``install_env`` exports and ``registry_replacements`` (unchanged when
    neither is set). Example: ``install_env={"SKIP_DOWNLOAD": "1"}``, ``"npm ci"`` ->
    ``"export SKIP_DOWNLOAD=1; npm ci"``."""
    parts: list[str] = []
    if env.install_env:
        exports = (f"{name}={shlex.quote(value)}" for name, value in sorted(env.install_env.items()))
        parts.append("export " + " ".join(exports))
    if env.registry_replacements:
        pairs = json.dumps(sorted(env.registry_replacements.items()))
        parts.append(f"python3 -c {shlex.quote(_REPLACE)} {shlex.quote(pairs)}")
    return "; ".join([*parts, command]) if parts and command.strip() else command
