"""The workspace contract made whole (issue 32, item 1): one base declaring every member a suite calls, safe
defaults for the members that only save time, and named capabilities for the members a verdict rests on.

A suite grading an untrusted candidate on a workspace without the capability its runner's harness needs refuses
the candidate with ``provider_lacks_capability`` (the provider's, never the candidate's); trusted code runs
unharnessed and says so in the evidence, the result's flags and the headline. No suite probes a workspace with
``hasattr`` / ``getattr`` any more.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from fake_workspaces import FilesWorkspace

from pytest_mobilebench.plan import TestPlan
from pytest_mobilebench.runtime.base import Capability, MissingCapability, Workspace
from pytest_mobilebench.suites.issue_resolution.attribution import canary_for, jest_harness_for, unharnessed_flags
from pytest_mobilebench.suites.issue_resolution.rates import headline

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_mobilebench"
JEST_PROJECT = {
    "package.json": b'{"devDependencies": {"jest": "29.7.0"}}',
    "node_modules/jest/package.json": b'{"version": "29.7.0"}',
    "node_modules/jest-circus/package.json": b'{"version": "29.7.0"}',
    "__tests__/a.test.js": b"test('a', () => {});\n",
}
JEST_COMMAND = (
    "node_modules/.bin/jest --ci --json --outputFile=/r/.mobilebench/jest-results.json --runTestsByPath a.test.js"
)
JEST_PLAN = TestPlan(JEST_COMMAND, ("/r/.mobilebench/jest-results.json",), "jest")
JUNIT_TEST = "app/src/test/java/acme/FooTest.java"
JUNIT_PLAN = TestPlan("./gradlew test", ("app/build/test-results/**/*.xml",), "junit", (":app",))


@pytest.mark.parametrize(
    ("call", "capability"),
    [
        (lambda ws: ws.run_with_channel("true", files={}, key=b"k", timeout_s=1), Capability.RESULT_CHANNEL),
        (lambda ws: ws.write_root_files({"/x": b""}, private=""), Capability.ROOT_FILES),
        (lambda ws: ws.applies_at_base("diff"), Capability.BASE_CHECK),
        (lambda ws: ws.root_exec(["true"]), Capability.ROOT_EXEC),
        (lambda ws: ws.put_tree(b""), Capability.ROOT_FILES),
    ],
)
def test_a_capability_the_workspace_does_not_declare_is_a_named_provider_failure(call, capability) -> None:
    with pytest.raises(MissingCapability) as info:
        call(FilesWorkspace({}))
    assert info.value.kind == "provider_lacks_capability" and info.value.capability == capability.value
    assert capability.value in str(info.value)


def test_the_members_that_only_save_time_have_safe_defaults() -> None:
    ws = FilesWorkspace({"a/b.txt": b"1", "a/c.log": b"2"})
    assert ws.pristine_image_id is None and tuple(ws.rejected) == ()
    assert ws.list_files(["a/*.txt"]) == ["a/b.txt"]
    ws.stage_patches({"model_patch": "x"})
    ws.list_ahead(["a/*"])
    ws.forget_reads()
    ws.stop_leftovers()
    ws.close_later()
    assert ws.closed == 1 and ws.commands == []


def test_the_base_declares_every_member_it_names_abstract_or_defaulted() -> None:
    required = {"apply_patch", "restore_paths", "put_input", "run", "read_files", "clear_files", "diff", "close"}
    assert Workspace.__abstractmethods__ == required
    with pytest.raises(TypeError, match="abstract"):
        type("Half", (Workspace,), {"run": lambda self, *a, **k: None})()


def test_an_untrusted_jest_candidate_without_a_result_channel_is_refused_before_anything_runs(tmp_path: Path) -> None:
    ws = FilesWorkspace(JEST_PROJECT)
    with pytest.raises(MissingCapability) as info:
        jest_harness_for(ws, JEST_PLAN, untrusted=True, evidence=tmp_path, tag="")
    assert info.value.kind == "provider_lacks_capability" and "untrusted candidate" in str(info.value)
    assert ws.commands == [] and not (tmp_path / "unharnessed.json").exists()


def test_trusted_code_without_a_result_channel_runs_unharnessed_and_the_evidence_says_so(tmp_path: Path) -> None:
    ws = FilesWorkspace(JEST_PROJECT)
    assert jest_harness_for(ws, JEST_PLAN, untrusted=False, evidence=tmp_path, tag="") is None
    recorded = json.loads((tmp_path / "unharnessed.json").read_text())
    assert recorded["capabilities"] == ["result_channel"] and "FilesWorkspace" in recorded["detail"]
    assert unharnessed_flags(tmp_path) == ["unharnessed:result_channel"]
    with_channel = FilesWorkspace(JEST_PROJECT, capabilities=frozenset({Capability.RESULT_CHANNEL}))
    assert jest_harness_for(with_channel, JEST_PLAN, untrusted=True, evidence=tmp_path / "x", tag="") is not None


def test_a_junit_canary_needs_root_owned_files_for_an_untrusted_candidate(tmp_path: Path) -> None:
    files = {JUNIT_TEST: b"package acme;\nimport org.junit.Test;\nclass FooTest {}\n"}
    with pytest.raises(MissingCapability, match="root_files"):
        canary_for(FilesWorkspace(files), JUNIT_PLAN, [JUNIT_TEST], untrusted=True, evidence=tmp_path)
    assert canary_for(FilesWorkspace(files), JUNIT_PLAN, [JUNIT_TEST], evidence=tmp_path, tag=".fix.1") is None
    assert json.loads((tmp_path / "unharnessed.fix.1.json").read_text())["capabilities"] == ["root_files"]

    class RootFiles(FilesWorkspace):
        def write_root_files(self, written, *, private: str) -> None:
            self.files.update({k.lstrip("/"): v for k, v in written.items()})

    ws = RootFiles(files, capabilities=frozenset({Capability.ROOT_FILES}))
    planted = canary_for(ws, JUNIT_PLAN, [JUNIT_TEST], untrusted=True, evidence=tmp_path / "y")
    assert planted is not None and f"testbed/{planted[0].path}" in ws.files


def test_the_graded_run_refuses_an_untrusted_candidate_on_a_workspace_without_a_channel(tmp_path: Path) -> None:
    from pytest_mobilebench.suites.issue_resolution.evaluation import EVALUATOR
    from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

    instance = IssueInstance(
        instance_id="acme__a-1",
        repo="acme/a",
        base_commit="a" * 40,
        framework="react-native",
        patch="",
        test_patch="",
        FAIL_TO_PASS=("__tests__/a.test.js::a",),
        test_targets=("__tests__/a.test.js",),
    )
    ctx = SimpleNamespace(evidence_dir=tmp_path, options={}, progress=lambda message: None)
    ws = FilesWorkspace(JEST_PROJECT)
    with pytest.raises(MissingCapability):
        EVALUATOR._run_tests(ws, instance, "", ctx, tag="", apply=False, untrusted=True)  # type: ignore[arg-type]
    assert ws.commands == []  # nothing of the candidate ran
    EVALUATOR._run_tests(ws, instance, "", ctx, tag="", apply=False)  # type: ignore[arg-type]
    assert ws.commands and "--testRunner" not in ws.commands[-1]  # unharnessed, recorded
    assert unharnessed_flags(tmp_path) == ["unharnessed:result_channel"]


def test_the_headline_names_runs_graded_unharnessed() -> None:
    rows = [
        {"model_name_or_path": "gold", "instance_id": "a-1", "passed": True, "flags": ["unharnessed:result_channel"]},
        {"model_name_or_path": "gold", "instance_id": "a-2", "passed": True, "flags": []},
    ]
    figure = headline(rows)
    assert figure["unharnessed"] == ["gold: a-1: result_channel"] and "1 item(s) ran unharnessed" in figure["note"]
    assert headline(rows[1:])["unharnessed"] == [] and "unharnessed" not in headline(rows[1:])["note"]


def _probes(path: Path) -> list[str]:
    """``hasattr(x, ...)`` / ``getattr(x, ...)`` calls whose object is a workspace or sandbox by name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("hasattr", "getattr") and node.args:
            target = ast.unparse(node.args[0])
            if target.split(".")[-1] in ("ws", "workspace", "sandbox", "_ws", "self._ws", "self.sandbox"):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}")
            elif target.endswith(("ws", "workspace", "sandbox")):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_suite_or_report_probes_a_workspace_for_a_member() -> None:
    probes = [p for path in sorted(PACKAGE.rglob("*.py")) for p in _probes(path)]
    assert probes == [], "declare the member on runtime.base.Workspace instead:\n" + "\n".join(probes)


