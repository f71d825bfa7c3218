"""The suite seam: suites declare their options, markers, columns, fixtures and loaders; the plugin names none.

A third-party suite registered from a ``conftest.py`` gets its own command-line option, marker and report
column and runs under ``-n 2``; the resources items use are pytest fixtures a conftest overrides; a suite
that does not implement the protocol is refused at registration with every missing member named.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_mobilebench.suites import SuiteRegistry, UnavailableSuite, builtin_registry
from pytest_mobilebench.suites.base import Column, Option, SuiteContractError, check_suite

#: a complete third-party suite: records are ``{id, answer}``; a prediction passes when it says the answer
THIRD_PARTY_CONFTEST = """
import enum, json, os
from pathlib import Path
import pytest
from pytest_mobilebench.suites.base import Column, Option
from pytest_mobilebench.records import LoadedRecord, ManifestError


class EchoReason(str, enum.Enum):
    OK = "ok"
    WRONG = "wrong"
    FLAKY_ORACLE = "flaky_oracle"

    @property
    def is_infra(self):
        return self is EchoReason.FLAKY_ORACLE


class EchoSuite:
    name = "echo"
    options = (Option(("--echo-bonus",), "echo_bonus", "added to every score", default=0, type=int,
                      env="ECHO_BONUS", keyed=True),)
    markers = {"echo": "the echo suite", "loud": "loud echo records"}
    columns = (Column("Score", "score"),)
    fixtures = ("echo_oracle",)
    fixture_module = None
    reasons = EchoReason

    def load(self, path, document):
        out = []
        for entry in document.data["instances"]:
            if "answer" not in entry:
                out.append(ManifestError(path, "Field required", instance_id=entry.get("id"), field="answer"))
                continue
            out.append(LoadedRecord(suite="echo", instance_id=entry["id"], source=path, line=None,
                                    record=dict(entry), group="echo", markers=("echo", *entry.get("markers", ()))))
        return out

    def load_dataset(self, path, options):
        return None

    def evaluate(self, record, prediction, ctx):
        said = (prediction or {}).get("model_patch")
        if said == "raise":
            raise RuntimeError("the suite broke")
        if said == "bogus":
            return {"reason": "splendid", "passed": True, "properties": {}}
        if said == "oracle-down":  # an infra reason the suite forgets to call retryable
            return {"reason": "flaky_oracle", "passed": False, "retryable": False, "properties": {}}
        oracle = ctx.fixture("echo_oracle")
        ok = oracle(record.record["answer"], said)
        score = int(ok) + int(ctx.options["echo_bonus"])
        (ctx.evidence_dir / "worker.txt").write_text(os.environ.get("PYTEST_XDIST_WORKER", "main"))
        return {"reason": "ok" if ok else "wrong", "passed": ok, "retryable": False,
                "properties": {"score": score}}

    def summarize(self, results, *, options=None):
        n = sum(1 for r in results if r["passed"])
        return {"headline": {"label": "echo rate", "numerator": n, "denominator": len(results),
                             "value": n / len(results) if results else None, "ci95": None, "note": "all items"}}

    def cache_material(self, record, prediction, options):
        return None

    def finish_run(self, options, run_id, results):
        Path("finished.txt").write_text(str(len(results)))

    def regrade(self, record, evidence_dir):
        return {}

    def live_model(self, options):
        return None


def pytest_mobilebench_register_suites(registry):
    registry.register(EchoSuite())


@pytest.fixture(scope="session")
def echo_oracle():
    return lambda answer, said: said == answer
"""

ECHO_MANIFEST = """\
suite: echo
instances:
  - {id: echo-1, answer: "yes", markers: [loud]}
  - {id: echo-2, answer: "no"}
  - {id: echo-3, answer: "maybe"}
