"""Start a child that a test will interrupt as Ctrl-C at a terminal would.

A process started in the background of a shell without job control (``cmd &`` in a script, ``nohup``, some
CI runners) has SIGINT ignored, and an ignored signal stays ignored through ``fork`` and ``exec``: a child of
such a test run would never see the test's SIGINT, and a Ctrl-C test would test nothing of ours (seen here:
four Ctrl-C tests failed under ``(pytest tests -n 2 &)``). :func:`interruptible` starts the child with
SIGINT at its default, as a terminal's foreground job has it; a caught handler is reset to the default by
``exec``, so the child's Python installs its own ``KeyboardInterrupt`` handler as it would at a terminal.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Any

__all__ = ["interruptible"]


def interruptible(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(args, **kwargs)`` with SIGINT not ignored in the child, whatever this process has.

    This process swaps its own disposition for the spawn (no Python runs in the forked child, unlike a
    ``preexec_fn``), so it must be called from the main thread, where pytest runs tests (``signal.signal``
    raises ``ValueError`` elsewhere).
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return subprocess.Popen(args, **kwargs)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(args, **kwargs)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
