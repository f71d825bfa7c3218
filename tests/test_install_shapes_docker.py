"""Issue 30, items 3 and 4, in Docker with installs from the npm registry: self-made projects (written here) whose
install reads a file of the repository (a ``preinstall`` script), needs a version the registry lacks, or downloads
from a host outside the registries (a ``postinstall`` script); and one environment image for both install commands."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.react_native.recipe import infer_node_recipe, node_context_packages
from pytest_mobilebench.runtime.base import EnvironmentUnavailable
from pytest_mobilebench.runtime.deplayer import ensure_deps
from pytest_mobilebench.suites.issue_resolution import docker_answers

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
]

REPO = "mobilebench-test/install-shapes"
#: the project's own preinstall: reads a file of the repository (a pin list) and writes what it found
CHECK_PINS_JS = """\
'use strict';
const fs = require('fs');
const path = require('path');
const pins = require('../config/pins.json');
fs.mkdirSync(path.join(__dirname, '..', 'build'), { recursive: true });
fs.writeFileSync(path.join(__dirname, '..', 'build', 'pins-ok'), 'node ' + pins.node + '\\n');
"""
#: the project's own postinstall: fetches a tool from a host outside the registries
FETCH_TOOL_JS = """\
'use strict';
const https = require('https');
console.log('Downloading https://binaries.example.invalid/tool-linux-x64.tgz');
https.get('https://binaries.example.invalid/tool-linux-x64.tgz', (res) => res.resume())
  .on('error', (err) => { console.error('Error: ' + err.message); process.exit(1); });
