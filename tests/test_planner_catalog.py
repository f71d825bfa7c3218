"""The planner tool catalog: declared once, schema / recall / behaviour derived; realistic state-dependent errors;
the generated docs/planner-tools.md is up to date."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_mobilebench.suites.planner.catalog import DOMAINS, catalog, tools_markdown
from pytest_mobilebench.suites.planner.episode import Episode
from pytest_mobilebench.suites.planner.recall import (
    ALWAYS_AVAILABLE,
    bm25_rank,
    recall_tools,
    tokenize,
)
from pytest_mobilebench.suites.planner.sandbox import (
    Sandbox,
    ToolError,
    delta_equal,
    state_delta,
)
from pytest_mobilebench.suites.planner.tools.planner import SKILLS

ROOT = Path(__file__).resolve().parent.parent
TOOLS = catalog()


def _episode(state: dict | None = None, space: list[str] | None = None) -> Episode:
    sb = Sandbox("t-catalog", "2026-03-16T09:00")
    sb.seed(state or {})
    return Episode(sb, space or list(TOOLS))


def test_catalog_size_and_domains() -> None:
    assert len(TOOLS) >= 120
    per_domain = Counter(t.domain for t in TOOLS.values())
    assert all(per_domain[d] >= 5 for d in DOMAINS) and len(DOMAINS) >= 13
    assert {t for tools in SKILLS.values() for t in tools} == {n for n, t in TOOLS.items() if t.skill}


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_schema_is_openai_function_format(name: str) -> None:
    schema = TOOLS[name].schema
    assert schema["type"] == "function"
    fn = schema["function"]
    assert fn["name"] == name and fn["description"]
    params = fn["parameters"]
    assert params["type"] == "object" and params["additionalProperties"] is False
    assert set(params["required"]) <= set(params.get("properties", {}))
    for prop in params.get("properties", {}).values():
        assert prop.get("description"), f"{name}: an argument has no description"
    json.dumps(schema)
    assert TOOLS[name].recall_text.startswith(name.replace("_", " "))


def test_docs_tool_catalog_is_generated_and_current() -> None:
    assert (ROOT / "docs" / "planner-tools.md").read_text(encoding="utf-8") == tools_markdown(), (
        "regenerate with: python -m pytest_mobilebench.suites.planner docs/planner-tools.md"
    )


def test_arguments_are_validated_against_the_schema() -> None:
    ep = _episode()
    missing = ep.call("create_alarm", {})
    assert missing["error"]["code"] == "invalid_arguments" and "time" in missing["error"]["message"]
    wrong = ep.call("create_alarm", {"time": "25:99"})
    assert wrong["error"]["code"] == "invalid_arguments"
    extra = ep.call("create_alarm", {"time": "07:00", "sql": "DROP TABLE alarms"})
    assert extra["error"]["code"] == "invalid_arguments" and "sql" in extra["error"]["message"]
    enum = ep.call("set_volume", {"stream": "bass", "level": 10})
    assert enum["error"]["code"] == "invalid_arguments"
    assert ep.sandbox.rows("alarms") == []
    ok = ep.call("create_alarm", json.dumps({"time": "07:00"}))  # OpenAI sends arguments as JSON text
    assert ok["ok"] and ok["result"]["time"] == "07:00"


def test_permission_denied_until_setting_on_then_recovers() -> None:
    ep = _episode(
        {
            "settings": [{"id": "location_services", "value": 0}],
            "places": [{"id": "p1", "name": "Museum", "kind": "museum", "address": "x", "saved": 0, "label": ""}],
        },
        space=["start_navigation", "Finish"],
    )
    denied = ep.call("start_navigation", {"place_id": "p1"})
    assert denied["error"]["code"] == "permission_denied" and "location_services" in denied["error"]["message"]
    assert "set_toggle" in ep.action_space  # the error names its recovery tool
    assert ep.call("set_toggle", {"setting": "location_services", "enabled": True})["ok"]
    assert ep.call("start_navigation", {"place_id": "p1"})["ok"]
    busy = ep.call("start_navigation", {"place_id": "p1"})
    assert busy["error"]["code"] == "conflict"


def test_not_found_conflict_and_invalid_transition() -> None:
    ep = _episode(
        {
            "events": [
                {
                    "id": "e1",
                    "title": "A",
                    "start": "2026-03-16T10:00",
                    "end": "2026-03-16T11:00",
                    "status": "confirmed",
                }
            ]
        }
    )
    assert ep.call("cancel_event", {"event_id": "nope"})["error"]["code"] == "not_found"
    clash = ep.call("create_event", {"title": "B", "start": "2026-03-16T10:30", "end": "2026-03-16T11:30"})
    assert clash["error"]["code"] == "conflict" and "double booking" in clash["error"]["message"]
    assert ep.call("cancel_event", {"event_id": "e1"})["ok"]
    again = ep.call("cancel_event", {"event_id": "e1"})
    assert again["error"]["code"] == "invalid_transition"
    assert ep.call("create_event", {"title": "B", "start": "2026-03-16T10:30", "end": "2026-03-16T11:30"})["ok"]


def test_refused_composite_call_leaves_no_partial_write() -> None:
    state = {
        "settings": [{"id": "wifi", "value": 1}],
        "flights": [
            {
                "id": "f1",
                "origin": "A",
                "destination": "B",
                "date": "2026-04-01",
                "depart": "08:00",
                "price": 100.0,
                "seats": 3,
            }
        ],
        "hotels": [{"id": "h1", "name": "H", "city": "B", "price": 50.0, "rooms": 0}],
    }
    ep = _episode(state)
    before = ep.sandbox.snapshot()
    out = ep.call("book_trip_package", {"origin": "A", "destination": "B", "date": "2026-04-01", "nights": 2})
    assert out["error"]["code"] == "not_found"
    state["hotels"][0]["rooms"] = 1
    ep2 = _episode(
        {
            **state,
            "events": [
                {
                    "id": "e",
                    "title": "busy",
                    "start": "2026-04-01T07:00",
                    "end": "2026-04-03T13:00",
                    "status": "confirmed",
                }
            ],
        }
    )
    before2 = ep2.sandbox.snapshot()
    out2 = ep2.call("book_trip_package", {"origin": "A", "destination": "B", "date": "2026-04-01", "nights": 2})
    assert out2["error"]["code"] == "conflict"  # the calendar step failed after the bookings
    assert ep2.sandbox.snapshot() == before2  # flight and hotel bookings rolled back
    assert ep.sandbox.snapshot() == before


def test_skill_loader_adds_its_tools() -> None:
    ep = _episode(space=["load_skill_photo_cleanup", "Finish"])
    assert ep.call("find_duplicate_photos", {})["error"]["code"] == "unavailable"
    loaded = ep.call("load_skill_photo_cleanup", {})
    assert loaded["result"]["tools"] == list(SKILLS["photo_cleanup"])
    assert ep.call("find_duplicate_photos", {})["ok"] and ep.loaded_skills == ["photo_cleanup"]


def test_memory_search_returns_record_ids_and_edits() -> None:
    ep = _episode(
        {
            "memory": [
                {"id": "m1", "text": "My sister is Mia", "category": "person", "updated_at": "x"},
                {"id": "m2", "text": "I like jazz", "category": "preference", "updated_at": "x"},
            ]
        }
    )
    hits = ep.call("search_user_memory", {"query": "who is my sister"})["result"]
    assert [m["id"] for m in hits] == ["m1"]
    assert ep.call("replace_user_memory", {"memory_id": "m2", "text": "I like blues"})["ok"]
    assert ep.call("remove_user_memory", {"memory_id": "m1"})["ok"]
    assert ep.call("remove_user_memory", {"memory_id": "m1"})["error"]["code"] == "not_found"
    added = ep.call("add_user_memory", {"text": "I live in Oslo", "category": "place"})["result"]
    assert added["id"].startswith("mem-")


def test_ask_user_and_subagent_replies_come_from_the_task() -> None:
    sb = Sandbox("t", "2026-03-16T09:00", ["the red one"], {"web_agent": {"answer": "open 9-17"}})
    ep = Episode(sb, list(TOOLS))
    assert ep.call("ask_user", {"question": "which?"})["result"] == {"answer": "the red one"}
    assert ep.call("ask_user", {"question": "and?"})["result"] == {"answer": "I have nothing to add."}
    out = ep.call("delegate_to_web_agent", {"goal": "opening hours of the museum"})["result"]
    assert out["result"] == {"answer": "open 9-17"} and out["agent"] == "web_agent"
    [row] = sb.rows("delegations")
    assert json.loads(row["handoff"]) == {"goal": "opening hours of the museum", "site": ""}


def test_ids_are_seeded_and_clock_frozen() -> None:
    a, b = _episode(), _episode()
    ra = a.call("start_timer", {"minutes": 5})["result"]
    rb = b.call("start_timer", {"minutes": 5})["result"]
    assert ra["id"] == rb["id"] and ra["created_at"] == "2026-03-16T09:00"
    assert a.call("get_current_time", {})["result"] == {"now": "2026-03-16T09:00", "weekday": "mon"}


def test_state_delta_ignores_generated_ids_and_timestamps() -> None:
    base = {
        "alarms": {
            "a": {"id": "a", "time": "07:00", "label": "x", "enabled": 1, "repeat_days": "[]", "created_at": "t0"}
        }
    }
    one = {
        "alarms": {
            **base["alarms"],
            "n1": {"id": "n1", "time": "08:00", "label": "y", "enabled": 1, "repeat_days": "[]", "created_at": "t1"},
        }
    }
    two = {
        "alarms": {
            **base["alarms"],
            "n2": {"id": "n2", "time": "08:00", "label": "y", "enabled": 1, "repeat_days": "[]", "created_at": "t2"},
        }
    }
    assert delta_equal(state_delta(base, one), state_delta(base, two))
    changed = {"alarms": {"a": {**base["alarms"]["a"], "enabled": 0}}}
    assert state_delta(base, changed)["alarms"]["updated"] == {"a": {"enabled": [1, 0]}}
    assert state_delta(base, {"alarms": {}})["alarms"]["removed"].keys() == {"a"}


def test_bm25_ranks_the_right_tools() -> None:
    assert tokenize("Alarms for the mornings") == ["alarm", "morning"]
    ranked = bm25_rank("wake alarm", {"a": "alarm clock wake", "b": "music play", "c": "alarm"})
    assert ranked[0][0] == "a" and ranked[-1] == ("b", 0.0)
    top = recall_tools("Send a text message to Sam")
    assert len(top) == 15 and "send_message" in top[:3]
    assert not set(top) & set(ALWAYS_AVAILABLE)
    assert all(not TOOLS[t].skill for t in recall_tools("plan my trip to Porto with flight and hotel"))


def test_tool_error_feedback_shape() -> None:
    err = ToolError("conflict", "taken", "pick another", ("find_free_slot",))
    assert err.feedback() == {
        "ok": False,
        "error": {"code": "conflict", "message": "taken", "hint": "pick another", "tools_added": ["find_free_slot"]},
    }


def test_the_catalog_is_the_declarations_of_the_modules_listed_and_nothing_registers_on_import() -> None:
    import pkgutil

    from pytest_mobilebench.suites.planner import tools
    from pytest_mobilebench.suites.planner.declare import declared, tool

    on_disk = {m.name for m in pkgutil.iter_modules(tools.__path__) if not m.name.startswith("_")}
    assert {m.__name__.rsplit(".", 1)[1] for m in tools.MODULES} == on_disk
    assert list(catalog()) == [f.__name__ for m in tools.MODULES for f, _ in declared(m)]

    @tool("notes", write=False)
    def not_listed(sb: Sandbox) -> dict:
        """A declaration outside the listed modules."""
        return {}

    assert "not_listed" not in catalog() and len(catalog()) == len(TOOLS)
    with pytest.raises(ValueError, match="unknown tool domain"):
        tool("weather", write=False)