"""


def _preds(path: Path, answers: dict[str, str]) -> None:
    path.write_text(
        "".join(
            json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": a}) + "\n"
            for i, a in answers.items()
        )
    )


@pytest.mark.e2e
def test_a_third_party_suite_from_a_conftest_runs_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(THIRD_PARTY_CONFTEST)
    pytester.makefile(".yaml", echo=ECHO_MANIFEST)
    _preds(pytester.path / "p.jsonl", {"echo-1": "yes", "echo-2": "yes", "echo-3": "maybe"})
    result = pytester.runpytest(
        "--predictions=p.jsonl", "--echo-bonus=10", "-n", "2", "-p", "no:cacheprovider", "--junitxml=j.xml"
    )
    result.assert_outcomes(passed=2, failed=1)
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    assert summary["suite_tables"]["echo"]["headline"]["numerator"] == 2
    junit = (pytester.path / "j.xml").read_text()
    assert 'name="score" value="11"' in junit and 'name="score" value="10"' in junit  # the option reached evaluate
    assert (pytester.path / "finished.txt").read_text() == "3"
    workers = {p.read_text() for p in (pytester.path / "reports").rglob("worker.txt")}
    assert workers <= {"gw0", "gw1"} and workers


def test_a_suites_marker_selects_and_its_option_reads_its_environment_variable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(THIRD_PARTY_CONFTEST)
    pytester.makefile(".yaml", echo=ECHO_MANIFEST)
    _preds(pytester.path / "p.jsonl", {"echo-1": "yes"})
    monkeypatch.setenv("ECHO_BONUS", "5")
    result = pytester.runpytest(
        "--predictions=p.jsonl", "-m", "loud", "--strict-markers", "-p", "no:cacheprovider", "--junitxml=j.xml"
    )
    result.assert_outcomes(passed=1)
    assert 'name="score" value="6"' in (pytester.path / "j.xml").read_text()
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--echo-bonus" in help_text and "--mb-runtime" in help_text and "--mb-chromium" in help_text


def test_a_suite_that_needs_no_fixture_collects_and_runs(pytester: pytest.Pytester) -> None:
    """``fixtures = ()`` is a valid declaration: no resource is requested (pytest refuses an empty
    ``usefixtures``), and ``ctx.fixture`` names what was declared."""
    conftest = THIRD_PARTY_CONFTEST.replace('fixtures = ("echo_oracle",)', "fixtures = ()").replace(
        'oracle = ctx.fixture("echo_oracle")', "oracle = lambda answer, said: said == answer"
    )
    pytester.makeconftest(conftest)
    pytester.makefile(".yaml", echo=ECHO_MANIFEST)
    _preds(pytester.path / "p.jsonl", {"echo-1": "yes", "echo-2": "yes"})
    result = pytester.runpytest("--predictions=p.jsonl", "-k", "echo-1 or echo-2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)


def test_a_conftest_overrides_a_suites_fixture(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(THIRD_PARTY_CONFTEST)
    sub = pytester.mkdir("strict")
    (sub / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef echo_oracle():\n    return lambda answer, said: True\n"
    )
    (sub / "echo.yaml").write_text(ECHO_MANIFEST)
    _preds(pytester.path / "p.jsonl", {"echo-1": "no", "echo-2": "no", "echo-3": "no"})
    pytester.runpytest("--predictions=p.jsonl", "strict", "-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_a_conftest_overrides_the_docker_client_the_issue_suite_uses(pytester: pytest.Pytester) -> None:
    """``mb_docker_client`` is what the issue-resolution runtime gets: a conftest's None means 'no daemon',
    so ``--mb-runtime=docker`` reports the daemon as unreachable instead of finding the real one."""
    pytester.makeconftest(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef mb_docker_client():\n"
        "    import pathlib; pathlib.Path('asked.txt').write_text('yes')\n    return None\n"
    )
    pytester.makefile(
        ".yaml",
        app=textwrap.dedent("""\
        suite: issue_resolution
        repo: acme/app
        framework: react-native
        instances:
          - instance_id: acme__app-1
            base_commit: 0123456789abcdef0123456789abcdef01234567
            patch: "--- a/a.js\\n+++ b/a.js\\n@@ -1 +1 @@\\n-a\\n+b\\n"
            test_patch: "--- a/a.test.js\\n+++ b/a.test.js\\n@@ -1 +1 @@\\n-a\\n+b\\n"
            FAIL_TO_PASS: [x]
        """),
    )
    result = pytester.runpytest("--predictions=gold", "--mb-runtime=docker", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert (pytester.path / "asked.txt").read_text() == "yes"
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    (entry,) = summary["instances"].values()
    assert entry["reason"] == "infra_error"


@pytest.mark.chromium
def test_a_conftest_overrides_the_browser_with_a_remote_one_over_cdp(pytester: pytest.Pytester) -> None:
    """A browser reached over CDP (started by the conftest, as a remote browser would be) navigates the
    bundled app; the default fixture would have launched its own."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("Debian's chromium is not installed")
    pytest.importorskip("playwright")
    root = Path(__file__).resolve().parents[1]
    pytester.makeconftest(
        textwrap.dedent(f"""\
        import socket, subprocess, time, pathlib, tempfile, urllib.request
        import pytest

        @pytest.fixture(scope="session")
        def mb_browser():
            from playwright.sync_api import sync_playwright
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
            proc = subprocess.Popen(["{chromium}", "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", f"--remote-debugging-port={{port}}", "--remote-debugging-address=127.0.0.1",
                f"--user-data-dir={{tempfile.mkdtemp()}}", "about:blank"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{{port}}/json/version", timeout=1); break
                except OSError:
                    time.sleep(0.1)
            pw = sync_playwright().start()
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{{port}}")
            pathlib.Path("cdp.txt").write_text("connected")
            yield browser
            browser.close(); pw.stop(); proc.kill(); proc.wait()
        """)
    )
    manifest = (root / "cases" / "app_generation" / "tabs_demo.yaml").read_text()
    manifest = manifest.replace("../../fixtures/", f"{root}/fixtures/")
    pytester.makefile(".yaml", tabs_demo=manifest)
    pred = {
        "instance_id": "tabs_demo",
        "model_name_or_path": "good",
        "project_path": str(root / "fixtures/apps/tabs_demo"),
        "prebuilt_dist": str(root / "fixtures/apps/tabs_demo/dist"),
        "input_tokens": 1,
        "output_tokens": 1,
        "llm_calls": 1,
        "llm_seconds": 1.0,
    }
    (pytester.path / "p.jsonl").write_text(json.dumps(pred) + "\n")
    # prebuilt_dist is the trusted-only path (issue 18): this test is about the browser seam, not the build
    result = pytester.runpytest("--predictions=p.jsonl", "-p", "no:cacheprovider", "--mb-trust-candidates")
    result.assert_outcomes(passed=1)
    assert (pytester.path / "cdp.txt").read_text() == "connected"


