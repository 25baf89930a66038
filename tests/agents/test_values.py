"""Values a request writes for an argument with options: allowed, or refused (issue 33)."""

from __future__ import annotations

import pytest

from noema_graph.agents.values import allows, unallowed_value, written_values

LINK = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "x-noema-ref": "concept"},
        "target": {"type": "string", "x-noema-ref": "concept"},
        "kind": {"type": "string", "enum": ["prerequisite_of", "related_to", "part_of"]},
    },
    "required": ["source", "target", "kind"],
}
FLAG = {
    "type": "object",
    "properties": {
        "card_id": {"type": "integer"},
        "reason": {"type": "string"},
        "severity": {"type": "string", "enum": ["low", "medium", "high"]},
    },
}
NAMES = ["Halogens", "Metalloids"]


@pytest.mark.parametrize(
    ("request_text", "written"),
    [
        ("Ajoute un lien de type 'cause' entre Halogens et Metalloids.", "cause"),
        ("Enlaza Halogens con Metalloids, del tipo causa.", "causa"),
        ("Link Halogens to Metalloids with kind: reacts-with.", "reacts-with"),
        ("Link Halogens to Metalloids as opposite_of.", "opposite_of"),
        ("Link 'Halogens' to 'Metalloids' as 'antonym'.", "antonym"),
    ],
)
def test_a_value_no_option_allows_is_found_in_three_languages(
    request_text: str, written: str
) -> None:
    assert unallowed_value(request_text, LINK, NAMES) == (
        written,
        ["prerequisite_of", "related_to", "part_of"],
    )


@pytest.mark.parametrize(
    "request_text",
    [
        "Relie Halogens et Metalloids avec le type related_to.",
        "Link Halogens to Metalloids, kind: related to.",
        "Make Halogens a prerequisite of Metalloids, type prerequisite.",
        "Which kind of link joins 'Halogens' and 'Metalloids'?",
        "Call link_concepts for Halogens and Metalloids as part_of.",
    ],
)
def test_allowed_values_names_and_the_tool_are_not_refused(request_text: str) -> None:
    assert unallowed_value(request_text, LINK, NAMES, tools={"link_concepts"}) is None


def test_quoted_text_is_a_value_only_where_no_argument_takes_free_text() -> None:
    # a flag has a free-text reason: quoted words may be the reason
    assert written_values("Flag card 5: 'answer is wrong', severity high.", FLAG, []) == ["high"]
    assert unallowed_value("Flag card 5 with severity critical.", FLAG, []) == (
        "critical",
        ["low", "medium", "high"],
    )
    assert allows("Related", ["related_to"]) and not allows("rel", ["related_to"])
