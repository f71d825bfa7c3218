"""Environment recipe for Android (Gradle) repositories: JDK, Android SDK platform / build tools, Gradle, AGP.

Inference reads, without running Gradle (MobileDev-Bench Section 3.3; Appendix A.5: CI workflows are the
most precise source for the JDK):

- ``gradle``: ``gradle/wrapper/gradle-wrapper.properties`` ``distributionUrl`` (plus
  ``distributionSha256Sum`` when present, verified in the image).
- ``agp``: the version catalogs ``gradle/*.versions.toml`` (the ``com.android.application`` /
  ``com.android.library`` plugin or the ``com.android.tools.build:gradle`` library, ``version.ref`` resolved),
  else a ``com.android.tools.build:gradle:<v>`` classpath or ``id("com.android.application") version "<v>"``
  in a build or settings file.
- ``compile_sdk`` / ``target_sdk``: every ``compileSdk`` / ``compileSdkVersion`` / ``targetSdk`` assignment
  of the build files (``*.gradle``, ``*.gradle.kts``) and of the build logic (Kotlin sources under
  ``buildSrc`` and builds named by ``includeBuild`` in the settings). The right-hand side may be a literal
  (``34``, ``"android-34"``), a catalog reference (``libs.versions.compileSdk.get().toInt()``), a Gradle
  property (``findProperty("android.compileSdk")``), an ``ext``/``extra`` value or a Kotlin/Groovy
  constant (``Versions.COMPILE_SDK`` -> ``const val COMPILE_SDK = 36``). The highest resolved value wins.
- ``build_tools``: ``buildToolsVersion`` assignments or a ``BUILD_TOOLS_VERSION`` / ``buildToolsVersion``
  constant; else the default build tools of the AGP version (:data:`AGP_DEFAULT_BUILD_TOOLS`, from the AGP
  release notes); else ``<compile_sdk>.0.0``.
- ``jdk`` (major), first hit wins: override; ``actions/setup-java`` ``java-version`` (or
  ``java-version-file``) in ``.github/workflows`` and ``.github/actions`` (highest major over all steps);
  ``.java-version`` / ``.tool-versions`` / ``.sdkmanrc``; toolchains (``jvmToolchain(N)``,
  ``JavaLanguageVersion.of(N)``, highest); bytecode targets (``JavaVersion.VERSION_N``, ``JvmTarget.JVM_N``,
  ``jvmTarget = "N"``, highest); default 17. The result is then raised to the minimum that the build needs:
  AGP >= 8.0 needs 17, AGP >= 7.0 needs 11, Gradle >= 9.0 needs 17, and a settings check
  ``isCompatibleWith(JavaVersion.VERSION_N)`` needs N.

Image: Debian's ``openjdk-17-jdk-headless`` always (it also runs ``sdkmanager``); any other JDK major is a
pinned Eclipse Temurin tarball (:data:`TEMURIN_JDKS`, or ``overrides["jdk_url"]``). Android
command-line tools :data:`CMDLINE_TOOLS_BUILD`, licences accepted, ``platforms;android-<compile_sdk>``,
``build-tools;<build_tools>`` and ``platform-tools``; the Gradle distribution is unpacked where the
wrapper looks for it (``$GRADLE_USER_HOME/wrapper/dists/<name>/<md5 base 36 of the URL>``) so that
``./gradlew`` downloads nothing. The instance layer then warms Gradle with :data:`INSTALL_COMMAND`.

Tests run as the unprivileged test user (:data:`GRADLE_TEST_USER`): the warmed Gradle user home
:data:`GRADLE_HOME` (distribution, downloaded dependencies) stays root's and readable; the tests' Gradle
runs with its own user home :data:`GRADLE_TEST_HOME` (Gradle's working caches, daemon registry, native
libraries: written as the test user) that reads the dependencies through Gradle's read-only dependency
cache (``GRADLE_RO_DEP_CACHE``) and the distribution through a link to the warmed ``wrapper/``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pytest_mobilebench.frameworks.gradle import (
    BuildFiles,
    Catalog,
    catalog_version,
    collect_build_files,
    gradle_version,
    gradle_wrapper_dist_dir,
    read_catalogs,
)
from pytest_mobilebench.frameworks.recipe import (
    BASE_IMAGE_PREAMBLE,
    HOST_CA_DOCKERFILE_LINES,
    EnvRecipe,
    RecipeError,
    evidence,
    iter_workflow_steps,
    line_of,
    parse_version,
    read_text,
)
from pytest_mobilebench.runtime.recipe import UserHandover

__all__ = [
    "AGP_DEFAULT_BUILD_TOOLS",
    "CMDLINE_TOOLS_BUILD",
    "DEBIAN_JDK",
    "GRADLE_HOME",
    "GRADLE_TEST_HOME",
    "GRADLE_TEST_USER",
    "INSTALL_COMMAND",
    "TEMURIN_JDKS",
    "infer_android_recipe",
]

#: Android command-line tools build number (``commandlinetools-linux-<build>_latest.zip``, tools 12.0).
CMDLINE_TOOLS_BUILD: Final[str] = "11076708"
_CMDLINE_TOOLS_URL: Final[str] = (
    f"https://dl.google.com/android/repository/commandlinetools-linux-{CMDLINE_TOOLS_BUILD}_latest.zip"
)

#: The JDK major Debian bookworm packages (``openjdk-17-jdk-headless``).
DEBIAN_JDK: Final[str] = "17"
_DEBIAN_JAVA_HOME: Final[str] = "/usr/lib/jvm/java-17-openjdk-amd64"

#: Pinned Eclipse Temurin builds (x64 Linux tarballs) for the JDK majors Debian bookworm lacks:
#: major -> (release name, tarball URL).
TEMURIN_JDKS: Final[dict[str, tuple[str, str]]] = {
    "8": (
        "jdk8u432-b06",
        "https://github.com/adoptium/temurin8-binaries/releases/download/jdk8u432-b06/"
        "OpenJDK8U-jdk_x64_linux_hotspot_8u432b06.tar.gz",
    ),
    "11": (
        "jdk-11.0.25+9",
        "https://github.com/adoptium/temurin11-binaries/releases/download/jdk-11.0.25%2B9/"
        "OpenJDK11U-jdk_x64_linux_hotspot_11.0.25_9.tar.gz",
    ),
    "21": (
        "jdk-21.0.5+11",
        "https://github.com/adoptium/temurin21-binaries/releases/download/jdk-21.0.5%2B11/"
        "OpenJDK21U-jdk_x64_linux_hotspot_21.0.5_11.tar.gz",
    ),
}

#: AGP major.minor -> the build tools it uses when ``buildToolsVersion`` is not set (AGP release notes,
#: "Compatibility" tables). Versions between entries take the entry below them.
AGP_DEFAULT_BUILD_TOOLS: Final[tuple[tuple[tuple[int, int], str], ...]] = (
    ((7, 0), "30.0.2"),
    ((7, 1), "30.0.3"),
    ((8, 0), "33.0.1"),
    ((8, 2), "34.0.0"),
    ((8, 8), "35.0.0"),
    ((9, 0), "36.0.0"),
)

#: Dependency warm-up run in the instance layer (repository copied at its base commit): the wrapper
#: resolves its (pre-installed) distribution, then ``dependencies`` configures every project, which
#: downloads the plugins (AGP, Kotlin) and the root project's dependencies into GRADLE_USER_HOME.
INSTALL_COMMAND: Final[str] = "./gradlew --no-daemon --version && ./gradlew --no-daemon dependencies"

#: The Gradle user home the image installs the distribution into and the install warms (root's).
GRADLE_HOME: Final[str] = "/opt/gradle-home"
#: The Gradle user home of the tests: root's and sticky (1777), so Gradle creates its working caches there
#: as the test user while the names it reads configuration or code from by name (``init.d``,
#: ``init.gradle[.kts]``, ``gradle.properties``, provisioned ``jdks``, the ``wrapper`` link) are root's
#: and can be neither added nor replaced by the tests. ``init.gradle[.kts]`` are empty folders: Gradle
#: runs them only when they are files.
GRADLE_TEST_HOME: Final[str] = "/opt/gradle-test-home"

_GRADLE_HANDOVER: Final[str] = f"""set -euo pipefail
warm={GRADLE_HOME} home={GRADLE_TEST_HOME}
mkdir -p "$warm/caches" "$warm/wrapper/dists"
# the wrapper locks each unpacked distribution through <zip>.lck, opened read-write: writable by all, no data
find "$warm/wrapper/dists" -name '*.zip.ok' -type f -print0 | while IFS= read -r -d '' ok; do
  touch "${{ok%.ok}}.lck" && chmod 0666 "${{ok%.ok}}.lck"
