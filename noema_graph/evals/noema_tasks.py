"""Build the Noema task set: requests over the demo store with gold outputs read from it.

Every gold value is computed from the store ``write_demo_data`` writes (seed 7): the first
due card of a learner, their calibration figures, retention and lapses, the deliberately bad
cards, category and deck ids. Values that depend on the clock are never gold (the due order
is fixed by the due dates; retrievability is not). The ``expected_state`` of the items that
write is what the gold calls change in a copy of that store (:func:`expected_state`); the
other items expect the store unchanged. Rebuild the shipped file with::

    python -m noema_graph.evals.noema_tasks noema_graph/evals/datasets/noema_tasks.json
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired

from typing_extensions import TypedDict

from noema_graph.agents.views import calibration_view
from noema_graph.evals import NOEMA_TASKS
from noema_graph.evals.state import store_changes
from noema_graph.noema import LearningStore, write_demo_data

LEARNERS = {"ada": 1, "ben": 2, "cleo": 3}
TOLERANCE = 0.01
"""Absolute tolerance of the numeric gold values (figures are shown rounded to 3 places)."""


class TaskItem(TypedDict):
    """An item of the task set, as :class:`noema_graph.trajectory.schema.EvalItem` reads it."""

    id: str
    input: str
    expected_output: Any  # gold JSON: operators such as {"$len": 2} inside
    expected_trajectory: Sequence[Mapping[str, Any]]
    tags: list[str]
    expected_state: NotRequired[list[dict[str, Any]]]


def _item(
    agent: str,
    n: int,
    text: str,
    output: object,
    trajectory: Sequence[Mapping[str, object]],
    user: str = "ada",
) -> TaskItem:
    return {
        "id": f"{agent}-{n}",
        "input": text,
        "expected_output": output,
        "expected_trajectory": trajectory,
        "tags": [f"agent:{agent}", f"user:{user}"],
    }


def _learning(store: LearningStore) -> Iterator[TaskItem]:
    asks = ["What should I study next?", "Which card is due next for me?"]
    for n, (name, uid) in enumerate([*LEARNERS.items(), ("ben", 2)], 1):
        first = store.call("list_due_cards", user_id=uid, limit=5).cards[0].card.id
        call = {"tool": "list_due_cards", "input": {"user_id": uid}}
        yield _item("learning", n, asks[n // 4], {"card_id": first}, [call], name)
    more = [
        ("cleo", "Pick one card for me to review right now."),
        ("ada", "Give me my next flashcard."),
    ]
    for n, (name, text) in enumerate(more, 5):
        uid = LEARNERS[name]
        first = store.call("list_due_cards", user_id=uid, limit=5).cards[0].card.id
        call = {"tool": "list_due_cards", "input": {"user_id": uid}}
        yield _item("learning", n, text, {"card_id": first}, [call], name)


def _calibration(store: LearningStore) -> Iterator[TaskItem]:
    asks = ["Is my confidence well calibrated?", "Am I over-confident when I answer?"]
    for n, (name, uid) in enumerate([*LEARNERS.items(), ("cleo", 3)], 1):
        view = calibration_view(store.call("compute_calibration", user_id=uid))
        gold = {k: view[k] for k in ("brier", "ece", "bias")}
        call = {"tool": "compute_calibration", "input": {"user_id": uid}}
        yield _item("calibration", n, asks[n // 4], gold, [call], name)
    more = [
        ("ada", "How reliable is my sense of how well I know a card?"),
        ("ben", "Do I overestimate what I know?"),
    ]
    for n, (name, text) in enumerate(more, 5):
        uid = LEARNERS[name]
        view = calibration_view(store.call("compute_calibration", user_id=uid))
        gold = {k: view[k] for k in ("brier", "ece", "bias")}
        call = {"tool": "compute_calibration", "input": {"user_id": uid}}
        yield _item("calibration", n, text, gold, [call], name)


def _diagnostic(store: LearningStore) -> Iterator[TaskItem]:
    asks = ["How am I doing?", "Where do I struggle most?"]
    more = [
        ("ben", "Analyse my retention and how often I forget cards."),
        ("cleo", "Diagnose my learning."),
    ]
    learners = [
        (name, uid, asks[n // 4])
        for n, (name, uid) in enumerate([*LEARNERS.items(), ("ada", 1)], 1)
    ]
    learners += [(name, LEARNERS[name], text) for name, text in more]
    for n, (name, uid, text) in enumerate(learners, 1):
        stats = store.call("learning_stats", user_id=uid)
        gold = {"lapses": stats.lapses, "retention": round(stats.retention or 0.0, 3)}
        calls = [
            {"tool": "learning_stats", "input": {"user_id": uid}},
            {"tool": "get_review_history", "input": {"user_id": uid}},
        ]
        yield _item("diagnostic", n, text, gold, calls, name)


def _strategy() -> Iterator[TaskItem]:
    asks = [
        "Adjust my study plan.",
        "Adjust my study plan.",
        "Adjust my study plan.",
        "Plan my week.",
        "How should I change my study routine?",
        "Suggest a better daily study schedule for me.",
    ]
    for n, name in enumerate(["ada", "ben", "cleo", "ben", "cleo", "ada"], 1):
        gold = {"new_cards_per_day": {"$gte": 0, "$lte": 20}}
        call = {"tool": "consult_diagnostic", "input": {}}
        yield _item("strategy", n, asks[n - 1], gold, [call], name)


def _content(store: LearningStore) -> Iterator[TaskItem]:
    decks = {d["name"]: d["id"] for d in _rows(store, "SELECT id, name FROM decks")}
    topics = [
        ("Chemical Elements", "two cards about noble gases", 2),
        ("World Capitals", "two cards about capitals of Central Asia", 2),
        ("Spanish Vocabulary", "three cards with Spanish words for colours", 3),
        ("Cell Biology", "one card about ribosomes", 1),
        ("World Capitals", "one card about the capital of Canada", 1),
        ("Cell Biology", "two cards about mitochondria", 2),
    ]
    for n, (deck, topic, count) in enumerate(topics, 1):
        deck_id = decks[deck]
        gold = {"deck_id": deck_id, "card_ids": {"$len": count}}
        calls = [
            {"tool": "search_cards", "input": {}},
            {"tool": "create_cards", "input": {"deck_id": deck_id}},
        ]
        yield _item("content_generation", n, f"Add {topic} to deck {deck_id}.", gold, calls)


def _tutor(store: LearningStore) -> Iterator[TaskItem]:
    asks = {
        60: "Quiz me on card {} but do not give away the answer.",
        42: "Ask me a guiding question about card {}; keep the answer hidden.",
    }
    users = ["ada", "ben", "cleo", "ada", "ben", "cleo"]
    for n, card_id in enumerate((5, 100, 150, 190, 60, 42), 1):
        card = store.call("get_card", card_id=card_id)
        gold = {"question": {"$not_icontains": card.back}}
        ask = asks.get(card_id, "Help me recall card {} without telling me the answer.")
        call = {"tool": "get_card", "input": {"card_id": card_id}}
        yield _item("socratic_tutor", n, ask.format(card_id), gold, [call], users[n - 1])


_DOCUMENTS = (
    ("Tides", "The Moon's gravity pulls the oceans and raises two tidal bulges."),
    ("Photosynthesis", "Plants turn light, water and carbon dioxide into sugar and oxygen."),
    ("Volcanoes", "Magma rises through the crust and erupts as lava, ash and gas."),
    ("Plate tectonics", "The lithosphere is split into plates that drift on the mantle."),
    ("Rainbows", "Raindrops refract and reflect sunlight, splitting it into its colours."),
    ("Vaccines", "A vaccine trains the immune system to recognise a pathogen before infection."),
)
_INGEST_ASKS = {
    "Rainbows": "Store this text under the title '{}' and tell me its key concepts: {}",
    "Vaccines": "Please add a document called '{}' to my library: {}",
}


def _ingestion(store: LearningStore) -> Iterator[TaskItem]:
    (row,) = _rows(store, "SELECT COALESCE(MAX(id), 0) + 1 AS next FROM sources")
    for n, (title, text) in enumerate(_DOCUMENTS, 1):
        gold = {"source_id": row["next"], "chunk_count": 1}
        calls = [
            {"tool": "ingest_text", "input": {"title": title}},
            {"tool": "get_chunks", "input": {"source_id": row["next"]}},
        ]
        ask = _INGEST_ASKS.get(title, "Ingest this note titled '{}': {}")
        yield _item("ingestion", n, ask.format(title, text), gold, calls)


_LINKS = (
    ("Halogens", "Alkali metals", "contrasts_with"),
    ("Capital cities", "Europe", "related_to"),
    ("Spanish verbs", "Spanish nouns", "related_to"),
    ("Atomic number", "Chemical symbol", "related_to"),
    ("Spanish adjectives", "Spanish verbs", "related_to"),
    ("Transition metals", "Post-transition metals", "contrasts_with"),
)
_LINK_ASKS = {
    "Spanish adjectives": "Connect {} with {} in the knowledge graph as {}.",
    "Transition metals": "Record that {} {} ({}).",
}


def _graph(store: LearningStore) -> Iterator[TaskItem]:
    existing = {(lk.source, lk.target) for lk in store.call("get_concept_graph").links}
    names = {node.concept.name for node in store.call("get_concept_graph").nodes}
    for n, (source, target, kind) in enumerate(_LINKS, 1):
        assert {source, target} <= names, f"no concept {source!r} or {target!r}"
        assert (source, target) not in existing, f"{source} -> {target} is already linked"
        link = {"source": source, "target": target, "kind": kind}
        calls = [
            {"tool": "get_concept_graph", "input": {}},
            {"tool": "link_concepts", "input": link},
        ]
        ask = _LINK_ASKS.get(source, "Link the concept {} to {} ({}).")
        text = ask.format(
            source, target if source != "Transition metals" else f"contrast with {target}", kind
        )
        yield _item("knowledge_graph", n, text, {"links": [link]}, calls)


def _taxonomy(store: LearningStore) -> Iterator[TaskItem]:
    categories = {c.name: c.id for c in store.call("list_categories").categories}
    moves = (
        (5, "Geography"),
        (120, "Chemistry"),
        (150, "Spanish"),
        (190, "Biology"),
        (60, "Capitals"),
        (170, "Vocabulary"),
    )
    asks = {
        60: "Card {} ('{}') belongs in {}: please recategorise it.",
        170: "File card {} ('{}') under the {} category.",
    }
    for n, (card_id, name) in enumerate(moves, 1):
        card = store.call("get_card", card_id=card_id)
        move = {"card_id": card_id, "category_id": categories[name]}
        calls = [{"tool": "list_categories", "input": {}}, {"tool": "move_card", "input": move}]
        ask = asks.get(card_id, "Move card {} ('{}') into the {} category.")
        text = ask.format(card_id, card.front, name)
        yield _item("taxonomy_curator", n, text, {"moves": [move]}, calls)


def _governance(store: LearningStore) -> Iterator[TaskItem]:
    report = store.call("find_quality_issues")
    flagged = [{"card_id": cid} for cid in sorted({i.card_id for i in report.issues})]
    scan = {"flagged": flagged, "cards_scanned": report.cards_scanned}
    for n, text in enumerate(("Check the cards for quality problems.", "Find bad cards."), 1):
        yield _item("governance", n, text, scan, [{"tool": "flag_quality_issues", "input": {}}])
    flags = (
        (12, "Flag card {}: its answer is ambiguous."),
        (77, "Flag card {}: its answer is ambiguous."),
        (33, "Card {} has a misleading answer; mark it for review."),
    )
    for n, (card_id, text) in enumerate(flags, 3):
        call = {"tool": "flag_card", "input": {"card_id": card_id}}
        yield _item(
            "governance", n, text.format(card_id), {"flagged": [{"card_id": card_id}]}, [call]
        )
    text = "Scan my whole collection for low-quality flashcards."
    yield _item("governance", 6, text, scan, [{"tool": "flag_quality_issues", "input": {}}])


def _rows(store: LearningStore, sql: str) -> list[Any]:
    return store.connection.execute(sql).fetchall()


def expected_state(
    db: str | Path, calls: Sequence[tuple[str, dict[str, Any]]], keep: Mapping[str, Sequence[str]]
) -> list[dict[str, Any]]:
    """Return the ``expected_state`` of ``calls`` applied to a copy of the store at ``db``.

    A changed row keeps its key and the columns that changed (timestamps left out); new rows
    keep the columns ``keep`` names for their table, and identical ones are counted.
    """
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.sqlite"
        shutil.copyfile(db, copy)
        with LearningStore.open(copy) as store:
            for tool, args in calls:
                store.call(tool, **args)
        changes = store_changes(copy, db)
    rows: list[dict[str, Any]] = []
    for change in changes:
        if change.kind == "new":
            values = {k: (change.after or {})[k] for k in keep[change.table]}
            row = {"table": change.table, "new": True, "values": values}
            same = next((r for r in rows if r.get("new") and r["table"] == row["table"]
                         and r["values"] == values), None)  # fmt: skip
            if same is not None:
                same["count"] = same.get("count", 1) + 1
            else:
                rows.append(row)
        elif change.kind == "changed":
            before, after = change.before or {}, change.after or {}
            values = {
                k: v for k, v in after.items() if v != before.get(k) and not k.endswith("_at")
            }
            rows.append({"table": change.table, "key": change.key, "values": values})
        else:
            rows.append({"table": change.table, "key": change.key, "deleted": True})
    return rows


_KEEP: dict[str, dict[str, tuple[str, ...]]] = {
    "content_generation": {"cards": ("deck_id",)},
    "ingestion": {"sources": ("title",), "chunks": ("source_id",)},
    "knowledge_graph": {"concept_links": ("source_id", "target_id", "kind")},
    "taxonomy_curator": {},
    "governance": {"card_flags": ("card_id", "reason", "severity")},
}
"""Per writing agent, the columns of new rows its items grade (the model words the rest)."""


def _gold_calls(item: TaskItem) -> list[tuple[str, dict[str, Any]]]:
    """Return the write calls that do what ``item`` asks, with every argument filled."""
    calls = [(c["tool"], dict(c["input"])) for c in item["expected_trajectory"]]
    filled: list[tuple[str, dict[str, Any]]] = []
    for tool, args in calls:
        if tool == "create_cards":
            count = item["expected_output"]["card_ids"]["$len"]
            cards = [{"front": f"Question {i}?", "back": f"Answer {i}"} for i in range(count)]
            filled.append((tool, {**args, "cards": cards}))
        elif tool == "ingest_text":
            text = dict(_DOCUMENTS)[args["title"]]
            filled.append((tool, {**args, "text": text}))
        elif tool == "flag_card":
            filled.append((tool, {**args, "reason": "the model words the reason"}))
        elif tool in ("link_concepts", "move_card", "flag_quality_issues"):
            filled.append((tool, args))
    return filled


def _with_state(db: str | Path, item: TaskItem) -> TaskItem:
    agent = next(t.removeprefix("agent:") for t in item["tags"] if t.startswith("agent:"))
    if agent not in _KEEP:
        return item
    keep = dict(_KEEP[agent])
    if any(tool == "flag_card" for tool, _ in _gold_calls(item)):
        keep["card_flags"] = ("card_id",)
    rows = expected_state(db, _gold_calls(item), keep)
    if agent == "content_generation":  # new cards may be tagged with existing concepts
        rows.append({"table": "card_concepts", "new": True, "count": {"$gte": 0}, "values": {}})
    return {**item, "expected_state": rows} if rows else item


def build_noema_tasks(db: str | Path) -> dict[str, Any]:
    """Return the task set (dataset JSON) computed from the demo store at ``db``."""
    with LearningStore.open(db) as store:
        items = [
            *_learning(store),
            *_diagnostic(store),
            *_strategy(),
            *_content(store),
            *_tutor(store),
            *_calibration(store),
            *_ingestion(store),
            *_graph(store),
            *_taxonomy(store),
            *_governance(store),
        ]
    return {"dataset": [_with_state(db, item) for item in items]}


def build_from_demo() -> dict[str, Any]:
    """Write the demo store into a temporary file and build the task set from it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "demo.sqlite"
        write_demo_data(path)
        return build_noema_tasks(path)


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else NOEMA_TASKS
    target.write_text(json.dumps(build_from_demo(), indent=2, ensure_ascii=False) + "\n")
