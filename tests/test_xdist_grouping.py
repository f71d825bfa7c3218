"""``--dist loadgroup`` must keep one repository's instances on one worker.

Checked on this machine: pytest 9.2.0 with pytest-xdist 3.8.0 silently ignores ``xdist_group`` under
``--dist loadgroup`` (9.1.1 groups correctly), which is why pyproject excludes 9.2.0. This test fails
on a combination that does not group.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

pytest.importorskip("xdist")


def _manifest(repo: str, n: int) -> str:
    slug = repo.replace("/", "__")
    entries = "".join(
        f"  - instance_id: {slug}-{i}\n    base_commit: abcdef1\n    patch: ''\n    test_patch: ''\n" for i in range(n)
    )
    return f"suite: issue_resolution\nrepo: {repo}\nframework: android\ninstances:\n{entries}"


@pytest.mark.e2e
def test_loadgroup_serialises_each_repository_on_one_worker(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", a=_manifest("acme/alpha", 4), b=_manifest("acme/beta", 4), c=_manifest("acme/gamma", 4))
    pytester.makeconftest(
        """
        import json, os
        def pytest_runtest_setup(item):
            with open(os.path.join(str(item.config.rootpath), "workers.jsonl"), "a") as fh:
                fh.write(json.dumps([item.nodeid, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")
        """
    )
    result = pytester.runpytest("-n", "2", "--dist", "loadgroup", "--predictions=empty", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=12)
    workers: dict[str, set[str]] = defaultdict(set)
    for line in (pytester.path / "workers.jsonl").read_text().splitlines():
        nodeid, worker = json.loads(line)
        assert "@" in nodeid, f"xdist did not apply the group to {nodeid}"
        workers[nodeid.split("::")[0]].add(worker)
    assert sorted(workers) == ["a.yaml", "b.yaml", "c.yaml"]
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