done
# what the tests read of the warmed home (distribution, dependencies) stays root's and readable by all
chmod a+rx "$warm" "$warm/caches"
for tree in "$warm/wrapper" "$warm/caches/modules-2"; do
  [ ! -d "$tree" ] || find "$tree" \\( -type d ! -perm -o=rx -o -type f ! -perm -o=r \\) -exec chmod a+rX {{}} +
done
mkdir -p "$home" && chown root:root "$home" && chmod 1777 "$home"
ln -sfn "$warm/wrapper" "$home/wrapper"
reserved="$home/init.d $home/init.gradle $home/init.gradle.kts $home/jdks"
mkdir -p $reserved && : > "$home/gradle.properties"
chown -h root:root $reserved "$home/gradle.properties" "$home/wrapper"
"""

#: Android images run their tests as the test user; the hand-over arranges the two Gradle user homes (see
#: :data:`GRADLE_TEST_HOME`), the rest of the toolchain (JDK, Android SDK under ``/opt``) is root's already.
GRADLE_TEST_USER: Final[UserHandover] = UserHandover(
    handover=_GRADLE_HANDOVER,
    env={"GRADLE_USER_HOME": GRADLE_TEST_HOME, "GRADLE_RO_DEP_CACHE": f"{GRADLE_HOME}/caches"},
)

_ANDROID_PLUGIN_IDS: Final[frozenset[str]] = frozenset(
    {
        "com.android.application",
        "com.android.library",
        "com.android.test",
        "com.android.dynamic-feature",
        "com.android.kotlin.multiplatform.library",
    }
)


# --------------------------------------------------------------------------------------------- file model

# ------------------------------------------------------------------------------------- value resolution


class _Resolver:
    """Resolves the right-hand side of a build-file assignment to a literal, with its evidence site."""

    def __init__(self, files: BuildFiles, catalogs: list[Catalog]) -> None:
        self.files = files
        self.catalogs = catalogs

    def _site(self, rel: str, text: str, offset: int) -> str:
        return f"{rel}:{text.count(chr(10), 0, offset) + 1}"

    def prop(self, name: str) -> tuple[str, str] | None:
        for rel, text in self.files.properties.items():
            match = re.search(rf"^\s*{re.escape(name)}\s*[=:]\s*(\S+)\s*$", text, flags=re.MULTILINE)
            if match:
                return match.group(1), self._site(rel, text, match.start())
        return None

    def declaration(self, name: str, depth: int = 0) -> tuple[str, str] | None:
        """Find ``name = <literal>`` as a Kotlin ``val``/``const val``, Groovy ``def``/ext entry, ``extra``
        or ``set("name", ...)``; the literal may itself be another name (followed up to 3 times)."""
        if depth > 3:
            return None
        esc = re.escape(name)
        patterns = (
            rf"\b(?:const\s+)?va[lr]\s+{esc}\s*(?::\s*[\w.<>?]+)?\s*=\s*(?P<v>[^\n;]+)",
            rf"\bdef\s+{esc}\s*=\s*(?P<v>[^\n;]+)",
            rf"(?:^|[\s{{,(])(?:ext\.|project\.ext\.|rootProject\.ext\.)?{esc}\s*[=:]\s*(?P<v>[^\n;,]+)",
            rf"(?:extra|ext)\s*\[\s*[\"']{esc}[\"']\s*\]\s*=\s*(?P<v>[^\n;]+)",
            rf"(?:extra|ext)\.set\s*\(\s*[\"']{esc}[\"']\s*,\s*(?P<v>[^\n;)]+)",
            rf"\bset\s*\(\s*[\"']{esc}[\"']\s*,\s*(?P<v>[^\n;)]+)",
            rf"[\"']{esc}[\"']\s+to\s+(?P<v>[^\n;,)]+)",
        )
        for rel, text in self.files.all_code():
            for pattern in patterns:
                for match in re.finditer(pattern, text, flags=re.MULTILINE):
                    value = match.group("v").strip().rstrip(",)").strip()
                    literal = _literal(value)
                    if literal is not None:
                        return literal, self._site(rel, text, match.start("v"))
                    ref = re.fullmatch(r"(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*)", value)
                    if ref and ref.group(1) != name:
                        found = self.declaration(ref.group(1), depth + 1)
                        if found:
                            return found
        found_prop = self.prop(name)
        return found_prop

    def resolve(self, expr: str) -> tuple[str, str] | None:
        """Resolve an expression; None when it is not understood."""
        expr = expr.strip().rstrip(",;").strip()
        literal = _literal(expr)
        if literal is not None:
            return literal, ""
        catalog = re.match(r"libs\.versions\.([\w.]+?)(?:\.get\(\)|\.getOrElse|\.orNull|\.asProvider)", expr)
        if catalog is None:
            catalog = re.fullmatch(r"libs\.versions\.([\w.]+?)(?:\.toInt\(\)|\.toInteger\(\))?", expr)
        if catalog:
            found = catalog_version(self.catalogs, catalog.group(1))
            if found:
                return found
            return None
        prop = re.search(
            r"(?:findProperty|property|gradleProperty|getProperty)\s*\(\s*[\"']([\w.-]+)[\"']\s*\)"
            r"|properties\s*\[\s*[\"']([\w.-]+)[\"']\s*\]",
            expr,
        )
        if prop:
            return self.prop(prop.group(1) or prop.group(2))
        extra = re.search(r"(?:extra|ext)\s*\[\s*[\"']([\w.-]+)[\"']\s*\]", expr)
        if extra:
            return self.declaration(extra.group(1))
        ref = re.fullmatch(r"(?:[A-Za-z_][\w]*(?:\(\))?\.)*([A-Za-z_]\w*)(?:\.toInt\(\)|\.toInteger\(\))?", expr)
        if ref:
            return self.declaration(ref.group(1))
        return None


def _literal(value: str) -> str | None:
    """``34`` / ``"34"`` / ``'android-34'`` / ``"34.0.0"`` / ``34 as int`` -> the literal text, else None."""
    value = value.strip()
    value = re.sub(r"\s+as\s+\w+$|\.toInt\(\)$|\.toInteger\(\)$", "", value).strip()
    match = re.fullmatch(r"[\"']?(?:android-)?(\d+(?:\.\d+)*(?:-[\w.]+)?)[\"']?", value)
    return match.group(1) if match else None


def _assignments(files: BuildFiles, names: tuple[str, ...]) -> list[tuple[str, str, int]]:
    """(rel, expression, offset) for ``name = expr`` / ``name expr`` / ``name(expr)`` in build code."""
    alternation = "|".join(re.escape(n) for n in names)
    pattern = re.compile(
        rf"(?<![\w.$\"'{{])(?:set)?(?:{alternation})\b(?!\s*[.\"'}}])\s*(?:=\s*|\(\s*|[ \t]+(?!=))(?P<e>[^\n]+)"
    )
    found: list[tuple[str, str, int]] = []
    for rel, text in files.all_code():
        for match in pattern.finditer(text):
            expr = match.group("e").strip()
            if expr.startswith(("{", "=")):
                continue
            depth = 0
            end = len(expr)
            for i, ch in enumerate(expr):
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    if depth == 0:
                        end = i
                        break
                    depth -= 1
            found.append((rel, expr[:end].strip(), match.start("e")))
    return found


def _resolve_all(files: BuildFiles, resolver: _Resolver, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """Resolved (value, evidence) of every assignment of ``names``."""
    out: list[tuple[str, str]] = []
    for rel, expr, offset in _assignments(files, names):
        resolved = resolver.resolve(expr)
        if resolved is None:
            continue
        value, site = resolved
        if not site:
            text = files.gradle.get(rel) or files.logic.get(rel, "")
            site = f"{rel}:{text.count(chr(10), 0, offset) + 1}"
        out.append((value, site))
    return out


# ------------------------------------------------------------------------------------------------ pieces


def _agp_version(files: BuildFiles, catalogs: list[Catalog], resolver: _Resolver) -> tuple[str, str] | None:
    for catalog in catalogs:
        for table in (catalog.plugins, catalog.libraries):
            for key, entry in table.items():
                ident = ""
                if isinstance(entry, dict):
                    ident = str(entry.get("id") or entry.get("module") or "")
                    if not ident and entry.get("group") and entry.get("name"):
                        ident = f"{entry['group']}:{entry['name']}"
                elif isinstance(entry, str):
                    ident = ":".join(entry.split(":")[:2])
                if ident in _ANDROID_PLUGIN_IDS or ident == "com.android.tools.build:gradle":
                    version = catalog.version_of(entry)
                    if version:
                        ref = entry.get("version", {}) if isinstance(entry, dict) else {}
                        ref_key = (
                            ref.get("ref")
                            if isinstance(ref, dict)
                            else entry.get("version.ref")
                            if isinstance(entry, dict)
                            else None
                        )
                        pattern = rf"^\s*{re.escape(str(ref_key))}\s*=" if ref_key else rf"^\s*{re.escape(key)}\s*="
                        line = line_of(catalog.text, pattern)
                        return version, f"{catalog.path}:{line}" if line else catalog.path
    classpath = re.compile(
        r"com\.android\.tools\.build:gradle:(?P<a>[^\"'\s)]+)"
        r"|id\s*\(?\s*[\"']com\.android\.(?:application|library)[\"']\s*\)?\s*version\s*\(?\s*(?P<b>[^\s)]+)"
    )
    for rel, text in files.all_code():
        for match in classpath.finditer(text):
            raw = (match.group("a") or match.group("b")).strip("\"'")
            site = f"{rel}:{text.count(chr(10), 0, match.start()) + 1}"
            literal = _literal(raw)
            if literal:
                return literal, site
            ref = re.fullmatch(r"\$\{?([\w.]+?)\}?", raw)
            if ref:
                found = resolver.resolve(ref.group(1))
                if found:
                    return found[0], found[1] or site
    return None


def _major(java: str) -> int | None:
    text = java.strip().strip("'\"")
    match = re.match(r"(?:[a-z]+-)?(?:1\.)?(\d+)", text)
    return int(match.group(1)) if match else None


def _jdk_from_files(repo_dir: Path) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for step in iter_workflow_steps(repo_dir):
        if not step.uses.startswith("actions/setup-java"):
            continue
        specs = list(step.with_.get("java-version", ()))
        where_key = "java-version"
        for version_file in step.with_.get("java-version-file", ()):
            path = repo_dir / version_file
            if path.is_file():
                specs.append(read_text(path).strip().splitlines()[0] if read_text(path).strip() else "")
                where_key = "java-version-file"
        for spec in specs:
            major = _major(spec)
            if major is not None and (best is None or major > best[0]):
                best = (major, evidence(repo_dir, step.file, step.line_of_key(where_key)))
    if best:
        return best
    for name, pattern in (
        (".java-version", r"^\s*(?:[a-z]+-)?(\d+(?:\.\d+)*)"),
        (".tool-versions", r"^\s*java\s+(?:[a-z]+-)?(?:[a-z]+-)?(\d+)"),
        (".sdkmanrc", r"^\s*java\s*=\s*(\d+)"),
    ):
        path = repo_dir / name
        if path.is_file():
            text = read_text(path)
            match = re.search(pattern, text, flags=re.MULTILINE)
            if match:
                major = _major(match.group(1))
                if major is not None:
                    return major, evidence(repo_dir, path, text.count("\n", 0, match.start()) + 1)
    return None


def _jdk_from_build(files: BuildFiles, resolver: _Resolver) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
    """(highest toolchain, highest bytecode target) as (major, evidence)."""
    toolchains: list[tuple[int, str]] = []
    targets: list[tuple[int, str]] = []
    tool_re = re.compile(r"jvmToolchain\s*\(\s*(?P<a>[^)\s{]+)\s*\)|JavaLanguageVersion\.of\s*\(\s*(?P<b>[^)]+?)\s*\)")
    target_re = re.compile(
        r"JavaVersion\.VERSION_(?:1_)?(?P<a>\d+)|JvmTarget\.JVM_(?:1_)?(?P<b>\d+)"
        r"|jvmTarget\s*(?:=|\.set\s*\()\s*[\"'](?:1\.)?(?P<c>\d+)[\"']"
    )
    for rel, text in files.all_code():
        for match in tool_re.finditer(text):
            expr = match.group("a") or match.group("b")
            resolved = resolver.resolve(expr)
            if resolved is None:
                continue
            major = _major(resolved[0])
            if major is not None:
                site = resolved[1] or f"{rel}:{text.count(chr(10), 0, match.start()) + 1}"
                toolchains.append((major, site))
        for match in target_re.finditer(text):
            if "isCompatibleWith" in text[max(0, match.start() - 40) : match.start()]:
                continue
            major = int(match.group("a") or match.group("b") or match.group("c"))
            targets.append((major, f"{rel}:{text.count(chr(10), 0, match.start()) + 1}"))
    return (max(toolchains) if toolchains else None), (max(targets) if targets else None)


def _jdk_minimums(files: BuildFiles, agp: str | None, gradle: str) -> list[tuple[int, str]]:
    minimums: list[tuple[int, str]] = []
    agp_v = parse_version(agp) if agp else None
    if agp_v is not None:
        if agp_v.major >= 8:
            minimums.append((17, f"AGP {agp} requires JDK 17"))
        elif agp_v.major >= 7:
            minimums.append((11, f"AGP {agp} requires JDK 11"))
    gradle_v = parse_version(gradle)
    if gradle_v is not None and gradle_v.major >= 9:
        minimums.append((17, f"Gradle {gradle} requires JDK 17"))
    for rel, text in files.gradle.items():
        if not rel.split("/")[-1].startswith("settings.gradle"):
            continue
        for match in re.finditer(r"isCompatibleWith\s*\(\s*JavaVersion\.VERSION_(?:1_)?(\d+)", text):
            minimums.append((int(match.group(1)), f"{rel}:{text.count(chr(10), 0, match.start()) + 1}"))
    return minimums


def _default_build_tools(agp: str | None) -> str | None:
    version = parse_version(agp) if agp else None
    if version is None:
        return None
    chosen: str | None = None
    for (major, minor), tools in AGP_DEFAULT_BUILD_TOOLS:
        if (version.major, version.minor) >= (major, minor):
            chosen = tools
    return chosen


# ------------------------------------------------------------------------------------------------ recipe


def _dockerfile(tc: Mapping[str, str], gradle_url: str, gradle_sha: str | None, jdk_url: str) -> str:
    jdk = tc["jdk"]
    lines = [
        BASE_IMAGE_PREAMBLE.rstrip("\n"),
        'SHELL ["/bin/bash", "-o", "pipefail", "-c"]',
        "ENV DEBIAN_FRONTEND=noninteractive",
        "RUN apt-get update \\",
        " && apt-get install -y --no-install-recommends ca-certificates curl git unzip openjdk-17-jdk-headless \\",
        " && rm -rf /var/lib/apt/lists/*",
        HOST_CA_DOCKERFILE_LINES.rstrip("\n"),
    ]
    if jdk == DEBIAN_JDK and not jdk_url:
        java_home = _DEBIAN_JAVA_HOME
    else:
        java_home = f"/opt/jdk-{jdk}"
        lines += [
            f"RUN mkdir -p {java_home} \\",
            f" && curl -fsSL --retry 3 '{jdk_url}' | tar -xz -C {java_home} --strip-components=1 \\",
            ' && awk \'/BEGIN CERT/{n++} n{print > ("/tmp/host-ca-" n ".pem")}\' '
            "/usr/local/share/ca-certificates/host-ca.crt \\",
            ' && for pem in /tmp/host-ca-*.pem; do [ -e "$pem" ] || continue; '
            f"{java_home}/bin/keytool -importcert -noprompt -storepass changeit "
            f"-keystore {java_home}/"
            + ("jre/lib/security/cacerts" if jdk == "8" else "lib/security/cacerts")
            + ' -alias "mobilebench-$(basename "$pem" .pem)" -file "$pem"; done \\',
            " && rm -f /tmp/host-ca-*.pem",
        ]
    lines += [
        f"ENV JAVA_HOME={java_home} PATH={java_home}/bin:$PATH",
        f"RUN java -version 2>&1 | grep -Eq 'version \"(1\\.)?{jdk}[.\"-]'",
        "ENV ANDROID_HOME=/opt/android-sdk ANDROID_SDK_ROOT=/opt/android-sdk",
        "RUN mkdir -p /opt/android-sdk/cmdline-tools /tmp/clt \\",
        f" && curl -fsSL --retry 3 -o /tmp/clt.zip '{_CMDLINE_TOOLS_URL}' \\",
        " && unzip -q /tmp/clt.zip -d /tmp/clt && mv /tmp/clt/cmdline-tools /opt/android-sdk/cmdline-tools/latest \\",
        " && rm -rf /tmp/clt /tmp/clt.zip",
        "ENV PATH=/opt/android-sdk/cmdline-tools/latest/bin:/opt/android-sdk/platform-tools:$PATH",
        f"RUN export JAVA_HOME={_DEBIAN_JAVA_HOME} \\",
        " && (yes | sdkmanager --licenses >/dev/null) \\",
        f" && sdkmanager --install 'platform-tools' 'platforms;android-{tc['compile_sdk']}' "
        f"'build-tools;{tc['build_tools']}' \\",
        f" && test -d /opt/android-sdk/platforms/android-{tc['compile_sdk']} "
        f"&& test -d /opt/android-sdk/build-tools/{tc['build_tools']}",
        f"ENV GRADLE_USER_HOME={GRADLE_HOME}",
    ]
    dist = gradle_wrapper_dist_dir(gradle_url)
    zip_name = gradle_url.rsplit("/", 1)[-1]
    check = f" && echo '{gradle_sha}  {zip_name}' | sha256sum -c - \\" if gradle_sha else None
    lines += [
        f'RUN d={GRADLE_HOME}/{dist} && mkdir -p "$d" && cd "$d" \\',
        f" && curl -fsSL --retry 3 -o '{zip_name}' '{gradle_url}' \\",
        *([check] if check else []),
        f" && unzip -q '{zip_name}' && rm '{zip_name}' && touch '{zip_name}.ok' \\",
        f' && "$d/gradle-{tc["gradle"]}/bin/gradle" --version --no-daemon',
        'ENV GRADLE_OPTS="-Dorg.gradle.daemon=false -Dorg.gradle.vfs.watch=false" CI=true',
    ]
    return "\n".join(lines) + "\n"


def _sdk_levels(files: BuildFiles, resolver: _Resolver, names: tuple[str, ...]) -> list[tuple[int, str]]:
    """``(API level, site)`` of every resolvable value of the ``names`` properties (``34``, ``34.0``)."""
    return [
        (int(v.split(".")[0]), site) for v, site in _resolve_all(files, resolver, names) if v.split(".")[0].isdigit()
    ]


def _infer_sdk_levels(
    repo_dir: Path,
    files: BuildFiles,
    resolver: _Resolver,
    ov: Mapping[str, str],
    tc: dict[str, str],
    src: dict[str, str],
) -> None:
    """``compile_sdk`` (the highest found, or the override) and ``target_sdk`` (the highest, when found) into
    ``tc`` with their sources in ``src``. Raises :class:`RecipeError` when neither is there for compileSdk."""
    compile_sdks = _sdk_levels(files, resolver, ("compileSdk", "compileSdkVersion"))
    if "compile_sdk" not in ov and not compile_sdks:
        raise RecipeError(
            f"{repo_dir}: no compileSdk/compileSdkVersion found or resolvable in the build files "
            "(*.gradle, *.gradle.kts, buildSrc, included builds); set overrides['compile_sdk']"
        )
    if compile_sdks:
        value, site = max(compile_sdks)
        tc["compile_sdk"], src["compile_sdk"] = str(value), site
    target_sdks = _sdk_levels(files, resolver, ("targetSdk", "targetSdkVersion"))
    if target_sdks:
        value, site = max(target_sdks)
        tc["target_sdk"], src["target_sdk"] = str(value), site
    if "compile_sdk" in ov:
        tc["compile_sdk"], src["compile_sdk"] = ov["compile_sdk"], "override"


def _infer_build_tools(
    files: BuildFiles,
    catalogs: list[Catalog],
    resolver: _Resolver,
    ov: Mapping[str, str],
    tc: dict[str, str],
    src: dict[str, str],
) -> None:
    """``build_tools`` into ``tc``: the override, else the highest ``buildToolsVersion`` of the build files (or a
    declared property / catalog version of a usual name), else AGP's default, else ``<compile_sdk>.0.0``."""
    build_tools = [
        (parse_version(v), v, site)
        for v, site in _resolve_all(files, resolver, ("buildToolsVersion",))
        if re.fullmatch(r"\d+\.\d+\.\d+", v)
    ]
    if not build_tools:
        for name in ("BUILD_TOOLS_VERSION", "buildToolsVersion", "buildTools", "androidBuildTools"):
            declared = resolver.declaration(name) or catalog_version(catalogs, name)
            if declared and re.fullmatch(r"\d+\.\d+\.\d+", declared[0]):
                build_tools.append((parse_version(declared[0]), declared[0], declared[1]))
                break
    if "build_tools" in ov:
        tc["build_tools"], src["build_tools"] = ov["build_tools"], "override"
    elif build_tools:
        _, value_s, site = max(build_tools, key=lambda t: t[0])  # type: ignore[arg-type,return-value]
        tc["build_tools"], src["build_tools"] = value_s, site
    elif (default_tools := _default_build_tools(tc.get("agp"))) is not None:
        tc["build_tools"], src["build_tools"] = default_tools, f"default: AGP {tc['agp']} default build tools"
    else:
        tc["build_tools"] = f"{tc['compile_sdk']}.0.0"
        src["build_tools"] = "default: <compile_sdk>.0.0 (AGP version unknown)"


