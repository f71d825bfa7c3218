"""The jest run the candidate cannot rewrite: canaries, harness runner, keyed result channel (issue 17).

:func:`prepare` turns a hardened jest plan (``node_modules/.bin/jest ... --runTestsByPath f1 f2``) into a
:class:`JestHarness`: a per-run random nonce and key, and the harness's modules
(:mod:`~pytest_mobilebench.frameworks.react_native.harness_js`) in a folder outside the repository. The
known answers are declared by the harness's runner in every test file, once the file has loaded (so
they share its module instances: the code under test is never imported a second time, and a candidate's
slow import costs what it costs alone, issue 35): ``mobilebench canary <nonce>`` with one test that
must fail on an assertion and one that must pass (focused when the file focuses tests of its own).
``node_modules/.bin/jest`` becomes ``node <folder>/launch.js`` (the harness's launcher: descriptors
checked, jest's own program started in its process, never the project's ``.bin/jest``, which may be a
proxy running jest in a child process; its status is read by :func:`launch_problems`), and the command
gains ``--runInBand`` (one process: one runner for every file), ``--testRunner`` and ``--reporters``.

The runner wrapped (jest-circus or jest-jasmine2) is :func:`jest_runner`'s answer, the one place that reads
it: the project's ``testRunner`` (configuration, else its preset file), else the installed jest's default
(27 and later: circus; 26 and older: jasmine2); None (unharnessed) for another runner or one not installed.
The installed packages are read at the root, else where node finds them from the project (:func:`probe_command`,
:func:`resolved_probes`: pnpm's links followed from each package's real folder, as the launcher and the
runner modules find them at run time, :mod:`.harness_js.resolve`).

After the run, :func:`read_channel` verifies the channel (each line ``<hmac-sha256 hex> <json>``,
``seq`` 0, 1, 2 ...) and :func:`findings` compares it with the parsed report and the console; every
finding is a ``runner_compromised`` policy violation (never resolved, never infrastructure):

* a line not signed with the run's key, out of sequence, or no ``start`` / ``final`` record;
* a test body replaced after registration, a test that ran unregistered, globals not frozen or replaced;
* canary outcomes other than exactly (fail, pass), in the channel or in the report, in a test file that
  loaded (a file that did not load ran nothing), or a canary missing;
* a test the report says passed that the runner's own records do not show passed (by id);
* a console ``Tests:`` summary (the last one) that differs from the runner's own final summary.

Pure functions but for :func:`prepare`'s randomness (``secrets``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import posixpath
import re
import secrets
import shlex
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final, final

from pytest_mobilebench.frameworks.react_native import JEST_CONFIG_NAMES, jest_option
from pytest_mobilebench.frameworks.react_native.harness_js import (
    CHANNEL_JS,
    PROBE_JS,
    REPORTER_JS,
    RESOLVE_JS,
    RUNNERS,
    launch_js,
)
from pytest_mobilebench.frameworks.react_native.harness_js.launch import ENVIRONMENT_JS
from pytest_mobilebench.frameworks.react_native.harness_js.tripwires import TRIPWIRES_JS
from pytest_mobilebench.frameworks.rules import json_of
from pytest_mobilebench.parsers import ParseResult
from pytest_mobilebench.parsers.jest import jest_console_counts, jest_test_id
from pytest_mobilebench.states import TestState

__all__ = [
    "assertion_counts",
    "hollow_passes",
    "ChannelReport",
    "JestHarness",
    "RUNNER_PROBES",
    "canary_ids",
    "command_paths",
    "findings",
    "jest_environment",
    "jest_runner",
    "launch_problems",
    "prepare",
    "preset_probes",
    "probe_command",
    "resolved_probes",
    "read_channel",
    "touch_findings",
    "without_canaries",
    "with_oracle",
    "without_ids",
]

_JEST: Final = re.compile(r"(^|\s)(node_modules/\.bin/jest)(?=\s)")
_MAX_LINE: Final = 4 << 20


#: installed packages whose ``package.json`` says which runner jest uses and whether it can be wrapped
_INSTALLED: Final[dict[str, str]] = {
    name: f"node_modules/{name}/package.json" for name in ("jest-config", "jest", "jest-circus", "jest-jasmine2")
}
#: the files :func:`jest_runner` reads first (then :func:`preset_probes`); the installed tree is the image's
RUNNER_PROBES: Final[tuple[str, ...]] = ("package.json", *JEST_CONFIG_NAMES, *_INSTALLED.values())
_PRESET_FILES: Final[tuple[str, ...]] = ("jest-preset.json", "jest-preset.js", "jest-preset.cjs")
#: a ``testRunner`` value -> the runner it names (``jasmine2``, ``jest-circus/runner``, ``<rootDir>/node_modules/...``)
_RUNNER_NAMES: Final = re.compile(r"(?:^|[/\\])(?:jest-)?(circus|jasmine2)(?:[/\\.]|$)")


def _presets(files: Mapping[str, bytes]) -> list[str]:
    """The project's jest ``preset`` when it names a package (``[]`` or one name)."""
    return [p for p in jest_option(files, "preset") if not p.startswith((".", "/", "<rootDir>", "-"))][-1:]


