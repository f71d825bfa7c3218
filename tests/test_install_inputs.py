"""Issue 30, items 3 and 4: the dependency layer carries what the install reads (lifecycle scripts and the files
they name, rc files without secrets), and one environment image per distinct environment (content-keyed)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_mobilebench.frameworks.react_native.recipe import infer_node_recipe
from pytest_mobilebench.runtime.deplayer import _manifest_tar, manifest_files
from pytest_mobilebench.runtime.dockerfiles import env_key
from pytest_mobilebench.runtime.install_inputs import lifecycle_files, scrub_secrets


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _package(scripts: dict[str, str], **extra: object) -> str:
    return json.dumps({"name": "app", "version": "1.0.0", "scripts": scripts, **extra})


def test_a_preinstall_script_and_what_it_reads_are_in_the_layer_and_sources_are_not(tmp_path: Path) -> None:
    check = "const fs = require('fs');\nconst want = require('./lib/want');\nfs.readFileSync('config/pins.json');\n"
    tree = _tree(
        tmp_path,
        {
            "package.json": _package(
                {"preinstall": "node scripts/check.js && sh ./tools/fetch.sh", "test": "jest src"}
            ),
            "scripts/check.js": check,
            "scripts/lib/want.js": "module.exports = require('../../config/extra');\n",
            "config/pins.json": "{}",
            "config/extra.json": "{}",
            "tools/fetch.sh": "#!/bin/sh\necho\n",
            "src/app.js": "x",
            "yarn.lock": "",
        },
    )
    files = manifest_files(tree)
    assert sorted(files) == [
        "config/extra.json", "config/pins.json", "package.json", "scripts/check.js", "scripts/lib/want.js",
        "tools/fetch.sh", "yarn.lock",
    ]  # fmt: skip
    # a test script's paths are not install inputs; a changed source file leaves the layer as it is
    (tree / "src/app.js").write_text("y")
    assert manifest_files(tree) == files
    (tree / "config/pins.json").write_text('{"a": 1}')
    assert manifest_files(tree)["config/pins.json"] == b'{"a": 1}'


def test_workspace_scripts_name_paths_relative_to_their_own_folder_and_a_folder_comes_whole(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path,
        {
            "package.json": _package({}, workspaces=["packages/*"]),
            "pnpm-workspace.yaml": "packages: ['packages/*']\n",
            "packages/ui/package.json": _package(
                {"postinstall": "node ./gen.js --out=build", "prepare": "cp -r assets dist"}
            ),
            "packages/ui/gen.js": "// no paths\n",
            "packages/ui/assets/a.png": "a",
            "packages/ui/assets/b/c.txt": "c",
            ".pnpmfile.cjs": "module.exports = {}\n",
            "node_modules/x/package.json": "{}",
        },
    )
    assert sorted(manifest_files(tree)) == [
        ".pnpmfile.cjs", "package.json", "packages/ui/assets/a.png", "packages/ui/assets/b/c.txt",
        "packages/ui/gen.js", "packages/ui/package.json", "pnpm-workspace.yaml",
    ]  # fmt: skip


def test_scripts_naming_nothing_or_outside_the_tree_add_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    tree = _tree(
        tmp_path / "repo",
        {
            "package.json": _package({"postinstall": "patch-package && node ../secret.txt /etc/passwd -x ."}),
            "src/a.js": "x",
        },
    )
    assert lifecycle_files(tree, manifest_files(tree)) == {}
    assert (
        _tree(tmp_path / "bad", {"package.json": "{not json"})
        and lifecycle_files(tmp_path / "bad", {"package.json": b"{"}) == {}
    )


def test_rc_files_lose_their_credential_lines_and_keep_the_rest(tmp_path: Path) -> None:
    npmrc = (
        "registry=https://registry.example/\n//registry.example/:_authToken=${NPM_TOKEN}\n_auth=dXNlcjpwYXNz\n"
        "//other.example/:_password=cGFzcw==\nlegacy-peer-deps=true\n"
    )
    assert scrub_secrets(".npmrc", npmrc.encode()) == b"registry=https://registry.example/\nlegacy-peer-deps=true\n"
    yarnrc = 'nodeLinker: node-modules\nnpmAuthToken: "abc"\nnpmScopes:\n  co:\n    npmAuthIdent: "u:p"\n'
    assert scrub_secrets("sub/.yarnrc.yml", yarnrc.encode()) == b"nodeLinker: node-modules\nnpmScopes:\n  co:\n"
    assert scrub_secrets("notes.txt", b"_authToken=1\n") == b"_authToken=1\n"
    tree = _tree(tmp_path, {"package.json": "{}", ".npmrc": npmrc})
    assert b"_auth" not in manifest_files(tree)[".npmrc"]


def test_script_files_keep_their_execute_bit_in_the_layer() -> None:
    import io
    import tarfile

    tar = tarfile.open(fileobj=io.BytesIO(_manifest_tar({"a.sh": b"#!/bin/sh\n", "package.json": b"{}"})))
    assert {m.name.rsplit("/", 1)[-1]: m.mode for m in tar.getmembers()} == {"a.sh": 0o755, "package.json": 0o644}


def test_the_environment_key_follows_the_toolchain_not_the_install_command_or_where_it_was_read(tmp_path: Path) -> None:
    """Two bases with the same node and yarn, a moved ``engines`` line and another install command: one image."""
    a = _tree(tmp_path / "a", {"package.json": json.dumps({"engines": {"node": "20.11.1"}}), "yarn.lock": ""})
    b = _tree(
        tmp_path / "b",
        {
            "package.json": json.dumps({"name": "x", "private": True, "engines": {"node": "20.11.1"}}, indent=4),
            "yarn.lock": "",
        },
    )
    c = _tree(tmp_path / "c", {"package.json": json.dumps({"engines": {"node": "18.20.4"}}), "yarn.lock": ""})
    ra, rb = infer_node_recipe(a), infer_node_recipe(b, overrides={"install_command": "yarn install && echo more"})
    rc = infer_node_recipe(c)
    assert ra.sources != rb.sources and ra.install_command != rb.install_command and ra.key() != rb.key()

    def key(recipe) -> str:
        return env_key(recipe.dockerfile, recipe.context_packages, dict(recipe.context_files))

    assert key(ra) == key(rb) != key(rc)
