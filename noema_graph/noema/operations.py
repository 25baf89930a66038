"""The table of domain operations, ready to become tools.

Each entry gives the pydantic input model (the tool's argument schema), the sans-IO
function taking that model, the permission it needs, whether a retry is safe, and a
description for the model. Run one with ``LearningStore.call(name, **arguments)`` or
``AsyncLearningStore.call(...)``; ``AsyncLearningStore.handler(name)`` returns a keyword-only
async callable fit for a ``ToolSpec``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from noema_graph.noema.ops.analytics import (
    CalibrationInput,
    LearningStatsInput,
    compute_calibration,
    learning_stats,
)
from noema_graph.noema.ops.cards import (
    CreateCardsInput,
    FlagCardInput,
    GetCardInput,
    ListCategoriesInput,
    MoveCardInput,
    SearchCardsInput,
    UpdateCardInput,
    create_cards,
    flag_card,
    get_card,
    list_categories,
    move_card,
    search_cards,
    update_card,
)
from noema_graph.noema.ops.common import OpInput
from noema_graph.noema.ops.graph import (
    ConceptGraphInput,
    LinkConceptsInput,
    get_concept_graph,
    link_concepts,
)
from noema_graph.noema.ops.ingest import GetChunksInput, IngestTextInput, get_chunks, ingest_text
from noema_graph.noema.ops.quality import (
    QualityIssuesInput,
    find_quality_issues,
    flag_quality_issues,
)
from noema_graph.noema.ops.reviews import (
    ListDueCardsInput,
    RecordReviewInput,
    ReviewHistoryInput,
    SchedulePreviewInput,
    get_review_history,
    list_due_cards,
    record_review,
    schedule_preview,
)
from noema_graph.storage.sql.driver import Op

OWNER_FIELDS = frozenset({"user_id"})
"""Arguments that name the learner whose rows an operation reads or writes (reviews, card
states). An agent never takes them from the model: the framework fills them with the run's
learner (see :mod:`noema_graph.tools.injection`)."""

DomainPermission = Literal["fs:read", "fs:write"]
Idempotency = Literal["safe", "idempotent", "non_idempotent"]
"""Same values as ``noema_graph.tools.spec.Idempotency``."""


class DomainOperation(NamedTuple):
    """One operation; unpacks as (input_model, function, permission, idempotency, description)."""

    input_model: type[OpInput]
    function: Callable[[Any], Op[Any]]
    permission: DomainPermission | None
    idempotency: Idempotency
    description: str

    @property
    def owner_fields(self) -> frozenset[str]:
        """The arguments naming the learner whose rows it reads or writes (none: no learner)."""
        return OWNER_FIELDS & self.input_model.model_fields.keys()

    @property
    def writes(self) -> bool:
        """Whether the operation changes the store (it then takes the write lock)."""
        return self.permission == "fs:write"


_R: DomainPermission = "fs:read"
_W: DomainPermission = "fs:write"

DOMAIN_OPERATIONS: dict[str, DomainOperation] = {
    "list_due_cards": DomainOperation(
        ListDueCardsInput,
        list_due_cards,
        _R,
        "safe",
        "List the cards a learner should study now: overdue first, then new cards.",
    ),
    "get_card": DomainOperation(
        GetCardInput, get_card, _R, "safe", "Get one card with its tags and concepts."
    ),
    "get_review_history": DomainOperation(
        ReviewHistoryInput,
        get_review_history,
        _R,
        "safe",
        "List a learner's reviews (rating, time, confidence), newest first.",
    ),
    "record_review": DomainOperation(
        RecordReviewInput,
        record_review,
        _W,
        "non_idempotent",
        "Record a learner's answer (rating 1-4) and reschedule the card with FSRS.",
    ),
    "schedule_preview": DomainOperation(
        SchedulePreviewInput,
        schedule_preview,
        _R,
        "safe",
        "Show when a card would next be due after each rating, without recording anything.",
    ),
    "create_cards": DomainOperation(
        CreateCardsInput,
        create_cards,
        _W,
        "non_idempotent",
        "Create cards in a deck; all are validated first and none is written if one is bad.",
    ),
    "update_card": DomainOperation(
        UpdateCardInput,
        update_card,
        _W,
        "idempotent",
        "Change a card's kind, front, back or tags.",
    ),
    "flag_card": DomainOperation(
        FlagCardInput,
        flag_card,
        _W,
        "idempotent",
        "Flag a card for a quality problem with a severity (low, medium, high).",
    ),
    "search_cards": DomainOperation(
        SearchCardsInput,
        search_cards,
        _R,
        "safe",
        "Full-text search over card fronts, backs and tags.",
    ),
    "get_concept_graph": DomainOperation(
        ConceptGraphInput,
        get_concept_graph,
        _R,
        "safe",
        "Get the knowledge graph, or the concepts within some links of one concept.",
    ),
    "link_concepts": DomainOperation(
        LinkConceptsInput,
        link_concepts,
        _W,
        "idempotent",
        "Link two concepts (prerequisite_of, related_to, part_of, contrasts_with).",
    ),
    "list_categories": DomainOperation(
        ListCategoriesInput,
        list_categories,
        _R,
        "safe",
        "List the category taxonomy with paths and card counts.",
    ),
    "move_card": DomainOperation(
        MoveCardInput, move_card, _W, "idempotent", "Move a card into a taxonomy category."
    ),
    "compute_calibration": DomainOperation(
        CalibrationInput,
        compute_calibration,
        _R,
        "safe",
        "Measure how well a learner's confidence matches recall: Brier, ECE, bias.",
    ),
    "learning_stats": DomainOperation(
        LearningStatsInput,
        learning_stats,
        _R,
        "safe",
        "Summarise a learner's retention, lapses, streak and reviews per day.",
    ),
    "ingest_text": DomainOperation(
        IngestTextInput,
        ingest_text,
        _W,
        "non_idempotent",
        "Store a document split into overlapping chunks on paragraph and sentence boundaries.",
    ),
    "get_chunks": DomainOperation(
        GetChunksInput, get_chunks, _R, "safe", "Get an ingested source and its chunks."
    ),
    "find_quality_issues": DomainOperation(
        QualityIssuesInput,
        find_quality_issues,
        _R,
        "safe",
        "Find duplicate cards, empty sides and ambiguous clozes.",
    ),
    "flag_quality_issues": DomainOperation(
        QualityIssuesInput,
        flag_quality_issues,
        _W,
        "idempotent",
        "Find duplicate cards, empty sides and ambiguous clozes, and flag every card found.",
    ),
}
"""Every domain operation by tool name."""
