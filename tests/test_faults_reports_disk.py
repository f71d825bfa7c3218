"""A full reports disk ends the run cleanly (issue 24, item 3): under xdist no internal error, the exit
status is 75 (EX_TEMPFAIL: free space and re-run), and the re-run after freeing space resumes. The reports
folder is a small tmpfs the test mounts (root only) and unmounts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import PyRepo, manifest_for
from pytest_mobilebench.report.runs import REPORTS_DISK_FULL_EXIT

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a tmpfs needs root"
)


@pytest.fixture
def small_disk(tmp_path: Path, mb_cache: Path) -> Iterator[Path]:
    folder = tmp_path / "reports"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _run(pytester: pytest.Pytester, repo: PyRepo, reports: Path) -> pytest.RunResult:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest_for(repo)})
    return pytester.runpytest_subprocess(
        "cases",
        "--predictions=gold",
        "--mb-runtime=local",
        f"--mb-reports-dir={reports}",
        "-n",
        "2",
        "-p",
        "no:cacheprovider",
        timeout=300,
    )


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


@pytest.mark.e2e
def test_a_full_reports_disk_ends_the_run_cleanly_and_the_rerun_resumes(
    pytester: pytest.Pytester, pyrepo: PyRepo, small_disk: Path
) -> None:
    filler = _fill(small_disk)
    full = _run(pytester, pyrepo, small_disk)
    out = full.stdout.str() + full.stderr.str()
    assert full.ret == REPORTS_DISK_FULL_EXIT, out[-3000:]
    assert "INTERNALERROR" not in out and "KeyError" not in out
    assert "the reports disk is full" in out and "nothing was run" in out
    filler.unlink()  # free the space: the re-run evaluates and saves
    freed = _run(pytester, pyrepo, small_disk)
    assert freed.ret == 0, freed.stdout.str()[-3000:]
    summary = json.loads((small_disk / "latest" / "summary.json").read_text())
    assert summary["instances"]["acme__calc-1"]["reason"] == "resolved"
    again = _run(pytester, pyrepo, small_disk)  # and an unchanged re-run is answered from the cache
    assert again.ret == 0
    assert json.loads((small_disk / "latest" / "summary.json").read_text())["instances"]["acme__calc-1"]["cached"]
