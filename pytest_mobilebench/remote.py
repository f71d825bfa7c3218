"""xdist workers on other machines (``--tx socket=HOST:PORT`` / ``--tx ssh=...``): evidence and the result
cache live on the controller.

A worker writes an item's evidence and its result-cache entry under *its own* ``--mb-reports-dir``. When
the worker runs on another machine that folder is not the controller's, so (decision, docs/scale-out.md):

- the worker ships the evidence back **as plain builtins** on the item's report
  (``report.mobilebench_evidence = {"folder": "<run>/<model>/<instance>", "files": {rel path: base64}}``,
  at most :data:`MAX_EVIDENCE_BYTES` per item; larger files are listed with their size in
  ``evidence_skipped.json`` instead), and the controller writes it into its own reports folder and points
  the result's ``evidence_dir`` there;
- the controller writes the result-cache entry (same key, same file as a local worker would);
- at start, the controller hands a remote worker its result cache (``workerinput``), which the worker
  writes under its own reports folder, so cached results are answered there too.

"Remote" means a gateway that is not ``popen`` (xdist's ``--tx socket=``, ``ssh=``); local ``-n N``
workers share the controller's folder and nothing here runs for them. Paths coming back from a worker
are checked (relative, no ``..``) before anything is written.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path, PurePosixPath
from typing import Any, Final

import pytest

from pytest_mobilebench.cache import cache_entry, prediction_path, result_path
from pytest_mobilebench.files import atomic_write_json, atomic_write_text

__all__ = ["MAX_EVIDENCE_BYTES", "RemoteWorkers", "pack_evidence", "unpack_evidence"]

#: evidence bytes shipped back per item; larger files are listed in evidence_skipped.json
MAX_EVIDENCE_BYTES: Final[int] = 32 << 20
_KEY: Final[str] = "mobilebench_remote"


def pack_evidence(folder: Path, relative_to: Path, *, limit: int = MAX_EVIDENCE_BYTES) -> dict[str, Any]:
    """The files below ``folder`` as plain builtins (smallest first until ``limit`` bytes)."""
    files = sorted(
        (p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()), key=lambda p: (p.stat().st_size, str(p))
    )
    packed: dict[str, str] = {}
    skipped: dict[str, int] = {}
    used = 0
    for path in files:
        size = path.stat().st_size
        rel = path.relative_to(folder).as_posix()
        if used + size > limit:
            skipped[rel] = size
            continue
        packed[rel] = base64.b64encode(path.read_bytes()).decode("ascii")
        used += size
    return {"folder": folder.relative_to(relative_to).as_posix(), "files": packed, "skipped": skipped}


def _safe_relative(text: str) -> PurePosixPath:
    path = PurePosixPath(text)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"a worker sent an unsafe evidence path {text!r}")
    return path


def unpack_evidence(shipped: dict[str, Any], reports_dir: Path) -> Path:
    """Write shipped evidence under ``reports_dir``; return the folder.

    Raises:
        ValueError: a path is absolute or climbs out with ``..`` (nothing is written then).
    """
    folder = reports_dir / _safe_relative(str(shipped["folder"]))
    files = {_safe_relative(rel): data for rel, data in dict(shipped["files"]).items()}
    for rel, data in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(data))
    if shipped.get("skipped"):
        atomic_write_text(folder / "evidence_skipped.json", json.dumps(shipped["skipped"], indent=1, sort_keys=True))
    return folder


def _is_remote(node: Any) -> bool:
    spec = getattr(getattr(node, "gateway", None), "spec", None)
    return spec is not None and not getattr(spec, "popen", False)


class RemoteWorkers:
    """The hooks, registered by the plugin on every process (``mobilebench-remote``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def _state(self) -> Any:
        from pytest_mobilebench.state import STATE

        return self.config.stash[STATE]

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Controller: tell a remote worker so, with a copy of the result cache."""
        if not _is_remote(node):
            return
        cache = self._state().reports_dir / "cache"
        entries = {p.relative_to(cache).as_posix(): p.read_text(encoding="utf-8") for p in cache.glob("*/*.json")}
        node.workerinput[_KEY] = {"cache": entries}

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Remote worker: write the controller's result cache under this worker's reports folder."""
        remote = getattr(self.config, "workerinput", {}).get(_KEY)
        if not remote:
            return
        cache = self._state().reports_dir / "cache"
        for rel, text in remote["cache"].items():
            target = cache / _safe_relative(rel)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(target, text)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        """Remote worker: attach the item's evidence to its report (plain builtins cross the gateway)."""
        report = yield
        result = getattr(report, "mobilebench_result", None)
        if result and not result.get("cached") and getattr(self.config, "workerinput", {}).get(_KEY) is not None:
            folder = Path(str(result.get("evidence_dir") or ""))
            if folder.is_dir():
                report.mobilebench_evidence = pack_evidence(folder, self._state().reports_dir)
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Controller: write shipped evidence and the cache entry here, before the result is recorded."""
        shipped = getattr(report, "mobilebench_evidence", None)
        result = getattr(report, "mobilebench_result", None)
        if shipped is None or result is None or hasattr(self.config, "workerinput"):
            return
        reports_dir = self._state().reports_dir
        folder = unpack_evidence(shipped, reports_dir)
        result["evidence_dir"] = str(folder)
        atomic_write_json(folder / "result.json", result)
        key = str(result.get("cache_key") or "")
        if key and result.get("cache_dropped"):  # the worker dropped its copy of a bad entry: so does the controller
            for path in (result_path(reports_dir, key), prediction_path(reports_dir, key)):
                path.unlink(missing_ok=True)
        if key and not result.get("retryable"):
            atomic_write_json(result_path(reports_dir, key), cache_entry(result))
