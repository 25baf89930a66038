"""The grounding package on plain data: sources, seen values, narrowed arguments, answers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from noema_graph.grounding import MISSING, parse_source, resolve, seen_in, step_arguments
from noema_graph.grounding.answers import merged, remaining_schema, sourced_fields
from noema_graph.grounding.arguments import unseen_reference
from noema_graph.grounding.recovery import (
    REPEATED_FAILURE,
    failed_calls,
    pending_fix,
    repeated_failure_text,
)
from noema_graph.grounding.seen import mentioned
from noema_graph.state.models import ReasoningStep, ToolAction


def ok(tool: str, args: dict[str, Any], data: Any) -> ReasoningStep:
    output = {"status": "success", "data": data}
    return ReasoningStep(kind="tool", action=ToolAction(tool=tool, input=args, output=output))


def failed(tool: str, args: dict[str, Any], fix: dict[str, Any] | None = None) -> ReasoningStep:
    action = ToolAction(tool=tool, input=args, output={"status": "error"})
    return ReasoningStep(
        kind="tool", action=action, status="error", observation="no category", fix=fix
    )


CATEGORIES = {"categories": [{"id": 7, "name": "Geography"}, {"id": 8, "name": "Capitals"}]}


def test_a_source_reads_the_latest_call_every_call_a_length_and_renamed_keys() -> None:
    trace = [
        ok("move_card", {"card_id": 1, "category_id": 7}, {"id": 1}),
        ok("move_card", {"card_id": 2, "category_id": 8}, {"id": 2}),
        ok("ingest_text", {"title": "T"}, {"source_id": 4, "chunk_ids": [9, 10, 11]}),
        ok("flag_card", {"card_id": 3, "reason": "vague"}, {"card_id": 3, "reason": "vague"}),
    ]
    assert resolve(parse_source("move_card:args.card_id"), trace) == 2
    assert resolve(parse_source("*move_card:args{card_id}"), trace) == [
        {"card_id": 1},
        {"card_id": 2},
    ]
    assert resolve(parse_source("ingest_text:chunk_ids.#"), trace) == 3
    assert resolve(parse_source("*flag_card:{card_id,issue=reason}"), trace) == [
        {"card_id": 3, "issue": "vague"}
    ]
    assert resolve(parse_source("get_card:front | ingest_text:source_id"), trace) == 4
    assert resolve(parse_source("get_card:front"), trace) is MISSING


def test_a_source_that_is_not_one_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="'no path here'"):
        parse_source("no path here")


def test_seen_values_come_from_the_request_and_the_tool_results() -> None:
    request = "Move card 5 of user_id 2 into Geography."
    seen = seen_in(request, [ok("list_categories", {}, CATEGORIES)])
    assert seen.ids["card"] == {5: None}
    assert seen.ids["user"] == {2: None}
    assert seen.ids["category"] == {7: "Geography", 8: "Capitals"}


def test_a_longer_name_hides_the_name_inside_it() -> None:
    names = ["Transition metals", "Post-transition metals", "Halogens"]
    text = "Record that Post-transition metals contrast with Transition metals."
    assert mentioned(text, names) == ["Post-transition metals", "Transition metals"]


MOVE = {
    "type": "object",
    "properties": {
        "card_id": {"type": "integer"},
        "category_id": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "note": {"type": "string"},
    },
    "required": ["card_id", "category_id"],
}


def test_references_are_narrowed_to_what_the_run_has_seen() -> None:
    request = "Move card 5 into the Geography category."
    trace = [ok("list_categories", {}, CATEGORIES), ok("search_cards", {}, {"cards": [{"id": 9}]})]
    arguments = step_arguments(MOVE, request, seen_in(request, trace))
    # the request's own card, the category it names; the optional note is not offered
    assert arguments.values == {"card_id": 5, "category_id": 7}
    assert arguments.complete and set(arguments.schema["properties"]) == {"card_id", "category_id"}
    vague = step_arguments(MOVE, "Tidy my cards.", seen_in("Tidy my cards.", trace))
    assert vague.values == {"card_id": 9}  # the one card seen
    assert vague.schema["properties"]["category_id"]["enum"] == [7, 8]
    assert not vague.complete


def test_an_optional_argument_the_request_names_is_offered() -> None:
    request = "Move card 5 to category 7 with a note."
    arguments = step_arguments(MOVE, request, seen_in(request))
    assert "note" in arguments.schema["properties"] and not arguments.complete


def test_an_unseen_reference_is_refused_with_the_seen_values() -> None:
    seen = seen_in("Move card 5.", [ok("list_categories", {}, CATEGORIES)])
    args = {"card_id": 5, "category_id": 55}
    text = unseen_reference("move_card", MOVE, args, seen)
    assert text is not None and "55 is no category" in text and "seen: 7, 8" in text
    assert unseen_reference("move_card", MOVE, {"card_id": 5, "category_id": 8}, seen) is None


class Advice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    brier: float = Field(ge=0)
    advice: str = Field(description="One sentence.")


def test_sourced_fields_replace_what_the_model_wrote() -> None:
    trace = [ok("compute_calibration", {"user_id": 2}, {"brier": 0.163})]
    filled = sourced_fields({"brier": "compute_calibration:brier"}, trace)
    rest = remaining_schema(Advice, filled)
    assert rest is not None and set(rest.model_fields) == {"advice"}
    written = rest.model_validate({"advice": "Rate lower.", "brier": 0.9})  # extra ignored
    assert Advice.model_validate(merged(written, filled)) == Advice(
        brier=0.163, advice="Rate lower."
    )
    assert remaining_schema(Advice, {"brier": 1.0, "advice": "x"}) is None


def test_a_fix_is_pending_until_followed_and_not_twice() -> None:
    fix = {"tool": "list_categories", "args": {}}
    first = failed("move_card", {"card_id": 5, "category_id": 55}, fix)
    assert pending_fix([first]) == fix
    followed = [first, ok("list_categories", {}, CATEGORIES)]
    assert pending_fix(followed) is None
    again = [*followed, failed("move_card", {"card_id": 5, "category_id": 55}, fix)]
    assert pending_fix(again) is None  # the fix was made and the same call failed again


def test_failed_calls_clear_after_a_successful_write() -> None:
    bad = failed("move_card", {"card_id": 5, "category_id": 55})
    assert list(failed_calls([bad])) == ['move_card({"card_id": 5, "category_id": 55})']
    write = ok("flag_card", {"card_id": 1, "reason": "x"}, {})
    assert failed_calls([bad, write]) == {}
    assert failed_calls([bad, write], read_only={"flag_card"}) != {}
    text = repeated_failure_text("move_card", {"error": "no category", "fix": None})
    assert text.startswith("Not executed: an identical move_card call already failed")
    assert REPEATED_FAILURE == "repeated_failure"


def test_the_request_bounds_a_list_and_free_text_is_bounded_for_decoding() -> None:
    from noema_graph.grounding.arguments import FREE_TEXT_CHARS, bounded, requested_count

    assert requested_count("Add two cards about mitochondria to deck 4.", "cards") == 2
    assert requested_count("Add 3 flash cards.", "cards") == 3
    assert requested_count("Add cards about tides.", "cards") is None
    # French and Spanish counts before the noun or its translation, accents left out
    assert requested_count("Ajoute deux nouvelles cartes sur les marées.", "cards") == 2
    assert requested_count("Añade una tarjeta sobre los volcanes al mazo 1.", "cards") == 1
    assert requested_count("Crée trois fiches sur la Lune.", "cards") == 3
    assert requested_count("Ajoute des cartes sur la Lune.", "cards") is None
    schema = {
        "type": "array",
        "minItems": 1,
        "maxItems": 500,
        "items": {"type": "object", "properties": {"front": {"type": "string"}}},
    }
    exact = bounded(schema, 2)
    assert (exact["minItems"], exact["maxItems"]) == (2, 2)
    assert exact["items"]["properties"]["front"]["maxLength"] == FREE_TEXT_CHARS
    assert bounded(schema)["maxItems"] == 8
    assert bounded({"type": "string", "maxLength": 20}) == {"type": "string", "maxLength": 20}


def test_the_grammar_enforces_min_and_max_items() -> None:
    from noema_graph.models.grammar import _array  # pyright: ignore[reportPrivateUsage]
    from tests.models.gbnf import Grammar

    grammar = Grammar.parse(f'root ::= {_array("x", 2, 3)}\nx ::= "1"\nws ::= [ ]?')
    assert [grammar.admits(t) for t in ("[1]", "[1,1]", "[1,1,1]", "[1,1,1,1]")] == [
        False,
        True,
        True,
        False,
    ]


def test_a_name_beside_its_noun_or_outside_quotes_is_the_one_referred_to() -> None:
    from noema_graph.grounding.seen import referred

    names = ["Spanish", "Vocabulary", "Geography"]
    request = "File card 170 ('Translate into Spanish: fast') under the Vocabulary category."
    assert referred(request, names, "category") == ["Vocabulary"]
    assert referred("Put card 9 ('Spanish verbs') in Vocabulary.", names, "category") == [
        "Vocabulary"
    ]
    two = "Link the concept Halogens to Alkali metals."
    assert referred(two, ["Halogens", "Alkali metals"], "concept", wanted=2) == [
        "Halogens",
        "Alkali metals",
    ]


def test_of_a_choice_of_tools_the_one_taking_the_named_record_is_kept(tmp_path: Any) -> None:
    from noema_graph.agents.domain_tools import domain_registry
    from noema_graph.nodes.plan_steps import planned_turn
    from noema_graph.state.models import TaskStep

    registry = domain_registry(tmp_path / "s.sqlite", ["flag_card", "flag_quality_issues"])
    tools = registry.as_langchain_tools(permissions=("fs:read", "fs:write"), timeout_s=10)
    step = TaskStep(description="Flag", tool="flag_card|flag_quality_issues")
    named = planned_turn(step, tools, "Card 33 is misleading.", [])
    assert [t.name for t in named.tools] == ["flag_card"] and named.call is None
    scan = planned_turn(step, tools, "Find bad cards.", [])
    assert [t.name for t in scan.tools] == ["flag_quality_issues"]
    assert scan.call is not None and scan.call["args"] == {}  # made without the model


def test_the_grammar_is_bound_again_only_when_the_seen_values_change() -> None:
    from langchain_core.tools import tool

    from noema_graph.config import AgentConfig
    from noema_graph.nodes.deps import make_deps
    from tests.scripted import ScriptedChatModel

    @tool
    def get_card(card_id: int) -> str:
        """Return a card."""
        return str(card_id)

    deps = make_deps(
        AgentConfig(protocol="react", enabled_toolkits=()),
        model=ScriptedChatModel(script=[]),
        tools=[get_card],
    )
    seen_5 = {"get_card": {"type": "object", "properties": {"card_id": {"enum": [5]}}}}
    seen_5_6 = {"get_card": {"type": "object", "properties": {"card_id": {"enum": [5, 6]}}}}
    first = deps.step_model([get_card], seen_5)
    assert deps.step_model([get_card], dict(seen_5)) is first  # same values: bound once
    changed = deps.step_model([get_card], seen_5_6)
    assert changed is not first
    from noema_graph.models.grammar import react_grammar

    assert '"5" | "6"' in react_grammar([get_card], schemas=seen_5_6)
    assert '"6"' not in react_grammar([get_card], schemas=seen_5)
