"""``python -m pytest_mobilebench mine`` without Docker: the static filters, ids, issue links, the split and
the outputs, on the bundled counter repository and on a small repository built here with one commit per
rejection reason."""

from __future__ import annotations

import json
import functools
import os
from pathlib import Path

import pytest

from conftest import git
import yaml

from pytest_mobilebench.__main__ import main
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.mining.gitsource import (
    Commit,
    FileStat,
    MiningError,
    open_source,
    repo_name,
)
from pytest_mobilebench.mining.records import (
    IssueIndex,
    instance_id_for,
    pr_number,
    problem_statement,
)
from pytest_mobilebench.mining.scan import (
    Reason,
    infer_framework,
    is_generated,
    static_reason,
)
from pytest_mobilebench.mining.validate import read_verdicts
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.records import ManifestError
from pytest_mobilebench.suites.issue_resolution import resolve_patches
from pytest_mobilebench.suites.issue_resolution.manifest import (
    load_dataset,
    load_manifest,
)

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"
EXAMPLES = ROOT / "cases" / "examples" / "mobilebench__counter.yaml"


def _commit(subject: str = "fix: x", parents: tuple[str, ...] = ("p" * 40,)) -> Commit:
    return Commit("c" * 40, parents, "2026-01-01T00:00:00+00:00", subject)


def _is_test(path: str) -> bool:
    return path.endswith(".test.js")


def _f(path: str, added: int = 1, removed: int = 0) -> FileStat:
    return FileStat(path, added, removed, False)


# ------------------------------------------------------------------------------------------ pure rules


@pytest.mark.parametrize(
    ("commit", "files", "reason"),
    [
        (_commit(parents=()), [_f("a.js")], Reason.ROOT_COMMIT),
        (
            _commit("Merge branch 'main' into feature", ("a" * 40, "b" * 40)),
            [_f("a.js"), _f("a.test.js")],
            Reason.MERGE_NOISE,
        ),
        (_commit("Merge pull request #3 from x/y", ("a" * 40, "b" * 40)), [], Reason.MERGE_NOISE),
        (_commit(), [], Reason.EMPTY_CHANGE),
        (_commit(), [_f("src/a.js")], Reason.NO_TESTS_TOUCHED),
        (_commit(), [_f("src/a.test.js")], Reason.TEST_ONLY),
        (_commit(), [_f("a.test.js"), _f("package-lock.json", 900)], Reason.GENERATED_VENDORED_OR_LOCKFILE),
        (_commit(), [_f("a.test.js"), _f("vendor/lib.js")], Reason.GENERATED_VENDORED_OR_LOCKFILE),
        (_commit(), [_f("a.test.js"), _f("lib/model.g.dart")], Reason.GENERATED_VENDORED_OR_LOCKFILE),
        (_commit(), [_f("a.test.js"), _f("README.md"), _f(".github/workflows/ci.yml")], Reason.NO_SOURCE_CHANGE),
        (_commit(), [_f("a.test.js"), *[_f(f"src/m{i}.js") for i in range(51)]], Reason.OVERSIZED),
        (_commit(), [_f("a.test.js"), _f("src/a.js", 1500, 501)], Reason.OVERSIZED),
        (_commit(), [_f("a.test.js"), _f("src/a.js"), _f("yarn.lock")], None),
        (_commit("Merge pull request #3 from x/y", ("a" * 40, "b" * 40)), [_f("a.test.js"), _f("a.js")], None),
    ],
)
def test_static_reason(commit: Commit, files: list[FileStat], reason: Reason | None) -> None:
    assert static_reason(commit, files, _is_test) is reason


def test_generated_rule_keeps_project_sources() -> None:
    assert not is_generated("src/generator.js") and not is_generated("app/src/main/java/Gen.kt")
    assert is_generated("node_modules/x/index.js") and is_generated("app/build/out.js") and is_generated("pubspec.lock")


