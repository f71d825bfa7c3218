"""Pure parts of the Docker runtime: apt source parsing, image names, hashes, Dockerfiles, error mapping.

No daemon is needed: daemon-facing pieces are exercised with small stand-in clients. Only the tests whose
stand-ins raise the docker SDK's own error types (or that connect) need the SDK; they request the
``docker_sdk`` fixture and are skipped without it, the others always run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from conftest import git

from pytest_mobilebench.runtime import baseimage
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.baseimage import (
    AptSource,
    ensure_base_image,
    host_apt_mirror,
    parse_deb822_sources,
    parse_sources_list,
)
from pytest_mobilebench.runtime.checkout import shallow_checkout
from pytest_mobilebench.runtime.daemon import connect
from pytest_mobilebench.runtime.docker import default_node_packages
from pytest_mobilebench.runtime.output import BoundedOutput
from pytest_mobilebench.runtime.dockerfiles import BASELINE_SCRIPT, LABEL_USER, base_dockerfile, instance_dockerfile
from pytest_mobilebench.runtime.naming import content_hash, docker_name
from pytest_mobilebench.runtime.owners import owner_alive, owner_label
from pytest_mobilebench.frameworks.android.recipe import GRADLE_TEST_USER
from pytest_mobilebench.frameworks.react_native.recipe import NODE_TEST_USER
from pytest_mobilebench.frameworks.recipe import infer_recipe
from pytest_mobilebench.runtime.recipe import TEST_USER, TEST_USER_NAME

DEB822 = """Types: deb
# a comment line
URIs: http://mirror.example.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.invalid/debian-security
Suites: bookworm-security
Components: main