def _infer_jdk(
    repo_dir: Path, files: BuildFiles, resolver: _Resolver, ov: Mapping[str, str], agp: str | None, gradle: str
) -> tuple[str, str]:
    """``(JDK major, source)``: the override, else the repository's files (CI workflows, ``.java-version`` ...),
    else the build's toolchain / target, else Debian's 17; raised to what AGP and Gradle need."""
    if "jdk" in ov:
        override_major = _major(ov["jdk"])
        if override_major is None:
            raise RecipeError(f"overrides['jdk'] = {ov['jdk']!r} is not a JDK version")
        return str(override_major), "override"
    jdk_found = _jdk_from_files(repo_dir)
    if jdk_found is None:
        toolchain, target = _jdk_from_build(files, resolver)
        jdk_found = toolchain or target
    jdk_major, jdk_src = jdk_found if jdk_found else (int(DEBIAN_JDK), "default: JDK 17")
    for minimum, why in _jdk_minimums(files, agp, gradle):
        if minimum > jdk_major:
            jdk_major, jdk_src = minimum, f"{jdk_src}; raised: {why}"
    return str(jdk_major), jdk_src


def _choose_jdk_dist(ov: Mapping[str, str], tc: dict[str, str], src: dict[str, str]) -> str:
    """``jdk_dist`` into ``tc`` for the chosen JDK major; returns the tarball URL (``""`` for Debian's package).
    Raises :class:`RecipeError` for a major with neither a Debian package nor a pinned Temurin build."""
    jdk_url = ov.get("jdk_url", "")
    if jdk_url:
        tc["jdk_dist"], src["jdk_dist"] = jdk_url, "override"
    elif tc["jdk"] == DEBIAN_JDK:
        tc["jdk_dist"], src["jdk_dist"] = "debian-openjdk-17", "default: Debian package"
    elif tc["jdk"] in TEMURIN_JDKS:
        tc["jdk_dist"], jdk_url = TEMURIN_JDKS[tc["jdk"]]
        src["jdk_dist"] = "default: pinned Temurin build"
    else:
        raise RecipeError(
            f"{src['jdk']}: JDK {tc['jdk']} has no pinned tarball (known: 17 from Debian, "
            f"{', '.join(sorted(TEMURIN_JDKS, key=int))} from Temurin); set overrides['jdk_url']"
        )
    return jdk_url