class _Partial:
    name = "partial"
    options = ()
    markers: dict[str, str] = {}
    columns = ()

    def load(self, path, document):  # noqa: ANN001, ANN201
        return []


def test_a_suite_missing_members_is_refused_naming_each() -> None:
    with pytest.raises(SuiteContractError) as info:
        SuiteRegistry()["partial"] = _Partial()  # type: ignore[assignment]
    message = str(info.value)
    for member in (
        "fixtures",
        "fixture_module",
        "reasons",
        "load_dataset",
        "evaluate",
        "summarize",
        "cache_material",
        "finish_run",
        "regrade",
        "live_model",
    ):
        assert repr(member) in message
    assert "'load'" not in message


def test_declarations_of_the_wrong_type_and_a_name_mismatch_are_refused() -> None:
    suite = builtin_registry()["issue_resolution"]
    with pytest.raises(SuiteContractError, match="registered as 'other'"):
        check_suite(suite, "other")

    class Wrong(type(suite)):  # type: ignore[misc]
        options = ("--flag",)
        columns = (("Verdict", "reason"),)

    with pytest.raises(SuiteContractError, match="'options' must hold.*'columns' must hold"):
        check_suite(Wrong())


def test_two_suites_may_not_declare_the_same_option() -> None:
    registry = builtin_registry()

    class Clash(type(registry["app_generation"])):  # type: ignore[misc]
        name = "clash"
        options = (Option(("--mb-instance-timeout-2",), "mb_instance_timeout", "x"),)

    with pytest.raises(ValueError, match="'mb_instance_timeout' \\(declared by 'issue_resolution'\\)"):
        registry.register(Clash())


def test_built_in_suites_declare_everything_and_the_plugin_names_none() -> None:
    registry = builtin_registry()
    for suite in registry.values():
        assert not isinstance(suite, UnavailableSuite), suite
        check_suite(suite, suite.name)
        assert suite.name in suite.markers
        assert all(isinstance(c, Column) for c in suite.columns)
    plugin = (Path(__file__).resolve().parents[1] / "pytest_mobilebench" / "plugin.py").read_text()
    for name in registry:
        assert name not in plugin, f"plugin.py names the suite {name!r}"
    for option in registry.options():
        assert option.flags[0] not in plugin, f"plugin.py declares the suite option {option.flags[0]}"


def test_an_unavailable_suite_errors_on_its_own_manifests_only(tmp_path: Path) -> None:
    broken = UnavailableSuite("web", ImportError("No module named 'tree_sitter'"))
    (error,) = broken.load(tmp_path / "a.yaml", None)
    assert "tree_sitter" in str(error) and "a.yaml" in str(error)


