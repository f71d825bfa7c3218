"""Issue 30, item 3: a failed install classified from its own log (npm, yarn classic and berry, pnpm), shown
with the failing lines. The logs below are written here in the shape those tools print (hosts are examples)."""

from __future__ import annotations

import pytest

from pytest_mobilebench.runtime.install_log import classify, registries_in

REG = "# registry https://registry.example.test/\n"

NPM10_ETARGET = (
    REG
    + """\
npm error code ETARGET
npm error notarget No matching version found for left-pad-x@99.0.0.
npm error notarget In most cases you or one of your dependencies are requesting
npm error notarget a package version that doesn't exist.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-04T22_00_00_000Z-debug-0.log
"""
)
NPM6_E404 = (
    REG
    + """\
npm ERR! code E404
npm ERR! 404 Not Found - GET https://registry.example.test/@acme%2fno-such-thing - Not found
npm ERR! 404
npm ERR! 404  '@acme/no-such-thing@1.2.3' is not in the npm registry.
npm ERR! 404 You should bug the author to publish it (or use the name yourself!)
"""
)
YARN1_NO_VERSION = (
    REG
    + """\
yarn install v1.22.22
[1/4] Resolving packages...
error Couldn't find any versions for "left-pad-x" that matches "99.0.0"
info Visit https://yarnpkg.com/en/docs/cli/install for documentation about this command.
"""
)
BERRY_NO_CANDIDATES = (
    REG
    + """\
➤ YN0000: ┌ Resolution step
➤ YN0082: │ left-pad-x@npm:99.0.0: No candidates found
➤ YN0000: └ Completed in 0s 215ms
➤ YN0000: Failed with errors in 0s 219ms
"""
)
PNPM_404 = (
    REG
    + """\
 ERR_PNPM_FETCH_404  GET https://registry.example.test/no-such-thing-zz: Not Found - 404

This error happened while installing a direct dependency of /testbed

no-such-thing-zz is not in the npm registry, or you have no permission to fetch it.
"""
)
NPM_TARBALL_HOST = (
    REG
    + """\
npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://archives.example.test/react-native-0.59.tgz failed, reason: getaddrinfo \
ENOTFOUND archives.example.test
npm error network This is a problem related to network connectivity.
"""
)
YARN1_GIT_DEP = (
    REG
    + """\
[1/4] Resolving packages...
error Command failed.
Exit code: 128
Command: git
Arguments: ls-remote --tags --heads https://git.example.test/acme/widget.git
Directory: /testbed
Output:
fatal: unable to access 'https://git.example.test/acme/widget.git/': Could not resolve host: git.example.test
"""
)
NPM_POSTINSTALL_DOWNLOAD = (
    REG
    + """\
> fetch-binary-x@1.0.0 postinstall
> node install.js

Downloading https://downloads.example.test/bin/tool-linux-x64.tar.gz
Error: getaddrinfo EAI_AGAIN downloads.example.test
    at GetAddrInfoReqWrap.onlookup [as oncomplete] (node:dns:120:26)
npm error code 1
npm error path /testbed/node_modules/fetch-binary-x
npm error command failed
npm error command sh -c node install.js
"""
)
YARN1_POSTINSTALL_CURL = (
    REG
    + """\
[4/4] Building fresh packages...
error /testbed/node_modules/@acme/sdk-bin: Command failed.
Exit code: 6
Command: curl -fsSL https://cdn.example.test/sdk.zip -o sdk.zip
Arguments:
Directory: /testbed/node_modules/@acme/sdk-bin
Output:
curl: (6) Could not resolve host: cdn.example.test
"""
)
NPM_503 = (
    REG
    + """\
npm error code E503
npm error 503 Service Unavailable - GET https://registry.example.test/left-pad
"""
)
PNPM_REGISTRY_TIMEOUT = (
    REG
    + """\
 WARN  GET https://registry.example.test/react error (ETIMEDOUT). Will retry in 10 seconds. 2 retries left.
 ERR_PNPM_META_FETCH_FAIL  GET https://registry.example.test/react: request to https://registry.example.test/react \
failed, reason: connect ETIMEDOUT 10.0.0.1:443
"""
)
NPM_OWN_PREINSTALL = (
    REG
    + """\
> app@1.0.0 preinstall
> node scripts/check.js

node:internal/modules/cjs/loader:1228
  throw err;
Error: Cannot find module '/testbed/scripts/check.js'
npm error code 1
npm error path /testbed
npm error command failed
npm error command sh -c node scripts/check.js
"""
)


