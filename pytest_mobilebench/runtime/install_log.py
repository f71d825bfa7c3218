"""Why a dependency install failed, read from its own log (issue 30, item 3). Pure: text in, a typed finding out.

:func:`classify` reads the log of ``npm`` / ``yarn`` (classic and berry) / ``pnpm`` and names the cause:

========================  ==========================================================================  ==============
cause                     what the log says                                                            unavailable?
========================  ==========================================================================  ==============
``package_missing``       the registry has no such package or version: npm ``E404`` / ``ETARGET``     yes
                          (``No matching version found for x@v``), yarn ``Couldn't find any versions``
                          / ``Not found`` / ``Request failed "404 Not Found"`` (an archive: named
                          ``name@version``) / berry ``YN0082`` ``YN0035``, pnpm ``ERR_PNPM_FETCH_404`` /
                          ``ERR_PNPM_NO_MATCHING_VERSION``
``binary_download``       a lifecycle script of a dependency (npm ``path .../node_modules/<pkg>``,     yes
                          npm 6 ``Failed at the <pkg>@<v> install script``, yarn ``error
                          <dir>/node_modules/<pkg>: Command failed``) failed reaching a host
                          (``ENOTFOUND`` / ``EAI_AGAIN`` / ``ECONNREFUSED``, curl's ``Could not resolve
                          host``, a ``https://host/...`` download, node-pre-gyp's ``Tried to
                          download(undefined): https://host/...``: no answer, so its fallback
                          compile's own failure is not the cause)
``host_unreachable``      a host that is not a configured registry could not be reached (a tarball      yes
                          URL, a git dependency, a scope's own registry: ``fatal: unable to access``,
                          ``Could not resolve host``, ``getaddrinfo ENOTFOUND host``, pnpm
                          ``ERR_PNPM_META_FETCH_FAIL`` after its retries naming such a host)
``registry_transient``    the registry answered 5xx, or a registry host timed out / reset / could not  no (infra)
                          be resolved (pnpm ``ERR_PNPM_META_FETCH_FAIL`` on the registry): this
                          machine's trouble of the moment, retried
``lifecycle_script``      a lifecycle script failed for another reason (the project's own            no
                          ``preinstall`` needing its sources, a compile error)
``lockfile_out_of_date``  a frozen install refused a lockfile that no longer matches package.json    no
                          (yarn ``Your lockfile needs to be updated``, npm ci ``Invalid: lock file's``
                          / ``can only install packages when ... in sync``, berry ``YN0028``, pnpm
                          ``ERR_PNPM_OUTDATED_LOCKFILE``); the inferred install runs unfrozen then
                          (:mod:`pytest_mobilebench.frameworks.react_native.installs`), so only a
                          manifest's own frozen ``install`` ends here
``unknown``               none of the above                                                            no
========================  ==========================================================================  ==============

"Unavailable" means this machine cannot fetch the dependency at all: the instance is ``environment_unavailable``
naming :attr:`InstallFailure.subject` (the package, or the host), never infra to retry. Registry hosts are the
``# registry <url>`` lines the install step prints first (the configured registries of npm, yarn and pnpm in
the checkout, :data:`REGISTRY_PROBE`) plus ``registries``; a host named ``registry.*`` counts as one too.
:attr:`InstallFailure.lines` are the log lines that show the cause (at most :data:`MAX_LINES`), never the
Dockerfile's ``RUN`` line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Final, Literal
from urllib.parse import urlsplit

__all__ = [
    "MAX_LINES",
    "OUT_OF_DATE_MARKERS",
    "REFRESH_PREFIX",
    "REGISTRY_PROBE",
    "UNAVAILABLE",
    "InstallFailure",
    "classify",
    "registries_in",
]

Cause = Literal[
    "package_missing",
    "binary_download",
    "host_unreachable",
    "registry_transient",
    "lifecycle_script",
    "lockfile_out_of_date",
    "unknown",
]
#: causes that make the instance ``environment_unavailable``
UNAVAILABLE: Final[frozenset[str]] = frozenset({"package_missing", "binary_download", "host_unreachable"})
MAX_LINES: Final[int] = 12
#: bash run before the install: prints ``# registry <url>`` for each package manager's configured registry
REGISTRY_PROBE: Final[str] = (
    "for c in 'npm config get registry' 'yarn config get registry' 'yarn config get npmRegistryServer' "
    "'pnpm config get registry'; do r=$($c 2>/dev/null | tail -n 1) || true; "
    'case "$r" in http*) echo "# registry $r";; esac; done; '
)

#: the line an install prints before it runs again unfrozen (``lockfile_out_of_date``): the log is classified from
#: the lines after it, the second attempt's own
REFRESH_PREFIX: Final[str] = "# mobilebench: lockfile_out_of_date:"
_ANSI: Final[re.Pattern[str]] = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_MISSING: Final[tuple[re.Pattern[str], ...]] = (
    re.compile(r"No matching version found for (?P<pkg>\S+?)\.?$"),
    re.compile(r"'(?P<pkg>[^']+)' is not in (this|the npm) registry"),
    re.compile(r"Couldn't find any versions for \"(?P<pkg>[^\"]+)\" that matches \"(?P<ver>[^\"]+)\""),
    re.compile(r"Couldn't find package \"(?P<pkg>[^\"]+)\""),
    re.compile(r"YN0082:.*?(?P<pkg>\S+@npm:\S+?): No candidates found"),
    re.compile(r"YN0035:.*?(?P<pkg>\S+@npm:\S+?): (Package not found|The remote server failed)"),
    re.compile(r"ERR_PNPM_FETCH_404\s+GET (?P<url>\S+?):? Not Found"),
    re.compile(r"404 Not Found - GET (?P<url>\S+)"),
    re.compile(r"An unexpected error occurred: \"(?P<url>https?://\S+?): Not found\""),
    re.compile(r"(?P<url>https?://[^\s\"]+?): Request failed \\?\"404 Not Found"),
)
_HOST_ERROR: Final[re.Pattern[str]] = re.compile(
    r"(getaddrinfo|connect) (?P<code>ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)"
    r"\s+(?P<host>[A-Za-z0-9.:-]+)"
    r"|Could not resolve host:?\s*(?P<host2>[A-Za-z0-9.-]+)"
    r"|unable to access '(?P<url>[^']+)'"
    r"|request to (?P<url2>https?://\S+) failed"
    # node-pre-gyp's prebuilt binary, fetched with no answer at all (a number there is the host's own answer)
    r"|Tried to download\((?!\d)[^)]*\): (?P<url3>https?://\S+)"
)
#: what a frozen install prints when the lockfile does not match package.json (fixed strings, each manager's own):
#: the React-Native install script greps for them to run again unfrozen, :func:`classify` names them
OUT_OF_DATE_MARKERS: Final[tuple[str, ...]] = (
    "Your lockfile needs to be updated, but yarn was run with",  # yarn classic
    "can only install packages when your package.json and package-lock.json",  # npm ci (6 and later)
    "Invalid: lock file",  # npm ci 7+: "Invalid: lock file's x@1 does not satisfy x@^2"
    "from lock file",  # npm ci 7+: "Missing: x@^2 from lock file"
    "YN0028",  # berry: the lockfile would have been modified by this install
    "ERR_PNPM_OUTDATED_LOCKFILE",
)
_OUT_OF_DATE: Final[re.Pattern[str]] = re.compile("|".join(re.escape(m) for m in OUT_OF_DATE_MARKERS))
_IP: Final[re.Pattern[str]] = re.compile(r"^[0-9.]+$|^\[?[0-9a-f]*:[0-9a-f:]+\]?$")
_TRANSIENT: Final[re.Pattern[str]] = re.compile(
    r"\b(5\d\d) (Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time-?out)"
    r"|\b(ETIMEDOUT|ECONNRESET|ESOCKETTIMEDOUT|socket hang up|EPIPE|ERR_SOCKET_TIMEOUT)\b"
    r"|ERR_PNPM_META_FETCH_FAIL|ERR_PNPM_FETCH_5\d\d|YN0001:.*(ESOCKETTIMEDOUT|ECONNRESET)"
)
_DEP_SCRIPT: Final[tuple[re.Pattern[str], ...]] = (
    re.compile(r"(npm (ERR!|error)) path \S*/node_modules/(?P<pkg>(@[^/\s]+/)?[^/\s]+)\s*$"),
    re.compile(r"^error \S*/node_modules/(?P<pkg>(@[^/\s]+/)?[^/\s]+): Command failed"),
    re.compile(r"\.\.\./node_modules/(?P<pkg>(@[^/\s]+/)?[^/\s]+) (pre|post)?install: .*Failed"),
    re.compile(r"YN0009:.*?(?P<pkg>\S+@npm:\S+?) couldn't be built"),
    re.compile(r"npm ERR! Failed at the (?P<pkg>(@[^/\s]+/)?[^@\s]+)@\S+ (pre|post)?install script"),  # npm 6
)
_SCRIPT_FAILED: Final[re.Pattern[str]] = re.compile(
    r"npm (ERR!|error) (command failed|code ELIFECYCLE|Lifecycle script)|ERR_PNPM_\w*LIFECYCLE|Command failed\.|"
    r"YN0009:|couldn't be built successfully"
)


@dataclasses.dataclass(frozen=True)
class InstallFailure:
    """A classified install failure.

    Attributes:
        cause: see the module's table.
        subject: the package (``name@version`` as the tool printed it) or host it names; ``""`` when none.
        lines: the log lines showing the cause (ANSI codes removed, at most :data:`MAX_LINES`).
    """

    cause: Cause
    subject: str
    lines: tuple[str, ...]

    @property
    def unavailable(self) -> bool:
        """True when this machine cannot fetch the dependency (``environment_unavailable``)."""
        return self.cause in UNAVAILABLE

    def describe(self) -> str:
        """One line for a verdict's detail, e.g. ``package_missing: left-pad@99.0.0``."""
        return f"{self.cause}: {self.subject}" if self.subject else self.cause


