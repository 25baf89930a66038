"""What the demo writes: decks, categories, cards, concept links and deliberately bad cards."""

from __future__ import annotations

from typing import NamedTuple

from noema_graph.noema import demo_content as content
from noema_graph.noema.models import CardKind, LinkKind


class DemoCard(NamedTuple):
    """A card to write: deck name, category name, kind, text, tags and concept names."""

    deck: str
    category: str
    kind: CardKind
    front: str
    back: str
    tags: tuple[str, ...]
    concepts: tuple[str, ...]


DECKS: dict[str, tuple[str, str]] = {
    "World Capitals": ("Capital cities of the world", "Capitals"),
    "Chemical Elements": ("Symbols and atomic numbers", "Elements"),
    "Spanish Vocabulary": ("Everyday Spanish words", "Vocabulary"),
    "Cell Biology": ("Organelles and what they do", "Cell biology"),
}
"""Deck name -> (description, category name)."""

CATEGORIES: tuple[tuple[str, str | None], ...] = (
    ("Science", None),
    ("Chemistry", "Science"),
    ("Elements", "Chemistry"),
    ("Biology", "Science"),
    ("Cell biology", "Biology"),
    ("Humanities", None),
    ("Geography", "Humanities"),
    ("Capitals", "Geography"),
    ("Languages", "Humanities"),
    ("Spanish", "Languages"),
    ("Vocabulary", "Spanish"),
)
"""(name, parent name), parents first."""

FAMILIES: tuple[str, ...] = tuple(sorted({family for *_, family in content.ELEMENTS}))
"""The element families, as concepts of the knowledge graph."""
CONTINENTS: tuple[str, ...] = ("Africa", "Americas", "Asia", "Europe", "Oceania")

LINK_GROUPS: dict[tuple[str, LinkKind], tuple[str, ...]] = {
    ("Periodic table", "prerequisite_of"): ("Atomic number", "Chemical symbol"),
    ("Periodic table", "part_of"): FAMILIES,
    ("Noble gases", "contrasts_with"): ("Alkali metals", "Halogens"),
    ("Alkaline earth metals", "related_to"): ("Alkali metals",),
    ("Nonmetals", "related_to"): ("Metalloids",),
    ("World geography", "part_of"): CONTINENTS,
    ("World geography", "related_to"): ("Capital cities",),
    ("Spanish grammar", "part_of"): ("Spanish nouns", "Spanish verbs", "Spanish adjectives"),
    ("Spanish nouns", "related_to"): ("Spanish adjectives",),
    ("Cell", "part_of"): ("Organelle",),
}
"""(target concept, link kind) -> the source concepts linked to it that way."""

LINKS: tuple[tuple[str, str, LinkKind], ...] = tuple(
    (source, target, kind) for (target, kind), sources in LINK_GROUPS.items() for source in sources
)
"""(source, target, kind), in the order they are written."""

BAD_CARDS: tuple[tuple[str, DemoCard], ...] = (
    (
        "exact_duplicate",
        DemoCard(
            "World Capitals",
            "Capitals",
            "atomic",
            "What is the capital of Peru?",
            "Lima",
            ("geography",),
            (),
        ),
    ),
    (
        "near_duplicate",
        DemoCard(
            "World Capitals",
            "Capitals",
            "atomic",
            "what is the capital of  kenya",
            "Nairobi, Kenya",
            (),
            (),
        ),
    ),
    (
        "near_duplicate",
        DemoCard(
            "Spanish Vocabulary",
            "Vocabulary",
            "atomic",
            "Translate into Spanish: Dog!",
            "perro",
            (),
            (),
        ),
    ),
    (
        "empty_back",
        DemoCard(
            "World Capitals", "Capitals", "atomic", "What is the capital of Bhutan?", "", (), ()
        ),
    ),
    (
        "empty_back",
        DemoCard(
            "Spanish Vocabulary",
            "Vocabulary",
            "atomic",
            "Translate into Spanish: the sea",
            "   ",
            (),
            (),
        ),
    ),
    (
        "cloze_without_deletion",
        DemoCard(
            "Cell Biology",
            "Cell biology",
            "cloze",
            "The powerhouse of the cell is the mitochondrion.",
            "Mitochondrion",
            (),
            (),
        ),
    ),
    (
        "duplicate_cloze_deletion",
        DemoCard(
            "Chemical Elements",
            "Elements",
            "cloze",
            "{{c1::Sodium}} reacts with water, and {{c2::sodium}} is an alkali metal.",
            "Sodium reacts with water, and sodium is an alkali metal.",
            (),
            (),
        ),
    ),
)
"""(issue kind the quality scan must report, card), written after the good cards."""


