"""One command-line option, as a suite or a runtime provider declares it.

The plugin adds every declared option with ``parser.addoption`` (``--help`` lists them in the
``mobilebench`` group) and hands the parsed values to suites and providers as ``options[dest]``. Kept
apart from the suites and the runtime layer so both can declare options without importing each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ["Option"]


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
