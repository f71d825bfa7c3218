"""Tools of the phone's system settings: switches, brightness, volume (registered after the core apps of
:mod:`.device`)."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic

from pytest_mobilebench.suites.planner.declare import tool
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError
from pytest_mobilebench.suites.planner.tools._common import Name, Toggle

# ----------------------------------------------------------------------------------------------- settings


@tool("settings", write=False)
def list_settings(sb: Sandbox) -> dict:
    """Every system setting and its current value (toggles are 1 = on, 0 = off)."""
    return {r["id"]: r["value"] for r in sb.rows("settings")}


@tool("settings", write=True)
def set_toggle(sb: Sandbox, setting: Toggle, enabled: bool) -> dict:
    """Switch a system setting on or off (Wi-Fi, Bluetooth, airplane mode, location, camera access, NFC ...).

    Args:
        setting: the switch.
        enabled: true = on, false = off.
    """
    sb.db.execute('INSERT OR IGNORE INTO settings ("id", "value") VALUES (?, 0)', (setting,))
    return sb.update("settings", setting, value=int(enabled))


@tool("settings", write=True)
def set_brightness(sb: Sandbox, level: Annotated[int, pydantic.Field(ge=0, le=100)]) -> dict:
    """Set the screen brightness.

    Args:
        level: percent, 0-100.
    """
    sb.db.execute('INSERT OR IGNORE INTO settings ("id", "value") VALUES (?, 50)', ("brightness",))
    return sb.update("settings", "brightness", value=level)


@tool("settings", write=True)
def set_volume(
    sb: Sandbox,
    stream: Literal["ring", "media", "alarm", "notification"],
    level: Annotated[int, pydantic.Field(ge=0, le=100)],
) -> dict:
    """Set the sound volume of the ringer, media, alarms or notifications.

    Args:
        stream: which sound.
        level: percent, 0-100.
    """
    key = f"volume_{stream}"
    sb.db.execute('INSERT OR IGNORE INTO settings ("id", "value") VALUES (?, 50)', (key,))
    return sb.update("settings", key, value=level)


@tool("settings", write=True)
def connect_wifi(sb: Sandbox, network: Name) -> dict:
    """Join a known Wi-Fi network.

    Args:
        network: the network name (SSID).
    """
    sb.require_on("wifi", "joining a Wi-Fi network")
    known = sb.setting("known_networks") or ""
    if network not in known.split(","):
        raise ToolError("not_found", f"no saved Wi-Fi network {network!r}; known: {known}")
    return (
        sb.update("settings", "wifi_network", value=network)
        if sb.setting("wifi_network") is not None
        else sb.insert("settings", {"id": "wifi_network", "value": network}, generate_id=False)
    )


@tool("settings", write=True)
def pair_bluetooth_device(sb: Sandbox, device: Name) -> dict:
    """Connect a nearby Bluetooth device (headphones, car, watch).

    Args:
        device: the device name.
    """
    sb.require_on("bluetooth", "pairing a Bluetooth device")
    nearby = (sb.setting("nearby_devices") or "").split(",")
    if device not in nearby:
        raise ToolError("not_found", f"no Bluetooth device {device!r} nearby; nearby: {','.join(nearby)}")
    paired = [d for d in (sb.setting("paired_devices") or "").split(",") if d]
    if device in paired:
        raise ToolError("invalid_transition", f"{device!r} is already paired")
    sb.db.execute('INSERT OR IGNORE INTO settings ("id", "value") VALUES (?, ?)', ("paired_devices", ""))
    return sb.update("settings", "paired_devices", value=",".join(sorted([*paired, device])))


@tool("settings", write=True)
def set_ringtone(sb: Sandbox, ringtone: Literal["classic", "chimes", "marimba", "silent", "radar"]) -> dict:
    """Choose the phone's ringtone.

    Args:
        ringtone: the ringtone.
    """
    sb.db.execute('INSERT OR IGNORE INTO settings ("id", "value") VALUES (?, ?)', ("ringtone", "classic"))
    return sb.update("settings", "ringtone", value=ringtone)
