"""Run Noema agents over dataset items and record their trajectories.

Each item runs on its own copy of the learning store (runs write to it), with its own
SQLite checkpointer; the trajectory is read back from the checkpoints, and what the run
changed in its copy (:func:`~noema_graph.evals.state.store_changes` against the master) goes
in ``metadata["store_changes"]``, with the time the comparison took (``snapshot_s``).
An item's tags name its agent (``agent:<name>``) and learner (``user:<name>``, default
``ada``). A run that fails (the model or a provider raising, or a ``user:`` tag naming no
learner of the store) is recorded with ``metadata["run_error"]``, not raised: the rest of
the eval goes on.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import httpx
import openai
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig

from noema_graph.errors import ConfigurationError, NoemaError
from noema_graph.evals.recorder import TrajectoryRecorder
from noema_graph.evals.state import CHANGES_KEPT, store_changes
from noema_graph.trajectory.schema import EvalDataset, EvalItem, Trajectory

ModelFor = Callable[[EvalItem], BaseChatModel]
RUN_ERRORS: tuple[type[BaseException], ...] = (
    NoemaError,
    openai.OpenAIError,
    httpx.HTTPError,
    OSError,
)
"""Failures that end one item's run; anything else is a bug and propagates."""
DEFAULT_USER = "ada"


def item_agent(item: EvalItem, agent: str | None) -> str:
    """Return the agent that runs ``item``: ``agent``, else the item's ``agent:`` tag.

    Raises:
        ConfigurationError: Neither names an agent.
    """
    name = agent if agent not in (None, "all") else item.tag("agent")
    if name is None:
        raise ConfigurationError(
            "agent", f"item {item.id!r} has no agent:<name> tag", fix="pass --agent NAME"
        )
    return name


def select_items(dataset: EvalDataset, agent: str | None) -> list[EvalItem]:
    """Return the items ``agent`` runs: tagged for it or untagged; every item for None/all."""
    if agent in (None, "all"):
        return list(dataset.dataset)
    return [item for item in dataset.dataset if item.tag("agent") in (None, agent)]


def tool_schemas(agent: str) -> dict[str, dict[str, object]]:
    """Return the JSON schema of the arguments of every tool ``agent`` is offered.

    The schemas of the calls as a trajectory records them: an owner argument (``user_id``),
    injected from the run's learner, is included (:func:`tool_specs` shows the model's view).
    """
    from noema_graph.agents import default_registry
    from noema_graph.agents.domain_tools import domain_spec
    from noema_graph.agents.subagent import ConsultInput

    definition = default_registry().get(agent)
    schemas = {  # as the calls are recorded: with the owner arguments injected from the run
        name: domain_spec(name, "unused.sqlite", definition.tool_arguments.get(name)).json_schema()
        for name in definition.tools
    }
    consult = ConsultInput.model_json_schema()
    return schemas | {f"consult_{child}": consult for child in definition.subagents}


def tool_specs(agent: str) -> list[dict[str, object]]:
    """Return the name, description and argument schema of every tool ``agent`` is offered.

    Recorded in a trajectory's ``metadata["tools"]``: the claim detector reads them.
    """
    from noema_graph.agents import default_registry
    from noema_graph.agents.domain_tools import DOMAIN_OPERATIONS
    from noema_graph.noema.operations import OWNER_FIELDS
    from noema_graph.tools.injection import hide_fields

    definition = default_registry().get(agent)
    schemas = tool_schemas(agent)
    return [
        {
            "name": name,
            "description": DOMAIN_OPERATIONS[name].description
            if name in DOMAIN_OPERATIONS
            else f"Consult the {name.removeprefix('consult_')} subagent.",
            "parameters": hide_fields(schema, OWNER_FIELDS),  # as the model saw them
        }
        for name, schema in schemas.items()
        if name in definition.tools or name.startswith("consult_")
    ]


