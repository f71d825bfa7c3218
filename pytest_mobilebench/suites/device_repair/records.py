"""Device-repair records (AppEval, SPEC section 2 "Record"): one YAML per repository.

A record is: repository, immutable base commit, issue text, defect files F, test-only patch p_t,
reference fix p_f (inline, or derived from ``fix_commit`` by splitting ``git diff base fix`` with the
plan's ``test_roots``), ONE target method q (``pkg.Class#method``), regression set Q, construction
source (``issue`` | ``mutation``), platform and the execution plan E (:class:`ExecutionPlan`).

Top-level keys other than ``suite`` and ``instances`` are defaults for every record (``plan`` is merged
key by key, one level deep). A record's canonical serialisation (:func:`canonical_bytes`, sorted-key
JSON of the validated model) is content-hashed (:func:`record_hash`); evidence is re-graded only when
the hash stored with it matches.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from pytest_mobilebench.manifest.yamlfile import YamlDocument, charge_file_problem, unknown_top_keys, validation_problem
from pytest_mobilebench.records import LoadedRecord, ManifestError

__all__ = ["TARGET_RE", "DeviceRecord", "ExecutionPlan", "canonical_bytes", "load_manifest", "record_hash"]

#: ``pkg.Class#method`` (Android / JVM), ``Target/Class/method`` (iOS) or ``Suite#it`` (Hypium).
TARGET_RE = re.compile(r"^[A-Za-z_$][\w$.]*#[^\s#]+$|^[A-Za-z_][\w]*/[A-Za-z_][\w]*/[A-Za-z_][\w]*$")

_TEST_ROOTS = {
    "android": ["src/test/", "src/androidTest/", "app/src/test/", "app/src/androidTest/"],
    "ios": ["Tests/", "UITests/"],
    "harmonyos": ["entry/src/ohosTest/", "entry/src/test/"],
}
_BUILD_CONFIG = {
    "android": [
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "gradle.properties",
        "gradle/",
        "gradlew",
        "app/build.gradle",
        "app/build.gradle.kts",
        "app/proguard-rules.pro",
    ],
    "ios": ["Podfile", "Package.swift", ".xcodeproj/", ".xcworkspace/", ".xcconfig"],
    "harmonyos": ["build-profile.json5", "hvigorfile.ts", "oh-package.json5", "hvigor/"],
}
_GENERATED = [
    "build/",
    "/generated/",
    ".class",
    ".jar",
    ".apk",
    ".hap",
    ".ipa",
    "R.java",
    "BuildConfig.java",
    "DerivedData/",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DeviceRequirements(_Strict):
    """API level range and accepted ABIs (Android); empty = any."""

    min_api: int | None = None
    max_api: int | None = None
    abis: tuple[str, ...] = ()


class Timeouts(_Strict):
    """Seconds: build (both artefacts), install (each), test (wall clock per method), no_output, boot."""

    build_s: float = Field(900, gt=0)
    install_s: float = Field(300, gt=0)
    test_s: float = Field(600, gt=0)
    no_output_s: float = Field(120, gt=0)
    boot_s: float = Field(300, gt=0)


class ExecutionPlan(_Strict):
    """E: how a state is built and run. ``kind`` picks the builder:

    * ``jvm``: ``build_app`` / ``build_test`` shell commands with the host JDK (``javac -proc:none``: no
      candidate code runs while building); the self-made fixtures.
    * ``gradle``: ``gradle_app_task`` / ``gradle_test_task`` (``:app:assembleDebug``,
      ``:app:assembleDebugAndroidTest``) with ``./gradlew`` in the container runtime (needs the SDK image).
    * ``xcodebuild`` / ``hvigor``: see :mod:`pytest_mobilebench.devices.ios` / ``.harmony``.
    """

    kind: Literal["jvm", "gradle", "xcodebuild", "hvigor"]
    toolchain: dict[str, str] = Field(default_factory=dict)
    build_app: str | None = None
    build_test: str | None = None
    gradle_app_task: str = ":app:assembleDebug"
    gradle_test_task: str = ":app:assembleDebugAndroidTest"
    app_artifact: str
    test_artifact: str
    app_package: str
    test_package: str
    runner: str = "androidx.test.runner.AndroidJUnitRunner"
    device: DeviceRequirements = DeviceRequirements()
    timeouts: Timeouts = Timeouts()
    settle_s: float = Field(2.0, ge=0)
    test_roots: tuple[str, ...] = ()
    build_config: tuple[str, ...] = ()
    generated: tuple[str, ...] = tuple(_GENERATED)

    @model_validator(mode="after")
    def _commands(self) -> ExecutionPlan:
        if self.kind == "jvm" and not (self.build_app and self.build_test):
            raise ValueError("a 'jvm' plan needs build_app and build_test commands")
        return self

    def build_commands(self) -> tuple[str, str]:
        """``(app command, test command)``, built separately (SPEC section 2 "Verifier discipline")."""
        if self.kind == "gradle":
            return (
                self.build_app or f"./gradlew --no-daemon --offline {self.gradle_app_task}",
                self.build_test or f"./gradlew --no-daemon --offline {self.gradle_test_task}",
            )
        if self.build_app is None or self.build_test is None:
            raise ValueError(f"plan kind {self.kind!r} needs build_app and build_test")
        return self.build_app, self.build_test

    @property
    def component(self) -> str:
        """``test.package/runner`` for ``am instrument``."""
        return f"{self.test_package}/{self.runner}"


class DeviceRecord(_Strict):
    """One on-device repair task (see the module docstring)."""

    instance_id: str = Field(pattern=r"^[A-Za-z0-9_.+-]+$")
    repo: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    repo_url: str | None = None
    base_commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")
    issue: str = Field(min_length=1)
    defect_files: tuple[str, ...] = Field(min_length=1)
    test_patch: str | None = None
    fix_patch: str | None = None
    fix_commit: str | None = Field(None, pattern=r"^[0-9a-f]{7,40}$")
    target: str
    regression: tuple[str, ...] = ()
    construction: Literal["issue", "mutation"]
    platform: Literal["android", "ios", "harmonyos"]
    plan: ExecutionPlan
    difficulty: Literal["easy", "medium", "hard"] | None = None

    @field_validator("target")
    @classmethod
    def _target(cls, value: str) -> str:
        if not TARGET_RE.match(value):
            raise ValueError(f"{value!r} is not ONE method: pkg.Class#method, Target/Class/method or Suite#it")
        return value

    @model_validator(mode="after")
    def _patches(self) -> DeviceRecord:
        inline = self.test_patch is not None and self.fix_patch is not None
        if inline == (self.fix_commit is not None):
            raise ValueError("give either fix_commit, or both test_patch and fix_patch")
        if self.target in self.regression:
            raise ValueError(f"the target {self.target} cannot also be in the regression set")
        return self

    @property
    def test_roots(self) -> tuple[str, ...]:
        """Path prefixes of test sources (the plan's, else the platform's default)."""
        return self.plan.test_roots or tuple(_TEST_ROOTS[self.platform])

    @property
    def build_config(self) -> tuple[str, ...]:
        """Path fragments of build configuration (the plan's, else the platform's default)."""
        return self.plan.build_config or tuple(_BUILD_CONFIG[self.platform])

    def is_test_path(self, path: str) -> bool:
        """Whether ``path`` is test source under this record's rule."""
        return any(path.startswith(root) or f"/{root}" in path for root in self.test_roots)