Enabled: no
Types: deb
URIs: http://disabled.example.invalid/debian
Suites: trixie
"""


def test_parse_deb822_sources() -> None:
    assert parse_deb822_sources(DEB822) == [
        AptSource(("deb",), ("http://mirror.example.invalid/debian",), ("bookworm", "bookworm-updates")),
        AptSource(("deb",), ("http://mirror.example.invalid/debian-security",), ("bookworm-security",)),
    ]


def test_parse_sources_list_with_options_and_comments() -> None:
    text = (
        "# deb http://commented.example.invalid/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://one.example.invalid/debian bookworm main contrib\n"
        "deb-src http://two.example.invalid/debian bookworm main # trailing\n"
        "garbage line\n"
    )
    assert parse_sources_list(text) == [
        AptSource(("deb",), ("http://one.example.invalid/debian",), ("bookworm",)),
        AptSource(("deb-src",), ("http://two.example.invalid/debian",), ("bookworm",)),
    ]


def test_host_apt_mirror_picks_exact_suite(tmp_path: Path) -> None:
    (tmp_path / "debian.sources").write_text(DEB822)
    listing = tmp_path / "sources.list"
    listing.write_text("deb http://legacy.example.invalid/debian trixie main\n")
    assert host_apt_mirror("bookworm", sources_dir=tmp_path, sources_list=listing) == (
        "http://mirror.example.invalid/debian"
    )
    assert (
        host_apt_mirror("trixie", sources_dir=tmp_path, sources_list=listing) == "http://legacy.example.invalid/debian"
    )
    with pytest.raises(InfraError) as caught:
        host_apt_mirror("bullseye", sources_dir=tmp_path, sources_list=listing)
    assert caught.value.kind == "base_image_unavailable" and "docker load" in caught.value.message


@pytest.fixture
def docker_sdk() -> ModuleType:
    """The docker SDK (its error types); the requesting test is skipped without it."""
    return pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")


class _Images:
    def __init__(self, sdk: ModuleType) -> None:
        self.errors = sdk.errors

    def get(self, name: str) -> object:
        raise self.errors.ImageNotFound(f"no such image: {name}")

    def pull(self, repository: str, tag: str) -> object:
        raise self.errors.APIError("Get https://registry/v2/: dial tcp: lookup registry: no such host")


class _NoImageClient:
    def __init__(self, sdk: ModuleType) -> None:
        self.images = _Images(sdk)


def test_missing_debootstrap_says_how_to_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker_sdk: ModuleType
) -> None:
    monkeypatch.setenv("PYTEST_MOBILEBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(baseimage.shutil, "which", lambda _name: None)
    lines: list[str] = []
    with pytest.raises(InfraError) as caught:
        ensure_base_image(
            _NoImageClient(docker_sdk), "debian:bookworm-slim", progress=lines.append, mirror="http://m.invalid/debian"
        )  # type: ignore[arg-type]
    assert caught.value.kind == "base_image_unavailable"
    assert "apt-get install -y debootstrap" in caught.value.message and "docker load" in caught.value.message
    assert any(line.startswith("pull of debian:bookworm-slim failed") for line in lines)


def test_non_debian_image_cannot_be_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker_sdk: ModuleType
) -> None:
    monkeypatch.setenv("PYTEST_MOBILEBENCH_CACHE", str(tmp_path))
    with pytest.raises(InfraError) as caught:
        ensure_base_image(_NoImageClient(docker_sdk), "ubuntu:24.04")  # type: ignore[arg-type]
    assert caught.value.kind == "base_image_unavailable" and "docker load" in caught.value.message


def test_cache_root_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_MOBILEBENCH_CACHE", str(tmp_path / "c"))
    assert baseimage.cache_root() == tmp_path / "c" and (tmp_path / "c").is_dir()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Owner/Repo", "owner__repo"),
        ("thunderbird__thunderbird-android-9021", "thunderbird__thunderbird-android-9021"),
        ("A..b", "a-b"),
        ("x___y", "x-y"),
        ("-_a.-b_", "a-b"),
        ("we!rd name", "we-rd-name"),
        ("a--b", "a--b"),
    ],
)
def test_docker_name(text: str, expected: str) -> None:
    assert docker_name(text) == expected


def test_docker_name_rejects_empty() -> None:
    with pytest.raises(ValueError, match="cannot make a docker image name"):
        docker_name("___")


def test_content_hash_is_length_prefixed() -> None:
    assert content_hash("ab", "c") != content_hash("a", "bc")
    assert content_hash("x", b"y") == content_hash(b"x", "y")
    assert len(content_hash()) == 64


def test_base_dockerfile_installs_tools_and_ca_env() -> None:
    text = base_dockerfile()
    assert text.startswith("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    for package in ("git", "ca-certificates", "patch", "python3", "build-essential"):
        assert f" {package}" in text
    assert "update-ca-certificates" in text
    for variable in ("NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        assert f"{variable}=/etc/ssl/certs/ca-certificates.crt" in text


def test_instance_dockerfile_shape() -> None:
    text = instance_dockerfile("mobilebench/env.a__b:0123456789ab", "npm ci --ignore-scripts")
    lines = text.splitlines()
    assert lines[0] == "FROM mobilebench/env.a__b:0123456789ab"
    assert "COPY testbed /testbed" in lines and "WORKDIR /testbed" in lines
    # one build step: install (a shell of its own), then the baseline
    assert sum(line.startswith("RUN ") for line in lines) == 1
    script = _run_script(lines[-1]).splitlines()
    assert script[1:] == ["/bin/bash -c 'set -e; npm ci --ignore-scripts'", "/usr/local/bin/mobilebench-baseline"]
    assert "useradd" not in text and "LABEL" not in text and "--chown" not in text  # no test user declared: root


def _run_script(line: str) -> str:
    """The bash script of a ``RUN ["/bin/bash", "-c", script]`` line (syntax-checked)."""
    assert line.startswith("RUN ")
    argv = json.loads(line[4:])
    assert argv[:2] == ["/bin/bash", "-c"]
    check = subprocess.run(["bash", "-n"], input=argv[2], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    return argv[2]


def test_instance_dockerfile_hands_node_images_to_the_test_user() -> None:
    lines = instance_dockerfile("e:1", "npm ci", test_user=NODE_TEST_USER).splitlines()
    assert lines[1] == f"COPY --chown={TEST_USER} testbed /testbed"  # owned by the test user from the start
    (run,) = [line for line in lines if line.startswith("RUN ")]
    script = _run_script(run).splitlines()
    assert script[1] == "/bin/bash -c 'set -e; npm ci'"
    assert script[2] == f"useradd --uid 10001 --user-group --create-home --shell /bin/bash {TEST_USER_NAME}"
    # no walk re-owning every file: only what is not the user's yet (the install's output) is changed
    assert script[3] == (
        "find /testbed \\( -name node_modules \\) -prune -o \\( ! -user 10001 -o ! -group 10001 \\) "
        "-exec chown -h 10001:10001 {} +"
    )
    assert script[4].startswith("setpriv --reuid=10001 --regid=10001 --init-groups -- ")  # baseline as the user
    assert script[4].endswith("/usr/local/bin/mobilebench-baseline")
    assert 'mkdir -p "$d"/.cache && chown 10001:10001 "$d"/.cache' in script[5]
    assert lines[lines.index(run) + 1 :] == [f'LABEL {LABEL_USER}="{TEST_USER}"']


def test_instance_dockerfile_runs_the_recipe_handover_and_sets_its_environment() -> None:
    lines = instance_dockerfile("e:1", "", test_user=GRADLE_TEST_USER).splitlines()
    (run,) = [line for line in lines if line.startswith("RUN ")]
    script = _run_script(run)
    head, handover = script.split("\n", 5)[:5], script.split("\n", 5)[5]
    # nothing under /testbed stays root's (no root_dirs): every file not the user's yet is given to it
    assert head[3] == f"find /testbed \\( ! -user 10001 -o ! -group 10001 \\) -exec chown -h {TEST_USER} {{}} +"
    assert handover == GRADLE_TEST_USER.handover.strip()  # after the user exists and owns the tree
    at = lines.index(run)
    assert lines[at + 1] == 'ENV GRADLE_RO_DEP_CACHE="/opt/gradle-home/caches" GRADLE_USER_HOME="/opt/gradle-test-home"'
    assert lines[at + 2 :] == [f'LABEL {LABEL_USER}="{TEST_USER}"']


def test_baseline_script_excludes_new_files_and_commits_changed_ones(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "lock.json").write_text("{}\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "node_modules" / "x").mkdir(parents=True)
    (repo / "node_modules" / "x" / "index.js").write_text("1\n")
    (repo / "lock.json").write_text('{"resolved": true}\n')
    script = tmp_path / "baseline.sh"
    script.write_text(BASELINE_SCRIPT)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x.invalid",
    }
    subprocess.run(["bash", str(script)], cwd=repo, env=env, check=True)
    assert git(repo, "status", "--porcelain") == ""
    assert "/node_modules/" in (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert git(repo, "rev-parse", "HEAD~1") == base
    assert git(repo, "rev-parse", "mobilebench-base") == git(repo, "rev-parse", "HEAD")
    assert git(repo, "show", "mobilebench-base:lock.json") == '{"resolved": true}'


def test_shallow_checkout_is_self_contained(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("one\n")
    git(src, "init", "-q")
    git(src, "add", "-A")
    git(src, "commit", "-qm", "1")
    first = git(src, "rev-parse", "HEAD")
    (src / "a.txt").write_text("two\n")
    git(src, "commit", "-qam", "2")
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(src), str(mirror)], check=True)
    dest = tmp_path / "dest"
    assert shallow_checkout(mirror, first[:10], dest) == first
    assert (dest / "a.txt").read_text() == "one\n"
    assert git(dest, "rev-parse", "mobilebench-base") == first
    assert not (dest / ".git" / "objects" / "info" / "alternates").exists()
    assert (dest / ".git" / "shallow").read_text().strip() == first
    with pytest.raises(InfraError) as caught:
        shallow_checkout(mirror, "0" * 40, tmp_path / "other")
    assert caught.value.kind == "clone_failed"


def test_daemon_unreachable(monkeypatch: pytest.MonkeyPatch, docker_sdk: ModuleType) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(InfraError) as caught:
        connect(timeout_s=2)
    assert caught.value.kind == "daemon_unreachable" and "dockerd" in caught.value.message


def test_bounded_output_keeps_head_and_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_mobilebench.runtime import output

    monkeypatch.setattr(output, "HEAD_BYTES", 4)
    monkeypatch.setattr(output, "TAIL_BYTES", 6)
    out = BoundedOutput()
    for chunk in (b"abcdef", b"ghij", b"klmnop"):
        out.add(chunk)
    text = out.text()
    assert text.startswith("abcd") and text.endswith("klmnop")
    assert "[... 6 bytes of output dropped ...]" in text
    small = BoundedOutput()
    small.add(b"ok")
    assert small.text() == "ok"


def test_owner_label_liveness() -> None:
    mine = owner_label()
    assert owner_alive(mine) is True
    host = mine.split(":")[0]
    assert owner_alive(f"{host}:{os.getpid()}:1") is False  # same pid, other start time: a reused pid
    assert owner_alive("some-other-host:1:1") is None


class _FakeImages:
    def __init__(self, sdk: ModuleType) -> None:
        self.errors = sdk.errors

    def get(self, name: str) -> object:
        raise self.errors.ImageNotFound(name)


class _FakeAPI:
    def __init__(self, chunks: list[dict[str, object]]) -> None:
        self.chunks = chunks

    def build(self, **_kwargs: object) -> object:
        return iter(self.chunks)


class _FakeBuildClient:
    def __init__(self, chunks: list[dict[str, object]], sdk: ModuleType) -> None:
        self.api = _FakeAPI(chunks)
        self.images = _FakeImages(sdk)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("write /var/lib/docker/tmp/x: no space left on device", "disk_full"),
        ("The command '/bin/sh -c exit 3' returned a non-zero code: 3", "image_build_failed"),
    ],
)
def test_build_errors_are_mapped(tmp_path: Path, message: str, kind: str, docker_sdk: ModuleType) -> None:
    from pytest_mobilebench.runtime.images import ImageBuilder

    chunks: list[dict[str, object]] = [
        {"stream": "Step 1/2 : FROM x\n"},
        {"stream": "\x1b[91mcolour\x1b[0m line\n"},
        {"error": message, "errorDetail": {"message": message}},
    ]
    lines: list[str] = []
    builder = ImageBuilder(
        _FakeBuildClient(chunks, docker_sdk), log_dir=tmp_path, lock_dir=tmp_path, progress=lines.append
    )  # type: ignore[arg-type]
    with pytest.raises(InfraError) as caught:
        builder._ensure("mobilebench/t:abc", "env", "inputs", "FROM x\n", lambda _tar: None, {}, None)
    assert caught.value.kind == kind
    assert message in caught.value.log and "colour line" in caught.value.log  # ANSI colours stripped
    log = tmp_path / "mobilebench_t_abc.build.log"
    assert log.read_text() == caught.value.log
    assert lines[0].startswith("building mobilebench/t:abc (env layer)") and "Step 1/2 : FROM x" in lines[1]


def test_runtime_options_are_validated(tmp_path: Path) -> None:
    from pytest_mobilebench.runtime.docker import DockerRuntime

    with pytest.raises(ValueError, match="cache_level must be one of"):
        DockerRuntime(cache_level="everything")
    with pytest.raises(ValueError, match="is not a file"):
        DockerRuntime(ca_bundle=tmp_path / "missing.pem")
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    runtime = DockerRuntime(ca_bundle=bundle, cpus=1.5, mem_limit="1g", pids_limit=256)
    assert (runtime.ca_bundle, runtime.nano_cpus, runtime.mem_limit, runtime.pids_limit) == (
        bundle,
        1_500_000_000,
        "1g",
        256,
    )
    assert DockerRuntime(ca_bundle=None).ca_bundle is None and DockerRuntime.name == "docker"


def test_the_runtime_packs_what_the_recipe_declares() -> None:
    """No framework name: the npm tarballs packed on the host are the recipe's own ``context_packages``."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "recipes"
    node = infer_recipe(fixtures / "rn-yarn-berry", "react-native")
    assert default_node_packages(node) == dict(node.context_packages) and "npm.tgz" in node.context_packages
    assert default_node_packages(infer_recipe(fixtures / "android-groovy", "android")) == {}
    assert default_node_packages(dataclasses.replace(node, context_packages={"x.tgz": "x@1"})) == {"x.tgz": "x@1"}


