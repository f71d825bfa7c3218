"""The trust boundary between a candidate and its grader, as pure functions (issue 7, items 1 and 3).

* :func:`scrubbed_environment` - the test command's environment without the variables that change how a
  runner starts (``NODE_OPTIONS``, ``npm_config_*``, ``JAVA_TOOL_OPTIONS``, ``GRADLE_OPTS`` ...).
* :func:`relocate_results` - a test plan whose own result files go to a folder chosen per run, outside
  the repository, so a file planted by the patch at the usual place is never read as this run's result.
* :func:`direct_runner` - ``npx jest`` / ``yarn jest`` / ``pnpm exec jest`` replaced by the installed
  ``node_modules/.bin/jest``: a package manager reads project configuration (``.npmrc``
  ``node-options``, ``.yarnrc*``) that the candidate's patch can add, the runner's own binary does not.
* :func:`cross_check` - the parsed report against the runner's exit status and its console summary; a
  disagreement means the report was tampered with (a ``policy_violation`` with both in the evidence).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Final

from pytest_mobilebench.plan import TestPlan
from pytest_mobilebench.parsers import (
    ParseResult,
    console_counts,  # (passed, failed) of the runner's console summary
)
from pytest_mobilebench.states import TestState

__all__ = [
    "SCRUBBED_NAMES",
    "SCRUBBED_PREFIXES",
    "console_counts",
    "cross_check",
    "cross_check_run",
    "direct_runner",
    "harden_plan",
    "relocate_results",
    "scrubbed_environment",
]

#: variables a runner or its interpreter reads at start-up to load code or change options
SCRUBBED_NAMES: Final[frozenset[str]] = frozenset(
    {
        "NODE_OPTIONS",
        "NODE_PATH",
        "NODE_REPL_EXTERNAL_MODULE",
        "NODE_V8_COVERAGE",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "JAVA_OPTS",
        "GRADLE_OPTS",
        "GRADLE_USER_HOME_INIT",
        "DART_VM_OPTIONS",
        "FLUTTER_TEST_ARGS",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "RUBYOPT",
        "GIT_CONFIG_PARAMETERS",
    }
)
#: prefixes (case-insensitive) of package-manager and build-tool configuration variables
SCRUBBED_PREFIXES: Final[tuple[str, ...]] = ("npm_config_", "yarn_", "pnpm_", "org_gradle_", "jest_")


def _scrubbed(name: str) -> bool:
    return name in SCRUBBED_NAMES or name.lower().startswith(SCRUBBED_PREFIXES)


def scrubbed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without :data:`SCRUBBED_NAMES` and :data:`SCRUBBED_PREFIXES` variables, plus ``CI=true``."""
    clean = {k: v for k, v in environ.items() if not _scrubbed(k)}
    clean["CI"] = "true"
    return clean


#: package-manager launchers of jest, at the start of a command or after ``&&`` / ``;`` / ``||``
_LAUNCHER: Final = re.compile(r"(^|&&|;|\|\|)(\s*)(?:npx|yarn|pnpm\s+exec|npm\s+exec\s+--)\s+jest(?=\s|$)")
#: the installed runner, called directly
JEST_BIN: Final[str] = "node_modules/.bin/jest"


def direct_runner(command: str) -> str:
    """``command`` with every package-manager launch of jest replaced by :data:`JEST_BIN`.

    ``"mkdir -p r && npx jest --ci"`` -> ``"mkdir -p r && node_modules/.bin/jest --ci"``. Yarn Plug'n'Play
    projects (no ``node_modules``) are not supported by this rule.
    """
    return _LAUNCHER.sub(lambda m: f"{m.group(1)}{m.group(2)}{JEST_BIN}", command)


def harden_plan(plan: TestPlan, results_dir: str) -> TestPlan:
    """:func:`relocate_results` then :func:`direct_runner` on the command: the plan the harness runs."""
    moved = relocate_results(plan, results_dir)
    return TestPlan(direct_runner(moved.command), moved.result_globs, moved.parser, moved.modules)


