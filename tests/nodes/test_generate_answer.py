"""The generate_answer node called directly: one model answer, no tools, the output contract."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from noema_graph.nodes.generate_answer import SPEC, generate_answer
from noema_graph.state.models import HookFailure, RunInfo
from noema_graph.state.outcome import Outcome
from tests.helpers import TOOLS
from tests.nodes.helpers import Path, deps, run, runtime, types
from tests.scripted import ScriptedChatModel, text


class Answer(BaseModel):
    name: str


def _state(**extra: Any) -> dict[str, Any]:
    memory = [{"key": "pet", "value": "Ada's cat is called Turing", "score": 1.0}]
    return {
        "messages": [HumanMessage("What is my cat called?")],
        "memory_context": memory,
        "run": RunInfo(request="What is my cat called?"),
        **extra,
    }


def test_the_answer_comes_from_the_model_and_the_memory(scripted: Any, path: Path) -> None:
    model = scripted(text("Turing."))
    events: list[dict[str, Any]] = []
    update = run(generate_answer(_state(), runtime(events), deps(model, tools=TOOLS)), path)
    output = update["output"]
    assert output["success"] is True and output["result"] == "Turing."
    assert output["metadata"]["iterations"] == 1 and output["metadata"]["tools_used"] == []
    assert output["metadata"]["token_usage"]["total_tokens"] == 15
    assert "Ada's cat is called Turing" in model.prompts[0][0].content
    assert model.bound_tool_names == []  # tools are never offered
    assert types(events) == ["content_chunk", "turn_end"]
    assert SPEC.outcome(update) == (Outcome.SUCCESS, "finished")


def test_a_model_failure_ends_with_llm_error(path: Path) -> None:
    model = ScriptedChatModel(script=[OSError("refused")])
    events: list[dict[str, Any]] = []
    update = run(generate_answer(_state(), runtime(events), deps(model)), path)
    assert update["output"]["error"]["code"] == "llm_error" and "refused" in update["llm_error"]
    assert types(events) == ["error", "turn_end"]


def test_a_failed_hook_ends_the_run_without_a_call(path: Path) -> None:
    veto = HookFailure(code="hook_veto", node="agent", stage="pre_process", message="no")
    update = run(generate_answer(_state(hook_error=veto), runtime(), deps()), path)
    assert update["output"]["error"]["code"] == "hook_veto"
    assert update["messages"] == []


def test_the_answer_is_validated_against_the_output_schema(scripted: Any, path: Path) -> None:
    good = run(
        generate_answer(
            _state(), runtime(), deps(scripted(text('{"name": "Turing"}')), output_schema=Answer)
        ),
        path,
    )
    bad = run(
        generate_answer(_state(), runtime(), deps(scripted(text("Turing")), output_schema=Answer)),
        path,
    )
    assert good["output"]["result"] == {"name": "Turing"} and good["output"]["validated"] is True
    assert bad["output"]["validated"] is False


def test_an_answer_that_loops_is_cut_before_the_loop(scripted: Any, path: Path) -> None:
    looping = "Your cat is called Turing. " + "El gato se llama Turing. " * 30
    model = scripted(text(looping))
    update = run(generate_answer(_state(), runtime(), deps(model)), path)
    assert update["output"]["result"] == "Your cat is called Turing."