def test_a_suites_cache_fingerprint_follows_its_own_code_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint covers the suite module and what it imports, transitively; not the other suites."""
    from pytest_mobilebench import cache

    package = tmp_path / "pytest_mobilebench"
    for rel, text in {
        "__init__.py": "",
        "shared.py": "X = 1\n",
        "suites/__init__.py": "",
        "suites/a/__init__.py": "from pytest_mobilebench import shared\n\ndef f():\n    from . import helper\n",
        "suites/a/helper.py": "Y = 1\n",
        "suites/b/__init__.py": "Z = 1\n",
    }.items():
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text(text)
    monkeypatch.setattr(cache, "PACKAGE_DIR", package)

    def fingerprint(module: str) -> str:
        cache.suite_fingerprint.cache_clear()
        return cache.suite_fingerprint(module)

    a, b = fingerprint("pytest_mobilebench.suites.a"), fingerprint("pytest_mobilebench.suites.b")
    (package / "suites/b/__init__.py").write_text("Z = 2\n")
    assert fingerprint("pytest_mobilebench.suites.a") == a and fingerprint("pytest_mobilebench.suites.b") != b
    (package / "suites/a/helper.py").write_text("Y = 2\n")  # imported inside a function, relatively
    a2 = fingerprint("pytest_mobilebench.suites.a")
    assert a2 != a
    (package / "shared.py").write_text("X = 2\n")
    assert fingerprint("pytest_mobilebench.suites.a") != a2
    cache.suite_fingerprint.cache_clear()


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One copy of the real package for the module and the issue-resolution suite's fingerprint of it
    (each test changes one file of the copy and puts it back)."""
    import shutil

    from pytest_mobilebench import cache

    package = tmp_path_factory.mktemp("copy") / "pytest_mobilebench"
    shutil.copytree(cache.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache, "PACKAGE_DIR", package)
        cache.suite_fingerprint.cache_clear()
        try:
            yield package, cache.suite_fingerprint("pytest_mobilebench.suites.issue_resolution")
        finally:
            cache.suite_fingerprint.cache_clear()


@pytest.mark.parametrize(
    "changed",
    [
        "suites/issue_resolution/evaluation.py",
        "suites/issue_resolution/judge.py",
        "frameworks/react_native/harness.py",
        "patch.py",
    ],
)
def test_the_issue_resolution_fingerprint_covers_its_lazily_imported_evaluation(
    package_copy: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, changed: str
) -> None:
    """The suite's package imports its evaluating half inside a function (issue 23); a change to that half,
    or to what only it imports, still changes the suite's cache fingerprint. A copy of the real package."""
    from pytest_mobilebench import cache

    package, before = package_copy
    monkeypatch.setattr(cache, "PACKAGE_DIR", package)
    original = (package / changed).read_bytes()
    (package / changed).write_bytes(original + b"\n# changed\n")
    cache.suite_fingerprint.cache_clear()
    try:
        assert cache.suite_fingerprint("pytest_mobilebench.suites.issue_resolution") != before
    finally:
        (package / changed).write_bytes(original)
        cache.suite_fingerprint.cache_clear()


def test_results_are_checked_and_retryable_follows_the_reason(pytester: pytest.Pytester) -> None:
    """A suite that raises, returns a reason outside its vocabulary, or calls an infra reason not retryable:
    the first two become harness errors (infra), the third is retryable anyway; none is cached."""
    pytester.makeconftest(THIRD_PARTY_CONFTEST)
    pytester.makefile(".yaml", echo=ECHO_MANIFEST)
    _preds(pytester.path / "p.jsonl", {"echo-1": "raise", "echo-2": "bogus", "echo-3": "oracle-down"})
    pytester.runpytest("--predictions=p.jsonl", "-p", "no:cacheprovider").assert_outcomes(failed=3)
    summary = json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())
    entries = summary["instances"]
    assert {k: (v["reason"], v.get("infra_kind")) for k, v in entries.items()} == {
        "echo-1": ("infra_error", "harness_error"),
        "echo-2": ("infra_error", "harness_error"),
        "echo-3": ("flaky_oracle", None),
    }
    assert not list((pytester.path / "reports" / "cache").rglob("*.json"))
    logs = sorted(p.read_text() for p in (pytester.path / "reports").rglob("harness_error.log"))
    assert any("the suite broke" in text for text in logs)
    assert any("reason 'splendid', not one of" in text for text in logs)
