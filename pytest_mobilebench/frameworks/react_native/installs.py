"""The dependency install command of a React-Native checkout (issue 30, item 3: installs as real projects need them).

The install is frozen to the lockfile when there is one (``npm ci``, ``yarn install --frozen-lockfile``, berry's
``--immutable``, pnpm's ``--frozen-lockfile``). Real histories hold commits whose lockfile no longer matches their
``package.json`` (RocketChat/Rocket.Chat.ReactNative in 2017-2018: ``npm ERR! Invalid: lock file's strip-ansi@3.0.1
does not satisfy strip-ansi@^4.0.0``; yarn's ``Your lockfile needs to be updated, but yarn was run with
--frozen-lockfile``): the project's own CI installed them unfrozen (``npm install``). A frozen install that fails
for that reason alone, as its own output says (``install_log.OUT_OF_DATE_MARKERS``), is run once more unfrozen;
the lockfile is put back as it was afterwards, so the checkout stays the commit's tree. The second attempt prints
:data:`REFRESHED_NOTE` first, so the install log says which install the environment holds. Any other failure ends
the install as before and is classified from its log (:mod:`pytest_mobilebench.runtime.install_log`).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Final

from pytest_mobilebench.runtime.install_log import OUT_OF_DATE_MARKERS, REFRESH_PREFIX

__all__ = ["REFRESHED_NOTE", "install_command"]

#: the first line of the unfrozen second attempt (``lockfile_out_of_date`` in :mod:`.install_log`'s terms)
REFRESHED_NOTE: Final[str] = (
    REFRESH_PREFIX + " {lock} does not match package.json; installing again unfrozen, "
    "as the project's own CI would (the lockfile is put back after)"
)
_LOG: Final[str] = "/tmp/mobilebench-frozen-install.log"
_BACKUP: Final[str] = "/tmp/mobilebench-lockfile.orig"


def install_command(repo_dir: Path, manager: str, flavour: str) -> str:
    """The bash script installing the checkout's dependencies (run with ``set -e`` in ``repo_dir``'s copy): the
    manager's plain install without a lockfile, else the frozen one with its refresh (the module docstring).

    Args:
        repo_dir: the checkout (its lockfiles decide frozen or not).
        manager: ``npm`` | ``yarn`` | ``pnpm``. flavour: ``classic`` | ``berry`` for yarn.
    """
    plain, frozen, unfrozen, lock = _commands(repo_dir, manager, flavour)
    return plain if lock is None else _with_refresh(frozen, unfrozen, lock)


def _commands(repo_dir: Path, manager: str, flavour: str) -> tuple[str, str, str, str | None]:
    """``(plain install, frozen install, unfrozen install, the lockfile or None when there is none)``."""
    if manager == "npm":
        lock = next((n for n in ("npm-shrinkwrap.json", "package-lock.json") if (repo_dir / n).is_file()), None)
        plain = "npm install --no-audit --no-fund"
        return plain, "npm ci --no-audit --no-fund", plain, lock
    if manager == "pnpm":
        lock = "pnpm-lock.yaml" if (repo_dir / "pnpm-lock.yaml").is_file() else None
        return "pnpm install", "pnpm install --frozen-lockfile", "pnpm install --no-frozen-lockfile", lock
    lock = "yarn.lock" if (repo_dir / "yarn.lock").is_file() else None
    if flavour == "berry":
        return "yarn install", "yarn install --immutable", "yarn install --no-immutable", lock
    plain = "yarn install --non-interactive"
    return plain, "yarn install --frozen-lockfile --non-interactive", plain, lock


def _with_refresh(frozen: str, unfrozen: str, lock: str) -> str:
    """``frozen``; when it failed and its output names an out-of-date lockfile, ``unfrozen`` with the lockfile
    kept aside and put back. The output streams as it comes (``tee``), so the install's silence deadline holds."""
    markers = " ".join(f"-e {shlex.quote(m)}" for m in OUT_OF_DATE_MARKERS)
    quoted = shlex.quote(lock)
    note = shlex.quote(REFRESHED_NOTE.format(lock=lock))
    return (
        f"if ! (set -o pipefail; {frozen} 2>&1 | tee {_LOG}); then\n"
        f"  grep -qF {markers} {_LOG} || exit 1\n"
        f"  echo {note}\n"
        f"  cp -p {quoted} {_BACKUP}\n"
        f"  {unfrozen}\n"
        f"  cp -p {_BACKUP} {quoted}\n"
        "fi"
    )
