"""The tool_node node called directly: groups, arguments, errors, timeouts and the ledger."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, tool
from langgraph.store.memory import InMemoryStore

from noema_graph.clock import ManualClock
from noema_graph.effects import drive
from noema_graph.models.normalize import INVALID_ARGUMENTS
from noema_graph.nodes.routing import next_group, pending_calls, tool_sends
from noema_graph.nodes.tool_node import SPEC, tool_node
from noema_graph.state.human import Decision
from noema_graph.state.outcome import Outcome
from noema_graph.storage.ledger import claim, entries
from tests.helpers import add, lookup
from tests.nodes.helpers import RUN_ID, Path, deps, group, run, runtime, task
from tests.scripted import call

SAFE = {"concurrency_safe": True}


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event blocked tools wait on; set at teardown so no worker thread stays blocked."""
    event = threading.Event()
    yield event
    event.set()


def _safe_pair(path: Path) -> list[BaseTool]:
    """Two concurrency-safe tools that each wait for the other: they end only if they overlap."""
    barrier = threading.Barrier(2, timeout=5)
    arrived, both = [0], asyncio.Event()

    def meet(name: str) -> str:
        barrier.wait()
        return f"{name} met"

    async def ameet(name: str) -> str:
        arrived[0] += 1
        if arrived[0] == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)
        return f"{name} met"

    def make(name: str) -> BaseTool:
        if path == "sync":
            return StructuredTool.from_function(meet, name=name, description="Meet.", metadata=SAFE)
        return StructuredTool.from_function(
            coroutine=ameet, name=name, description="Meet.", metadata=SAFE
        )

    return [make("left"), make("right")]


def test_a_safe_group_runs_concurrently_and_answers_in_message_order(path: Path) -> None:
    tools = _safe_pair(path)
    calls = [call("left", {"name": "L"}, "c1"), call("right", {"name": "R"}, "c2")]
    update = run(tool_node(group(*calls), runtime(), deps(tools=tools)), path)
    messages = update["messages"]
    assert [(m.tool_call_id, m.status, m.content) for m in messages] == [
        ("c1", "success", "L met"),
        ("c2", "success", "R met"),
    ]
    assert [s.call_id for s in update["trace"]] == ["c1", "c2"]
    assert SPEC.outcome(update) == (Outcome.SUCCESS, "tool ran")


