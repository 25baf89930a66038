"""A note introduced with no text is refused before anything is stored (issue 33, item 3)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.agents.documents import (
    document_checked,
    document_tools,
    empty_document,
    introduced_text,
)
from noema_graph.agents.domain_tools import domain_registry
from noema_graph.agents.learner_context import run_learner
from noema_graph.agents.registry import default_registry
from noema_graph.noema import DemoSummary
from noema_graph.state.models import RequestReading
from tests.scripted import structured, text

Run = Callable[..., dict[str, Any]]
SMALL = {"metadata": {"noema_plans": False}}
"""A scripted model whose profile says it does not plan (like the embedded one)."""


@pytest.mark.parametrize(
    "request_text",
    [
        "Keep this note, title 'Ferns':",
        "Store a text named 'Ferns' with this content: '  '",
        "Garde la note intitulée « Fougères » : « »",
        'Guarda el documento "Helechos", cuyo texto es: ""',
        "Save 'Ferns: a guide' as a note:   \n  ",  # the title's own colon is not the one
    ],
)
def test_a_note_introduced_with_no_text_is_empty(request_text: str) -> None:
    assert introduced_text(request_text) == ""
    refusal = empty_document(request_text, ["ingest_text"])
    assert refusal is not None and refusal.code == "invalid_input"
    assert "no text" in refusal.message and "ingest_text" in refusal.message


@pytest.mark.parametrize(
    ("request_text", "text"),
    [
        ("Keep this note, title 'Ferns': Ferns like shade.", "Ferns like shade."),
        ("Save 'Ferns: a guide' as a note: 'Ferns like shade.'", "Ferns like shade."),
        ("Here's my note, call it 'Ferns': It's damp.", "It's damp."),
        ("Don't store anything: how many chunks has source 1?", "how many chunks has source 1?"),
    ],
)
def test_the_introduced_text_is_what_follows_the_colon(request_text: str, text: str) -> None:
    assert introduced_text(request_text) == text
    assert empty_document(request_text, ["ingest_text"]) is None


def test_a_request_without_an_introducing_colon_is_left_to_the_reader() -> None:
    assert introduced_text("Store my notes about ferns.") is None
    assert empty_document("Store my notes about ferns.", ["ingest_text"]) is None


def test_only_a_write_tool_that_takes_a_document_is_checked(demo: DemoSummary) -> None:
    owner = run_learner(demo.path).owner
    found: dict[str, list[str]] = {}
    for definition in default_registry().get_all():
        domain = domain_registry(demo.path, definition.tools, definition.tool_arguments, owner)
        tools = domain.as_langchain_tools(permissions=definition.permissions, timeout_s=30)
        if names := document_tools(tools):
            found[definition.name] = names
    assert found == {"ingestion": ["ingest_text"]}  # a flag's reason or a name is no document


def test_the_checked_reader_reads_only_a_request_with_text() -> None:
    read: list[str] = []

    def reader(request: str) -> RequestReading:
        read.append(request)
        return RequestReading(intent="none")

    checked = document_checked(reader, ["ingest_text"])
    assert checked("Keep this note, title 'Ferns':").refusal is not None and read == []
    assert checked("Keep this note, title 'Ferns': Ferns like shade.").refusal is None
    assert read == ["Keep this note, title 'Ferns': Ferns like shade."]


def _sources(path: str) -> tuple[int, int]:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT (SELECT count(*) FROM sources), (SELECT count(*) FROM chunks)")
        return tuple(row.fetchone())


@pytest.mark.parametrize(
    "request_text",
    ["Ingest this note titled 'Ferns':", "Ajoute la note intitulée 'Fougères' : \"   \""],
)
def test_an_empty_note_ends_the_run_with_nothing_stored_and_no_model_call(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run, request_text: str
) -> None:
    before = _sources(demo.path)
    model = scripted(**SMALL)  # strict and empty: any model call fails the test
    state = run_agent_graph("ingestion", model, demo.path, request_text)
    error = state["output"]["error"]
    assert error["code"] == "invalid_input" and "no text" in error["message"]
    assert model.prompts == []
    assert _sources(demo.path) == before


def test_a_question_about_a_stored_document_counts_its_chunks_from_get_chunks(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _sources(demo.path)
    with sqlite3.connect(demo.path) as conn:
        chunks = conn.execute("SELECT count(*) FROM chunks WHERE source_id = 1").fetchone()[0]
    model = scripted(
        text("read"),
        structured("IngestionReport", source_id=9, chunk_count=1, key_concepts=[], summary="x"),
        **SMALL,
    )
    request = "Store nothing new; how many chunks does source 1 have?"
    state = run_agent_graph("ingestion", model, demo.path, request)
    result = state["output"]["result"]
    assert (result["source_id"], result["chunk_count"]) == (1, chunks) and chunks > 1
    assert _sources(demo.path) == before


def test_the_title_the_request_quotes_is_bound_for_the_small_model(tmp_path: Any) -> None:
    from noema_graph.agents.catalog import DEFINITIONS
    from noema_graph.nodes.plan_steps import planned_turn

    registry = domain_registry(tmp_path / "s.sqlite", ["ingest_text"])
    tools = registry.as_langchain_tools(permissions=("fs:read", "fs:write"), timeout_s=10)
    ingestion = next(d for d in DEFINITIONS if d.name == "ingestion")
    step = next(s for s in ingestion.plan if s.tool == "ingest_text")
    note = "Ferns reproduce by spores, which grow under their 'fronds'."
    titled = planned_turn(step, tools, f"Keep this note, titled 'Fern spores': {note}", [])
    assert titled.schemas["ingest_text"]["properties"]["title"].get("const") == "Fern spores"
    untitled = planned_turn(step, tools, f"Keep this note: {note}", [])
    assert "const" not in untitled.schemas["ingest_text"]["properties"]["title"]


def test_a_quoted_name_before_the_introduced_text_names_the_document() -> None:
    from noema_graph.grounding.words import named_by_quote

    assert named_by_quote("Save the note 'Moss': it grows in 'damp' shade.") == "Moss"
    assert named_by_quote("Enregistre la note « Mousse » : elle pousse à l'ombre.") == "Mousse"
    assert named_by_quote("Save this: moss grows in 'damp' shade.") is None
    assert named_by_quote("Save 'Moss' or 'Lichen': both grow in shade.") is None
