"""Start-up: ``pytest --collect-only -q`` in a folder with no tests, with pytest-mobilebench and without it.

Both runs switch every other installed pytest plugin off (``-p no:NAME``, see ``_runs.py``); the bare run
adds ``-p no:mobilebench``. Best (``--median``: median) of ``--repeat`` interleaved runs, wall and CPU
seconds. Prints both times and the ratio. Target (issue #23): plugin / bare <= 1.2. With ``--importtime`` it
also prints the slowest imports of ``import pytest_mobilebench.plugin`` (``python -X importtime``,
cumulative microseconds).

Usage: ``python benchmarks/bench_startup.py [--repeat 5] [--median] [--importtime] [--no-bytecode]``
Exit status 1 when the wall ratio misses the target.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from _runs import best_of, bytecode_env, ratio_lines

TARGET = 1.2


def importtime(env: dict[str, str], top: int = 15) -> list[str]:
    """The ``top`` slowest imports (cumulative) of the plugin module after pytest is imported (the second of
    two runs, so the bytecode cache is warm)."""
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import pytest; import pytest_mobilebench.plugin"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    rows = []
    seen_pytest = False
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        if name.strip() == "pytest":
            seen_pytest = True  # everything before is pytest's own
            continue
        if seen_pytest:
            rows.append((int(parts[1]), name))
    return [f"{us / 1000:8.1f} ms {name}" for us, name in sorted(rows, reverse=True)[:top]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-bytecode", action="store_true", help="keep the environment's bytecode setting")
    parser.add_argument("--median", action="store_true", help="median of the rounds instead of the best")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mb-bench-startup-") as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n")  # rootdir here, not the project's testpaths
        env = bytecode_env(None if args.no_bytecode else folder / "pycache")
        runs = {"bare": ((), False), "plugin": ((), True)}
        wall, cpu = best_of(args.repeat, runs, folder, env=env, median=args.median, expect={"bare": 0, "plugin": 0})
        imports = importtime(env) if args.importtime else []
    print(f"start-up, no tests, {'median' if args.median else 'best'} of {args.repeat} (wall s / CPU s)")
    print(f"bare pytest (-p no:mobilebench): {wall['bare']:6.3f} / {cpu['bare']:6.3f}")
    print(f"with pytest-mobilebench:         {wall['plugin']:6.3f} / {cpu['plugin']:6.3f}")
    lines, met = ratio_lines(wall, cpu, {"plugin/bare": ("plugin", "bare", TARGET)})
    print("\n".join(lines))
    if imports:
        print("slowest imports of pytest_mobilebench.plugin (cumulative, after pytest):")
        print("\n".join(imports))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