def test_a_message_runs_group_by_group_and_an_unsafe_call_alone(path: Path) -> None:
    log: list[str] = []
    barrier = threading.Barrier(2, timeout=5)

    def read(key: str) -> str:
        log.append(f"start {key}")
        barrier.wait()  # the two reads of a group overlap, or this breaks
        log.append(f"end {key}")
        return key

    def write(key: str) -> str:
        log.append(f"write {key}")
        return key

    make = StructuredTool.from_function
    tools = [
        make(read, name="read", description="Read.", metadata=SAFE),
        make(write, name="write", description="Write."),
    ]
    names = ["read", "read", "write", "read", "read"]
    message = AIMessage(
        "", tool_calls=[call(n, {"key": str(i)}, f"c{i}") for i, n in enumerate(names)]
    )
    state: dict[str, Any] = {"messages": [message], "iteration": 1}
    made = deps(tools=tools)
    sizes = []
    while pending := pending_calls(state):
        (send,) = tool_sends(state, next_group(pending, made.safe_tool_names(), 16))
        sizes.append(len(send.arg["calls"]))
        update = run(tool_node(send.arg, runtime(), made), path)
        state["messages"] = [*state["messages"], *update["messages"]]
    assert sizes == [2, 1, 2]
    assert log[4] == "write 2"  # after both first reads ended, before the next ones started
    assert sorted(log[:4]) == ["end 0", "end 1", "start 0", "start 1"]
    assert sorted(log[5:]) == ["end 3", "end 4", "start 3", "start 4"]
    answered = [m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answered == [f"c{i}" for i in range(5)]


RECEIVED: list[dict[str, Any]] = []


def _pay(**arguments: Any) -> str:
    RECEIVED.append(arguments)
    return "paid"


PAY = StructuredTool.from_function(
    _pay,
    name="pay",
    description="Pay an amount.",
    args_schema={
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
        "additionalProperties": False,
    },
)


def test_json_schema_arguments_reach_the_tool_coerced(path: Path) -> None:
    RECEIVED.clear()
    update = run(
        tool_node(group(call("pay", {"amount": 3, "to": "ada"})), runtime(), deps(tools=[PAY])),
        path,
    )
    assert update["messages"][0].status == "success"
    assert RECEIVED == [{"amount": 3.0, "to": "ada"}]
    assert type(RECEIVED[0]["amount"]) is float
    assert update["trace"][0].action.input == {"amount": 3.0, "to": "ada"}


def test_invalid_arguments_are_an_observation_and_the_tool_does_not_run(path: Path) -> None:
    RECEIVED.clear()
    bad = call("pay", {"amount": "a lot", "to": "ada"})
    update = run(tool_node(group(bad), runtime(), deps(tools=[PAY])), path)
    (message,) = update["messages"]
    assert message.status == "error" and "amount" in message.content
    assert RECEIVED == []
    assert SPEC.outcome(update) == (Outcome.LOOP_BACK, "error observation")


def test_an_unknown_tool_is_a_hallucinated_action(path: Path) -> None:
    update = run(
        tool_node(group(call("teleport", {}, "t1")), runtime(), deps(tools=[add, lookup])), path
    )
    (message,) = update["messages"]
    assert message.status == "error" and message.tool_call_id == "t1"
    assert "Unknown tool 'teleport'" in message.content and "add, lookup" in message.content
    assert update["trace"][0].kind == "hallucinated_action"


def test_unusable_arguments_are_an_observation_and_the_tool_does_not_run(path: Path) -> None:
    marked = {"name": "add", "args": {INVALID_ARGUMENTS: "must be a JSON object, not an array"}}
    update = run(tool_node(group({**marked, "id": "m1"}), runtime(), deps(tools=[add])), path)
    (message,) = update["messages"]
    assert message.status == "error" and message.tool_call_id == "m1"
    assert message.content == (
        "Not executed: the arguments of 'add' must be a JSON object, not an array. "
        "Call it again with a JSON object of its named arguments."
    )
    assert update["trace"][0].kind == "tool"


@pytest.mark.parametrize("name", [None, 7, ["a", "b"]])
def test_a_name_that_is_not_text_is_an_unknown_tool(name: object, path: Path) -> None:
    odd = {"name": name, "args": {}, "id": "n1"}
    update = run(tool_node(group(odd), runtime(), deps(tools=[add])), path)
    (message,) = update["messages"]
    assert message.status == "error" and message.tool_call_id == "n1"
    assert message.content.startswith(f"Unknown tool {str(name)!r}")
    assert update["trace"][0].kind == "hallucinated_action"


def _raising(exc: BaseException) -> BaseTool:
    def fail() -> str:
        raise exc

    return StructuredTool.from_function(fail, name="fail", description="Fail.")


def test_a_declared_tool_error_becomes_an_observation(path: Path) -> None:
    tools = [_raising(RuntimeError("upstream said 502"))]
    update = run(tool_node(group(call("fail")), runtime(), deps(tools=tools)), path)
    (message,) = update["messages"]
    assert message.status == "error"
    assert message.content == "Tool 'fail' failed: RuntimeError: upstream said 502"


def test_a_bug_in_a_tool_propagates(path: Path) -> None:
    tools = [_raising(AttributeError("'NoneType' object has no attribute 'x'"))]
    with pytest.raises(AttributeError, match="no attribute 'x'"):
        run(tool_node(group(call("fail")), runtime(), deps(tools=tools)), path)


def test_tool_errors_is_configurable(path: Path) -> None:
    tools = [_raising(RuntimeError("not declared"))]
    with pytest.raises(RuntimeError, match="not declared"):
        run(
            tool_node(group(call("fail")), runtime(), deps(tools=tools, tool_errors=(ValueError,))),
            path,
        )


def test_a_sync_tool_past_its_timeout_is_an_observation(
    path: Path, release: threading.Event
) -> None:
    def hang() -> str:
        release.wait(30)
        return "late"

    def answered(event: dict[str, Any]) -> None:
        # the node has given up on the call: let the abandoned worker thread end (asyncio.run
        # waits for the default executor's threads before it returns)
        if event["type"] == "tool_call_end":
            release.set()

    tools = [StructuredTool.from_function(hang, name="hang", description="Hang.")]
    made = deps(tools=tools, tool_timeout_s=0.2)
    update = run(tool_node(group(call("hang")), runtime(on_event=answered), made), path)
    (message,) = update["messages"]
    assert message.status == "error" and message.content == "Tool 'hang' timed out after 0.2s."


def test_an_async_tool_past_its_timeout_is_an_observation() -> None:
    @tool
    async def hang() -> str:
        """Hang."""
        await asyncio.sleep(30)
        return "late"

    update = run(
        tool_node(group(call("hang")), runtime(), deps(tools=[hang], tool_timeout_s=0.2)), "async"
    )
    assert update["messages"][0].content == "Tool 'hang' timed out after 0.2s."


def test_a_tools_own_timeout_is_not_reported_as_ours(path: Path) -> None:
    def remote() -> str:
        raise TimeoutError("the remote API did not answer")

    tools = [StructuredTool.from_function(remote, name="remote", description="Call out.")]
    update = run(tool_node(group(call("remote")), runtime(), deps(tools=tools)), path)
    (message,) = update["messages"]
    assert message.status == "error"
    assert message.content == ("Tool 'remote' failed: TimeoutError: the remote API did not answer")


def test_a_call_is_timed_by_the_clock(manual_clock: ManualClock, path: Path) -> None:
    @tool
    def slow() -> str:
        """Take a quarter of a second."""
        manual_clock.advance(0.25)
        return "done"

    update = run(tool_node(group(call("slow")), runtime(), deps(tools=[slow])), path)
    spent, (step,) = update["tool_time"], update["trace"]
    assert spent.group_max == spent.total == 0.25 and step.duration_ms == 250
    started = manual_clock.now() - timedelta(seconds=0.25)
    assert (step.started_at, step.ended_at) == (started.isoformat(), manual_clock.now().isoformat())


COUNT: list[str] = []


def _charge(amount: int) -> str:
    COUNT.append("charged")
    return f"charged {amount}"


CHARGE = StructuredTool.from_function(
    _charge, name="charge", description="Charge a card.", metadata={"idempotency": "non_idempotent"}
)


def test_the_ledger_refuses_to_repeat_a_non_idempotent_call(path: Path) -> None:
    COUNT.clear()
    store = InMemoryStore()
    made, payment = deps(tools=[CHARGE]), group(call("charge", {"amount": 5}, "pay-1"))
    first = run(tool_node(payment, runtime(store=store), made), path)
    again = run(tool_node(payment, runtime(store=store), made), path)
    assert first["messages"][0].content == "charged 5"
    assert again["messages"][0].status == "error"
    assert "Not executed again" in again["messages"][0].content
    assert COUNT == ["charged"]
    assert entries(store, RUN_ID) == {"pay-1": "done"}


def test_the_ledger_refuses_a_call_a_crash_interrupted(path: Path) -> None:
    COUNT.clear()
    store = InMemoryStore()
    assert drive(claim(store, RUN_ID, {"id": "pay-2", "name": "charge"})) is None  # then a crash
    update = run(
        tool_node(
            group(call("charge", {"amount": 5}, "pay-2")),
            runtime(store=store),
            deps(tools=[CHARGE]),
        ),
        path,
    )
    assert "may or may not have taken effect" in update["messages"][0].content
    assert COUNT == []


def test_a_rejected_call_is_answered_without_running(path: Path) -> None:
    COUNT.clear()
    rejected = task(
        call("charge", {"amount": 5}, "c9"), decision=Decision(action="reject", reason="too much")
    )
    update = run(
        tool_node({"group": "1:0", "calls": [rejected]}, runtime(), deps(tools=[CHARGE])), path
    )
    (message,) = update["messages"]
    assert message.status == "error" and "rejected this call. Reason: too much" in message.content
    assert COUNT == [] and SPEC.outcome(update) == (Outcome.SKIP, "rejected by the user")


def test_a_tool_may_set_its_own_call_timeout(path: Path) -> None:
    def quick_enough() -> str:
        return "ok"

    bounded_tool = StructuredTool.from_function(
        quick_enough, name="own", description="Own timeout.", metadata={"timeout_s": None}
    )
    from noema_graph.nodes.tool_node import timeout_of

    made = deps(tools=[bounded_tool], tool_timeout_s=0.2)
    assert timeout_of(bounded_tool, made) is None
    assert timeout_of(add, made) == 0.2
    update = run(tool_node(group(call("own")), runtime(), made), path)
    assert update["messages"][0].content == "ok"
