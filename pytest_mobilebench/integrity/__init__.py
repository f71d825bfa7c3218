"""A static audit of a candidate diff: production code that touches the test runner (issue 31, item 3).

A fix that holds only under the grader reads something the runner sets (a marker variable, its globals,
its module cache) or looks at how it was called (the stack, the process). Such references from a
*production* file are listed per item as ``integrity`` findings; ``--mb-integrity=strict`` makes each one a
``policy_violation`` (kind ``integrity``). Test files (the framework's own discovery rule) are never audited.

What is read: the post-image of every hunk of the patch (its context and ``+`` lines, each hunk parsed on its
own, so a comment or string opened in one hunk never hides another), pure over the patch text; only nodes that
cover an added line are reported. JavaScript / TypeScript go through a tree-sitter AST (:mod:`.js`);
Kotlin, Java and Dart through a comment- and string-aware tokenizer (:mod:`.lexical`).

Shapes: a finding is ``{"file": str, "line": int (1-based, in the patched file), "kind": str, "what": str,
"snippet": str}``; kinds are :data:`KINDS`.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, final

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

__all__ = ["KINDS", "MODES", "Finding", "Fragment", "audit", "audit_text", "violations"]

#: ``test_runner_api``: the runner's globals, modules or the JVM/Dart test libraries; ``runner_marker``: a
#: variable the runner sets (``JEST_WORKER_ID``, ``NODE_ENV === 'test'``, ``CI``, ``FLUTTER_TEST`` ...);
#: ``introspection``: the stack, the process, the module system (``new Error().stack``, ``process.argv``,
#: ``require.cache``, ``/proc/self``, ``StackWalker`` ...)
#: ``unaudited``: a section with added lines of an audited language that the audit's diff reader could not read
#: (a patch shaped to pass the policy's reader and not this one is a finding, never a silent pass)
KINDS: Final = ("test_runner_api", "runner_marker", "introspection", "unaudited")
#: ``--mb-integrity``: ``report`` lists the findings; ``strict`` also makes each a ``policy_violation``
MODES: Final = ("report", "strict")

JS_SUFFIXES: Final = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
LEXICAL_SUFFIXES: Final = (".kt", ".kts", ".java", ".dart")


@final
@dataclasses.dataclass(frozen=True)
class Finding:
    """One reference from production code to the runner (see the module docstring)."""

    file: str
    line: int
    kind: str
    what: str
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (evidence, result, xdist)."""
        return dataclasses.asdict(self)

    def message(self) -> str:
        """``integrity: <file>:<line>: <kind> (<what>): <snippet>`` (the ``policy_violation`` text under strict)."""
        return f"integrity: {self.file}:{self.line}: {self.kind} ({self.what}): {self.snippet}"


@final
@dataclasses.dataclass(frozen=True)
class Fragment:
    """The post-image of one hunk: ``text`` starts at line ``first`` of the patched file; ``added`` are the
    patched file's line numbers of its ``+`` lines."""

    first: int
    text: str
    added: frozenset[int]


def fragments(patch_text: str) -> Iterator[tuple[str, Fragment]]:
    """``(path, fragment)`` per hunk of every non-deleted, non-binary section (unidiff's reading; CRLF read as LF)."""
    for patched in PatchSet(patch_text.replace("\r\n", "\n")):
        if patched.is_removed_file or patched.is_binary_file:
            continue
        path = patched.target_file
        path = path[2:] if path.startswith("b/") else path
        for hunk in patched:
            lines = [ln for ln in hunk if not ln.is_removed]
            if not lines:
                continue
            added = frozenset(ln.target_line_no for ln in lines if ln.is_added)
            text = "".join(ln.value if ln.value.endswith("\n") else ln.value + "\n" for ln in lines)
            yield path, Fragment(first=lines[0].target_line_no, text=text, added=added)


def _auditor(path: str) -> Callable[[str, Fragment], list[Finding]] | None:
    name = path.lower()
    if name.endswith(JS_SUFFIXES):
        try:
            from pytest_mobilebench.integrity import js
        except ImportError as exc:
            raise ImportError(
                f"the static integrity audit of {path} needs the tree-sitter grammars, dependencies of "
                f"pytest-mobilebench (tree-sitter, tree-sitter-javascript, tree-sitter-typescript): {exc}"
            ) from exc
        return js.audit_fragment
    if name.endswith(LEXICAL_SUFFIXES):
        from pytest_mobilebench.integrity import lexical

        return lexical.audit_fragment
    return None


def audit(patch_text: str, is_test: Callable[[str], bool]) -> list[Finding]:
    """Every finding of the patch's production files (``is_test`` False), sorted by file and line.

    Raises:
        unidiff.UnidiffParseError: the text is not a patch (callers audit only patches that parsed).
    """
    found: set[Finding] = set()
    seen: set[str] = set()
    try:
        pieces = list(fragments(patch_text))
    except UnidiffParseError:
        pieces = []
    for path, fragment in pieces:
        seen.add(path)
        auditor = _auditor(path)
        if auditor is None or is_test(posixpath.normpath(path)):
            continue
        found.update(auditor(path, fragment))
    found.update(_unread(patch_text, seen, is_test))
    return sorted(found, key=lambda f: (f.file, f.line, f.kind, f.what))


def _unread(patch_text: str, seen: set[str], is_test: Callable[[str], bool]) -> list[Finding]:
    """``unaudited`` findings: production sections of an audited language with added lines, as the policy's
    reader (:func:`pytest_mobilebench.patch.parse_patch`) sees them, that the audit's reader did not read."""
    from pytest_mobilebench.patch import PatchError, parse_patch

    try:
        info = parse_patch(patch_text, name="model_patch")
    except PatchError:
        return []  # judged as a patch that does not parse: nothing is applied
    return [
        Finding(file=c.path, line=0, kind="unaudited", what="section the audit could not read", snippet="")
        for c in info.files
        if c.added
        and not c.binary
        and c.path not in seen
        and _auditor(c.path) is not None
        and not is_test(posixpath.normpath(c.path))
    ]


def audit_text(path: str, text: str) -> list[Finding]:
    """The findings of a whole file ``text`` as if every line were added (a new file; tests, tools)."""
    auditor = _auditor(path)
    if auditor is None:
        return []
    count = text.count("\n") + 1
    return auditor(path, Fragment(first=1, text=text, added=frozenset(range(1, count + 1))))


def violations(findings: Sequence[Finding | dict[str, Any]], mode: str) -> list[str]:
    """The ``policy_violation`` messages of ``findings`` under ``mode`` (none under ``report``).

    Raises:
        ValueError: ``mode`` is not one of :data:`MODES`.
    """
    if mode not in MODES:
        raise ValueError(f"--mb-integrity: {mode!r} is not one of {', '.join(MODES)}")
    if mode != "strict":
        return []
    return [(f if isinstance(f, Finding) else Finding(**f)).message() for f in findings]


def snippet_of(fragment: Fragment, line: int) -> str:
    """The patched file's line ``line`` from the fragment, stripped and cut to 160 characters."""
    lines = fragment.text.split("\n")
    index = line - fragment.first
    text = lines[index].strip() if 0 <= index < len(lines) else ""
    return text[:160]


def first_added(fragment: Fragment, start_row: int, end_row: int) -> int | None:
    """The first added line (patched-file numbering) among the fragment's rows ``start_row..end_row``
    (0-based rows of the fragment), or None when the span covers no added line."""
    for row in range(start_row, end_row + 1):
        if fragment.first + row in fragment.added:
            return fragment.first + row
    return None
