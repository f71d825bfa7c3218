"""Unchanged re-run: the second run of the same predictions against the first, in the same invocation.

Runs ``pytest <cases> --predictions=<p>`` twice with one fresh reports folder: the first run evaluates
every instance, the second must answer from the content-keyed result cache. Prints both wall times and
their ratio. Target (issue #3): second / first <= 0.05.

Usage: ``python benchmarks/bench_rerun.py [--cases cases/examples] [--predictions gold] [--runtime auto]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(cases: str, predictions: str, runtime: str, reports: Path) -> tuple[float, dict]:
    """One pytest run; returns (wall seconds, summary)."""
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            cases,
            f"--predictions={predictions}",
            f"--mb-runtime={runtime}",
            f"--mb-reports-dir={reports}",
            f"--mb-summary={reports / 'summary.json'}",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
    )
    elapsed = time.monotonic() - started
    return elapsed, json.loads((reports / "summary.json").read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="cases/examples")
    parser.add_argument("--predictions", default="gold")
    parser.add_argument("--runtime", default="auto", choices=("auto", "docker", "local"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mb-bench-rerun-") as tmp:
        reports = Path(tmp)
        first, s1 = run_once(args.cases, args.predictions, args.runtime, reports)
        second, s2 = run_once(args.cases, args.predictions, args.runtime, reports)
    cached = sum(1 for entry in s2["instances"].values() if entry.get("cached"))
    print(f"first run : {first:8.2f} s  ({s1['resolved']}/{s1['total']} resolved)")
    print(f"second run: {second:8.2f} s  ({cached}/{s2['total']} answered from the cache)")
    ratio = second / first if first else float("nan")
    print(f"ratio second/first: {ratio:.3f} (target <= 0.05)")
    return 0 if s1["by_reason"] == s2["by_reason"] else 1


if __name__ == "__main__":
    sys.exit(main())
