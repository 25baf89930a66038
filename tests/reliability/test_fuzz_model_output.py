"""Nothing a model says or raises crashes a run.

Generated model output (tests/reliability/fuzz_model.py) goes through the real agent graph on
a real SQLite checkpoint file, sync and async: no exception may escape ``invoke``/``ainvoke``;
every tool call is answered by exactly one observation; a run the model broke ends in
``finalize`` with a typed ``error.code`` (``llm_error`` whenever the model raised); the
checkpoint holds the run's output. The table below pins each crash class found so far with
the observation the model gets instead. ``bench/bench_fuzz.py`` runs ten thousand cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from langchain_core.messages import AIMessage, ToolMessage

from noema_graph import async_sqlite_checkpointer, sqlite_checkpointer
from noema_graph.models.normalize import INVALID_ARGUMENTS
from tests.reliability.fuzz_model import (
    CASES,
    Case,
    Verdict,
    default_reply,
    run_async,
    run_sync,
    saved_messages,
    unlocked,
)

EXAMPLES = 150
REACT_BIG_INT = 'Thought: add\nAction: add\nAction Input: {"a": 1180591620717411303424, "b": 1}'
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.function_scoped_fixture,
    ],
)


def assert_held(verdict: Verdict) -> None:
    """No exception escaped and the run kept every promise."""
    assert verdict.escaped is None, f"an exception escaped: {verdict.escaped}"
    assert verdict.problems == []


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[Any]:
    """A SqliteSaver on a fresh file, shared by every example of a test."""
    with sqlite_checkpointer(tmp_path / "fuzz.sqlite") as opened:
        yield opened


@pytest.fixture
def async_saver(tmp_path: Path) -> Iterator[tuple[asyncio.Runner, Any, Path]]:
    """An AsyncSqliteSaver open in one event loop that every example of a test reuses."""
    path = tmp_path / "fuzz.sqlite"
    with asyncio.Runner() as runner:
        opened = async_sqlite_checkpointer(path)
        saver = runner.run(opened.__aenter__())
        try:
            yield runner, saver, path
        finally:
            runner.run(opened.__aexit__(None, None, None))


def test_generated_model_output_never_crashes_a_sync_run(saver: Any) -> None:
    threads = iter(range(EXAMPLES * 10))

    @FUZZ
    @given(CASES)
    def one(case: Case) -> None:
        assert_held(run_sync(case, saver, f"sync-{next(threads)}"))

    one()


def test_generated_model_output_never_crashes_an_async_run(
    async_saver: tuple[asyncio.Runner, Any, Path],
) -> None:
    runner, saver, path = async_saver
    threads = iter(range(EXAMPLES * 10))

    @FUZZ
    @given(CASES)
    def one(case: Case) -> None:
        assert_held(runner.run(run_async(case, saver, f"async-{next(threads)}")))
        assert unlocked(path), "the checkpoint file is still locked after the run"

    one()


# --- the crash classes found, each pinned -------------------------------------------------


def planned() -> AIMessage:
    """A valid one-step plan, so that the next reply reaches execute_step."""
    return default_reply("PlanDraft")


def built(**fields: Any) -> AIMessage:
    return AIMessage.model_construct(**{"content": "", **fields})


def calls(*items: dict[str, Any]) -> AIMessage:
    return built(tool_calls=list(items))


class ProviderError(Exception):
    """A custom provider's exception."""