def test_framework_inference_order() -> None:
    gradle = {"settings.gradle": b"include ':app'"}
    assert infer_framework({"pubspec.yaml": b"name: x", **gradle}) == "flutter"
    assert infer_framework({"package.json": b'{"devDependencies": {"jest": "29"}}', **gradle}) == "react-native"
    assert infer_framework({"package.json": b'{"dependencies": {"expo": "50"}}'}) == "react-native"
    assert infer_framework(gradle) == "android"
    with pytest.raises(MiningError, match="--framework"):
        infer_framework({"package.json": b'{"dependencies": {"left-pad": "1"}}'})


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("/srv/mirrors/jellyfin+jellyfin-expo/repo", "jellyfin/jellyfin-expo"),
        ("fixtures/repos/mobilebench+counter.bundle", "mobilebench/counter"),
        ("/m/acme+app.git", "acme/app"),
        ("https://example.com/acme/app.git", "acme/app"),
        ("git@example.com:acme/app.git", "acme/app"),
        ("/some/checkout", None),
    ],
)
def test_repo_name(spec: str, name: str | None) -> None:
    assert repo_name(spec) == name


def test_instance_ids_and_issue_links(tmp_path: Path) -> None:
    merge = _commit("Merge pull request #42 from someone/fix-it\n\nFix it")
    squash = _commit("Fix the clock (#17)\n\nfixes #5, Closes #6; mentions #7")
    plain = _commit("Fix the clock")
    assert (pr_number(merge), pr_number(squash), pr_number(plain)) == (42, 17, None)
    assert instance_id_for("a/b", merge, set()) == "a__b-42"
    assert instance_id_for("a/b", plain, set()) == "a__b-ccccccc"
    assert instance_id_for("a/b", merge, {"a__b-42"}) == "a__b-cccccccccc"  # a PR number met twice stays unique
    export = tmp_path / "issues.jsonl"
    rows = [{"number": 5, "title": "Clock drifts", "body": "It drifts."},
            {"number": 6, "title": "Clock stops", "body": None},
            {"number": 7, "title": "Only mentioned", "body": "x"},
            {"number": 17, "title": "PR", "body": "resolves #8", "pull_request": {}},
            {"number": 8, "title": "From the PR body", "body": "y"}]  # fmt: skip
    export.write_text("".join(json.dumps(r) + "\n" for r in rows))
    issues = IssueIndex.load(export)
    text, source, linked = problem_statement(squash, issues, 17)
    assert (source, linked) == ("issue", [5, 6, 8])
    assert text.startswith("Clock drifts\n\nIt drifts.") and "Only mentioned" not in text
    assert problem_statement(merge, None, 42)[:2] == ("Fix it\n", "commit_message")  # the PR title, not "Merge ..."
    text, source, linked = problem_statement(plain, issues, None)
    assert (text, source, linked) == ("Fix the clock\n", "commit_message", [])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"number": 1}\nnot json\n')
    with pytest.raises(MiningError, match=r"bad.jsonl:2"):
        IssueIndex.load(bad)


def test_verdicts_come_from_the_validation_report_not_from_a_passed_flag(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    forged = {"instance_id": "a__b-1", "passed": True, "reason": "resolved"}  # no validation block
    infra = {"instance_id": "a__b-2", "passed": False, "retryable": True, "validation": {"valid": True}}
    flaky = {"instance_id": "a__b-3", "validation": {"valid": False, "flaky": ["t"], "problems": ["no F2P"]}}
    valid = {
        "instance_id": "a__b-4",
        "validation": {"valid": True, "FAIL_TO_PASS": ["t1"], "states": {"fix": {"t1": "PASS"}}},
    }
    summary.write_text(json.dumps({"instances": {"a__b-1": forged, "a__b-2": infra, "a__b-3": flaky, "a__b-4": valid}}))
    got = read_verdicts(summary, ["a__b-1", "a__b-2", "a__b-3", "a__b-4", "a__b-5"])
    assert {k: v.status for k, v in got.items()} == {
        "a__b-1": "invalid",
        "a__b-2": "infra_error",
        "a__b-3": "flaky",
        "a__b-4": "valid",
        "a__b-5": "not_run",
    }
    assert [k for k, v in got.items() if v.kept] == ["a__b-4"] and got["a__b-4"].gold["FAIL_TO_PASS"] == ["t1"]


# ------------------------------------------------------------------------------------------ the counter bundle


def _mine(*args: str) -> tuple[int, dict]:
    out = Path(args[args.index("--out") + 1])
    code = main(["mine", *args])
    return code, json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}


