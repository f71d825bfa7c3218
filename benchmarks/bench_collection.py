"""Collection speed: the same instances as YAML manifests and as a JSONL ``--dataset``, against pytest
collecting as many trivial parametrized tests, in one run.

Generates ``--instances`` issue-resolution instances (default 10,000) in a temporary folder, once as
YAML manifests (``--per-file`` instances per repository file, default 100) and once as one JSON-lines
release, and a ``test_trivial.py`` of one test parametrized over as many values; then times
``pytest --collect-only -q`` on each (best, with ``--median`` median, of ``--repeat`` interleaved runs, wall
seconds, start-up included; every other installed pytest plugin off, see ``_runs.py``; the trivial tests are collected
with ``-p no:mobilebench``). YAML is timed three times: ``yaml`` after an earlier run (pytest's cache folder
as that run left it), ``yaml-cold`` with ``--cache-clear``, both read by yaml-rs
(:mod:`pytest_mobilebench.manifest.fastyaml`); ``yaml-libyaml`` collects the same manifests with one line
more per file (a quoted date and a comment holding it plain: the fast reading cannot tell which is the value) that sends
every file to libyaml, with ``--cache-clear``: the cost of a file the fast reading leaves to PyYAML, shown,
not a target. The release format (issue #33) is timed apart: instances holding ``patch`` and ``test_patch`` inline
(generated diffs of code lines with annotations, doc comments, escaped quotes, brackets and non-ASCII text) and
a multi-line ``problem_statement``, written by ``yaml.safe_dump`` (multi-line strings double-quoted and folded),
against the same rows as JSONL: ``release-yaml`` after an earlier run, ``release-yaml-cold`` with ``--cache-clear``.
Prints the times and the ratios.
Targets (issue #23, #33): JSONL and YAML <= 2x the trivial tests; YAML <= 1.1x JSONL, from a cold cache too, for
both shapes.

Usage: ``python benchmarks/bench_collection.py [--instances 10000] [--per-file 100] [--repeat 3] [--median]
[--no-bytecode]``.
Exit status 1 when a run does not collect exactly the generated number of items, 2 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

import yaml
from _runs import best_of, bytecode_env, ratio_lines

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


#: words and shapes of the generated patches' code lines (annotations, doc comments, quotes, escapes, brackets)
_WORDS = (
    "const",
    "let",
    "return",
    "if",
    "else",
    "function",
    "import",
    "from",
    "export",
    "default",
    "await",
    "async",
    "props",
    "state",
    "value",
    "item",
)


def code_line(rng: random.Random) -> str:
    """One line of JavaScript-like code, as patches hold them: indented, with the characters YAML cares about."""
    indent, words = " " * rng.choice((0, 2, 4, 6, 8)), [rng.choice(_WORDS) for _ in range(rng.randint(2, 7))]
    return indent + rng.choice(
        (
            "// " + " ".join(words),
            "@Override",
            " * " + " ".join(words),
            f'const s = "{words[0]}\\n";',
            f"{words[0]} {words[1]}(a, {{ b: [1, 2] }}) {{ return x > 1 && y < 2 ? !z : *p; }} # {words[-1]}",
            f"{words[0]}: '{words[1]}', caf\u00e9: `${{{words[-1]}}}`,   ",
        )
    )


def patch(rng: random.Random, path: str, lines: int) -> str:
    """A unified diff of ``path`` with ``lines`` changed or context lines."""
    head = [
        f"diff --git a/{path} b/{path}",
        "index 1234567..89abcde 100644",
        f"--- a/{path}",
        f"+++ b/{path}",
        f"@@ -1,{lines} +1,{lines} @@",
    ]
    return "\n".join(head + [rng.choice(" +-") + code_line(rng) for _ in range(lines)]) + "\n"


def release_instance(repo_index: int, number: int, rng: random.Random) -> dict[str, object]:
    """One issue-resolution instance of the release format: ``patch`` and ``test_patch`` inline (multi-line
    strings PyYAML writes double-quoted and folded), a multi-line ``problem_statement``."""
    return {
        "instance_id": f"owner{repo_index}__app-{number}",
        "base_commit": SHA_BASE,
        "problem_statement": f"Module {number} does not reset.\nSteps: tap `reset` twice; expected 0, got 1.\n",
        "patch": patch(rng, f"src/m{number}.js", rng.randint(10, 40)),
        "test_patch": patch(rng, f"src/__tests__/m{number}.test.js", rng.randint(5, 20)),
        "FAIL_TO_PASS": [f"src/__tests__/m{number}.test.js::module {number} > fixes the bug"],
        "PASS_TO_PASS": [f"src/__tests__/m{number}.test.js::module {number} > still works"],
        "difficulty": "easy",
        "category": "bug_fix",
    }


def write_release(folder: Path, total: int, per_file: int) -> tuple[Path, Path]:
    """Write ``release-yaml/*.yaml`` (the release format as ``yaml.safe_dump`` writes it) and
    ``release-patches.jsonl`` holding the same instances."""
    yaml_dir = folder / "release-yaml"
    yaml_dir.mkdir()
    rng, rows = random.Random(0), []
    for repo_index in range((total + per_file - 1) // per_file):
        count = min(per_file, total - repo_index * per_file)
        instances = [release_instance(repo_index, n, rng) for n in range(count)]
        manifest = {
            "suite": "issue_resolution",
            "repo": f"owner{repo_index}/app",
            "framework": "react-native",
            "instances": instances,
        }
        (yaml_dir / f"owner{repo_index}__app.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
        rows += [{"repo": f"owner{repo_index}/app", "framework": "react-native", **inst} for inst in instances]
    jsonl = folder / "release-patches.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return yaml_dir, jsonl


def write_inputs(folder: Path, total: int, per_file: int) -> tuple[Path, Path, Path]:
    """Write ``yaml/*.yaml`` manifests, the same under ``yaml-libyaml/`` with a first line the fast reading
    leaves to libyaml, and ``release.jsonl`` holding the same instances."""
    yaml_dir, slow_dir = folder / "yaml", folder / "yaml-libyaml"
    yaml_dir.mkdir()
    slow_dir.mkdir()
    rows = []
    for repo_index in range((total + per_file - 1) // per_file):
        count = min(per_file, total - repo_index * per_file)
        instances = [instance(repo_index, n) for n in range(count)]
        manifest = {
            "suite": "issue_resolution",
            "repo": f"owner{repo_index}/app",
            "framework": "react-native",
            "instances": instances,
        }
        text = yaml.safe_dump(manifest, sort_keys=False)
        (yaml_dir / f"owner{repo_index}__app.yaml").write_text(text)
        (slow_dir / f"owner{repo_index}__app.yaml").write_text(
            f'# generated 2026-12-02\ncreated_at: "2026-12-02"\n{text}'
        )
        rows += [{"repo": f"owner{repo_index}/app", "framework": "react-native", **inst} for inst in instances]
    jsonl = folder / "release.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return yaml_dir, slow_dir, jsonl


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--per-file", type=int, default=100)
    parser.add_argument("--no-bytecode", action="store_true", help="keep the environment's bytecode setting")
    parser.add_argument("--median", action="store_true", help="median of the rounds instead of the best")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mb-bench-collect-") as tmp:
        folder = Path(tmp)
        (folder / "pytest.ini").write_text("[pytest]\n")  # rootdir here, not the project's testpaths
        env = bytecode_env(None if args.no_bytecode else folder / "pycache")
        yaml_dir, slow_dir, jsonl = write_inputs(folder, args.instances, args.per_file)
        trivial = folder / "test_trivial.py"
        trivial.write_text(
            f"import pytest\n\n\n@pytest.mark.parametrize('i', range({args.instances}))\n"
            "def test_trivial(i):\n    pass\n"
        )
        release_dir, release_jsonl = write_release(folder, args.instances, args.per_file)
        runs = {
            "trivial": ((str(trivial),), False),
            "yaml": ((str(yaml_dir),), True),
            "jsonl": ((str(jsonl), f"--dataset={jsonl}"), True),
            "yaml-cold": ((str(yaml_dir), "--cache-clear"), True),
            "yaml-libyaml": ((str(slow_dir), "--cache-clear"), True),
            "release-jsonl": ((str(release_jsonl), f"--dataset={release_jsonl}"), True),
            "release-yaml": ((str(release_dir),), True),
            "release-yaml-cold": ((str(release_dir), "--cache-clear"), True),
        }
        wall, cpu = best_of(
            args.repeat, runs, folder, env=env, median=args.median, expect=dict.fromkeys(runs, args.instances)
        )
    stat = "median" if args.median else "best"
    print(f"instances: {args.instances} ({args.per_file} per YAML file), {stat} of {args.repeat} (wall s / CPU s)")
    print(f"pytest, {args.instances} trivial tests: {wall['trivial']:7.2f} / {cpu['trivial']:7.2f}")
    print(f"yaml  collection:             {wall['yaml']:7.2f} / {cpu['yaml']:7.2f}")
    print(f"jsonl collection:             {wall['jsonl']:7.2f} / {cpu['jsonl']:7.2f}")
    print(f"yaml collection, cold:        {wall['yaml-cold']:7.2f} / {cpu['yaml-cold']:7.2f}")
    print(f"yaml read by libyaml, cold:   {wall['yaml-libyaml']:7.2f} / {cpu['yaml-libyaml']:7.2f}")
    print(f"release format, jsonl:        {wall['release-jsonl']:7.2f} / {cpu['release-jsonl']:7.2f}")
    print(f"release format, yaml:         {wall['release-yaml']:7.2f} / {cpu['release-yaml']:7.2f}")
    print(f"release format, yaml, cold:   {wall['release-yaml-cold']:7.2f} / {cpu['release-yaml-cold']:7.2f}")
    targets = {
        "jsonl/trivial": ("jsonl", "trivial", 2.0),
        "yaml/trivial": ("yaml", "trivial", 2.0),
        "yaml/jsonl": ("yaml", "jsonl", 1.1),
        "yaml-cold/jsonl": ("yaml-cold", "jsonl", 1.1),
        "release yaml/jsonl": ("release-yaml", "release-jsonl", 1.1),
        "release yaml-cold/jsonl": ("release-yaml-cold", "release-jsonl", 1.1),
    }
    lines, met = ratio_lines(wall, cpu, targets)
    lines.append(
        f"ratio yaml-libyaml/jsonl: {wall['yaml-libyaml'] / wall['jsonl']:.2f} wall, "
        f"{cpu['yaml-libyaml'] / cpu['jsonl']:.2f} CPU (files the fast reading leaves to libyaml; shown, not a target)"
    )
    print("\n".join(lines))
    return 0 if met else 2


if __name__ == "__main__":
    sys.exit(main())
