"""A patch's size is the candidate's (issue 24, item 2): over a limit it is ``policy_violation``
(``patch_too_large``) decided before anything runs and counted against the candidate; under the limits any
number of files reaches git through a file (``--stdin``, ``xargs -0 -a``), never one command line, so
10,001 files are graded, not ``workspace_error``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PyRepo, git, manifest_for
from pytest_mobilebench.patch import parse_patch
from pytest_mobilebench.suites.issue_resolution.policy import PatchLimits, size_findings


def _added_files(count: int, *, prefix: str = "generated/padding/with-a-rather-long-folder-name") -> str:
    """A diff adding ``count`` one-line files (names ~70 bytes: 10,001 of them are ~700 KB of names,
    five times the kernel's 128 KiB limit on one command-line argument)."""
    return "".join(
        f"diff --git a/{prefix}/f{i:05d}.txt b/{prefix}/f{i:05d}.txt\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/{prefix}/f{i:05d}.txt\n@@ -0,0 +1 @@\n+{i}\n"
        for i in range(count)
    )


def test_size_findings_name_each_limit_and_the_option() -> None:
    text = _added_files(3)
    info = parse_patch(text, name="p")
    assert size_findings(text, info, PatchLimits()) == []
    found = size_findings(text, info, PatchLimits(files=2, bytes=100, lines=2))
    assert [f.split(" > ")[1].split()[0] for f in found] == [
        "--mb-max-patch-bytes",
        "--mb-max-patch-files",
        "--mb-max-patch-lines",
    ]
    assert all(f.startswith("patch_too_large: ") for f in found)
    assert size_findings("x" * 101, None, PatchLimits(bytes=100))  # bytes are checked before any parse
    limits = PatchLimits.from_options({"mb_max_patch_files": 7, "mb_max_patch_bytes": None})
    assert (limits.files, limits.bytes) == (7, PatchLimits().bytes)


pytestmark = pytest.mark.usefixtures("mb_cache")


def _run(pytester: pytest.Pytester, repo: PyRepo, patch: str, *args: str) -> dict:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest_for(repo)})
    pred = {"instance_id": "acme__calc-1", "model_name_or_path": "model-x", "model_patch": patch}
    pytester.makefile(".jsonl", preds=json.dumps(pred) + "\n")
    pytester.runpytest(
        "cases",
        "--predictions=preds.jsonl",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "-p",
        "no:cacheprovider",
        *args,
    )
    return json.loads((pytester.path / "reports" / "latest" / "summary.json").read_text())["instances"]["acme__calc-1"]


def test_ten_thousand_files_is_the_candidates_policy_violation_not_infra(
    pytester: pytest.Pytester, pyrepo: PyRepo
) -> None:
    fix = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n"
    result = _run(pytester, pyrepo, fix + _added_files(10_001))
    assert result["reason"] == "policy_violation" and not result.get("retryable")
    assert result["policy_violations"] == [
        "patch_too_large: 10,002 files > --mb-max-patch-files 5,000"
    ]  # the fix + 10,001
    evidence = Path(result["evidence_dir"])
    assert not (evidence / "apply.json").exists() and not (evidence / "run.json").exists()  # nothing ran


@pytest.mark.e2e  # a whole run applying and diffing 10,001 files: about a minute
def test_ten_thousand_files_under_a_raised_limit_are_graded(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    fix = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n"
    result = _run(pytester, pyrepo, fix + _added_files(10_001), "--mb-max-patch-files=20000")
    assert result["reason"] == "resolved", result.get("detail")
    assert not result.get("retryable") and "infra_kind" not in result
