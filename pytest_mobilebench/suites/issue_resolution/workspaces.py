"""Where an issue-resolution instance runs: its runtime, its workspace spec and its two patches (inline, or split
from ``fix_commit`` by the framework's test rule). Shared by the evaluation, the live agent and the audit, none of
which imports another for them."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from pytest_mobilebench import frameworks
from pytest_mobilebench.files import atomic_write_text
from pytest_mobilebench.patch import split_patch
from pytest_mobilebench.records import EvalContext
from pytest_mobilebench.runtime.base import Runtime, Workspace, WorkspaceSpec
from pytest_mobilebench.runtime.repos import RepoCache, repo_url
from pytest_mobilebench.suites.issue_resolution.manifest import IssueInstance

__all__ = ["one_run", "release", "resolve_patches", "runtime_for", "workspace_spec"]


def runtime_for(ctx: EvalContext, *, trusted: bool = False) -> Runtime:
    """This process's runtime for the item (the ``mb_runtime`` fixture: :mod:`pytest_mobilebench.runtime.provider`).

    ``trusted``: the benchmark's own code (the gold patch) may run where a real candidate may not.

    Raises:
        InfraError: no runtime can serve the item (no daemon; ``local`` without trust).
    """
    return ctx.fixture("mb_runtime").get(trusted=trusted)  # type: ignore[no-any-return]


def workspace_spec(instance: IssueInstance, ctx: EvalContext) -> WorkspaceSpec:
    """The runtime's view of an instance: repository, base commit, clone URL, environment and the commit its
    install inputs come from."""
    return WorkspaceSpec(
        instance_id=instance.instance_id,
        repo=instance.repo,
        base_commit=instance.base_commit,
        repo_url=instance.repo_url or repo_url(ctx.options["mb_repo_url_template"], instance.repo),
        environment={**instance.environment.model_dump(exclude_none=True), "framework": instance.framework},
        run_id=ctx.run_id,
        environment_setup_commit=instance.environment_setup_commit,
    )


def resolve_patches(instance: IssueInstance, repos: RepoCache) -> tuple[str, str]:
    """``(gold patch, test patch)`` of an instance: inline, or derived from ``fix_commit``.

    Derived patches: ``git diff base_commit fix_commit`` split by the runner's own test rule under the
    project's configuration at the base commit (``frameworks.get(fw).test_rule``; SPEC section 1
    "Test-file identification"): test files -> test patch, the rest -> gold patch.

    Raises:
        InfraError: the repository or a commit cannot be fetched.
    """
    if instance.patch is not None and instance.test_patch is not None:
        return instance.patch, instance.test_patch
    assert instance.fix_commit is not None
    args = (
        str(repos.root),
        repos.url_template,
        repos.run_id,
        instance.repo,
        instance.repo_url or None,
        instance.base_commit,
        instance.fix_commit,
        instance.framework,
    )
    named = all(_FULL_SHA.fullmatch(c) for c in (instance.base_commit, instance.fix_commit))
    return _derived_patches(*args) if named else _derived_patches.__wrapped__(*args)


@functools.lru_cache(maxsize=64)
def _derived_patches(
    root: str, template: str, run_id: str, repo: str, url: str | None, base: str, fix: str, framework: str
) -> tuple[str, str]:
    """``(gold, test)`` split from ``git diff base fix`` (:func:`resolve_patches`), kept per process for
    these arguments when both commits are full ids (content-addressed): a further candidate of the instance
    (another model) reads no repository.

    Raises:
        InfraError: the repository or a commit cannot be fetched (not kept: the next call tries again).
    """
    repos = RepoCache(root=Path(root), url_template=template, run_id=run_id)
    diff = repos.diff(repo, base, fix, url=url)
    fw = frameworks.get(framework)
    config = frameworks.read_config(fw, lambda paths: repos.read_files(repo, base, paths, url=url))
    gold, test = split_patch(diff, fw.test_rule(config))
    return gold, test


#: a full commit id (what names one commit's content for good; a branch or a short id may move)
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def one_run(
    suite: Any, instance: IssueInstance, ctx: EvalContext, patch: str, test_patch: str, tag: str
) -> dict[str, Any]:
    """Prepare a workspace, apply ``patch``, run the instance's tests (with the test patch); close it.

    Returns ``{"applied": bool, "built": bool, "executed": bool, "tests": {id: TestState}}``.
    """
    ws = runtime_for(ctx).prepare(workspace_spec(instance, ctx), log_dir=ctx.evidence_dir)
    try:
        applied = ws.apply_patch(patch, name=f"patch{tag}") if patch.strip() else None
        if applied is not None:
            atomic_write_text(ctx.evidence_dir / f"patch{tag}.apply.log", applied.log)
            if not applied.ok:
                return {"applied": False, "built": False, "executed": False, "tests": {}}
        run, parsed, built, _ = suite._run_tests(ws, instance, test_patch, ctx, tag=tag)
    finally:
        ws.close()
    executed = built and not run.timed_out and not run.oom_killed
    return {"applied": True, "built": built, "executed": executed, "tests": dict(parsed.tests)}


def release(ws: Workspace) -> None:
    """Close ``ws`` once nothing reads it again: its container is removed in the background where the
    runtime can (``close_later``: :mod:`pytest_mobilebench.runtime.removals`; the base's default closes now)."""
    ws.close_later()
