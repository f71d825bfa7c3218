"""Cold image preparation of jellyfin-expo instances without and with the shared dependency layer.

    python benchmarks/bench_deplayer.py [--mirror-template file:///srv/mirrors/{owner}+{name}/repo]

Three instance bases of jellyfin/jellyfin-expo: the two of ``cases/issue_resolution`` (different
lockfiles) and 649's fix commit, whose ``package.json`` and ``package-lock.json`` are byte-identical to
649's base. Each mode prepares the three instance images from scratch under fresh instance ids (the
environment image is built first and not timed: it is the same in both modes); "classic" runs
``npm ci`` in every instance image, "shared" runs it once per distinct lockfile in a dependency layer
(runtime.deplayer). Printed: seconds per mode and their ratio, and the bytes the instance (and
dependency) images hold on disk beyond the environment image (runtime.budget.charged_bytes).
Every image made here is removed at the end; jellyfin dependency images found before a mode are
removed so that it installs cold. The package-cache volume is used as found (say so when
quoting the figures: an earlier jellyfin install makes "shared" faster still).
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from unittest import mock

from pytest_mobilebench.runtime import docker as docker_runtime
from pytest_mobilebench.runtime.base import WorkspaceSpec
from pytest_mobilebench.runtime.budget import ImageBudget, charged_bytes
from pytest_mobilebench.runtime.repos import RepoCache

REPO = "jellyfin/jellyfin-expo"
BASES = {
    "546": "5ebf8e4d40622deb780f5bc9b538fa799d0c3e9e",
    "649": "9c18cd1631de25074d487d5b8905a83fadbe6fa7",
    "649fix": "c0e7f3bb4b423cde7f7236eb0791633c7be53008",
}
ENVIRONMENT = {
    "framework": "react-native",
    "node": "20",
    "package_manager": "npm",
    "install": "npm ci --no-audit --no-fund",
}


def warm_env(runtime: docker_runtime.DockerRuntime) -> None:
    """Build (or find) the base and environment images before timing: both modes share them."""
    import tempfile
    from pathlib import Path

    spec = WorkspaceSpec("bench-warm", REPO, BASES["546"], "", ENVIRONMENT, runtime.run_id)
    mirror = runtime.repos.ensure(REPO, list(BASES.values()))
    with tempfile.TemporaryDirectory() as tmp:
        docker_runtime.export_tree(mirror, spec.base_commit, Path(tmp) / "tree")
        recipe = runtime.recipe_factory(Path(tmp) / "tree", spec)
        runtime.builder.ensure_env(recipe, REPO, node_packages=runtime.node_packages(recipe))


def prepare_all(runtime: docker_runtime.DockerRuntime, tag: str, run_id: str) -> float:
    started = time.monotonic()
    for name, commit in BASES.items():
        spec = WorkspaceSpec(f"bench{tag}-{name}", REPO, commit, "", ENVIRONMENT, run_id)
        image = runtime.ensure_instance_image(spec)
        print(f"  {name}: {image.tag} built={image.built} {image.seconds:.0f} s", flush=True)
    return time.monotonic() - started


def drop_deps(client) -> None:
    """Remove jellyfin-expo dependency images not in use, so that "shared" installs cold."""
    for image in client.api.images(filters={"label": "mobilebench.level=deps"}):
        mine = any(t.startswith("mobilebench/deps.jellyfin__jellyfin-expo:") for t in image.get("RepoTags") or [])
        if mine and not client.api.containers(all=True, filters={"ancestor": image["Id"]}):
            client.api.remove_image(image["Id"])


def run_bytes(client, run_id: str) -> int:
    budget = ImageBudget(
        client, 1, usage_file=docker_runtime.cache_root() / "bench-unused.json", label="mobilebench.run_id"
    )
    images = [
        info
        if info.harness
        and client.api.inspect_image(info.image_id)["Config"]["Labels"].get("mobilebench.run_id") == run_id
        else info.__class__(info.image_id, info.layers, info.size, False, info.last_used, info.in_use)
        for info in budget.inventory()
    ]
    return charged_bytes(images)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mirror-template",
        default=os.environ.get("MOBILEBENCH_REPO_URL_TEMPLATE", "file:///work/.mirror/{owner}+{name}/repo"),
    )
    args = parser.parse_args()
    client = docker_runtime.connect()
    figures: dict[str, tuple[float, int]] = {}
    run_ids = []
    try:
        for mode in ("classic", "shared"):
            run_id = f"bench-deps-{mode}-{uuid.uuid4().hex[:6]}"
            run_ids.append(run_id)
            runtime = docker_runtime.DockerRuntime(
                run_id=run_id,
                client=client,
                repos=RepoCache(url_template=args.mirror_template, run_id=run_id),
                progress=lambda line: print("   ", line, flush=True) if "dependencies" in line else None,
            )
            drop_deps(client)
            warm_env(runtime)
            print(f"{mode}:", flush=True)
            patch = (
                mock.patch.object(docker_runtime, "ensure_deps", lambda *a, **k: None)
                if mode == "classic"
                else mock.patch.dict({})
            )
            with patch:
                seconds = prepare_all(runtime, f"{mode}{run_id[-6:]}", run_id)
            figures[mode] = (seconds, run_bytes(client, run_id))
            print(
                f"  {mode}: {seconds:.0f} s, {figures[mode][1] / 1e9:.2f} GB beyond the environment image", flush=True
            )
    finally:
        for run_id in run_ids:
            for level in ("instance", "deps"):
                for image in client.api.images(
                    filters={"label": [f"mobilebench.run_id={run_id}", f"mobilebench.level={level}"]}
                ):
                    client.api.remove_image(image["Id"], force=True)
    (t0, b0), (t1, b1) = figures["classic"], figures["shared"]
    print(f"cold preparation, 3 instances: classic {t0:.0f} s, shared {t1:.0f} s, ratio {t1 / t0:.2f}")
    print(f"image bytes beyond env: classic {b0 / 1e9:.2f} GB, shared {b1 / 1e9:.2f} GB, ratio {b1 / b0:.2f}")


if __name__ == "__main__":
    main()