def infer_android_recipe(repo_dir: Path, *, overrides: Mapping[str, Any] | None = None) -> EnvRecipe:
    """Infer the Android/Gradle environment of ``repo_dir`` (precedence in the module docstring).

    Toolchain keys: ``jdk`` (major), ``jdk_dist`` (``debian-openjdk-17`` or the Temurin release),
    ``compile_sdk``, ``target_sdk`` (when found), ``build_tools``, ``gradle``, ``gradle_distribution``
    (URL), ``agp`` (when found), ``cmdline_tools``.

    Raises:
        RecipeError: no wrapper properties, no resolvable ``compileSdk``, a JDK major with no pinned
            tarball (pass ``overrides["jdk_url"]``), invalid catalog TOML or workflow YAML.
    """
    ov = {k: str(v) for k, v in (overrides or {}).items() if v is not None}
    files = collect_build_files(repo_dir)
    catalogs = read_catalogs(repo_dir)
    resolver = _Resolver(files, catalogs)
    tc: dict[str, str] = {}
    src: dict[str, str] = {}

    gradle, gradle_url, gradle_sha, gradle_src = gradle_version(repo_dir)
    tc["gradle"], src["gradle"] = gradle, gradle_src
    tc["gradle_distribution"], src["gradle_distribution"] = gradle_url, gradle_src
    agp = _agp_version(files, catalogs, resolver)
    if agp:
        tc["agp"], src["agp"] = agp
    _infer_sdk_levels(repo_dir, files, resolver, ov, tc, src)
    _infer_build_tools(files, catalogs, resolver, ov, tc, src)
    tc["jdk"], src["jdk"] = _infer_jdk(repo_dir, files, resolver, ov, tc.get("agp"), gradle)
    jdk_url = _choose_jdk_dist(ov, tc, src)
    tc["cmdline_tools"], src["cmdline_tools"] = CMDLINE_TOOLS_BUILD, "default: pinned"

    for key in ("gradle", "agp", "target_sdk"):
        if key in ov:
            tc[key], src[key] = ov[key], "override"
    if "gradle" in ov and "gradle_distribution" not in ov:
        tc["gradle_distribution"] = f"https://services.gradle.org/distributions/gradle-{ov['gradle']}-bin.zip"
        src["gradle_distribution"] = "override"
        gradle_sha = None
    install = ov.get("install_command", INSTALL_COMMAND)
    return EnvRecipe(
        framework="android",
        toolchain=tc,
        sources=src,
        dockerfile=_dockerfile(tc, tc["gradle_distribution"], gradle_sha, jdk_url),
        context_files={},
        install_command=install,
        test_user=GRADLE_TEST_USER,
    )
