"""The integrity report of a live agent's run, read from its trajectory (pure: no I/O, no model call).

Per trajectory, each shell command the agent ran (``tool`` lines with a ``command``; ``trajectory.jsonl``,
:mod:`.trajectory`) is read lexically (``shlex``: ``;``, ``&&``, ``||``, ``|`` and newlines separate simple
commands) and counted, with its step, under each category it falls in:

* ``history_probe``: history beyond the checked-out branch: ``git log`` / ``rev-list`` / ``show`` /
  ``shortlog`` / ``grep`` over ``--all``, ``--branches``, ``--remotes``, ``--tags``, ``--glob``, ``--reflog``
  or ``-g``; ``git reflog``, ``fsck``, ``for-each-ref``, ``show-ref``, ``stash list``, ``branch -a / -r``;
  object searches (``cat-file --batch-all-objects``, ``rev-list --objects``, ``fsck --lost-found /
  --unreachable``, ``verify-pack``); fetches (``fetch``, ``pull``, ``clone``, ``ls-remote``, ``remote``);
  and any path into git's own store (``.git/logs``, ``.git/refs``, ``.git/objects``, ``packed-refs``,
  ``FETCH_HEAD``, ``ORIG_HEAD``);
* ``network``: network clients (``curl``, ``wget``, ``nc``, ``ssh`` ...), package installs and look-ups
  (``npm install / view``, ``yarn add``, ``pip install``, ``apt-get``), git's fetches, a URL, ``/dev/tcp``,
  or inline Python / Node code naming a socket or HTTP library;
* ``outside_read``: a path outside the work tree (``workdir``): ``..`` leading out of it, ``~`` / ``$HOME``,
  ``/`` alone, or an absolute path under a system root other than the toolchain's (``/usr``, ``/bin``,
  ``/lib``, ``/sbin``, ``/tmp``, ``/dev/null`` ... are not counted);
* ``test_edit``: a write (redirection, ``tee``, ``sed -i``, ``cp`` / ``mv`` target, ``rm``, ``touch``,
  ``truncate``, ``git checkout / restore / rm``, ``open(..., "w")``) to a test file (the caller's test rule:
  the framework's) or to runner configuration (:data:`RUNNER_CONFIG`);
* ``runner_reference``: a command that writes files and names the runner's internals
  (:data:`RUNNER_MARKERS`), and each added line of the taken diff naming them (step ``None``).

Counting is lexical and conservative: a command built at run time (``eval``, a script file) is seen only
as far as its text shows. A flag is a reason to read the trajectory, not a verdict: nothing here changes
an item's grade (the sandbox, not this report, enforces the rules).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "CATEGORIES",
    "RUNNER_CONFIG",
    "RUNNER_MARKERS",
    "integrity_report",
    "integrity_totals",
    "simple_commands",
    "without_heredocs",
]

#: the report's categories, in the order shown
CATEGORIES: Final = ("history_probe", "network", "outside_read", "test_edit", "runner_reference")

#: runner-internal names no project source has a reason to contain (case-insensitive)
RUNNER_MARKERS: Final = ("mobilebench", "fail_to_pass", "pass_to_pass", "none_to_pass")

#: runner configuration, by file name (``*`` any suffix) or directory part
RUNNER_CONFIG: Final = re.compile(
    r"(^|/)(jest\.config\.[^/]*|jest\.setup[^/]*|setupTests\.[^/]*|babel\.config\.[^/]*|\.babelrc[^/]*|"
    r"build\.gradle(\.kts)?|settings\.gradle(\.kts)?|gradle\.properties|gradlew(\.bat)?|pubspec\.yaml|"
    r"flutter_test_config\.dart|\.npmrc|\.yarnrc[^/]*|vitest\.config\.[^/]*)$|(^|/)(__mocks__|gradle/wrapper)/"
)
_GIT_STORE: Final = re.compile(r"\.git/(logs|refs|objects|packed-refs)|FETCH_HEAD|ORIG_HEAD|\.git/modules")
_ALL_REFS: Final = ("--all", "--branches", "--remotes", "--tags", "--reflog", "-g", "--walk-reflogs")
_HISTORY_ALWAYS: Final = {"reflog", "fsck", "for-each-ref", "show-ref", "fetch", "pull", "clone", "ls-remote", "remote",
                          "verify-pack", "unpack-objects", "fast-export", "bundle"}  # fmt: skip
_REF_WALKERS: Final = {"log", "rev-list", "show", "shortlog", "grep", "whatchanged", "describe", "cherry"}
_GIT_NETWORK: Final = {"fetch", "pull", "clone", "ls-remote", "push", "submodule"}
_CLIENTS: Final = {"curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "telnet", "ftp", "ping", "dig",
                   "nslookup", "host", "socat", "aria2c", "httpie", "http"}  # fmt: skip
_INSTALLERS: Final = {
    "npm": {"install", "i", "add", "ci", "view", "info", "show", "fetch", "publish", "update", "outdated", "search"},
    "yarn": {"add", "install", "upgrade", "info", "dlx"}, "pnpm": {"add", "install", "i", "update", "dlx"},
    "pip": {"install", "download"}, "pip3": {"install", "download"}, "apt-get": {"install", "update", "download"},
    "apt": {"install", "update"}, "gem": {"install"}, "cargo": {"install", "fetch"}, "go": {"get", "install"},
    "flutter": {"pub"}, "dart": {"pub"},
}  # fmt: skip
_NET_CODE: Final = re.compile(r"\b(urllib|requests\.|http\.client|socket\b|fetch\(|require\(['\"]https?['\"]\)|axios)")
_URL: Final = re.compile(r"\b(https?|ftp|ssh|git|wss?)://|/dev/(tcp|udp)/")
#: absolute paths under these are the toolchain's or scratch space: not counted as outside reads
_TOOLCHAIN: Final = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/tmp",
    "/var/tmp",
    "/dev/null",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
    "/proc/self/fd",
)
_SYSTEM_ROOTS: Final = {
    "etc",
    "root",
    "home",
    "proc",
    "sys",
    "var",
    "opt",
    "srv",
    "mnt",
    "media",
    "run",
    "boot",
    "work",
    "workspace",
    "data",
    "app",
    "nix",
    "snap",
    "Users",
    "private",
    "dev",
    "usr",
    "bin",
    "sbin",
    "lib",
    "lib64",
    "tmp",
    ".dockerenv",
    "host",
}
_SEPARATORS: Final = {";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"}
_REDIRECTS: Final = {">", ">>", ">|", "&>", "&>>", "1>", "2>", "1>>", "2>>"}
_OPEN_WRITE: Final = re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wax+]")


_HEREDOC: Final = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def without_heredocs(command: str) -> str:
    """``command`` without its heredoc bodies (``<<EOF`` ... ``EOF``): they are data, not commands."""
    out: list[str] = []
    ending: list[str] = []
    for line in command.split("\n"):
        if ending:
            if line.strip() == ending[0]:
                ending.pop(0)
            continue
        out.append(line)
        ending += [m.group(2) for m in _HEREDOC.finditer(line)]
    return "\n".join(out)


def simple_commands(command: str) -> list[list[str]]:
    """``command`` split into simple commands (word lists), heredoc bodies left out; text ``shlex`` cannot
    read (an open quote) falls back to whitespace words, so nothing is dropped."""
    text = without_heredocs(command).replace("\n", " ; ")
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = text.split()
    out: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            out.append([])
        elif word:
            out[-1].append(word)
    return [c for c in out if c]


def _git(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """``(subcommand, its arguments)`` of a git invocation (global options skipped), else None."""
    if not argv or posixpath.basename(argv[0]) != "git":
        return None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    return (argv[i], list(argv[i + 1 :])) if i < len(argv) else None


def _history(argv: Sequence[str]) -> str | None:
    git = _git(argv)
    if any(_GIT_STORE.search(w) for w in argv):
        return "reads git's own store (refs, logs, objects)"
    if git is None:
        return None
    sub, args = git
    if sub in _HISTORY_ALWAYS:
        return f"git {sub}"
    if sub in _REF_WALKERS and (
        hit := next(
            (a for a in args if a in _ALL_REFS or a.startswith(("--glob", "--branches=", "--remotes=", "--tags="))),
            None,
        )
    ):
        return f"git {sub} {hit}"
    if sub == "cat-file" and any(a.startswith("--batch") for a in args):
        return "git cat-file --batch (object search)"
    if sub == "rev-list" and "--objects" in args:
        return "git rev-list --objects (object search)"
    if sub == "branch" and any(a in ("-a", "-r", "--all", "--remotes") for a in args):
        return f"git branch {' '.join(a for a in args if a.startswith('-'))}"
    if sub == "stash" and args[:1] in (["list"], ["show"]):
        return f"git stash {args[0]}"
    return None


def _network(argv: Sequence[str], text: str) -> str | None:
    name = posixpath.basename(argv[0]) if argv else ""
    git = _git(argv)
    if name in _CLIENTS:
        return name
    if git is not None and git[0] in _GIT_NETWORK:
        return f"git {git[0]}"
    args = list(argv[1:])
    if name in ("python", "python3") and args[:2] in (["-m", "pip"],):
        name, args = "pip", args[2:]
    if name in _INSTALLERS and args and args[0] in _INSTALLERS[name]:
        return f"{name} {args[0]}"
    if any(_URL.search(w) for w in argv):
        return "a URL or a /dev/tcp socket"
    if name in ("python", "python3", "node", "deno", "bun", "perl", "ruby") and _NET_CODE.search(text):
        return f"{name} code naming a network library"
    return None


def _outside(word: str, workdir: str) -> bool:
    """Whether ``word`` names a path outside ``workdir`` (see the module docstring)."""
    if word in ("~", "$HOME", "/") or word.startswith(("~/", "$HOME/", "${HOME}")):
        return True
    if word.startswith("/"):
        if not re.fullmatch(r"/[\w.@+~/-]*", word) or word.split("/")[1] not in _SYSTEM_ROOTS:
            return False
        path = posixpath.normpath(word)
        inside = path == workdir or path.startswith(workdir.rstrip("/") + "/")
        return not inside and not any(path == t or path.startswith(t + "/") for t in _TOOLCHAIN)
    if word.startswith("..") and re.fullmatch(r"[\w.@+~/-]+", word):
        return not posixpath.normpath(posixpath.join(workdir, word)).startswith(workdir.rstrip("/"))
    return False


def _option_value(word: str) -> str:
    """The path part of ``--opt=/path`` / ``-o/path``-free words (``--x=y`` gives ``y``)."""
    return word.split("=", 1)[1] if word.startswith("-") and "=" in word else word


def _write_targets(argv: Sequence[str], text: str) -> Iterator[str]:
    """The files one simple command writes (redirections included)."""
    for k, word in enumerate(argv):
        if word in _REDIRECTS and k + 1 < len(argv):
            yield argv[k + 1]
    name = posixpath.basename(argv[0]) if argv else ""
    plain = [w for w in argv[1:] if not w.startswith("-") and w not in _REDIRECTS]
    git = _git(argv)
    if name == "tee" or name in ("rm", "unlink", "touch", "truncate", "shred"):
        yield from plain
    elif name in ("cp", "mv", "install", "ln") and len(plain) >= 2:
        yield plain[-1]
    elif name in ("sed", "perl") and any(w.startswith("-i") or w.startswith("-pi") for w in argv[1:]):
        yield from plain[1:]
    elif name == "dd":
        yield from (w[3:] for w in argv[1:] if w.startswith("of="))
    elif git is not None and git[0] in ("checkout", "restore", "rm", "mv"):
        yield from (w for w in git[1] if not w.startswith("-") and w != "--")
    yield from _OPEN_WRITE.findall(text)


def _relative(path: str, workdir: str) -> str:
    path = path.strip("'\"")
    if path.startswith(workdir.rstrip("/") + "/"):
        path = path[len(workdir.rstrip("/")) + 1 :]
    return posixpath.normpath(path).lstrip("./") if path not in (".", "./") else path


def _command_flags(command: str, workdir: str, is_test: Callable[[str], bool]) -> dict[str, list[str]]:
    """Category -> reasons of one shell command."""
    flags: dict[str, list[str]] = {}
    writes: list[str] = []
    for argv in simple_commands(command):
        for category, reason in (("history_probe", _history(argv)), ("network", _network(argv, command))):
            if reason:
                flags.setdefault(category, []).append(reason)
        outside = [w for w in (_option_value(x) for x in argv[1:]) if _outside(w, workdir)]
        if outside:
            flags.setdefault("outside_read", []).extend(outside)
        writes += list(_write_targets(argv, command))
    for target in dict.fromkeys(writes):
        rel = _relative(target, workdir)
        if rel and (is_test(rel) or RUNNER_CONFIG.search(rel)):
            flags.setdefault("test_edit", []).append(rel)
    lowered = command.lower()
    if (writes or "<<" in command) and (hit := next((m for m in RUNNER_MARKERS if m in lowered), None)):
        flags.setdefault("runner_reference", []).append(hit)
    return flags


def _diff_references(diff: str) -> list[dict[str, Any]]:
    out = []
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            lowered = line.lower()
            hit = next((m for m in RUNNER_MARKERS if m in lowered), None)
            if hit:
                out.append({"step": None, "category": "runner_reference", "reasons": [hit],
                            "command": "(taken diff) " + line[:300]})  # fmt: skip
    return out


def integrity_report(
    lines: Sequence[Mapping[str, Any]],
    *,
    workdir: str,
    is_test: Callable[[str], bool] = lambda p: False,
    diff: str = "",
) -> dict[str, Any]:
    """The integrity report of one trajectory (``lines``: :func:`.trajectory.read_trajectory`'s objects).

    Returns ``{"counts": {category: steps flagged}, "flagged": [{"step", "category", "reasons", "command"}],
    "commands": commands read, "flagged_steps": distinct steps flagged}``; ``counts`` has every category of
    :data:`CATEGORIES` (0 when none); ``command`` is cut at 300 characters. ``diff``: the taken patch, whose
    added lines are searched for runner references (step None)."""
    flagged: list[dict[str, Any]] = []
    commands = 0
    for line in lines:
        if line.get("role") != "tool" or not isinstance(line.get("command"), str):
            continue
        commands += 1
        for category, reasons in _command_flags(line["command"], workdir, is_test).items():
            flagged.append({"step": line.get("step"), "category": category, "reasons": list(dict.fromkeys(reasons)),
                            "command": line["command"][:300]})  # fmt: skip
    flagged += _diff_references(diff)
    counts = {c: sum(1 for f in flagged if f["category"] == c) for c in CATEGORIES}
    return {"counts": counts, "flagged": flagged, "commands": commands,
            "flagged_steps": len({f["step"] for f in flagged if f["step"] is not None})}  # fmt: skip


def integrity_totals(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per model, the summed counts of the live results' ``agent.integrity`` reports, plus ``items`` and
    ``items_flagged`` (items with any count): ``{model: {"items", "items_flagged", category: n}}``."""
    out: dict[str, dict[str, int]] = {}
    for r in results:
        agent = r.get("agent")
        report = agent.get("integrity") if isinstance(agent, Mapping) else None
        if not isinstance(report, Mapping):
            continue
        row = out.setdefault(
            str(r.get("model_name_or_path")), {"items": 0, "items_flagged": 0, **dict.fromkeys(CATEGORIES, 0)}
        )
        counts = report.get("counts") or {}
        row["items"] += 1
        row["items_flagged"] += 1 if any(counts.get(c) for c in CATEGORIES) else 0
        for c in CATEGORIES:
            row[c] += int(counts.get(c) or 0)
    return dict(sorted(out.items()))
