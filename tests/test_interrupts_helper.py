"""The Ctrl-C tests' spawn helper (:mod:`interrupts`): a child sees SIGINT even when this run ignores it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_PARENT = """
import signal, subprocess, sys
sys.path.insert(0, sys.argv[1])
from interrupts import interruptible
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under `cmd &` in a script
probe = [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"]
plain = subprocess.run(probe, capture_output=True, text=True).stdout.strip()
child = interruptible(probe, stdout=subprocess.PIPE, text=True)
print(plain, child.communicate()[0].strip(), signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
"""


def test_a_child_started_by_interruptible_has_sigint_while_a_plain_one_inherits_it_ignored() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PARENT, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert out == ["True", "False", "True"]  # plain child: ignored; ours: not; the parent's own left as it was
