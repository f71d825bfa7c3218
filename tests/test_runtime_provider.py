"""The runtime-provider seam: providers are registered by name and checked, ``mb_runtime`` hands every
container suite the same runtime, and the controller finishes each provider the run used.

A conftest registers a fake provider; the issue-resolution instance and a device record with
``plan.kind: gradle`` both reach it (the gradle record used to hit ``ctx.fixture("mb_docker_client")``,
which device repair never declared: ``KeyError`` -> ``harness_error``).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.provider import (
    COMMON_OPTIONS,
    DockerProvider,
    LocalProvider,
    ProviderContext,
    ProviderContractError,
    ProviderRegistry,
    RuntimeSource,
    builtin_providers,
    used_providers,
)
from pytest_mobilebench.suites import builtin_registry

ROOT = Path(__file__).resolve().parents[1]
CALC = ROOT / "cases" / "device_repair" / "mobilebench__calc.yaml"
CALC_BUNDLE = ROOT / "fixtures" / "device_repair" / "mobilebench+calc.bundle"


class _Runtime:
    def __init__(self, name: str) -> None:
        self.name = name


class _Provider:
    """A provider that counts its calls (no workspace is ever prepared)."""

    options = ()

    def __init__(self, name: str, *, available: bool = True) -> None:
        self.name = name
        self.is_available = available
        self.calls: list[tuple[str, Any]] = []

    def available(self, ctx: ProviderContext) -> bool:
        return self.is_available

    def start(self, ctx: ProviderContext) -> None:
        self.calls.append(("start", ctx.run_id))

    def sweep(self, options: Any, run_id: str) -> None:
        self.calls.append(("sweep", run_id))

    def make(self, ctx: ProviderContext, trusted: bool) -> _Runtime:
        self.calls.append(("make", trusted))
        return _Runtime(self.name)

    def finish(self, options: Any, run_id: str, cache_level: str | None) -> None:
        self.calls.append(("finish", (run_id, cache_level)))


def _ctx(**options: Any) -> ProviderContext:
    return ProviderContext(options=options, run_id="r1", progress=lambda _line: None, fixture=lambda name: None)


def test_a_provider_missing_members_is_refused_naming_each() -> None:
    class Partial:
        name = "partial"

        def make(self, ctx: Any, trusted: bool) -> None: ...

    with pytest.raises(ProviderContractError) as info:
        ProviderRegistry().register(Partial())  # type: ignore[arg-type]
    message = str(info.value)
    for member in ("options", "available", "start", "finish"):
        assert repr(member) in message
    assert "'make'" not in message and "'name'" not in message


def test_names_and_options_are_checked_at_registration() -> None:
    registry = builtin_providers()
    assert list(registry) == ["docker", "local"]  # the order auto tries them
    with pytest.raises(ValueError, match="already registered"):
        registry.register(LocalProvider())
    with pytest.raises(ValueError, match="registered as 'k8s' but its name is 'local'"):
        registry["k8s"] = LocalProvider()
    with pytest.raises(ProviderContractError, match="other than 'auto'"):
        registry.register(_Provider("auto"))  # type: ignore[arg-type]
    clash = _Provider("clash")
    clash.options = (COMMON_OPTIONS[0],)  # type: ignore[assignment]
    with pytest.raises(ValueError, match="mb_runtime"):
        registry.register(clash)  # type: ignore[arg-type]


def test_runtime_options_belong_to_the_providers_not_to_a_suite() -> None:
    registry = builtin_providers()
    runtime_dests = {o.dest for o in registry.options()}
    assert {
        "mb_runtime",
        "mb_trust_candidates",
        "mb_repo_url_template",
        "mb_docker_hosts",
        "mb_registry",
        "mb_image_budget",
        "mb_cache_level",
        "mb_force_rebuild",
        "mb_ca_bundle",
        "mb_mem_limit",
        "mb_cpus",
        "mb_pids_limit",
    } <= runtime_dests
    for suite in builtin_registry().values():
        assert not runtime_dests & {o.dest for o in suite.options}, suite.name
    # the clone template is not keyed: the same commits from a mirror reuse the cache (keyed by content)
    assert {o.dest for o in registry.keyed_for(("mb_runtime",))} == {"mb_runtime"}
    assert registry.keyed_for(("mb_browser",)) == []


def test_the_source_starts_once_makes_once_per_trust_and_says_what_it_used() -> None:
    registry = ProviderRegistry()
    docker, local = _Provider("docker", available=False), _Provider("local")
    registry.register(docker)  # type: ignore[arg-type]
    registry.register(local)  # type: ignore[arg-type]
    source = RuntimeSource(registry, _ctx(mb_runtime="auto"))
    first = source.get()
    assert source.get() is first and source.get(trusted=True) is not first
    assert local.calls == [("start", "r1"), ("make", False), ("make", True)]
    assert docker.calls == [] and source.used == ["local"]
    trusting = RuntimeSource(registry, _ctx(mb_runtime="local", mb_trust_candidates=True))
    trusting.get()
    assert local.calls[-1] == ("make", True)  # --mb-trust-candidates makes every item trusted


def test_the_hook_runtime_comes_first_and_an_unknown_name_is_infrastructure() -> None:
    registry = ProviderRegistry()
    registry.register(_Provider("local"))  # type: ignore[arg-type]
    hooked = _Runtime("pod")
    source = RuntimeSource(registry, _ctx(mb_runtime="local"), hook=lambda trusted: hooked)
    assert source.get() is hooked and source.used == ["pod"]
    with pytest.raises(InfraError, match="no such runtime provider"):
        RuntimeSource(registry, _ctx(mb_runtime="k8s")).get()


def test_the_builtin_providers_refuse_without_a_daemon_or_trust() -> None:
    with pytest.raises(InfraError) as info:
        DockerProvider().make(_ctx(mb_runtime="docker"), trusted=True)
    assert info.value.kind == "daemon_unreachable"
    assert not DockerProvider().available(_ctx())
    with pytest.raises(InfraError) as info:
        LocalProvider().make(_ctx(mb_runtime="auto"), trusted=False)
    assert info.value.kind == "daemon_unreachable"  # auto never runs a real candidate unisolated
    with pytest.raises(InfraError) as info:
        LocalProvider().make(_ctx(mb_runtime="local"), trusted=False)
    assert info.value.kind == "untrusted_local_run"


def test_finish_runs_once_per_used_provider() -> None:
    registry = ProviderRegistry()
    used, unused = _Provider("docker"), _Provider("local")
    registry.register(used)  # type: ignore[arg-type]
    registry.register(unused)  # type: ignore[arg-type]
    results = [{"runtimes": ["docker"]}, {"runtimes": ["docker", "pod"]}, {}]
    assert used_providers(results) == ["docker", "pod"]
    assert registry.finish_used(results, {"mb_cache_level": "none"}, "r9") == ([], [])
    assert used.calls == [("finish", ("r9", "none"))] and unused.calls == []


def test_the_run_level_sweep_reaches_every_registered_provider_and_never_stops_the_run() -> None:
    """The controller's sweep (``report.runs.start_run``) goes through the registry: every provider, used or not,
    sweeps once; one that raises is reported in words and the others still sweep."""
    from pytest_mobilebench.report.runs import start_run

    class Broken(_Provider):
        def sweep(self, options: Any, run_id: str) -> None:
            raise OSError("the pod API is down")

    registry = ProviderRegistry()
    first, broken, last = _Provider("docker"), Broken("pod"), _Provider("local")
    for provider in (first, broken, last):
        registry.register(provider)  # type: ignore[arg-type]
    assert start_run(registry, {}, "r7") == ["runtime pod: sweep: OSError: the pod API is down"]
    assert first.calls == [("sweep", "r7")] and last.calls == [("sweep", "r7")]
    runs = (ROOT / "pytest_mobilebench" / "report" / "runs.py").read_text(encoding="utf-8")
    assert "docker" not in runs.lower() and "runtime.daemon" not in runs  # no provider's own calls in the report


FAKE_PROVIDER_CONFTEST = """
import contextlib
from pathlib import Path
import pytest
from pytest_mobilebench.runtime.base import InfraError