def preset_probes(files: Mapping[str, bytes]) -> list[str]:
    """The installed preset files of the project's jest ``preset`` (``node_modules/<preset>/jest-preset.*``)."""
    return [f"node_modules/{p}/{name}" for p in _presets(files) for name in _PRESET_FILES]


def probe_command(files: Mapping[str, bytes]) -> str:
    """The command (run in the repository's root, offline) printing where node finds the installed files
    :func:`jest_runner` reads when they are not at the root (pnpm links them from ``node_modules/.pnpm``):
    ``node -e`` of :data:`.harness_js.RESOLVE_JS` and :data:`.harness_js.PROBE_JS`, with the project's preset
    (from ``files``, the probes read so far). Its output's last line is read by :func:`resolved_probes`."""
    return shlex.join(["node", "-e", RESOLVE_JS + PROBE_JS, *_presets(files)])


def resolved_probes(output: str, files: Mapping[str, bytes], *, root: str = "/testbed") -> dict[str, str]:
    """``{probe key: absolute path}`` from :func:`probe_command`'s output (its last JSON line; untrusted).

    Kept: keys :func:`jest_runner` reads (``node_modules/<jest package>/package.json``, the preset files of
    :func:`preset_probes` of ``files``) whose path is absolute, normalised, under ``root`` and ends with the
    key's file name; anything else is left out. The caller reads the paths (regular files only) and keys
    their bytes by the probe key, as if the packages were installed at the root.
    """
    wanted = {*_INSTALLED.values(), *preset_probes(files)}
    lines = [line for line in output.splitlines() if line.startswith("{")]
    try:
        found = json.loads(lines[-1]) if lines else {}
    except ValueError:
        return {}
    prefix = root.rstrip("/") + "/"
    return {
        key: path
        for key, path in (found.items() if isinstance(found, dict) else ())
        if key in wanted
        and isinstance(path, str)
        and path.startswith(prefix)
        and posixpath.normpath(path) == path
        and posixpath.basename(path) == posixpath.basename(key)
    }


def _major(files: Mapping[str, bytes]) -> int | None:
    for name in ("jest-config", "jest"):  # jest-config holds the default testRunner
        package = json_of(files.get(_INSTALLED[name]))
        version = package.get("version") if isinstance(package, dict) else None
        if isinstance(version, str) and re.match(r"\d+\.", version):
            return int(version.split(".", 1)[0])
    return None


