"""Build axis of the app-generation suite (MobileForge, seed 002 section 4.1 "Build Success").

The candidate's ``src/`` (plus ``index.html`` and ``public/`` when present) is dropped into a fresh copy of a
clean Vite + React 19 + TypeScript + Tailwind 4 scaffold (``scaffold/``: pinned ``package.json`` and
``package-lock.json``). ``tsc --noEmit`` and ``vite build`` both run; the build counts only with zero errors
from both (:func:`grade_build`). Candidates build in a container (:mod:`.container`); this module's host
path (:func:`ensure_scaffold`, :func:`materialize_project`, :func:`run_build`) runs only for trusted
candidates without a daemon: the scaffold's ``node_modules`` is installed once per machine with ``npm ci``
into ``~/.cache/pytest-mobilebench/scaffold-<hash>`` (under a file lock; ``$PYTEST_MOBILEBENCH_CACHE``
overrides the root) and every build links to it.

Static figures (pure): route count, page-file count and route coverage come from the routes and page modules
that the maintainability module parses with tree-sitter (:func:`.maintainability.measure`); coverage matches
the manifest's concrete routes against declared ones, ``:param`` segments matching any segment.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final, final

from filelock import FileLock

from pytest_mobilebench.files import cache_root
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

__all__ = [
    "SCAFFOLD_DIR",
    "BuildResult",
    "SourceStats",
    "cache_root",
    "count_tsc_errors",
    "count_vite_errors",
    "ensure_scaffold",
    "grade_build",
    "is_catch_all",
    "materialize_project",
    "route_coverage",
    "route_matches",
    "run_build",
    "scaffold_key",
    "source_stats",
]

#: the pinned scaffold shipped with the package
SCAFFOLD_DIR: Final = Path(__file__).parent / "scaffold"
_SCAFFOLD_FILES: Final = ("package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "index.html")

_TSC_ERROR_RE: Final = re.compile(r"\berror TS\d+:")
_VITE_COUNT_RE: Final = re.compile(r"Build failed with (\d+) errors?")
_VITE_CODE_RE: Final = re.compile(r"^\[([A-Z][A-Z_]+)\]", re.MULTILINE)


def _node_major() -> str:
    node = shutil.which("node")
    if node is None:
        raise InfraError(
            InfraKind.NODE_MISSING, "node is not on PATH; the app_generation build axis needs Node.js and npm"
        )
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return out.stdout.strip().split(".")[0] or "unknown"


def scaffold_key() -> str:
    """12 hex digits of sha256 over the scaffold's package.json, lockfile and the Node major version."""
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        h.update((SCAFFOLD_DIR / name).read_bytes())
    h.update(_node_major().encode())
    return h.hexdigest()[:12]


def ensure_scaffold(
    root: Path | None = None, *, progress: Callable[[str], None] | None = None, timeout_s: float = 900.0
) -> Path:
    """Install the pinned scaffold once per machine and return its folder (with ``node_modules``).

    Safe under concurrent xdist workers: a :class:`filelock.FileLock` guards the install and a
    ``.complete`` marker is written last, so a crashed install is redone.

    Raises:
        InfraError: ``npm_missing`` or ``scaffold_install_failed`` (with the npm log).
    """
    root = root or cache_root()
    root.mkdir(parents=True, exist_ok=True)
    key = scaffold_key()
    target = root / f"scaffold-{key}"
    if (target / ".complete").is_file():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise InfraError(InfraKind.NPM_MISSING, "npm is not on PATH; cannot install the Vite scaffold")
    with FileLock(str(root / f"scaffold-{key}.lock"), timeout=timeout_s + 60):
        if (target / ".complete").is_file():
            return target
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(SCAFFOLD_DIR / name, target / name)
        if progress:
            progress(f"installing the Vite scaffold (once per machine); path: {target}")
        try:
            proc = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=target,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise InfraError(InfraKind.SCAFFOLD_INSTALL_FAILED, f"npm ci timed out after {timeout_s:.0f}s") from exc
        if proc.returncode != 0:
            raise InfraError(
                InfraKind.SCAFFOLD_INSTALL_FAILED,
                f"npm ci exited {proc.returncode} in {target}",
                log=proc.stdout + proc.stderr,
            )
        (target / ".complete").write_text(json.dumps({"key": key, "time": time.time()}), encoding="utf-8")
    return target


