"""Replay BFCL multi-turn tasks through the agent graph against their stateful backends.

The Berkeley Function Calling Leaderboard (``bfcl-eval`` on PyPI, installed with
``pip install --no-deps bfcl-eval==2026.3.23 mpmath``: its own dependencies would replace our
numpy and pull torch) ships the multi-turn tasks, their gold calls and the backends they run
against (a file system, a trading bot, travel, messaging, vehicle APIs) inside its wheel.

For one task this module builds fresh backend instances from the task's initial config,
wraps every public backend method as a LangChain tool, and replays the gold calls through
``build_agent_graph`` with a scripted, zero-latency model: each gold call in its own AI
message ("sequential") or each turn's calls in one message ("batched"). The backends' end
state is compared with a direct, in-order execution of the same calls, the way BFCL's own
checker compares states (public attributes of each backend instance).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import copy
import importlib
import inspect
import json
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool

from noema_graph import AgentConfig, build_agent_graph
from noema_graph.tools.concurrency import CONCURRENCY_SAFE
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

Mode = Literal["sequential", "batched"]
Delay = Callable[[str], float]
"""Seconds a call waits before it acts, from its call id ``t<turn>c<index>n<count>``."""
CATEGORY = "multi_turn_base"
_BACKENDS = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
_STATELESS = frozenset({"MathAPI"})

READ_ONLY = frozenset(
    {
        # GorillaFileSystem: reads of the tree (they depend on the current directory)
        *("cat", "diff", "du", "find", "grep", "ls", "pwd", "sort", "tail", "wc"),
        # MathAPI holds no state at all
        *("absolute_value", "add", "divide", "imperial_si_conversion", "logarithm"),
        *("max_value", "mean", "min_value", "multiply", "percentage", "power"),
        *("round_number", "si_unit_conversion", "square_root", "standard_deviation"),
        *("subtract", "sum_values"),
        # MessageAPI, TwitterAPI, TicketAPI
        *("get_message_stats", "get_user_id", "list_users", "message_get_login_status"),
        *("search_messages", "view_messages_sent", "get_tweet", "get_tweet_comments"),
        *("get_user_stats", "get_user_tweets", "list_all_following", "search_tweets"),
        *("posting_get_login_status", "get_ticket", "get_user_tickets"),
        "ticket_get_login_status",
        # TradingBot
        *("filter_stocks_by_price", "get_account_info", "get_available_stocks"),
        *("get_current_time", "get_order_details", "get_order_history", "get_stock_info"),
        *("get_symbol_by_name", "get_transaction_history", "get_watchlist"),
        "trading_get_login_status",
        # TravelAPI
        *("compute_exchange_rate", "get_all_credit_cards", "get_booking_history"),
        *("get_budget_fiscal_year", "get_credit_card_balance"),  # not get_flight_cost: it
        # fills a private price lookup that book_flight reads
        *("get_nearest_airport_by_city", "list_all_airports", "retrieve_invoice"),
        "travel_get_login_status",
        # VehicleControlAPI (the outside-temperature calls draw from its random generator)
        *("check_tire_pressure", "displayCarStatus", "display_log", "estimate_distance"),
        *("estimate_drive_feasibility_by_mileage", "find_nearest_tire_shop"),
        *("gallon_to_liter", "get_current_speed", "get_zipcode_based_on_city"),
        "liter_to_gallon",
    }
)
"""Backend methods that change no state; the direct replay checks this on every call."""


@dataclass(frozen=True)
class GoldCall:
    """One gold function call: the method name and its keyword arguments."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Task:
    """One multi-turn task: backends to build and the gold calls of each turn."""

    id: str
    classes: tuple[str, ...]
    initial_config: dict[str, Any]
    turns: tuple[tuple[str, ...], ...]


def _data(*parts: str) -> list[dict[str, Any]]:
    path = resources.files("bfcl_eval").joinpath("data", *parts)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_tasks(limit: int | None = None) -> list[Task]:
    """Return the first ``limit`` tasks of the multi-turn base category (all 200 by default)."""
    questions = _data(f"BFCL_v4_{CATEGORY}.json")
    answers = _data("possible_answer", f"BFCL_v4_{CATEGORY}.json")
    gold = {row["id"]: row["ground_truth"] for row in answers}
    tasks = [
        Task(
            id=row["id"],
            classes=tuple(row["involved_classes"]),
            initial_config=row["initial_config"],
            turns=tuple(tuple(turn) for turn in gold[row["id"]]),
        )
        for row in questions
    ]
    return tasks[:limit]


