"""The conformance kit: what every runtime provider's workspaces must do, as checks a provider author runs.

Point the kit at a provider's runtime (any :class:`~pytest_mobilebench.runtime.base.Runtime`) from a test::

    import pytest
    from pytest_mobilebench.runtime.conformance import CHECKS, kit_repository

    @pytest.mark.parametrize("check", CHECKS, ids=str)
    def test_pod_workspaces_conform(check, tmp_path):
        spec = kit_repository(tmp_path)  # the kit's own small git repository
        check.run(lambda: PodRuntime().prepare(spec))  # "passed", "skipped: ..."; raises ConformanceError

Each :class:`Check` prepares a fresh workspace (``prepare()``), exercises one part of the contract and closes
it. A check of a :class:`~pytest_mobilebench.runtime.base.Capability` runs only where the workspace declares
that capability (``skipped`` otherwise: a suite then refuses untrusted candidates on it, see
``docs/architecture.md``). The checks: the apply ladder (``git apply``, ``--3way``, ``patch --fuzz``, a patch
that applies nowhere leaving the tree as it was), restores (a changed and an added file back to base), reads
(globs with ``**``, absolute patterns under ``results_root``, links never read, ``clear_files``), a timeout
killing the command's process group, no network when asked (:attr:`~Capability.NETWORK_OFF`), the one-way
result channel (:attr:`~Capability.RESULT_CHANNEL`), root-owned files (:attr:`~Capability.ROOT_FILES`), the
base check (:attr:`~Capability.BASE_CHECK`), root commands (:attr:`~Capability.ROOT_EXEC`), and ``close``
twice. The repository's folder must be readable where the provider clones from (``spec.repo_url`` is its path).

Commands the checks run need a POSIX shell with coreutils, ``git`` and GNU ``patch`` in the workspace.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final, final

from pytest_mobilebench.runtime.base import Capability, InfraError, Workspace, WorkspaceSpec

__all__ = ["CHECKS", "Check", "ConformanceError", "check_all", "kit_repository"]

#: the kit repository's file the patch checks edit: twelve numbered lines
APP: Final[str] = "src/app.txt"
_LINES: Final[list[str]] = [f"line {n}\n" for n in range(1, 13)]
_KEEP: Final[str] = "keep.txt"


class ConformanceError(AssertionError):
    """A workspace broke the contract; the message names the check and what it saw."""


def _expect(ok: bool, check: str, what: str) -> None:
    if not ok:
        raise ConformanceError(f"{check}: {what}")


def kit_repository(folder: Path, *, run_id: str = "conformance") -> WorkspaceSpec:
    """Make the kit's git repository under ``folder`` (``kit/src/app.txt``: twelve lines; ``keep.txt``) and
    return the :class:`WorkspaceSpec` naming it (``repo_url``: its path, ``repo``: ``kit/repo``).

    Raises:
        subprocess.CalledProcessError: git failed on this host.
    """
    repo = folder / "kit" / "repo"
    (repo / "src").mkdir(parents=True, exist_ok=True)
    (repo / APP).write_text("".join(_LINES), encoding="utf-8")
    (repo / _KEEP).write_text("kept\n", encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "kit", "GIT_AUTHOR_EMAIL": "kit@localhost"}
    env.update(GIT_COMMITTER_NAME="kit", GIT_COMMITTER_EMAIL="kit@localhost")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "kit base"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    return WorkspaceSpec(f"kit__repo-{secrets.token_hex(4)}", "kit/repo", sha.stdout.strip(), str(repo), run_id=run_id)


def _blob(lines: list[str]) -> str:
    """git's blob id of ``lines`` joined (``sha1("blob <size>\\0" + bytes)``)."""
    data = "".join(lines).encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's object id


def _patch(before: list[str], after: list[str], *, index: bool = False, path: str = APP) -> str:
    """A ``git diff`` of ``path`` from ``before`` to ``after`` (3 lines of context; ``index``: with blob ids)."""
    body = "".join(difflib.unified_diff(before, after, f"a/{path}", f"b/{path}", n=3))
    head = f"diff --git a/{path} b/{path}\n" + (f"index {_blob(before)}..{_blob(after)} 100644\n" if index else "")
    return head + body


def _edit(lines: list[str], number: int) -> list[str]:
    return [f"LINE {number}\n" if i == number - 1 else line for i, line in enumerate(lines)]


