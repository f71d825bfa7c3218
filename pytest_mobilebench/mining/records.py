"""Candidate records and what the miner writes: the project's manifest YAML and the two JSONL dialects.

A :class:`Candidate` is one commit that passed the static filters, split and planned. Its manifest entry
names ``fix_commit`` (the suite derives both patches from it at evaluation time, exactly as mined) and
carries ``provenance``: the fix commit, the mining rule, where the problem statement came from
(``problem_statement_source``: ``issue`` when a local issue export gave the linked issue's text, else
``commit_message``), the difficulty proxies, the inferred environment's sources and, once validated, the
validation run id and timings.

Instance ids are ``owner__repo-<N>``: the pull-request number a merge or squash message names
(``Merge pull request #N``, ``Title (#N)``), else the fix commit's 7-digit short id.

Issue exports (``--issues FILE``): a JSON list, JSON lines or a JSON object keyed by number, of GitHub
issue objects with ``number``, ``title`` and ``body`` (entries with ``pull_request`` are pull requests:
their body's closing keywords link issues too). Linked issues are those a closing keyword names
(``fixes #12``, ``closes #12``, ``resolves #12``, any tense) in the commit message or the pull request.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final

import yaml

from pytest_mobilebench.mining.gitsource import Commit, MiningError
from pytest_mobilebench.mining.rank import NO_EVIDENCE, Evidence
from pytest_mobilebench.mining.split import Split
from pytest_mobilebench.runtime.install_inputs import is_install_input

__all__ = [
    "MINING_RULE",
    "Candidate",
    "IssueIndex",
    "instance_id_for",
    "manifest_text",
    "mobiledev_bench_row",
    "pr_number",
    "swe_bench_row",
]

#: Recorded in every instance's provenance: how it was found.
MINING_RULE: Final = (
    "first-parent commit touching test files (framework test rule at the parent) and non-test source; "
    "static filters passed; patches split from fix_commit by the test rule"
)
_PR_RES: Final = (re.compile(r"^Merge pull request #(\d+)\b"), re.compile(r"\(#(\d+)\)\s*$"))
_CLOSES: Final = re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s+#(\d+)\b", re.IGNORECASE)


def pr_number(commit: Commit) -> int | None:
    """The pull-request number of a merge (``Merge pull request #N``) or squash (``Title (#N)``) subject."""
    for regex in _PR_RES:
        found = regex.search(commit.subject)
        if found:
            return int(found.group(1))
    return None


def instance_id_for(repo: str, commit: Commit, taken: set[str]) -> str:
    """``owner__repo-<PR number or short sha>``; the short sha when the PR number is already ``taken``."""
    slug = repo.replace("/", "__")
    number = pr_number(commit)
    wanted = f"{slug}-{number}" if number is not None else f"{slug}-{commit.sha[:7]}"
    return wanted if wanted not in taken else f"{slug}-{commit.sha[:10]}"


@final
class IssueIndex:
    """A local issue export, by number (see the module docstring)."""

    def __init__(self, entries: Mapping[int, Mapping[str, Any]]) -> None:
        self.entries = dict(entries)

    @classmethod
    def load(cls, path: Path) -> IssueIndex:
        """Read an export. Raises MiningError naming the file (and line for JSON lines) when unreadable."""
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise MiningError(f"{path}: cannot read the issue export: {exc}") from exc
        rows: list[Any]
        try:
            data = json.loads(text)
            rows = list(data.values()) if isinstance(data, Mapping) else data
        except json.JSONDecodeError:
            rows = []
            for lineno, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise MiningError(f"{path}:{lineno}: not JSON: {exc.msg}") from exc
        entries = {int(r["number"]): r for r in rows if isinstance(r, Mapping) and str(r.get("number", "")).isdigit()}
        return cls(entries)

    def linked(self, commit: Commit, pr: int | None) -> list[Mapping[str, Any]]:
        """Issues (not pull requests) the commit message or its pull request's body closes, in order."""
        texts = [commit.message]
        if pr is not None and pr in self.entries:
            texts.append(str(self.entries[pr].get("body") or ""))
        numbers = dict.fromkeys(int(n) for t in texts for n in _CLOSES.findall(t))
        return [self.entries[n] for n in numbers if n in self.entries and "pull_request" not in self.entries[n]]


def problem_statement(commit: Commit, issues: IssueIndex | None, pr: int | None) -> tuple[str, str, list[int]]:
    """``(text, source, linked issue numbers)``: the linked issues' title and body, else the commit message."""
    linked = issues.linked(commit, pr) if issues else []
    if linked:
        text = "\n\n".join(f"{i.get('title', '')}\n\n{i.get('body') or ''}".strip() for i in linked)
        return text + "\n", "issue", [int(i["number"]) for i in linked]
    message = commit.message.strip()
    if _PR_RES[0].match(message) and "\n" in message:  # a merge: the pull request's title and body follow
        message = message.split("\n", 1)[1].strip() or message
    return message + "\n", "commit_message", []


@final
@dataclasses.dataclass(frozen=True)
class Candidate:
    """One mined candidate (a commit past the static filters, split, planned, environment inferred)."""

    instance_id: str
    repo: str
    framework: str
    commit: Commit
    split: Split
    problem_statement: str
    problem_statement_source: str
    issues: tuple[int, ...]
    environment: Mapping[str, str]
    environment_sources: Mapping[str, str]
    planned_command: str
    evidence: Evidence = NO_EVIDENCE

    @property
    def base_commit(self) -> str:
        """The fix commit's first parent."""
        return self.commit.parents[0]

    @property
    def install_inputs_changed(self) -> list[str]:
        """Sorted paths (either side of a rename) the fix changes that a dependency install reads
        (:func:`~pytest_mobilebench.runtime.install_inputs.is_install_input`: manifests, lockfiles, rc files)."""
        files = [*self.split.gold.files, *self.split.tests.files]
        paths = {p for f in files for p in (f.path, f.old_path) if p is not None}
        return sorted(p for p in paths if is_install_input(p))

    @property
    def environment_setup_commit(self) -> str:
        """The commit the instance's dependencies are installed from (SWE-bench's field): the fix commit when the
        fix changes install inputs (its new dependencies must be installed for its tests to load; the environment
        then reveals them, as in SWE-bench), else the base."""
        return self.commit.sha if self.install_inputs_changed else self.base_commit

    def provenance(self) -> dict[str, Any]:
        """Plain builtins: how the candidate was found (validation facts are added by the pipeline)."""
        return {
            "fix_commit": self.commit.sha,
            "committed_at": self.commit.committed_at,
            "mining_rule": MINING_RULE,
            "pull_request": pr_number(self.commit),
            "problem_statement_source": self.problem_statement_source,
            "linked_issues": list(self.issues),
            "difficulty_proxies": self.split.proxies(),
            "planned_test_command": self.planned_command,
            "bug_fix_evidence": self.evidence.to_dict(),
            "environment_sources": dict(self.environment_sources),
            **({"install_inputs_changed": self.install_inputs_changed} if self.install_inputs_changed else {}),
        }

    def entry(
        self, gold: Mapping[str, Sequence[str]] | None = None, extra: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The manifest entry (SPEC section 1 fields); ``gold`` the three lists once validated."""
        lists = gold or {}
        setup = self.environment_setup_commit
        return {
            "instance_id": self.instance_id,
            "problem_statement": self.problem_statement,
            "base_commit": self.base_commit,
            "fix_commit": self.commit.sha,
            **({"environment_setup_commit": setup} if setup != self.base_commit else {}),
            "FAIL_TO_PASS": list(lists.get("FAIL_TO_PASS", [])),
            "NONE_TO_PASS": list(lists.get("NONE_TO_PASS", [])),
            "PASS_TO_PASS": list(lists.get("PASS_TO_PASS", [])),
            "created_at": self.commit.committed_at[:10],
            "environment": dict(self.environment),
            "provenance": {**self.provenance(), **(extra or {})},
        }


class _Dumper(yaml.SafeDumper):
    """Block scalars for multi-line text (problem statements), plain order of keys."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value.strip("\n") or value.endswith("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def manifest_text(
    repo: str, framework: str, repo_url: str | None, entries: Sequence[Mapping[str, Any]], header: str
) -> str:
    """One issue-resolution manifest (the format ``cases/issue_resolution/*.yaml`` use) as YAML text.

    ``header`` becomes the leading comment. Empty lists are written (``[]``) so the file says what was
    found; ``repo_url`` is omitted when None."""
    doc: dict[str, Any] = {"suite": "issue_resolution", "repo": repo}
    if repo_url:
        doc["repo_url"] = repo_url
    doc["framework"] = framework
    doc["instances"] = [dict(e) for e in entries]
    comment = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header.splitlines())
    return comment + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)