def make_backends(task: Task) -> dict[str, Any]:
    """Return fresh backend instances for ``task``, loaded with its initial config."""
    instances: dict[str, Any] = {}
    for name in task.classes:
        instance = getattr(importlib.import_module(f"{_BACKENDS}.{_MODULES[name]}"), name)()
        if name not in _STATELESS:
            config = copy.deepcopy(task.initial_config.get(name, {}))
            instance._load_scenario(config, long_context=False)
        instances[name] = instance
    return instances


def methods(backends: dict[str, Any]) -> dict[str, Callable[..., Any]]:
    """Return every public method of ``backends`` by name."""
    found: dict[str, Callable[..., Any]] = {}
    for instance in backends.values():
        for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not name.startswith("_"):
                found[name] = method
    return found


def parse_call(source: str, available: dict[str, Callable[..., Any]]) -> GoldCall:
    """Parse a gold call such as ``"cp(source='a', destination='b')"`` into keyword arguments."""
    node = ast.parse(source, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {source!r}")
    args = [ast.literal_eval(arg) for arg in node.args]
    kwargs = {str(kw.arg): ast.literal_eval(kw.value) for kw in node.keywords}
    bound = inspect.signature(available[node.func.id]).bind(*args, **kwargs)
    return GoldCall(node.func.id, dict(bound.arguments))


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, default=str)


