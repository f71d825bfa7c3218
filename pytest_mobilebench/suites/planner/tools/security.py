"""Tools of security and privacy: which app may use which of the phone's resources (registered after the
service apps of :mod:`.services`)."""

from __future__ import annotations

from typing import Literal

from pytest_mobilebench.suites.planner.declare import tool
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError

App = Literal[
    "messages",
    "wallet",
    "gallery",
    "files",
    "notes",
    "email",
    "maps",
    "camera",
    "music",
    "shop",
    "travel",
    "calendar",
    "contacts",
]
Permission = Literal["location", "camera", "microphone", "contacts", "photos", "notifications"]

# ----------------------------------------------------------------------------------------------- security


@tool("security", write=False)
def list_app_permissions(sb: Sandbox, app: App | None = None) -> list[dict]:
    """Which apps may use location, camera, microphone, contacts, photos or notifications.

    Args:
        app: only this app, or all apps.
    """
    return [p for p in sb.rows("app_permissions") if app is None or p["app"] == app]


@tool("security", write=True)
def set_app_permission(sb: Sandbox, app: App, permission: Permission, granted: bool) -> dict:
    """Grant or revoke an app's privacy permission (location, camera, microphone, contacts ...).

    Args:
        app: the app.
        permission: the permission.
        granted: true to allow, false to revoke.
    """
    key = f"{app}:{permission}"
    if not sb.rows("app_permissions", id=key):
        raise ToolError("not_found", f"{app} does not ask for {permission}")
    return sb.update("app_permissions", key, granted=granted)


@tool("security", write=True)
def lock_app(sb: Sandbox, app: App) -> dict:
    """Lock an app behind the screen lock (PIN or fingerprint).

    Args:
        app: the app.
    """
    if sb.setting("screen_lock") in (None, "none"):
        raise ToolError(
            "permission_denied", "app lock needs a screen lock", "set one with set_screen_lock", ("set_screen_lock",)
        )
    if sb.rows("app_locks", app=app, locked=1):
        raise ToolError("invalid_transition", f"{app} is already locked")
    if sb.rows("app_locks", id=app):
        return sb.update("app_locks", app, locked=1)
    return sb.insert("app_locks", {"id": app, "app": app, "locked": 1}, generate_id=False)


@tool("security", write=True)
def unlock_app(sb: Sandbox, app: App) -> dict:
    """Remove the app lock from an app.

    Args:
        app: the app.
    """
    if not sb.rows("app_locks", app=app, locked=1):
        raise ToolError("invalid_transition", f"{app} is not locked")
    return sb.update("app_locks", app, locked=0)


@tool("security", write=True)
def set_screen_lock(sb: Sandbox, method: Literal["none", "pin", "pattern", "fingerprint"]) -> dict:
    """Choose how the phone's screen is locked.

    Args:
        method: the lock method.
    """
    if method == "none" and sb.rows("app_locks", locked=1):
        raise ToolError("conflict", "apps are locked; a screen lock is needed for app lock", "unlock the apps first")
    sb.db.execute('INSERT OR IGNORE INTO settings ("id", "value") VALUES (?, ?)', ("screen_lock", "none"))
    return sb.update("settings", "screen_lock", value=method)


@tool("security", write=False)
def run_security_scan(sb: Sandbox) -> dict:
    """Check the phone's privacy: apps with risky permissions, screen lock, locked apps."""
    risky = [p["id"] for p in sb.rows("app_permissions", granted=1) if p["permission"] in ("location", "microphone")]
    return {
        "screen_lock": sb.setting("screen_lock") or "none",
        "risky_permissions": risky,
        "locked_apps": [a["app"] for a in sb.rows("app_locks", locked=1)],
    }