CRASHES: dict[str, tuple[Any, str]] = {
    # name: (the reply, what the run shows instead of a crash)
    "msgpack: an object inside the arguments": (
        calls({"name": "echo", "args": {"text": object()}, "id": "a"}),
        "<object object at",
    ),
    "msgpack: an object in additional_kwargs": (
        built(content="hi", additional_kwargs={"raw": object()}),
        "",
    ),
    "msgpack: an integer past 64 bits in response_metadata": (
        built(content="hi", response_metadata={"seed": 2**70}),
        "",
    ),
    "msgpack: an integer past 64 bits in the arguments": (
        calls({"name": "add", "args": {"a": 2**70, "b": 1}, "id": "a"}),
        "1180591620717411303425",  # the tool got the digits back as an int; the answer is text
    ),
    "unhashable: a list as the call id": (
        calls({"name": "add", "args": {"a": 1, "b": 2}, "id": ["x"]}),
        "3",
    ),
    "unhashable: a list as the tool name": (
        calls({"name": ["add"], "args": {}, "id": "a"}),
        "Unknown tool \"['add']\"",
    ),
    "len() of None: a call without a name": (calls({"args": {}, "id": "a"}), "Unknown tool ''"),
    "arguments that are a list": (
        calls({"name": "add", "args": [1, 2], "id": "a"}),
        "the arguments of 'add' must be a JSON object naming each argument, not an array",
    ),
    "arguments that are broken JSON": (
        calls({"name": "add", "args": '{"a": 1,', "id": "a"}),
        "the arguments of 'add' are not valid JSON",
    ),
    "arguments that are a JSON string": (calls({"name": "add", "args": '{"a": 2, "b": 5}'}), "7"),
    "the same id twice": (
        calls(
            {"name": "add", "args": {"a": 1, "b": 1}, "id": "dup"},
            {"name": "add", "args": {"a": 2, "b": 2}, "id": "dup"},
        ),
        "4",
    ),
    "int(): usage counts that are words": (
        built(content="done", usage_metadata={"input_tokens": "lots", "output_tokens": [1]}),
        "",
    ),
    "Thinking event: content with a lone surrogate": (built(content="bad \ud800 text"), ""),
    "content that is a number": (built(content=12345), ""),
}


def _replies(reply: Any) -> list[Any]:
    return [reply]


@pytest.mark.parametrize("name", list(CRASHES))
def test_each_crash_class_found_is_an_observation_or_an_answer(name: str, saver: Any) -> None:
    reply, shown = CRASHES[name]
    assert_held(run_sync([planned(), reply], saver, name))
    observations = [m.text for m in saved_messages(saver, name) if isinstance(m, ToolMessage)]
    assert any(shown in text for text in observations) or not shown, observations


@pytest.mark.parametrize(
    "exc",
    [RuntimeError("stream closed"), ValueError("bad json"), ProviderError("quota"), KeyError("k")],
)
@pytest.mark.parametrize("at", [0, 1], ids=["plan", "step"])
def test_a_model_exception_ends_the_run_with_llm_error(
    exc: Exception, at: int, saver: Any, async_saver: tuple[asyncio.Runner, Any, Path]
) -> None:
    runner, asaver, _ = async_saver
    ahead = [planned(), calls({"name": "add", "args": {"a": 1, "b": 2}, "id": "a"})][: 2 * at]
    for verdict in (
        run_sync([*ahead, exc], saver, f"s-{at}"),
        runner.run(run_async([*ahead, exc], asaver, f"a-{at}")),
    ):
        assert_held(verdict)
        assert verdict.code == "llm_error"
        assert verdict.observations == at  # the partial result: the tool call before it


def test_unusable_arguments_reach_the_model_as_its_own_call(saver: Any) -> None:
    reply = calls({"name": "add", "args": [1, 2], "id": "a"})
    assert_held(run_sync([planned(), reply], saver, "own"))
    made = [m for m in saved_messages(saver, "own") if isinstance(m, AIMessage) and m.tool_calls]
    (call,) = made[0].tool_calls
    assert set(call["args"]) == {INVALID_ARGUMENTS} and call["id"] == "a"


def test_a_react_action_input_past_64_bits_is_an_observation(saver: Any) -> None:
    reply = AIMessage(content=REACT_BIG_INT)
    assert_held(run_sync(Case("react", [planned(), reply]), saver, "react"))