class ReplayTool(StructuredTool):
    """A backend method as a tool; ``delay`` makes a tool call wait before it acts.

    The wait models backend latency: calls run one after another are unaffected by it,
    calls run concurrently finish in an order it decides.
    """

    delay: Delay | None = None

    def invoke(
        self, input: str | dict[str, Any] | Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """Wait ``delay(call id)`` seconds, then run the tool; see ``BaseTool.invoke``."""
        if (wait := self._wait(input)) > 0:  # sleep(0) would still yield the GIL
            time.sleep(wait)
        return super().invoke(input, config, **kwargs)

    async def ainvoke(
        self, input: str | dict[str, Any] | Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """Async :meth:`invoke`."""
        if (wait := self._wait(input)) > 0:
            await asyncio.sleep(wait)
        return await super().ainvoke(input, config, **kwargs)

    def _wait(self, input: Any) -> float:
        if self.delay is None or not isinstance(input, dict) or "id" not in input:
            return 0.0
        return self.delay(str(input["id"]))


def backend_tool(name: str, method: Callable[..., Any], delay: Delay | None = None) -> BaseTool:
    """Wrap one backend method as a tool; only :data:`READ_ONLY` methods are concurrency-safe.

    The JSON-schema ``args_schema`` names the parameters without types, so the method
    receives exactly the gold arguments, as in the direct replay.
    """
    parameters = inspect.signature(method).parameters
    schema = {
        "type": "object",
        "properties": {param: {} for param in parameters},
        "required": [
            p for p, spec in parameters.items() if spec.default is inspect.Parameter.empty
        ],
    }
    doc = (inspect.getdoc(method) or name).split("\n\n")[0]

    def run(**arguments: Any) -> str:
        return _as_text(method(**arguments))

    return ReplayTool(
        name=name,
        description=doc,
        args_schema=schema,
        func=run,
        metadata={CONCURRENCY_SAFE: True} if name in READ_ONLY else {},
        delay=delay,
    )


def _position(call_id: str) -> tuple[int, int]:
    """Return (index, count) of a call in its message from its id ``t<turn>c<index>n<count>``."""
    index, count = call_id.split("c", 1)[1].split("n")
    return int(index), int(count)


def reverse_delay(step_s: float) -> Delay:
    """Return a delay under which calls run concurrently act in reverse message order."""

    def delay(call_id: str) -> float:
        index, count = _position(call_id)
        return (count - 1 - index) * step_s

    return delay


def jitter_delay(most_s: float, seed: int = 0) -> Delay:
    """Return a delay drawn uniformly from [0, most_s] per call (the same for the same id)."""

    def delay(call_id: str) -> float:
        return random.Random(f"{seed}:{call_id}").uniform(0.0, most_s)

    return delay


def end_state(backends: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return each backend's public attributes (what BFCL's state checker compares)."""
    return {
        name: {key: value for key, value in vars(instance).items() if not key.startswith("_")}
        for name, instance in backends.items()
    }


def _snapshot(backends: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return every attribute, private ones included (random generators by their state)."""
    return {
        name: {
            key: value.getstate() if isinstance(value, random.Random) else copy.deepcopy(value)
            for key, value in vars(instance).items()
        }
        for name, instance in backends.items()
    }


def replay_direct(task: Task) -> dict[str, Any]:
    """Run the gold calls in order straight on fresh backends; return the backends.

    Raises:
        AssertionError: a method listed in :data:`READ_ONLY` changed the backends' state.
    """
    backends = make_backends(task)
    available = methods(backends)
    for turn in task.turns:
        for source in turn:
            gold = parse_call(source, available)
            before = _snapshot(backends) if gold.name in READ_ONLY else None
            # the agent's tool node turns any exception into an error observation: so do we
            with contextlib.suppress(Exception):
                available[gold.name](**gold.args)
            if before is not None and _snapshot(backends) != before:
                raise AssertionError(
                    f"{task.id}: {gold.name} is listed read-only but changed state"
                )
    return backends


def _messages(task: Task, available: dict[str, Callable[..., Any]], mode: Mode) -> list[AIMessage]:
    replies: list[AIMessage] = []
    for number, turn in enumerate(task.turns):
        calls = [
            call(gold.name, gold.args, f"t{number}c{index}n{len(turn)}")
            for index, gold in enumerate(parse_call(source, available) for source in turn)
        ]
        if not calls:
            continue
        if mode == "batched":
            replies.append(tools_reply(*calls))
        else:
            replies.extend(tools_reply(one) for one in calls)
    return replies


def replay_graph(
    task: Task, mode: Mode, *, delay: Delay | None = None, use_async: bool = False
) -> dict[str, Any]:
    """Replay the gold calls through the agent graph on fresh backends; return the backends.

    Args:
        task: The task to replay.
        mode: One AI message per gold call ("sequential") or per turn ("batched").
        delay: Latency of each call before it acts (none by default).
        use_async: Run the graph with ``ainvoke`` instead of ``invoke``.
    """
    backends = make_backends(task)
    available = methods(backends)
    replies = _messages(task, available, mode)
    model = ScriptedChatModel(script=[plan_reply("replay the turns"), *replies, text("done")])
    most_calls = max((len(reply.tool_calls) for reply in replies), default=1)
    config = AgentConfig(
        enabled_toolkits=(),
        max_iterations=len(replies) + 2,
        max_tool_calls_per_step=max(most_calls, 5),
        reflection_interval=10_000,
        loop_threshold=10_000,
        price_overrides={"scripted": (0.0, 0.0)},
    )
    tools = [backend_tool(name, method, delay) for name, method in available.items()]
    graph = build_agent_graph(config, model=model, tools=tools)
    request = {"messages": [("user", f"replay {task.id}")]}
    state = asyncio.run(graph.ainvoke(request)) if use_async else graph.invoke(request)
    model.assert_complete()
    if not state["output"]["success"]:
        raise AssertionError(f"{task.id} ({mode}): the run failed: {state['output']['error']}")
    return backends


def state_diff(task: Task, mode: Mode, **options: Any) -> dict[str, tuple[Any, Any]]:
    """Return where replaying ``task`` in ``mode`` ends away from the direct replay's state.

    Keys are ``"<backend>.<attribute>"``, values (replayed, direct); empty when the end
    states match. ``options`` go to :func:`replay_graph` (``delay``, ``use_async``).
    """
    got, want = end_state(replay_graph(task, mode, **options)), end_state(replay_direct(task))
    return {
        f"{backend}.{key}": (got[backend].get(key), value)
        for backend, attributes in want.items()
        for key, value in attributes.items()
        if got[backend].get(key) != value
    }


def dependent_tasks(tasks: Iterable[Task]) -> list[Task]:
    """Return the tasks with a turn of several calls where one changes state."""
    return [
        task
        for task in tasks
        if any(
            len(turn) > 1 and any(source.split("(")[0] not in READ_ONLY for source in turn)
            for turn in task.turns
        )
    ]
