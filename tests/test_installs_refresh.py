"""The install script of a React-Native checkout, run by bash with stand-in package managers on ``PATH``
(``frameworks/react_native/installs.py``): a frozen install that fails because the lockfile no longer matches
package.json (the output shapes seen on RocketChat/Rocket.Chat.ReactNative's 2017-2018 commits) runs once more
unfrozen and puts the lockfile back; any other failure ends the script with the frozen install's failure, never
a second install; a frozen install that succeeds is all that runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.react_native.installs import install_command

#: a stand-in package manager: logs its arguments, prints $FROZEN_SAYS and exits $FROZEN_EXIT when run frozen,
#: and rewrites the lockfile when run unfrozen (as a real refresh does)
FAKE = """#!/bin/bash
echo "$(basename "$0") $*" >> "$CALLS"
case " $* " in
  *" ci "*|*frozen-lockfile*|*immutable*)
    case " $* " in *no-frozen*|*no-immutable*) ;; *) echo "$FROZEN_SAYS"; exit "$FROZEN_EXIT";; esac;;
esac
echo refreshed > "$LOCK"
"""

#: (manager, flavour, lockfile, what its frozen install prints when the lockfile is out of date)
SHAPES = [
    (
        "npm",
        "",
        "package-lock.json",
        "npm ERR! Invalid: lock file's strip-ansi@3.0.1 does not satisfy strip-ansi@^4.0.0",
    ),
    ("npm", "", "package-lock.json", "npm ERR! Missing: left-pad@^1.3.0 from lock file"),
    (
        "yarn",
        "classic",
        "yarn.lock",
        "error Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`.",
    ),
    (
        "yarn",
        "berry",
        "yarn.lock",
        "YN0028: The lockfile would have been modified by this install, which is forbidden.",
    ),
    ("pnpm", "", "pnpm-lock.yaml", "ERR_PNPM_OUTDATED_LOCKFILE Cannot install with frozen-lockfile"),
]


def _run(tmp_path: Path, manager: str, flavour: str, lock: str, says: str, code: int) -> tuple[int, str, list[str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text("{}")
    (repo / lock).write_text("original")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("npm", "yarn", "pnpm"):
        (bin_dir / name).write_text(FAKE)
        (bin_dir / name).chmod(0o755)
    calls = tmp_path / "calls"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls), "LOCK": str(repo / lock)}
    env |= {"FROZEN_SAYS": says, "FROZEN_EXIT": str(code)}
    script = "set -e; " + install_command(repo, manager, flavour)
    done = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    said = calls.read_text().splitlines() if calls.exists() else []
    return done.returncode, done.stdout + done.stderr, said


@pytest.mark.parametrize(("manager", "flavour", "lock", "says"), SHAPES)
def test_an_out_of_date_lockfile_installs_again_unfrozen_and_is_put_back(
    tmp_path: Path, manager: str, flavour: str, lock: str, says: str
) -> None:
    code, output, calls = _run(tmp_path, manager, flavour, lock, says, 1)
    assert code == 0, output
    assert len(calls) == 2 and all(c.startswith(manager + " ") for c in calls), calls
    assert f"lockfile_out_of_date: {lock} does not match package.json" in output
    assert (tmp_path / "repo" / lock).read_text() == "original"  # the checkout stays the commit's tree


@pytest.mark.parametrize("says", ["npm ERR! 404 Not Found - GET https://r.example/left-pad-x", "error Command failed."])
def test_any_other_failure_of_the_frozen_install_is_the_install_failure(tmp_path: Path, says: str) -> None:
    code, output, calls = _run(tmp_path, "npm", "", "package-lock.json", says, 1)
    assert code != 0 and len(calls) == 1 and says in output, (calls, output)


def test_a_frozen_install_that_succeeds_is_all_that_runs(tmp_path: Path) -> None:
    code, output, calls = _run(tmp_path, "yarn", "classic", "yarn.lock", "Done in 1.0s", 0)
    assert code == 0 and calls == ["yarn install --frozen-lockfile --non-interactive"], (calls, output)
    assert "lockfile_out_of_date" not in output


def test_without_a_lockfile_the_plain_install_runs_once(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    assert install_command(repo, "npm", "") == "npm install --no-audit --no-fund"
    assert install_command(repo, "yarn", "berry") == "yarn install"
