"""The Dockerfiles of the layered images (:mod:`pytest_mobilebench.runtime.images` builds them): the base layer's,
the environment layer's content key, the instance layer's (the install, the hand-over to the test user, the
baseline script), and the labels every build step carries. Pure text; nothing here talks to a daemon.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Mapping
from typing import Final

from pytest_mobilebench.runtime.git import BASE_REF
from pytest_mobilebench.runtime.naming import content_hash
from pytest_mobilebench.runtime.recipe import TEST_USER, TEST_USER_NAME, UserHandover

__all__ = [
    "BASELINE_REF",
    "BASELINE_SCRIPT",
    "BUILD_STEP_MARK",
    "CA_NAME",
    "LABEL_USER",
    "SYSTEM_BUNDLE",
    "TESTBED",
    "base_dockerfile",
    "env_key",
    "instance_dockerfile",
    "labelled_dockerfile",
]

#: where the repository lives inside instance images and containers
TESTBED: Final[str] = "/testbed"
#: git tag (inside /testbed) naming the tree after dependency installation; the shell snippets of
#: :mod:`pytest_mobilebench.runtime.patching` (RESET, DIFF, restore_command) diff and restore against it
BASELINE_REF: Final[str] = BASE_REF
#: on instance images whose tests run unprivileged: ``uid:gid`` of the test user (:data:`TEST_USER`, declared
#: in :mod:`pytest_mobilebench.runtime.recipe`)
LABEL_USER: Final[str] = "mobilebench.user"
#: the host's CA bundle in the base layer's build context and under ``/usr/local/share/ca-certificates``
CA_NAME: Final[str] = "mobilebench-host-ca.crt"
#: text every base-layer build step's command contains (how the sweep knows an unlabelled leftover)
BUILD_STEP_MARK: Final[str] = CA_NAME
#: the system bundle the TLS clients of every image are pointed at
SYSTEM_BUNDLE: Final[str] = "/etc/ssl/certs/ca-certificates.crt"


def env_key(dockerfile: str, packages: Mapping[str, str], files: Mapping[str, bytes]) -> str:
    """The environment layer's content key (sha256 hex): what the build reads and nothing else,
    ``sha256("env", Dockerfile, sorted (context name, package spec), sorted (context name, sha256(bytes)))``.

    The install command and the places the toolchain was read from (a recipe's ``sources``, a line number of
    ``package.json`` that moves with every commit) are not inputs of this image: two bases of a repository with
    the same node and package manager share one environment image whatever their install commands (issue 30,
    item 4). The install command keys the dependency and instance layers instead.
    """
    return content_hash(
        "env",
        dockerfile,
        json.dumps(sorted(packages.items())),
        *(f"{name}\0{hashlib.sha256(data).hexdigest()}" for name, data in sorted(files.items())),
    )


def labelled_dockerfile(dockerfile: str, labels: Mapping[str, str]) -> str:
    """``dockerfile`` with ``LABEL k="v" ...`` right after each ``FROM`` line, so each later step's
    container (the classic builder's intermediate containers) carries ``labels``."""
    label = "LABEL " + " ".join(f"{key}={json.dumps(value)}" for key, value in sorted(labels.items()))
    out: list[str] = []
    for line in dockerfile.splitlines():
        out.append(line)
        if re.match(r"\s*FROM\s", line, flags=re.IGNORECASE):
            out.append(label)
    return "\n".join(out) + "\n"


def base_dockerfile() -> str:
    """The base layer's Dockerfile (build arg ``BASE_IMAGE`` = the Debian image).

    The host bundle is also put in place as the system bundle *before* apt runs so that an https
    mirror behind an intercepting proxy works too; ``update-ca-certificates`` then regenerates it.
    """
    ca_env = " \\\n    ".join(
        f"{name}={SYSTEM_BUNDLE}"
        for name in (
            "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE",
            "SSL_CERT_FILE",
            "PIP_CERT",
            "CURL_CA_BUNDLE",
            "GIT_SSL_CAINFO",
        )
    )
    return f"""ARG BASE_IMAGE
FROM ${{BASE_IMAGE}}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
COPY {CA_NAME} /usr/local/share/ca-certificates/{CA_NAME}
RUN set -eux; \\
    if [ ! -s {SYSTEM_BUNDLE} ]; then mkdir -p /etc/ssl/certs; \\
      cp /usr/local/share/ca-certificates/{CA_NAME} {SYSTEM_BUNDLE}; fi; \\
    apt-get update; \\
    apt-get install -y --no-install-recommends ca-certificates git patch python3 build-essential \\
      curl xz-utils unzip; \\
    update-ca-certificates; \\
    rm -rf /var/lib/apt/lists/*; \\
    git config --system user.email mobilebench@localhost; \\
    git config --system user.name mobilebench; \\
    git config --system --add safe.directory '*'; \\
    git config --system advice.detachedHead false
ENV {ca_env}
"""


#: run in /testbed after the install command (shipped in the instance build context)
BASELINE_SCRIPT: Final[str] = f"""#!/bin/bash
# Make the tree after dependency installation the workspace's base ({BASELINE_REF}):
# untracked files the install created go to .git/info/exclude; if it changed tracked files, they are
# committed on top of the base commit. HEAD and the tag then name that tree (patching.RESET / DIFF use them).
set -euo pipefail
git status --porcelain=v1 -z --untracked-files=normal | python3 -c '
import sys
records = sys.stdin.buffer.read().decode("utf-8", "surrogateescape").split("\\0")
paths = [r[3:] for r in records if r.startswith("?? ")]
with open(".git/info/exclude", "a", encoding="utf-8", errors="surrogateescape") as out:
    out.writelines("/" + p + "\\n" for p in paths)
'
git add -A
if ! git diff --cached --quiet; then
  git -c commit.gpgsign=false commit -q --no-verify -m mobilebench-baseline
fi
git tag -f {BASELINE_REF} HEAD >/dev/null
"""


def instance_dockerfile(env_tag: str, install_command: str, *, test_user: UserHandover | None = None) -> str:
    """The instance layer's Dockerfile: copy the checkout to ``/testbed``, then ONE build step (one
    container, one layer): the install, the hand-over, and :data:`BASELINE_SCRIPT` (the install's untracked
    files go to ``.git/info/exclude``, tracked files it changed are committed; :data:`BASELINE_REF` names
    the result, so the workspace's diff shows only what patches change).

    ``test_user`` (:class:`~pytest_mobilebench.runtime.recipe.UserHandover`): the checkout comes in owned by
    :data:`TEST_USER` (``COPY --chown``: no walk re-owning, and copying up, every file); the step adds the
    user, gives it what is not its own yet (the install's output; the walk only stats) but the folders of
    ``root_dirs`` (any depth: installed dependencies stay root's, read-only to the tests), records the
    baseline as that user, makes the writable paths of ``root_dirs``, runs ``handover`` as root, sets
    ``env`` and labels the image :data:`LABEL_USER` (issue 7, item 3). None: root (no capabilities).
    """
    install = install_command.strip() or "true"
    chown = f"--chown={TEST_USER} " if test_user is not None else ""
    # the install in a shell of its own (``set -e`` only, as a step of its own had it; its ``exit`` ends it alone)
    script = ["set -euo pipefail", f"/bin/bash -c {shlex.quote('set -e; ' + install)}"]
    if test_user is not None:
        script += _handover_script(test_user)
    else:
        script.append("/usr/local/bin/mobilebench-baseline")
    lines = [
        f"FROM {env_tag}",
        f"COPY {chown}testbed {TESTBED}",
        "COPY mobilebench-baseline.sh /usr/local/bin/mobilebench-baseline",
        f"WORKDIR {TESTBED}",
        f"RUN {json.dumps(['/bin/bash', '-c', chr(10).join(script)])}",
    ]
    if test_user is not None:
        if test_user.env:
            lines.append(
                "ENV " + " ".join(f"{name}={json.dumps(value)}" for name, value in sorted(test_user.env.items()))
            )
        lines.append(f'LABEL {LABEL_USER}="{TEST_USER}"')
    return "\n".join(lines) + "\n"


def _handover_script(test_user: UserHandover) -> list[str]:
    """Bash lines (root, after the install) of the hand-over :func:`instance_dockerfile` describes."""
    uid, _, gid = TEST_USER.partition(":")
    prune = " -o ".join(f"-name {shlex.quote(name)}" for name in sorted(test_user.root_dirs))
    walk = f"find {TESTBED} \\( {prune} \\) -prune -o" if prune else f"find {TESTBED}"
    script = [
        f"useradd --uid {uid} --user-group --create-home --shell /bin/bash {TEST_USER_NAME}",
        f"{walk} \\( ! -user {uid} -o ! -group {gid} \\) -exec chown -h {TEST_USER} {{}} +",
        f"setpriv --reuid={uid} --regid={gid} --init-groups -- env HOME=/home/{TEST_USER_NAME} "
        "/usr/local/bin/mobilebench-baseline",
    ]
    for name, writable in sorted(test_user.root_dirs.items()):
        for rel in writable:
            script.append(
                f"find {TESTBED} -name {shlex.quote(name)} -prune -print0 | while IFS= read -r -d '' d; do "
                f'mkdir -p "$d"/{shlex.quote(rel)} && chown {TEST_USER} "$d"/{shlex.quote(rel)}; done'
            )
    if test_user.handover.strip():
        script.append(test_user.handover.strip())
    return script
