"""Model calls: the validation error goes back to the model; transient vs final failures."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from noema_graph.errors import LLMError, TransientModelError
from noema_graph.nodes.llm import as_ai_message, ask_structured, call_model, retry_policy, usage_of
from noema_graph.state.models import PlanDraft, Usage
from tests.nodes.helpers import Path, deps, run, runtime
from tests.scripted import plan_reply, structured, text

PROMPT = [SystemMessage("Plan the work."), HumanMessage("write a haiku")]


def test_retry_sends_the_rejected_answer_and_the_validation_error(
    scripted: Any, path: Path
) -> None:
    invalid = structured("PlanDraft", goal="haiku about rain")  # no "steps"
    model = scripted(invalid, plan_reply("write it", goal="haiku"))
    value, usage, errors = run(
        ask_structured(model, PlanDraft, PROMPT, runtime(), deps(model), attempts=2), path
    )
    assert isinstance(value, PlanDraft) and value.steps == ["write it"]
    assert len(errors) == 1 and "steps" in errors[0]
    assert usage == Usage(
        prompt_tokens=20, completion_tokens=10, total_tokens=30, cost_usd=0.00004, model_calls=2
    )
    first, second = model.prompts
    assert first == PROMPT and second[:2] == PROMPT and second != first
    rejected, error = second[2:]
    assert isinstance(rejected, AIMessage) and "haiku about rain" in rejected.text
    assert isinstance(error, HumanMessage)
    assert "not valid PlanDraft" in error.text and "steps" in error.text
    assert "Field required" in error.text  # pydantic's own message, not a paraphrase


def test_each_retry_answers_the_latest_rejection_only(scripted: Any) -> None:
    model = scripted(
        structured("PlanDraft", goal="first try"),
        structured("PlanDraft", goal="second try"),
        structured("PlanDraft", goal="third try"),
    )
    value, _, errors = run(
        ask_structured(model, PlanDraft, PROMPT, runtime(), deps(model), attempts=3), "sync"
    )
    assert value is None and len(errors) == 3
    last = model.prompts[-1]
    assert len(last) == len(PROMPT) + 2  # the prompt does not grow with every attempt
    assert "second try" in last[-2].text and "first try" not in str(last)


def test_a_transient_error_asks_langgraph_to_retry_while_attempts_remain(
    scripted: Any, path: Path
) -> None:
    model = scripted(TimeoutError("read timed out"))
    with pytest.raises(TransientModelError, match=r"attempt 1/3: TimeoutError"):
        run(call_model(model, PROMPT, runtime(attempt=1), deps(model, model_retries=3)), path)


def test_a_transient_error_on_the_last_attempt_is_final(scripted: Any, path: Path) -> None:
    model = scripted(ConnectionResetError("reset by peer"))
    with pytest.raises(LLMError, match="failed after 3 attempts") as caught:
        run(call_model(model, PROMPT, runtime(attempt=3), deps(model, model_retries=3)), path)
    assert not isinstance(caught.value, TransientModelError)


def test_a_provider_error_is_final_at_once(scripted: Any, path: Path) -> None:
    model = scripted(OSError("certificate verify failed"))
    with pytest.raises(LLMError, match="model call failed: OSError") as caught:
        run(call_model(model, PROMPT, runtime(attempt=1), deps(model)), path)
    assert not isinstance(caught.value, TransientModelError)


class ProviderError(Exception):
    """An exception class only a custom provider knows."""


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("upstream closed the stream"),
        ValueError("bad response"),
        AttributeError("'NoneType' object has no attribute 'content'"),
        ProviderError("quota"),
    ],
)
def test_any_other_exception_of_the_model_is_final_and_named(
    scripted: Any, path: Path, exc: Exception
) -> None:
    model = scripted(exc)
    with pytest.raises(LLMError, match=f"model call failed: {type(exc).__name__}") as caught:
        run(call_model(model, PROMPT, runtime(attempt=1), deps(model)), path)
    assert caught.value.__cause__ is exc  # the original, with its traceback, is kept


def test_a_failed_assertion_in_a_scripted_model_still_fails_the_test(scripted: Any) -> None:
    model = scripted()  # an empty script: the strict model raises ScriptExhausted
    with pytest.raises(AssertionError, match="script exhausted"):
        run(call_model(model, PROMPT, runtime(), deps(model)), "sync")


def test_a_model_exception_during_structured_output_is_not_a_bad_answer(
    scripted: Any, path: Path
) -> None:
    model = scripted(ValueError("provider returned nothing"))
    with pytest.raises(LLMError, match="ValueError"):
        run(ask_structured(model, PlanDraft, PROMPT, runtime(), deps(model), attempts=3), path)


def test_the_boundary_repairs_a_message_and_logs_what(caplog: pytest.LogCaptureFixture) -> None:
    odd = AIMessage.model_construct(
        content=7, tool_calls=[{"name": "add", "args": "[1]", "id": None}], usage_metadata=None
    )
    with caplog.at_level(logging.WARNING, logger="noema_graph.nodes.llm"):
        message = as_ai_message(odd)
    assert message.content == "7" and message.tool_calls[0]["id"].startswith("call_")
    assert "model message repaired" in caplog.text and "tool call id None" in caplog.text


def test_usage_counts_that_are_not_counts_count_zero() -> None:
    odd = AIMessage.model_construct(
        content="", usage_metadata={"input_tokens": "many", "output_tokens": -3}
    )
    assert usage_of(odd, deps()) == Usage(cost_usd=0.0, model_calls=1)


def test_call_model_returns_the_response(scripted: Any, path: Path) -> None:
    model = scripted(text("hello"))
    reply = run(call_model(model, PROMPT, runtime(), deps(model)), path)
    assert reply.text == "hello" and model.prompts == [PROMPT]


def test_retry_policy_retries_transient_errors_model_retries_times() -> None:
    policy = retry_policy(deps(model_retries=4))
    assert policy.max_attempts == 4 and policy.retry_on is TransientModelError


def test_the_parsed_object_of_json_schema_mode_is_no_repair(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from noema_graph.nodes.llm import parse_structured

    draft = PlanDraft(goal="g", steps=["s"])
    raw = AIMessage(
        content=draft.model_dump_json(),
        additional_kwargs={"parsed": draft},  # what ChatOpenAI's json_schema mode returns
        usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
    )
    with caplog.at_level(logging.WARNING, logger="noema_graph.nodes.llm"):
        parsed, usage, error = parse_structured(
            {"raw": raw, "parsed": draft, "parsing_error": None}, PlanDraft, deps()
        )
    assert error is None and parsed == draft and usage.total_tokens == 5
    assert "repaired" not in caplog.text
