"""Static filters of the miner: cheap reasons to drop a commit before any diff is split or test is run.

A commit of the first-parent history is a *candidate* when its change (against its first parent) touches
both test files, by the framework's own test-discovery rule under the project's configuration at the
parent, and non-test source. Each commit that is not becomes one :class:`Reason`, counted in the report.
The rules run on ``git diff --numstat`` only (:func:`static_reason` is pure).

Framework inference (:func:`infer_framework`) reads the build files at the repository root: ``pubspec.yaml``
-> flutter; a ``package.json`` naming ``react-native``, ``expo`` or ``jest`` -> react-native; a Gradle
settings or build script -> android (checked in this order: Flutter and React-Native projects carry an
``android/`` Gradle folder of their own).
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Final

from pytest_mobilebench.mining._harness import (
    Artifact,
    artifact_type,
    is_lock_file,
    tool_dir_of,
)
from pytest_mobilebench.mining._harness import frameworks as _frameworks
from pytest_mobilebench.mining.gitsource import Commit, FileStat, MiningError

__all__ = [
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_LINES",
    "REASON_MEANINGS",
    "RELEASE_SUBJECT",
    "ROLLUP_COMMITS",
    "Reason",
    "infer_framework",
    "is_generated",
    "static_reason",
]


@enum.unique
class Reason(str, enum.Enum):
    """Why a commit is not an instance (the report counts each)."""

    ROOT_COMMIT = "root_commit"  # no parent to diff against
    MERGE_NOISE = "merge_noise"  # a branch-sync merge, or a merge that changes nothing on the first parent
    ROLLUP = "rollup"  # a merge bringing more than ROLLUP_COMMITS commits: a feature or release roll-up
    RELEASE = "release_or_version_bump"  # the message says release / version bump (RELEASE_SUBJECT)
    UNREADABLE = "unreadable_object"  # git cannot read the commit or an object it needs (git's message)
    EMPTY_CHANGE = "empty_change"  # no file changed
    NO_TESTS_TOUCHED = "no_tests_touched"
    TEST_ONLY = "test_only"
    GENERATED_VENDORED_OR_LOCKFILE = "generated_vendored_or_lockfile_only"
    NO_SOURCE_CHANGE = "no_source_change"  # the non-test part is docs / CI / linter configuration only
    OVERSIZED = "oversized"
    UNPARSEABLE_DIFF = "unparseable_diff"
    NO_RUNNABLE_TESTS = "no_runnable_tests"  # the framework plans no test run for the test patch's files
    SNAPSHOT_WITHOUT_TEST = "snapshot_without_test"  # only snapshots changed, and no test reading them runs
    NO_ENVIRONMENT = "environment_not_inferred"
    # after validation
    INVALID = "invalid"  # SPEC section 1: no F2P / N2P, a P2F, or base / fix did not build and run
    FLAKY = "flaky"  # invalid once the flaky tests are dropped
    INFRA_ERROR = "infra_error"  # the validation run failed for the harness's reasons (retried next time)
    #: a dependency this machine cannot fetch (a package the registry lacks, a host outside it): named, not retried
    ENVIRONMENT_UNAVAILABLE = "environment_unavailable"


#: What each rejection reason means (the report gives it beside the counts).
REASON_MEANINGS: Final[dict[Reason, str]] = {
    Reason.ROOT_COMMIT: "no parent to diff against",
    Reason.MERGE_NOISE: "a merge syncing branches, or one changing nothing on the first parent",
    Reason.ROLLUP: "a merge bringing more than ROLLUP_COMMITS commits: a feature or release roll-up, not one fix",
    Reason.RELEASE: "a release or version-bump commit (its subject)",
    Reason.UNREADABLE: "git cannot read the commit or an object it needs (the mirror lacks it); detail: git's message",
    Reason.EMPTY_CHANGE: "changes no file",
    Reason.NO_TESTS_TOUCHED: "touches no test file",
    Reason.TEST_ONLY: "touches test files only",
    Reason.GENERATED_VENDORED_OR_LOCKFILE: "besides the tests, only lock files, vendored, tool or generated files",
    Reason.NO_SOURCE_CHANGE: "besides the tests, only docs and configuration",
    Reason.OVERSIZED: "more non-test files or lines than --max-files / --max-lines",
    Reason.UNPARSEABLE_DIFF: "a diff the harness's patch reader refuses",
    Reason.NO_RUNNABLE_TESTS: "the framework plans no test run for the test patch's files",
    Reason.SNAPSHOT_WITHOUT_TEST: "only snapshots changed, and the test file reading them does not exist",
    Reason.NO_ENVIRONMENT: "the recipe cannot infer an environment at the base (file and value named)",
    Reason.INVALID: "validation: no FAIL_TO_PASS / NONE_TO_PASS, a PASS_TO_FAIL, or base / fix did not run",
    Reason.FLAKY: "validation: nothing left to pass once the flaky tests are dropped",
    Reason.INFRA_ERROR: "validation failed for the harness's reasons (retried next time)",
}

#: Fix-part limits (non-test files, and their added + removed lines): bigger changes are rarely one issue.
DEFAULT_MAX_FILES: Final = 50
DEFAULT_MAX_LINES: Final = 2000

#: Folder names of vendored or generated code (besides the harness's tool folders: node_modules, build ...).
_VENDOR_DIRS: Final = frozenset(
    {"vendor", "vendors", "third_party", "third-party", "thirdparty", "external", "generated", "__generated__",
     "dist", "gen", "Carthage"}
)  # fmt: skip
#: File-name endings of generated code (Dart build_runner, minified bundles, protobuf, snapshots of builds).
_GENERATED_SUFFIXES: Final = (".g.dart", ".freezed.dart", ".gr.dart", ".mocks.dart", ".config.dart", ".pb.dart",
                              ".pbenum.dart", ".pbjson.dart", ".min.js", ".min.css", ".bundle.js", ".map")  # fmt: skip
#: A merge bringing more commits than this (``rev-list --count P1..P2``) is a roll-up of many changes.
ROLLUP_COMMITS: Final = 10
#: A release or version-bump subject: ``chore(release): 3.38.0``, ``Release 4.5.0``, ``[RELEASE] ...``,
#: ``Bump version to 1.2.3``, ``version bump``, ``v1.2.3`` alone, ``Preparation for 0.11.0 release``.
RELEASE_SUBJECT: Final = re.compile(
    r"^(?:chore\(release\)|release\b|\[release\]|bump(?:ed|s)?\b.*\bversion\b|version bump|"
    r"v?\d+\.\d+\.\d+\S*\s*(?:\(#\d+\))?$)|\bprepar\w* (?:for |of )?(?:the )?(?:v?\d[\w.-]* )?release\b",
    re.IGNORECASE,
)
#: A merge that syncs branches rather than landing a change (``git merge`` / GitHub wording).
_SYNC_MERGE: Final = re.compile(r"^Merge (?:(?:remote-tracking )?branch|tag|commit) |^Merge .+ into ", re.IGNORECASE)


def is_generated(path: str) -> bool:
    """Whether ``path`` is vendored, generated, a tool folder's or a lock file (never the fix itself)."""
    parts = PurePosixPath(path).parts
    if any(part in _VENDOR_DIRS for part in parts[:-1]) or tool_dir_of(path) is not None:
        return True
    return path.endswith(_GENERATED_SUFFIXES) or is_lock_file(path)