LOG = Path(__file__).parent / "provider.log"


def _log(line):
    with LOG.open("a") as fh:
        fh.write(line + "\\n")


class FakeRuntime:
    name = "fake"

    def prepare(self, spec, *, log_dir=None):
        _log(f"prepare {spec.instance_id} {spec.environment.get('framework')}")
        raise InfraError("workspace_error", "the fake provider prepares nothing")

    def sandbox(self, spec, instance_id, *, log_dir=None):
        _log(f"sandbox {instance_id} {spec.name} {sorted(spec.tree)[0]}")
        raise InfraError("workspace_error", "the fake provider opens no sandbox")


class FakeProvider:
    name = "fake"
    options = ()

    def available(self, ctx):
        return True

    def start(self, ctx):
        _log("start")

    def sweep(self, options, run_id):
        _log("sweep")

    def make(self, ctx, trusted):
        _log(f"make trusted={trusted}")
        return FakeRuntime()

    def finish(self, options, run_id, cache_level):
        _log(f"finish {run_id} {cache_level}")


def pytest_mobilebench_register_runtimes(registry):
    registry.register(FakeProvider())


class _Device:
    serial = "fake-serial"
    log = None


class _Pool:
    @contextlib.contextmanager
    def repository(self, repo, timeout_s):
        yield

    @contextlib.contextmanager
    def lease(self, owner, timeout_s):
        yield _Device()