def jest_runner(files: Mapping[str, bytes]) -> str | None:
    """The runner jest uses for the project, when the harness can wrap it: ``"circus"`` or ``"jasmine2"``.

    ``files`` holds :data:`RUNNER_PROBES` and :func:`preset_probes` (absent ones left out). The project's
    ``testRunner`` (its configuration, else its preset file: one level, as written) decides; without one,
    the installed jest's default (``jest-config`` major 27 and later: circus; 26 and older: jasmine2; no
    version readable: whichever of the two is installed, circus first). None for another runner, or when
    the chosen runner's package is not installed at the repository root (the harness resolves it there).
    """
    named = jest_option(files, "testRunner")
    for preset in (p for p in preset_probes(files) if p in files):
        as_config = "jest.config.json" if preset.endswith(".json") else "jest.config.js"
        named += jest_option({as_config: files[preset]}, "testRunner")
    if named:
        found = _RUNNER_NAMES.search(named[0])
        kind = found.group(1) if found else None
    else:
        major = _major(files)
        installed = [k for k in ("circus", "jasmine2") if _INSTALLED[f"jest-{k}"] in files]
        kind = ("circus" if major >= 27 else "jasmine2") if major is not None else (installed or [None])[0]
    return kind if kind is not None and _INSTALLED[f"jest-{kind}"] in files else None


def jest_environment(files: Mapping[str, bytes]) -> str | None:
    """The test environment the project's configuration names as a package (``node``, ``jsdom``,
    ``jest-environment-jsdom``, ``@scope/env`` ...), which the harness resolves itself from the installed
    packages (issue 31, item 2); None when the configuration names none (jest resolves its default from its own
    install, or the preset's value: see the README's threat model), names a path (``<rootDir>/...``, ``./...``: a
    file the configuration names, restored to base by the policy), or names several (``projects``). ``files`` as
    for :func:`jest_runner` (its configuration files; the preset files are not read)."""
    named = set(jest_option(files, "testEnvironment"))
    if len(named) != 1:
        return None
    value = named.pop().strip()
    return None if not value or value.startswith((".", "/", "<rootDir>")) else value


@final
@dataclasses.dataclass(frozen=True)
class JestHarness:
    """One harnessed jest run.

    Attributes:
        nonce: 16 hex digits, random per run; in the canaries' titles.
        key: the channel key (32 random bytes), given to the runner on fd 4.
        folder: absolute folder of the harness modules (root-owned, outside the repository).
        files: absolute path -> bytes to write root-owned before the run (the harness's modules).
        command: the plan's command through the harness's launcher, with the harness's options.
        runner: the jest runner the harness wraps (``circus`` / ``jasmine2``, :func:`jest_runner`).
        oracle: whether the runner records every matcher call for the oracle (``docs/oracle.md``).
    """

    nonce: str
    key: bytes
    folder: str
    files: Mapping[str, bytes]
    command: str
    runner: str = "circus"
    oracle: bool = True

    def to_dict(self) -> dict[str, Any]:
        """What re-grading needs: nonce, key (hex), folder (and the runner wrapped, whether matchers were recorded)."""
        return {
            "nonce": self.nonce,
            "key": self.key.hex(),
            "folder": self.folder,
            "runner": self.runner,
            "oracle": self.oracle,
        }


def _canary_titles(nonce: str) -> tuple[tuple[str, str], tuple[str, str]]:
    suite = f"mobilebench canary {nonce}"
    return (suite, f"must fail {nonce}"), (suite, f"must pass {nonce}")


def canary_ids(nonce: str, path: str) -> tuple[str, str]:
    """``(must-fail id, must-pass id)`` of the canaries in the test file at repository path ``path``, as the
    jest parser names them."""
    return tuple(jest_test_id(path, list(t)) for t in _canary_titles(nonce))  # type: ignore[return-value]


def _runner_text(runner: str, nonce: str, oracle: bool = True) -> str:
    """The runner module of ``runner`` with this run's canaries (``{suite, fail, pass, value}``; their matcher,
    values and error shape are drawn in the runner from the channel key's seed) and the recorder on or off."""
    (suite, fail), (_, ok) = _canary_titles(nonce)
    canary = {"suite": suite, "fail": fail, "pass": ok, "value": int(nonce[:8], 16)}
    text = RUNNERS[runner].replace("__CANARY__", json.dumps(canary))
    return text.replace("__ORACLE__", "true" if oracle else "false")