def test_the_daemon_clock_offset_reads_docker_info() -> None:
    """Event windows are asked in the daemon's time: a daemon 3 years ahead is ~9.5e7 s ahead; no reading is 0."""
    from pytest_mobilebench.runtime.daemon import daemon_clock_offset

    class Api:
        def __init__(self, answer: object) -> None:
            self.answer = answer

        def info(self) -> dict:
            if isinstance(self.answer, Exception):
                raise self.answer
            return {"SystemTime": self.answer}

    class Client:
        def __init__(self, answer: object) -> None:
            self.api = Api(answer)

    ahead = daemon_clock_offset(
        Client(time.strftime("%Y-%m-%dT%H:%M:%S.123456789Z", time.gmtime(time.time() + 3 * 365 * 86400)))
    )
    assert abs(ahead - 3 * 365 * 86400) < 5
    assert daemon_clock_offset(Client(OSError("gone"))) == 0.0
    assert daemon_clock_offset(Client("not a time")) == 0.0


def test_the_daemon_clock_offset_is_never_under_the_truth() -> None:
    """The daemon stamps ``SystemTime`` early and answers later (it runs ``runc --version`` and more): on one
    clock, an answer 0.4 s after its stamp must not read as the daemon being behind, or event windows end
    before what a run just met. Over by the request's way to the stamp is allowed."""
    from pytest_mobilebench.runtime.daemon import daemon_clock_offset

    class Api:
        def info(self) -> dict:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now := time.time())) + f".{int(now % 1 * 1e9):09d}Z"
            time.sleep(0.4)  # the rest of the answer's work, after the stamp
            return {"SystemTime": stamp}

    class Client:
        api = Api()

    assert 0.0 <= daemon_clock_offset(Client()) < 0.1


def test_daemon_time_stamps_are_read_to_the_nanosecond() -> None:
    """``State.StartedAt`` and event ``timeNano`` are compared on the daemon's own clock (numbers by
    calendar.timegm: 2026-12-03 14:12:15 UTC is 1796307135 s)."""
    from pytest_mobilebench.runtime.daemon import rfc3339_ns

    assert rfc3339_ns("2026-12-03T14:12:15.123456789Z") == 1796307135_123456789
    assert rfc3339_ns("2026-12-03T15:12:15.5+01:00") == 1796307135_500000000
    assert rfc3339_ns("2026-12-03T14:12:15Z") == 1796307135_000000000
    assert rfc3339_ns("0001-01-01T00:00:00Z") < 0  # Docker's zero time: before every event
    assert rfc3339_ns("") is None and rfc3339_ns("2026-12-03 14:12:15") is None and rfc3339_ns("1.5") is None