def canonical_bytes(record: DeviceRecord) -> bytes:
    """The record's canonical serialisation: sorted-key compact JSON of the validated model."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, separators=(",", ":")).encode()


def record_hash(record: DeviceRecord) -> str:
    """sha256 hex of :func:`canonical_bytes`."""
    return hashlib.sha256(canonical_bytes(record)).hexdigest()


def _absolute_url(url: Any, manifest: Path) -> Any:
    if isinstance(url, str) and "://" not in url and not url.startswith("/") and ":" not in url.split("/")[0]:
        return str((manifest.parent / url).resolve())
    return url


_SHARED = frozenset(DeviceRecord.model_fields) - {"instance_id", "target", "test_patch", "fix_patch", "fix_commit"}


def _merge(shared: Mapping[str, Any], entry: Mapping[str, Any], path: Path) -> dict[str, Any]:
    merged = {**shared, **entry}
    if isinstance(shared.get("plan"), Mapping) and isinstance(entry.get("plan"), Mapping):
        merged["plan"] = {**shared["plan"], **entry["plan"]}
    if "repo_url" in merged:
        merged["repo_url"] = _absolute_url(merged["repo_url"], path)
    return merged


def _error(
    exc: ValidationError,
    doc: YamlDocument,
    index: int,
    instance_id: str | None,
    skip_missing: frozenset[str] = frozenset(),
) -> ManifestError | None:
    found = validation_problem(exc, known=DeviceRecord.model_fields, skip_missing=skip_missing)
    if found is None:
        return None
    field, message = found
    top = field.split(".")[0] if field else None
    line = doc.line_of("instances", index, top) if top else doc.line_of("instances", index)
    if top and line == doc.line_of("instances", index) and top in doc.key_lines:
        line = doc.key_lines[top]
    return ManifestError(doc.path, message, line=line, instance_id=instance_id, field=field)


def load_manifest(doc: YamlDocument) -> list[LoadedRecord | ManifestError]:
    """Records of one device-repair manifest; a broken entry becomes a ManifestError of its own."""
    data, path = doc.data, doc.path
    problem, suggested = unknown_top_keys(doc, _SHARED | {"suite", "instances"}, DeviceRecord.model_fields)
    entries = data.get("instances")
    if not isinstance(entries, list) or not entries:
        return charge_file_problem(
            [
                ManifestError(
                    path, "'instances' must be a non-empty list", line=doc.line_of("instances") or 1, field="instances"
                )
            ],
            problem,
        )
    shared = {k: v for k, v in data.items() if k in _SHARED}
    out: list[LoadedRecord | ManifestError] = []
    for index, entry in enumerate(entries):
        line = doc.line_of("instances", index)
        if not isinstance(entry, Mapping):
            out.append(ManifestError(path, f"entry #{index + 1} is not a mapping", line=line))
            continue
        instance_id = str(entry.get("instance_id")) if entry.get("instance_id") else None
        try:
            record = DeviceRecord.model_validate(_merge(shared, entry, path))
        except ValidationError as exc:
            out.append(
                _error(exc, doc, index, instance_id, suggested)
                or ManifestError(
                    path,
                    problem.message if problem else str(exc),
                    line=problem.line if problem else line,
                    instance_id=instance_id,
                )
            )
            continue
        # no plain platform marker: `-m android` selects issue-resolution records of the android framework
        markers = ["device_repair", record.construction] + ([record.difficulty] if record.difficulty else [])
        out.append(
            LoadedRecord(
                suite="device_repair",
                instance_id=record.instance_id,
                source=path,
                line=line,
                record=record,
                group=record.repo,
                markers=tuple(markers),
            )
        )
    return charge_file_problem(out, problem)