class PromptTokens(BaseCallbackHandler):
    """Counts a run's prompt tokens and those the model server's cache served.

    The server reports the served ones as ``prompt_tokens_details.cached_tokens`` (llama.cpp
    and OpenAI do); the rest it processed.
    """

    def __init__(self) -> None:
        self.prompt = 0
        self.cached = 0

    def on_llm_end(self, response: LLMResult, **_: Any) -> None:
        """Add one model call's prompt and cached tokens."""
        usage = (response.llm_output or {}).get("token_usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        self.prompt += int(usage.get("prompt_tokens") or 0)
        self.cached += int(details.get("cached_tokens") or 0)


def copy_store(master: Path, target: Path) -> None:
    """Copy the SQLite store ``master`` to ``target`` (consistent, through the backup API)."""
    source = sqlite3.connect(master)
    destination = sqlite3.connect(target)
    try:
        source.backup(destination)
    finally:
        destination.close()
        source.close()


def run_item(
    item: EvalItem,
    *,
    agent: str,
    model: BaseChatModel,
    master: Path,
    workdir: Path,
    overrides: Mapping[str, object] | None = None,
) -> Trajectory:
    """Run ``agent`` on ``item`` over a copy of ``master``; return the recorded trajectory."""
    from noema_graph.agents import get_graph, resolve_learner
    from noema_graph.context import RunContext
    from noema_graph.storage.sqlite.persistence import sqlite_checkpointer

    slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in item.id)
    store = workdir / f"{slug}.learning.sqlite"
    copy_store(master, store)
    try:
        learner = resolve_learner(store, item.tag("user") or DEFAULT_USER)
    except ConfigurationError as exc:
        tag = f"user:{item.tag('user') or DEFAULT_USER}"
        meta = {"agent": agent, "item_id": item.id, "run_error": f"tag {tag}: {exc}"}
        return Trajectory(input=item.input, metadata=meta)
    error: str | None = None
    started = time.perf_counter()
    with sqlite_checkpointer(workdir / f"{slug}.runs.sqlite") as saver:
        graph = get_graph(agent, model=model, checkpointer=saver, db=store, overrides=overrides)
        tokens = PromptTokens()
        config: RunnableConfig = {"configurable": {"thread_id": slug}, "callbacks": [tokens]}
        inputs = {"messages": [("user", item.input)]}
        try:
            graph.invoke(inputs, config, context=RunContext(user_id=learner.name))
        except RUN_ERRORS as exc:
            error = f"{type(exc).__name__}: {exc}"
        wall = time.perf_counter() - started
        turns = TrajectoryRecorder.from_thread(saver, slug)
    trajectory = turns[-1] if turns else Trajectory(input=item.input)
    compared = time.perf_counter()
    changes = store_changes(store, master)
    meta = {
        **trajectory.metadata,
        "agent": agent,
        "item_id": item.id,
        "wall_s": round(wall, 3),
        "prompt_tokens_processed": tokens.prompt - tokens.cached,
        "prompt_tokens_cached": tokens.cached,
        "tools": tool_specs(agent),
        "store_changes": [c.model_dump() for c in changes[:CHANGES_KEPT]],
        "store_changes_total": len(changes),
        "snapshot_s": round(time.perf_counter() - compared, 4),
    }
    if error is not None:
        meta["run_error"] = error
    return trajectory.model_copy(update={"metadata": meta})


def run_items(
    items: Sequence[EvalItem],
    *,
    agent: str | None,
    model_for: ModelFor,
    master: Path,
    workdir: Path,
    concurrency: int = 1,
    overrides: Mapping[str, object] | None = None,
) -> Iterator[tuple[EvalItem, Trajectory]]:
    """Run every item (``concurrency`` at a time); yield ``(item, trajectory)`` as each ends.

    Items of one agent run back to back (a stable grouping, agents in order of first
    appearance): the model server's prompt cache then still holds the agent's prompt.

    Raises:
        ConfigurationError: ``concurrency`` is below 1, or an item names no agent.
    """
    if concurrency < 1:
        raise ConfigurationError("concurrency", f"must be at least 1, got {concurrency}")
    jobs = [(item, item_agent(item, agent)) for item in items]
    first = {name: index for index, (_, name) in reversed(list(enumerate(jobs)))}
    jobs.sort(key=lambda job: first[job[1]])
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = {
            pool.submit(
                run_item,
                item,
                agent=name,
                model=model_for(item),
                master=master,
                workdir=workdir,
                overrides=overrides,
            ): item
            for item, name in jobs
        }
        for future in as_completed(futures):
            yield futures[future], future.result()
