"""The one layer around every node: observation, hooks, the typed outcome, run-end work.

:class:`Node` is the runnable a graph registers for a :class:`~noema_graph.nodes.spec.NodeSpec`.
Its logic is one step generator (:meth:`Node.steps`) driven blocking by ``invoke`` and awaited
by ``ainvoke``, so a sync and an async run do exactly the same work in the same order.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import cast

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.runtime import get_runtime

from noema_graph.context import context_of
from noema_graph.effects import Steps, adrive, drive
from noema_graph.errors import RunTimeout
from noema_graph.nodes.common import out_of_time
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.nodes.hooks import hook_call, on_failure, report, run_hooks
from noema_graph.nodes.routing import run_timeout, time_left
from noema_graph.nodes.spec import NodeSpec, StateT, UpdateT
from noema_graph.observability.observer import Observer
from noema_graph.observability.probe import GraphInfo
from noema_graph.state.agent import RouteState, ToolGroup
from noema_graph.state.models import HookFailure
from noema_graph.state.outcome import NodeOutcome, Outcome


class Node(Runnable[StateT, UpdateT]):
    """A node as LangGraph runs it: observed, hooked, its update stamped with its outcome."""

    def __init__(
        self,
        spec: NodeSpec[StateT, UpdateT],
        deps: AgentDeps,
        *,
        observer: Observer,
        info: GraphInfo,
        first: bool = False,
        final: bool = False,
    ) -> None:
        """Wrap ``spec`` for a graph built with ``deps``; ``first``/``final`` place it."""
        self.spec, self.deps, self.observer, self.info = spec, deps, observer, info
        self.first, self.final = first, final
        self.node_name = spec.name
        self.name = spec.name

    def invoke(
        self, input: StateT, config: RunnableConfig | None = None, **kwargs: object
    ) -> UpdateT:
        """Run the node blocking."""
        return drive(self.steps(input, get_runtime(), config or {}))

    async def ainvoke(
        self, input: StateT, config: RunnableConfig | None = None, **kwargs: object
    ) -> UpdateT:
        """Run the node with its I/O awaited."""
        return await adrive(self.steps(input, get_runtime(), config or {}))

    def steps(self, state: StateT, runtime: NodeRuntime, config: RunnableConfig) -> Steps[UpdateT]:
        """Observe the node while its hooks, body and run-end work run."""
        runtime = self._budgeted(state, runtime)
        with self.observer.observe(self.info, self.node_name, state, runtime, config) as call:
            update = yield from self._hooked(state, call.runtime if call else runtime)
            if call is not None:
                call.finish(update)
        return update

    def _budgeted(self, state: StateT, runtime: NodeRuntime) -> NodeRuntime:
        """Return ``runtime`` whose context carries the deadline of the run's time budget."""
        context = context_of(runtime.context)
        if "calls" in state:  # a tool group: sent with it
            calls = cast(ToolGroup, state)["calls"]
            left = calls[0].get("time_left") if calls else None
        elif self.first:  # the run's counters start here
            left = run_timeout(self.deps.config, context)
        else:  # a graph state: the clock channels it lacks read as absent
            left = time_left(cast(RouteState, state), self.deps.config, context)
        if left is None:
            return runtime
        return runtime.override(context=replace(context, deadline=time.monotonic() + left))

    def _body(self, state: StateT, runtime: NodeRuntime) -> Steps[UpdateT]:
        """Run the body; a middle node stopped by the time budget records the budget spent."""
        try:
            return (yield from self.spec.body(state, runtime, self.deps))
        except RunTimeout as exc:
            if self.first or self.final:
                raise  # they end or restart the run's clock themselves
            spent = out_of_time(
                cast(RouteState, state),
                self.node_name,
                exc,
                self.deps.config,
                context_of(runtime.context),
            )
            return cast(UpdateT, spent)  # elapsed_s and trace: channels of every graph

    def _hooked(self, state: StateT, runtime: NodeRuntime) -> Steps[UpdateT]:
        if self.spec.own_hooks:
            update = yield from self._body(state, runtime)
            return stamped(self.spec, update, final=self.final)
        config, where = self.deps.config, {"first": self.first, "final": self.final}
        patch, failure = run_hooks(
            config, hook_call(config, self.node_name, state, runtime), "pre_process", None, **where
        )
        if failure is not None:
            report(runtime, state, failure)
            state = cast(StateT, {**state, "hook_error": failure})
        elif patch:
            state = cast(StateT, {**state, **patch})  # a pre hook patches the node's input
        update = cast(UpdateT, {})
        if failure is None or self.final:
            update = yield from self._body(state, runtime)
        if failure is None:
            call = hook_call(config, self.node_name, state, runtime)
            update, failure = run_hooks(config, call, "post_process", update, **where)
            if failure is not None:
                report(runtime, state, failure)
        if failure is not None:
            update = on_failure(update, failure, final=self.final)
        update = stamped(self.spec, update, final=self.final)
        if self.spec.after is not None:
            yield from self.spec.after(state, update, runtime, self.deps)
        return update


def stamped(spec: NodeSpec[StateT, UpdateT], update: UpdateT, *, final: bool) -> UpdateT:
    """Return ``update`` with the typed outcome of its node (see :func:`stamp`)."""
    return cast(UpdateT, {**update, "outcome": stamp(spec, update, final=final)})


def stamp(spec: NodeSpec[StateT, UpdateT], update: UpdateT, *, final: bool) -> NodeOutcome:
    """Return the typed outcome of ``spec``'s ``update`` (a failed hook decides it first)."""
    failure = update.get("hook_error")
    if isinstance(failure, HookFailure) and not final:
        kind = Outcome.ERROR if failure.code == "hook_error" else Outcome.TERMINATE
        return NodeOutcome(node=spec.name, outcome=kind.value, detail=failure.message)
    kind, detail = spec.outcome(update)
    return NodeOutcome(node=spec.name, outcome=kind.value, detail=detail[:200])