def _host(url_or_host: str) -> str:
    if "://" in url_or_host:
        return (urlsplit(url_or_host).hostname or "").lower()
    return url_or_host.split(":", 1)[0].lower().rstrip(".")


def registries_in(log: str) -> frozenset[str]:
    """The registry hosts the log's ``# registry <url>`` lines name (:data:`REGISTRY_PROBE`)."""
    return frozenset(_host(m.group(1)) for m in re.finditer(r"^# registry (\S+)", log, flags=re.MULTILINE))


def _is_registry(host: str, registries: frozenset[str]) -> bool:
    return host in registries or host.startswith("registry.")


def _package_of_url(url: str) -> str:
    """The package a registry URL names: ``name`` (its document, ``/@scope%2fname``) or ``name@version`` (its
    archive, ``/name/-/name-1.2.3.tgz``); another URL's path as it is."""
    path = urlsplit(url).path.strip("/").replace("%2f", "/").replace("%2F", "/")
    name, _, archive = path.partition("/-/")
    base = name.rsplit("/", 1)[-1]
    if archive.startswith(f"{base}-") and archive.endswith(".tgz"):
        return f"{name}@{archive[len(base) + 1 : -len('.tgz')]}"
    return name


def _around(lines: list[str], index: int) -> tuple[str, ...]:
    """The lines around ``lines[index]`` (from three before), never the harness's own ``# registry`` lines."""
    start = max(0, index - 3)
    return tuple(line for line in lines[start : start + MAX_LINES] if line.strip() and not line.startswith("# "))