# ------------------------------------------------------------------- a third provider, whole runs, in-process

_BARE_CONFTEST = """
from fake_workspaces import BareProvider

def pytest_mobilebench_register_runtimes(registry):
    registry.register(BareProvider())
"""


def _jest_repo(root: Path) -> tuple[Path, str, str, str]:
    """A jest 29 project (its packages' manifests committed: the harness detects the runner from them), the
    base commit, a candidate patch of ``src/a.js`` and a test patch of ``__tests__/a.test.js``."""
    from conftest import git

    files = {
        "package.json": '{"name": "p", "scripts": {"test": "jest"}, "devDependencies": {"jest": "29.7.0"}}\n',
        **{
            f"node_modules/{k}/package.json": f'{{"name": "{k}", "version": "29.7.0"}}\n'
            for k in ("jest", "jest-circus")
        },
        "src/a.js": "module.exports = () => 1;\n",
        "__tests__/a.test.js": "const a = require('../src/a');\ntest('a', () => expect(a()).toBe(2));\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "src/a.js").write_text("module.exports = () => 2;\n")
    patch = git(root, "diff") + "\n"
    git(root, "checkout", "-q", "--", "src/a.js")
    (root / "__tests__/a.test.js").write_text(
        "const a = require('../src/a');\ntest('a', () => expect(a()).toBe(2));\n\n"
    )
    test_patch = git(root, "diff") + "\n"
    git(root, "checkout", "-q", "--", "__tests__/a.test.js")
    return root, git(root, "rev-parse", "HEAD"), patch, test_patch


def test_a_third_provider_without_a_channel_refuses_real_candidates_and_flags_gold(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    repo, base, patch, test_patch = _jest_repo(tmp_path / "repo")
    pytester.makeconftest(_BARE_CONFTEST)
    pytester.makefile(
        ".yaml",
        app=f"""\
suite: issue_resolution
repo: acme/p
repo_url: {repo}
framework: react-native
instances:
  - instance_id: acme__p-1
    base_commit: {base}
    patch: {json.dumps(patch)}
    test_patch: {json.dumps(test_patch)}
    FAIL_TO_PASS: ["__tests__/a.test.js::a"]
""",
    )
    pred = {"instance_id": "acme__p-1", "model_name_or_path": "m", "model_patch": patch}
    pytester.makefile(".jsonl", preds=json.dumps(pred) + "\n")
    args = ("--mb-runtime=bare", "-p", "no:cacheprovider", "-p", "no:randomly")
    pytester.runpytest("--predictions=preds.jsonl", "--mb-run-id=cand", *args)
    row = json.loads((pytester.path / "reports" / "cand" / "summary.json").read_text())["instances"]["acme__p-1"]
    assert (row["reason"], row.get("infra_kind")) == ("infra_error", "provider_lacks_capability"), row
    assert "result_channel" in row["detail"] and "untrusted candidate" in row["detail"], row
    pytester.runpytest("--predictions=gold", "--mb-run-id=gold", *args)
    row = json.loads((pytester.path / "reports" / "gold" / "summary.json").read_text())["instances"]["acme__p-1"]
    assert row.get("infra_kind") != "provider_lacks_capability", row
    assert "unharnessed:result_channel" in row["flags"], row
    # a re-grade reads the same evidence: the run stays flagged unharnessed
    pytester.runpytest("--mb-regrade=reports/gold", "--mb-summary=reports/regraded.json", "--mb-run-id=again", *args)
    again = json.loads((pytester.path / "reports" / "regraded.json").read_text())["instances"]["acme__p-1"]
    assert again.get("regraded") is True and "unharnessed:result_channel" in again["flags"], again
