"""What the mining pipeline uses from the rest of the harness, imported in this one place.

The miner reuses the issue-resolution suite's record type and loaders, the framework registry, the patch
reader and the repository cache; naming them here keeps the rest of :mod:`pytest_mobilebench.mining`
independent of where those modules live.
"""

from __future__ import annotations

from pytest_mobilebench import frameworks
from pytest_mobilebench.artifacts import Artifact, artifact_type, is_lock_file
from pytest_mobilebench.frameworks.recipe import infer_recipe
from pytest_mobilebench.frameworks.rules import tool_dir_of
from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.patch import PatchError, PatchInfo, parse_patch, split_patch
from pytest_mobilebench.files import (
    atomic_write_json,
    atomic_write_text,
    read_json,
)
from pytest_mobilebench.runtime.environment import (
    _OVERRIDE_KEYS as ENVIRONMENT_RECIPE_KEYS,
)
from pytest_mobilebench.runtime.git import GitError, run_git
from pytest_mobilebench.runtime.repos import RepoCache, read_blobs
from pytest_mobilebench.records import LoadedRecord, ManifestError
from pytest_mobilebench.suites.issue_resolution.dialects import (
    load_dataset as load_release,
)
from pytest_mobilebench.suites.issue_resolution.manifest import (
    IssueInstance,
    load_manifest,
)
from pytest_mobilebench.trust import harden_plan

__all__ = [
    "ENVIRONMENT_RECIPE_KEYS",
    "Artifact",
    "GitError",
    "IssueInstance",
    "LoadedRecord",
    "ManifestError",
    "PatchError",
    "PatchInfo",
    "RepoCache",
    "artifact_type",
    "atomic_write_json",
    "atomic_write_text",
    "frameworks",
    "harden_plan",
    "infer_recipe",
    "is_lock_file",
    "load_manifest",
    "load_release",
    "parse_patch",
    "read_blobs",
    "read_json",
    "read_yaml",
    "run_git",
    "split_patch",
    "tool_dir_of",
]
