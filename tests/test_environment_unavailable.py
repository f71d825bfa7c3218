"""Issue 30, item 3: a dependency this machine cannot fetch makes the instance ``environment_unavailable``: named,
remembered per lockfile for the run, never retried as infra, counted apart in the headline and the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.mining.validate import _verdict
from pytest_mobilebench.report.headline import suite_headline
from pytest_mobilebench.report.summary import headline as summary_headline
from pytest_mobilebench.runtime.base import EnvironmentUnavailable, InfraError
from pytest_mobilebench.runtime.install_memo import failed_install, lockfile_key, remembered, unavailable_memo
from pytest_mobilebench.suites.base import ItemResult
from pytest_mobilebench.suites.issue_resolution import SUITE
from pytest_mobilebench.suites.issue_resolution.rates import headline as resolution_headline
from pytest_mobilebench.suites.issue_resolution.unavailable import unavailable_result

MISSING = "npm error code ETARGET\nnpm error notarget No matching version found for zz-none@9.9.9.\n"
TRANSIENT = "npm error code E502\nnpm error 502 Bad Gateway - GET https://registry.example.test/zz\n"
OWN_SCRIPT = "npm error path /testbed\nnpm error command failed\nnpm error command sh -c node scripts/x.js\n"


def test_an_unfetchable_dependency_is_remembered_for_the_run_and_lockfile_and_names_the_package(tmp_path: Path) -> None:
    files = {"package.json": b"{}", "package-lock.json": b'{"v": 1}'}
    memo = unavailable_memo(tmp_path, "run-1", files)
    remembered(memo)  # nothing yet
    with pytest.raises(EnvironmentUnavailable) as first:
        failed_install(MISSING, "installing dependencies for t", memo)
    assert (first.value.cause, first.value.subject) == ("package_missing", "zz-none@9.9.9")
    assert first.value.kind == "environment_unavailable" and "No matching version" in first.value.message
    # the detail leads with what is missing (a one-line view shows it before the image tag and the log's path)
    assert first.value.message.startswith("package_missing: zz-none@9.9.9 (installing dependencies for t)")
    # another instance with the same lockfile (its package.json differs): refused at once, same finding
    sibling = unavailable_memo(tmp_path, "run-1", {"package.json": b'{"name": "b"}', "package-lock.json": b'{"v": 1}'})
    assert sibling == memo
    with pytest.raises(EnvironmentUnavailable) as again:
        remembered(sibling)
    assert again.value.subject == "zz-none@9.9.9" and "remembered for this run" in again.value.message
    # another run, or another lockfile, tries again
    remembered(unavailable_memo(tmp_path, "run-2", files))
    remembered(unavailable_memo(tmp_path, "run-1", {"package-lock.json": b'{"v": 2}'}))
    assert lockfile_key({"package.json": b"{}"}) != lockfile_key({"package.json": b"{ }"})


def test_transient_registry_trouble_stays_infra_and_an_own_script_falls_back(tmp_path: Path) -> None:
    memo = tmp_path / "memo.json"
    with pytest.raises(InfraError) as info:
        failed_install(TRANSIENT, "installing", memo)
    assert info.value.kind == "install_failed" and not isinstance(info.value, EnvironmentUnavailable)
    assert "502 Bad Gateway" in info.value.message
    assert failed_install(OWN_SCRIPT, "installing", memo).cause == "lifecycle_script"
    assert not memo.exists()


def _row(model: str, iid: str, reason: str, passed: bool = False, retryable: bool = False, **extra) -> dict:
    return {"model_name_or_path": model, "instance_id": iid, "reason": reason, "passed": passed,
            "retryable": retryable, "properties": {}, **extra}  # fmt: skip


def test_unavailable_items_are_out_of_every_denominator_and_counted_apart() -> None:
    exc = EnvironmentUnavailable("host_unreachable", "archives.example.test", ["line"], "installing: host_unreachable")
    gone = unavailable_result({"model_name_or_path": "m", "instance_id": "c"}, exc)
    assert gone["reason"] == "environment_unavailable" and gone["retryable"] is False and gone["passed"] is False
    checked = ItemResult.from_suite(SUITE, dict(gone))  # the item contract: flat properties, a known reason
    assert checked.properties == {"environment_unavailable": "host_unreachable: archives.example.test"}
    rows = [_row("m", "a", "resolved", passed=True), _row("m", "b", "unresolved"), gone,
            _row("m", "d", "infra_error", retryable=True)]  # fmt: skip
    block = suite_headline("issue_resolution", rows)
    assert (block["eligible"], block["infra_errors"], block["environment_unavailable"]) == (2, 1, 1)
    assert block["over_eligible"]["value"] == 0.5
    top = summary_headline(rows)
    assert (top["eligible"], top["environment_unavailable"], top["resolution_rate"]) == (2, 1, 0.5)
    own = resolution_headline(rows)
    assert (own["numerator"], own["denominator"]) == (1, 2)
    assert own["environment_unavailable"] == ["m: c: host_unreachable: archives.example.test"]
    assert checked.reason == "environment_unavailable"
    assert "cannot be fetched here" in own["note"]


def test_mining_names_an_unavailable_candidate_apart_from_invalid_and_infra() -> None:
    entry = {"reason": "environment_unavailable", "retryable": False, "detail": "package_missing: zz-none@9.9.9"}
    verdict = _verdict(entry)
    assert verdict.status == "environment_unavailable" and "zz-none" in verdict.detail


YARN1_TARBALL_404 = (
    "# registry https://registry.example.test/\n[2/4] Fetching packages...\n"
    'error An unexpected error occurred: "https://registry.example.test/zz-none/-/zz-none-9.9.9.tgz: '
    'Request failed \\"404 Not Found\\"".\n'
)


class _Images:
    def get(self, tag: str) -> None:
        import docker.errors

        raise docker.errors.ImageNotFound(tag)


class _Client:
    images = _Images()


def _builder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: bool) -> tuple[object, list[str]]:
    """An image builder whose builds are recorded (no daemon); ``fail``: each instance build's own install fails
    for want of a dependency, as :func:`instance_install_failed` raises it."""
    from pytest_mobilebench.runtime.images import ImageBuilder

    client: Any = _Client()
    builder = ImageBuilder(client, run_id="run-1", log_dir=tmp_path / "logs", lock_dir=tmp_path / "locks")
    builds: list[str] = []

    def build(tag: str, *_args: object) -> Path:
        builds.append(tag)
        if fail:
            failed_install(YARN1_TARBALL_404, f"building {tag} failed", None)
        raise AssertionError("not reached: the fake daemon has no image to return")

    monkeypatch.setattr(builder, "_build", build)
    return builder, builds


def _instance(builder: object, iid: str, memo: Path | None) -> None:
    from pytest_mobilebench.runtime.images import BuiltImage

    env = BuiltImage("mobilebench/env.acme__app:0123456789ab", "sha256:env", built=False, seconds=0.0)
    builder.ensure_instance(  # type: ignore[attr-defined]
        iid, env, repo="acme/app", base_commit="b" * 40, install_command="yarn install", checkout_dir=Path("/none"),
        memo=memo,
    )  # fmt: skip


def test_after_the_shared_layer_failed_for_want_of_a_dependency_no_instance_runs_a_full_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_mobilebench.runtime.deplayer import classic_memo, manifest_files

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "package.json").write_text('{"dependencies": {"zz-none": "9.9.9"}}')
    (tree / "yarn.lock").write_text("zz-none@9.9.9:\n")
    builder, builds = _builder(tmp_path, monkeypatch, fail=False)
    memo = classic_memo(builder, tree, None)  # type: ignore[arg-type]
    assert memo == unavailable_memo(tmp_path / "locks", "run-1", manifest_files(tree))  # the shared layer's memo
    with pytest.raises(EnvironmentUnavailable):  # the shared layer's install failed so (ensure_deps)
        failed_install(YARN1_TARBALL_404, "installing dependencies for mobilebench/deps.acme__app:x", memo)
    with pytest.raises(EnvironmentUnavailable) as info:
        _instance(builder, "acme__app-2", memo)
    assert (info.value.cause, info.value.subject) == ("package_missing", "zz-none@9.9.9")
    assert "remembered for this run" in info.value.message and builds == []  # no second full install


def test_an_instance_builds_own_install_failing_so_is_remembered_for_the_next_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builder, builds = _builder(tmp_path, monkeypatch, fail=True)
    memo = unavailable_memo(tmp_path / "locks", "run-1", {"yarn.lock": b"zz-none@9.9.9:\n"})
    with pytest.raises(EnvironmentUnavailable) as first:
        _instance(builder, "acme__app-1", memo)
    assert first.value.subject == "zz-none@9.9.9" and len(builds) == 1
    with pytest.raises(EnvironmentUnavailable) as again:
        _instance(builder, "acme__app-2", memo)
    assert "remembered for this run" in again.value.message and len(builds) == 1
    with pytest.raises(EnvironmentUnavailable) as third:  # no memo (built on the shared layer): it builds
        _instance(builder, "acme__app-3", None)
    assert "remembered" not in third.value.message and len(builds) == 2
