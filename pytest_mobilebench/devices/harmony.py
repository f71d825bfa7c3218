"""HarmonyOS: hvigor builds of the app HAP and the test HAP, ``hdc -t <target>`` install, ``aa test`` with the
Hypium runner and ONE ``-s class Suite#it``; the ``OHOS_REPORT_*`` output is read by
:mod:`pytest_mobilebench.parsers.ohos`.

Every ``hdc`` call names the exact target (``-t``). Install errors, an absent or offline target and a runner
that cannot start are infrastructure (:func:`infra_kind_of`). Nothing here runs on this project's machines:
the command lines and the failure mapping are tested on documented output shapes and an injected runner.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

__all__ = ["HarmonyPlan", "aa_test", "build_app", "build_test", "infra_kind_of", "install", "uninstall"]

_INFRA: Final = (
    (
        re.compile(
            r"\[Fail\]\[E00\d+\].*(not found|connect)|\[Empty\]|device not found|ExecuteCommand need connect-key",
            re.IGNORECASE,
        ),
        "device_offline",
    ),
    (re.compile(r"error: failed to install bundle|install failed|\[Fail\].*install", re.IGNORECASE), "install_failed"),
    (
        re.compile(r"error: (ability|bundle) .* (not exist|not found)|failed to start user test", re.IGNORECASE),
        "instrumentation_failed",
    ),
)


@dataclasses.dataclass(frozen=True)
class HarmonyPlan:
    """One record's HarmonyOS plan (E): bundle, modules, HAP paths, the test runner and a per-spec timeout (ms)."""

    bundle: str
    app_hap: str
    test_hap: str
    module: str = "entry"
    test_module: str = "entry_test"
    runner: str = "OpenHarmonyTestRunner"
    product: str = "default"
    spec_timeout_ms: int = 15000


def build_app(plan: HarmonyPlan) -> list[str]:
    """``hvigorw assembleHap`` for the app module."""
    return [
        "hvigorw",
        "--mode",
        "module",
        "-p",
        f"product={plan.product}",
        "-p",
        f"module={plan.module}@default",
        "assembleHap",
        "--no-daemon",
    ]


def build_test(plan: HarmonyPlan) -> list[str]:
    """``hvigorw assembleHap`` for the ohosTest module (the test HAP), built separately."""
    return [
        "hvigorw",
        "--mode",
        "module",
        "-p",
        f"product={plan.product}",
        "-p",
        f"module={plan.module}@ohosTest",
        "-p",
        "isOhosTest=true",
        "-p",
        "buildMode=test",
        "assembleHap",
        "--no-daemon",
    ]


def install(target: str, hap: str) -> list[str]:
    """``hdc -t <target> install -r <hap>``."""
    return ["hdc", "-t", target, "install", "-r", hap]


def uninstall(target: str, bundle: str) -> list[str]:
    """``hdc -t <target> uninstall <bundle>`` (stale installs)."""
    return ["hdc", "-t", target, "uninstall", bundle]


def aa_test(plan: HarmonyPlan, target: str, spec: str) -> list[str]:
    """``aa test`` of ONE spec (``Suite#it``) with the Hypium runner, through ``hdc -t <target> shell``."""
    if "#" not in spec:
        raise ValueError(f"{spec!r} is not ONE spec: Suite#it")
    return [
        "hdc",
        "-t",
        target,
        "shell",
        "aa",
        "test",
        "-b",
        plan.bundle,
        "-m",
        plan.test_module,
        "-s",
        "unittest",
        plan.runner,
        "-s",
        "class",
        spec,
        "-s",
        "timeout",
        str(plan.spec_timeout_ms),
    ]


def infra_kind_of(output: str) -> str | None:
    """The infrastructure kind an ``hdc`` / ``aa test`` output shows, or None."""
    return next((kind for pattern, kind in _INFRA if pattern.search(output)), None)