"""


def _project(root: Path, package: dict, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    (root / "package.json").write_text(
        json.dumps({"name": "shape", "version": "1.0.0", "private": True, **package}, indent=2)
    )
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def shared_env(tmp_path_factory: pytest.TempPathFactory):
    """``(builder, env image, progress lines)``: a Node 20 environment from the recipe, on the local daemon, for
    the module (the base layer as the runtime makes it, with the default CA bundle: reused when there)."""
    from pytest_mobilebench.runtime.daemon import connect
    from pytest_mobilebench.runtime.images import ImageBuilder
    from pytest_mobilebench.runtime.docker import DEFAULT_CA_BUNDLE

    tmp_path = tmp_path_factory.mktemp("install-shapes")
    client = connect(timeout_s=10)
    said: list[str] = []
    ca = Path(DEFAULT_CA_BUNDLE)
    builder = ImageBuilder(
        client,
        run_id=f"install-shapes-{time.time_ns()}",
        log_dir=tmp_path / "logs",
        lock_dir=tmp_path / "locks",
        progress=said.append,
        ca_bundle=ca if ca.is_file() else None,
    )
    probe = _project(tmp_path / "probe", {}, {})
    recipe = infer_node_recipe(probe, overrides={"node": "20.20.2"})
    env = builder.ensure_env(recipe, REPO, node_packages=node_context_packages(recipe))
    yield builder, env, said
    for image in client.api.images(filters={"label": f"mobilebench.run_id={builder.run_id}"}):
        client.api.remove_image(image["Id"], force=True)
    client.close()


@pytest.fixture
def node_env(shared_env):
    """:func:`shared_env` with the progress lines of this test alone."""
    builder, env, said = shared_env
    said.clear()
    return builder, env, said


def _installs(said: list[str]) -> int:
    return sum(1 for line in said if line.startswith("installing dependencies for"))


def test_a_preinstall_reading_a_repository_file_installs_once_per_lockfile_in_the_shared_layer(
    node_env, tmp_path
) -> None:
    builder, env, said = node_env
    package = {"scripts": {"preinstall": "node scripts/check-pins.js"}, "dependencies": {"is-number": "7.0.0"}}
    files = {"scripts/check-pins.js": CHECK_PINS_JS, "config/pins.json": '{"node": "20"}\n'}
    one = _project(tmp_path / "one", package, {**files, "src/a.js": "module.exports = 1;\n"})
    two = _project(tmp_path / "two", package, {**files, "src/a.js": "module.exports = 2;\n"})
    install = "npm install --no-audit --no-fund"
    first = ensure_deps(builder, env, one, install, repo=REPO)
    second = ensure_deps(builder, env, two, install, repo=REPO)
    assert first is not None and second is not None, "\n".join(said)
    assert first.built and not second.built and first.image_id == second.image_id
    assert _installs(said) == 1
    out = builder.client.containers.run(
        first.image_id,
        ["bash", "-c", "cat build/pins-ok; test -f node_modules/is-number/package.json && echo dep"],
        remove=True,
    )
    assert out.decode() == "node 20\ndep\n"


def test_a_version_the_registry_lacks_is_unavailable_named_and_not_installed_again(node_env, tmp_path) -> None:
    builder, env, said = node_env
    package = {"dependencies": {"is-number": "99.99.99"}}
    one = _project(tmp_path / "one", package, {"src/a.js": "1"})
    two = _project(tmp_path / "two", package, {"src/a.js": "2"})
    with pytest.raises(EnvironmentUnavailable) as first:
        ensure_deps(builder, env, one, "npm install --no-audit --no-fund", repo=REPO)
    assert (first.value.cause, first.value.subject) == ("package_missing", "is-number@99.99.99")
    assert any("No matching version" in line for line in first.value.lines) and "RUN" not in first.value.message
    with pytest.raises(EnvironmentUnavailable) as second:
        ensure_deps(builder, env, two, "npm install --no-audit --no-fund", repo=REPO)
    assert second.value.subject == "is-number@99.99.99" and "remembered for this run" in second.value.message
    assert _installs(said) == 1


def test_a_postinstall_download_from_an_outside_host_is_unavailable_naming_the_host(node_env, tmp_path) -> None:
    builder, env, said = node_env
    tree = _project(
        tmp_path / "p",
        {"scripts": {"postinstall": "node scripts/fetch-tool.js"}},
        {"scripts/fetch-tool.js": FETCH_TOOL_JS},
    )
    with pytest.raises(EnvironmentUnavailable) as info:
        ensure_deps(builder, env, tree, "npm install --no-audit --no-fund", repo=REPO)
    assert info.value.cause == "host_unreachable" and info.value.subject == "binaries.example.invalid", info.value.lines


def test_one_environment_image_whatever_the_install_command(node_env, tmp_path) -> None:
    builder, env, _ = node_env
    tree = _project(tmp_path / "q", {"engines": {"node": "20.20.2"}}, {})
    other = infer_node_recipe(tree, overrides={"install_command": "npm install --no-audit --no-fund && echo more"})
    again = builder.ensure_env(other, REPO, node_packages=node_context_packages(other))
    assert (again.tag, again.image_id, again.built) == (env.tag, env.image_id, False)


def test_a_lockfile_lagging_package_json_installs_unfrozen_and_stays_as_committed(node_env, tmp_path) -> None:
    """The shape of RocketChat/Rocket.Chat.ReactNative's 2017-2018 commits: package.json asks for ``^6`` while the
    lockfile still pins 7.0.0, so ``npm ci`` refuses; the inferred install runs ``npm install`` once more, the
    dependency is what package.json asks for, and the lockfile in the image is the committed one."""
    from pytest_mobilebench.frameworks.react_native.installs import install_command

    builder, env, said = node_env
    stale = {
        "name": "shape",
        "version": "1.0.0",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {
            "": {"name": "shape", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}},
            "node_modules/is-number": {"version": "7.0.0"},
        },
    }
    lock = json.dumps(stale, indent=2) + "\n"
    tree = _project(tmp_path / "lag", {"dependencies": {"is-number": "^6.0.0"}}, {"package-lock.json": lock})
    deps = ensure_deps(builder, env, tree, install_command(tree, "npm", ""), repo=REPO)
    assert deps is not None, "\n".join(said)
    out = builder.client.containers.run(
        deps.image_id,
        ["bash", "-c", "node -p \"require('is-number/package.json').version\"; cat package-lock.json"],
        remove=True,
    ).decode()
    version, _, kept = out.partition("\n")
    assert version.startswith("6."), out
    assert kept == lock
    log = next(Path(line.rsplit("log: ", 1)[1]) for line in said if line.startswith("installing dependencies for"))
    assert "# mobilebench: lockfile_out_of_date: package-lock.json does not match package.json" in log.read_text()