@pytest.mark.parametrize(
    ("log", "cause", "subject", "shown"),
    [
        (NPM10_ETARGET, "package_missing", "left-pad-x@99.0.0", "No matching version found"),
        (NPM6_E404, "package_missing", "@acme/no-such-thing", "404 Not Found"),
        (YARN1_NO_VERSION, "package_missing", "left-pad-x@99.0.0", "Couldn't find any versions"),
        (BERRY_NO_CANDIDATES, "package_missing", "left-pad-x@npm:99.0.0", "No candidates found"),
        (PNPM_404, "package_missing", "no-such-thing-zz", "ERR_PNPM_FETCH_404"),
        (NPM_TARBALL_HOST, "host_unreachable", "archives.example.test", "ENOTFOUND archives.example.test"),
        (YARN1_GIT_DEP, "host_unreachable", "git.example.test", "unable to access"),
        (
            NPM_POSTINSTALL_DOWNLOAD,
            "binary_download",
            "downloads.example.test (a download by fetch-binary-x)",
            "EAI_AGAIN",
        ),
        (
            YARN1_POSTINSTALL_CURL,
            "binary_download",
            "cdn.example.test (a download by @acme/sdk-bin)",
            "Could not resolve host",
        ),
        (NPM_503, "registry_transient", "", "503 Service Unavailable"),
        (PNPM_REGISTRY_TIMEOUT, "registry_transient", "", "ETIMEDOUT"),
        (NPM_OWN_PREINSTALL, "lifecycle_script", "", "command failed"),
        ("Step 4/5 : RUN npm ci\nsomething odd\n", "unknown", "", "something odd"),
    ],
)
def test_each_failure_is_named_with_its_subject_and_the_lines_that_show_it(log, cause, subject, shown) -> None:
    found = classify(log)
    assert (found.cause, found.subject) == (cause, subject)
    assert any(shown in line for line in found.lines) and len(found.lines) <= 12
    assert found.unavailable is (cause in {"package_missing", "host_unreachable", "binary_download"})


def test_an_unreachable_configured_registry_is_transient_and_any_other_host_is_not() -> None:
    own = (
        "npm error network request to https://npm.mirror.test/react failed, reason: getaddrinfo "
        "EAI_AGAIN npm.mirror.test\n"
    )
    assert classify("# registry https://npm.mirror.test/\n" + own).cause == "registry_transient"
    assert classify(own).describe() == "host_unreachable: npm.mirror.test"
    assert classify(own, registries=["npm.mirror.test"]).cause == "registry_transient"
    assert registries_in(REG + "# registry http://other.test:4873/\n") == {"registry.example.test", "other.test"}


def test_ansi_colours_do_not_hide_the_cause() -> None:
    coloured = "\x1b[31mnpm\x1b[39m \x1b[31merror\x1b[39m notarget No matching version found for zz-none@2.0.0.\n"
    assert classify(coloured).subject == "zz-none@2.0.0"


