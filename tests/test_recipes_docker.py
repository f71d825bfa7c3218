"""Build a real Node environment image from a recipe (needs Docker, the Debian base image and npm).

The build context is assembled as the docker runtime does: the recipe's Dockerfile and context files,
the host CA bundle as ``host-ca.crt``, and ``npm pack`` of every ``node_context_packages`` entry.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.react_native.recipe import node_context_packages
from pytest_mobilebench.frameworks.recipe import infer_recipe
from pytest_mobilebench.runtime.recipe import HOST_CA_CONTEXT_FILE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "recipes"
BASE = "debian:bookworm-slim"

pytestmark = pytest.mark.docker


def _ready() -> str | None:
    if shutil.which("docker") is None or shutil.which("npm") is None:
        return "docker or npm missing"
    probe = subprocess.run(["docker", "image", "inspect", BASE], capture_output=True, check=False, timeout=60)
    return None if probe.returncode == 0 else f"docker daemon unreachable or no {BASE} image"


def test_node_recipe_image_builds_and_runs_the_pinned_tools(tmp_path: Path) -> None:
    reason = _ready()
    if reason:
        pytest.skip(reason)
    recipe = infer_recipe(FIXTURES / "rn-yarn-berry", "react-native", overrides={"node": "20.18.0"})
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(recipe.dockerfile, encoding="utf-8")
    for name, data in recipe.context_files.items():
        (ctx / name).write_bytes(data)
    host_ca = Path("/etc/ssl/certs/ca-certificates.crt")
    (ctx / HOST_CA_CONTEXT_FILE).write_bytes(host_ca.read_bytes() if host_ca.is_file() else b"")
    for name, spec in node_context_packages(recipe).items():
        packed = subprocess.run(
            ["npm", "pack", spec, "--pack-destination", str(tmp_path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        if packed.returncode != 0:
            pytest.skip(f"npm pack {spec} failed (no registry?): {packed.stderr[-300:]}")
        (tmp_path / packed.stdout.strip().splitlines()[-1]).rename(ctx / name)
    tag = f"mobilebench-test/node-recipe:{recipe.key()[:12]}"
    build = subprocess.run(
        ["docker", "build", "--network", "host", "--build-arg", f"BASE_IMAGE={BASE}", "-t", tag, str(ctx)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    try:
        run = subprocess.run(
            [
                "docker",
                "run",
                "--rm",
                "--network",
                "none",
                tag,
                "bash",
                "-c",
                "node --version; npm --version; cd / && yarn --version; npm config get cafile; echo "
                "$NODE_EXTRA_CA_CERTS",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert run.stdout.split() == [
            "v20.18.0",
            "10.9.4",
            "4.1.1",
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/ssl/certs/ca-certificates.crt",
        ]
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True, check=False, timeout=120)
