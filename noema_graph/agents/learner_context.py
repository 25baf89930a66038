"""Who the run is for: the learner from LangGraph's run context or config, never the request.

The CLI's ``--user``, the facade's ``user_id=``, the evaluation runner and the LangGraph
server name the learner the LangGraph way::

    graph.invoke(inputs, context=RunContext(user_id="ben"))
    graph.invoke(inputs, {"configurable": {"user_id": "ben"}})

The request's text never names it: nothing is appended to the request, and a tool argument
that names the learner (``user_id``) is injected by the framework from the run
(:meth:`RunLearner.owner`, see :mod:`noema_graph.tools.injection`), never written by the
model. A run that names no learner (an anonymous invocation) gets a refusal from every tool
that reads or writes a learner's rows.

:func:`with_learner_hooks` adds a pre hook to the agent's first node: a learner unknown to
the store ends the run with ``hook_error`` naming the learners it knows, and a request that
names another learner or id ends it with ``forbidden`` ("You can only see your own data.",
see :mod:`noema_graph.agents.named_learners`) before any model or tool call.

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

from noema_graph.agents.learners import Learner, find_learner, read_learners
from noema_graph.agents.named_learners import other_learner
from noema_graph.context import RunContext, run_user
from noema_graph.errors import ConfigurationError, Forbidden
from noema_graph.hooks import HookCall, Hooks
from noema_graph.tools.results import ToolFailure

NO_LEARNER = (
    "Refused: this tool reads or writes a learner's own data and this run names no learner. "
    "Fix: run it for a learner (--user NAME, RunContext(user_id=...), or the user_id of "
    "LangGraph's context or configurable)."
)
"""The observation of a call that needs a learner in a run that names none."""


def requested_user(context: RunContext) -> str | None:
    """Return the learner the run names: ``context.user_id``, else ``configurable.user_id``.

    ``RunContext``'s default user (``"anonymous"``) names nobody.

    Raises:
        ConfigurationError: ``configurable.user_id`` is neither text nor an integer id.
    """
    try:
        configurable = get_config().get("configurable")
    except RuntimeError:  # outside a run: no config
        configurable = None
    return run_user(context, configurable)


class RunLearner:
    """The run's learner, for the hooks and for the tools' owner arguments.

    Args:
        db: The learning store the agent's tools work on (named in errors).
        learners: The store's learners, read when the graph is built.
    """

    def __init__(self, db: str | Path, learners: Sequence[Learner]) -> None:
        self.db = db
        self.learners = list(learners)

    def owner(self, user: str | None) -> dict[str, Any]:
        """Return the owner arguments of a tool call for the run's ``user`` (its ``user_id``).

        Raises:
            ToolFailure: ``forbidden`` when the run names no learner, or one the store lacks.
        """
        if user is None:
            raise ToolFailure(NO_LEARNER, type_="forbidden", recoverable=False)
        try:
            learner = find_learner(self.learners, user, self.db)
        except ConfigurationError as exc:
            raise ToolFailure(str(exc), type_="forbidden", recoverable=False) from None
        return {"user_id": learner.id}

    def before(self, call: HookCall) -> dict[str, Any] | None:
        """Check the run's learner and the latest request (nothing to change).

        Raises:
            ConfigurationError: The run names a learner the store does not hold, or a
                ``user_id`` of the wrong type.
            Forbidden: The latest request names another learner or id.
        """
        user = requested_user(call.context)
        own = find_learner(self.learners, user, self.db) if user is not None else None
        messages: Sequence[BaseMessage] = call.state.get("messages") or ()
        request = next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        mention = other_learner(request, own, self.learners)
        if mention is not None:
            whose = f"learner {own.name!r}" if own is not None else "no learner"
            raise Forbidden(
                f"The request names another learner ({mention!r}); this run is for {whose}. "
                "You can only see your own data."
            )
        return None


def run_learner(db: str | Path) -> RunLearner:
    """Return the :class:`RunLearner` of the store at ``db`` (its learners are read now)."""
    return RunLearner(db, read_learners(db))


def with_learner_hooks(hooks: Hooks, node: str, learner: RunLearner) -> Hooks:
    """Return ``hooks`` with the learner check first on ``node`` (the agent's first node)."""
    return hooks.model_copy(
        update={"pre_process": _prepend(hooks.pre_process, node, learner.before)}
    )


def _prepend(
    table: Mapping[str, tuple[Any, ...]], node: str, hook: Any
) -> dict[str, tuple[Any, ...]]:
    return {**table, node: (hook, *table.get(node, ()))}
