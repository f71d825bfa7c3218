"""Version ranges, workflow step reading and the recipe record (frameworks/recipe.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.recipe import (
    EnvRecipe,
    RecipeError,
    infer_recipe,
    iter_workflow_steps,
    lower_bound,
    parse_version,
    satisfies,
)
from pytest_mobilebench.runtime.recipe import UserHandover


def v(text: str):  # type: ignore[no-untyped-def]
    parsed = parse_version(text)
    assert parsed is not None, text
    return parsed


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("20.11.1", "^20.9.0", True),
        ("21.0.0", "^20.9.0", False),
        ("20.8.9", "^20.9.0", False),
        ("20.20.2", ">=18 <21", True),
        ("21.0.0", ">=18 <21", False),
        ("18.0.0", "18.x", True),
        ("19.0.0", "18.x", False),
        ("18.20.8", "~18.20", True),
        ("18.21.0", "~18.20", False),
        ("16.9.0", "14.17 - 16", True),
        ("17.0.0", "14.17 - 16", False),
        ("14.16.9", "14.17 - 16", False),
        ("12.22.12", "^12.20.0 || ^14.13.1 || >=16.0.0", True),
        ("13.0.0", "^12.20.0 || ^14.13.1 || >=16.0.0", False),
        ("0.2.5", "^0.2.3", True),
        ("0.3.0", "^0.2.3", False),
        ("3.5.4", ">=3.4.0 <4.0.0", True),
        ("3.13.0", ">=3.13.0-270.0.dev <4.0.0", True),
        ("3.12.9", ">=3.13.0-270.0.dev <4.0.0", False),
        ("20.0.0", "any", True),
        ("20.0.0", "20.0.0", True),
        ("20.0.1", "=20.0.0", False),
        ("18.18.5", ">18.18", False),
        ("18.19.0", ">18.18", True),
        ("18.19.1", "<=18.19", True),
    ],
)
def test_satisfies_follows_node_semver_desugaring(version: str, spec: str, expected: bool) -> None:
    assert satisfies(v(version), spec) is expected


def test_prerelease_orders_below_its_release_and_numerically() -> None:
    assert v("3.46.0-1.0.pre-413") < v("3.46.0")
    assert v("3.46.0-1.0.pre-9") < v("3.46.0-1.0.pre-413")
    assert v("3.13.0-270.0.dev") > v("3.12.9")


def test_lower_bound_keeps_the_written_prerelease_text() -> None:
    assert str(lower_bound(">=3.46.0-1.0.pre-413")) == "3.46.0-1.0.pre-413"
    assert str(lower_bound(">=3.4.0 <4.0.0")) == "3.4.0"
    assert lower_bound("<4.0.0") is None


def test_bad_range_names_the_source() -> None:
    with pytest.raises(RecipeError, match=r"package\.json:3: 'banana' is not a version"):
        satisfies(v("1.0.0"), ">=banana", source="package.json:3")


def test_workflow_steps_expand_env_and_matrix(tmp_path: Path) -> None:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yaml").write_text(
        "env:\n  NODE: '18.10'\n"
        "jobs:\n  a:\n    strategy:\n      matrix:\n        node: ['16.x', 20]\n"
        "    steps:\n      - uses: actions/setup-node@v4\n        with:\n          node-version: ${{ matrix.node }}\n"
        "      - uses: actions/setup-node@v4\n        with:\n          node-version: ${{ env.NODE }}\n",
        encoding="utf-8",
    )
    steps = [s for s in iter_workflow_steps(tmp_path) if s.uses.startswith("actions/setup-node")]
    assert [s.with_["node-version"] for s in steps] == [("16.x", "20"), ("18.10",)]  # "18.10" not the float 18.1


def test_invalid_workflow_yaml_is_a_recipe_error(tmp_path: Path) -> None:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "broken.yml").write_text("jobs: [unclosed\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"broken\.yml: invalid YAML"):
        list(iter_workflow_steps(tmp_path))


def test_key_is_a_content_hash_of_everything() -> None:
    base = EnvRecipe(
        "flutter", {"flutter": "3.24.3"}, {"flutter": ".fvmrc:2"}, "ARG BASE_IMAGE\n", {}, "flutter pub get"
    )
    same = EnvRecipe(
        "flutter", {"flutter": "3.24.3"}, {"flutter": ".fvmrc:2"}, "ARG BASE_IMAGE\n", {}, "flutter pub get"
    )
    assert base.key() == same.key() and len(base.key()) == 64
    variants = [
        EnvRecipe("flutter", {"flutter": "3.24.4"}, {"flutter": ".fvmrc:2"}, "ARG BASE_IMAGE\n", {}, "flutter pub get"),
        EnvRecipe("flutter", {"flutter": "3.24.3"}, {"flutter": ".fvmrc:3"}, "ARG BASE_IMAGE\n", {}, "flutter pub get"),
        EnvRecipe(
            "flutter", {"flutter": "3.24.3"}, {"flutter": ".fvmrc:2"}, "ARG BASE_IMAGE\nX\n", {}, "flutter pub get"
        ),
        EnvRecipe(
            "flutter",
            {"flutter": "3.24.3"},
            {"flutter": ".fvmrc:2"},
            "ARG BASE_IMAGE\n",
            {"a": b"1"},
            "flutter pub get",
        ),
        EnvRecipe(
            "flutter", {"flutter": "3.24.3"}, {"flutter": ".fvmrc:2"}, "ARG BASE_IMAGE\n", {}, "flutter pub get -v"
        ),
        dataclasses.replace(base, context_packages={"npm.tgz": "npm@10.9.4"}),
        dataclasses.replace(base, test_user=UserHandover()),
        dataclasses.replace(base, test_user=UserHandover(root_dirs={"node_modules": (".cache",)})),
        dataclasses.replace(base, test_user=UserHandover(handover="true")),
        dataclasses.replace(base, test_user=UserHandover(env={"A": "1"})),
    ]
    assert len({r.key() for r in variants} | {base.key()}) == 11
    assert base.to_dict()["toolchain"] == {"flutter": "3.24.3"}


def test_unknown_framework_and_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="'ios' is not one of android, flutter, react-native"):
        infer_recipe(tmp_path, "ios")
    with pytest.raises(RecipeError, match="not a directory"):
        infer_recipe(tmp_path / "absent", "android")


def test_another_environment_layer_drops_what_belonged_to_the_inferred_one() -> None:
    inferred = EnvRecipe(
        "react-native",
        {"node": "20.18.0"},
        {},
        "ARG BASE_IMAGE\nFROM x\nRUN setup\n",
        {"setup.sh": b"x"},
        "npm ci",
        context_packages={"npm.tgz": "npm@10.9.4"},
        test_user=UserHandover(root_dirs={"node_modules": (".cache",)}),
    )
    own = inferred.with_environment_layer("ARG BASE_IMAGE\nFROM acme/node:20\n")
    assert own.dockerfile == "ARG BASE_IMAGE\nFROM acme/node:20\n"
    assert (own.context_files, own.context_packages, own.test_user) == ({}, {}, None)
    assert (own.toolchain, own.install_command) == (inferred.toolchain, "npm ci")
