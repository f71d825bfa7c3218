"""Shared argument types and state checks of the tool declarations."""

from __future__ import annotations

import datetime as dt
import json
from typing import Annotated, Any, Literal

import pydantic

from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError

DateTime = Annotated[str, pydantic.Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$")]
Date = Annotated[str, pydantic.Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
ClockTime = Annotated[str, pydantic.Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
Text = Annotated[str, pydantic.Field(min_length=1, max_length=2000)]
Name = Annotated[str, pydantic.Field(min_length=1, max_length=200)]
Id = Annotated[str, pydantic.Field(min_length=1, max_length=64)]
Amount = Annotated[float, pydantic.Field(gt=0, le=100000)]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
Toggle = Literal[
    "wifi",
    "bluetooth",
    "airplane_mode",
    "location_services",
    "mobile_data",
    "camera_access",
    "do_not_disturb",
    "dark_mode",
    "battery_saver",
    "nfc",
    "notifications",
    "auto_rotate",
]


def parse_dt(value: str) -> dt.datetime:
    """``YYYY-MM-DDTHH:MM`` -> datetime; ``invalid_arguments`` for an impossible date such as 02-30."""
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        raise ToolError("invalid_arguments", f"{value!r} is not a valid date/time") from None


def fmt(moment: dt.datetime) -> str:
    """datetime -> ``YYYY-MM-DDTHH:MM``."""
    return moment.strftime("%Y-%m-%dT%H:%M")


def require_online(sb: Sandbox, action: str) -> None:
    """Network needed: airplane mode off and Wi-Fi or mobile data on."""
    sb.require_off("airplane_mode", action)
    if not (sb.setting("wifi") in (1, "1") or sb.setting("mobile_data") in (1, "1")):
        raise ToolError(
            "permission_denied",
            f"{action} needs a network: 'wifi' and 'mobile_data' are both off",
            "turn 'wifi' or 'mobile_data' on with set_toggle, then retry",
            ("set_toggle",),
        )


def require_unlocked(sb: Sandbox, app: str) -> None:
    """Refuse while the app is locked in the security settings."""
    for row in sb.rows("app_locks", app=app):
        if row["locked"]:
            raise ToolError(
                "permission_denied",
                f"the {app} app is locked",
                f"unlock it with unlock_app(app='{app}')",
                ("unlock_app",),
            )


def matches(query: str, *fields: Any) -> bool:
    """Every word of ``query`` occurs (case-insensitively) in one of ``fields``."""
    hay = " ".join(str(f) for f in fields if f is not None).casefold()
    return all(word in hay for word in query.casefold().split())


def ids(value: str | None) -> list[str]:
    """A JSON list column -> list."""
    return json.loads(value) if value else []
