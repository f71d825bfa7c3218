"""Integrity: the manifest's typed ``environment`` is honoured the same way by both runtimes, bad keys
are errors naming the field, and a ``test_command``'s own result file is where the harness reads.

The Docker runtime's recipe step (:func:`pytest_mobilebench.frameworks.workspace_recipe`) is called on
real fixture repositories; before the registry it read ``install_command`` while the manifest (and the
local runtime) say ``install``, so ``install: "echo CUSTOM"`` ran ``yarn install`` in Docker.
"""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from pytest_mobilebench import frameworks
from pytest_mobilebench.runtime.environment import Environment, local_unsupported
from pytest_mobilebench.runtime.base import InfraError, WorkspaceSpec
from pytest_mobilebench.frameworks import workspace_recipe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "recipes"


def _spec(framework: str, **environment: object) -> WorkspaceSpec:
    return WorkspaceSpec("a__b-1", "a/b", "c" * 40, "file:///x", {**environment, "framework": framework})


def test_install_is_the_install_in_docker_too() -> None:
    recipe = workspace_recipe(FIXTURES / "rn-yarn-berry", _spec("react-native", install="echo CUSTOM", node="20.18.0"))
    assert recipe.install_command == "echo CUSTOM"
    assert recipe.toolchain["node"] == "20.18.0"


def test_android_sdk_pins_the_compile_sdk() -> None:
    recipe = workspace_recipe(FIXTURES / "android-groovy", _spec("android", android_sdk="35"))
    assert recipe.toolchain["compile_sdk"] == "35"
    assert "platforms;android-35" in recipe.dockerfile


def test_recipe_and_image_replace_the_environment_layer() -> None:
    own = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo own\n"
    recipe = workspace_recipe(FIXTURES / "rn-yarn-berry", _spec("react-native", recipe=own, node="20.18.0"))
    assert recipe.dockerfile == own and "yarn install --immutable" in recipe.install_command
    ready = workspace_recipe(Path("/nonexistent"), _spec("flutter", image="ghcr.io/acme/flutter:3.22", install="true"))
    assert ready.dockerfile.endswith("FROM ghcr.io/acme/flutter:3.22\n") and ready.install_command == "true"
    assert local_unsupported(Environment(image="x")) == ["image"]


def test_bad_environment_keys_name_the_field() -> None:
    with pytest.raises(InfraError, match="instal"):
        workspace_recipe(FIXTURES / "rn-yarn-berry", _spec("react-native", instal="echo typo"))
    with pytest.raises(pydantic.ValidationError, match="instal"):
        Environment.from_mapping({"instal": "x"})


def test_a_test_commands_output_file_is_where_results_are_read() -> None:
    fw = frameworks.get("react-native")
    plan = fw.plan({}, [], test_command="npx jest --ci --json --outputFile=out/jest.json")
    assert plan.result_globs == ("out/jest.json",)
    plan = fw.plan({}, [], test_command="yarn test --json --outputFile out/r.json")
    assert plan.result_globs == ("out/r.json",)
    plan = fw.plan({}, [], test_command="make check", test_results=["reports/*.json"])
    assert plan.result_globs == ("reports/*.json",)


def test_the_package_manager_is_decided_once() -> None:
    fw = frameworks.get("react-native")
    files = {"package.json": b'{"name": "x"}', "yarn.lock": b""}
    assert " yarn jest " in fw.plan(files, ["a.test.js"]).command
    assert " pnpm exec jest " in fw.plan(files, ["a.test.js"], environment=Environment(package_manager="pnpm")).command


def test_the_local_runtime_says_what_it_cannot_honour(tmp_path: Path) -> None:
    from pytest_mobilebench.runtime.local import LocalRuntime
    from pytest_mobilebench.runtime.repos import RepoCache

    runtime = LocalRuntime(RepoCache(root=tmp_path, run_id="t"))
    with pytest.raises(InfraError, match=r"environment\.image needs --mb-runtime=docker"):
        runtime.prepare(_spec("react-native", image="ghcr.io/acme/node:20"))