# issue 30, item 3 follow-ups: more real shapes (written here; hosts are examples)
YARN1_TARBALL_404 = (
    REG
    + """\
yarn install v1.22.22
[1/4] Resolving packages...
[2/4] Fetching packages...
error An unexpected error occurred: "https://registry.example.test/@acme/sdk/-/sdk-1.2.3.tgz: \
Request failed \\"404 Not Found\\"".
info If you think this is a bug, please open a bug report with the information provided in "/testbed/yarn-error.log".
info Visit https://yarnpkg.com/en/docs/cli/install for documentation about this command.
"""
)
YARN1_CODELOAD_ENOTFOUND = (
    REG
    + """\
[1/4] Resolving packages...
[2/4] Fetching packages...
info There appears to be trouble with your network connection. Retrying...
info There appears to be trouble with your network connection. Retrying...
error An unexpected error occurred: "https://codeload.example.test/acme/widget/tar.gz/0a1b2c3: \
getaddrinfo ENOTFOUND codeload.example.test".
"""
)
NODE_BARE_ENOTFOUND = (
    REG
    + """\
> app@1.0.0 postinstall
> node scripts/fetch-fonts.js

Error: getaddrinfo ENOTFOUND fonts.example.test
    at GetAddrInfoReqWrap.onlookup [as oncomplete] (node:dns:107:26) {
  errno: -3008,
  code: 'ENOTFOUND',
  syscall: 'getaddrinfo',
  hostname: 'fonts.example.test'
}
"""
)
PNPM_TARBALL_404 = (
    REG
    + """\
Progress: resolved 212, reused 0, downloaded 180, added 0
 ERR_PNPM_FETCH_404  GET https://registry.example.test/left-pad-x/-/left-pad-x-9.9.9.tgz: Not Found - 404

This error happened while installing the dependencies of app@1.0.0

left-pad-x is not in the npm registry, or you have no permission to fetch it.
"""
)
PNPM_META_RETRIES_SCOPE_REGISTRY = (
    REG
    + """\
 WARN  GET https://npm.acme.example/@acme%2Fsdk error (ENOTFOUND). Will retry in 10 seconds. 2 retries left.
 WARN  GET https://npm.acme.example/@acme%2Fsdk error (ENOTFOUND). Will retry in 1 minute. 1 retries left.
 ERR_PNPM_META_FETCH_FAIL  GET https://npm.acme.example/@acme%2Fsdk: request to https://npm.acme.example/@acme%2Fsdk \
failed, reason: getaddrinfo ENOTFOUND npm.acme.example
"""
)
PNPM_META_RETRIES_REGISTRY = (
    REG
    + """\
 WARN  GET https://registry.example.test/react error (EAI_AGAIN). Will retry in 10 seconds. 2 retries left.
 WARN  GET https://registry.example.test/react error (EAI_AGAIN). Will retry in 1 minute. 1 retries left.
 ERR_PNPM_META_FETCH_FAIL  GET https://registry.example.test/react: request to https://registry.example.test/react \
failed, reason: getaddrinfo EAI_AGAIN registry.example.test
"""
)
NPM10_E404_TARBALL = (
    REG
    + """\
npm error code E404
npm error 404 Not Found - GET https://registry.example.test/left-pad-x/-/left-pad-x-9.9.9.tgz - Not found
npm error 404
npm error 404  'left-pad-x@https://registry.example.test/left-pad-x/-/left-pad-x-9.9.9.tgz' is not in this registry.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-04T22_00_00_000Z-debug-0.log
"""
)
NPM10_E404_NAME = (
    REG
    + """\
npm error code E404
npm error 404 Not Found - GET https://registry.example.test/no-such-thing-zz - Not found
npm error 404
npm error 404  'no-such-thing-zz@^1.0.0' is not in this registry.
"""
)


