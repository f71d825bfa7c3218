"""The conformance kit (:mod:`pytest_mobilebench.runtime.conformance`) on every provider this repository has:
the local runtime, the in-process ``bare`` provider of the tests (no capability declared: every capability
check is skipped, every required one passes on the base's defaults) and the Docker runtime (``docker``
marker: every check passes with a test user; a root image honestly lacks the result channel and root-owned files).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_workspaces import BareWorkspace

from pytest_mobilebench.runtime.base import Capability, WorkspaceSpec
from pytest_mobilebench.runtime.conformance import CHECKS, Check, ConformanceError, check_all, kit_repository
from pytest_mobilebench.runtime.local import LocalRuntime
from pytest_mobilebench.runtime.repos import RepoCache

_LOCAL_SKIPS = {"no_network_when_asked", "result_channel_is_one_way", "root_files_stay_root_owned", "root_exec"}


def _local(tmp_path: Path) -> tuple[LocalRuntime, WorkspaceSpec]:
    spec = kit_repository(tmp_path)
    return LocalRuntime(RepoCache(tmp_path / "mirrors", run_id="kit"), workdir=tmp_path), spec


@pytest.mark.parametrize("check", CHECKS, ids=str)
def test_the_local_runtime_conforms(check: Check, tmp_path: Path) -> None:
    runtime, spec = _local(tmp_path)
    outcome = check.run(lambda: runtime.prepare(spec))
    assert outcome == ("skipped: " + check.needs.value + " not declared" if check.name in _LOCAL_SKIPS else "passed")


@pytest.mark.parametrize("check", CHECKS, ids=str)
def test_a_provider_declaring_no_capability_passes_on_the_base_defaults(check: Check, tmp_path: Path) -> None:
    runtime, spec = _local(tmp_path)
    outcome = check.run(lambda: BareWorkspace(runtime.prepare(spec)))
    assert outcome == ("passed" if check.needs is None else f"skipped: {check.needs.value} not declared")


def test_a_workspace_breaking_the_contract_fails_the_kit_naming_the_check(tmp_path: Path) -> None:
    runtime, spec = _local(tmp_path)

    class Leaky(BareWorkspace):
        def read_files(self, patterns: Any) -> dict[str, bytes]:
            return {**super().read_files(patterns), "out/a/link.xml": b"followed a link"}

    with pytest.raises(ConformanceError, match="reads: read_files"):
        CHECKS[2].run(lambda: Leaky(runtime.prepare(spec)))
    outcomes = check_all(lambda: Leaky(runtime.prepare(spec)))
    assert outcomes["reads_globs_and_links"].startswith("failed: reads:") and outcomes["apply_ladder"] == "passed"


# ------------------------------------------------------------------------------------------------ docker


@dataclasses.dataclass(frozen=True)
class _Recipe:
    """The recipe fields the Docker runtime reads (``test_user``: the tests run unprivileged, or as root)."""

    test_user: Any
    dockerfile: str = "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"
    install_command: str = "mkdir -p node_modules/runner && echo 1 > node_modules/runner/index.js"
    context_files: dict[str, bytes] = dataclasses.field(default_factory=dict)
    context_packages: dict[str, str] = dataclasses.field(default_factory=dict)

    def key(self) -> str:
        user = self.test_user.to_dict() if self.test_user else None
        return hashlib.sha256(json.dumps(["kit", user, self.dockerfile, self.install_command]).encode()).hexdigest()


@pytest.fixture
def docker_prepare(tmp_path: Path) -> Iterator[Any]:
    """``docker_prepare(test_user) -> prepare()`` of the kit repository on the Docker runtime; images removed after."""
    from docker_here import client_with_base_image_or_skip

    from pytest_mobilebench.runtime.docker import DockerRuntime

    client = client_with_base_image_or_skip()
    made: list[Any] = []

    def factory(test_user: Any) -> Any:
        run_id = "kit-" + uuid.uuid4().hex[:10]
        runtime = DockerRuntime(
            run_id=run_id,
            client=client,
            repos=RepoCache(tmp_path / "mirrors", run_id=run_id),
            recipe_factory=lambda _dir, _spec: _Recipe(test_user),
            node_packages=lambda _recipe: {},
            log_dir=tmp_path / "logs",
        )
        made.append(runtime)
        spec = kit_repository(tmp_path / run_id, run_id=run_id)
        return lambda: runtime.prepare(spec)

    yield factory
    for runtime in made:
        runtime.cleanup("base")


@pytest.mark.docker
def test_the_docker_runtime_conforms_with_every_capability(docker_prepare: Any) -> None:
    from pytest_mobilebench.frameworks.react_native.recipe import NODE_TEST_USER

    outcomes = check_all(docker_prepare(NODE_TEST_USER))
    assert outcomes == {check.name: "passed" for check in CHECKS}, outcomes


@pytest.mark.docker
def test_a_root_container_declares_no_channel_and_no_root_owned_files(docker_prepare: Any) -> None:
    prepare = docker_prepare(None)
    ws = prepare()
    try:
        assert ws.capabilities == {Capability.BASE_CHECK, Capability.ROOT_EXEC, Capability.NETWORK_OFF}
    finally:
        ws.close()
    outcomes = check_all(prepare)
    assert outcomes["result_channel_is_one_way"] == "skipped: result_channel not declared", outcomes
    assert outcomes["root_files_stay_root_owned"] == "skipped: root_files not declared", outcomes
    assert all(v == "passed" for k, v in outcomes.items() if not v.startswith("skipped")), outcomes