def command_paths(command: str) -> list[str] | None:
    """The paths after ``--runTestsByPath`` when they end the command, else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "--runTestsByPath" not in words:
        return None
    rest = words[words.index("--runTestsByPath") + 1 :]
    paths = [w for w in rest if not w.startswith("-")]
    return paths if paths and len(paths) == len(rest) else None


def prepare(
    command: str, *, runner: str = "circus", base: str = "/var/tmp", environment: str | None = None
) -> JestHarness | None:
    """The harnessed form of a jest command, or None when the command does not call the installed jest
    directly with ``--runTestsByPath`` as its last option (a custom ``test_command``: no harness).

    Args:
        command: the hardened plan's command (:func:`pytest_mobilebench.trust.harden_plan`).
        runner: the jest runner to wrap (:func:`jest_runner`): a key of :data:`.harness_js.RUNNERS`.
        base: where the harness folder goes (outside the repository: the harness writes nothing there).
        environment: the test environment the project names as a package (:func:`jest_environment`), which
            the launcher resolves from the installed packages; None leaves it to jest.
    """
    if command_paths(command) is None or not _JEST.search(command):
        return None
    nonce = secrets.token_hex(8)
    folder = f"{base}/mb-harness-{secrets.token_hex(8)}"
    launcher = (
        f"node {folder}/launch.js --runInBand --testRunner={folder}/runner.js --reporters=default "
        f"--reporters={folder}/reporter.js"
    )
    harnessed = _JEST.sub(lambda m: f"{m.group(1)}{launcher}", command, count=1)
    files = {
        f"{folder}/launch.js": launch_js(runner, environment).encode(),
        f"{folder}/environment.js": ENVIRONMENT_JS.encode(),
        f"{folder}/package.json": b'{"type": "commonjs"}\n',
        f"{folder}/tripwires.js": TRIPWIRES_JS.encode(),
        f"{folder}/channel.js": CHANNEL_JS.encode(),
        f"{folder}/resolve.js": RESOLVE_JS.encode(),
        f"{folder}/runner.js": _runner_text(runner, nonce).encode(),
        f"{folder}/reporter.js": REPORTER_JS.encode(),
    }
    return JestHarness(
        nonce=nonce, key=secrets.token_bytes(32), folder=folder, files=files, command=harnessed, runner=runner
    )


def with_oracle(harness: JestHarness, *, on: bool) -> JestHarness:
    """``harness`` with its runner recording every matcher call (``on``) or not (``--mb-oracle=off``,
    ``docs/oracle.md``); everything else (nonce, key, folder, command) as it was."""
    runner_js = f"{harness.folder}/runner.js"
    files = {**harness.files, runner_js: _runner_text(harness.runner, harness.nonce, on).encode()}
    return dataclasses.replace(harness, files=files, oracle=on)


def launch_problems(status: bytes | None) -> list[str]:
    """Why the harness's launcher did not start jest with its channel, from its status (fd 5); ``[]`` when it did.

    ``status`` is the launcher's one JSON line (:func:`.harness_js.launch_js`), or None / empty when it wrote
    none (it never ran, or descriptor 5 was not the harness's). The launcher writes it and closes the
    descriptor before any code of the project runs, so the candidate can neither write nor erase it: a
    problem here is the harness's (``runner_harness_failed``), never the candidate's.
    """
    if not status:
        return ["the harness's launcher wrote no status (it did not start, or its descriptors were not the harness's)"]
    try:
        found = json.loads(status.split(b"\n", 1)[0])
    except ValueError:
        return ["the harness's launcher status is not JSON"]
    if not isinstance(found, dict):
        return ["the harness's launcher status is not a JSON object"]
    if found.get("ok") is True:
        return []
    return [str(p) for p in found.get("problems") or []] or ["the harness's launcher refused to start jest"]


@final
@dataclasses.dataclass(frozen=True)
class ChannelReport:
    """The verified records of one channel.

    Attributes:
        records: the decoded records whose MAC and sequence verified, in order.
        problems: why other lines were refused (one sentence each).
    """

    records: tuple[Mapping[str, Any], ...]
    problems: tuple[str, ...]

    def of_type(self, kind: str) -> list[Mapping[str, Any]]:
        """The records whose ``type`` is ``kind``."""
        return [r for r in self.records if r.get("type") == kind]


def read_channel(data: bytes, key: bytes) -> ChannelReport:
    """Verify each line ``<hex hmac-sha256(key, json)> <json>`` and its ``seq`` (0, 1, 2 ... in order)."""
    records: list[Mapping[str, Any]] = []
    problems: list[str] = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line:
            continue
        mac, _, body = line.partition(b" ")
        expected = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
        if len(line) > _MAX_LINE or not hmac.compare_digest(mac, expected):
            problems.append(f"channel line {number} is not signed with the run's key")
            continue
        try:
            record = json.loads(body)
        except ValueError:
            problems.append(f"channel line {number} is not JSON")
            continue
        if not isinstance(record, dict) or record.get("seq") != len(records):
            problems.append(f"channel line {number} is out of sequence")
            continue
        records.append(record)
    return ChannelReport(records=tuple(records), problems=tuple(problems))


def _rel(path: str, root: str) -> str:
    return path[len(root.rstrip("/")) + 1 :] if path.startswith(root.rstrip("/") + "/") else path


def touch_findings(record: Mapping[str, Any], changed: Collection[str] | None) -> list[str]:
    """The tripwires' touches of one ``file`` record that count (``tripwires.js``: ``{"what", "file", "line"}``,
    ``file`` relative to the repository root): those from a file in ``changed`` (the paths the candidate's
    patch changed or added), or every one when ``changed`` is None. A file the candidate did not change runs
    as at base: its touches are the repository's own, never the candidate's."""
    found: list[str] = []
    for touch in record.get("touches") or []:
        if not isinstance(touch, Mapping):
            continue
        file = str(touch.get("file"))
        if changed is None or file in changed or file.startswith("(unknown"):
            found.append(f"production code {touch.get('what')} at {file}:{touch.get('line')}")
    return found


def _runner_states(
    report: ChannelReport, root: str, changed: Collection[str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """``({id: status}, problems)`` from the runner's ``file`` records (touches: :func:`touch_findings`)."""
    states: dict[str, str] = {}
    problems: list[str] = []
    for record in report.of_type("file"):
        path = _rel(str(record.get("path", "")), root)
        if not record.get("frozen") or not record.get("intact"):
            problems.append(f"{path}: the runner's globals were not frozen or were replaced")
        problems += [f"{path}: {p}" for p in record.get("problems") or []]
        problems += [f"{path}: {p}" for p in touch_findings(record, changed)]
        for test in record.get("tests") or []:
            test_id = jest_test_id(path, [str(t) for t in test.get("titles") or []])
            problems += [f"{test_id}: {p}" for p in test.get("problems") or []]
            previous = states.get(test_id)
            states[test_id] = "failed" if previous not in (None, test.get("status")) else str(test.get("status"))
    return states, problems