def _first(lines: list[str], pattern: re.Pattern[str]) -> tuple[int, re.Match[str]] | None:
    for index, line in enumerate(lines):
        match = pattern.search(line)
        if match:
            return index, match
    return None


def _missing(lines: list[str]) -> InstallFailure | None:
    for index, line in enumerate(lines):
        for pattern in _MISSING:
            match = pattern.search(line)
            if match is None:
                continue
            groups = match.groupdict()
            if groups.get("url"):
                subject = _package_of_url(groups["url"])
            else:
                subject = groups["pkg"] + (f"@{groups['ver']}" if groups.get("ver") else "")
            return InstallFailure("package_missing", subject, _around(lines, index))
    return None


def _unreachable(lines: list[str], registries: frozenset[str]) -> tuple[int, str] | None:
    """``(line index, host)`` of the first host outside the registries the log could not reach."""
    for index, line in enumerate(lines):
        matches = list(_HOST_ERROR.finditer(line))
        # a URL the tool names wins over the address it then tried (``request to URL failed, reason: connect
        # ETIMEDOUT 10.0.0.1:443``); a bare address is nobody's name (it may be the registry's)
        urls = [u for m in matches if (u := m.group("url") or m.group("url2") or m.group("url3"))]
        names = urls or [m.group("host") or m.group("host2") or "" for m in matches]
        for found in names:
            host = _host(found)
            if host and not _IP.match(host) and not _is_registry(host, registries):
                return index, host
    return None


def _dependency_script(lines: list[str]) -> str | None:
    for line in lines:
        for pattern in _DEP_SCRIPT:
            match = pattern.search(line)
            if match:
                return match.group("pkg")
    return None


def classify(log: str, registries: Iterable[str] = ()) -> InstallFailure:
    """The cause of the failed install whose output is ``log`` (see the module's table; the first matching
    row, in the table's order, wins). ``registries``: extra registry hosts besides the log's own."""
    lines = [_ANSI.sub("", line).rstrip("\r") for line in log.splitlines()]
    refreshed = [i for i, line in enumerate(lines) if line.startswith(REFRESH_PREFIX)]
    if refreshed:  # the frozen attempt refused the lockfile; the unfrozen one's failure is the cause
        lines = lines[refreshed[-1] + 1 :]
    known = registries_in(log) | frozenset(_host(r) for r in registries)
    missing = _missing(lines)
    if missing is not None:
        return missing
    unreachable = _unreachable(lines, known)
    if unreachable is not None:
        index, host = unreachable
        package = _dependency_script(lines)
        if package is not None and _first(lines, _SCRIPT_FAILED) is not None:
            return InstallFailure("binary_download", f"{host} (a download by {package})", _around(lines, index))
        return InstallFailure("host_unreachable", host, _around(lines, index))
    transient = _first(lines, _TRANSIENT) or _first(lines, _HOST_ERROR)
    if transient is not None:
        return InstallFailure("registry_transient", "", _around(lines, transient[0]))
    script = _first(lines, _SCRIPT_FAILED)
    if script is not None:
        return InstallFailure("lifecycle_script", _dependency_script(lines) or "", _around(lines, script[0]))
    stale = _first(lines, _OUT_OF_DATE)
    if stale is not None:
        return InstallFailure("lockfile_out_of_date", "", _around(lines, stale[0]))
    tail = tuple(line for line in lines if line.strip() and not line.startswith("# "))[-MAX_LINES:]
    return InstallFailure("unknown", "", tail)
