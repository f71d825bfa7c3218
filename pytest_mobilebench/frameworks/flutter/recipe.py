"""Environment recipe for Flutter repositories: the Flutter SDK version (and the git ref to check out).

Inference (MobileDev-Bench Section 3.3: ``pubspec.yaml``; Appendix A.5: CI workflows), first hit wins:

1. ``overrides["flutter"]`` (and ``overrides["flutter_ref"]``: a tag or commit to check out);
2. ``.fvmrc`` (``{"flutter": "3.24.3"}``), ``.fvm/fvm_config.json`` (``flutterSdkVersion``);
3. ``subosito/flutter-action`` ``flutter-version`` in ``.github/workflows`` (``${{ env.X }}`` / matrix values
   expanded; the highest wins); ``flutter-version-file: pubspec.yaml`` defers to step 4;
4. ``pubspec.yaml`` ``environment.flutter``: an exact version is kept; a range gives its lower bound (the
   oldest Flutter the project declares it supports; a newer one may have breaking changes). A 40-hex
   commit written in a comment on that line (``flutter: '>=3.46.0-1.0.pre-413'  # 6995038d...``) is the
   ref to check out;
5. ``pubspec.lock`` ``sdks.flutter`` lower bound;
6. ``pubspec.yaml`` ``environment.sdk`` (Dart): the oldest stable Flutter of :data:`FLUTTER_DART` whose
   Dart satisfies the constraint.

The ref to check out is the version itself when it is a release name (``3.24.3``, ``3.27.0-0.1.pre``,
tags in the Flutter repository); a main-channel build number (``3.46.0-1.0.pre-413``) has no tag, so a
commit must come from the pubspec comment or ``overrides["flutter_ref"]``, else :class:`RecipeError`.
``dart`` in the toolchain is the pubspec's ``environment.sdk`` constraint as written (evidence).

Image: the Flutter repository cloned at the ref (``--depth 1 --branch <tag>`` for a tag, a blob-less
clone + checkout for a commit, so the tool can compute its version from git), ``flutter --version``
(downloads the Dart SDK) and ``flutter precache --universal``; instance layer: ``flutter pub get``.

Tests run as the unprivileged test user (:data:`FLUTTER_TEST_USER`): the SDK (:data:`FLUTTER_ROOT`) and
the pub cache (:data:`PUB_CACHE`) stay root's and readable; the project's ``.dart_tool/`` and ``build/``
are the user's with the rest of ``/testbed``. Two files are writable by the tests, neither holding code:
the SDK's ``bin/cache/lockfile`` (the flutter tool locks its artifact cache through it, opened for
writing) and the pub cache's ``active_roots/`` (pub's record of the projects using the cache).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from pytest_mobilebench.frameworks.recipe import (
    BASE_IMAGE_PREAMBLE,
    HOST_CA_DOCKERFILE_LINES,
    EnvRecipe,
    RecipeError,
    Version,
    evidence,
    iter_workflow_steps,
    line_of,
    lower_bound,
    parse_version,
    read_text,
    satisfies,
)
from pytest_mobilebench.runtime.recipe import TEST_USER_NAME, UserHandover

__all__ = [
    "FLUTTER_DART",
    "FLUTTER_GIT_URL",
    "FLUTTER_ROOT",
    "FLUTTER_TEST_USER",
    "INSTALL_COMMAND",
    "PUB_CACHE",
    "infer_flutter_recipe",
]

#: Stable Flutter releases (the last patch of each minor line, or its first release where the last is
#: not pinned here) and the Dart SDK each ships, from the Flutter SDK archive.
FLUTTER_DART: Final[tuple[tuple[str, str], ...]] = (
    ("3.7.12", "2.19.6"),
    ("3.10.6", "3.0.6"),
    ("3.13.9", "3.1.5"),
    ("3.16.9", "3.2.6"),
    ("3.19.6", "3.3.4"),
    ("3.22.3", "3.4.4"),
    ("3.24.5", "3.5.4"),
    ("3.27.4", "3.6.2"),
    ("3.29.3", "3.7.2"),
    ("3.32.8", "3.8.1"),
    ("3.35.0", "3.9.0"),
    ("3.38.0", "3.10.0"),
)

#: The Flutter SDK repository cloned by the image.
FLUTTER_GIT_URL: Final[str] = "https://github.com/flutter/flutter.git"

#: Dependency installation in the instance layer.
INSTALL_COMMAND: Final[str] = "flutter pub get"

#: Where the image clones the Flutter SDK, and the pub cache the install fills (both root's).
FLUTTER_ROOT: Final[str] = "/opt/flutter"
PUB_CACHE: Final[str] = "/opt/pub-cache"

_FLUTTER_HANDOVER: Final[str] = f"""set -euo pipefail
# the SDK and the pub cache stay root's and readable by all
mkdir -p {FLUTTER_ROOT}/bin/cache {PUB_CACHE}/active_roots
find {FLUTTER_ROOT} {PUB_CACHE} \\( -type d ! -perm -o=rx -o -type f ! -perm -o=r \\) -exec chmod a+rX {{}} +
# the flutter tool locks its artifact cache through this file, opened for writing: writable by all, no data
touch {FLUTTER_ROOT}/bin/cache/lockfile && chmod 0666 {FLUTTER_ROOT}/bin/cache/lockfile
# pub's record of the projects using the cache (markers for `dart pub cache gc`, no code)
chown -R {TEST_USER_NAME}:{TEST_USER_NAME} {PUB_CACHE}/active_roots
"""

#: Flutter images run their tests as the test user (see the module docstring).
FLUTTER_TEST_USER: Final[UserHandover] = UserHandover(handover=_FLUTTER_HANDOVER)

_COMMIT_RE: Final = re.compile(r"\b[0-9a-f]{40}\b")
_RELEASE_RE: Final = re.compile(r"^\d+\.\d+\.\d+(?:-\d+\.\d+\.pre)?$")


def _load_yaml_file(path: Path) -> tuple[Any, str]:
    text = read_text(path)
    try:
        return yaml.load(text, Loader=yaml.BaseLoader), text  # noqa: S506 - BaseLoader builds no objects
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: invalid YAML: {exc}") from exc


def _from_fvm(repo_dir: Path) -> tuple[str, str] | None:
    for rel, key in ((".fvmrc", "flutter"), (".fvm/fvm_config.json", "flutterSdkVersion")):
        path = repo_dir / rel
        if not path.is_file():
            continue
        text = read_text(path)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecipeError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, str) and parse_version(value.strip()) is not None:  # "stable" pins nothing
            return value.strip(), evidence(repo_dir, path, line_of(text, rf'"{key}"\s*:'))
    return None


def _from_workflows(repo_dir: Path) -> tuple[str, str] | None:
    best: tuple[Version, str, str] | None = None
    for step in iter_workflow_steps(repo_dir):
        if "flutter-action" not in step.uses:
            continue
        for spec in step.with_.get("flutter-version", ()):
            spec = spec.strip()
            if spec in ("", "any", "latest") or spec.endswith(".x"):
                continue
            version = parse_version(spec)
            if version is None:
                continue
            where = evidence(repo_dir, step.file, step.line_of_key("flutter-version"))
            if best is None or version > best[0]:
                best = (version, spec, where)
    return (best[1], best[2]) if best else None


def _pubspec(repo_dir: Path) -> tuple[dict[str, Any], str, Path]:
    path = repo_dir / "pubspec.yaml"
    if not path.is_file():
        raise RecipeError(f"{path}: missing; a Flutter repository needs pubspec.yaml at its root")
    data, text = _load_yaml_file(path)
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: top level is not a mapping")
    return data, text, path


def _env_line(text: str, key: str) -> int | None:
    """Line of ``key:`` inside the top-level ``environment:`` block (pubspec.yaml) or ``sdks:`` (lock)."""
    lines = text.splitlines()
    inside = False
    for number, line in enumerate(lines, 1):
        if re.match(r"^(environment|sdks)\s*:", line):
            inside = True
            continue
        if inside and re.match(r"^\S", line):
            inside = False
        if inside and re.match(rf"^\s+{re.escape(key)}\s*:", line):
            return number
    return None


def _from_constraint(
    repo_dir: Path, path: Path, text: str, constraint: str, key: str
) -> tuple[str, str, str | None] | None:
    """(version, evidence, commit from the same line's comment) for an exact version or a lower bound."""
    line = _env_line(text, key)
    where = evidence(repo_dir, path, line)
    commit = None
    if line is not None:
        commit_match = _COMMIT_RE.search(text.splitlines()[line - 1].partition("#")[2])
        commit = commit_match.group(0) if commit_match else None
    if parse_version(constraint) is not None and re.fullmatch(r"[\w.+-]+", constraint.strip()):
        return constraint.strip(), where, commit
    bound = lower_bound(constraint, source=where)
    if bound is None:
        return None
    return str(bound), where, commit


def _from_dart(repo_dir: Path, path: Path, text: str, sdk: str) -> tuple[str, str]:
    where = evidence(repo_dir, path, _env_line(text, "sdk"))
    for flutter, dart in FLUTTER_DART:
        dart_v = parse_version(dart)
        if dart_v is not None and satisfies(dart_v, sdk, source=where):
            return flutter, f"{where} (Dart {sdk!r} -> Flutter {flutter} ships Dart {dart})"
    raise RecipeError(f"{where}: no known stable Flutter ships a Dart satisfying {sdk!r}; set overrides['flutter']")


def _dockerfile(version: str, ref: str) -> str:
    if _COMMIT_RE.fullmatch(ref):
        clone = (
            f"RUN git clone --filter=blob:none --no-checkout {FLUTTER_GIT_URL} {FLUTTER_ROOT} \\\n"
            f" && git -C {FLUTTER_ROOT} checkout --detach {ref} \\\n"
            f" && (git -C {FLUTTER_ROOT} update-ref refs/remotes/origin/master origin/main 2>/dev/null || true)\n"
        )
    else:
        clone = f"RUN git clone --depth 1 --branch {ref} {FLUTTER_GIT_URL} {FLUTTER_ROOT}\n"
    return (
        BASE_IMAGE_PREAMBLE
        + 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
        + "ENV DEBIAN_FRONTEND=noninteractive\n"
        + "RUN apt-get update \\\n"
        + " && apt-get install -y --no-install-recommends ca-certificates curl git unzip xz-utils zip \\\n"
        + " && rm -rf /var/lib/apt/lists/*\n"
        + HOST_CA_DOCKERFILE_LINES
        + "RUN git config --system --add safe.directory '*'\n"
        + clone
        + f"ENV FLUTTER_ROOT={FLUTTER_ROOT} PUB_CACHE={PUB_CACHE} PATH={FLUTTER_ROOT}/bin:{PUB_CACHE}/bin:$PATH \\\n"
        + "    CI=true FLUTTER_SUPPRESS_ANALYTICS=true\n"
        + (
            "RUN flutter --version \\\n"
            if _COMMIT_RE.fullmatch(ref)
            else f"RUN flutter --version | tee /dev/stderr | grep -q '^Flutter {re.escape(version)} ' \\\n"
        )
        + " && flutter precache --universal\n"
    )


def infer_flutter_recipe(repo_dir: Path, *, overrides: Mapping[str, Any] | None = None) -> EnvRecipe:
    """Infer the Flutter environment of ``repo_dir`` (precedence in the module docstring).

    Toolchain keys: ``flutter`` (version), ``flutter_ref`` (tag or commit cloned), ``dart`` (the pubspec
    ``environment.sdk`` constraint, when present).

    Raises:
        RecipeError: no/invalid pubspec.yaml, no version source, a main-channel build without a commit.
    """
    ov = {k: str(v) for k, v in (overrides or {}).items() if v is not None}
    data, text, path = _pubspec(repo_dir)
    env: dict[str, Any] = data["environment"] if isinstance(data.get("environment"), dict) else {}
    tc: dict[str, str] = {}
    src: dict[str, str] = {}
    commit: str | None = None
    found: tuple[str, str] | None = None
    if "flutter" in ov:
        found = (ov["flutter"], "override")
    if found is None:
        found = _from_fvm(repo_dir) or _from_workflows(repo_dir)
    if found is None and isinstance(env.get("flutter"), str):
        got = _from_constraint(repo_dir, path, text, env["flutter"], "flutter")
        if got:
            found, commit = (got[0], got[1]), got[2]
    if found is None:
        lock = repo_dir / "pubspec.lock"
        if lock.is_file():
            lock_data, lock_text = _load_yaml_file(lock)
            sdks = lock_data.get("sdks") if isinstance(lock_data, dict) else None
            if isinstance(sdks, dict) and isinstance(sdks.get("flutter"), str):
                got = _from_constraint(repo_dir, lock, lock_text, sdks["flutter"], "flutter")
                if got:
                    found = (got[0], got[1])
    if found is None and isinstance(env.get("sdk"), str):
        found = _from_dart(repo_dir, path, text, env["sdk"])
    if found is None:
        raise RecipeError(
            f"{path}: no Flutter version in .fvmrc, workflows (subosito/flutter-action), "
            "environment.flutter, pubspec.lock or environment.sdk; set overrides['flutter']"
        )
    tc["flutter"], src["flutter"] = found
    if "flutter_ref" in ov:
        tc["flutter_ref"], src["flutter_ref"] = ov["flutter_ref"], "override"
    elif commit:
        tc["flutter_ref"], src["flutter_ref"] = commit, src["flutter"]
    elif _RELEASE_RE.match(tc["flutter"]):
        tc["flutter_ref"], src["flutter_ref"] = tc["flutter"], src["flutter"]
    else:
        raise RecipeError(
            f"{src['flutter']}: Flutter {tc['flutter']!r} is a main-channel build with no tag; name its commit "
            "in a comment on that line or set overrides['flutter_ref']"
        )
    if isinstance(env.get("sdk"), str):
        tc["dart"] = env["sdk"]
        src["dart"] = evidence(repo_dir, path, _env_line(text, "sdk"))
    install = ov.get("install_command", INSTALL_COMMAND)
    return EnvRecipe(
        framework="flutter",
        toolchain=tc,
        sources=src,
        dockerfile=_dockerfile(tc["flutter"], tc["flutter_ref"]),
        context_files={},
        install_command=install,
        test_user=FLUTTER_TEST_USER,
    )