@pytest.fixture(scope="session")
def mb_device_pool():
    return _Pool()
"""

ISSUE_MANIFEST = """\
suite: issue_resolution
repo: acme/app
framework: react-native
instances:
  - instance_id: acme__app-1
    base_commit: 0123456789abcdef0123456789abcdef01234567
    patch: "--- a/a.js\\n+++ b/a.js\\n@@ -1 +1 @@\\n-a\\n+b\\n"
    test_patch: "--- a/a.test.js\\n+++ b/a.test.js\\n@@ -1 +1 @@\\n-a\\n+b\\n"
    FAIL_TO_PASS: [x]
"""


def gradle_record(build_app: str, build_test: str) -> str:
    """The bundled calc record with ``plan.kind: gradle``, its own build commands and an absolute bundle URL."""
    text = CALC.read_text(encoding="utf-8")
    head, _, rest = text.partition("plan:\n")
    _, _, tail = rest.partition("  app_artifact:")
    head = head.replace("../../fixtures/device_repair/mobilebench+calc.bundle", str(CALC_BUNDLE))
    plan = (
        f'plan:\n  kind: gradle\n  toolchain: {{jdk: "17"}}\n  build_app: {json.dumps(build_app)}\n'
        f"  build_test: {json.dumps(build_test)}\n  app_artifact:"
    )
    return head + plan + tail


def test_a_conftest_provider_serves_every_container_suite(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(FAKE_PROVIDER_CONFTEST)
    pytester.makefile(".yaml", app=ISSUE_MANIFEST)
    (pytester.path / "calc.yaml").write_text(gradle_record("gradle assembleDebug", "gradle assembleDebugAndroidTest"))
    result = pytester.runpytest(
        "--predictions=gold",
        "--mb-runtime=fake",
        "--mb-device-retries=0",
        "--mb-cache-level=base",
        "--mb-run-id=fake-run",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=2)
    log = (pytester.path / "provider.log").read_text().splitlines()
    assert log[:2] == ["sweep", "start"] and log.count("start") == 1 and log.count("make trusted=True") == 1
    assert log.count("sweep") == 1  # the controller's run-level sweep, once
    assert "prepare acme__app-1 react-native" in log
    assert "prepare mobilebench__calc-1 android" in log  # the gradle record reached the provider's runtime
    assert log[-1] == "finish fake-run base" and sum(line.startswith("finish") for line in log) == 1
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    kinds = {i: e.get("infra_kind") for i, e in summary["instances"].items()}
    assert set(kinds.values()) == {"workspace_error"}, kinds  # not harness_error (the KeyError of old)
    # app generation: a candidate's project reaches the same provider, for a build sandbox (never the host)
    (pytester.path / "provider.log").unlink()
    apps = pytester.mkdir("apps")
    manifest = (ROOT / "cases" / "app_generation" / "tabs_demo.yaml").read_text(encoding="utf-8")
    (apps / "tabs_demo.yaml").write_text(manifest.replace("../../fixtures/", f"{ROOT / 'fixtures'}/"))
    (pytester.path / "proj" / "src").mkdir(parents=True)
    (pytester.path / "proj" / "src" / "main.tsx").write_text("export {};\n")
    pytester.makefile(
        ".jsonl",
        apps_preds=json.dumps({"instance_id": "tabs_demo", "model_name_or_path": "m", "project_path": "proj"}) + "\n",
    )
    result = pytester.runpytest(
        "apps", "--predictions=apps_preds.jsonl", "--mb-runtime=fake", "--mb-run-id=fake-apps", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    log = (pytester.path / "provider.log").read_text().splitlines()
    assert log == [
        "sweep",
        "start",
        "make trusted=False",
        "sandbox tabs_demo app-scaffold index.html",
        "finish fake-apps env",
    ]
    row = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())["instances"]["tabs_demo"]
    assert (row["reason"], row.get("infra_kind")) == ("infra_error", "workspace_error"), row


def test_an_unknown_runtime_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", app=ISSUE_MANIFEST)
    result = pytester.runpytest("--predictions=gold", "--mb-runtime=k8s", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mb-runtime=k8s: no such runtime provider (auto, docker, local)*"])


def test_the_hook_overrides_the_registry_for_every_suite(pytester: pytest.Pytester) -> None:
    """A conftest's ``pytest_mobilebench_make_runtime`` wins over ``--mb-runtime`` (firstresult)."""
    pytester.makeconftest(
        FAKE_PROVIDER_CONFTEST
        + textwrap.dedent("""
        def pytest_mobilebench_make_runtime(config, options, run_id, trusted):
            _log(f"hook {run_id} trusted={trusted}")
            return FakeRuntime()
        """)
    )
    pytester.makefile(".yaml", app=ISSUE_MANIFEST)
    result = pytester.runpytest(
        "--predictions=gold", "--mb-runtime=local", "--mb-run-id=hooked", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    log = (pytester.path / "provider.log").read_text().splitlines()
    # every registered provider sweeps, the one --mb-runtime names or not; then the hook's runtime serves
    assert log[:3] == ["sweep", "hook hooked trusted=True", "prepare acme__app-1 react-native"]
    assert log[-1] == "finish hooked env"  # the hook's runtime is named 'fake': that provider cleans up


def test_the_registry_choice_is_the_hook_default_answer(pytester: pytest.Pytester) -> None:
    """With no plugin answering, ``pytest_mobilebench_make_runtime`` still answers: its last implementation is the
    plugin's, the registry's provider for ``--mb-runtime`` (a wrapper around the hook sees that runtime)."""
    pytester.makeconftest(
        FAKE_PROVIDER_CONFTEST
        + textwrap.dedent("""
        @pytest.hookimpl(wrapper=True)
        def pytest_mobilebench_make_runtime(config, options, run_id, trusted):
            runtime = yield
            _log(f"hook answered {getattr(runtime, 'name', runtime)} trusted={trusted}")
            return runtime
        """)
    )
    pytester.makefile(".yaml", app=ISSUE_MANIFEST)
    result = pytester.runpytest("--predictions=gold", "--mb-runtime=fake", "--mb-run-id=dflt", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    log = (pytester.path / "provider.log").read_text().splitlines()
    assert log[:5] == [
        "sweep",
        "start",
        "make trusted=True",
        "hook answered fake trusted=True",
        "prepare acme__app-1 react-native",
    ]


def test_what_a_provider_keeps_is_said_at_the_end_of_the_run() -> None:
    """A provider's line about what it kept (the Docker provider: images and their size) reaches the summary's
    ``kept`` and the terminal's closing lines."""
    from pytest_mobilebench.report.terminal import headline_lines

    class Keeping(_Provider):
        def finish(self, options: Any, run_id: str, cache_level: str | None) -> str:
            super().finish(options, run_id, cache_level)
            return "docker: 3 harness images kept (1.02 GB, --mb-cache-level=env)"

    registry = ProviderRegistry()
    registry.register(Keeping("docker"))  # type: ignore[arg-type]
    errors, notes = registry.finish_used([{"runtimes": ["docker"]}], {"mb_cache_level": "env"}, "r1")
    assert (errors, notes) == ([], ["docker: 3 harness images kept (1.02 GB, --mb-cache-level=env)"])
    lines = headline_lines({"run_id": "r1", "models": ["m"], "kept": notes})
    assert "kept: docker: 3 harness images kept (1.02 GB, --mb-cache-level=env)" in lines
