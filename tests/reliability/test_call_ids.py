"""A tool-call id a model repeats in a later turn is renamed, so one ledger key names one call.

Small models often number their calls ``call_0``, ``call_1``... afresh every turn. The
normalisation boundary renames an id the thread already used; without that, the ledger would
take the second turn's non-idempotent call for the first one and refuse to run it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from noema_graph import build_agent_graph
from noema_graph.models.normalize import normalize_calls
from noema_graph.persistence import sqlite_checkpointer
from noema_graph.storage.ledger import entries
from tests.helpers import cfg
from tests.reliability.ledger_load import charge_tool
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply


def test_an_id_used_earlier_in_the_thread_gets_a_fresh_one() -> None:
    message = AIMessage("", tool_calls=[call("a", {}, "call_0"), call("b", {}, "call_1")])
    calls, repairs = normalize_calls(message, used={"call_0"})
    assert calls[0]["id"] not in {"call_0", "call_1"} and calls[1]["id"] == "call_1"
    assert repairs == ["tool call id 'call_0' replaced"]


def test_a_repeated_id_in_a_later_turn_runs_its_own_non_idempotent_call(tmp_path: Path) -> None:
    effects = tmp_path / "effects.log"
    store = InMemoryStore()
    config: Any = {"configurable": {"thread_id": "t"}}
    with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        for turn in ("first", "second"):
            model = ScriptedChatModel(script=[
                plan_reply("charge"),
                tools_reply(call("charge", {"run": turn, "n": 0}, "call_0")),  # same id each turn
                text("charged"),
            ])  # fmt: skip
            graph = build_agent_graph(
                cfg(reflection_interval=10), model=model, tools=[charge_tool(effects)],
                checkpointer=saver, store=store,
            )  # fmt: skip
            state = graph.invoke({"messages": [("user", f"charge {turn}")]}, config)
    assert effects.read_text().split() == ["first:0", "second:0"]
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in answers] == ["success", "success"]
    assert len({m.tool_call_id for m in answers}) == 2
    assert sorted(entries(store, "t").values()) == ["done", "done"]
