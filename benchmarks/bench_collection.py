"""Collection speed: the same instances as YAML manifests and as a JSONL ``--dataset``, in one run.

Generates ``--instances`` issue-resolution instances (default 10,000) in a temporary folder, once as
YAML manifests (``--per-file`` instances per repository file, default 100) and once as one JSON-lines
release, then times ``pytest --collect-only -q`` on each (best of ``--repeat`` runs, wall seconds, the
pytest start-up included in both). Prints both times and the ratio YAML / JSONL.
Target (issue #8, item 6): YAML collection of 10,000 instances in <= 2 s, i.e. close to the JSONL time.

Usage: ``python benchmarks/bench_collection.py [--instances 10000] [--per-file 100] [--repeat 3]``
Exit status 1 when a run does not collect exactly the generated number of items.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

SHA_BASE = "9c6228e0" * 5
SHA_FIX = "c0e7f3bb" * 5


def instance(repo_index: int, number: int) -> dict[str, object]:
    """One valid issue-resolution instance of repository ``owner{repo_index}/app``."""
    return {
        "instance_id": f"owner{repo_index}__app-{number}",
        "base_commit": SHA_BASE,
        "fix_commit": SHA_FIX,
        "FAIL_TO_PASS": [f"src/__tests__/m{number}.test.js::module {number} > fixes the bug"],
        "PASS_TO_PASS": [f"src/__tests__/m{number}.test.js::module {number} > still works", "a.test.js::x"],
        "difficulty": "easy",
        "category": "bug_fix",
    }


def write_inputs(folder: Path, total: int, per_file: int) -> tuple[Path, Path]:
    """Write ``yaml/*.yaml`` manifests and ``release.jsonl`` holding the same instances."""
    yaml_dir = folder / "yaml"
    yaml_dir.mkdir()
    rows = []
    for repo_index in range((total + per_file - 1) // per_file):
        count = min(per_file, total - repo_index * per_file)
        instances = [instance(repo_index, n) for n in range(count)]
        manifest = {"suite": "issue_resolution", "repo": f"owner{repo_index}/app", "framework": "react-native",
                    "instances": instances}
        (yaml_dir / f"owner{repo_index}__app.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
        rows += [{"repo": f"owner{repo_index}/app", "framework": "react-native", **inst} for inst in instances]
    jsonl = folder / "release.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return yaml_dir, jsonl


def collect(args: list[str], cwd: Path) -> tuple[float, int]:
    """Run ``pytest --collect-only -q`` with ``args``; returns (wall seconds, items collected)."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd, capture_output=True, text=True, check=False,
    )
    elapsed = time.monotonic() - started
    found = re.search(r"(\d+) tests? collected", proc.stdout)
    if proc.returncode != 0 or not found:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
        return elapsed, -1
    return elapsed, int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--per-file", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mb-bench-collect-") as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n")  # rootdir here, not the project's testpaths
        yaml_dir, jsonl = write_inputs(folder, args.instances, args.per_file)
        runs = {"yaml": (str(yaml_dir),), "jsonl": (str(jsonl), f"--dataset={jsonl}")}
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            for name, extra in runs.items():
                elapsed, count = collect(list(extra), folder)
                if count != args.instances:
                    print(f"{name}: collected {count} items, expected {args.instances}")
                    return 1
                best[name] = min(best.get(name, elapsed), elapsed)
    print(f"instances: {args.instances} ({args.per_file} per YAML file), best of {args.repeat}")
    print(f"yaml  collection: {best['yaml']:7.2f} s")
    print(f"jsonl collection: {best['jsonl']:7.2f} s")
    print(f"ratio yaml/jsonl: {best['yaml'] / best['jsonl']:.2f} (target: yaml <= 2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
