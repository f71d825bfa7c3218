"""``dataset check --repo [OWNER/NAME=]PATH``: the commits an instance names, looked up in a local copy of its
repository (a work tree, a bare mirror, a git bundle), so a commit the repository lacks is found before a run
meets it (where it makes the instance ``invalid``).

A ``PATH`` without ``OWNER/NAME=`` serves the repository its name says (``<owner>+<name>`` as mirrors and
bundles are named: ``/work/.mirror/jellyfin+jellyfin-expo/repo``, ``mobilebench+counter.bundle``). A bundle is
cloned once into a temporary folder (removed by :meth:`Repos.close`); nothing is fetched from a network.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import final

from pytest_mobilebench.mining._harness import GitError, IssueInstance
from pytest_mobilebench.mining.gitsource import MiningError, Source, open_source, repo_name

__all__ = ["Repos", "open_repos", "unchecked"]

#: the instance fields that name a commit of its repository
COMMIT_FIELDS = ("base_commit", "fix_commit")


@final
@dataclasses.dataclass
class Repos:
    """The opened local repositories by ``owner/name``; ``checked`` counts the instances looked up."""

    sources: dict[str, Source]
    checked: int = 0

    def findings(self, instance: IssueInstance) -> list[tuple[str, str]]:
        """``[(field, message)]`` for each commit of ``instance`` its repository's local copy lacks; ``[]``
        when it has them all or no copy of that repository was given."""
        source = self.sources.get(instance.repo)
        if source is None:
            return []
        self.checked += 1
        out = []
        for field in COMMIT_FIELDS:
            commit = getattr(instance, field, None)
            if commit and not _has(source, commit):
                out.append(
                    (
                        field,
                        f"commit {commit} is not in {instance.repo} ({source.repo_url}): a run makes the "
                        f"instance invalid",
                    )
                )
        return out

    def close(self) -> None:
        """Remove the temporary clones of bundles."""
        for source in self.sources.values():
            source.close()


def _has(source: Source, commit: str) -> bool:
    try:
        source.git("cat-file", "-e", f"{commit}^{{commit}}")
    except GitError:
        return False
    return True


def _split(spec: str) -> tuple[str | None, str]:
    """``OWNER/NAME=PATH`` -> (name, path); a plain ``PATH`` -> (None, path)."""
    name, sep, path = spec.partition("=")
    return (name, path) if sep and name.count("/") == 1 and not Path(spec).exists() else (None, spec)


def open_repos(specs: Iterable[str]) -> Repos:
    """Open each ``[OWNER/NAME=]PATH``.

    Raises:
        MiningError: a path that does not exist (named), one that is no repository or bundle, or one whose
            ``owner/name`` cannot be read off its name (then ``OWNER/NAME=PATH`` is the way to say it).
    """
    repos = Repos({})
    try:
        for spec in specs:
            name, path = _split(spec)
            if not Path(path).exists():
                raise MiningError(f"--repo {path}: no such file or folder")
            name = name or repo_name(path)
            if name is None:
                raise MiningError(f"--repo {path}: cannot tell which repository it is: give OWNER/NAME={path}")
            repos.sources[name] = open_source(path, repo=name)
    except MiningError:
        repos.close()
        raise
    return repos


def unchecked(repos: Repos, instances: Mapping[str, IssueInstance]) -> list[str]:
    """The ids of ``instances`` whose repository no ``--repo`` gave (their commits were not looked up)."""
    return sorted(iid for iid, inst in instances.items() if inst.repo not in repos.sources) if repos.sources else []