def materialize_project(candidate: Path, work: Path, scaffold: Path) -> Path:
    """Make a fresh scaffold copy at ``work`` holding the candidate's build inputs (trusted host builds only).

    The inputs are :func:`~.container.build_inputs` (``src/**``, ``public/**``, ``index.html``; links
    never followed), the same files the contained build copies in. ``node_modules`` becomes a symlink to
    ``scaffold/node_modules``. Returns ``work``.

    Raises:
        FileNotFoundError: the candidate has no ``src/`` folder (a candidate fault: the caller reports it as a
            failed build).
        ValueError: the inputs are over the size bounds.
    """
    from pytest_mobilebench.suites.app_generation.container import build_inputs

    if not (candidate / "src").is_dir() or (candidate / "src").is_symlink():
        raise FileNotFoundError(f"the project at {candidate} has no src/ folder")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for name in _SCAFFOLD_FILES:
        shutil.copy2(SCAFFOLD_DIR / name, work / name)
    (work / "node_modules").symlink_to(scaffold / "node_modules", target_is_directory=True)
    files, _refused = build_inputs(candidate)
    for name, data in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    return work


def count_tsc_errors(output: str) -> int:
    """Number of ``error TSnnnn:`` diagnostics in ``tsc --pretty false`` output."""
    return len(_TSC_ERROR_RE.findall(output))


def count_vite_errors(output: str, exit_code: int) -> int:
    """Errors reported by ``vite build``: the ``Build failed with N errors`` figure, else the number of
    ``[CODE]`` error headers, else 1 when the exit code is non-zero, else 0."""
    m = _VITE_COUNT_RE.search(output)
    if m:
        return int(m.group(1))
    if exit_code == 0:
        return 0
    return max(1, len(_VITE_CODE_RE.findall(output)))


@final
@dataclasses.dataclass(frozen=True)
class BuildResult:
    """Outcome of the build axis for one project.

    Attributes:
        ok: both commands exited 0 with zero errors.
        tsc_errors, vite_errors: parsed error counts.
        tsc_exit, vite_exit: exit codes (-1 when timed out or not run).
        dist: the built bundle (``dist/`` with ``index.html``) when ``ok``.
        tsc_log, vite_log: full logs in the evidence folder.
        seconds: wall time of both commands.
        message: a one-line explanation when not ok.
    """

    ok: bool
    tsc_errors: int
    vite_errors: int
    tsc_exit: int
    vite_exit: int
    dist: Path | None
    tsc_log: Path | None
    vite_log: Path | None
    seconds: float
    message: str = ""


def _run(cmd: list[str], cwd: Path, log: Path, timeout_s: float) -> tuple[int, str]:
    env = {**os.environ, "CI": "1", "NO_COLOR": "1", "FORCE_COLOR": "0"}
    with subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
    ) as proc:
        try:
            out, _ = proc.communicate(timeout=timeout_s)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            out += f"\n[pytest-mobilebench] killed after {timeout_s:.0f}s\n"
            code = -1
        except BaseException:  # Ctrl-C: its own session got no SIGINT, so it would outlive the run
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise
    log.write_text(f"$ {' '.join(cmd)}\n{out}", encoding="utf-8")
    return code, out


def grade_build(
    tsc_exit: int,
    tsc_out: str,
    vite_exit: int,
    vite_out: str,
    *,
    has_index: bool,
    dist: Path | None,
    tsc_log: Path | None,
    vite_log: Path | None,
    seconds: float,
) -> BuildResult:
    """The build axis from both commands' exit codes and output (pure; the same rule for every runtime):
    ok when both exit 0 with zero parsed errors and the bundle has ``index.html``; a non-zero tsc exit
    without a parsed diagnostic counts as one error."""
    tsc_errors = count_tsc_errors(tsc_out) or (1 if tsc_exit != 0 else 0)
    vite_errors = count_vite_errors(vite_out, vite_exit)
    ok = tsc_exit == 0 and vite_exit == 0 and tsc_errors == 0 and vite_errors == 0 and has_index
    message = (
        ""
        if ok
        else (
            f"tsc: {tsc_errors} error(s) (exit {tsc_exit}); vite build: {vite_errors} error(s) "
            f"(exit {vite_exit})" + ("" if has_index or vite_exit != 0 else "; no dist/index.html")
        )
    )
    return BuildResult(
        ok=ok,
        tsc_errors=tsc_errors,
        vite_errors=vite_errors,
        tsc_exit=tsc_exit,
        vite_exit=vite_exit,
        dist=dist if ok else None,
        tsc_log=tsc_log,
        vite_log=vite_log,
        seconds=round(seconds, 3),
        message=message,
    )


