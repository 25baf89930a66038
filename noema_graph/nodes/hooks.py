"""Pre/post-process hooks around a node, applied by :mod:`noema_graph.nodes.middleware`.

Hook semantics are documented in :mod:`noema_graph.hooks`. A failing hook never raises out
of the graph: the node's update becomes ``{"hook_error": HookFailure}`` (usage already spent
is kept) and the routers end the run in ``finalize``, whose output carries the error code.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeVar, cast, overload

from langgraph.errors import GraphBubbleUp

from noema_graph.config import AgentConfig
from noema_graph.errors import Forbidden, HookVeto
from noema_graph.events import HookFailed
from noema_graph.hooks import AGENT, HookCall
from noema_graph.nodes.common import ctx, emit
from noema_graph.nodes.deps import NodeRuntime
from noema_graph.state.models import HookFailure
from noema_graph.state.output import AgentError, AgentOutput

logger = logging.getLogger(__name__)

KEPT_ON_FAILURE = ("usage", "elapsed_s")

Stage = Literal["pre_process", "post_process"]
UpdateT = TypeVar("UpdateT", bound=Mapping[str, object])


def _keys(node: str, stage: Stage, *, first: bool, final: bool) -> list[str]:
    """Return hook keys in run order: the run's own hooks wrap the first and final nodes'."""
    if stage == "pre_process":
        return [AGENT, node] if first else [node]
    return [node, AGENT] if final else [node]


def _failure(node: str, stage: Stage, exc: Exception) -> HookFailure:
    code: Literal["hook_error", "hook_veto", "forbidden"] = "hook_error"
    if isinstance(exc, HookVeto):
        code = "forbidden" if isinstance(exc, Forbidden) else "hook_veto"
    message = str(exc) if isinstance(exc, HookVeto) else f"{type(exc).__name__}: {exc}"
    return HookFailure(code=code, node=node, stage=stage, message=message)


@overload
def run_hooks(
    config: AgentConfig,
    call: HookCall,
    stage: Literal["pre_process"],
    update: None,
    *,
    first: bool,
    final: bool,
) -> tuple[dict[str, object], HookFailure | None]: ...


@overload
def run_hooks(
    config: AgentConfig,
    call: HookCall,
    stage: Literal["post_process"],
    update: UpdateT,
    *,
    first: bool,
    final: bool,
) -> tuple[UpdateT, HookFailure | None]: ...


def run_hooks(
    config: AgentConfig,
    call: HookCall,
    stage: Stage,
    update: Mapping[str, object] | None,
    *,
    first: bool,
    final: bool,
) -> tuple[Mapping[str, object], HookFailure | None]:
    """Apply the hooks of ``stage``; return the patch (pre) or the new update (post).

    A post hook returns the node's update, changed: it is taken as the node's own type.
    """
    node = call.node
    table = config.hooks.pre_process if stage == "pre_process" else config.hooks.post_process
    result: dict[str, object] = {} if update is None else dict(update)
    for key in _keys(node, stage, first=first, final=final):
        for hook in table.get(key, ()):
            try:
                if update is None:
                    changed = hook(call)  # pyright: ignore[reportCallIssue]  # a pre hook
                    result = {**result, **(changed or {})}
                    call = HookCall(
                        call.agent, node, MappingProxyType({**call.state, **result}), call.context
                    )
                else:
                    changed = hook(call, dict(result))  # pyright: ignore[reportCallIssue]  # post
                    result = dict(changed) if changed is not None else result
            except GraphBubbleUp:
                raise
            # A hook is user code: any exception ends the run cleanly with hook_error.
            except Exception as exc:
                return result, _failure(node, stage, exc)
    return result, None


def failed_output(output: Mapping[str, object], failure: HookFailure) -> dict[str, Any]:
    """Return ``output`` turned into a failed contract.

    The result is dropped, except for a ``forbidden`` refusal: its message is written for
    the learner ("You can only see your own data."), so it is both the answer and
    ``error.message``, as the request reader's refusals are.
    """
    contract = AgentOutput.model_validate(output)
    forbidden = failure.code == "forbidden"
    error = AgentError(
        code=failure.code,
        message=(
            failure.message
            if forbidden
            else f"{failure.stage} hook of {failure.node!r} failed: {failure.message}"
        ),
        details=failure.model_dump(mode="json"),
        recoverable=failure.code == "hook_veto",
    )
    outcome = "terminate" if failure.code == "hook_veto" else "error"
    failed = contract.model_copy(
        update={
            "success": False,
            "result": failure.message if forbidden else None,
            "validated": None,
            "error": error,
            "outcome": outcome,
        }
    )
    return failed.model_dump(mode="json")


def hook_call(
    config: AgentConfig, node: str, state: Mapping[str, object], runtime: NodeRuntime
) -> HookCall:
    """Return what the hooks of ``node`` are told about this execution."""
    return HookCall(config.name, node, MappingProxyType(dict(state)), ctx(runtime))


def report(runtime: NodeRuntime, state: Mapping[str, object], failure: HookFailure) -> None:
    """Log a hook failure and emit its ``hook_failed`` event."""
    logger.warning("%s hook of %s ended the run: %s", failure.stage, failure.node, failure.message)
    emit(
        runtime,
        HookFailed(
            code=failure.code, node=failure.node, stage=failure.stage, message=failure.message
        ),
        state,
    )


def on_failure(update: UpdateT, failure: HookFailure, *, final: bool) -> UpdateT:
    """Return the update of a node whose hook failed: a final node keeps a failed output."""
    if final and "output" in update:
        output = cast(Mapping[str, object], update["output"])  # a final node's contract
        failed = {**update, "output": failed_output(output, failure), "hook_error": failure}
    else:
        kept: dict[str, object] = {k: update.get(k) for k in KEPT_ON_FAILURE if k in update}
        failed = {**kept, "hook_error": failure}
    return cast(UpdateT, failed)  # channels of the node's own update, and hook_error