def _apply_ladder(ws: Workspace) -> None:
    name = "apply ladder"
    broken = ws.apply_patch(_patch(["no such line\n"], ["other\n"]), name="kit_broken")
    _expect(not broken.ok and broken.method is None and bool(broken.log), name, f"a patch applying nowhere: {broken}")
    _expect(ws.diff() == "", name, "a failed patch left the tree changed")
    first = ws.apply_patch(_patch(_LINES, _edit(_LINES, 3)), name="kit_clean")
    _expect(first.ok and first.method == "git apply", name, f"a clean patch: {first.method} ({first.log[-300:]})")
    merged = ws.apply_patch(_patch(_LINES, _edit(_LINES, 6), index=True), name="kit_3way")  # context has line 3
    _expect(merged.ok and merged.method == "git apply --3way", name, f"a 3-way patch: {merged.log[-300:]}")
    fuzzy = _patch(_LINES, _edit(_LINES, 10)).replace(" line 7\n", " line seven\n")  # no index: no 3-way
    fuzzed = ws.apply_patch(fuzzy, name="kit_fuzz")
    _expect(fuzzed.ok and fuzzed.method == "patch --fuzz", name, f"a fuzzy patch: {fuzzed.log[-300:]}")
    tree = ws.read_files([APP]).get(APP, b"").decode()
    _expect(all(f"LINE {n}\n" in tree for n in (3, 6, 10)), name, f"the tree after three patches: {tree!r}")


def _restores(ws: Workspace) -> None:
    name = "restores"
    added = "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n"
    changed = _patch(["kept\n"], ["changed\n"], path=_KEEP)
    _expect(ws.apply_patch(changed + added, name="kit_restore").ok, name, "the patch to restore did not apply")
    _expect(ws.read_files(["new.txt"]) == {"new.txt": b"new\n"}, name, "the added file is not there")
    ws.restore_paths([_KEEP, "new.txt", "never/there.txt"])
    _expect(ws.diff() == "", name, f"the tree differs from base after the restore: {ws.diff()[:300]!r}")
    _expect(ws.read_files(["new.txt", _KEEP]) == {_KEEP: b"kept\n"}, name, "restored files are not the base's")


def _reads(ws: Workspace) -> None:
    name = "reads"
    ws.clear_files([f"{ws.results_root}/*.xml"])  # makes results_root, empty
    made = ws.run(
        "mkdir -p out/a/b && printf x > out/a/r.xml && printf y > out/a/b/s.xml && printf z > out/t.xml && "
        "ln -s ../../keep.txt out/a/link.xml && ln -s /etc/hostname out/a/abs.xml && "
        f"printf r > {ws.results_root}/res.xml",
        timeout_s=60,
    )
    _expect(made.exit_code == 0, name, f"making the files failed: {made.output[-300:]}")
    found = ws.read_files(["out/**/*.xml"])
    want = {"out/a/r.xml": b"x", "out/a/b/s.xml": b"y", "out/t.xml": b"z"}
    _expect(found == want, name, f"read_files(out/**/*.xml) = {sorted(found)} (links must never be read)")
    _expect(sorted(ws.list_files(["out/**/*.xml"])) == sorted(want), name, "list_files names other files")
    key = f"{ws.results_root.lstrip('/')}/res.xml"
    absolute = ws.read_files([f"{ws.results_root}/*.xml"])
    _expect(absolute == {key: b"r"}, name, f"an absolute pattern read {sorted(absolute)}, not {key}")
    cleared = ws.clear_files(["out/a/*.xml", f"{ws.results_root}/*.xml"])
    _expect("out/a/r.xml" in cleared, name, f"clear_files returned {cleared}")
    left = ws.read_files(["out/**/*.xml", f"{ws.results_root}/*.xml"])
    _expect(left == {"out/a/b/s.xml": b"y", "out/t.xml": b"z"}, name, f"after clear_files: {sorted(left)}")


def _timeout_kills_the_group(ws: Workspace) -> None:
    name = "timeout"
    started = time.monotonic()
    run = ws.run("(sleep 3; echo late > late.txt) & sleep 120", timeout_s=1)
    _expect(run.timed_out and run.exit_code is None, name, f"not reported as timed out: {run}")
    _expect(time.monotonic() - started < 60, name, "the command outlived its limit by far")
    time.sleep(3.5)  # past the background's write, had it survived
    _expect(ws.read_files(["late.txt"]) == {}, name, "a process of the timed-out command lived on and wrote")
    after = ws.run("echo alive", timeout_s=60)
    _expect(after.exit_code == 0 and "alive" in after.output, name, "the workspace cannot run after a timeout")


def _network_off(ws: Workspace) -> None:
    run = ws.run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -vx lo || true", timeout_s=60)
    _expect(run.output.strip() == "", "network off", f"interfaces beyond loopback: {run.output.strip()!r}")