def run_build(project: Path, log_dir: Path, *, timeout_s: float = 300.0) -> BuildResult:
    """Run ``tsc --noEmit`` then ``vite build`` in a materialised project ON THE HOST (both always run).

    Only for trusted candidates (``--mb-trust-candidates`` without a Docker daemon); everything else is
    built in a container (:mod:`.container`).

    Args:
        project: a folder made by :func:`materialize_project`.
        log_dir: where ``tsc.log`` and ``vite.log`` go (created).
        timeout_s: per command; a timed-out command counts as one error.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    bin_dir = project / "node_modules" / ".bin"
    start = time.monotonic()
    tsc_log, vite_log = log_dir / "tsc.log", log_dir / "vite.log"
    tsc_exit, tsc_out = _run(
        [str(bin_dir / "tsc"), "--noEmit", "-p", "tsconfig.json", "--pretty", "false"], project, tsc_log, timeout_s
    )
    vite_exit, vite_out = _run([str(bin_dir / "vite"), "build"], project, vite_log, timeout_s)
    dist = project / "dist"
    return grade_build(
        tsc_exit,
        tsc_out,
        vite_exit,
        vite_out,
        has_index=(dist / "index.html").is_file(),
        dist=dist,
        tsc_log=tsc_log,
        vite_log=vite_log,
        seconds=time.monotonic() - start,
    )


# ----------------------------------------------------------------------------------------------------------
# static route figures (pure)


def _segments(route: str) -> list[str]:
    return [seg for seg in route.strip("/").split("/") if seg]


def is_catch_all(route: str) -> bool:
    """A ``*`` / ``/*`` / ``/x/*`` splat route: a fallback, not a screen."""
    segs = _segments(route)
    return bool(segs) and segs[-1] == "*"


def route_matches(declared: str, concrete: str) -> bool:
    """Whether a declared route (``:param`` segments match any one segment, ``?`` marks an optional one)
    matches a concrete manifest route. Trailing slashes are ignored; catch-alls never match."""
    if is_catch_all(declared):
        return False
    dec, con = _segments(declared), _segments(concrete)
    required = [d for d in dec if not d.endswith("?")]
    if not (len(required) <= len(con) <= len(dec)):
        return False
    if len(con) == len(dec):
        return all(d.startswith(":") or d.rstrip("?") == c for d, c in zip(dec, con))
    # fewer concrete segments than declared: drop optional segments from the end, then compare
    trimmed = list(dec)
    while len(trimmed) > len(con) and trimmed and trimmed[-1].endswith("?"):
        trimmed.pop()
    return len(trimmed) == len(con) and all(d.startswith(":") or d.rstrip("?") == c for d, c in zip(trimmed, con))


def route_coverage(expected: Iterable[str], declared: Iterable[str]) -> tuple[float, list[str]]:
    """Share of the manifest's ``expected`` routes that some declared route matches (:func:`route_matches`),
    and the missing ones, in order. ``(1.0, [])`` for an empty expectation."""
    exp = list(dict.fromkeys(expected))
    dec = list(declared)
    missing = [r for r in exp if not any(route_matches(d, r) for d in dec)]
    return ((len(exp) - len(missing)) / len(exp) if exp else 1.0), missing


@final
@dataclasses.dataclass(frozen=True)
class SourceStats:
    """Static build-axis figures (seed 002 section 4.1: "route count, page-file count, and route coverage").

    Attributes:
        routes: declared routes without catch-alls (from the maintainability module's tree-sitter
            :func:`~pytest_mobilebench.suites.app_generation.maintainability.parse_routes`).
        pages: page modules (files under ``pages/``-like folders plus files rendered by routes).
        coverage: share of the manifest's routes matched by a declared route.
        missing_routes: the manifest routes no declared route matches.
    """

    routes: tuple[str, ...]
    pages: tuple[str, ...]
    coverage: float
    missing_routes: tuple[str, ...]

    @property
    def route_count(self) -> int:
        """Number of distinct declared routes (catch-alls excluded)."""
        return len(self.routes)

    @property
    def page_file_count(self) -> int:
        """Number of page files."""
        return len(self.pages)


def source_stats(routes: Iterable[str], page_modules: Iterable[str], expected_routes: Iterable[str]) -> SourceStats:
    """Route count, page files and route coverage from parsed routes and page modules (pure)."""
    declared = tuple(r for r in dict.fromkeys(routes) if not is_catch_all(r))
    cov, missing = route_coverage(expected_routes, declared)
    return SourceStats(declared, tuple(sorted(set(page_modules))), round(cov, 6), tuple(missing))
