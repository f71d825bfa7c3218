"""A commit the repository lacks, or a repository that is not there, is the data's fault: the instance is
``invalid`` (counted over all selected, its message naming the instance, the field and the commit), never a
``clone_failed`` infrastructure error retried on every run. A network failure stays infrastructure."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from conftest import PyRepo, manifest_for
from pytest_mobilebench.runtime.base import InfraError, NotInRepository
from pytest_mobilebench.runtime.repos import RepoCache, source_absent

MISSING = "0123456789abcdef0123456789abcdef01234567"


pytestmark = pytest.mark.usefixtures("mb_cache")


def _run(pytester: pytest.Pytester, manifest: str) -> tuple[pytest.RunResult, dict]:
    pytester.makefile(".yaml", **{"cases/acme__calc": manifest})
    result = pytester.runpytest(
        "cases",
        "--predictions=gold",
        "--mb-runtime=local",
        "--mb-run-id=r",
        "-p",
        "no:cacheprovider",
        "--mb-summary=reports/r/summary.json",
        "--junitxml=reports/junit.xml",
    )
    return result, json.loads((pytester.path / "reports" / "r" / "summary.json").read_text())


def test_a_base_commit_the_repository_lacks_is_an_invalid_instance(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    second = manifest_for(pyrepo).split("instances:\n")[1].replace("acme__calc-1", "acme__calc-2")
    manifest = manifest_for(pyrepo) + second.replace(f"base_commit: {pyrepo.base}", f"base_commit: {MISSING}")
    result, summary = _run(pytester, manifest)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"invalid benchmark instance: *acme__calc.yaml:*: instance 'acme__calc-2': field "
            f"'base_commit': base_commit {MISSING} is not in the repository*"
        ]
    )
    block = summary["headlines"]["issue_resolution"]
    assert (block["selected"], block["invalid"], block["evaluated"], block["infra_errors"]) == (2, 1, 1, 0)
    assert (block["over_all"]["numerator"], block["over_all"]["denominator"]) == (1, 2)  # counted over all selected
    assert "acme__calc-2" not in summary["instances"] and "clone_failed" not in json.dumps(summary)
    assert summary["not_run_instances"] == []  # it ran, and is invalid: nothing to resume
    (error,) = summary["manifest_errors"]
    assert "acme__calc-2" in error and MISSING in error and "base_commit" in error
    assert not list((pytester.path / "reports" / "cache").rglob("*.json")) or all(
        "acme__calc-2" not in p.read_text() for p in (pytester.path / "reports" / "cache").rglob("*.json")
    )


def test_a_fix_commit_the_repository_lacks_names_that_field(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    result, summary = _run(
        pytester, manifest_for(pyrepo).replace(f"fix_commit: {pyrepo.fix}", f"fix_commit: {MISSING}")
    )
    result.assert_outcomes(failed=1)
    assert summary["headlines"]["issue_resolution"]["invalid"] == 1
    assert f"field 'fix_commit': fix_commit {MISSING} is not in the repository" in summary["manifest_errors"][0]


def test_a_repo_url_with_no_repository_is_invalid(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    result, summary = _run(
        pytester, manifest_for(pyrepo).replace(f"repo_url: {pyrepo.path}", "repo_url: ./no-such-repo")
    )
    result.assert_outcomes(failed=1)
    assert summary["headlines"]["issue_resolution"]["invalid"] == 1 and summary["infra_errors"] == 0
    assert "field 'repo_url'" in summary["manifest_errors"][0] and "no repository at" in summary["manifest_errors"][0]


def test_a_source_that_does_not_answer_stays_infrastructure(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    with socket.socket() as sock:  # a port nothing listens on: connection refused, the network's fault
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result, summary = _run(
        pytester,
        manifest_for(pyrepo).replace(f"repo_url: {pyrepo.path}", f"repo_url: http://127.0.0.1:{port}/calc.git"),
    )
    result.assert_outcomes(failed=1)
    inst = summary["instances"]["acme__calc-1"]
    assert (inst["reason"], inst["infra_kind"]) == ("infra_error", "clone_failed")
    assert summary["headlines"]["issue_resolution"]["invalid"] == 0


def test_repo_cache_tells_the_data_from_the_network(tmp_path: Path, pyrepo: PyRepo) -> None:
    cache = RepoCache(root=tmp_path / "repos", run_id="t")
    with pytest.raises(NotInRepository) as lacking:
        cache.ensure("acme/calc", [pyrepo.base, MISSING], url=str(pyrepo.path))
    assert lacking.value.commits == (MISSING,) and MISSING in str(lacking.value)
    with pytest.raises(NotInRepository):
        cache.ensure("acme/nope", [], url=str(tmp_path / "nope"))
    # a mirror folder of the URL template that lacks the repository is the set-up's: infrastructure
    template = RepoCache(
        root=tmp_path / "repos2", url_template=f"file://{tmp_path}/mirrors/{{owner}}+{{name}}.git", run_id="t"
    )
    with pytest.raises(InfraError, match="clone_failed"):
        template.ensure("acme/calc", [])
    assert source_absent(
        "https://example.invalid/a/b", "remote: Repository not found.\nfatal: repository 'x' not found", own=False
    )
    assert not source_absent(
        "https://example.invalid/a/b", "fatal: unable to access: Could not resolve host", own=False
    )


def test_with_two_models_the_invalid_instance_counts_once(pytester: pytest.Pytester, pyrepo: PyRepo) -> None:
    """Each model's item of the instance fails; as a broken manifest entry, it counts once against each model."""
    from conftest import git

    second = manifest_for(pyrepo).split("instances:\n")[1].replace("acme__calc-1", "acme__calc-2")
    pytester.makefile(
        ".yaml",
        **{
            "cases/acme__calc": manifest_for(pyrepo)
            + second.replace(f"base_commit: {pyrepo.base}", f"base_commit: {MISSING}")
        },
    )
    fix = git(pyrepo.path, "diff", pyrepo.base, pyrepo.fix, "--", "calc.py") + "\n"
    rows = [
        {"instance_id": i, "model_name_or_path": m, "model_patch": fix}
        for i in ("acme__calc-1", "acme__calc-2")
        for m in ("m1", "m2")
    ]
    pytester.makefile(".jsonl", preds="".join(json.dumps(r) + "\n" for r in rows))
    result = pytester.runpytest(
        "cases",
        "--predictions=preds.jsonl",
        "--mb-runtime=local",
        "--mb-trust-candidates",
        "--mb-run-id=r",
        "-p",
        "no:cacheprovider",
        "--mb-summary=reports/r/summary.json",
    )
    result.assert_outcomes(passed=2, failed=2)
    block = json.loads((pytester.path / "reports" / "r" / "summary.json").read_text())["headlines"]["issue_resolution"]
    assert (block["selected"], block["invalid"], block["evaluated"], block["not_run"]) == (3, 1, 2, 0)
    for model in ("m1", "m2"):
        own = block["models"][model]
        assert (own["selected"], own["invalid"], own["evaluated"], own["not_run"]) == (2, 1, 1, 0), own
        assert (own["over_all"]["numerator"], own["over_all"]["denominator"]) == (1, 2)
