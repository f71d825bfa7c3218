"""The closed vocabularies of the harness: test states, transitions and verdict reasons.

One place per fact: every suite, parser and report imports these enums; no module compares
status strings of its own. Values are plain strings so they travel through xdist and JSON as builtins.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["INFRA_REASONS", "UNAVAILABLE_REASONS", "InfraKind", "Reason", "TestState", "Transition", "transition_of"]


@enum.unique
class TestState(str, enum.Enum):
    """State of one test in one run (MobileDev-Bench, Section 3 and Appendix A.6).

    ``NONE`` means the test does not exist in that configuration: absent from the results, or in a
    test source set that could not be compiled because it uses code only the fix introduces.
    """

    __test__ = False  # not a pytest test class, despite the name

    PASS = "PASS"
    FAIL = "FAIL"
    NONE = "NONE"
    SKIP = "SKIP"

    @property
    def letter(self) -> str:
        """One-letter code used in transition names: P, F, N, S."""
        return self.value[0]


class Transition(str):
    """A transition name such as ``"F2P"``: (state in the ``test`` run) -> (state in the ``fix`` run)."""

    __slots__ = ()


def transition_of(before: TestState, after: TestState) -> Transition:
    """Return the transition name for a pair of states, e.g. ``(FAIL, PASS) -> "F2P"``."""
    return Transition(f"{before.letter}2{after.letter}")


@enum.unique
class Reason(str, enum.Enum):
    """The single reason carried by every verdict (SPEC section 1 "Grading a candidate").

    Exactly one reason per evaluated item; flags (for example ``test_files_touched``) never replace it.
    """

    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"
    PATCH_APPLY_FAILED = "patch_apply_failed"
    BUILD_FAILED = "build_failed"
    NO_TESTS_RAN = "no_tests_ran"
    TIMEOUT = "timeout"
    INFRA_ERROR = "infra_error"
    EMPTY_PATCH = "empty_patch"
    MISSING_PREDICTION = "missing_prediction"
    POLICY_VIOLATION = "policy_violation"
    #: the test patch applies at base but not after the candidate's patch (issue 17, item 3): counted
    TEST_PATCH_CONFLICT = "test_patch_conflict"
    #: memory, disk or processes ran out under the candidate where the reference fix, under the same limits on the
    #: same environment, did not exhaust them (issue 17, item 3): counted
    RESOURCE_EXHAUSTED = "resource_exhausted"
    #: a dependency of the instance cannot be fetched on this machine (a package or version the registry lacks,
    #: a host outside the registries; issue 30, item 3): neither the candidate's failure nor infra to retry,
    #: counted apart from both
    ENVIRONMENT_UNAVAILABLE = "environment_unavailable"

    @property
    def is_infra(self) -> bool:
        """True for outcomes caused by the harness or its environment, not by the candidate."""
        return self in INFRA_REASONS

    @property
    def is_unavailable(self) -> bool:
        """True when the instance could not be set up here at all (:data:`UNAVAILABLE_REASONS`)."""
        return self in UNAVAILABLE_REASONS


#: Reasons that say nothing about the candidate: the harness or its environment failed. They are counted
#: apart in every summary. ``timeout`` is not among them for issue resolution (a patch can hang the tests),
#: but it is reported as its own reason, never folded into ``unresolved``.
INFRA_REASONS: Final[frozenset[Reason]] = frozenset({Reason.INFRA_ERROR})
#: Reasons that say the instance cannot be set up on this machine (a dependency it cannot fetch): not retried,
#: not the candidate's, left out of every rate's denominator and counted apart from infrastructure.
UNAVAILABLE_REASONS: Final[frozenset[Reason]] = frozenset({Reason.ENVIRONMENT_UNAVAILABLE})


@enum.unique
class InfraKind(str, enum.Enum):
    """The kind carried by an ``infra_error`` verdict: what failed, never the candidate (issue 7, item 5).

    Every kind is retried by the next run (never cached) and counted apart in the summary. Values are
    plain strings so they cross xdist and JSON unchanged. The vocabulary is closed: ``InfraError`` refuses
    a kind not listed here (``tests/test_infra_kinds.py`` also refuses a literal string at any raise site).
    """

    #: the container stopped (``docker kill``, ``docker stop``, a daemon restart) without a harness timeout
    CONTAINER_DIED = "container_died"
    #: the kernel's OOM killer struck any process of the container, whatever the exit status
    OOM_KILLED = "oom_killed"
    #: the Docker daemon did not answer, at start or in the middle of a run
    DAEMON_UNREACHABLE = "daemon_unreachable"
    #: the daemon left the harness's health probe unanswered while a command ran into its deadline: the
    #: hang was the daemon's, not the candidate's (``runtime.stall``)
    DAEMON_STALLED = "daemon_stalled"
    #: ENOSPC anywhere: image build, container, writable-layer limit, reports folder
    DISK_FULL = "disk_full"
    #: the container's process limit refused a fork during a command (the kernel's pids counter, read when
    #: the command ended: ``runtime.limits``)
    PIDS_LIMIT = "pids_limit"
    #: the image could not be built (log attached)
    IMAGE_BUILD_FAILED = "image_build_failed"
    #: the repository or a commit could not be fetched
    CLONE_FAILED = "clone_failed"
    #: the repository's source (a partial mirror) lacks objects of the commit's own tree; the paths are named
    MIRROR_INCOMPLETE = "mirror_incomplete"
    #: a bug of the harness itself (a traceback in ``harness_error.log``)
    HARNESS_ERROR = "harness_error"
    #: the harness's own test launcher did not start the runner with its result channel (a descriptor missing or
    #: of the wrong kind, a harness module that does not load, the runner's program not found): its status,
    #: written before any code of the project runs, says so or is missing (``harness_status*.json``); or a run of
    #: the benchmark's own patches (validation, audit) that the live grade could not grade (``judge.ungradable``)
    RUNNER_HARNESS_FAILED = "runner_harness_failed"
    #: the Debian base image could not be made (debootstrap, packing or ``docker import`` failed)
    BASE_IMAGE_UNAVAILABLE = "base_image_unavailable"
    #: an image build or install step exceeded its wall-clock or silence deadline and was killed
    BUILD_HUNG = "build_hung"
    #: acquiring a Docker host (its answer to the harness) took longer than ``--mb-acquire-deadline``
    ACQUIRE_TIMEOUT = "acquire_timeout"
    #: making an item's image (looked up, pulled, shipped or built in layers) took longer than ``--mb-image-deadline``
    IMAGE_TIMEOUT = "image_timeout"
    #: creating and starting an item's container took longer than ``--mb-create-deadline``
    CREATE_TIMEOUT = "create_timeout"
    #: reading an item's files back from its container took longer than ``--mb-grade-deadline``
    GRADE_TIMEOUT = "grade_timeout"
    #: the Docker API failed in a way none of the kinds above names
    DOCKER_ERROR = "docker_error"
    #: the instance's environment (framework, toolchain pins) has no recipe here
    ENVIRONMENT_UNSUPPORTED = "environment_unsupported"
    #: the benchmark's own gold patch does not apply to its base commit
    GOLD_PATCH_APPLY_FAILED = "gold_patch_apply_failed"
    #: an image could not be shipped from a peer daemon or a registry
    IMAGE_SHIP_FAILED = "image_ship_failed"
    #: the dependency install of an image failed
    INSTALL_FAILED = "install_failed"
    #: a dependency this machine cannot fetch (``runtime.base.EnvironmentUnavailable``): suites that know it
    #: report ``environment_unavailable`` (not retried); one that does not reports it as infra
    ENVIRONMENT_UNAVAILABLE = "environment_unavailable"
    #: no device pool (neither ``--mb-devices`` nor ``--mb-avd``)
    NO_DEVICE = "no_device"
    #: the host lacks Node.js / npm that the app-generation build needs
    NODE_MISSING = "node_missing"
    NPM_MISSING = "npm_missing"
    #: the framework could not plan the instance's test run as described
    PLAN_FAILED = "plan_failed"
    #: the record's platform (iOS, HarmonyOS) or plan kind has no runtime on this host
    PLATFORM_UNAVAILABLE = "platform_unavailable"
    #: the runtime provider's workspace lacks a capability the verdict of an untrusted candidate rests on (the
    #: result channel, root-owned files, the base check: ``runtime.base.Capability``); the provider's, never the
    #: candidate's
    PROVIDER_LACKS_CAPABILITY = "provider_lacks_capability"
    #: a built image could not be pushed to ``--mb-registry``
    REGISTRY_PUSH_FAILED = "registry_push_failed"
    #: the app-generation scaffold's dependencies could not be installed
    SCAFFOLD_INSTALL_FAILED = "scaffold_install_failed"
    #: the benchmark's own test patch does not apply
    TEST_PATCH_APPLY_FAILED = "test_patch_apply_failed"
    #: ``--mb-runtime=local`` for a real candidate without ``--mb-trust-candidates``
    UNTRUSTED_LOCAL_RUN = "untrusted_local_run"
    #: a workspace could not be prepared or read (checkout, copy, a racing read)
    WORKSPACE_ERROR = "workspace_error"
    #: the agent's model endpoint refused or dropped the connection, after the retries with backoff
    AGENT_UNREACHABLE = "agent_unreachable"
    #: the agent's model endpoint missed a deadline of a request (connect, first byte, whole reply: the
    #: ``--mb-agent-*timeout`` options), after the retries
    AGENT_ENDPOINT_TIMEOUT = "agent_endpoint_timeout"
    #: the agent's model endpoint answered an HTTP error (5xx after the retries; 4xx other than 429 at once)
    AGENT_HTTP_ERROR = "agent_http_error"
    #: the agent's model endpoint kept answering 429 (rate limited) through the retries
    AGENT_RATE_LIMITED = "agent_rate_limited"
    #: the agent's model endpoint answered something that is not a chat completion
    AGENT_BAD_RESPONSE = "agent_bad_response"
    #: live mode was asked for but no agent endpoint was configured (a conftest's fixture gave none)
    AGENT_NOT_CONFIGURED = "agent_not_configured"