def test_mine_counter_bundle_static(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _mine(str(BUNDLE), "--out", str(tmp_path), "--no-validate", "--format", "swe-bench")
    assert code == 0
    table = capsys.readouterr().out
    assert "candidates       2" in table and "root_commit    1" in table
    # --no-validate writes candidates only, and says their lists are empty: never a manifest that looks final
    assert not (tmp_path / "mobilebench__counter.yaml").exists() and not list(tmp_path.glob("*.jsonl"))
    assert "candidates only: their test lists (FAIL_TO_PASS ...) are empty until validated" in table
    assert (report["scanned"], report["candidates"], report["rejected"]) == (3, 2, {"root_commit": 1})
    doc = read_yaml(tmp_path / "candidates" / "mobilebench__counter.yaml")
    loaded = load_manifest(doc)
    assert not [r for r in loaded if isinstance(r, ManifestError)], loaded
    mined = {r.record.fix_commit: r.record for r in loaded}
    shipped = {r.record.fix_commit: r.record for r in load_manifest(read_yaml(EXAMPLES))}
    assert set(mined) == set(shipped)  # the two fix commits the examples were written from
    repos = RepoCache(root=tmp_path / "repos", run_id="t")
    for fix, inst in mined.items():
        assert inst.base_commit == shipped[fix].base_commit
        assert inst.provenance["problem_statement_source"] == "commit_message"
        assert inst.provenance["fix_commit"] == fix and "--runTestsByPath" in inst.provenance["planned_test_command"]
        # the command the harness runs: the installed jest, never through npx, results outside the repository
        assert "npx" not in inst.provenance["planned_test_command"]
        assert "node_modules/.bin/jest" in inst.provenance["planned_test_command"]
        assert inst.environment.node and inst.environment.package_manager == "npm"
        assert resolve_patches(inst, repos) == resolve_patches(shipped[fix], repos)
    rows = load_dataset(tmp_path / "candidates" / "mobilebench__counter.swe-bench.jsonl")
    assert sorted(r.record.instance_id for r in rows) == sorted(r.instance_id for r in mined.values())


def test_mine_commits_limit_and_since(tmp_path: Path) -> None:
    _, report = _mine(str(BUNDLE), "--out", str(tmp_path / "a"), "--no-validate", "--limit", "1")
    assert (report["scanned"], report["candidates"]) == (1, 1)
    _, report = _mine(str(BUNDLE), "--out", str(tmp_path / "b"), "--no-validate", "--commits", "342201a,b89b12d")
    assert list(report["instances"]) == ["mobilebench__counter-342201a"] and report["rejected"] == {"root_commit": 1}
    _, report = _mine(str(BUNDLE), "--out", str(tmp_path / "c"), "--no-validate", "--since", "2026-01-06T12:00:00Z")
    assert report["scanned"] == 1 and list(report["instances"]) == ["mobilebench__counter-73ff7f2"]
    # a later run that keeps nothing leaves no manifest of an earlier one behind
    assert (tmp_path / "c" / "candidates" / "mobilebench__counter.yaml").is_file()
    _, report = _mine(str(BUNDLE), "--out", str(tmp_path / "c"), "--no-validate", "--commits", "b89b12d")
    assert report["candidates"] == 0 and not list((tmp_path / "c").rglob("*.yaml"))


def test_mine_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mine", str(tmp_path / "nope"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err  # the path named, not a --repo-name hint
    assert f"{tmp_path / 'nope'}: no such file or folder" in err and "--repo-name" not in err
    assert main(["mine", str(BUNDLE), "--out", str(tmp_path), "--ref", "no-such-ref"]) == 2
    assert "not a commit" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ one commit per reason

#: this module's commits are dated a month after conftest's default
_git = functools.partial(git, date="2026-02-01T00:00:00+00:00")


def _commit_files(repo: Path, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def zoo(tmp_path: Path) -> Path:
    """A jest project whose first-parent history has one commit per rejection reason and three candidates."""
    repo = tmp_path / "acme+zoo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    package = {
        "name": "zoo",
        "version": "1.0.0",
        "devDependencies": {"jest": "29.7.0"},
        "jest": {"testMatch": ["**/*.test.js"]},
    }
    _commit_files(repo, "base", {"package.json": json.dumps(package), "package-lock.json": "{}\n", "src/a.js": "a\n"})
    _commit_files(repo, "tests only", {"src/a.test.js": "t1\n"})
    _commit_files(repo, "source only", {"src/a.js": "a2\n"})
    _commit_files(repo, "docs and tests", {"README.md": "r\n", "src/a.test.js": "t2\n"})
    _commit_files(repo, "lock and tests", {"package-lock.json": '{"x": 1}\n', "src/a.test.js": "t3\n"})
    _commit_files(repo, "vendored and tests", {"vendor/v.js": "v\n", "src/a.test.js": "t4\n"})
    _commit_files(repo, "huge", {"src/a.test.js": "t5\n", "src/big.js": "x\n" * 2500})
    _commit_files(repo, "Fix the sum (#12)\n\nFixes #3", {"src/a.js": "a3\n", "src/a.test.js": "t6\n"})
    # a commit that widens its own test rule: the rule at the PARENT decides, so src/b.js stays in the fix
    package["jest"] = {"testMatch": ["**/*.test.js", "**/src/b.js"]}
    _commit_files(
        repo, "Widen testMatch", {"package.json": json.dumps(package), "src/b.js": "b\n", "src/b.test.js": "tb\n"}
    )
    _commit_files(repo, "empty", {})
    _git(repo, "checkout", "-q", "-b", "topic")
    _commit_files(repo, "topic work", {"src/c.js": "c\n", "src/c.test.js": "tc\n"})
    _git(repo, "checkout", "-q", "main")
    _commit_files(repo, "main moves on", {"src/d.md": "d\n"})
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #20 from acme/topic", "topic")
    _git(repo, "checkout", "-q", "-b", "sync")
    _commit_files(repo, "sync work", {"src/e.js": "e\n", "src/e.test.js": "te\n"})
    _git(repo, "checkout", "-q", "main")
    _commit_files(repo, "main again", {"src/f.md": "f\n"})
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'sync'", "sync")
    return repo


def test_every_commit_is_a_candidate_or_a_counted_reason(zoo: Path, tmp_path: Path) -> None:
    issues = tmp_path / "issues.json"
    issues.write_text(json.dumps([{"number": 3, "title": "Sum is wrong", "body": "1 + 1 gives 3"}]))
    code, report = _mine(str(zoo), "--out", str(tmp_path / "out"), "--no-validate", "--issues", str(issues))
    assert code == 0
    assert report["framework"] == "react-native" and report["repo"] == "acme/zoo"
    assert report["rejected"] == {
        "root_commit": 1, "test_only": 1, "no_tests_touched": 3, "no_source_change": 1,
        "generated_vendored_or_lockfile_only": 2, "oversized": 1, "empty_change": 1, "merge_noise": 1}  # fmt: skip
    assert len(report["instances"]) == 3 and {"acme__zoo-12", "acme__zoo-20"} <= set(report["instances"])
    assert report["scanned"] == report["candidates"] + sum(report["rejected"].values())
    assert all(r["reason"] for r in report["rejections"])
    loaded = {
        r.record.instance_id: r.record
        for r in load_manifest(read_yaml(tmp_path / "out" / "candidates" / "acme__zoo.yaml"))
    }
    assert loaded["acme__zoo-12"].problem_statement.startswith("Sum is wrong")
    assert loaded["acme__zoo-12"].provenance["problem_statement_source"] == "issue"
    assert loaded["acme__zoo-12"].provenance["linked_issues"] == [3]
    widen = next(i for i in loaded.values() if i.instance_id not in ("acme__zoo-12", "acme__zoo-20"))
    repos = RepoCache(root=tmp_path / "repos", run_id="t")
    gold, tests = resolve_patches(widen, repos)
    assert "src/b.js" in gold and "src/b.js" not in tests.replace("src/b.test.js", "")
    merge = loaded["acme__zoo-20"]
    gold, tests = resolve_patches(merge, repos)
    assert "src/c.js" in gold and "src/c.test.js" in tests and "d.md" not in gold  # the PR's own change
    raw = yaml.safe_load((tmp_path / "out" / "candidates" / "acme__zoo.yaml").read_text())
    assert raw["repo_url"] == os.path.relpath(zoo, tmp_path / "out" / "candidates")


def test_open_source_refuses_a_folder_that_is_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "a+b").mkdir()
    with pytest.raises(MiningError, match="not a git repository"):
        open_source(str(tmp_path / "a+b"))


