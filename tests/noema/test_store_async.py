from __future__ import annotations

import asyncio
import inspect
from datetime import timedelta

import pytest
from pydantic import BaseModel

from noema_graph.noema.errors import RecordNotFound, ToolInputError
from noema_graph.noema.operations import DOMAIN_OPERATIONS
from noema_graph.noema.store import AsyncLearningStore, LearningStore
from noema_graph.storage.sql.driver import execute
from tests.noema.conftest import T0, Locate

EXPECTED = {
    "list_due_cards",
    "get_card",
    "get_review_history",
    "record_review",
    "schedule_preview",
    "create_cards",
    "update_card",
    "flag_card",
    "flag_quality_issues",
    "search_cards",
    "get_concept_graph",
    "link_concepts",
    "list_categories",
    "move_card",
    "compute_calibration",
    "learning_stats",
    "ingest_text",
    "get_chunks",
    "find_quality_issues",
}


def test_operation_table_is_complete_and_tool_ready() -> None:
    assert set(DOMAIN_OPERATIONS) == EXPECTED
    for name, (model, function, permission, idempotency, description) in DOMAIN_OPERATIONS.items():
        assert issubclass(model, BaseModel) and callable(function)
        assert permission in ("fs:read", "fs:write")
        assert (idempotency == "safe") == (permission == "fs:read"), name
        assert description.endswith(".")
        schema = model.model_json_schema()
        assert schema["type"] == "object" and schema.get("additionalProperties") is False
        for prop in schema.get("properties", {}).values():
            assert "description" in prop or "$ref" in prop or "anyOf" in prop, (name, prop)


async def test_async_path_runs_the_same_operations(astore: AsyncLearningStore) -> None:
    created = await astore.call(
        "create_cards",
        deck_id=1,
        now=T0,
        cards=[{"front": "Q?", "back": "A"}, {"front": "R?", "back": "B"}],
    )
    outcome = await astore.call(
        "record_review",
        user_id=1,
        card_id=created.card_ids[0],
        rating=3,
        response_time_ms=900,
        confidence=0.7,
        reviewed_at=T0,
    )
    assert outcome.state.reps == 1
    due = await astore.call("list_due_cards", user_id=1, now=T0 + timedelta(minutes=15))
    assert [d.state for d in due.cards] == ["learning", "new"]
    hits = (await astore.call("search_cards", query="Q")).hits
    assert [h.card.id for h in hits] == [created.card_ids[0]]
    figures = await astore.call("compute_calibration", user_id=1)
    assert figures.brier == pytest.approx(0.09)


async def test_async_errors_roll_back_and_name_fields(astore: AsyncLearningStore) -> None:
    with pytest.raises(ToolInputError) as info:
        await astore.call(
            "create_cards",
            deck_id=1,
            cards=[{"front": "ok", "back": "ok"}, {"front": "bad", "back": " "}],
        )
    assert info.value.field == "cards[1].back"
    with pytest.raises(RecordNotFound):
        await astore.call("get_card", card_id=1)
    with pytest.raises(ToolInputError) as unknown:
        await astore.call("get_card", card_id=1, colour="red")
    assert unknown.value.field == "colour"
    with pytest.raises(ToolInputError) as no_op:
        await astore.call("delete_everything")
    assert no_op.value.field == "name"


async def test_handler_is_a_keyword_tool_callable(astore: AsyncLearningStore) -> None:
    handler = astore.handler("create_cards")
    assert inspect.iscoroutinefunction(handler) and handler.__name__ == "create_cards"
    result = await handler(deck_id=1, cards=[{"front": "Q", "back": "A"}])
    assert result.card_ids == [1]


async def test_concurrent_async_calls_are_serialised(astore: AsyncLearningStore) -> None:
    created = await astore.call(
        "create_cards", deck_id=1, now=T0, cards=[{"front": f"Q{i}", "back": "A"} for i in range(5)]
    )
    await asyncio.gather(
        *(
            astore.call(
                "record_review",
                user_id=1,
                card_id=cid,
                rating=3,
                response_time_ms=1,
                reviewed_at=T0,
            )
            for cid in created.card_ids
        )
    )
    history = await astore.call("get_review_history", user_id=1)
    assert len(history.reviews) == 5


async def test_sync_and_async_see_the_same_file(locate: Locate) -> None:
    where = locate("shared")
    with LearningStore.open(where) as store:
        store.run(execute("INSERT INTO decks (name, created_at) VALUES ('D', 't')"))
        store.call("create_cards", deck_id=1, cards=[{"front": "Shared?", "back": "Yes"}])
    async with await AsyncLearningStore.open(where) as astore:
        card = await astore.call("get_card", card_id=1)
    assert card.front == "Shared?"