def _canary_paths(harness: Mapping[str, Any], report: ChannelReport, root: str) -> list[str]:
    """The test files whose canaries must show (fail, pass): every file the runner recorded as loaded (one
    that did not load ran nothing), or the canary file of evidence written before the canaries moved into
    the graded files (``canary`` in the harness record)."""
    if harness.get("canary"):
        return [str(harness["canary"])]
    return [_rel(str(r.get("path", "")), root) for r in report.of_type("file") if not r.get("error")]


def _canary_findings(
    harness: Mapping[str, Any],
    report: ChannelReport,
    states: Mapping[str, str],
    tests: Mapping[str, TestState],
    root: str,
) -> list[str]:
    found: list[str] = []
    if not report.of_type("file") and tests:
        found.append(f"the runner recorded no test file, the report has {len(tests)} tests")
    for path in _canary_paths(harness, report, root):
        fail_id, pass_id = canary_ids(str(harness["nonce"]), path)
        runner = (states.get(fail_id), states.get(pass_id))
        reported = (tests.get(fail_id), tests.get(pass_id))
        if runner != ("failed", "passed") or reported != (TestState.FAIL, TestState.PASS):
            found.append(
                f"{path}: canary outcomes are {runner} in the runner's records and "
                f"{tuple(s.value if s else None for s in reported)} in the report, expected exactly (fail, pass)"
            )
    return found