def relocate_results(plan: TestPlan, results_dir: str) -> TestPlan:
    """``plan`` with its own result folder moved under ``results_dir`` (absolute, outside the repository).

    A result glob whose first component is literal and written in the command as ``<first>/`` (jest's
    ``.mobilebench/jest-results.json``) is rewritten in both; globs the command does not name (Gradle's
    ``build/test-results``) stay, and the caller empties them before the run instead.
    """
    if not results_dir.startswith("/"):
        raise ValueError(f"results_dir must be absolute, got {results_dir!r}")
    command = plan.command
    globs: list[str] = []
    for pattern in plan.result_globs:
        first = pattern.split("/", 1)[0]
        literal = not re.search(r"[*?\[]", first) and not pattern.startswith("/") and "/" in pattern
        if literal and re.search(rf"(?<![\w./-]){re.escape(first)}/", command):
            target = f"{results_dir.rstrip('/')}/{first}"
            command = re.sub(rf"(?<![\w./-]){re.escape(first)}(?=[/\s]|$)", target, command)
            globs.append(f"{results_dir.rstrip('/')}/{pattern}")
        else:
            globs.append(pattern)
    return TestPlan(command, tuple(globs), plan.parser, plan.modules)


def cross_check(
    parser: str,
    exit_code: int | None,
    tests: Mapping[str, TestState],
    console: tuple[int, int] | None,
    passed_on_retry: Collection[str] = (),
) -> str | None:
    """Why the parsed report cannot be this run's, or None when exit status and console agree with it.

    Args:
        parser: the plan's parser name; the exit-status rule applies to ``"jest"`` (jest exits 0 exactly
            when no test failed; Gradle and Flutter also exit non-zero for build problems).
        exit_code: the runner's exit status (None after a timeout: nothing is checked).
        tests: the parsed states.
        console: ``(passed, failed)`` from the runner's console summary, or None when it printed none.
        passed_on_retry: ids the runner retried and finally passed (``ParseResult.passed_on_retry``):
            ``FAIL`` in ``tests``, counted as passed here, as the runner counts them (a project using
            ``jest.retryTimes`` exits 0 and prints them as passed, which is no forgery).

    A report with more passes than the console, or no failure where the console has some, disagrees.

    Returns:
        One sentence naming both sides, e.g. ``"report says 3 passed / 0 failed, console says 1 passed
        / 2 failed"``.
    """
    if exit_code is None:
        return None
    runner_view = {t: TestState.PASS if t in passed_on_retry else s for t, s in tests.items()}
    passed = sum(1 for s in runner_view.values() if s == TestState.PASS)
    failed = sum(1 for s in runner_view.values() if s == TestState.FAIL)
    # only the direction a forger needs: more passes or fewer failures than the runner printed (a parser
    # that merges two same-named tests reports fewer of both, which is no forgery)
    if console is not None and (passed > console[0] or (console[1] > 0 and failed == 0)):
        return (
            f"report says {passed} passed / {failed} failed, the runner's console says "
            f"{console[0]} passed / {console[1]} failed"
        )
    if parser == "jest" and exit_code == 0 and failed:
        return f"report says {failed} failed but jest exited 0"
    if parser == "jest" and exit_code != 0 and passed and not failed and console is None:
        return f"report says {passed} passed / 0 failed but jest exited {exit_code} and printed no summary"
    return None


def cross_check_run(parser: str, exit_code: int | None, parsed: ParseResult, output: str) -> str | None:
    """:func:`cross_check` of one run from its facts: the parse (its tests and retried passes) against the
    exit status and the console summary read from ``output``. The live run and the re-grade both ask this."""
    return cross_check(parser, exit_code, parsed.tests, console_counts(parser, output), parsed.passed_on_retry)
