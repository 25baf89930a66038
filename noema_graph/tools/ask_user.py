"""The ``ask_user`` tool: how the model asks the person for information only they have.

It is offered when ``AgentConfig.clarify`` is on. ``tool_node`` never runs it: a call to it
pauses the graph with LangGraph's ``interrupt()`` carrying the question, and the caller's
answer (``Command(resume="...")``) becomes the call's observation.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool, StructuredTool

from noema_graph.errors import ToolError

ASK_USER = "ask_user"
DESCRIPTION = (
    "Ask the user a question when you need information only they have (a preference, a "
    "missing detail, a choice between options). The run pauses until they answer; the "
    "answer is the observation. Do not use it for facts you can look up with other tools."
)
ARGS_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string", "description": "One short, specific question."}},
    "required": ["question"],
}


def _outside_graph(question: str) -> str:
    msg = (
        f"ask_user({question!r}) can only be answered inside an agent graph run: tool_node "
        "pauses the run and the caller resumes it with the answer"
    )
    raise ToolError(msg)


def ask_user_tool() -> BaseTool:
    """Return the ``ask_user`` tool (safe: no side effect, needs no permission)."""
    return StructuredTool(
        name=ASK_USER,
        description=DESCRIPTION,
        args_schema=ARGS_SCHEMA,
        func=_outside_graph,
        metadata={"idempotency": "safe", "permission": None, "concurrency_safe": False},
    )
