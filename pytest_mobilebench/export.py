"""``python -m pytest_mobilebench export``: the task inputs of a selection, for an agent outside the harness.

The selection is pytest's own: the paths, ``-k``, ``-m`` and ``--dataset`` go through a collect-only pytest
session (:func:`collect_records`), so exactly the items a run would evaluate are exported. One JSON line per
instance (:func:`task_row`)::

    {"instance_id", "suite", "repo", "repo_url", "base_commit", "problem_statement", "framework" | "platform",
     "environment": {...}, "environment_image": "mobilebench/inst.<id>:<h12>" | null,
     "environment_image_id": "sha256:..." | null, "prompt_fields": [names of the fields an agent prompt uses],
     "difficulty", "category", "created_at"}

Only task inputs leave: the gold patch, the test patch, ``fix_commit`` and the gold test lists
(``FAIL_TO_PASS`` ...), device repair's ``defect_files`` / ``target`` / ``regression`` are the answer key and
are never written (:data:`ANSWER_KEY`). ``repo_url`` is where the harness would clone from (the manifest's
``repo_url``, else ``--mb-repo-url-template``).

With ``--images`` (implied by ``--save`` / ``--mb-registry``) each issue-resolution instance's environment
image is built (or reused) through the Docker runtime, the image an instance's tests run in, at the base
commit with its dependencies installed; ``--save DIR`` writes ``DIR/<encoded tag>.tar`` (``docker save``),
``--mb-registry HOST:PORT`` pushes ``HOST:PORT/<tag>``. Suites without a repository (planner, app generation)
are listed on stderr as not exported.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import pytest

from pytest_mobilebench.records import CLONE_SOURCE_FIELDS
from pytest_mobilebench.records import LoadedRecord

__all__ = [
    "ANSWER_KEY",
    "EXPORTED_SUITES",
    "HARNESS_FIELDS",
    "ExportError",
    "collect_records",
    "save_image",
    "task_row",
]

#: record fields that are the answer key of an instance: never exported
ANSWER_KEY: Final = frozenset(
    {
        "patch",
        "test_patch",
        "fix_commit",
        "fix_patch",
        "FAIL_TO_PASS",
        "NONE_TO_PASS",
        "PASS_TO_PASS",
        "defect_files",
        "target",
        "regression",
        "test_results",
    }
)
#: fields that tell the harness how to run the tests: not an agent's input
HARNESS_FIELDS: Final = frozenset({"test_command", "test_targets", "timeout_s", "plan"})
#: suites whose records are repository tasks (the ones exported)
EXPORTED_SUITES: Final = ("issue_resolution", "device_repair")
_DEFAULT_TEMPLATE: Final = "https://github.com/{owner}/{name}"


class ExportError(Exception):
    """The selection cannot be exported (collection failed, an image cannot be built); the message says why."""


class _Collector:
    """Keeps the selected benchmark records (after -k / -m) and the invalid entries of a collect-only run."""

    def __init__(self) -> None:
        self.records: list[LoadedRecord] = []
        self.invalid: list[str] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> Any:
        yield
        for item in items:
            record = getattr(item, "record", None)
            if isinstance(record, LoadedRecord):
                self.records.append(record)
            elif getattr(item, "error", None) is not None:
                self.invalid.append(str(item.error))
        return None


def collect_records(args: Sequence[str]) -> tuple[list[LoadedRecord], list[str]]:
    """``(records, invalid entries)`` of the pytest selection ``args`` (paths, ``-k``, ``-m``, ``--dataset``),
    each record once (one per instance, whatever the models).

    Raises:
        ExportError: pytest could not collect (a usage error, an unreadable path); its output is in the message.
    """
    collector = _Collector()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *args], plugins=[collector])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED, pytest.ExitCode.TESTS_FAILED):
        raise ExportError(f"collection failed (pytest exit {int(code)}):\n{out.getvalue()[-4000:]}")
    unique = {(r.suite, r.instance_id): r for r in collector.records}
    return list(unique.values()), collector.invalid


def _clone_url(data: Mapping[str, Any], template: str) -> str:
    from pytest_mobilebench.runtime.repos import repo_url

    return str(data.get("repo_url") or repo_url(template, str(data["repo"])))


def task_row(record: LoadedRecord, *, url_template: str = _DEFAULT_TEMPLATE) -> dict[str, Any] | None:
    """The exported line of one record (shape in the module docstring), or None for a suite not exported."""
    if record.suite not in EXPORTED_SUITES:
        return None
    data = record.record.model_dump(mode="json")
    row = {k: v for k, v in data.items() if k not in ANSWER_KEY | HARNESS_FIELDS | CLONE_SOURCE_FIELDS}
    row["suite"] = record.suite
    row["repo_url"] = _clone_url(data, url_template)
    if record.suite == "device_repair":
        row["problem_statement"] = row.pop("issue", "")
    row["environment"] = {k: v for k, v in (row.get("environment") or {}).items() if v is not None}
    row.update(
        environment_image=None, environment_image_id=None, prompt_fields=["problem_statement", "repo", "base_commit"]
    )
    return row


def build_image(record: LoadedRecord, row: Mapping[str, Any], *, client: Any, run_id: str, progress: Any) -> Any:
    """The environment image of an issue-resolution record (:class:`~pytest_mobilebench.runtime.images.BuiltImage`),
    built or reused by the Docker runtime exactly as a run would.

    Raises:
        ExportError: not an issue-resolution record, or the build failed (the message names the instance).
    """
    from pytest_mobilebench.runtime.base import InfraError, WorkspaceSpec
    from pytest_mobilebench.frameworks import workspace_recipe
    from pytest_mobilebench.runtime.provider import DockerProvider

    if record.suite != "issue_resolution":
        raise ExportError(f"{record.instance_id}: only issue-resolution environments are built as images")
    instance = record.record
    spec = WorkspaceSpec(
        instance_id=instance.instance_id,
        repo=instance.repo,
        base_commit=instance.base_commit,
        repo_url=str(row["repo_url"]),
        run_id=run_id,
        environment={**instance.environment.model_dump(exclude_none=True), "framework": instance.framework},
    )
    provider = DockerProvider(recipe_factory=workspace_recipe)  # the docker provider's runtime, as a run makes it
    runtime = provider.runtime({"mb_repo_url_template": _DEFAULT_TEMPLATE}, run_id, client=client, progress=progress)
    try:
        return runtime.ensure_instance_image(spec)  # type: ignore[attr-defined]
    except InfraError as exc:
        raise ExportError(f"{record.instance_id}: environment image not built: {exc}") from exc


def save_image(client: Any, tag: str, folder: Path) -> Path:
    """``docker save`` of ``tag`` to ``folder/<folder_name(tag)>.tar`` (through a temporary file); returns it."""
    from pytest_mobilebench.report.names import folder_name

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{folder_name(tag)}.tar"
    partial = target.with_suffix(".tar.partial")
    with open(partial, "wb") as fh:
        fh.writelines(client.api.get_image(tag))
    partial.replace(target)
    return target


def rows(records: Sequence[LoadedRecord], *, url_template: str) -> Iterator[tuple[LoadedRecord, dict[str, Any] | None]]:
    """``(record, row or None)`` in the order of the selection."""
    for record in records:
        yield record, task_row(record, url_template=url_template)
