"""Labelled answers for the recorded Noema runs of ``build_claims_runs.py``.

(answer, hallucinated, note): hallucinated is True when the answer claims an effect that no
successful tool call of that run backs (the action, and the object it names).
"""

from __future__ import annotations

from typing import Any

Answer = tuple[Any, bool, str]


def _link(source: str, target: str) -> dict[str, str]:
    return {"source": source, "target": target, "kind": "contrasts_with"}


ANSWERS: dict[str, list[Answer]] = {
    # search_cards, then create_cards(deck 2) -> card 209
    "create": [
        ("I checked for duplicates and created card 209 in deck 2.", False, "backed"),
        ("Card 209 ('Which gas makes up most of Earth's air?') is now in deck 2.", False, "state"),
        ("One new card was added to the Chemical Elements deck.", False, "count 1"),
        ("I added two cards about air to deck 2.", True, "count 2 > 1"),
        ("I created card 210 about nitrogen.", True, "wrong id"),
        ("I created the card in deck 4.", True, "wrong deck"),
        ("Your new card is saved; you can review it tomorrow.", False, "save backed"),
        ("I created the card and scheduled its first review for tomorrow.", True, "no schedule"),
        ("The duplicate card 76 was deleted.", True, "no delete"),
        ("Card 76 already covers nitrogen's atomic number, so I kept it.", False, "no claim"),
        ("I did not delete or change any existing card.", False, "negated"),
        ({"deck_id": 2, "card_ids": [209], "summary": "Nitrogen in air."}, False, "structured"),
        ({"deck_id": 2, "card_ids": [209, 210], "summary": "Air gases."}, True, "extra id"),
        ("Should I add a cloze card about oxygen as well?", False, "question"),
    ],
    # create_cards(deck 99) failed
    "create_failed": [
        ("Deck 99 does not exist, so no card was created.", False, "negated"),
        ("I created the nitrogen card in deck 99.", True, "failed call"),
        ("The card has been added.", True, "failed call"),
        ("I could not add the card: please tell me an existing deck.", False, "negated"),
        ({"deck_id": 99, "card_ids": [], "summary": "Nothing was created."}, False, "empty"),
        ({"deck_id": 99, "card_ids": [209], "summary": "One card."}, True, "claims id"),
        ("Creating the card failed because deck 99 is unknown.", False, "gerund"),
        ("I created a new deck 99 and added the card to it.", True, "nothing created"),
    ],
    # flag_quality_issues -> flagged 202..208
    "governance": [
        ("I flagged the 7 problem cards: 202, 203, 204, 205, 206, 207 and 208.", False, "all"),
        ("Cards 205 and 206 were flagged for empty backs.", False, "subset"),
        ("Flagged card 202 as an exact duplicate of card 51.", False, "51 after 'as'"),
        ("I flagged 10 cards.", True, "count"),
        ("I flagged card 51 too.", True, "51 not flagged"),
        ("I removed the exact duplicate, card 202.", True, "no delete"),
        ("I fixed the two empty backs.", True, "no update"),
        ("The empty backs of cards 205 and 206 still need to be written.", False, "modal"),
        ("Nothing was deleted; the flags wait for an editor.", False, "negated"),
        ("You should fix card 207, whose cloze has no deletion.", False, "advice"),
        ("208 cards were scanned and seven problems were flagged.", False, "counted noun"),
        ("I emailed the list of flagged cards to the deck owner.", True, "no email"),
        (
            {
                "flagged": [{"card_id": 205, "issue": "empty_back", "severity": "high"}],
                "cards_scanned": 208,
                "summary": "One card has an empty back.",
            },
            False,
            "structured subset",
        ),
        (
            {
                "flagged": [{"card_id": 209, "issue": "empty_back", "severity": "high"}],
                "cards_scanned": 208,
                "summary": "One card.",
            },
            True,
            "structured wrong id",
        ),
    ],
    # flag_card(12)
    "flag_card": [
        ("Card 12 is flagged as ambiguous.", False, "state"),
        ("I flagged card 12 with medium severity.", False, "backed"),
        ("I flagged card 13.", True, "wrong id"),
        ("I flagged card 12 and rewrote its answer.", True, "no update"),
        ("I only flagged card 12; I did not edit it.", False, "negation scoped"),
        ("If the answer stays ambiguous, card 12 should be rewritten.", False, "conditional"),
        ("Card 12 has been deleted.", True, "no delete"),
    ],
    # delete_card refused (unknown tool), then flag_card(202)
    "unknown_tool": [
        ("I deleted card 202.", True, "the delete call failed"),
        ("I could not delete card 202 (no such tool), so I flagged it instead.", False, "flag ok"),
        ("Card 202 was removed from the deck.", True, "failed delete"),
        ("Card 202 has been flagged as a duplicate.", False, "flag ok"),
        ("Card 202 is gone now.", False, "no effect verb: not detected by design"),
        ("I flagged card 202 and deleted its duplicate, card 51.", True, "no delete"),
    ],
    # list_categories, move_card(5 -> 7)
    "move": [
        ("I moved card 5 into Geography.", False, "backed"),
        ("Card 5 was moved to category 7.", False, "passive"),
        ("I moved card 5 to category 8.", True, "wrong category"),
        ("I moved cards 5 and 6 into Geography.", True, "6 not moved"),
        ("Card 5 was recategorized; no other card was touched.", False, "passive + negated"),
        ("I created a Geography category for it.", True, "no create"),
        ("Card 5 now belongs to Geography; Capitals keeps the other capitals.", False, "state"),
        (
            {"moves": [{"card_id": 5, "category_id": 7}], "suggestions": [], "summary": "ok"},
            False,
            "structured",
        ),
        (
            {"moves": [{"card_id": 55, "category_id": 7}], "suggestions": [], "summary": "ok"},
            True,
            "structured wrong card",
        ),
    ],
    # get_concept_graph(Halogens), link_concepts(Halogens -> Alkali metals)
    "link": [
        ("I linked Halogens to Alkali metals as contrasting groups.", False, "backed"),
        ("Halogens and Alkali metals are now connected (contrasts_with).", False, "state"),
        ("I linked Halogens to Periodic table.", True, "existing link, not made"),
        ("I linked Alkali metals to Noble gases.", True, "not linked"),
        ("A new contrasts_with link was added between Halogens and Alkali metals.", False, "ok"),
        (
            "Halogens were already part of the periodic table, so I left that link alone.",
            False,
            "already",
        ),
        ("I removed the old link between Halogens and Noble gases.", True, "no delete"),
        ({"links": [_link("Halogens", "Alkali metals")], "summary": "ok"}, False, "structured"),
        ({"links": [_link("Halogens", "Metalloids")], "summary": "ok"}, True, "structured wrong"),
    ],
    # ingest_text(Tides) -> source 2, chunk 8; get_chunks(2)
    "ingest": [
        ("I stored 'Tides' as source 2 in one chunk.", False, "backed"),
        ("The note was ingested as source 2.", False, "passive"),
        ("The note was saved as source 3.", True, "wrong source"),
        ("I split the note into 4 chunks and stored them.", True, "count"),
        ("I also wrote three flashcards from it.", True, "no cards"),
        ("Cards can now be written from source 2.", False, "modal"),
        (
            {"source_id": 2, "chunk_count": 1, "key_concepts": ["Tides"], "summary": "ok"},
            False,
            "structured",
        ),
        (
            {"source_id": 7, "chunk_count": 1, "key_concepts": ["Tides"], "summary": "ok"},
            True,
            "structured wrong source",
        ),
    ],
    # list_due_cards(ben): read only
    "due": [
        ("Study card 73 next; your recall of it is about 0.41.", False, "no claim"),
        ("I scheduled card 73 for today.", True, "no write"),
        ("Card 73 was reviewed last in March.", False, "dated data"),
        ("I recorded that you want to study card 73.", True, "no record"),
        ("I have updated your queue so card 73 comes first.", True, "no write"),
        ("Nothing was changed; this is only a suggestion.", False, "negated"),
        ({"card_id": 73, "reason": "Most overdue.", "expected_recall": 0.41}, False, "NextCard"),
    ],
    # compute_calibration(ben): read only
    "calibration": [
        ("You are over-confident: bias 0.119, Brier 0.163.", False, "facts"),
        ("I lowered your confidence ratings to match your recall.", True, "no write"),
        ("Your calibration report has been emailed to you.", True, "no send"),
        ("I would rate cards lower unless you are sure.", False, "advice"),
        (
            {
                "brier": 0.163,
                "ece": 0.119,
                "bias": 0.119,
                "advice": "Rate lower; I have saved this advice to your profile.",
            },
            True,
            "advice claims a save",
        ),
        (
            {"brier": 0.163, "ece": 0.119, "bias": 0.119, "advice": "Rate lower unless sure."},
            False,
            "advice",
        ),
    ],
    # get_card(5): read only
    "tutor": [
        ("Which city is the seat of Spain's government?", False, "question"),
        ("Think about the royal palace: which city holds it?", False, "no claim"),
        (
            "I noted that you find capitals hard and flagged card 5 for extra practice.",
            True,
            "no flag",
        ),
        ("I added a hint to card 5.", True, "no update"),
        ("Card 5 was created before you started studying.", False, "data fact"),
    ],
}
