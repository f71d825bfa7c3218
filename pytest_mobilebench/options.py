"""One command-line option, as a suite or a runtime provider declares it.

The plugin adds every declared option with ``parser.addoption`` (``--help`` lists them in the
``mobilebench`` group) and hands the parsed values to suites and providers as ``options[dest]``. Kept
apart from the suites and the runtime layer so both can declare options without importing each other.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["Option", "apply_env_defaults", "parse_duration", "warn_outer_timeout"]


@dataclasses.dataclass(frozen=True)
class Option:
    """One command-line option a suite or a runtime provider declares (added by the plugin with ``parser.addoption``).

    Attributes:
        flags: the option strings, e.g. ``("--mb-devices",)``.
        dest: the attribute name; the value reaches :meth:`Suite.evaluate` as ``ctx.options[dest]``.
        help: the ``--help`` text.
        default: the value when neither the flag nor ``env`` is given.
        type: a converter (``int``, ``float``) or None for strings.
        choices: allowed values, or None.
        action: an argparse action (``"store_true"``, ``"append"``) or None.
        env: an environment variable read when the flag is absent (its text goes through ``type``).
        keyed: True when the value changes what an evaluation computes: it enters the result-cache key.
        item_deadline: True for a per-item wall-clock limit in seconds; the plugin warns when pytest-timeout's
            ``--timeout`` is not longer (pytest-timeout would kill the item before its own timeout verdict).
    """

    flags: tuple[str, ...]
    dest: str
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    choices: tuple[Any, ...] | None = None
    action: str | None = None
    env: str | None = None
    keyed: bool = False
    item_deadline: bool = False

    def addoption_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``parser.addoption`` (the ``env`` fallback is applied by the plugin)."""
        kwargs: dict[str, Any] = {"dest": self.dest, "help": self.help, "default": self.default}
        if self.action is not None:
            kwargs["action"] = self.action
        if self.type is not None:
            kwargs["type"] = self.type
        if self.choices is not None:
            kwargs["choices"] = self.choices
        return kwargs


def warn_outer_timeout(config: pytest.Config, options: list[Option]) -> None:
    """Warn when pytest-timeout's ``--timeout`` would kill an item before a suite's own wall-clock limit."""
    outer = config.getoption("timeout", None)  # pytest-timeout, when installed
    for option in (o for o in options if o.item_deadline):
        inner = config.getoption(option.dest)
        if outer and inner and float(outer) <= float(inner):
            config.issue_config_time_warning(
                pytest.PytestConfigWarning(
                    f"pytest-timeout's --timeout={outer} is not longer than {option.flags[0]}={inner}: a slow "
                    "item would be killed by pytest-timeout and lose its own verdict and its evidence; raise "
                    f"--timeout or lower {option.flags[0]}"
                ),
                stacklevel=2,
            )


def apply_env_defaults(config: pytest.Config, options: list[Option]) -> None:
    """An option left at its default takes its declared environment variable, converted by its ``type``.

    Raises:
        pytest.UsageError: the converter refuses the variable's text (``ValueError`` or argparse's
            ``ArgumentTypeError``); the message names the variable, its text and the flag.
    """
    for option in options:
        text = os.environ.get(option.env) if option.env else None
        if text and getattr(config.option, option.dest, None) == option.default:
            try:
                value = option.type(text) if option.type is not None else text
            except (ValueError, argparse.ArgumentTypeError) as exc:
                raise pytest.UsageError(f"${option.env}={text!r} is not valid for {option.flags[0]}: {exc}") from exc
            setattr(config.option, option.dest, value)


_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def parse_duration(text: str) -> float:
    """Seconds of a duration: ``"90"`` or ``"90s"``, ``"30m"``, ``"2h"``, ``"1h30m"``, ``"1.5h"`` (> 0).

    Raises:
        argparse.ArgumentTypeError: anything else (pytest reports it as a usage error naming the option).
    """
    found = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or found is None or not any(found.groups()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (e.g. 90s, 30m, 2h, 1h30m)")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in found.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a run budget must be longer than 0 s")
    return total
