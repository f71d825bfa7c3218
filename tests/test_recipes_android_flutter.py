"""Android and Flutter environment recipes (frameworks/android/recipe.py, frameworks/flutter/recipe.py).

Self-made fixture trees always run; the real repositories (thunderbird-android, element-x-android,
zulip-flutter) are read from local git mirrors at fixed commits and skipped when the mirror is absent.
The expected versions below were read by hand from those commits' files.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks.android.recipe import GRADLE_HOME, GRADLE_TEST_HOME, GRADLE_TEST_USER
from pytest_mobilebench.frameworks.gradle import gradle_wrapper_dist_dir
from pytest_mobilebench.frameworks.recipe import RecipeError, infer_recipe
from pytest_mobilebench.runtime.recipe import TEST_USER, TEST_USER_NAME
from pytest_mobilebench.frameworks.flutter.recipe import (
    FLUTTER_GIT_URL,
    FLUTTER_ROOT,
    FLUTTER_TEST_USER,
    PUB_CACHE,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "recipes"
MIRRORS = Path(os.environ.get("MOBILEBENCH_TEST_MIRRORS", "/work/.mirror"))

THUNDERBIRD = ("thunderbird/thunderbird-android", "d2598ca137d178ef8038a32ae9292095341bd73b")
ELEMENT_X = ("element-hq/element-x-android", "a5a37664ba5e2fa178dcf8f5874d1aed15ebf7c0")
ZULIP = ("zulip/zulip-flutter", "6831947c360ccf0279443ac0cf679fedba53cce9")

_BUILD_INPUTS = re.compile(
    r"(^|/)(build\.gradle(\.kts)?|settings\.gradle(\.kts)?|gradle\.properties)$"
    r"|^gradle/|^\.github/|^\.java-version$|^build-plugin/|^plugins/|^pubspec\.(yaml|lock)$|^\.fvmrc$"
)


def export(repo: str, commit: str, dest: Path, keep: Callable[[str], bool] = _BUILD_INPUTS.search) -> Path:  # type: ignore[assignment]
    """Export the build-input files of ``repo`` at ``commit`` from its mirror (skip when absent)."""
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"no local mirror of {repo} under {MIRRORS}")
    listed = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip(f"mirror of {repo} lacks {commit}: {listed.stderr.strip()}")
    paths = [p for p in listed.stdout.splitlines() if keep(p)]
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, "--", *paths],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


# ------------------------------------------------------------------------------------ self-made fixtures


def test_android_groovy_fixture() -> None:
    recipe = infer_recipe(FIXTURES / "android-groovy", "android")
    assert dict(recipe.toolchain) == {
        "gradle": "7.5",
        "gradle_distribution": "https://services.gradle.org/distributions/gradle-7.5-bin.zip",
        "agp": "7.4.2",
        "compile_sdk": "34",  # the highest compileSdk of all modules (core/data), ext value 33 elsewhere
        "target_sdk": "33",
        "build_tools": "33.0.2",
        "jdk": "17",  # workflow matrix [11, 17] -> highest
        "jdk_dist": "debian-openjdk-17",
        "cmdline_tools": "11076708",
    }
    assert recipe.sources["agp"] == "build.gradle:6"  # ext agp_version behind "$agp_version"
    assert recipe.sources["compile_sdk"] == "core/data/build.gradle:6"
    assert recipe.sources["build_tools"] == "build.gradle:5"
    assert recipe.sources["jdk"] == ".github/workflows/ci.yml:14"
    assert "apt-get install" in recipe.dockerfile and "openjdk-17-jdk-headless" in recipe.dockerfile
    assert "temurin" not in recipe.dockerfile
    assert "'platforms;android-34' 'build-tools;33.0.2'" in recipe.dockerfile
    assert recipe.context_files == {}
    assert recipe.install_command == "./gradlew --no-daemon --version && ./gradlew --no-daemon dependencies"


def test_android_kts_catalog_and_toolchain_fixture() -> None:
    recipe = infer_recipe(FIXTURES / "android-kts-logic", "android")
    tc = recipe.toolchain
    assert (tc["gradle"], tc["agp"], tc["compile_sdk"], tc["target_sdk"]) == ("8.10.2", "8.7.3", "35", "34")
    assert recipe.sources["compile_sdk"] == "gradle/libs.versions.toml:4"  # libs.versions.compileSdk.get().toInt()
    assert (tc["build_tools"], recipe.sources["build_tools"]) == ("34.0.0", "default: AGP 8.7.3 default build tools")
    assert (tc["jdk"], recipe.sources["jdk"]) == ("21", "app/build.gradle.kts:15")  # jvmToolchain(21)
    assert tc["jdk_dist"] == "jdk-21.0.5+11"
    assert "OpenJDK21U-jdk_x64_linux_hotspot_21.0.5_11.tar.gz" in recipe.dockerfile
    assert "keytool -importcert" in recipe.dockerfile


def test_jdk_is_raised_to_what_agp_needs(tmp_path: Path) -> None:
    (tmp_path / "gradle" / "wrapper").mkdir(parents=True)
    (tmp_path / "gradle" / "wrapper" / "gradle-wrapper.properties").write_text(
        "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.2-bin.zip\n"
        "distributionSha256Sum=" + "ab" * 32 + "\n",
        encoding="utf-8",
    )
    (tmp_path / "settings.gradle.kts").write_text('include(":app")\n', encoding="utf-8")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "build.gradle.kts").write_text(
        'plugins { id("com.android.application") version "8.1.4" }\n'
        "android {\n    compileSdk = 34\n    compileOptions { sourceCompatibility = JavaVersion.VERSION_1_8 }\n}\n",
        encoding="utf-8",
    )
    recipe = infer_recipe(tmp_path, "android")
    assert recipe.toolchain["agp"] == "8.1.4"
    assert recipe.toolchain["jdk"] == "17"
    assert recipe.sources["jdk"] == "app/build.gradle.kts:4; raised: AGP 8.1.4 requires JDK 17"
    assert recipe.toolchain["build_tools"] == "33.0.1"
    assert f"echo '{'ab' * 32}  gradle-8.2-bin.zip' | sha256sum -c -" in recipe.dockerfile


def test_android_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "settings.gradle").write_text("include ':app'\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"gradle-wrapper\.properties: missing"):
        infer_recipe(tmp_path, "android")
    (tmp_path / "gradle" / "wrapper").mkdir(parents=True)
    (tmp_path / "gradle" / "wrapper" / "gradle-wrapper.properties").write_text(
        "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.4-all.zip\n", encoding="utf-8"
    )
    with pytest.raises(RecipeError, match="no compileSdk/compileSdkVersion found"):
        infer_recipe(tmp_path, "android")
    recipe = infer_recipe(tmp_path, "android", overrides={"compile_sdk": "34", "jdk": "11"})
    assert (recipe.toolchain["compile_sdk"], recipe.toolchain["jdk"]) == ("34", "11")
    assert recipe.toolchain["jdk_dist"] == "jdk-11.0.25+9"
    with pytest.raises(RecipeError, match="JDK 22 has no pinned tarball"):
        infer_recipe(tmp_path, "android", overrides={"compile_sdk": "34", "jdk": "22"})


def test_gradle_wrapper_dist_dir_matches_the_wrapper_layout() -> None:
    # folder names the Gradle wrapper itself creates for these URLs (MD5 of the URL, base 36)
    assert (
        gradle_wrapper_dist_dir("https://services.gradle.org/distributions/gradle-7.5.1-bin.zip")
        == "wrapper/dists/gradle-7.5.1-bin/7jzzequgds1hbszbhq3npc5ng"
    )
    assert (
        gradle_wrapper_dist_dir("https://services.gradle.org/distributions/gradle-7.5-bin.zip")
        == "wrapper/dists/gradle-7.5-bin/f1w0cc9nuo0eivz97x2xlu9sv"
    )


def test_flutter_fvm_fixture() -> None:
    recipe = infer_recipe(FIXTURES / "flutter-fvm", "flutter")
    assert dict(recipe.toolchain) == {"flutter": "3.24.3", "flutter_ref": "3.24.3", "dart": ">=3.4.0 <4.0.0"}
    assert dict(recipe.sources) == {"flutter": ".fvmrc:2", "flutter_ref": ".fvmrc:2", "dart": "pubspec.yaml:7"}
    assert (
        "git clone --depth 1 --branch 3.24.3 https://github.com/flutter/flutter.git /opt/flutter" in recipe.dockerfile
    )
    assert "grep -q '^Flutter 3\\.24\\.3 '" in recipe.dockerfile
    assert recipe.install_command == "flutter pub get"


def _pubspec(tmp_path: Path, environment: str, extra: dict[str, str] | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pubspec.yaml").write_text(
        f"name: demo\nenvironment:\n{environment}\ndependencies:\n  flutter:\n    sdk: flutter\n", encoding="utf-8"
    )
    for rel, text in (extra or {}).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def test_flutter_workflow_env_version(tmp_path: Path) -> None:
    repo = _pubspec(
        tmp_path,
        "  sdk: ^3.5.0",
        {
            ".github/workflows/ci.yml": (
                "env:\n  FLUTTER_VERSION: 3.27.1\njobs:\n  t:\n    steps:\n"
                "      - uses: subosito/flutter-action@v2\n        with:\n"
                "          channel: stable\n          flutter-version: ${{ env.FLUTTER_VERSION }}\n"
            )
        },
    )
    recipe = infer_recipe(repo, "flutter")
    assert (recipe.toolchain["flutter"], recipe.sources["flutter"]) == ("3.27.1", ".github/workflows/ci.yml:9")
    assert recipe.toolchain["dart"] == "^3.5.0"


def test_flutter_from_dart_constraint_and_lower_bound(tmp_path: Path) -> None:
    recipe = infer_recipe(_pubspec(tmp_path / "a", "  sdk: '>=3.4.0 <4.0.0'"), "flutter")
    assert recipe.toolchain["flutter"] == "3.22.3"  # first stable shipping a Dart >= 3.4
    assert recipe.sources["flutter"].startswith("pubspec.yaml:3 (Dart")
    recipe = infer_recipe(_pubspec(tmp_path / "b", "  sdk: ^3.0.0\n  flutter: '>=3.19.0'"), "flutter")
    assert (recipe.toolchain["flutter"], recipe.sources["flutter"]) == ("3.19.0", "pubspec.yaml:4")


def test_flutter_main_channel_build_needs_a_commit(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"pubspec\.yaml:4: Flutter '3\.30\.0-1\.0\.pre-12' is a main-channel build"):
        infer_recipe(_pubspec(tmp_path, "  sdk: ^3.8.0\n  flutter: '>=3.30.0-1.0.pre-12'"), "flutter")
    recipe = infer_recipe(tmp_path, "flutter", overrides={"flutter_ref": "f" * 40})
    assert recipe.toolchain["flutter_ref"] == "f" * 40
    assert f"checkout --detach {'f' * 40}" in recipe.dockerfile


def test_flutter_without_any_source(tmp_path: Path) -> None:
    (tmp_path / "pubspec.yaml").write_text("name: demo\n", encoding="utf-8")
    with pytest.raises(RecipeError, match="no Flutter version"):
        infer_recipe(tmp_path, "flutter")


# ------------------------------------------------------------------------------- real repositories


def test_thunderbird_android_recipe(tmp_path: Path) -> None:
    repo = export(*THUNDERBIRD, tmp_path / "tb")
    recipe = infer_recipe(repo, "android")
    assert dict(recipe.toolchain) == {
        "gradle": "9.1.0",
        "gradle_distribution": "https://services.gradle.org/distributions/gradle-9.1.0-all.zip",
        "agp": "8.12.3",
        "compile_sdk": "36",
        "target_sdk": "35",
        "build_tools": "35.0.0",
        "jdk": "21",
        "jdk_dist": "jdk-21.0.5+11",
        "cmdline_tools": "11076708",
    }
    assert recipe.sources["gradle"] == "gradle/wrapper/gradle-wrapper.properties:3"
    assert recipe.sources["agp"] == "gradle/libs.versions.toml:19"
    # ThunderbirdProjectConfig.Android.sdkCompile / sdkTarget constants in the included build
    assert recipe.sources["compile_sdk"] == "build-plugin/src/main/kotlin/ThunderbirdProjectConfig.kt:11"
    assert recipe.sources["target_sdk"] == "build-plugin/src/main/kotlin/ThunderbirdProjectConfig.kt:10"
    assert recipe.sources["jdk"] == ".github/actions/setup-gradle/action.yml:27"  # composite action's setup-java


def test_element_x_android_recipe(tmp_path: Path) -> None:
    repo = export(*ELEMENT_X, tmp_path / "ex")
    recipe = infer_recipe(repo, "android")
    tc = recipe.toolchain
    assert (tc["gradle"], tc["agp"], tc["compile_sdk"], tc["target_sdk"]) == ("9.2.1", "8.13.2", "36", "36")
    assert tc["build_tools"] == "36.0.0"  # Versions.BUILD_TOOLS_VERSION
    assert tc["jdk"] == "21"
    assert recipe.sources["compile_sdk"] == "plugins/src/main/kotlin/Versions.kt:64"
    assert recipe.sources["build_tools"] == "plugins/src/main/kotlin/Versions.kt:71"
    assert recipe.sources["jdk"] == ".github/workflows/build.yml:37"
    assert (
        "echo '72f44c9f8ebcb1af43838f45ee5c4aa9c5444898b3468ab3f4af7b6076c5bc3f  gradle-9.2.1-bin.zip' | sha256sum -c -"
        in recipe.dockerfile
    )


def test_zulip_flutter_recipe(tmp_path: Path) -> None:
    repo = export(*ZULIP, tmp_path / "zf")
    recipe = infer_recipe(repo, "flutter")
    # CI clones Flutter's main branch; the pubspec pins the minimum main build and names its commit
    assert dict(recipe.toolchain) == {
        "flutter": "3.46.0-1.0.pre-413",
        "flutter_ref": "6995038d96ef2b723cbb45882e76600deb02c9d3",
        "dart": ">=3.13.0-270.0.dev <4.0.0",
    }
    assert dict(recipe.sources) == {
        "flutter": "pubspec.yaml:18",
        "flutter_ref": "pubspec.yaml:18",
        "dart": "pubspec.yaml:17",
    }
    assert "git clone --filter=blob:none --no-checkout" in recipe.dockerfile


# ------------------------------------------------------------------------- the unprivileged test user
# The Gradle and Flutter toolchains cannot be downloaded here: these tests read the recipe text; the
# hand-over itself runs against a stand-in layout in Docker (tests/test_trust_docker.py).


def _bash_syntax_ok(script: str) -> None:
    check = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_android_tests_run_as_the_test_user_on_a_root_owned_gradle_home() -> None:
    recipe = infer_recipe(FIXTURES / "android-groovy", "android")
    assert recipe.test_user is GRADLE_TEST_USER
    dist = gradle_wrapper_dist_dir(recipe.toolchain["gradle_distribution"])
    assert f"ENV GRADLE_USER_HOME={GRADLE_HOME}" in recipe.dockerfile.splitlines()  # the install warms it as root
    assert f"RUN d={GRADLE_HOME}/{dist} &&" in recipe.dockerfile
    # the tests' Gradle: its own (sticky) user home, dependencies through the read-only cache of the warm one
    assert dict(GRADLE_TEST_USER.env) == {
        "GRADLE_USER_HOME": GRADLE_TEST_HOME,
        "GRADLE_RO_DEP_CACHE": f"{GRADLE_HOME}/caches",
    }
    script = GRADLE_TEST_USER.handover
    _bash_syntax_ok(script)
    assert f"warm={GRADLE_HOME} home={GRADLE_TEST_HOME}" in script
    assert 'chmod 1777 "$home"' in script and 'ln -sfn "$warm/wrapper" "$home/wrapper"' in script
    for reserved in ("$home/init.d", "$home/init.gradle", "$home/init.gradle.kts", "$home/jdks"):
        assert reserved in script.split("reserved=", 1)[1].splitlines()[0]
    assert 'chown -h root:root $reserved "$home/gradle.properties" "$home/wrapper"' in script
    assert 'chmod 0666 "${ok%.ok}.lck"' in script  # the wrapper's lock, opened read-write
    # nothing of the toolchain is ever given to the test user
    assert TEST_USER not in script and TEST_USER_NAME not in script and "chmod -R" not in script
    assert not dict(GRADLE_TEST_USER.root_dirs)


def test_flutter_tests_run_as_the_test_user_on_a_root_owned_sdk_and_pub_cache() -> None:
    recipe = infer_recipe(FIXTURES / "flutter-fvm", "flutter")
    assert recipe.test_user is FLUTTER_TEST_USER and not dict(FLUTTER_TEST_USER.env)
    assert f"ENV FLUTTER_ROOT={FLUTTER_ROOT} PUB_CACHE={PUB_CACHE} " in recipe.dockerfile
    assert f"{FLUTTER_GIT_URL} {FLUTTER_ROOT}" in recipe.dockerfile
    script = FLUTTER_TEST_USER.handover
    _bash_syntax_ok(script)
    writable = [line for line in script.splitlines() if "chown" in line or "0666" in line]
    assert writable == [
        f"touch {FLUTTER_ROOT}/bin/cache/lockfile && chmod 0666 {FLUTTER_ROOT}/bin/cache/lockfile",
        f"chown -R {TEST_USER_NAME}:{TEST_USER_NAME} {PUB_CACHE}/active_roots",
    ]
    assert f"find {FLUTTER_ROOT} {PUB_CACHE} " in script and "-exec chmod a+rX" in script


def test_a_replaced_environment_layer_runs_its_tests_as_root() -> None:
    from pytest_mobilebench import frameworks

    for fixture, framework in (("android-groovy", "android"), ("flutter-fvm", "flutter")):
        assert infer_recipe(FIXTURES / fixture, framework).test_user is not None
        own = frameworks.infer_recipe(FIXTURES / fixture, framework, {"recipe": "ARG BASE_IMAGE\nFROM x\n"})
        assert own.test_user is None and own.dockerfile == "ARG BASE_IMAGE\nFROM x\n"
