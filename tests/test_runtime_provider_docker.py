"""A device record with ``plan.kind: gradle`` builds in a container, and a device-only run removes its images
(marked ``docker``: a real daemon and the harness's Debian base image).

The image is a stand-in: the harness's base image plus a ``gradle`` script that says where it runs and
fails, so the reference state S_bug ends as a build failure (infrastructure) after running in the container.
Before the runtime seam this record hit ``ctx.fixture("mb_docker_client")``, undeclared by device repair
(``harness_error``), and image cleanup ran only after issue-resolution items.
"""

from __future__ import annotations

import json
import uuid

import pytest

from docker_here import client_with_base_image_or_skip
from test_runtime_provider import FAKE_PROVIDER_CONFTEST, gradle_record

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")

from pytest_mobilebench.runtime.images import LABEL_RUN  # noqa: E402

pytestmark = pytest.mark.docker

#: the fake pool of FAKE_PROVIDER_CONFTEST, and a hook that hands every suite a Docker runtime whose recipe
#: is the stand-in image (the built-in provider would infer the Android SDK image from the checkout)
STAND_IN_CONFTEST = (
    FAKE_PROVIDER_CONFTEST
    + """
import dataclasses, hashlib, json

from pytest_mobilebench.runtime.docker import DockerRuntime
from pytest_mobilebench.runtime.images import LABEL_RUN
from pytest_mobilebench.runtime.repos import RepoCache

GRADLE = "printf '%s\\\\n' '#!/bin/sh' 'echo \\"stand-in gradle: $*\\"' 'exit 3'"


@dataclasses.dataclass(frozen=True)
class StandIn:
    dockerfile: str
    install_command: str = "true"
    context_files: dict = dataclasses.field(default_factory=dict)
    context_packages: dict = dataclasses.field(default_factory=dict)
    test_user: None = None

    def key(self):
        return hashlib.sha256(json.dumps([self.dockerfile, self.install_command]).encode()).hexdigest()


_MADE = {}


def pytest_mobilebench_make_runtime(config, options, run_id, trusted):
    if "runtime" not in _MADE:
        recipe = StandIn("ARG BASE_IMAGE\\nFROM ${BASE_IMAGE}\\nRUN " + GRADLE
                         + " > /usr/local/bin/gradle && chmod +x /usr/local/bin/gradle && echo " + run_id + "\\n")
        _MADE["runtime"] = DockerRuntime(run_id=run_id, cache_level=options["mb_cache_level"],
                                         repos=RepoCache(run_id=run_id), recipe_factory=lambda _dir, _spec: recipe,
                                         node_packages=lambda _recipe: {}, mem_limit="512m")
    return _MADE["runtime"]


def pytest_mobilebench_result(config, result):
    client = _MADE["runtime"].client
    images = client.images.list(filters={"label": f"{LABEL_RUN}={config.getoption('mb_run_id')}"})
    _log(f"images during the run: {len(images)}")
"""
)


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    return client_with_base_image_or_skip()


def test_a_gradle_device_record_builds_in_a_container_and_the_run_removes_its_images(
    pytester: pytest.Pytester, client: docker.DockerClient
) -> None:
    run_id = "gradle-" + uuid.uuid4().hex[:8]
    pytester.makeconftest(STAND_IN_CONFTEST)
    build = "test -f /.dockerenv && echo in-container; gradle assembleDebug"
    (pytester.path / "calc.yaml").write_text(gradle_record(build, "gradle assembleDebugAndroidTest"))
    result = pytester.runpytest(
        "--predictions=gold",
        "--mb-device-retries=0",
        "--mb-cache-level=none",
        f"--mb-run-id={run_id}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=1)
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    (entry,) = summary["instances"].values()
    assert entry["reason"] == "infra_error", entry  # a reference state that does not build is infrastructure
    log = next((pytester.path / "reports" / run_id).rglob("build.log")).read_text()
    assert "in-container" in log and "stand-in gradle: assembleDebug" in log, log
    during = (pytester.path / "provider.log").read_text()
    assert "images during the run: 0" not in during and "images during the run:" in during, during
    assert client.images.list(filters={"label": f"{LABEL_RUN}={run_id}"}) == []  # the device-only run's images
    assert "cleanup_errors" not in summary
