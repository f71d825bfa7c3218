"""A candidate change split the way the suite derives it: test patch / fix patch, its test plan, its environment.

Everything here reads the repository at the *base* commit (the fix commit's first parent), as the suite
does when it evaluates the instance: the test rule comes from the project's configuration there
(``frameworks.read_config`` + ``fw.test_rule``), the diff is split by :func:`patch.split_patch`, the test
plan is the framework's plan for the test patch's files (so the validation runs those files only, never a
blanket suite), and the environment is what the framework's recipe infers from the base tree.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, final

from pytest_mobilebench.mining._harness import (
    ENVIRONMENT_RECIPE_KEYS,
    PatchInfo,
    frameworks,
    harden_plan,
    infer_recipe,
    parse_patch,
    split_patch,
)
from pytest_mobilebench.mining.gitsource import Source

__all__ = [
    "Split",
    "environment_at",
    "planned_command",
    "recipe_paths",
    "split_change",
    "test_rule_at",
    "unread_snapshots",
]


@final
@dataclasses.dataclass(frozen=True)
class Split:
    """The two halves of a fix commit's diff and what they touch."""

    patch: str
    test_patch: str
    gold: PatchInfo
    tests: PatchInfo

    @property
    def test_files(self) -> list[str]:
        """Test files the test patch leaves in place (deleted ones are not run)."""
        return [f.path for f in self.tests.files if f.status.value != "deleted"]

    def proxies(self) -> dict[str, Any]:
        """Difficulty proxies (MobileDev-Bench's strata): fix files / lines, artifact types, test files / lines."""
        artifacts = sorted(a.value for a in self.gold.artifacts)
        return {
            "gold_files": len(self.gold.files),
            "gold_lines": self.gold.lines_changed,
            "artifacts": artifacts,
            "multi_artifact": len(artifacts) > 1,
            "test_files": len(self.tests.files),
            "test_lines": self.tests.lines_changed,
        }


def test_rule_at(source: Source, framework: str, commit: str) -> Callable[[str], bool]:
    """The framework's test-file rule under the project's configuration at ``commit``."""
    fw = frameworks.get(framework)
    return fw.test_rule(frameworks.read_config(fw, lambda paths: source.read(commit, paths)))


def split_change(diff: str, is_test: Callable[[str], bool], *, name: str) -> Split:
    """Split ``diff`` into fix and test patch (:func:`split_patch`) and parse both.

    Raises:
        PatchError: the diff is not a patch the harness can read (``name`` labels the message).
    """
    patch, test_patch = split_patch(diff, is_test, name=name)
    return Split(
        patch, test_patch, parse_patch(patch, name=f"{name} (fix)"), parse_patch(test_patch, name=f"{name} (tests)")
    )


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A repository-relative glob (``**`` spans folders, ``*`` and ``?`` do not) as a regex."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def planning_files(source: Source, framework: str, commit: str, names: Sequence[str] | None = None) -> dict[str, bytes]:
    """The framework's planning files at ``commit`` (its ``planning_files`` globs over the tracked paths)."""
    regexes = [_glob_regex(g) for g in frameworks.get(framework).planning_files]
    tracked = source.names(commit) if names is None else names
    return source.read(commit, [n for n in tracked if any(r.match(n) for r in regexes)])


#: stands for the workspace's own results folder (absolute, random per run) in a recorded command
RESULTS_PLACEHOLDER = "/<results>"


def planned_command(source: Source, framework: str, commit: str, test_files: Sequence[str],
                    names: Sequence[str] | None = None) -> str:  # fmt: skip
    """The command the harness runs for ``test_files`` at ``commit``: the framework's plan as the suite hardens
    it (:func:`pytest_mobilebench.trust.harden_plan`: the installed runner called directly, never through a
    package manager such as ``npx``; its results moved out of the repository, to the folder written
    :data:`RESULTS_PLACEHOLDER`). Jest runs of ``--runTestsByPath`` also get the harness's canary options.

    Raises:
        PlanError: the framework plans no run for these files (instrumentation tests only, no runnable test).
    """
    plan = frameworks.get(framework).plan(planning_files(source, framework, commit, names), test_files)
    return harden_plan(plan, RESULTS_PLACEHOLDER).command


def unread_snapshots(framework: str, test_files: Sequence[str], tracked: set[str]) -> list[str]:
    """Why the snapshot-only part of ``test_files`` is not run: one message per changed snapshot
    (``dir/__snapshots__/X.test.tsx.snap``) whose test file (``dir/X.test.tsx``, jest's default snapshot
    path) is not among the ``tracked`` paths (at the base, or added by the test patch); ``[]`` when every snapshot has
    its test file, or the change has no snapshot, or the framework has no snapshot rule (its optional
    ``snapshot_owner``)."""
    owner_of = getattr(frameworks.get(framework), "snapshot_owner", None)
    out = []
    for path in test_files:
        if owner_of is None or not path.endswith(".snap"):
            continue
        owner = owner_of(path)
        if owner is None or owner not in tracked:
            out.append(
                f"{path}: its test file {owner or '(none: not under __snapshots__/)'} does not exist, so no test "
                "reads this snapshot"
            )
    return out


def recipe_paths(framework: str, names: Sequence[str]) -> list[str] | None:
    """Of the tracked ``names``, those the framework's recipe reads (its optional ``recipe_files`` globs);
    None when the framework names no such list (its whole tree is exported)."""
    globs = getattr(frameworks.get(framework), "recipe_files", None)
    if globs is None:
        return None
    regexes = [_glob_regex(g) for g in globs]
    return [n for n in names if any(r.match(n) for r in regexes)]


def environment_at(source: Source, framework: str, commit: str, *, as_of: str | None = None,
                   names: Sequence[str] | None = None) -> tuple[dict[str, str], dict[str, str]]:  # fmt: skip
    """``(environment facts, where each came from)`` inferred by the framework's recipe from the tree at
    ``commit``: the manifest's ``environment`` keys (``node``, ``package_manager``, ``package_manager_version``,
    ``jdk``, ``gradle``, ``android_sdk``, ``build_tools``, ``flutter``, ``install``) and the recipe's sources.
    Only the files the recipe reads are exported (:func:`recipe_paths`; ``names``: the tracked paths, read
    when not given). ``as_of`` (the commit's date) resolves a version range to the release current then.

    Raises:
        RecipeError (a ValueError): the recipe cannot be inferred (file and value named).
        GitError: an object the recipe needs cannot be read (git's message).
    """
    paths = recipe_paths(framework, source.names(commit) if names is None else names)
    with tempfile.TemporaryDirectory(prefix="mobilebench-env-") as tmp:
        tree = source.export(commit, Path(tmp), paths)
        recipe = infer_recipe(tree, framework, overrides={"as_of": as_of} if as_of else {})
    facts: dict[str, str] = {}
    sources: dict[str, str] = {}
    for field, key in ENVIRONMENT_RECIPE_KEYS.items():
        if field == "install":
            if recipe.install_command:
                facts["install"] = recipe.install_command
            continue
        if key in recipe.toolchain:
            facts[field] = str(recipe.toolchain[key])
            sources[field] = str(recipe.sources.get(key, ""))
    return facts, sources
