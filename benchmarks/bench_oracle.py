"""What the assertion oracle adds per jest instance: ``--mb-oracle=on`` against ``off``, in the same invocation.

    python benchmarks/bench_oracle.py [--cases cases/examples] [--rounds 3] [--runtime docker]

Each round grades ``--predictions=gold`` on every instance of ``--cases`` twice, once with the oracle on (the
recorder wraps every matcher call in realm, the channel carries one signed record per call, the harness decides
each out of realm) and once off, alternating which goes first, each in a fresh reports folder (so the result cache
never answers). Per instance it reads the evidence's ``run.json`` ``duration_s`` (the harnessed jest run) and the
time the judge spent (wall of the whole pytest run divided by the instances, as a coarse upper bound). Prints
the medians per side, the seconds per instance the oracle adds, and ratio = on / off (target <= 1.10 on the
bundled instances). The machine's load changes by the minute: compare the two sides of the same run only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]


def run_once(cases: str, runtime: str, mode: str, reports: Path) -> tuple[float, dict[str, float], dict[str, str]]:
    """One gold run: ``(wall seconds, {instance: jest run seconds}, {instance: reason})``."""
    started = time.monotonic()
    argv = [sys.executable, "-m", "pytest", cases, "--predictions=gold", f"--mb-runtime={runtime}",
            f"--mb-reports-dir={reports}", f"--mb-oracle={mode}", "-q", "-p", "no:cacheprovider"]  # fmt: skip
    subprocess.run(argv, cwd=ROOT, check=False, capture_output=True)
    wall = time.monotonic() - started
    durations: dict[str, float] = {}
    reasons: dict[str, str] = {}
    for result_file in reports.glob("2*/*/*/result.json"):
        result = json.loads(result_file.read_text(encoding="utf-8"))
        instance = str(result["instance_id"])
        reasons[instance] = str(result.get("reason")) + (
            "" if result.get("reason") == "resolved" else f" ({result.get('detail')})"
        )
        run_file = result_file.parent / "run.json"
        if run_file.is_file():
            durations[instance] = float(json.loads(run_file.read_text(encoding="utf-8")).get("duration_s") or 0.0)
    return wall, durations, reasons


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="cases/examples")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runtime", default="docker", choices=("auto", "docker"))
    args = parser.parse_args()
    walls: dict[str, list[float]] = {"on": [], "off": []}
    jest: dict[str, list[float]] = {"on": [], "off": []}
    for round_no in range(args.rounds):
        for mode in ("on", "off") if round_no % 2 == 0 else ("off", "on"):
            with tempfile.TemporaryDirectory(prefix=f"mb-bench-oracle-{mode}-") as tmp:
                wall, durations, reasons = run_once(args.cases, args.runtime, mode, Path(tmp))
            if not durations or any(r != "resolved" for r in reasons.values()):
                print(f"round {round_no + 1} {mode}: not every instance resolved: {reasons}", file=sys.stderr)
                return 1
            walls[mode].append(wall / len(durations))
            jest[mode].extend(durations.values())
            print(f"round {round_no + 1} {mode:>3}: {wall:7.1f} s wall, jest runs {sorted(durations.values())}")
    on, off = statistics.median(jest["on"]), statistics.median(jest["off"])
    won, woff = statistics.median(walls["on"]), statistics.median(walls["off"])
    print(f"jest run per instance, median: on {on:.2f} s, off {off:.2f} s: +{on - off:.2f} s, ratio {on / off:.3f}")
    print(
        f"pipeline per instance, median: on {won:.2f} s, off {woff:.2f} s: +{won - woff:.2f} s, ratio {won / woff:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
