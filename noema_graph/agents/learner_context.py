"""Who the run is for, from LangGraph's run context or config, into the agent's request.

The agents' prompts read the learner from the end of the request (``[learner: ben, user_id
2]``, see :func:`~noema_graph.agents.learners.learner_request`). The CLI and the facade write
that suffix themselves; a LangGraph client (``langgraph dev``, Studio, ``langgraph_sdk``)
names the learner the LangGraph way instead::

    graph.invoke(inputs, context=RunContext(user_id="ben"))
    graph.invoke(inputs, {"configurable": {"user_id": "ben"}})

:func:`with_learner_hooks` adds a pre and a post hook to the agent's first node: when the run
names a learner and the latest request does not, the pre hook appends the learner's identity
to it (the first node sees it) and the post hook writes the identified request into the
thread (every later node, and the thread's history, see it). A learner unknown to the store
ends the run with ``hook_error`` naming the learners it knows.

The learners are read when the graph is built, not while it runs: a hook runs inside the
event loop of an async run, where reading a file would block it. A graph built before a
learner was added does not know that learner; build it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.config import get_config

from noema_graph.agents.learners import (
    LEARNER_MARKER,
    Learner,
    find_learner,
    learner_suffix,
    read_learners,
)
from noema_graph.context import DEFAULT_CONTEXT, RunContext
from noema_graph.hooks import HookCall, Hooks

IDENTIFIED = "noema_learner"
"""``additional_kwargs`` key of a request the pre hook identified (the learner's name)."""


def requested_user(context: RunContext) -> str | None:
    """Return the learner the run names: ``context.user_id``, else ``configurable.user_id``.

    ``RunContext``'s default user (``"anonymous"``) names nobody.
    """
    if context.user_id and context.user_id != DEFAULT_CONTEXT.user_id:
        return str(context.user_id)
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # outside a run: no config
        return None
    user = configurable.get("user_id")
    return None if user is None or str(user) in ("", DEFAULT_CONTEXT.user_id) else str(user)


def _latest_human(messages: Sequence[BaseMessage]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    return None


def identified(message: BaseMessage, learner: Learner) -> BaseMessage:
    """Return ``message`` with the learner's identity appended (text or content blocks)."""
    suffix = learner_suffix(learner)
    content = message.content
    if isinstance(content, str):
        new_content: str | list[Any] = f"{content}\n\n{suffix}"
    else:
        new_content = [*content, {"type": "text", "text": suffix}]
    extra = {**message.additional_kwargs, IDENTIFIED: learner.name}
    return message.model_copy(update={"content": new_content, "additional_kwargs": extra})


class LearnerFromContext:
    """The pre and post hooks that carry the run's learner into its request.

    Args:
        db: The learning store the agent's tools work on (named in errors).
        learners: The store's learners, read when the graph is built.
    """

    def __init__(self, db: str | Path, learners: Sequence[Learner]) -> None:
        self.db = db
        self.learners = list(learners)

    def before(self, call: HookCall) -> dict[str, Any] | None:
        """Append the run's learner to the latest request unless it names one already.

        Raises:
            ConfigurationError: The run names a learner the store does not hold.
        """
        user = requested_user(call.context)
        messages: list[BaseMessage] = list(call.state.get("messages") or [])
        index = _latest_human(messages)
        if user is None or index is None or LEARNER_MARKER in messages[index].text:
            return None
        learner = find_learner(self.learners, user, self.db)
        messages[index] = identified(messages[index], learner)
        return {"messages": messages}

    def after(self, call: HookCall, update: dict[str, Any]) -> dict[str, Any] | None:
        """Write the request :meth:`before` identified into the thread (replaced by its id)."""
        messages: list[BaseMessage] = list(call.state.get("messages") or [])
        index = _latest_human(messages)
        if index is None or IDENTIFIED not in messages[index].additional_kwargs:
            return None
        return {**update, "messages": [messages[index], *update.get("messages", [])]}


def with_learner_hooks(hooks: Hooks, node: str, db: str | Path) -> Hooks:
    """Return ``hooks`` with the learner hooks first on ``node`` (the agent's first node).

    Reads the learners of ``db`` now (see the module docstring for why).
    """
    carrier = LearnerFromContext(db, read_learners(db))
    return Hooks(
        pre_process=_prepend(hooks.pre_process, node, carrier.before),
        post_process=_prepend(hooks.post_process, node, carrier.after),
    )


def _prepend(
    table: Mapping[str, tuple[Any, ...]], node: str, hook: Any
) -> dict[str, tuple[Any, ...]]:
    return {**table, node: (hook, *table.get(node, ()))}
