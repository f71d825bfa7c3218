"""Collateral damage: the writes of an episode outside its task's allowed delta (pure; every bucket).

AppWorld (seed papers) grades by state and accepts any route, but fails a run that changed anything it should not
have; MobilePA-Bench's buckets check exact calls, the terminal delta, or behaviour. This module is the "nothing
else changed" half for all three buckets.

The allowed delta of a task is its gold trajectory's change to a fresh sandbox, widened only by the task's
``harmless`` declarations (:class:`.tasks.Harmless`) and its ``ignore_columns`` (free-text columns whose value
may differ). A change of the episode (initial state -> final state) is allowed when:

* ``updated`` (a row present before, by id): every changed column is changed by the gold to the same canonical
  value, is ignored, or is harmless for that row;
* ``removed``: the gold removes the same row id, or the row is harmless as a whole;
* ``added`` (rows the episode created and still has, and rows it created as an effect beyond the device and
  deleted again; compared without generated ids and timestamps, since ids depend on the route): the row is
  harmless as a whole, or equals a not yet matched gold-added row of the table on every column but the
  generated, ignored and harmless ones (a multiset match).

Anything else is collateral, described in words (:meth:`Change.describe`) for the result's ``collateral`` list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_mobilebench.suites.planner.sandbox import GENERATED_COLUMNS, TABLES, Snapshot

__all__ = ["Change", "changes", "outside"]

Canon = Callable[[Any], Any]
Matches = Callable[[Any, Any], bool]


@dataclass(frozen=True)
class Change:
    """One changed row.

    Attributes:
        kind: ``added`` | ``removed`` | ``updated``.
        table: the table.
        row_id: the row's id (generated for an added row).
        row: the row's values (as it ends; a removed row as it was).
        columns: ``updated``: ``{column: (old, new)}``; otherwise empty.
    """

    kind: Literal["added", "removed", "updated"]
    table: str
    row_id: str
    row: Mapping[str, Any]
    columns: Mapping[str, tuple[Any, Any]]

    def describe(self) -> str:
        """E.g. ``added transactions row (payee='Stranger', amount=1000.0, ...)``, ``removed events row evt-x
        (title='Dentist')``, ``updated emails eml-trip: folder 'archive' -> 'trash'``."""
        if self.kind == "updated":
            cols = ", ".join(f"{c} {o!r} -> {n!r}" for c, (o, n) in self.columns.items())
            return f"updated {self.table} {self.row_id}: {cols}"
        shown = ", ".join(
            f"{c}={v!r}" for c, v in self.row.items() if c not in GENERATED_COLUMNS and v not in (None, "", "[]")
        )
        shown = shown if len(shown) <= 160 else shown[:157] + "..."
        where = f" {self.row_id}" if self.kind == "removed" else ""
        return f"{self.kind} {self.table} row{where} ({shown})"


def changes(before: Snapshot, after: Snapshot, erased: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> list[Change]:
    """Every row-level change from ``before`` to ``after``, in table order then id order, then ``erased``.

    ``erased`` (:attr:`.sandbox.Sandbox.erased`): rows whose creation left the device and whose record was
    deleted before the end; each is an ``added`` change (deleting a sent message does not unsend it)."""
    out: list[Change] = []
    for table in TABLES:
        old, new = before.get(table, {}), after.get(table, {})
        out += [Change("added", table, i, new[i], {}) for i in sorted(new.keys() - old.keys())]
        out += [Change("removed", table, i, old[i], {}) for i in sorted(old.keys() - new.keys())]
        for i in sorted(old.keys() & new.keys()):
            cols = {
                c: (old[i][c], new[i].get(c))
                for c in old[i]
                if c not in GENERATED_COLUMNS and old[i][c] != new[i].get(c)
            }
            if cols:
                out.append(Change("updated", table, i, new[i], cols))
    return out + [Change("added", table, str(row.get("id", "")), row, {}) for table, row in erased]


@dataclass(frozen=True)
class _Allowance:
    """What a task lets change beyond its gold: free columns and whole rows, per table, as (where, columns)."""

    entries: Sequence[tuple[str, Mapping[str, Any], frozenset[str]]]
    matches: Matches

    def free_columns(self, table: str, row: Mapping[str, Any]) -> frozenset[str]:
        cols = [c for t, where, c in self.entries if t == table and c and self._row_in(where, row)]
        return frozenset().union(*cols)

    def whole_row(self, table: str, row: Mapping[str, Any]) -> bool:
        return any(t == table and not c and self._row_in(where, row) for t, where, c in self.entries)

    def _row_in(self, where: Mapping[str, Any], row: Mapping[str, Any]) -> bool:
        return all(self.matches(spec, row.get(col)) for col, spec in where.items())


def _allowance(harmless: Sequence[Any], ignore_columns: Sequence[str], matches: Matches) -> _Allowance:
    entries = [(h.table, dict(h.where), frozenset(h.columns)) for h in harmless]
    entries += [(t, {}, frozenset({c})) for t, _, c in (col.partition(".") for col in ignore_columns)]
    return _Allowance(entries, matches)


def outside(
    got: Sequence[Change],
    gold: Sequence[Change],
    harmless: Sequence[Any],
    ignore_columns: Sequence[str],
    canon: Canon,
    matches: Matches,
) -> list[Change]:
    """The changes of ``got`` outside the allowed delta (``gold`` widened by ``harmless`` and ``ignore_columns``).

    Args:
        got: the episode's changes; gold: the gold's changes (both from :func:`changes` on the same initial state).
        canon: the value canonicaliser; matches: ``(spec, value) -> bool`` for ``where`` specs.

    Returns:
        The offending changes; for ``updated`` only the offending columns are kept.
    """
    allow = _allowance(harmless, ignore_columns, matches)
    gold_updates = {
        (c.table, c.row_id, col): canon(new) for c in gold if c.kind == "updated" for col, (_, new) in c.columns.items()
    }
    gold_removed = {(c.table, c.row_id) for c in gold if c.kind == "removed"}
    pool = [c for c in gold if c.kind == "added"]
    bad: list[Change] = []
    for c in got:
        if allow.whole_row(c.table, c.row):
            continue
        free = allow.free_columns(c.table, c.row)
        if c.kind == "updated":
            cols = {
                col: v
                for col, v in c.columns.items()
                if col not in free and gold_updates.get((c.table, c.row_id, col), _MISSING) != canon(v[1])
            }
            if cols:
                bad.append(Change("updated", c.table, c.row_id, c.row, cols))
        elif c.kind == "removed":
            if (c.table, c.row_id) not in gold_removed:
                bad.append(c)
        else:
            twin = next((g for g in pool if g.table == c.table and _same(g.row, c.row, free, canon)), None)
            if twin is None:
                bad.append(c)
            else:
                pool.remove(twin)
    return bad


_MISSING = object()


def _same(a: Mapping[str, Any], b: Mapping[str, Any], free: frozenset[str], canon: Canon) -> bool:
    cols = (set(a) | set(b)) - GENERATED_COLUMNS - free
    return all(canon(a.get(c)) == canon(b.get(c)) for c in cols)