def static_reason(
    commit: Commit,
    files: Sequence[FileStat],
    is_test: Callable[[str], bool],
    *,
    max_files: int = DEFAULT_MAX_FILES,
    max_lines: int = DEFAULT_MAX_LINES,
    side_commits: int = 0,
) -> Reason | None:
    """The first static reason to drop ``commit`` (its first-parent change is ``files``; a merge brings
    ``side_commits`` commits), or None (pure).

    Order: root commit, merge noise, roll-up (more than :data:`ROLLUP_COMMITS`), release or version bump
    (:data:`RELEASE_SUBJECT`), empty change, no test file, test files only, only generated /
    vendored / lock files besides the tests, only docs and configuration besides the tests, more than
    ``max_files`` non-test files or ``max_lines`` non-test lines."""
    if not commit.parents:
        return Reason.ROOT_COMMIT
    if len(commit.parents) > 1 and (not files or _SYNC_MERGE.match(commit.subject)):
        return Reason.MERGE_NOISE
    if side_commits > ROLLUP_COMMITS:
        return Reason.ROLLUP
    if RELEASE_SUBJECT.search(commit.subject):
        return Reason.RELEASE
    if not files:
        return Reason.EMPTY_CHANGE
    tests = [f for f in files if is_test(f.path)]
    rest = [f for f in files if not is_test(f.path)]
    if not tests:
        return Reason.NO_TESTS_TOUCHED
    if not rest:
        return Reason.TEST_ONLY
    own = [f for f in rest if not is_generated(f.path)]
    if not own:
        return Reason.GENERATED_VENDORED_OR_LOCKFILE
    if all(artifact_type(f.path) in (Artifact.DOCS, Artifact.CONFIG) for f in own):
        return Reason.NO_SOURCE_CHANGE
    if len(rest) > max_files or sum(f.added + f.removed for f in rest) > max_lines:
        return Reason.OVERSIZED
    return None


def _package_names(data: bytes | None) -> set[str]:
    try:
        package = json.loads(data or b"")
    except (ValueError, UnicodeDecodeError):
        return set()
    if not isinstance(package, Mapping):
        return set()
    names: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies"):
        if isinstance(package.get(key), Mapping):
            names |= set(package[key])
    return names | ({"jest"} if "jest" in package else set())


def infer_framework(files: Mapping[str, bytes]) -> str:
    """The framework of a repository from its root build files (``{path: bytes}`` of ``pubspec.yaml``,
    ``package.json``, ``settings.gradle(.kts)``, ``build.gradle(.kts)``); see the module docstring.

    Raises:
        MiningError: no build file names a known framework (pass ``--framework``).
    """
    if "pubspec.yaml" in files:
        return "flutter"
    if _package_names(files.get("package.json")) & {"react-native", "expo", "jest", "jest-expo"}:
        return "react-native"
    if any(name in files for name in ("settings.gradle", "settings.gradle.kts", "build.gradle", "build.gradle.kts")):
        return "android"
    known = ", ".join(_frameworks.names())
    raise MiningError(f"no root build file names a framework ({known}): pass --framework")


#: The root files :func:`infer_framework` reads.
FRAMEWORK_FILES: Final = ("pubspec.yaml", "package.json", "settings.gradle", "settings.gradle.kts", "build.gradle",
                          "build.gradle.kts")  # fmt: skip
__all__ += ["FRAMEWORK_FILES"]