def _repo_from(tmp_path: Path, name: str, fixture: str) -> Path:
    import shutil

    repo = tmp_path / name
    shutil.copytree(ROOT / "fixtures" / "repos" / "recipes" / fixture, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def test_gradle_candidates_are_mined_with_module_tasks(tmp_path: Path) -> None:
    repo = _repo_from(tmp_path, "acme+notes", "android-groovy")
    kt = "app/src/main/java/acme/Notes.kt"
    _commit_files(
        repo, "Fix notes (#4)", {kt: "class Notes\n", "app/src/test/java/acme/NotesTest.kt": "class NotesTest\n"}
    )
    _commit_files(
        repo, "Instrumented only", {kt: "class Notes2\n", "app/src/androidTest/java/acme/NotesUiTest.kt": "class T\n"}
    )
    code, report = _mine(str(repo), "--out", str(tmp_path / "out"), "--no-validate")
    assert code == 0 and report["framework"] == "android"
    assert list(report["instances"]) == ["acme__notes-4"]
    no_run = [r for r in report["rejections"] if r["reason"] == "no_runnable_tests"]
    assert [r["subject"] for r in no_run] == ["Instrumented only"]
    inst = load_manifest(read_yaml(tmp_path / "out" / "candidates" / "acme__notes.yaml"))[0].record
    assert ":app:testFreeDebugUnitTest" in inst.provenance["planned_test_command"] and inst.environment.jdk == "17"


def test_flutter_candidates_are_mined(tmp_path: Path) -> None:
    repo = _repo_from(tmp_path, "acme+birds", "flutter-fvm")
    _commit_files(
        repo, "Count birds", {"lib/birds.dart": "int birds() => 2;\n", "test/birds_test.dart": "void main() {}\n"}
    )
    code, report = _mine(str(repo), "--out", str(tmp_path / "out"), "--no-validate")
    assert code == 0 and report["framework"] == "flutter" and report["candidates"] == 1
    inst = load_manifest(read_yaml(tmp_path / "out" / "candidates" / "acme__birds.yaml"))[0].record
    assert "test/birds_test.dart" in inst.provenance["planned_test_command"] and inst.environment.flutter


@pytest.mark.e2e  # the validation is a whole pytest run in a subprocess (about a minute)
def test_mine_and_validate_locally_from_a_relative_out_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The validation subprocess gets absolute paths (it runs in the manifest's folder), and the local
    runtime (the gold patch of the bundled repository; needs node / npm) validates the newest fix with
    the gold lists of cases/examples."""
    import shutil

    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "mine",
                str(BUNDLE),
                "--out",
                "out",
                "--limit",
                "1",
                "--runtime",
                "local",
                "--validate-runs",
                "1",
                "--no-audit",
            ]
        )
        == 0
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    log = Path(report["validation"]["log"]).read_text()
    assert log.splitlines()[0].split()[4] == str(tmp_path / "out" / "candidates" / "mobilebench__counter.yaml")
    assert report["validation"]["valid"] == 1, log[-2000:]
    (inst,) = report["instances"].values()
    shipped = {r.record.fix_commit: r.record for r in load_manifest(read_yaml(EXAMPLES))}[inst["fix_commit"]]
    assert (set(inst["FAIL_TO_PASS"]), set(inst["NONE_TO_PASS"]), set(inst["PASS_TO_PASS"])) == (
        set(shipped.FAIL_TO_PASS),
        set(shipped.NONE_TO_PASS),
        set(shipped.PASS_TO_PASS),
    )


def test_audit_table_is_read_from_the_summary_and_shown(tmp_path: Path) -> None:
    from pytest_mobilebench.mining.report import render
    from pytest_mobilebench.mining.validate import read_audit

    audit = {
        "instances": 2,
        "trusted": 1,
        "unnoticed_hunks": {"a__b-1": ["src/a.js @@ -1 +1 @@"]},
        "verifier_leak": {"a__b-1": 0.5, "a__b-2": None},
    }
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"suite_tables": {"issue_resolution": {"audit": audit}}}))
    assert read_audit(summary) == audit and read_audit(tmp_path / "absent.json") == {}
    report = {"repo": "a/b", "framework": "react-native", "tip": "f" * 40, "scanned": 1, "candidates": 0,
              "rejected": {}, "validation": None, "audit": audit, "instances": {}, "outputs": []}  # fmt: skip
    text = render(report)
    assert "audit: trusted          1" in text and "audit: unnoticed hunks  1" in text
    assert "audit: max leak         0.500" in text


def test_a_release_row_with_a_repeated_key_is_an_error_of_that_row(tmp_path: Path) -> None:
    """JSON keeps the last of two equal keys without a word: a second FAIL_TO_PASS would replace the gold."""
    good = {
        "instance_id": "acme__app-1",
        "repo": "acme/app",
        "base_commit": "a" * 40,
        "patch": "",
        "test_patch": "",
        "problem_statement": "p",
        "FAIL_TO_PASS": ["a.test.js::x"],
        "framework": "react-native",
    }
    text = json.dumps(good)
    twice = text[:-1] + ', "FAIL_TO_PASS": ["a.test.js::y"]}'
    path = tmp_path / "release.jsonl"
    path.write_text(twice.replace("acme__app-1", "acme__app-2") + "\n" + text + "\n", encoding="utf-8")
    rows = load_dataset(path)
    errors = [r for r in rows if isinstance(r, ManifestError)]
    assert len(errors) == 1 and errors[0].line == 1 and "'FAIL_TO_PASS'" in str(errors[0]), [str(e) for e in errors]
    listed = tmp_path / "release.json"
    listed.write_text("[" + twice + "]", encoding="utf-8")
    assert any(isinstance(r, ManifestError) and "twice" in str(r) for r in load_dataset(listed))


def test_an_unavailable_environment_is_named_in_the_table_and_in_why_nothing_was_kept() -> None:
    """The terminal says what is missing for each unavailable candidate (and an infra error's cause); the one
    line on stderr counts the unavailable ones, so its counts add up to the candidates."""
    from pytest_mobilebench.mining.report import nothing_kept, render

    missing = "host_unreachable: archives.example.test\n  (later lines of the install log)"
    instances = {
        "a__b-1": {"status": "environment_unavailable", "fix_commit": "1" * 40, "detail": missing},
        "a__b-2": {"status": "infra_error", "fix_commit": "2" * 40, "detail": "image_build_failed: disk full"},
        "a__b-3": {"status": "invalid", "fix_commit": "3" * 40, "detail": "not shown"},
    }
    validation = {"valid": 0, "invalid": 1, "flaky_dropped": 0, "infra_errors": 1, "environment_unavailable": 1,
                  "not_run": 0, "cached": 0, "setup_s": 1.0, "test_s": 0.0, "log": "x.log"}  # fmt: skip
    report = {"repo": "a/b", "framework": "react-native", "tip": "f" * 40, "scanned": 3, "candidates": 3,
              "rejected": {}, "validation": validation, "audit": {}, "instances": instances, "outputs": []}  # fmt: skip
    text = render(report)
    assert "  a__b-1: environment_unavailable: host_unreachable: archives.example.test\n" in text
    assert "  a__b-2: infra_error: image_build_failed: disk full\n" in text
    assert "not shown" not in text and "later lines" not in text
    why = nothing_kept(report)
    assert why is not None and "1 invalid, 1 infra errors, 1 environment unavailable" in why


def test_a_gold_the_policy_refuses_is_its_own_status_named_in_the_table(tmp_path: Path) -> None:
    """Validation's ``policy_violations`` make the verdict ``gold_refused`` (never kept), counted apart in the report
    and named with its findings under the table."""
    from pytest_mobilebench.mining.report import nothing_kept, render

    summary = tmp_path / "summary.json"
    refused = {"valid": False, "problems": ["the grade's policy refuses ..."], "policy_violations": ["babel.config.js"]}
    entry = {"instance_id": "a__b-1", "validation": refused, "detail": "the grade's policy refuses the gold patch"}
    summary.write_text(json.dumps({"instances": {"a__b-1": entry}}))
    verdict = read_verdicts(summary, ["a__b-1"])["a__b-1"]
    assert verdict.status == "gold_refused" and not verdict.kept
    validation = {"valid": 0, "invalid": 0, "flaky_dropped": 0, "infra_errors": 0, "environment_unavailable": 0,
                  "gold_refused": 1, "not_run": 0, "cached": 0, "setup_s": 1.0, "test_s": 0.0,
                  "log": "x.log"}  # fmt: skip
    instances = {"a__b-1": {"status": "gold_refused", "fix_commit": "1" * 40, "detail": verdict.detail}}
    report = {"repo": "a/b", "framework": "react-native", "tip": "f" * 40, "scanned": 1, "candidates": 1,
              "rejected": {}, "validation": validation, "audit": {}, "instances": instances, "outputs": []}  # fmt: skip
    text = render(report)
    assert "gold refused by policy   1" in text and "  a__b-1: gold_refused: the grade's policy refuses" in text
    why = nothing_kept(report)
    assert why is not None and "1 gold refused" in why
