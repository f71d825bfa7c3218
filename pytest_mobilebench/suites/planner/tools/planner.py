"""Planner-level tools: user memory, sub-agent delegation, dialogue (ask_user, Finish), skill loaders and the
composite tools each skill adds to the action space."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Literal

import pydantic

from pytest_mobilebench.suites.planner.declare import tool
from pytest_mobilebench.suites.planner.sandbox import Sandbox, ToolError
from pytest_mobilebench.suites.planner.tools import device, services, settings
from pytest_mobilebench.suites.planner.tools._common import (
    ClockTime,
    Date,
    Id,
    Name,
    Text,
    Weekday,
    ids,
)

#: skill name -> the tools its loader adds (one place; the loaders below and the docs read it).
SKILLS: dict[str, tuple[str, ...]] = {
    "trip_planner": ("book_trip_package", "trip_cost_estimate"),
    "bedtime_routine": ("apply_bedtime_mode", "set_weekday_alarm"),
    "bill_splitter": ("split_bill", "spending_summary"),
    "photo_cleanup": ("find_duplicate_photos", "archive_folder"),
}

# ----------------------------------------------------------------------------------------------- memory


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.casefold()) if len(w) > 2}


@tool("memory", write=False)
def search_user_memory(sb: Sandbox, query: Name) -> list[dict]:
    """Search what you know about the user (preferences, people, habits, addresses); best 3 records with ids.

    Args:
        query: what to look for, e.g. "dentist" or "partner's name".
    """
    q = _words(query)
    scored = [(len(q & _words(f"{m['text']} {m['category']}")), m["id"], m) for m in sb.rows("memory")]
    return [m for score, _, m in sorted(scored, key=lambda s: (-s[0], s[1])) if score > 0][:3]


@tool("memory", write=True)
def add_user_memory(
    sb: Sandbox, text: Text, category: Literal["preference", "person", "place", "habit", "fact"]
) -> dict:
    """Remember a new fact about the user for later.

    Args:
        text: the fact, one sentence.
        category: kind of fact.
    """
    return sb.insert(
        "memory", {"id": sb.new_id("mem"), "text": text, "category": category, "updated_at": sb.now}, generate_id=False
    )


@tool("memory", write=True)
def replace_user_memory(sb: Sandbox, memory_id: Id, text: Text) -> dict:
    """Correct an outdated memory record with new text.

    Args:
        memory_id: the record from search_user_memory.
        text: the corrected fact.
    """
    sb.get("memory", memory_id, what="memory record")
    return sb.update("memory", memory_id, text=text)


@tool("memory", write=True)
def remove_user_memory(sb: Sandbox, memory_id: Id) -> dict:
    """Forget a memory record the user no longer wants kept.

    Args:
        memory_id: the record from search_user_memory.
    """
    return sb.delete("memory", memory_id)


# ----------------------------------------------------------------------------------------------- sub-agents


def _handoff(sb: Sandbox, agent: str, handoff: dict) -> dict:
    row = sb.insert("delegations", {"agent": agent, "handoff": handoff, "status": "done"}, prefix="dlg")
    reply = sb.subagent_replies.get(agent, {"status": "done"})
    return {"delegation_id": row["id"], "agent": agent, "result": reply}


@tool("subagent", write=True)
def delegate_to_gui_agent(sb: Sandbox, app: Name, goal: Text, inputs: dict[str, str] = {}) -> dict:  # noqa: B006
    """Hand a step to the GUI agent, which operates an app that has no API by tapping its screens.

    Args:
        app: the app to operate, e.g. a bank or ride-hailing app.
        goal: what the GUI agent must achieve there, one sentence.
        inputs: the values it needs (amounts, names, codes), as name -> value.
    """
    return _handoff(sb, "gui_agent", {"app": app, "goal": goal, "inputs": inputs})


@tool("subagent", write=True)
def delegate_to_vision_agent(sb: Sandbox, file_id: Id, question: Text) -> dict:
    """Ask the vision agent to read or describe a photo, screenshot or scanned document.

    Args:
        file_id: the image file.
        question: what to extract, e.g. "the total on this receipt".
    """
    f = sb.get("files", file_id, what="file")
    if f["kind"] not in ("photo", "document"):
        raise ToolError("invalid_arguments", f"{f['name']} is a {f['kind']}, not an image")
    return _handoff(sb, "vision_agent", {"file_id": file_id, "question": question})


@tool("subagent", write=True)
def delegate_to_web_agent(sb: Sandbox, goal: Text, site: str = "") -> dict:
    """Hand a web research or web form step (opening hours, prices, online forms) to the web agent.

    Args:
        goal: what to find out or do on the web.
        site: a website to use, optional.
    """
    return _handoff(sb, "web_agent", {"goal": goal, "site": site})


# ----------------------------------------------------------------------------------------------- dialogue


@tool("dialogue", write=False)
def ask_user(sb: Sandbox, question: Text) -> dict:
    """Ask the user a clarifying question and wait for the answer.

    Args:
        question: the question.
    """
    if not sb.user_replies:
        return {"answer": "I have nothing to add."}
    return {"answer": sb.user_replies.pop(0)}


@tool("dialogue", write=False)
def Finish(sb: Sandbox, answer: str = "") -> dict:
    """End the task; give the user the final answer or a summary of what was done.

    Args:
        answer: the final message to the user.
    """
    return {"finished": True}


# ----------------------------------------------------------------------------------------------- skills


def _loader(skill: str, summary: str):
    def load(sb: Sandbox) -> dict:
        return {"skill": skill, "tools": list(SKILLS[skill])}

    load.__name__ = f"load_skill_{skill}"
    load.__doc__ = f"Load the {skill.replace('_', ' ')} skill: {summary}"
    return tool("skill", write=False)(load)


load_skill_trip_planner = _loader(
    "trip_planner", "book a whole trip (flight, hotel, calendar entry) in one step, or price it."
)
load_skill_bedtime_routine = _loader(
    "bedtime_routine", "night mode in one step (do not disturb, dark mode, dim screen) and weekday alarms."
)
load_skill_bill_splitter = _loader(
    "bill_splitter", "split a bill among contacts with payment requests, and summarise spending."
)
load_skill_photo_cleanup = _loader("photo_cleanup", "find duplicate photos and archive whole folders of the gallery.")


@tool("travel", write=True, skill="trip_planner")
def book_trip_package(
    sb: Sandbox,
    origin: Name,
    destination: Name,
    date: Date,
    nights: Annotated[int, pydantic.Field(ge=1, le=30)],
    passengers: Annotated[int, pydantic.Field(ge=1, le=9)] = 1,
) -> dict:
    """Book the cheapest flight with seats and the cheapest hotel with a room, and add the trip to the calendar.

    Args:
        origin: departure city.
        destination: arrival city.
        date: travel day, YYYY-MM-DD.
        nights: nights at the destination.
        passengers: travellers.
    """
    flights = [f for f in services.search_flights(sb, origin, destination, date) if f["seats"] >= passengers]
    hotels = [h for h in services.search_hotels(sb, destination) if h["rooms"] > 0]
    if not flights or not hotels:
        raise ToolError("not_found", f"no {'flight' if not flights else 'hotel'} available for {destination} on {date}")
    flight = services.book_flight(sb, flights[0]["id"], passengers)
    hotel = services.book_hotel(sb, hotels[0]["id"], date, nights)
    end = dt.date.fromisoformat(date) + dt.timedelta(days=nights)
    event = device.create_event(
        sb, f"Trip to {destination}", f"{date}T{flights[0]['depart']}", f"{end}T12:00", destination, "personal", []
    )
    return {"flight_booking": flight["id"], "hotel_booking": hotel["id"], "event": event["id"]}


@tool("travel", write=False, skill="trip_planner")
def trip_cost_estimate(
    sb: Sandbox, origin: Name, destination: Name, date: Date, nights: Annotated[int, pydantic.Field(ge=1, le=30)]
) -> dict:
    """Cheapest bookable flight (with seats) plus hotel (with a room) for a trip, without booking.

    Args:
        origin: departure city.
        destination: arrival city.
        date: travel day, YYYY-MM-DD.
        nights: nights at the destination.
    """
    flights = [f for f in services.search_flights(sb, origin, destination, date) if f["seats"] > 0]
    hotels = [h for h in services.search_hotels(sb, destination) if h["rooms"] > 0]
    if not flights or not hotels:
        raise ToolError("not_found", f"no flight or hotel for {destination} on {date}")
    return {
        "flight": flights[0]["price"],
        "hotel": hotels[0]["price"] * nights,
        "total": flights[0]["price"] + hotels[0]["price"] * nights,
    }


@tool("settings", write=True, skill="bedtime_routine")
def apply_bedtime_mode(sb: Sandbox, enabled: bool = True) -> dict:
    """Bedtime mode: do not disturb and dark mode on and brightness 10 (or all back: off, off, 60).

    Args:
        enabled: true = bedtime, false = daytime.
    """
    settings.set_toggle(sb, "do_not_disturb", enabled)
    settings.set_toggle(sb, "dark_mode", enabled)
    settings.set_brightness(sb, 10 if enabled else 60)
    return settings.list_settings(sb)


@tool("clock", write=True, skill="bedtime_routine")
def set_weekday_alarm(sb: Sandbox, time: ClockTime, label: str = "Wake up") -> dict:
    """A Monday-to-Friday alarm at a time (updates the alarm already at that time if there is one).

    Args:
        time: alarm time, HH:MM.
        label: alarm label.
    """
    days: list[Weekday] = ["mon", "tue", "wed", "thu", "fri"]
    existing = sb.rows("alarms", time=time)
    if existing:
        device.update_alarm(sb, existing[0]["id"], None, label, days)
        return device.set_alarm_enabled(sb, existing[0]["id"], True)
    return device.create_alarm(sb, time, label, days)


@tool("wallet", write=True, skill="bill_splitter")
def split_bill(
    sb: Sandbox,
    total: Annotated[float, pydantic.Field(gt=0, le=100000)],
    payees: list[Name],
    note: Name,
    include_me: bool = True,
) -> dict:
    """Split a bill evenly and send each person a payment request for their share (rounded to cents).

    Args:
        total: the bill amount.
        payees: names of the people who owe a share.
        note: what the bill was for.
        include_me: true when the user also pays one share.
    """
    if not payees:
        raise ToolError("invalid_arguments", "payees: give at least one person")
    share = round(total / (len(payees) + int(include_me)), 2)
    made = [services.request_payment(sb, p, share, note)["id"] for p in payees]
    return {"share": share, "requests": made}


@tool("wallet", write=False, skill="bill_splitter")
def spending_summary(sb: Sandbox) -> dict:
    """Total paid and requested, per payee, over all transactions."""
    per: dict[str, float] = {}
    for t in sb.rows("transactions"):
        per[t["payee"]] = round(per.get(t["payee"], 0) + t["amount"], 2)
    return {"per_payee": per, "total_paid": round(sum(v for v in per.values() if v > 0), 2)}


@tool("files", write=False, skill="photo_cleanup")
def find_duplicate_photos(sb: Sandbox) -> list[list[str]]:
    """Groups of photos that are duplicates (same size, names differing only by a copy suffix)."""
    groups: dict[tuple, list[str]] = {}
    for f in sb.rows("files", kind="photo", trashed=0):
        stem = re.sub(r"( \(\d+\)|-copy\d*|_\d)(?=\.\w+$)", "", f["name"])
        groups.setdefault((stem, f["size_kb"]), []).append(f["id"])
    return [g for g in groups.values() if len(g) > 1]


@tool("files", write=True, skill="photo_cleanup")
def archive_folder(sb: Sandbox, folder: Name, archive: Name = "Archive") -> dict:
    """Move every file of a gallery folder into an archive folder.

    Args:
        folder: the folder to empty, e.g. Screenshots.
        archive: destination folder.
    """
    moved = sb.rows("files", folder=folder, trashed=0)
    if not moved:
        raise ToolError("not_found", f"folder {folder!r} is empty or does not exist")
    for f in moved:
        sb.update("files", f["id"], folder=archive)
    return {"moved": len(moved)}


__all__ = ["SKILLS", "ids"]
