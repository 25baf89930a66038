"""The one layer around every node: hooks around the body, the stamped outcome, run-end work."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

import pytest
from langgraph.runtime import Runtime

from noema_graph.effects import Steps, adrive, drive, io
from noema_graph.errors import HookVeto
from noema_graph.hooks import AGENT, HookCall, Hooks
from noema_graph.nodes.deps import AgentDeps
from noema_graph.nodes.middleware import Node, stamp
from noema_graph.nodes.spec import NodeSpec
from noema_graph.observability import Observer
from noema_graph.state.models import HookFailure
from noema_graph.state.outcome import Outcome
from tests.nodes.helpers import Path, deps, runtime

LOG: list[str] = []


def step(state: Mapping[str, Any], runtime: Runtime[Any], deps: AgentDeps) -> Steps[dict[str, Any]]:
    """A node body that records what it saw, with one effect in the middle."""

    async def awaited() -> str:
        return "io"

    LOG.append(f"body saw {state.get('note')}")
    done = yield io(lambda: "io", awaited)
    return {"result": done, "usage_note": "kept?"}


def rule(update: Mapping[str, Any]) -> tuple[Outcome, str]:
    return Outcome.SUCCESS, f"result {update.get('result')}"


def after(
    state: Mapping[str, Any], update: dict[str, Any], runtime: Runtime[Any], deps: AgentDeps
) -> Steps[None]:
    LOG.append(f"after saw {update.get('redacted', False)}")
    return
    yield


SPEC = NodeSpec(step, rule, after=after)


def pre(call: HookCall) -> dict[str, Any]:
    LOG.append(f"pre saw {call.state.get('note')}")
    return {"note": "patched"}


def post(call: HookCall, update: dict[str, Any]) -> dict[str, Any]:
    LOG.append(f"post saw {update.get('result')}")
    return {**update, "redacted": True}


def veto(call: HookCall) -> None:
    raise HookVeto("not today")


def broken(call: HookCall) -> None:
    raise KeyError("oops")


def _run(hooks: Hooks, path: Path, *, final: bool = False, spec: NodeSpec = SPEC) -> dict[str, Any]:
    LOG.clear()
    made = deps(hooks=hooks)
    observer = Observer(auto_event_log=False)
    info, _ = observer.prepare(made.config, entry="plan", final="step" if final else "finalize")
    node = Node(spec, made, observer=observer, info=info, final=final)
    steps = node.steps({"note": "original"}, runtime(), {})
    return drive(steps) if path == "sync" else asyncio.run(adrive(steps))


def test_hooks_run_around_the_body_and_after_runs_last(path: Path) -> None:
    update = _run(Hooks(pre_process={"step": (pre,)}, post_process={"step": (post,)}), path)
    assert LOG == ["pre saw original", "body saw patched", "post saw io", "after saw True"]
    assert update["redacted"] is True and "note" not in update  # a pre patch is not written
    assert update["outcome"].node == "step"
    assert (update["outcome"].outcome, update["outcome"].detail) == ("success", "result io")


def test_a_vetoing_pre_hook_skips_the_body(path: Path) -> None:
    update = _run(Hooks(pre_process={"step": (veto,)}), path)
    assert LOG == ["after saw False"]
    assert update["hook_error"].code == "hook_veto" and "result" not in update
    assert update["outcome"].outcome == Outcome.TERMINATE.value
    assert update["outcome"].detail == "not today"


def test_a_broken_hook_is_an_error_outcome(path: Path) -> None:
    update = _run(Hooks(pre_process={"step": (broken,)}), path)
    assert update["hook_error"].code == "hook_error"
    assert update["outcome"].outcome == Outcome.ERROR.value


def test_a_final_node_runs_after_a_failed_hook(path: Path) -> None:
    hooks = Hooks(pre_process={"step": (veto,)}, post_process={AGENT: (post,)})
    update = _run(hooks, path, final=True)
    # the final node still runs (it builds the output), but no post hook after a failed pre hook
    assert LOG == ["body saw original", "after saw False"]
    assert update["hook_error"].code == "hook_veto" and "result" not in update
    assert update["outcome"].detail == "result None"  # a final node's own rule decides


def test_a_node_that_applies_its_own_hooks_is_only_stamped(path: Path) -> None:
    own = NodeSpec(step, rule, own_hooks=True)
    update = _run(Hooks(pre_process={"step": (veto,)}), path, spec=own)
    assert LOG == ["body saw original"] and "hook_error" not in update
    assert update["outcome"].outcome == Outcome.SUCCESS.value


@pytest.mark.parametrize(
    ("code", "final", "outcome", "detail"),
    [
        ("hook_veto", False, Outcome.TERMINATE, "stop"),
        ("hook_error", False, Outcome.ERROR, "stop"),
        ("hook_veto", True, Outcome.SUCCESS, "result None"),
    ],
)
def test_stamp(
    code: Literal["hook_veto", "hook_error"], final: bool, outcome: Outcome, detail: str
) -> None:
    failure = HookFailure(code=code, node="step", stage="pre_process", message="stop")
    stamped = stamp(SPEC, {"hook_error": failure}, final=final)
    assert (stamped.node, stamped.outcome, stamped.detail) == ("step", outcome.value, detail)


def test_stamp_cuts_a_long_detail() -> None:
    spec = NodeSpec(step, lambda _: (Outcome.SUCCESS, "x" * 500))
    assert len(stamp(spec, {}, final=False).detail) == 200
