"""The ten Noema agents (seed 000) as :class:`AgentDefinition` objects."""

from __future__ import annotations

from noema_graph.agents import schemas
from noema_graph.agents.definition import AgentDefinition, AgentLimits

# A run that ends exactly on max_iterations is finalized without the structured answer, so
# the limits leave headroom over the few iterations each agent needs.
_QUICK = AgentLimits(max_iterations=5, reflection_interval=4, max_replans=1, timeout_s=180)
_WORK = AgentLimits(max_iterations=6, reflection_interval=3, max_replans=2, timeout_s=300)
# One tool call answers the request: after its result the agent answers (no second call, no
# periodic reflection); a failed call may be retried.
_ONE_CALL = AgentLimits(
    max_iterations=5,
    reflection_interval=5,
    max_replans=1,
    timeout_s=120,
    answer_after_tool_results=1,
)

LEARNING = AgentDefinition(
    name="learning",
    description="Pick the next card a learner should study.",
    prompt="learning",
    prompt_version="1.1.0",
    prompt_variables={"due_limit": "5"},
    tools=("list_due_cards",),
    tool_arguments={"list_due_cards": ("user_id", "limit")},
    output_schema=schemas.NextCard,
    limits=_ONE_CALL,
)
DIAGNOSTIC = AgentDefinition(
    name="diagnostic",
    description="Analyse a learner's retention, lapses and study patterns.",
    prompt="diagnostic",
    prompt_variables={"history_limit": "50"},
    tools=("learning_stats", "get_review_history"),
    output_schema=schemas.Diagnosis,
    limits=_QUICK,
)
STRATEGY = AgentDefinition(
    name="strategy",
    description="Adjust a learner's study strategy from a diagnosis.",
    prompt="strategy",
    prompt_variables={"max_new_cards": "20"},
    tools=("learning_stats",),
    subagents=("diagnostic",),
    output_schema=schemas.StrategyAdjustment,
    limits=_WORK,
)
CONTENT_GENERATION = AgentDefinition(
    name="content_generation",
    description="Write new flashcards into a deck.",
    prompt="content_generation",
    prompt_variables={"max_cards": "10"},
    tools=("search_cards", "create_cards", "list_categories"),
    output_schema=schemas.GeneratedCards,
    limits=_WORK,
)
SOCRATIC_TUTOR = AgentDefinition(
    name="socratic_tutor",
    description="Guide a learner with questions over a multi-turn dialogue.",
    prompt="socratic_tutor",
    prompt_variables={"max_words": "30"},
    tools=("get_card", "search_cards", "get_concept_graph"),
    subagents=("calibration",),
    output_schema=schemas.SocraticTurn,
    limits=_WORK,
)
CALIBRATION = AgentDefinition(
    name="calibration",
    description="Compare a learner's self-reported confidence with their recall.",
    prompt="calibration",
    prompt_version="1.1.0",
    prompt_variables={"bias_margin": "0.05"},
    tools=("compute_calibration",),
    tool_arguments={"compute_calibration": ("user_id",)},
    output_schema=schemas.CalibrationAdvice,
    limits=_ONE_CALL,
)
INGESTION = AgentDefinition(
    name="ingestion",
    description="Store a document as chunks and name its key concepts.",
    prompt="ingestion",
    prompt_variables={"chunk_size": "1200"},
    tools=("ingest_text", "get_chunks"),
    output_schema=schemas.IngestionReport,
    limits=_WORK,
)
KNOWLEDGE_GRAPH = AgentDefinition(
    name="knowledge_graph",
    description="Link related concepts in the knowledge graph.",
    prompt="knowledge_graph",
    prompt_variables={"depth": "1"},
    tools=("get_concept_graph", "link_concepts", "search_cards"),
    output_schema=schemas.ConceptLinks,
    limits=_WORK,
)
TAXONOMY_CURATOR = AgentDefinition(
    name="taxonomy_curator",
    description="Keep cards in the right categories of the taxonomy.",
    prompt="taxonomy_curator",
    prompt_variables={"max_moves": "10"},
    tools=("list_categories", "search_cards", "move_card"),
    output_schema=schemas.TaxonomyReport,
    limits=_WORK,
)
GOVERNANCE = AgentDefinition(
    name="governance",
    description="Find low-quality cards (duplicates, empty sides, ambiguous clozes) and flag them.",
    prompt="governance",
    prompt_version="1.1.0",
    prompt_variables={"max_flags": "20"},
    # flag_quality_issues scans the whole collection and flags every problem it finds, in one
    # call; flag_card serves problems the user names. The deck filter is not offered: the
    # embedded model filled it with an id copied from the example.
    tools=("flag_quality_issues", "flag_card"),
    tool_arguments={
        "flag_quality_issues": (),
        "flag_card": ("card_id", "reason", "severity"),
    },
    output_schema=schemas.GovernanceReport,
    limits=_ONE_CALL,
)

DEFINITIONS: tuple[AgentDefinition, ...] = (
    LEARNING,
    DIAGNOSTIC,
    STRATEGY,
    CONTENT_GENERATION,
    SOCRATIC_TUTOR,
    CALIBRATION,
    INGESTION,
    KNOWLEDGE_GRAPH,
    TAXONOMY_CURATOR,
    GOVERNANCE,
)
"""The ten agents, in the order of seed 000."""
