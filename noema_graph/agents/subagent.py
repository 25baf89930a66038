"""Another agent as a tool: ``consult_<name>`` runs the child graph and reports its output.

The child runs under its own limits, with the parent's trace id, user, correlation id and
abort switch, one level deeper. Past ``max_depth`` the call is refused with an error
observation. The child's whole output contract travels in the tool's artifact under
:data:`~noema_graph.tools.results.SUBAGENT_OUTPUT`, so the parent's trace keeps the child's
trace and the parent's usage and cost include the child's.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from noema_graph.context import DEFAULT_CONTEXT, RunContext, current_scope
from noema_graph.tools.results import SUBAGENT_OUTPUT

MAX_DEPTH = 2
"""Deepest nesting allowed: a top-level run is depth 0, its subagents depth 1, theirs 2."""

GraphFactory = Callable[[], Any]


class ConsultInput(BaseModel):
    """Arguments of a ``consult_<agent>`` tool."""

    question: str = Field(
        min_length=1, description="The request for the other agent (it runs for the same learner)."
    )


def child_context(parent_agent: str, child_agent: str, max_depth: int = MAX_DEPTH) -> RunContext:
    """Return the run context of a child run started from the current tool call.

    Raises:
        ToolException: The child would run deeper than ``max_depth``.
    """
    scope = current_scope()
    parent = scope.context if scope is not None else DEFAULT_CONTEXT
    depth = parent.depth + 1
    if depth > max_depth:
        msg = (
            f"Refused: consulting {child_agent!r} would nest agents {depth} deep "
            f"(limit {max_depth}); answer with what you have."
        )
        raise ToolException(msg)
    return replace(
        parent,
        trace_id=scope.trace_id if scope is not None else parent.trace_id,
        depth=depth,
        metadata={
            **parent.metadata,
            "parent_agent": parent_agent,
            "parent_run_id": scope.run_id if scope is not None else None,
        },
    )


def _observation(child_agent: str, output: dict[str, Any]) -> str:
    summary = {
        "agent": child_agent,
        "success": output["success"],
        "result": output["result"],
        "error": output["error"],
    }
    return json.dumps(summary, default=str)


def _detached() -> contextvars.Context:
    """Return a copy of the current context without the parent's runnable config.

    Otherwise LangGraph would run the child as a subgraph of the tool call's graph: inside
    the parent's checkpoint namespace, with its durability and callbacks. Other context
    (logging, tracing scopes) is kept.
    """
    context = contextvars.copy_context()
    context.run(var_child_runnable_config.set, None)
    return context


def _invoke(graph: Any, inputs: dict[str, Any], context: RunContext) -> dict[str, Any]:
    return graph.invoke(inputs, context=context)


class _LazyGraph:
    """Build the child graph on first use (agents may consult each other in a cycle)."""

    def __init__(self, factory: GraphFactory) -> None:
        self._factory = factory
        self._graph: Any = None
        self._lock = threading.Lock()

    def __call__(self) -> Any:
        with self._lock:
            if self._graph is None:
                self._graph = self._factory()
            return self._graph


def subagent_tool(
    parent_agent: str,
    child_agent: str,
    description: str,
    build_child: GraphFactory,
    *,
    max_depth: int = MAX_DEPTH,
) -> BaseTool:
    """Return the ``consult_<child_agent>`` tool of ``parent_agent``.

    Args:
        parent_agent: Name of the agent that gets the tool (recorded in the child's context).
        child_agent: Name of the agent consulted.
        description: What the child does (the tool's description for the model).
        build_child: Returns the child's compiled graph; called once, on first use.
        max_depth: Deepest nesting allowed.
    """
    graph = _LazyGraph(build_child)

    def consult(question: str) -> tuple[str, dict[str, Any]]:
        context = child_context(parent_agent, child_agent, max_depth)
        inputs = {"messages": [("user", question)]}
        state = _detached().run(_invoke, graph(), inputs, context)
        return _observation(child_agent, state["output"]), {SUBAGENT_OUTPUT: state["output"]}

    async def aconsult(question: str) -> tuple[str, dict[str, Any]]:
        context = child_context(parent_agent, child_agent, max_depth)
        inputs = {"messages": [("user", question)]}
        run = graph().ainvoke(inputs, context=context)
        state = await asyncio.create_task(run, context=_detached())
        return _observation(child_agent, state["output"]), {SUBAGENT_OUTPUT: state["output"]}

    return StructuredTool.from_function(
        func=consult,
        coroutine=aconsult,
        name=f"consult_{child_agent}",
        description=f"Ask the {child_agent} agent: {description}",
        args_schema=ConsultInput,
        response_format="content_and_artifact",
        handle_tool_error=True,
        # the child's run has its own time budget and ends in its finalize: no call timeout
        metadata={"timeout_s": None},
    )
