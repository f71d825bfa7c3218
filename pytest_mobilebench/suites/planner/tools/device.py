"""Tools of the phone's core apps: contacts, messaging, calendar, clock (system settings: :mod:`.settings`)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import pydantic

from pytest_mobilebench.suites.planner.declare import tool
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError
from pytest_mobilebench.suites.planner.tools._common import (
    ClockTime,
    Date,
    DateTime,
    Id,
    Name,
    Text,
    Weekday,
    fmt,
    ids,
    matches,
    parse_dt,
)

# ----------------------------------------------------------------------------------------------- contacts


@tool("contacts", write=False)
def search_contacts(sb: Sandbox, query: Name) -> list[dict]:
    """Find contacts whose name, phone, e-mail or group matches the query.

    Args:
        query: words to look for, e.g. a first name or a company.
    """
    return [c for c in sb.rows("contacts") if matches(query, c["name"], c["phone"], c["email"], c["group_name"])]


@tool("contacts", write=False)
def get_contact(sb: Sandbox, contact_id: Id) -> dict:
    """Read one contact card by id.

    Args:
        contact_id: the contact's id from search_contacts.
    """
    return sb.get("contacts", contact_id, what="contact")


def _phone_taken(sb: Sandbox, phone: str, but: str = "") -> None:
    for c in sb.rows("contacts", phone=phone):
        if c["id"] != but:
            raise ToolError(
                "conflict",
                f"phone {phone} already belongs to contact {c['name']!r} ({c['id']})",
                "update the existing contact instead of adding a duplicate",
            )


@tool("contacts", write=True)
def add_contact(
    sb: Sandbox,
    name: Name,
    phone: Annotated[str, pydantic.Field(pattern=r"^\+?[0-9]{3,15}$")],
    email: str = "",
    group_name: str = "",
) -> dict:
    """Add a new person to the address book.

    Args:
        name: full name as it should appear.
        phone: phone number, digits with an optional leading +.
        email: e-mail address, optional.
        group_name: contact group such as family or work, optional.
    """
    _phone_taken(sb, phone)
    return sb.insert(
        "contacts",
        {
            "name": name,
            "phone": phone,
            "email": email,
            "favorite": 0,
            "blocked": 0,
            "birthday": "",
            "group_name": group_name,
        },
        prefix="con",
    )


@tool("contacts", write=True)
def update_contact(
    sb: Sandbox,
    contact_id: Id,
    name: Name | None = None,
    phone: Annotated[str, pydantic.Field(pattern=r"^\+?[0-9]{3,15}$")] | None = None,
    email: str | None = None,
    birthday: Date | None = None,
    group_name: str | None = None,
) -> dict:
    """Change fields of an existing contact (name, phone number, e-mail, birthday, group).

    Args:
        contact_id: the contact to edit.
        name: new name, or leave out.
        phone: new phone number, or leave out.
        email: new e-mail address, or leave out.
        birthday: birthday as YYYY-MM-DD, or leave out.
        group_name: new group, or leave out.
    """
    sb.get("contacts", contact_id, what="contact")
    if phone:
        _phone_taken(sb, phone, but=contact_id)
    changes = {
        k: v
        for k, v in {
            "name": name,
            "phone": phone,
            "email": email,
            "birthday": birthday,
            "group_name": group_name,
        }.items()
        if v is not None
    }
    if not changes:
        raise ToolError("invalid_arguments", "nothing to change: give at least one field")
    return sb.update("contacts", contact_id, **changes)


@tool("contacts", write=True)
def delete_contact(sb: Sandbox, contact_id: Id) -> dict:
    """Delete a contact from the address book permanently.

    Args:
        contact_id: the contact to delete.
    """
    return sb.delete("contacts", contact_id)


@tool("contacts", write=True)
def set_favorite_contact(sb: Sandbox, contact_id: Id, favorite: bool) -> dict:
    """Star or unstar a contact as a favourite.

    Args:
        contact_id: the contact.
        favorite: true to add to favourites, false to remove.
    """
    sb.get("contacts", contact_id, what="contact")
    return sb.update("contacts", contact_id, favorite=favorite)


@tool("contacts", write=True)
def block_contact(sb: Sandbox, contact_id: Id, blocked: bool = True) -> dict:
    """Block (or unblock) calls and messages from a contact.

    Args:
        contact_id: the contact.
        blocked: true to block, false to unblock.
    """
    contact = sb.get("contacts", contact_id, what="contact")
    if bool(contact["blocked"]) == blocked:
        raise ToolError("invalid_transition", f"{contact['name']} is already {'blocked' if blocked else 'unblocked'}")
    return sb.update("contacts", contact_id, blocked=blocked)


@tool("contacts", write=True)
def place_call(sb: Sandbox, phone: Annotated[str, pydantic.Field(pattern=r"^\+?[0-9]{3,15}$")]) -> dict:
    """Phone someone: dial a number and log the outgoing call.

    Args:
        phone: the number to call.
    """
    sb.require_off("airplane_mode", "calling")
    for c in sb.rows("contacts", phone=phone):
        if c["blocked"]:
            raise ToolError(
                "conflict",
                f"{c['name']} is blocked",
                "unblock the contact first with block_contact",
                ("block_contact",),
            )
    return sb.insert("call_log", {"number": phone, "direction": "outgoing", "at": sb.now}, prefix="call")


@tool("contacts", write=False)
def list_call_log(sb: Sandbox, direction: Literal["any", "incoming", "outgoing", "missed"] = "any") -> list[dict]:
    """Recent calls, newest first: missed, incoming and outgoing calls with their numbers.

    Args:
        direction: only calls of this direction, or any.
    """
    calls = sorted(sb.rows("call_log"), key=lambda c: c["at"], reverse=True)
    return [c for c in calls if direction == "any" or c["direction"] == direction]


# ----------------------------------------------------------------------------------------------- messaging

Phone = Annotated[str, pydantic.Field(pattern=r"^\+?[0-9]{3,15}$")]


def _check_recipient(sb: Sandbox, phone: str) -> None:
    sb.require_off("airplane_mode", "sending a message")
    for c in sb.rows("contacts", phone=phone):
        if c["blocked"]:
            raise ToolError(
                "conflict",
                f"{c['name']} is blocked; messages to them are not delivered",
                "unblock the contact first with block_contact",
                ("block_contact",),
            )


@tool("messaging", write=False)
def read_messages(sb: Sandbox, phone: Phone) -> list[dict]:
    """Read the SMS conversation with a phone number, oldest first.

    Args:
        phone: the other party's number.
    """
    return sorted(sb.rows("messages", number=phone), key=lambda m: m["sent_at"] or "")


@tool("messaging", write=False)
def search_messages(sb: Sandbox, query: Name) -> list[dict]:
    """Search text messages (SMS) by words in their body.

    Args:
        query: words that occur in the message.
    """
    return [m for m in sb.rows("messages") if matches(query, m["body"])]


@tool("messaging", write=True)
def send_message(sb: Sandbox, phone: Phone, body: Text) -> dict:
    """Send a text message (SMS) to a phone number now.

    Args:
        phone: recipient's number (look it up with search_contacts).
        body: the message text.
    """
    _check_recipient(sb, phone)
    return sb.insert(
        "messages",
        {
            "number": phone,
            "body": body,
            "direction": "outgoing",
            "status": "sent",
            "read": 1,
            "sent_at": sb.now,
            "scheduled_for": "",
        },
        prefix="msg",
    )


@tool("messaging", write=True)
def schedule_message(sb: Sandbox, phone: Phone, body: Text, send_at: DateTime) -> dict:
    """Schedule a text message to be sent later at a given time.

    Args:
        phone: recipient's number.
        body: the message text.
        send_at: when to send, YYYY-MM-DDTHH:MM, in the future.
    """
    if parse_dt(send_at) <= sb.clock():
        raise ToolError("invalid_arguments", f"send_at {send_at} is not in the future (now is {sb.now})")
    _check_recipient(sb, phone)
    return sb.insert(
        "messages",
        {
            "number": phone,
            "body": body,
            "direction": "outgoing",
            "status": "scheduled",
            "read": 1,
            "sent_at": "",
            "scheduled_for": send_at,
        },
        prefix="msg",
    )


@tool("messaging", write=True)
def cancel_scheduled_message(sb: Sandbox, message_id: Id) -> dict:
    """Cancel a scheduled text message before it is sent.

    Args:
        message_id: the scheduled message.
    """
    msg = sb.get("messages", message_id, what="message")
    if msg["status"] != "scheduled":
        raise ToolError("invalid_transition", f"message {message_id} is {msg['status']}, not scheduled")
    return sb.update("messages", message_id, status="cancelled")


@tool("messaging", write=True)
def delete_message(sb: Sandbox, message_id: Id) -> dict:
    """Delete one text message from a conversation.

    Args:
        message_id: the message to delete.
    """
    return sb.delete("messages", message_id)


@tool("messaging", write=True)
def mark_conversation_read(sb: Sandbox, phone: Phone) -> dict:
    """Mark every message from a number as read.

    Args:
        phone: the conversation's number.
    """
    unread = [m for m in sb.rows("messages", number=phone) if not m["read"]]
    for m in unread:
        sb.update("messages", m["id"], read=1)
    return {"marked_read": len(unread)}


# ----------------------------------------------------------------------------------------------- calendar


def _overlaps(sb: Sandbox, start: str, end: str, but: str = "") -> None:
    s, e = parse_dt(start), parse_dt(end)
    if e <= s:
        raise ToolError("invalid_arguments", f"end {end} is not after start {start}")
    for ev in sb.rows("events", status="confirmed"):
        if ev["id"] != but and parse_dt(ev["start"]) < e and s < parse_dt(ev["end"]):
            raise ToolError(
                "conflict",
                f"double booking: overlaps {ev['title']!r} ({ev['start']} - {ev['end']})",
                "pick a free time (find_free_slot) or move the other event",
                ("find_free_slot",),
            )


@tool("calendar", write=False)
def list_events(sb: Sandbox, date: Date) -> list[dict]:
    """Calendar events (appointments, meetings) on one day, in time order.

    Args:
        date: the day, YYYY-MM-DD.
    """
    return sorted((e for e in sb.rows("events") if e["start"].startswith(date)), key=lambda e: e["start"])


@tool("calendar", write=False)
def search_events(sb: Sandbox, query: Name) -> list[dict]:
    """Find calendar events by words in their title or location.

    Args:
        query: words of the title or place.
    """
    return [e for e in sb.rows("events") if matches(query, e["title"], e["location"])]


@tool("calendar", write=True)
def create_event(
    sb: Sandbox,
    title: Name,
    start: DateTime,
    end: DateTime,
    location: str = "",
    calendar: Literal["personal", "work", "family"] = "personal",
    attendees: list[str] = [],
) -> dict:  # noqa: B006
    """Create a calendar event (appointment, meeting); refuses a double booking.

    Args:
        title: what the event is.
        start: start, YYYY-MM-DDTHH:MM.
        end: end, YYYY-MM-DDTHH:MM.
        location: where, optional.
        calendar: which calendar.
        attendees: e-mail addresses of invitees.
    """
    _overlaps(sb, start, end)
    return sb.insert(
        "events",
        {
            "title": title,
            "start": start,
            "end": end,
            "location": location,
            "calendar": calendar,
            "attendees": sorted(attendees),
            "status": "confirmed",
        },
        prefix="evt",
    )


@tool("calendar", write=True)
def reschedule_event(sb: Sandbox, event_id: Id, start: DateTime, end: DateTime) -> dict:
    """Move a calendar event to a new time; refuses a double booking.

    Args:
        event_id: the event.
        start: new start, YYYY-MM-DDTHH:MM.
        end: new end, YYYY-MM-DDTHH:MM.
    """
    ev = sb.get("events", event_id, what="event")
    if ev["status"] != "confirmed":
        raise ToolError("invalid_transition", f"event {event_id} is {ev['status']}; only confirmed events move")
    _overlaps(sb, start, end, but=event_id)
    return sb.update("events", event_id, start=start, end=end)


@tool("calendar", write=True)
def cancel_event(sb: Sandbox, event_id: Id) -> dict:
    """Cancel a calendar event (it stays in the calendar, marked cancelled).

    Args:
        event_id: the event.
    """
    ev = sb.get("events", event_id, what="event")
    if ev["status"] == "cancelled":
        raise ToolError("invalid_transition", f"event {event_id} is already cancelled")
    return sb.update("events", event_id, status="cancelled")


@tool("calendar", write=True)
def delete_event(sb: Sandbox, event_id: Id) -> dict:
    """Remove a calendar event completely.

    Args:
        event_id: the event.
    """
    return sb.delete("events", event_id)


@tool("calendar", write=True)
def invite_to_event(
    sb: Sandbox, event_id: Id, email: Annotated[str, pydantic.Field(pattern=r"^[^@\s]+@[^@\s]+$")]
) -> dict:
    """Invite one more person (by e-mail) to a calendar event.

    Args:
        event_id: the event.
        email: the invitee's e-mail address.
    """
    ev = sb.get("events", event_id, what="event")
    people = sorted(set(ids(ev["attendees"])) | {email})
    return sb.update("events", event_id, attendees=people)


@tool("calendar", write=False)
def find_free_slot(
    sb: Sandbox,
    date: Date,
    duration_minutes: Annotated[int, pydantic.Field(ge=5, le=600)],
    earliest: ClockTime = "08:00",
    latest: ClockTime = "20:00",
) -> dict:
    """First free time on a day with no confirmed event, for a meeting of the given length.

    Args:
        date: the day, YYYY-MM-DD.
        duration_minutes: length needed.
        earliest: first acceptable start, HH:MM.
        latest: the slot must end by this time, HH:MM.
    """
    t, stop = parse_dt(f"{date}T{earliest}"), parse_dt(f"{date}T{latest}")
    need = dt.timedelta(minutes=duration_minutes)
    busy = sorted((parse_dt(e["start"]), parse_dt(e["end"])) for e in sb.rows("events", status="confirmed"))
    for s, e in busy:
        if s >= t + need:
            break
        t = max(t, e)
    if t + need > stop:
        raise ToolError(
            "not_found", f"no free {duration_minutes}-minute slot on {date} between {earliest} and {latest}"
        )
    return {"start": fmt(t), "end": fmt(t + need)}


# ----------------------------------------------------------------------------------------------- clock


@tool("clock", write=False)
def list_alarms(sb: Sandbox) -> list[dict]:
    """All alarms with their time, label, repeat days and whether they are on."""
    return sorted(sb.rows("alarms"), key=lambda a: a["time"])


@tool("clock", write=True)
def create_alarm(sb: Sandbox, time: ClockTime, label: str = "", repeat_days: list[Weekday] = []) -> dict:  # noqa: B006
    """Set a new wake-up alarm.

    Args:
        time: alarm time, HH:MM (24 h).
        label: a name for the alarm, optional.
        repeat_days: weekdays it repeats on; empty = once.
    """
    for a in sb.rows("alarms", time=time):
        raise ToolError(
            "conflict",
            f"an alarm at {time} already exists ({a['id']}, {a['label']!r})",
            "update or enable that alarm instead",
        )
    return sb.insert(
        "alarms", {"time": time, "label": label, "enabled": 1, "repeat_days": sorted(set(repeat_days))}, prefix="alm"
    )


@tool("clock", write=True)
def update_alarm(
    sb: Sandbox,
    alarm_id: Id,
    time: ClockTime | None = None,
    label: str | None = None,
    repeat_days: list[Weekday] | None = None,
) -> dict:
    """Change an alarm's time, label or repeat days.

    Args:
        alarm_id: the alarm.
        time: new time HH:MM, or leave out.
        label: new label, or leave out.
        repeat_days: new repeat days, or leave out.
    """
    sb.get("alarms", alarm_id, what="alarm")
    if time is not None:
        for a in sb.rows("alarms", time=time):
            if a["id"] != alarm_id:
                raise ToolError("conflict", f"an alarm at {time} already exists ({a['id']})")
    changes = {k: v for k, v in {"time": time, "label": label}.items() if v is not None}
    if repeat_days is not None:
        changes["repeat_days"] = sorted(set(repeat_days))
    if not changes:
        raise ToolError("invalid_arguments", "nothing to change: give time, label or repeat_days")
    return sb.update("alarms", alarm_id, **changes)


@tool("clock", write=True)
def set_alarm_enabled(sb: Sandbox, alarm_id: Id, enabled: bool) -> dict:
    """Turn an alarm on or off without deleting it.

    Args:
        alarm_id: the alarm.
        enabled: true = on, false = off.
    """
    sb.get("alarms", alarm_id, what="alarm")
    return sb.update("alarms", alarm_id, enabled=enabled)


@tool("clock", write=True)
def delete_alarm(sb: Sandbox, alarm_id: Id) -> dict:
    """Delete an alarm.

    Args:
        alarm_id: the alarm.
    """
    return sb.delete("alarms", alarm_id)


@tool("clock", write=True)
def start_timer(sb: Sandbox, minutes: Annotated[int, pydantic.Field(ge=1, le=1440)], label: str = "") -> dict:
    """Start a countdown timer.

    Args:
        minutes: duration in minutes.
        label: what the timer is for, optional.
    """
    return sb.insert("timers", {"label": label, "seconds": minutes * 60, "state": "running"}, prefix="tmr")


def _timer_move(sb: Sandbox, timer_id: str, allowed: tuple[str, ...], new: str) -> dict:
    t = sb.get("timers", timer_id, what="timer")
    if t["state"] not in allowed:
        raise ToolError("invalid_transition", f"timer {timer_id} is {t['state']}; cannot become {new}")
    return sb.update("timers", timer_id, state=new)


@tool("clock", write=True)
def pause_timer(sb: Sandbox, timer_id: Id) -> dict:
    """Pause a running timer.

    Args:
        timer_id: the timer.
    """
    return _timer_move(sb, timer_id, ("running",), "paused")


@tool("clock", write=True)
def resume_timer(sb: Sandbox, timer_id: Id) -> dict:
    """Resume a paused timer.

    Args:
        timer_id: the timer.
    """
    return _timer_move(sb, timer_id, ("paused",), "running")


@tool("clock", write=True)
def cancel_timer(sb: Sandbox, timer_id: Id) -> dict:
    """Stop and discard a running or paused timer.

    Args:
        timer_id: the timer.
    """
    return _timer_move(sb, timer_id, ("running", "paused"), "cancelled")


@tool("clock", write=False)
def list_timers(sb: Sandbox) -> list[dict]:
    """All timers with their state (running, paused, cancelled)."""
    return sb.rows("timers")


@tool("clock", write=False)
def get_current_time(sb: Sandbox) -> dict:
    """The device's current date, time and weekday."""
    now = sb.clock()
    return {"now": fmt(now), "weekday": now.strftime("%a").lower()}
