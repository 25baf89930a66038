"""Run a node inside its pre/post-process hooks and stamp the update with its outcome.

Hook semantics are documented in :mod:`noema_graph.hooks`. A failing hook never raises out
of the graph: the node's update becomes ``{"hook_error": HookFailure}`` (usage already spent
is kept) and the routers end the run in ``finalize``, whose output carries the error code.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from noema_graph.config import AgentConfig
from noema_graph.errors import HookVeto
from noema_graph.events import HookFailed
from noema_graph.hooks import AGENT, HookCall
from noema_graph.nodes.common import ctx, emit
from noema_graph.nodes.outcomes import classify
from noema_graph.state.models import HookFailure
from noema_graph.state.output import AgentError, AgentOutput

logger = logging.getLogger(__name__)

FIRST_NODES = frozenset({"plan", "recall_memory"})
FINAL_NODES = frozenset({"finalize", "generate_answer"})
KEPT_ON_FAILURE = ("usage", "elapsed_s")

Stage = Literal["pre_process", "post_process"]
NodeFn = Callable[[Any, Runtime[Any]], dict[str, Any]]
AsyncNodeFn = Callable[[Any, Runtime[Any]], Awaitable[dict[str, Any]]]


def _keys(node: str, stage: Stage) -> list[str]:
    """Return hook keys in run order: the run's own hooks wrap the node's."""
    if stage == "pre_process":
        return [AGENT, node] if node in FIRST_NODES else [node]
    return [node, AGENT] if node in FINAL_NODES else [node]


def _failure(node: str, stage: Stage, exc: Exception) -> HookFailure:
    code: Literal["hook_error", "hook_veto"] = (
        "hook_veto" if isinstance(exc, HookVeto) else "hook_error"
    )
    message = str(exc) if isinstance(exc, HookVeto) else f"{type(exc).__name__}: {exc}"
    return HookFailure(code=code, node=node, stage=stage, message=message)


def _run_hooks(
    config: AgentConfig, node: str, stage: Stage, call: HookCall, update: dict[str, Any] | None
) -> tuple[dict[str, Any], HookFailure | None]:
    """Apply the hooks of ``stage``; return the patch (pre) or the new update (post)."""
    table = config.hooks.pre_process if stage == "pre_process" else config.hooks.post_process
    result: dict[str, Any] = {} if update is None else update
    for key in _keys(node, stage):
        for hook in table.get(key, ()):
            try:
                if update is None:
                    changed = hook(call)  # type: ignore[call-arg]  # pre hooks take the call only
                    result = {**result, **(changed or {})}
                    call = HookCall(
                        call.agent, node, MappingProxyType({**call.state, **result}), call.context
                    )
                else:
                    changed = hook(call, dict(result))  # type: ignore[call-arg]  # post: call, update
                    result = dict(changed) if changed is not None else result
            except GraphBubbleUp:
                raise
            # A hook is user code: any exception ends the run cleanly with hook_error.
            except Exception as exc:
                return result, _failure(node, stage, exc)
    return result, None


def failed_output(output: Mapping[str, Any], failure: HookFailure) -> dict[str, Any]:
    """Return ``output`` turned into a failed contract (the result is dropped)."""
    contract = AgentOutput.model_validate(output)
    error = AgentError(
        code=failure.code,
        message=f"{failure.stage} hook of {failure.node!r} failed: {failure.message}",
        details=failure.model_dump(mode="json"),
        recoverable=failure.code == "hook_veto",
    )
    outcome = "terminate" if failure.code == "hook_veto" else "error"
    failed = contract.model_copy(
        update={
            "success": False,
            "result": None,
            "validated": None,
            "error": error,
            "outcome": outcome,
        }
    )
    return failed.model_dump(mode="json")


class Wrapped:
    """A node with its hooks, as the sync and async callables LangGraph runs."""

    def __init__(self, name: str, fn: NodeFn, afn: AsyncNodeFn, config: AgentConfig) -> None:
        """Wrap ``fn``/``afn`` (called with the state and the runtime) for node ``name``."""
        self.name, self.fn, self.afn, self.config = name, fn, afn, config

    def _call(self, state: Any, runtime: Runtime[Any]) -> HookCall:
        return HookCall(self.config.name, self.name, MappingProxyType(dict(state)), ctx(runtime))

    def _before(self, state: Any, runtime: Runtime[Any]) -> tuple[Any, HookFailure | None]:
        patch, failure = _run_hooks(
            self.config, self.name, "pre_process", self._call(state, runtime), None
        )
        if failure is not None:
            self._report(runtime, state, failure)
            return {**state, "hook_error": failure}, failure
        return ({**state, **patch} if patch else state), None

    def _after(
        self,
        state: Any,
        runtime: Runtime[Any],
        update: dict[str, Any],
        earlier: HookFailure | None,
    ) -> dict[str, Any]:
        if earlier is None:
            update, failure = _run_hooks(
                self.config, self.name, "post_process", self._call(state, runtime), update
            )
        else:
            failure = earlier
        if failure is not None:
            if earlier is None:
                self._report(runtime, state, failure)
            update = self._on_failure(update, failure)
        return {**update, "outcome": classify(self.name, update)}

    def _on_failure(self, update: dict[str, Any], failure: HookFailure) -> dict[str, Any]:
        if self.name in FINAL_NODES and "output" in update:
            return {
                **update,
                "output": failed_output(update["output"], failure),
                "hook_error": failure,
            }
        kept = {k: update[k] for k in KEPT_ON_FAILURE if k in update}
        return {**kept, "hook_error": failure}

    def _report(self, runtime: Runtime[Any], state: Any, failure: HookFailure) -> None:
        logger.warning(
            "%s hook of %s ended the run: %s", failure.stage, failure.node, failure.message
        )
        emit(
            runtime,
            HookFailed(
                code=failure.code, node=failure.node, stage=failure.stage, message=failure.message
            ),
            state,
        )

    def sync(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any]:
        """Run pre hooks, the node (skipped after a pre-hook failure), post hooks."""
        seen, failure = self._before(state, runtime)
        if failure is not None and self.name not in FINAL_NODES:
            return self._after(seen, runtime, {}, failure)
        return self._after(seen, runtime, self.fn(seen, runtime), failure)

    async def async_(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any]:
        """Async twin of :meth:`sync`."""
        seen, failure = self._before(state, runtime)
        if failure is not None and self.name not in FINAL_NODES:
            return self._after(seen, runtime, {}, failure)
        return self._after(seen, runtime, await self.afn(seen, runtime), failure)