def demo_cards() -> list[DemoCard]:
    """Return the good demo cards, deck by deck."""
    return [*_capital_cards(), *_element_cards(), *_spanish_cards(), *_cell_cards()]


def _capital_cards() -> list[DemoCard]:
    cards: list[DemoCard] = []
    for i, (country, capital, continent) in enumerate(content.CAPITALS):
        concepts = (continent, "Capital cities")
        cards.append(
            DemoCard(
                "World Capitals",
                "Capitals",
                "atomic",
                f"What is the capital of {country}?",
                capital,
                ("geography", continent.lower()),
                concepts,
            )
        )
        if i % 3 == 0:
            cards.append(
                DemoCard(
                    "World Capitals",
                    "Capitals",
                    "cloze",
                    f"{{{{c1::{capital}}}}} is the capital of {{{{c2::{country}}}}}.",
                    f"{capital} is the capital of {country}.",
                    ("geography", "cloze"),
                    concepts,
                )
            )
    return cards


def _element_cards() -> list[DemoCard]:
    cards: list[DemoCard] = []
    for i, (name, symbol, number, family) in enumerate(content.ELEMENTS):
        cards.append(
            DemoCard(
                "Chemical Elements",
                "Elements",
                "atomic",
                f"What is the chemical symbol for {name}?",
                symbol,
                ("chemistry",),
                (family, "Chemical symbol"),
            )
        )
        cards.append(
            DemoCard(
                "Chemical Elements",
                "Elements",
                "atomic",
                f"Which element has atomic number {number}?",
                name,
                ("chemistry",),
                (family, "Atomic number"),
            )
        )
        if i % 4 == 0:
            cards.append(
                DemoCard(
                    "Chemical Elements",
                    "Elements",
                    "cloze",
                    f"{name} ({{{{c1::{symbol}}}}}) belongs to the {{{{c2::{family.lower()}}}}}.",
                    f"{name} ({symbol}) belongs to the {family.lower()}.",
                    ("chemistry", "cloze"),
                    (family,),
                )
            )
    return cards


def _spanish_cards() -> list[DemoCard]:
    return [
        DemoCard(
            "Spanish Vocabulary",
            "Vocabulary",
            "atomic",
            f"Translate into Spanish: {english}",
            spanish,
            ("spanish", pos),
            (f"Spanish {pos}s",),
        )
        for english, spanish, pos in content.SPANISH
    ]


def _cell_cards() -> list[DemoCard]:
    cards: list[DemoCard] = []
    for i, (organelle, function) in enumerate(content.ORGANELLES, start=1):
        cards.append(
            DemoCard(
                "Cell Biology",
                "Cell biology",
                "image_occlusion",
                f"[image: animal_cell.png#mask-{i}] Name the hidden structure.",
                organelle,
                ("biology", "diagram"),
                ("Organelle", "Cell"),
            )
        )
        cards.append(
            DemoCard(
                "Cell Biology",
                "Cell biology",
                "atomic",
                f"What does the {organelle.lower()} do?",
                function,
                ("biology",),
                ("Organelle",),
            )
        )
    return cards
