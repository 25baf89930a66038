"""An agent's answer prompt shows the tool-result fields its catalog entry declares, end to end."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from noema_graph.agents import default_registry
from noema_graph.noema import DemoSummary
from noema_graph.state.output import AgentOutput
from tests.scripted import call, plan_reply, reflection_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]

NOTE = "Chlorophyll absorbs red and blue light. Plants turn light into sugar."


def test_ingestions_answer_prompt_shows_the_title_and_text_only(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    assert default_registry().get("ingestion").answer_fields["get_chunks"]
    source_id = demo.source_id + 1
    model = scripted(
        plan_reply("Ingest", "Read back"),
        tools_reply(call("ingest_text", {"title": "Photosynthesis", "text": NOTE})),
        text("stored"),
        tools_reply(call("get_chunks", {"source_id": source_id})),
        reflection_reply("continue"),
        text("read back"),
        structured(
            "IngestionReport",
            source_id=source_id,
            chunk_count=1,
            key_concepts=["Photosynthesis"],
            summary="How plants make sugar.",
        ),
    )
    state = run_agent_graph("ingestion", model, demo.path, "Ingest my note on photosynthesis.")
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.result["chunk_count"] == 1  # sourced from the full result
    answer_prompt = " ".join(str(m.content) for m in model.prompts[-1])
    shown = f'Observation: {{"source":{{"title":"Photosynthesis"}},"chunks":[{{"text":"{NOTE}"}}]}}'
    assert shown in answer_prompt
    assert "content_sha256" not in answer_prompt and "start_char" not in answer_prompt


def test_the_answer_prompt_names_the_request_once(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        structured("GovernanceReport", summary="Some cards need work."),
        metadata={"noema_plans": False},
    )
    request = "Check the cards for quality problems."
    state = run_agent_graph("governance", model, demo.path, request)
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.result["flagged"]  # sourced from the tool, in full
    (answer_prompt,) = [" ".join(str(m.content) for m in p) for p in model.prompts]
    assert answer_prompt.count(request) == 1
    # naming the flagged list in the note instead of repeating it made the model claim the
    # scanned cards as flagged (bench/RESULTS.md): the note shows the figures it pairs
    figures = json.dumps(
        {"flagged": out.result["flagged"], "cards_scanned": out.result["cards_scanned"]},
        separators=(",", ":"),
    )
    assert f"These figures come from the tools: {figures}." in answer_prompt


def test_learnings_answer_prompt_shows_the_first_due_cards_ids_and_fronts(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    definition = default_registry().get("learning")
    rows = definition.answer_rows["list_due_cards"]
    model = scripted(
        structured("NextCard", reason="It is the most urgent."),
        metadata={"noema_plans": False},
    )
    state = run_agent_graph("learning", model, demo.path, "What should I study next?")
    (due,) = [s for s in state["trace"] if s.action and s.action.tool == "list_due_cards"]
    assert due.action is not None
    cards = due.action.output["data"]["cards"]
    assert len(cards) > rows  # the run reads them all; the prompt shows the first ones
    answer_prompt = " ".join(str(m.content) for m in model.prompts[-1])
    assert answer_prompt.count('"front":') == rows
    first = {"card_id": cards[0]["card_id"], "front": cards[0]["front"]}
    assert json.dumps(first, separators=(",", ":")) in answer_prompt
    assert '"state":' not in answer_prompt and '"due_total":' not in answer_prompt
