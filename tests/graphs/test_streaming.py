"""Streaming: typed activity events in order, updates/values/messages modes, async twins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import TypeAdapter

from noema_graph import async_sqlite_checkpointer, build_agent_graph
from noema_graph.events import EVENT_TYPES
from tests.helpers import TOOLS, cfg
from tests.scripted import call, plan_reply, text, tools_reply

THREAD = {"configurable": {"thread_id": "s1"}}


def _script(scripted: Any) -> Any:
    return scripted(
        plan_reply("add", "report"),
        tools_reply(call("add", {"a": 1, "b": 2}, "c1"), content="adding"),
        text("3"),
        text("it is 3"),
        text("The answer is 3."),
    )


def test_custom_events_in_order(scripted: Any) -> None:
    graph = build_agent_graph(
        cfg(), model=_script(scripted), tools=TOOLS, checkpointer=InMemorySaver()
    )
    events = [
        e for e in graph.stream({"messages": [("user", "1+2?")]}, THREAD, stream_mode="custom")
    ]
    types = [e["type"] for e in events]
    assert types == [
        "turn_start",
        "plan_created",
        "thinking",
        "tool_call_start",
        "tool_call_end",
        "thinking",
        "thinking",
        "content_chunk",
        "turn_end",
    ]
    assert len({e["run_id"] for e in events}) == 1 and events[0]["run_id"]
    end = events[4]
    assert end["tool"] == "add" and end["status"] == "ok" and end["output"] == "3"
    assert events[-2]["text"] == "The answer is 3."
    assert events[-1]["success"] is True and events[-1]["total_tokens"] == 75
    by_type = {cls.model_fields["type"].default: cls for cls in EVENT_TYPES}
    for event in events:  # every event validates against its documented model
        by_type[event["type"]].model_validate(event)


def test_updates_values_and_messages_modes(scripted: Any) -> None:
    graph = build_agent_graph(
        cfg(), model=_script(scripted), tools=TOOLS, checkpointer=InMemorySaver()
    )
    seen: dict[str, list[Any]] = {"updates": [], "values": [], "messages": []}
    for mode, chunk in graph.stream(
        {"messages": [("user", "1+2?")]}, THREAD, stream_mode=["updates", "values", "messages"]
    ):
        seen[mode].append(chunk)
    nodes = [next(iter(u)) for u in seen["updates"]]
    assert nodes == [
        "plan",
        "execute_step",
        "tool_node",
        "execute_step",
        "execute_step",
        "finalize",
    ]
    assert seen["values"][-1]["output"]["success"] is True
    ai_chunks = [m for m, _meta in seen["messages"] if isinstance(m, AIMessage)]
    assert ai_chunks and any(m.usage_metadata for m in ai_chunks)
    assert {meta["langgraph_node"] for _m, meta in seen["messages"]} >= {"execute_step", "finalize"}


async def test_async_run_on_aiosqlite(tmp_path: Path, scripted: Any) -> None:
    async with async_sqlite_checkpointer(tmp_path / "a.sqlite") as saver:
        graph = build_agent_graph(cfg(), model=_script(scripted), tools=TOOLS, checkpointer=saver)
        events = [
            e
            async for e in graph.astream(
                {"messages": [("user", "1+2?")]}, THREAD, stream_mode="custom"
            )
        ]
        state = await graph.aget_state(THREAD)
        history = [h async for h in graph.aget_state_history(THREAD)]
    assert events[0]["type"] == "turn_start" and events[-1]["type"] == "turn_end"
    assert state.values["output"]["result"] == "The answer is 3."
    assert len(history) >= 7  # one checkpoint per superstep: time travel is possible


def test_event_schema_is_json_serialisable() -> None:
    adapter = TypeAdapter(list[dict[str, Any]])
    payload = [cls.model_json_schema() for cls in EVENT_TYPES]
    assert adapter.validate_python(payload)