@pytest.mark.parametrize(
    ("log", "cause", "subject", "shown"),
    [
        (YARN1_TARBALL_404, "package_missing", "@acme/sdk@1.2.3", 'Request failed \\"404 Not Found\\"'),
        (YARN1_CODELOAD_ENOTFOUND, "host_unreachable", "codeload.example.test", "ENOTFOUND codeload.example.test"),
        (NODE_BARE_ENOTFOUND, "host_unreachable", "fonts.example.test", "getaddrinfo ENOTFOUND fonts.example.test"),
        (PNPM_TARBALL_404, "package_missing", "left-pad-x@9.9.9", "ERR_PNPM_FETCH_404"),
        (PNPM_META_RETRIES_SCOPE_REGISTRY, "host_unreachable", "npm.acme.example", "ERR_PNPM_META_FETCH_FAIL"),
        (PNPM_META_RETRIES_REGISTRY, "registry_transient", "", "ERR_PNPM_META_FETCH_FAIL"),
        (NPM10_E404_TARBALL, "package_missing", "left-pad-x@9.9.9", "code E404"),
        (NPM10_E404_NAME, "package_missing", "no-such-thing-zz", "404 Not Found - GET"),
    ],
)
def test_more_real_shapes_name_the_package_or_host(log: str, cause: str, subject: str, shown: str) -> None:
    found = classify(log)
    assert (found.cause, found.subject) == (cause, subject), found
    assert any(shown in line for line in found.lines), found.lines
    assert not any(line.startswith("# registry") for line in found.lines)


#: npm ci on a 2017 commit of a real React-Native project whose package-lock.json lags its package.json
NPM_CI_OUT_OF_DATE = """# registry https://registry.npmjs.org/
npm ERR! code EUSAGE
npm ERR! `npm ci` can only install packages when your package.json and package-lock.json are in sync.
npm ERR! Invalid: lock file's strip-ansi@3.0.1 does not satisfy strip-ansi@^4.0.0
"""


def test_a_lockfile_that_lags_package_json_is_named_not_unknown() -> None:
    found = classify(NPM_CI_OUT_OF_DATE)
    assert (found.cause, found.unavailable) == ("lockfile_out_of_date", False)
    assert any("does not satisfy" in line for line in found.lines), found.lines


def test_after_the_unfrozen_retry_its_own_failure_is_the_cause() -> None:
    """The frozen attempt's refusal is history once the install ran again unfrozen: a package missing then is named,
    and a failure the retry does not explain is ``unknown`` (never the frozen attempt's reason)."""
    retry = NPM_CI_OUT_OF_DATE + "# mobilebench: lockfile_out_of_date: package-lock.json does not match package.json\n"
    missing = classify(retry + "npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-pad-x - Not found\n")
    assert (missing.cause, missing.subject) == ("package_missing", "left-pad-x")
    other = classify(retry + "Segmentation fault (core dumped)\n")
    assert other.cause == "unknown" and other.lines == ("Segmentation fault (core dumped)",)


#: npm 6 installing a 2017 React-Native app (the unfrozen retry of a lagging lockfile): node-pre-gyp's prebuilt
#: binary gets no answer from its host, then its source-compile fallback fails with the image's toolchain
NODE_PRE_GYP_NO_ANSWER = """# registry https://registry.npmjs.org/
> realm@1.10.1 install /testbed/node_modules/realm
> node-pre-gyp install --fallback-to-build
node-pre-gyp ERR! Tried to download(undefined): https://binaries.example.test/realm/realm-v1.10.1-node-v72-linux-x64.tar.gz
node-pre-gyp ERR! Pre-built binaries not found for realm@1.10.1 and node@12.22.12 (falling back to source compile)
ValueError: invalid mode: 'rU' while trying to load binding.gyp
gyp ERR! configure error
npm ERR! code ELIFECYCLE
npm ERR! realm@1.10.1 install: `node-pre-gyp install --fallback-to-build`
npm ERR! Failed at the realm@1.10.1 install script.
"""


def test_a_prebuilt_binary_with_no_answer_is_the_download_not_the_fallback_compile() -> None:
    found = classify(NODE_PRE_GYP_NO_ANSWER)
    assert (found.cause, found.subject) == ("binary_download", "binaries.example.test (a download by realm)")
    assert found.unavailable and any("Tried to download" in line for line in found.lines)


def test_a_prebuilt_binary_the_host_answered_for_leaves_the_compile_failure_as_the_cause() -> None:
    answered = NODE_PRE_GYP_NO_ANSWER.replace("download(undefined)", "download(404)")
    found = classify(answered)
    assert found.cause == "lifecycle_script" and found.subject == "realm" and not found.unavailable
