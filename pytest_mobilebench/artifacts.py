"""The artifact type of a changed file (MobileDev-Bench Table 4 and Appendix C.2; SPEC section 1 "Artifact
taxonomy"): i18n, resource, manifest, build, config, docs, source or other, from its path alone. Used by
:mod:`pytest_mobilebench.patch` for every file section of a patch.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["Artifact", "artifact_type", "is_lock_file"]


@enum.unique
class Artifact(str, enum.Enum):
    """Artifact type of a changed file (MobileDev-Bench Table 4; SPEC section 1 "Artifact taxonomy").

    Declared in the order :func:`artifact_type` tries them: the first match wins.
    """

    I18N = "i18n"
    RESOURCE = "resource"
    MANIFEST = "manifest"
    BUILD = "build"
    CONFIG = "config"
    DOCS = "docs"
    SOURCE = "source"
    OTHER = "other"


#: Image and media extensions that make a file a Resource wherever it lives ("images and media").
_MEDIA_EXTENSIONS: Final = frozenset(
    {
        # images
        ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".ico", ".heic", ".heif", ".avif", ".tif",
        ".tiff",
        # audio
        ".mp3", ".wav", ".ogg", ".m4a", ".aac", ".flac", ".opus",
        # video
        ".mp4", ".webm", ".mov", ".mkv", ".3gp", ".avi",
    }
)  # fmt: skip

#: CI workflow locations: a directory prefix (ends with "/") or an exact repository-relative path.
_CI_PREFIXES: Final = (".github/workflows/", ".circleci/", ".buildkite/", ".gitlab/ci/")
_CI_FILES: Final = frozenset(
    {
        ".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "bitrise.yml", "codemagic.yaml", "codemagic.yml",
        "appveyor.yml", ".appveyor.yml", "jenkinsfile", ".cirrus.yml", ".drone.yml",
    }
)  # fmt: skip

#: Linter / formatter configuration file names (lower-cased basename); names starting with one of
#: :data:`_LINTER_PREFIXES` also count (``.eslintrc.js``, ``.prettierrc.json`` ...).
_LINTER_FILES: Final = frozenset(
    {
        "analysis_options.yaml", "detekt.yml", "detekt.yaml", "detekt-config.yml", "lint.xml", "lint-baseline.xml",
        "checkstyle.xml", ".editorconfig", ".swiftlint.yml", "tslint.json", ".ktlint", ".ktlintrc",
        "ruleset.xml", "pmd.xml", "spotbugs-exclude.xml", "findbugs-exclude.xml", ".flowconfig",
    }
)  # fmt: skip
_LINTER_PREFIXES: Final = (".eslintrc", "eslint.config.", ".prettierrc", "prettier.config.", ".stylelintrc",
                           "stylelint.config.", ".eslintignore", ".prettierignore")  # fmt: skip

#: Lock files (lower-cased basename); any ``*.lock`` / ``*.lockfile`` also counts.
_LOCK_FILES: Final = frozenset(
    {"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "pubspec.lock",
     "podfile.lock", "gemfile.lock", "gradle.lockfile", "cartfile.resolved", "package.resolved"}
)  # fmt: skip

_DOC_EXTENSIONS: Final = frozenset({".md", ".markdown", ".mdx"})
#: Directory names that hold changelog fragments (e.g. F-Droid/fastlane ``metadata/android/<lang>/changelogs/``).
_CHANGELOG_DIRS: Final = frozenset({"changelogs", "changelog.d", "changes.d", ".changeset", "changelog"})
#: Basename stems (lower case, before the first ".") of changelog and license files.
_DOC_STEMS: Final = frozenset({"changelog", "changes", "history", "news", "license", "licence", "copying",
                               "unlicense", "notice"})  # fmt: skip

_SOURCE_EXTENSIONS: Final = frozenset({".kt", ".java", ".dart", ".ts", ".tsx", ".js"})


def _norm_for_matching(path: str) -> str:
    p = path.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p


def _ext(basename: str) -> str:
    dot = basename.rfind(".")
    return basename[dot:].lower() if dot > 0 else ""


def is_lock_file(path: str) -> bool:
    """Whether ``path`` is a dependency lock file (``package-lock.json``, ``yarn.lock``, ``pubspec.lock``,
    any ``*.lock`` / ``*.lockfile`` ...): the lock-file part of the Config artifact type."""
    base = _norm_for_matching(path).split("/")[-1]
    return base.lower() in _LOCK_FILES or _ext(base) in (".lock", ".lockfile")


def artifact_type(path: str) -> Artifact:
    """Classify one repository-relative path (MobileDev-Bench Table 4; SPEC section 1 "Artifact taxonomy").

    First match wins, in this order:

    1. ``I18N``: a ``strings.xml`` whose parent directory is ``values-*`` (a locale qualifier such as
       ``res/values-fr/strings.xml``; the default ``values/strings.xml`` is not i18n and falls to Resource),
       or any Flutter ``.arb`` file.
    2. ``RESOURCE``: anything with a ``res`` directory in its path (the Android ``res/`` subtree), or an image,
       audio or video file anywhere (see ``_MEDIA_EXTENSIONS``).
    3. ``MANIFEST``: basename ``AndroidManifest.xml`` or ``pubspec.yaml``.
    4. ``BUILD``: basename ``build.gradle``, ``settings.gradle*``, ``gradle.properties`` or
       ``libs.versions.toml``, or any ``*.kts`` (which includes ``*.gradle.kts``).
    5. ``CONFIG``: CI workflows (``.github/workflows/``, ``.circleci/``, ``.gitlab-ci.yml``, ``bitrise.yml``,
       ``codemagic.yaml`` ...), linter / formatter configs (``.eslintrc*``, ``.prettierrc*``,
       ``analysis_options.yaml``, ``detekt.yml``, ``lint.xml``, ``checkstyle.xml``, ``.editorconfig`` ...),
       lock files (``*.lock``, ``*.lockfile``, ``package-lock.json``, ``pnpm-lock.yaml`` ...).
    6. ``DOCS``: Markdown (``.md``, ``.markdown``, ``.mdx``), changelog fragments (files under a
       ``changelogs/``, ``changelog.d/``, ``.changeset/`` ... directory) and changelog / license files
       (basename stem ``CHANGELOG``, ``CHANGES``, ``HISTORY``, ``NEWS``, ``LICENSE``, ``LICENCE``, ``COPYING``,
       ``NOTICE``, any case).
    7. ``SOURCE``: extension ``.kt``, ``.java``, ``.dart``, ``.ts``, ``.tsx``, ``.js`` (exactly these).
    8. ``OTHER``: everything else (``.xml`` outside ``res/``, ``.json``, ``.gradle`` scripts other than the
       named ones, ``.jsx``, fonts ...).

    Extensions compare case-insensitively; named files (``AndroidManifest.xml``, ``build.gradle`` ...)
    exactly. Backslashes are read as ``/``.
    """
    p = _norm_for_matching(path)
    parts = p.split("/")
    base = parts[-1]
    dirs = parts[:-1]
    ext = _ext(base)
    lower = base.lower()
    # 1. i18n
    if (base == "strings.xml" and dirs and dirs[-1].startswith("values-")) or ext == ".arb":
        return Artifact.I18N
    # 2. resource
    if "res" in dirs or ext in _MEDIA_EXTENSIONS:
        return Artifact.RESOURCE
    # 3. manifest
    if base in ("AndroidManifest.xml", "pubspec.yaml"):
        return Artifact.MANIFEST
    # 4. build
    if (
        base in ("build.gradle", "libs.versions.toml", "gradle.properties")
        or base.startswith("settings.gradle")
        or ext == ".kts"
    ):
        return Artifact.BUILD
    # 5. config
    lower_path = p.lower()
    if (
        lower_path.startswith(_CI_PREFIXES)
        or lower_path in _CI_FILES
        or lower in _LINTER_FILES
        or lower.startswith(_LINTER_PREFIXES)
        or is_lock_file(p)
    ):
        return Artifact.CONFIG
    # 6. docs
    if (
        ext in _DOC_EXTENSIONS
        or any(d.lower() in _CHANGELOG_DIRS for d in dirs)
        or lower.split(".", 1)[0] in _DOC_STEMS
    ):
        return Artifact.DOCS
    # 7. source
    if ext in _SOURCE_EXTENSIONS:
        return Artifact.SOURCE
    return Artifact.OTHER
