"""The harness's own jest modules (issue 17, items 1 and 2), as text the harness writes into the container.

CommonJS files (the runner in one of two forms), written root-owned and read-only to the test user, in a folder
outside the repository, and given to jest on its command line (never through the project's configuration):

* ``launch.js`` (:func:`launch_js`) - node's main script (``node launch.js <jest's arguments>``), before any
  project code: checks descriptors 3, 4 and 5 by ``fstat`` (regular files of root's; the key 32 bytes), keys
  the channel, loads the three modules below (so jest finds them loaded and never transforms them), writes
  its status to fd 5, then runs the project's own jest program (``jest``'s ``bin``, else ``jest-cli``'s) in
  its own process; or exits :data:`LAUNCH_REFUSED_EXIT` saying why.
* ``channel.js`` - keyed once by the launcher (``open``), keeps its own references to ``fs.writeSync`` and
  the builtins it uses, and appends each record to file descriptor 3 as ``<hmac-sha256 hex> <ascii json>\\n``. The MAC
  is computed in plain JavaScript in the runner's own realm (no ``crypto`` or ``Buffer``, which the code
  under test shares and could patch). Records carry ``seq`` 0, 1, 2 ... in the order written.
* ``runner.js`` - the ``--testRunner``; for jest-circus (``RUNNER_JS``) it wraps ``jest-circus/runner``
  of the project. Before the first
  setup file or the test file is required it freezes the runner's globals (``test``, ``it``,
  ``describe``, ``expect``, hooks: non-writable, non-configurable; the functions and their ``each`` /
  ``only`` / ``skip`` members frozen). Through ``environment.handleTestEvent`` (called by circus in the
  runner's realm) it records, per registered test, the body registered (``add_test``) and compares it at
  ``test_fn_start``, the body's own outcome (``test_fn_success`` / ``test_fn_failure``, which circus already
  inverted for a ``test.failing``, with the ``failing`` flag locked as registered; hooks), and
  ``expect.getState().assertionCalls`` when the body ended. It also keeps its own stack of the
  ``describe`` blocks being declared (start / finish events): each test and block must be declared in the
  top one (not under a block the runner state's ``currentDescribeBlock`` was pointed at), and the stack must
  be empty at ``run_start`` (code that calls ``describe`` and catches its callback's error leaves the block
  open, and the test file's own blocks would nest under the title it chose). One ``file`` record per test file.
* ``runner.js`` for jest-jasmine2 (``JASMINE2_RUNNER_JS``; jest 26 and older, or ``testRunner: 'jasmine2'``):
  wraps ``jest-jasmine2`` of the project. jasmine runs in the test's own realm, so at the same moment it
  also locks what the test code can reach: the env's functions (``clearReporters`` made a recording no-op),
  ``jasmine.getEnv`` / ``Spec`` / ``Suite`` (harness subclasses, classes and prototypes frozen). Each spec
  gets its body wrapped once at construction (outcome and ``assertionCalls`` recorded when it calls back),
  its ``queueableFn`` frozen, an own ``addExpectationResult`` counting failures, and its identity fields
  locked, and its titles fixed at registration (the env's ``describe`` functions wrapped to track the
  suites being declared); a harness jasmine reporter compares them with the titles each result runs
  under. ``passed`` needs the
  wrapped body to pass, no counted failure and jasmine's ``passed``. :data:`RUNNERS` maps the runner
  names of :func:`..harness.jest_runner` to the module text.
* ``resolve.js`` (:mod:`.resolve`) - where jest's own packages are, as node finds them from the project: each
  from the real folder of the package depending on it (pnpm's links into ``node_modules/.pnpm`` followed); the
  launcher, both runners and the harness's probe before the run (``node -e``) share it.
* ``reporter.js`` - a ``--reporters`` entry: a ``start`` record when jest starts, and the runner's own
  final summary (``numPassedTests`` ...) and per-test statuses as the ``final`` record.

* ``tripwires.js`` (:mod:`.tripwires`, issue 31) - records each touch of the runner (globals, the ``jest`` object,
  the matcher table, the harness's modules in node's module cache, ``JEST_*`` markers, the message port) by a
  repository file that is no test or setup file, with its file and line.
* ``environment.js`` (:data:`.launch.ENVIRONMENT_JS`, issue 31) - the test environment the configuration names as
  a package, resolved by the launcher from the installed packages and passed by this module's absolute path.

Each text lives in a module of this package: :mod:`.channel` (``channel.js``, ``reporter.js``), :mod:`.shared`
(what both runners share: primordials, freezing, the matcher table, the canaries), :mod:`.circus`,
:mod:`.jasmine2` (the two ``runner.js``), :mod:`.launch` (``launch.js``, ``environment.js``), :mod:`.resolve`
(``resolve.js``) and :mod:`.tripwires`.

Statuses in records: ``passed``, ``failed``, ``skipped``. What an in-process candidate can still do is in
the README's threat model (it shares the process: reading the key from the process's memory).
"""

from __future__ import annotations

from typing import Final

from pytest_mobilebench.frameworks.react_native.harness_js.channel import CHANNEL_JS, REPORTER_JS
from pytest_mobilebench.frameworks.react_native.harness_js.circus import RUNNER_JS
from pytest_mobilebench.frameworks.react_native.harness_js.jasmine2 import JASMINE2_RUNNER_JS
from pytest_mobilebench.frameworks.react_native.harness_js.launch import LAUNCH_REFUSED_EXIT, RUNNER_PACKAGES, launch_js
from pytest_mobilebench.frameworks.react_native.harness_js.resolve import PROBE_JS, RESOLVE_JS

__all__ = [
    "CHANNEL_JS",
    "JASMINE2_RUNNER_JS",
    "LAUNCH_REFUSED_EXIT",
    "PROBE_JS",
    "RESOLVE_JS",
    "REPORTER_JS",
    "RUNNER_JS",
    "RUNNERS",
    "RUNNER_PACKAGES",
    "launch_js",
]

#: the harness's ``--testRunner`` module per jest runner (:func:`..harness.jest_runner`)
RUNNERS: Final[dict[str, str]] = {"circus": RUNNER_JS, "jasmine2": JASMINE2_RUNNER_JS}
