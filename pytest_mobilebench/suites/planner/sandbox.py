"""The stateful mobile sandbox: one in-memory SQLite database per task episode (MobilePA-Bench, seed 004, Fig. 4).

Deterministic by construction: the clock is frozen at the task's ``now``; generated ids come from a
``random.Random`` seeded with the task id, so two replays of the same trajectory give byte-identical databases.
Every tool call goes to the ``op_log`` table (which is never part of a state delta). Tools reach the data only
through :meth:`Sandbox.insert` / :meth:`update` / :meth:`delete` / :meth:`rows`, which use bound parameters and
table / column names from :data:`TABLES` only: no argument value ever becomes SQL text.

A state snapshot is ``{table: {row_id: {column: value}}}``; :func:`state_delta` compares two snapshots.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["GENERATED_COLUMNS", "OUTBOUND", "TABLES", "Sandbox", "Snapshot", "ToolError", "delta_equal", "state_delta"]

#: table -> its columns (the first is the primary key ``id``). One place for the schema of all domains.
TABLES: Final[dict[str, tuple[str, ...]]] = {
    "settings": ("id", "value"),
    "contacts": ("id", "name", "phone", "email", "favorite", "blocked", "birthday", "group_name", "created_at"),
    "call_log": ("id", "number", "direction", "at"),
    "messages": ("id", "number", "body", "direction", "status", "read", "sent_at", "scheduled_for"),
    "events": ("id", "title", "start", "end", "location", "calendar", "attendees", "status", "created_at"),
    "alarms": ("id", "time", "label", "enabled", "repeat_days", "created_at"),
    "timers": ("id", "label", "seconds", "state", "created_at"),
    "files": ("id", "name", "folder", "kind", "size_kb", "favorite", "trashed", "created_at"),
    "albums": ("id", "name", "file_ids", "created_at"),
    "notes": ("id", "title", "body", "folder", "pinned", "created_at", "updated_at"),
    "reminders": ("id", "title", "due", "list_name", "done", "created_at"),
    "emails": ("id", "folder", "sender", "recipients", "subject", "body", "read", "flagged", "sent_at"),
    "places": ("id", "name", "kind", "address", "saved", "label"),
    "routes": ("id", "place_id", "mode", "status", "created_at"),
    "cards": ("id", "label", "last4", "frozen", "is_default", "balance"),
    "transactions": ("id", "payee", "amount", "currency", "card_id", "note", "status", "created_at"),
    "products": ("id", "name", "store", "price", "stock"),
    "cart": ("id", "product_id", "qty"),
    "orders": ("id", "items", "total", "status", "address", "created_at"),
    "flights": ("id", "origin", "destination", "date", "depart", "price", "seats"),
    "hotels": ("id", "name", "city", "price", "rooms"),
    "bookings": ("id", "kind", "ref", "date", "nights", "passengers", "status", "created_at"),
    "tracks": ("id", "title", "artist", "liked"),
    "playlists": ("id", "name", "track_ids", "created_at"),
    "player": ("id", "track_id", "state", "volume", "shuffle"),
    "app_permissions": ("id", "app", "permission", "granted"),
    "app_locks": ("id", "app", "locked"),
    "memory": ("id", "text", "category", "updated_at"),
    "delegations": ("id", "agent", "handoff", "status", "created_at"),
}

#: columns whose values a state comparison ignores: generated ids and timestamps of the frozen clock.
GENERATED_COLUMNS: Final = frozenset({"id", "created_at", "updated_at", "sent_at"})

#: rows whose creation is an effect beyond the device (a message sent, a call placed, mail sent, a payment, an
#: order, a booking, a hand-off, an invitation): deleting the local record later does not undo it.
OUTBOUND: Final[dict[str, Callable[[Mapping[str, Any]], bool]]] = {
    "messages": lambda row: row.get("direction") == "outgoing" and row.get("status") == "sent",
    "call_log": lambda row: row.get("direction") == "outgoing",
    "emails": lambda row: row.get("folder") == "sent",
    "events": lambda row: row.get("attendees") not in (None, "", "[]"),
    "transactions": lambda row: True,
    "orders": lambda row: True,
    "bookings": lambda row: True,
    "delegations": lambda row: True,
}

#: tables whose row ids are supplied by the task (settings keys, app names) rather than generated.
_NATURAL_KEYS: Final = frozenset({"settings", "player", "app_permissions", "app_locks", "memory"})

Snapshot = dict[str, dict[str, dict[str, Any]]]


class ToolError(Exception):
    """A tool refused or failed; returned to the agent as structured feedback it can recover from.

    Attributes:
        code: ``invalid_arguments`` | ``not_found`` | ``permission_denied`` | ``conflict`` |
            ``invalid_transition`` | ``unavailable`` (not in the action space) | ``step_limit`` | ``after_finish``.
        message: what went wrong, for the agent.
        hint: how it could be fixed (a setting to turn on, a tool to look the id up with), or "".
        tools: the recovery tools the hint names; the episode adds them to the action space (the device shows
            the way out, as a phone's "turn on location?" prompt does).
    """

    def __init__(self, code: str, message: str, hint: str = "", tools: tuple[str, ...] = ()) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.hint = hint
        self.tools = tools

    def feedback(self) -> dict[str, Any]:
        """``{"ok": False, "error": {"code", "message", "hint", "tools_added"}}``."""
        return {
            "ok": False,
            "error": {"code": self.code, "message": self.message, "hint": self.hint, "tools_added": list(self.tools)},
        }


def _encode(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, bool):
        return int(value)
    return value


@dataclass
class Sandbox:
    """One episode's device state.

    Attributes:
        task_id: seeds the id generator.
        now: the frozen clock, ISO ``YYYY-MM-DDTHH:MM:SS`` (local device time).
        db: the episode's in-memory SQLite database.
        user_replies: what ``ask_user`` answers, in order (the simulated user).
        subagent_replies: ``{agent: result mapping}`` the simulated sub-agents return.
        erased: ``[(table, row)]``, rows created by this episode as an :data:`OUTBOUND` effect and deleted
            later (the effect stays; collateral grading counts them as added rows).
    """

    task_id: str
    now: str
    user_replies: list[str] = field(default_factory=list)
    subagent_replies: dict[str, Any] = field(default_factory=dict)
    db: sqlite3.Connection = field(init=False)
    _rng: random.Random = field(init=False)
    _step: int = field(init=False, default=0)
    erased: list[tuple[str, dict[str, Any]]] = field(init=False, default_factory=list)
    _seeded: set[tuple[str, str]] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        dt.datetime.fromisoformat(self.now)
        self.db = sqlite3.connect(":memory:", isolation_level=None)
        self.db.row_factory = sqlite3.Row
        for table, cols in TABLES.items():
            self.db.execute(f'CREATE TABLE "{table}" ({", ".join(f"{c!r}" for c in cols)}, PRIMARY KEY ("id"))')
        self.db.execute("CREATE TABLE op_log (step INTEGER, tool TEXT, arguments TEXT, ok INTEGER, detail TEXT)")
        self._rng = random.Random(f"mobilebench-planner:{self.task_id}")

    # ------------------------------------------------------------------ state in / out

    def seed(self, state: Mapping[str, Iterable[Mapping[str, Any]]]) -> None:
        """Insert the task's initial rows ``{table: [row, ...]}``; every row needs an ``id``.

        Raises:
            ValueError: an unknown table or column, or a row without ``id`` (the loader names the task).
        """
        for table, rows in state.items():
            for row in rows:
                if "id" not in row:
                    raise ValueError(f"table {table!r}: a row has no 'id': {dict(row)}")
                self.insert(table, dict(row), generate_id=False)
                self._seeded.add((table, str(row["id"])))

    def snapshot(self) -> Snapshot:
        """The whole database (op_log excluded) as ``{table: {id: {column: value}}}``."""
        snap: Snapshot = {}
        for table, cols in TABLES.items():
            rows = self.db.execute(f'SELECT * FROM "{table}" ORDER BY "id"').fetchall()
            snap[table] = {str(r["id"]): {c: r[c] for c in cols} for r in rows}
        return snap

    def op_log(self) -> list[dict[str, Any]]:
        """Every executed call: ``[{step, tool, arguments, ok, detail}]`` in order."""
        return [dict(r) for r in self.db.execute("SELECT * FROM op_log ORDER BY rowid")]

    def log(self, tool: str, arguments: Mapping[str, Any], ok: bool, detail: str) -> None:
        """Append one call to the operation log."""
        self._step += 1
        self.db.execute(
            "INSERT INTO op_log VALUES (?, ?, ?, ?, ?)",
            (
                self._step,
                tool,
                json.dumps({str(k): v for k, v in arguments.items()}, sort_keys=True, default=str),
                int(ok),
                detail,
            ),
        )

    # ------------------------------------------------------------------ data access for tools

    def new_id(self, prefix: str) -> str:
        """A seeded id such as ``evt-3fa2c1``."""
        return f"{prefix}-{self._rng.getrandbits(24):06x}"

    def clock(self) -> dt.datetime:
        """The frozen device clock."""
        return dt.datetime.fromisoformat(self.now)

    def _check(self, table: str, cols: Iterable[str]) -> None:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        unknown = set(cols) - set(TABLES[table])
        if unknown:
            raise ValueError(f"table {table!r}: unknown columns {sorted(unknown)}")

    def insert(self, table: str, row: dict[str, Any], *, generate_id: bool = True, prefix: str = "") -> dict[str, Any]:
        """Insert a row, filling ``id`` (seeded) and ``created_at`` (frozen clock) when the table has them."""
        row = dict(row)
        if generate_id and "id" not in row:
            row["id"] = self.new_id(prefix or table[:3])
        if "created_at" in TABLES[table] and "created_at" not in row:
            row["created_at"] = self.now
        self._check(table, row)
        cols = list(row)
        self.db.execute(
            f'INSERT INTO "{table}" ({", ".join(f"{c!r}" for c in cols)}) VALUES ({", ".join("?" for _ in cols)})',
            [_encode(row[c]) for c in cols],
        )
        return self.get(table, row["id"])

    def get(self, table: str, row_id: str, *, what: str = "") -> dict[str, Any]:
        """One row by id.

        Raises:
            ToolError: ``not_found`` naming ``what`` (default: the table) and the id.
        """
        r = self.db.execute(f'SELECT * FROM "{table}" WHERE "id" = ?', (row_id,)).fetchone()
        if r is None:
            raise ToolError(
                "not_found",
                f"no {what or table.rstrip('s')} with id {row_id!r}",
                "look the id up with a search or list tool first",
            )
        return dict(r)

    def rows(self, table: str, **where: Any) -> list[dict[str, Any]]:
        """Rows whose columns equal ``where`` (all rows without it), ordered by id."""
        self._check(table, where)
        clause = " AND ".join(f'"{c}" = ?' for c in where) or "1"
        sql = f'SELECT * FROM "{table}" WHERE {clause} ORDER BY "id"'
        return [dict(r) for r in self.db.execute(sql, [_encode(v) for v in where.values()])]

    def update(self, table: str, row_id: str, **values: Any) -> dict[str, Any]:
        """Set columns of one existing row (``updated_at`` too when the table has it); returns the new row."""
        self.get(table, row_id)
        if "updated_at" in TABLES[table]:
            values["updated_at"] = self.now
        self._check(table, values)
        sets = ", ".join(f'"{c}" = ?' for c in values)
        self.db.execute(f'UPDATE "{table}" SET {sets} WHERE "id" = ?', [*map(_encode, values.values()), row_id])
        return self.get(table, row_id)

    def delete(self, table: str, row_id: str) -> dict[str, Any]:
        """Remove one existing row; returns it."""
        row = self.get(table, row_id)
        if (table, str(row_id)) not in self._seeded and OUTBOUND.get(table, lambda _: False)(row):
            self.erased.append((table, dict(row)))
        self.db.execute(f'DELETE FROM "{table}" WHERE "id" = ?', (row_id,))
        return row

    def setting(self, key: str) -> Any:
        """A system setting's value (``None`` when the device has no such setting)."""
        r = self.db.execute('SELECT value FROM settings WHERE "id" = ?', (key,)).fetchone()
        return None if r is None else r["value"]

    def require_on(self, key: str, action: str) -> None:
        """Raise ``permission_denied`` unless setting ``key`` is on (1)."""
        if self.setting(key) not in (1, "1", "on", True):
            raise ToolError(
                "permission_denied",
                f"{action} needs the setting {key!r}, which is off",
                f"turn {key!r} on with set_toggle, then retry",
                ("set_toggle",),
            )

    def require_off(self, key: str, action: str) -> None:
        """Raise ``permission_denied`` while setting ``key`` is on."""
        if self.setting(key) in (1, "1", "on", True):
            raise ToolError(
                "permission_denied",
                f"{action} is blocked while {key!r} is on",
                f"turn {key!r} off with set_toggle, then retry",
                ("set_toggle",),
            )


def _strip(row: Mapping[str, Any], ignore: frozenset[str]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in row.items() if k not in ignore))