def swe_bench_row(candidate: Candidate, gold: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A SWE-bench row: inline patches, gold lists JSON-encoded (NONE_TO_PASS folded into FAIL_TO_PASS, as
    SWE-bench has no such list: both must pass), plus ``framework`` (read by ``--dataset``)."""
    return {
        "instance_id": candidate.instance_id,
        "repo": candidate.repo,
        "base_commit": candidate.base_commit,
        "patch": candidate.split.patch,
        "test_patch": candidate.split.test_patch,
        "problem_statement": candidate.problem_statement,
        "FAIL_TO_PASS": json.dumps([*gold.get("FAIL_TO_PASS", []), *gold.get("NONE_TO_PASS", [])]),
        "PASS_TO_PASS": json.dumps(list(gold.get("PASS_TO_PASS", []))),
        "created_at": candidate.commit.committed_at,
        "version": "",
        "environment_setup_commit": candidate.environment_setup_commit,
        "framework": candidate.framework,
    }


_LANG: Final = {"react-native": "javascript", "android": "kotlin", "flutter": "dart"}


def mobiledev_bench_row(
    candidate: Candidate, gold: Mapping[str, Sequence[str]], states: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    """A MobileDev-Bench (Multi-SWE-bench) row; gold dicts keyed by OUR test ids with the ``run`` (base),
    ``test`` and ``fix`` states of the validation (``states``: config -> test -> state)."""
    owner, name = candidate.repo.split("/")

    def tests(list_name: str) -> dict[str, dict[str, str]]:
        return {t: {c: states.get(k, {}).get(t, "NONE") for c, k in (("run", "base"), ("test", "test"), ("fix", "fix"))}
                for t in gold.get(list_name, [])}  # fmt: skip

    pr = pr_number(candidate.commit)
    return {
        "org": owner,
        "repo": name,
        "number": pr if pr is not None else candidate.commit.sha[:7],
        "lang": _LANG.get(candidate.framework, candidate.framework),
        "base": {"label": "", "ref": "", "sha": candidate.base_commit},
        "resolved_issues": [{"number": n, "title": "", "body": ""} for n in candidate.issues],
        "problem_statement": candidate.problem_statement,
        "fix_patch": candidate.split.patch,
        "test_patch": candidate.split.test_patch,
        "f2p_tests": tests("FAIL_TO_PASS"),
        "n2p_tests": tests("NONE_TO_PASS"),
        "p2p_tests": tests("PASS_TO_PASS"),
        "s2p_tests": {},
        "created_at": candidate.commit.committed_at,
    }