def findings(
    harness: Mapping[str, Any],
    channel: bytes,
    tests: Mapping[str, TestState],
    output: str,
    *,
    root: str = "/testbed",
    changed: Collection[str] | None = None,
) -> list[str]:
    """Why this jest run's results cannot be trusted (see the module docstring); ``[]`` when none.

    Args:
        harness: :meth:`JestHarness.to_dict` of the run.
        channel: the channel file's bytes, read after every process of the test user was stopped.
        tests: the parsed report (canaries included).
        output: the console output.
        changed: repository paths the candidate's patch changed or added (its tripwire touches count:
            :func:`touch_findings`); None: every touch counts.
    """
    report = read_channel(channel, bytes.fromhex(str(harness["key"])))
    found = list(report.problems)
    if not report.of_type("start"):
        found.append("the runner's channel has no start record (the harness reporter never ran)")
    finals = report.of_type("final")
    if len(finals) != 1:
        found.append(f"the runner's channel has {len(finals)} final records, expected 1")
    states, problems = _runner_states(report, root, changed)
    found += problems
    found += _canary_findings(harness, report, states, tests, root)
    for test_id, state in sorted(tests.items()):
        if state == TestState.PASS and states.get(test_id) != "passed":
            found.append(
                f"the report says {test_id} passed, the runner's own record says {states.get(test_id) or 'nothing'}"
            )
    if len(finals) == 1:
        final = finals[0]
        found += [f"the runner's reporter: {p}" for p in final.get("problems") or []]
        own = (final.get("numPassedTests"), final.get("numFailedTests"))
        console = jest_console_counts(output)
        if console is not None and console != own:
            found.append(f"the console's final summary says {console[0]} passed / {console[1]} failed, "
                         f"the runner's own summary {own[0]} passed / {own[1]} failed")  # fmt: skip
        passes = sum(1 for s in tests.values() if s == TestState.PASS)
        if isinstance(own[0], int) and passes > own[0]:
            found.append(f"the report has {passes} passes, the runner's own summary {own[0]}")
    return found


def assertion_counts(harness: Mapping[str, Any], channel: bytes, *, root: str = "/testbed") -> dict[str, int]:
    """``{test id: executed assertions}`` of the tests whose body ended, from the verified channel
    (``expect.getState().assertionCalls`` when the body returned or threw)."""
    report = read_channel(channel, bytes.fromhex(str(harness["key"])))
    counts: dict[str, int] = {}
    for record in report.of_type("file"):
        path = _rel(str(record.get("path", "")), root)
        for test in record.get("tests") or []:
            if isinstance(test.get("assertions"), int):
                counts[jest_test_id(path, [str(t) for t in test.get("titles") or []])] = int(test["assertions"])
    return counts


def hollow_passes(tests: Mapping[str, TestState], counts: Mapping[str, int], expected: Mapping[str, int]) -> list[str]:
    """Ids that passed with no executed assertion where the validated fix run (``expected``) had some."""
    return sorted(t for t, n in expected.items() if n > 0 and tests.get(t) == TestState.PASS and counts.get(t, 0) == 0)


def without_canaries(parsed: ParseResult, harness: Mapping[str, Any] | None) -> ParseResult:
    """``parsed`` without the canaries' tests, in every file (they are the harness's, never graded)."""
    if not harness:
        return parsed
    if harness.get("canary"):  # a canary file of its own (evidence written before issue 35)
        prefix = f"{harness['canary']}::"
        return without_ids(parsed, [k for k in parsed.tests if k.startswith(prefix)])
    titles = f"mobilebench canary {harness['nonce']} > "
    return without_ids(parsed, [k for k in parsed.tests if k.partition("::")[2].startswith(titles)])


def without_ids(parsed: ParseResult, ids: Sequence[str]) -> ParseResult:
    """``parsed`` without the tests ``ids`` (canaries of any runner)."""
    drop = set(ids)
    keep = {k for k in parsed.tests if k not in drop}
    return dataclasses.replace(
        parsed,
        tests={k: v for k, v in parsed.tests.items() if k in keep},
        messages={k: v for k, v in parsed.messages.items() if k in keep},
        passed_on_retry=frozenset(parsed.passed_on_retry & keep),
    )