def state_delta(before: Snapshot, after: Snapshot, ignore: frozenset[str] = GENERATED_COLUMNS) -> dict[str, Any]:
    """The change between two snapshots, per table, with ``ignore`` columns left out.

    Rows present before are keyed by their id (given ids are stable); rows added in the episode are compared
    as a multiset of their non-ignored values, since generated ids depend on the route taken.

    Returns:
        ``{table: {"added": sorted list of row tuples, "removed": {id: row tuple},
        "updated": {id: {column: [old, new]}}}}`` for changed tables only.
    """
    delta: dict[str, Any] = {}
    for table in TABLES:
        old, new = before.get(table, {}), after.get(table, {})
        added = sorted(_strip(new[i], ignore) for i in new.keys() - old.keys())
        removed = {i: _strip(old[i], ignore) for i in sorted(old.keys() - new.keys())}
        updated = {}
        for i in sorted(old.keys() & new.keys()):
            cols = {c: [old[i][c], new[i].get(c)] for c in old[i] if c not in ignore and old[i][c] != new[i].get(c)}
            if cols:
                updated[i] = cols
        if added or removed or updated:
            delta[table] = {"added": added, "removed": removed, "updated": updated}
    return delta


def delta_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two deltas are equal, compared through JSON (tuples and lists alike)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
