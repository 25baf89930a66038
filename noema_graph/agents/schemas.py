"""The output schemas of the ten Noema agents (the ``result`` of each agent's output).

They are small and flat on purpose: the embedded model fills them through a JSON-schema
grammar, which enforces types, enums and integer bounds; probabilities are clamped into
[0, 1] rather than rejected, since the grammar cannot bound a float.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from noema_graph.models.repetition import distinct_items, trim_repetition


def _clamp_unit(value: object) -> object:
    """Clamp a number into [0, 1]; leave anything else to pydantic's type check."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return min(1.0, max(0.0, float(value)))
    return value


Probability = Annotated[float, BeforeValidator(_clamp_unit), Field(ge=0.0, le=1.0)]

# Free text, bounded and without loops. The bound is sized to what the field holds, so
# schema-constrained decoding (the local model) stops a ramble early; the validator cuts a
# repeated run back to the last complete sentence (noema_graph.models.repetition).
Sentence = Annotated[str, Field(max_length=200), AfterValidator(trim_repetition)]
"""One sentence: a reason, a question, a hint, an advice."""
Sentences = Annotated[str, Field(max_length=320), AfterValidator(trim_repetition)]
"""One or two sentences: a summary, a rationale."""
Name = Annotated[str, Field(max_length=80), AfterValidator(trim_repetition)]
"""A concept, topic or area: a few words."""
Item = Annotated[str, Field(max_length=120), AfterValidator(trim_repetition)]
"""One entry of a list: a pattern, an adjustment, a suggestion."""
Items = Annotated[list[Item], Field(max_length=8), AfterValidator(distinct_items)]
"""A list of at most 8 entries, each once: a looping model writes the same entry again."""
Names = Annotated[list[Name], Field(max_length=8), AfterValidator(distinct_items)]
"""A list of at most 8 names, each once."""


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NextCard(_Result):
    """learning: the card to study next."""

    card_id: int = Field(description="Id of the chosen card, from list_due_cards.")
    reason: Sentence = Field(description="Why this card now, in one sentence.")
    expected_recall: Probability = Field(description="Probability the learner recalls it now.")


class Diagnosis(_Result):
    """diagnostic: how the learner is doing and what goes wrong."""

    retention: Probability = Field(description="Share of reviews recalled (0-1).")
    lapses: int = Field(ge=0, description="Cards forgotten after being learned.")
    patterns: Items = Field(description="Learning patterns observed, one per item.")
    weak_areas: Names = Field(description="Topics, concepts or cards that need work.")
    summary: Sentences = Field(description="The diagnosis in one or two sentences.")


class StrategyAdjustment(_Result):
    """strategy: how the learner's study plan should change."""

    focus: Name = Field(description="What to concentrate on next.")
    new_cards_per_day: int = Field(ge=0, le=100, description="New cards to introduce daily.")
    adjustments: Items = Field(description="Concrete changes to the study routine.")
    rationale: Sentences = Field(description="Why, citing the diagnosis.")


class GeneratedCards(_Result):
    """content_generation: the cards written to the store."""

    deck_id: int = Field(description="Deck the cards were added to.")
    card_ids: list[int] = Field(description="Ids returned by create_cards.")
    summary: Sentence = Field(description="What the cards cover.")


class SocraticTurn(_Result):
    """socratic_tutor: the next guiding question of a dialogue."""

    question: Sentence = Field(description="The next question to ask the learner.")
    concept: Name = Field(description="The concept the question works towards.")
    hint: Sentence = Field(description="A hint to give if the learner is stuck.")
    understanding: Literal["none", "partial", "solid"] = Field(
        description="The learner's understanding so far."
    )


class CalibrationAdvice(_Result):
    """calibration: self-assessed confidence against actual recall."""

    brier: float = Field(ge=0.0, description="Brier score from compute_calibration (0 best).")
    ece: float = Field(ge=0.0, description="Expected calibration error (0 best).")
    bias: float = Field(description="Mean confidence minus accuracy (>0 over-confident).")
    advice: Sentence = Field(description="One sentence of advice to the learner.")


class IngestionReport(_Result):
    """ingestion: what was stored from a document."""

    source_id: int = Field(description="Id returned by ingest_text.")
    chunk_count: int = Field(ge=0, description="Chunks stored.")
    key_concepts: Names = Field(description="Main concepts of the document.")
    summary: Sentence = Field(description="What the document is about.")


class ConceptLinkOut(_Result):
    """One link between two concepts."""

    source: Name
    target: Name
    kind: Literal["prerequisite_of", "related_to", "part_of", "contrasts_with"]


class ConceptLinks(_Result):
    """knowledge_graph: the links made or found."""

    links: list[ConceptLinkOut] = Field(description="Links created with link_concepts.")
    summary: Sentence = Field(description="How the concepts relate.")


class CardMove(_Result):
    """One card moved into a category."""

    card_id: int
    category_id: int


class TaxonomyReport(_Result):
    """taxonomy_curator: the category changes made or proposed."""

    moves: list[CardMove] = Field(description="Cards moved with move_card.")
    suggestions: Items = Field(description="Further changes to the taxonomy.")
    summary: Sentence = Field(description="The state of the taxonomy in one sentence.")


class FlaggedCard(_Result):
    """One card flagged for a quality problem."""

    card_id: int
    issue: Annotated[str, Field(max_length=40)] = Field(
        description="The problem, e.g. exact_duplicate, empty_back, cloze_without_deletion."
    )
    severity: Literal["low", "medium", "high"]


class GovernanceReport(_Result):
    """governance: the quality problems found and flagged."""

    flagged: list[FlaggedCard] = Field(
        max_length=20, description="Cards flagged, as the flagging tool reported them."
    )
    cards_scanned: int = Field(ge=0, description="Cards checked by find_quality_issues.")
    summary: Sentence = Field(description="Quality of the collection in one sentence.")

    @field_validator("flagged")
    @classmethod
    def _once_per_card(cls, flagged: list[FlaggedCard]) -> list[FlaggedCard]:
        """Keep each card's first entry: a small model may list a flagged card twice."""
        seen: set[int] = set()
        kept: list[FlaggedCard] = []
        for item in flagged:
            if item.card_id not in seen:
                seen.add(item.card_id)
                kept.append(item)
        return kept
