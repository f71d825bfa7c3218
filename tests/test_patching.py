"""The apply ladder: every strategy in order, resets between attempts, no fuzzy fallback for binary patches."""

from __future__ import annotations

from pytest_mobilebench.runtime.patching import STRATEGIES, apply_with_fallbacks, strategies_for

BINARY = (
    "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..e69de29\n"
    "Binary files /dev/null and b/logo.png differ\n"
)


def test_binary_patches_never_reach_gnu_patch() -> None:
    assert [name for name, _ in strategies_for(BINARY)] == ["git apply", "git apply --3way"]
    assert strategies_for("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n") == STRATEGIES


def test_ladder_keeps_every_attempt_and_resets_between() -> None:
    calls: list[str] = []
    resets: list[int] = []

    def execute(command: str) -> tuple[int, str]:
        calls.append(command)
        return (0, "applied") if command.startswith("patch ") else (1, f"failed: {command.split()[1]}")

    result = apply_with_fallbacks(execute, "/tmp/p.diff", lambda: resets.append(1))
    assert result.ok and result.method == "patch --fuzz"
    assert len(calls) == 3 and len(resets) == 2
    assert "failed: apply" in result.log and "[exit 1]" in result.log and "applied" in result.log

    calls.clear()
    result = apply_with_fallbacks(execute, "/tmp/p.diff", lambda: None, strategies=strategies_for(BINARY))
    assert not result.ok and result.method is None and len(calls) == 2