def _channel_one_way(ws: Workspace) -> None:
    name = "result channel"
    folder = f"/var/tmp/mb-kit-{secrets.token_hex(6)}"
    command = (
        "echo one >&3; cat <&4 > key.seen; echo '{\"ok\": true}' >&5; "
        "(echo reopened > /proc/self/fd/3) 2>/dev/null && echo REOPENED; "
        f"(echo changed > {folder}/given.txt) 2>/dev/null && echo CHANGED_ROOT_FILE; "
        "(sleep 5; echo late >&3) >/dev/null 2>&1 & echo started"  # detached: the run ends, it must not write
    )
    run, channel, status = ws.run_with_channel(
        command, files={f"{folder}/given.txt": b"given\n"}, key=b"kit-key", timeout_s=120
    )
    _expect("started" in run.output, name, f"the command did not run: {run.output[-300:]}")
    for word in ("REOPENED", "CHANGED_ROOT_FILE"):
        _expect(word not in run.output, name, f"the test user could: {word}")
    _expect(channel == b"one\n", name, f"the channel holds {channel[:200]!r}, not what fd 3 got before the end")
    _expect(status == b'{"ok": true}\n', name, f"the status file holds {status!r}")
    _expect(ws.read_files(["key.seen"]) == {"key.seen": b"kit-key"}, name, "fd 4 did not give the key")


def _root_files(ws: Workspace) -> None:
    name = "root files"
    path = f"/var/tmp/mb-kit-{secrets.token_hex(6)}/given.txt"
    ws.write_root_files({path: b"given\n"}, private="")
    run = ws.run(f"echo changed > {path} 2>/dev/null; rm -f {path} 2>/dev/null; cat {path}", timeout_s=60)
    _expect(run.output.strip().endswith("given"), name, f"the test user changed a root-owned file: {run.output!r}")
    _expect(ws.read_files([path]) == {path.lstrip("/"): b"given\n"}, name, "the root-owned file reads otherwise")


def _base_check(ws: Workspace) -> None:
    name = "base check"
    _expect(ws.apply_patch(_patch(_LINES, _edit(_LINES, 5)), name="kit_first").ok, name, "the first patch")
    conflicting = _patch(_LINES, [*_LINES[:4], "line five\n", *_LINES[5:]])
    at_base, log = ws.applies_at_base(conflicting)
    _expect(at_base, name, f"a patch of the base tree does not apply at base: {log[-300:]}")
    _expect(not ws.apply_patch(conflicting, name="kit_conflict").ok, name, "a conflicting patch applied")
    _expect(not ws.applies_at_base(_patch(["none\n"], ["x\n"]))[0], name, "a patch of nothing applies at base")
    _expect(b"LINE 5" in ws.read_files([APP]).get(APP, b""), name, "the base check touched the work tree")


def _root_exec(ws: Workspace) -> None:
    code, out, _err = ws.root_exec(["/bin/sh", "-c", "id -u"])
    _expect(code == 0 and out.strip() == b"0", "root exec", f"not root: exit {code}, {out!r}")


def _close_twice(ws: Workspace) -> None:
    ws.close()
    ws.close()
    ws.close_later()


@final
@dataclasses.dataclass(frozen=True)
class Check:
    """One part of the contract: ``needs`` (a capability, or None for every workspace) and its ``body``."""

    name: str
    needs: Capability | None
    body: Callable[[Workspace], None]

    def __str__(self) -> str:
        return self.name

    def run(self, prepare: Callable[[], Workspace]) -> str:
        """Prepare a workspace, check it, close it: ``"passed"`` or ``"skipped: <capability> not declared"``.

        Raises:
            ConformanceError: the workspace broke the contract (the message names the check).
            InfraError: the provider failed outright (a check never turns one into a pass).
        """
        ws = prepare()
        try:
            if self.needs is not None and not ws.has(self.needs):
                return f"skipped: {self.needs.value} not declared"
            self.body(ws)
        finally:
            ws.close()
        return "passed"


#: every check, in the order a provider author meets them
CHECKS: Final[tuple[Check, ...]] = (
    Check("apply_ladder", None, _apply_ladder),
    Check("restores", None, _restores),
    Check("reads_globs_and_links", None, _reads),
    Check("timeout_kills_the_process_group", None, _timeout_kills_the_group),
    Check("no_network_when_asked", Capability.NETWORK_OFF, _network_off),
    Check("result_channel_is_one_way", Capability.RESULT_CHANNEL, _channel_one_way),
    Check("root_files_stay_root_owned", Capability.ROOT_FILES, _root_files),
    Check("base_check", Capability.BASE_CHECK, _base_check),
    Check("root_exec", Capability.ROOT_EXEC, _root_exec),
    Check("close_twice", None, _close_twice),
)


def check_all(prepare: Callable[[], Workspace]) -> dict[str, str]:
    """Every check of :data:`CHECKS` on fresh workspaces: ``{name: "passed" | "skipped: ..." | "failed: ..."}``.

    An :class:`InfraError` of the provider is a failure of that check too (the message kept).
    """
    outcomes: dict[str, str] = {}
    for check in CHECKS:
        try:
            outcomes[check.name] = check.run(prepare)
        except (ConformanceError, InfraError) as exc:
            outcomes[check.name] = f"failed: {exc}"
    return outcomes
