"""Shared by the start-up and collection benchmarks: one timed ``pytest --collect-only -q`` in a subprocess.

Every ``pytest11`` plugin of the environment other than pytest-mobilebench is switched off (``-p no:NAME``)
in every run, with and without the plugin alike (pytest's own cache plugin stays on, its folder is the
benchmark's temporary one), so a ratio compares pytest-mobilebench with bare pytest and nothing else (the ``dev`` extra
installs pytest-xdist, pytest-html, pytest-timeout ...).

Python's bytecode cache is on in every run (``PYTHONPYCACHEPREFIX`` under the benchmark's temporary folder,
``PYTHONDONTWRITEBYTECODE`` dropped), as for an installed package, whose modules are compiled once: without
it every run compiles each imported module of the package from source, while pytest's own come compiled
from site-packages (:func:`bytecode_env`; ``--no-bytecode`` in the scripts keeps the environment as it is).

Each run is measured twice: wall seconds, and the CPU seconds (user + system) of the pytest process, which
other processes on a loaded machine disturb much less; ratios are given for both.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

PLUGIN = "mobilebench"


def other_plugins_off() -> list[str]:
    """``-p no:NAME`` for every installed ``pytest11`` entry point except pytest-mobilebench's."""
    names = sorted({ep.name for ep in importlib.metadata.entry_points(group="pytest11") if ep.name != PLUGIN})
    return [arg for name in names for arg in ("-p", f"no:{name}")]


def bytecode_env(folder: Path | None) -> dict[str, str]:
    """The environment of the runs: with ``folder``, bytecode cached under it (see the module docstring)."""
    env = dict(os.environ)
    if folder is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(folder)
    return env


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def collect(
    args: Sequence[str], cwd: Path, *, plugin: bool = True, env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """Run ``pytest --collect-only -q`` with ``args`` (the plugin off when ``plugin`` is False).

    Returns (wall seconds, CPU seconds, items collected); items is 0 when pytest found nothing (exit status
    5) and -1 on any other failure (its output goes to stderr).
    """
    off = [*other_plugins_off(), *(() if plugin else ("-p", f"no:{PLUGIN}"))]
    cpu = _child_cpu()
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *off, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed, cpu = time.monotonic() - started, _child_cpu() - cpu
    if proc.returncode == 5:
        return elapsed, cpu, 0
    found = re.search(r"(\d+) tests? collected", proc.stdout)
    if proc.returncode != 0 or not found:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
        return elapsed, cpu, -1
    return elapsed, cpu, int(found.group(1))


def best_of(
    repeat: int,
    runs: dict[str, tuple[Sequence[str], bool]],
    cwd: Path,
    expect: dict[str, int],
    env: dict[str, str] | None = None,
    median: bool = False,
) -> tuple[dict[str, float], dict[str, float]]:
    """Best (with ``median``: median) wall seconds and CPU seconds of each named run over ``repeat`` rounds,
    the runs interleaved in every round (so the first round also fills the bytecode cache). The median is
    the steadier figure on a machine shared with other work; the best is what the code costs undisturbed.

    Raises:
        SystemExit: a run collected another number of items than ``expect`` says.
    """
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, (args, plugin) in runs.items():
            elapsed, used, count = collect(args, cwd, plugin=plugin, env=env)
            if count != expect[name]:
                raise SystemExit(f"{name}: collected {count} items, expected {expect[name]}")
            walls[name].append(elapsed)
            cpus[name].append(used)
    pick = statistics.median if median else min
    return {n: pick(v) for n, v in walls.items()}, {n: pick(v) for n, v in cpus.items()}


def ratio_lines(
    wall: dict[str, float], cpu: dict[str, float], pairs: dict[str, tuple[str, str, float]]
) -> tuple[list[str], bool]:
    """One line per ``{label: (numerator, denominator, target)}`` with the wall and CPU ratios; and whether
    every wall ratio met its target."""
    lines, met = [], True
    for label, (num, den, target) in pairs.items():
        w, c = wall[num] / wall[den], cpu[num] / cpu[den]
        met = met and w <= target
        lines.append(f"ratio {label}: {w:.2f} wall, {c:.2f} CPU (target <= {target})")
    return lines, met
