"""The miner on self-made git histories, one rule each: ranking by bug-fix evidence, roll-up / merge /
release rejection, the snapshot rule, an unreadable object, toolchain pins at the commit's date, the
exit status and the progress line (issue 30 item 5)."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from pytest_mobilebench.__main__ import main
from pytest_mobilebench.frameworks.react_native import REACT_NATIVE
from pytest_mobilebench.frameworks.react_native.recipe import resolve_node_version
from pytest_mobilebench.mining.gitsource import Commit, FileStat
from pytest_mobilebench.mining.progress import Progress
from pytest_mobilebench.mining.rank import evidence

PACKAGE = {"name": "app", "version": "1.0.0", "devDependencies": {"jest": "29.7.0"}}


class Repo:
    """A throwaway git repository under ``tmp_path``; commits at given dates."""

    def __init__(self, root: Path) -> None:
        self.root = root / "owner+app"
        self.root.mkdir()
        self.date = "2024-03-01T12:00:00+00:00"
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": self.date, "GIT_COMMITTER_DATE": self.date}  # fmt: skip
        return subprocess.run(["git", *args], cwd=self.root, env=env, check=True, capture_output=True, text=True).stdout

    def commit(self, message: str, files: dict[str, str | None], date: str | None = None) -> str:
        if date:
            self.date = date
        for path, text in files.items():
            target = self.root / path
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def base(self, package: dict | None = None, extra: dict[str, str] | None = None) -> str:
        files = {
            "package.json": json.dumps(package or PACKAGE, indent=2),
            "package-lock.json": '{"lockfileVersion": 3}\n',
            "src/app.js": "module.exports = 1;\n",
            "src/app.test.js": "test('a', () => {});\n",
            **(extra or {}),
        }
        return self.commit("initial", files)


def _mine(repo: Repo, out: Path, *args: str) -> tuple[int, dict]:
    code = main(["mine", str(repo.root), "--out", str(out), "--no-validate", *args])
    return code, json.loads((out / "report.json").read_text())


def _fix(repo: Repo, message: str, n: int, lines: int = 1) -> str:
    body = "".join(f"exports.v{n}_{i} = {i};\n" for i in range(lines))
    return repo.commit(message, {f"src/m{n}.js": body, "src/app.test.js": f"test('a{n}', () => {{}});\n"})


def test_candidates_are_ranked_by_bug_fix_evidence(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.base()
    fix = _fix(repo, "fix: crash when the list is empty\n\nFixes #12", 1)
    feature = _fix(repo, "feat: a new settings screen", 2, lines=80)
    plain = _fix(repo, "update the counter", 3)
    code, report = _mine(repo, tmp_path / "out")
    assert code == 0
    by_rank = sorted(report["instances"].values(), key=lambda inst: inst["rank"])
    assert [i["fix_commit"] for i in by_rank] == [fix, plain, feature]  # not newest first: the fix, the feature last
    manifest = yaml.safe_load((tmp_path / "out" / "candidates" / "owner__app.yaml").read_text())
    assert [e["fix_commit"] for e in manifest["instances"]] == [fix, plain, feature]
    signals = by_rank[0]["bug_fix_evidence"]["signals"]
    assert {"fix word in subject", "issue reference", "small focused diff"} <= set(signals)


def test_evidence_weights() -> None:
    small = [FileStat("src/a.js", 3, 1, False)]
    assert evidence(Commit("a" * 40, ("b" * 40,), "", "fix(ui): crash (#3)"), small).score == 6
    assert evidence(Commit("a" * 40, ("b" * 40,), "", "feat: thing"), [FileStat("x.js", 400, 0, False)]).score == -2
    assert evidence(Commit("a" * 40, ("b" * 40,), "", "tweak\n\ncloses #9"), small).signals == (
        "issue reference",
        "small focused diff",
    )


def test_rollups_releases_and_sync_merges_are_rejected_with_reasons(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.base()
    release = _fix(repo, "chore(release): 1.2.0", 1)
    repo.git("checkout", "-q", "-b", "feature")
    for i in range(12):
        _fix(repo, f"fix: part {i}", 10 + i)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #7 from someone/feature")
    rollup = repo.git("rev-parse", "HEAD").strip()
    repo.git("checkout", "-q", "-b", "small")
    _fix(repo, "fix: the one crash", 40)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "small", "-m", "Merge pull request #8 from someone/small")
    merged_fix = repo.git("rev-parse", "HEAD").strip()
    code, report = _mine(repo, tmp_path / "out")
    by_commit = {r["commit"]: r for r in report["rejections"]}
    assert (
        by_commit[release]["reason"] == "release_or_version_bump" and "chore(release)" in by_commit[release]["detail"]
    )
    assert by_commit[rollup]["reason"] == "rollup" and "12 commits" in by_commit[rollup]["detail"]
    assert [i["fix_commit"] for i in report["instances"].values()] == [merged_fix]  # a one-change merge is kept
    assert code == 0 and report["scanned"] == report["candidates"] + sum(report["rejected"].values())
    assert (
        set(report["reason_meanings"]) == set(report["rejected"]) and "roll-up" in report["reason_meanings"]["rollup"]
    )


def test_a_snapshot_only_test_change_runs_the_test_reading_it(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.base({**PACKAGE}, {"src/__snapshots__/app.test.js.snap": "exports[`a 1`] = `1`;\n"})
    kept = repo.commit(
        "fix: label colour",
        {"src/app.js": "module.exports = 2;\n", "src/__snapshots__/app.test.js.snap": "exports[`a 1`] = `2`;\n"},
    )
    orphan = repo.commit(
        "fix: old label",
        {"src/app.js": "module.exports = 3;\n", "src/__snapshots__/gone.test.js.snap": "exports[`b 1`] = `3`;\n"},
    )
    added = repo.commit(
        "fix: new label",
        {
            "src/app.js": "module.exports = 4;\n",
            "src/new.test.js": "test('n', () => {});\n",
            "src/__snapshots__/new.test.js.snap": "exports[`n 1`] = `4`;\n",
        },
    )
    _, report = _mine(repo, tmp_path / "out")
    assert {i["fix_commit"] for i in report["instances"].values()} == {kept, added}  # a test added with its snapshot
    manifest = (tmp_path / "out" / "candidates" / "owner__app.yaml").read_text()
    assert "--runTestsByPath src/app.test.js" in manifest
    [rej] = [r for r in report["rejections"] if r["commit"] == orphan]
    assert rej["reason"] == "snapshot_without_test" and "src/gone.test.js does not exist" in rej["detail"]


def test_the_plan_of_a_snapshot_runs_its_test_file() -> None:
    plan = REACT_NATIVE.plan({"package.json": json.dumps(PACKAGE).encode()}, ["src/__snapshots__/a.test.tsx.snap"])
    assert plan.command.endswith("--runTestsByPath src/a.test.tsx")


def test_an_unreadable_object_is_a_named_rejection_and_the_scan_goes_on(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.base()
    good = _fix(repo, "fix: first", 1)
    broken = _fix(repo, "fix: second", 2)
    later = _fix(repo, "fix: third", 3)
    blob = repo.git("rev-parse", f"{broken}:src/m2.js").strip()
    (repo.root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a mirror lacking this blob
    code, report = _mine(repo, tmp_path / "out")
    assert code == 0 and {i["fix_commit"] for i in report["instances"].values()} == {good}
    for commit in (broken, later):  # `later`'s tree still holds src/m2.js: no checkout of it can be made
        [rej] = [r for r in report["rejections"] if r["commit"] == commit]
        assert rej["reason"] == "unreadable_object" and "git " in rej["detail"] and blob[:7] in rej["detail"]


def test_a_tree_lacking_a_blob_no_check_reads_is_a_named_rejection(tmp_path: Path) -> None:
    """The harness checks out the whole tree (a partial mirror lacking a large blob cannot be cloned): a fix
    whose base or fix tree holds a file the repository lacks is rejected naming that file, before any
    validation; once the file is gone from the tree, the next fix is mined."""
    repo = Repo(tmp_path)
    repo.base(extra={"assets/big.gif": "GIF89a" * 100})
    blocked = _fix(repo, "fix: first", 1)
    repo.commit("chore: drop the gif", {"assets/big.gif": None})
    later = _fix(repo, "fix: second", 2)
    blob = repo.git("rev-parse", f"{blocked}:assets/big.gif").strip()
    (repo.root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a mirror lacking this blob
    code, report = _mine(repo, tmp_path / "out")
    assert code == 0 and [i["fix_commit"] for i in report["instances"].values()] == [later]
    [rej] = [r for r in report["rejections"] if r["commit"] == blocked]
    assert rej["reason"] == "unreadable_object" and f"assets/big.gif ({blob[:12]})" in rej["detail"]


def test_toolchain_pins_package_manager_version_and_node_at_the_commit_date(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    pinned = {**PACKAGE, "packageManager": "pnpm@10.4.1+sha512.abc", "engines": {"node": ">=18"}}
    repo.date = "2023-06-01T00:00:00+00:00"
    repo.base(pinned, {"pnpm-lock.yaml": "lockfileVersion: '9.0'\n"})
    repo.date = "2024-12-01T00:00:00+00:00"
    old = _fix(repo, "fix: one", 1)  # its base: 2023-06-01
    new = _fix(repo, "fix: two", 2)  # its base: 2024-12-01
    _mine(repo, tmp_path / "out")
    doc = yaml.safe_load((tmp_path / "out" / "candidates" / "owner__app.yaml").read_text())
    env = {e["fix_commit"]: e["environment"] for e in doc["instances"]}
    assert env[new]["package_manager"] == "pnpm" and env[new]["package_manager_version"] == "10.4.1"
    assert env[old]["node"].startswith("18.")  # base committed 2023-06-01: Node 20 was not LTS yet
    assert env[new]["node"].startswith("22.")  # base committed 2024-12-01: Node 22 had entered LTS
    sources = {e["fix_commit"]: e["provenance"]["environment_sources"] for e in doc["instances"]}
    assert "range resolved at 2023-06-01" in sources[old]["node"]


@pytest.mark.parametrize(
    ("spec", "day", "major"),
    [
        (">=18", "2023-01-10", 18),
        (">=18", "2024-03-01", 20),
        (">=18", "2026-01-01", 24),
        (">=22", "2023-01-10", 22),
        ("lts/*", "2021-12-01", 16),
        ("20.11.1", "2019-01-01", 20),
    ],
)
def test_node_range_resolves_to_the_release_current_at_a_date(spec: str, day: str, major: int) -> None:
    assert int(resolve_node_version(spec, source="t", as_of=day).split(".")[0]) == major
    assert resolve_node_version(">=18", source="t").startswith("24.")  # no date: the newest match, as before


def test_a_volta_pin_beats_the_engines_range(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.base({**PACKAGE, "engines": {"node": ">=18"}, "volta": {"node": "22.14.0", "yarn": "1.22.22"}})
    _fix(repo, "fix: one", 1)
    _mine(repo, tmp_path / "out")
    assert "node: 22.14.0" in (tmp_path / "out" / "candidates" / "owner__app.yaml").read_text()


def test_yarn_berry_pin_keeps_its_version(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    repo.base({**PACKAGE, "packageManager": "yarn@4.1.1"}, {"yarn.lock": "__metadata:\n  version: 8\n"})
    _fix(repo, "fix: one", 1)
    _mine(repo, tmp_path / "out")
    text = (tmp_path / "out" / "candidates" / "owner__app.yaml").read_text()
    assert "package_manager: yarn" in text and "package_manager_version: 4.1.1" in text


def test_exit_status_says_nothing_was_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo(tmp_path)
    repo.base()
    repo.commit("docs only", {"README.md": "hi\n"})
    code, report = _mine(repo, tmp_path / "out")
    assert code == 1 and report["candidates"] == 0
    err = capsys.readouterr().err
    assert "no candidate among 2 commits scanned" in err and "no_tests_touched" in err
    assert "mine: scanned 2 commits, 0 candidates" in err  # the progress totals


def test_progress_line_is_throttled() -> None:
    now = [0.0]
    stream = io.StringIO()
    progress = Progress(stream, clock=lambda: now[0])
    for i in range(1, 40):
        now[0] = i * 1.0
        progress.update(i, 100, i // 3)
    progress.done(39, 13)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "mine: scanned 15/100 commits, 5 candidates, 1.0 commits/s" and len(lines) == 3
    assert lines[-1].startswith("mine: scanned 39 commits, 13 candidates") and lines[-1].endswith("(39.0 s)")
