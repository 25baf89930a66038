"""Static facts the demo decks are built from (public-domain general knowledge).

The fact tables live in ``demo_data/*.csv``; the ingested source text is below.
"""

from __future__ import annotations

import csv
from pathlib import Path

DATA = Path(__file__).with_name("demo_data")
"""The folder of the fact tables: one CSV file each, a header row first."""


def rows(table: str) -> list[list[str]]:
    """Return the rows of ``demo_data/<table>.csv``, without its header."""
    with (DATA / f"{table}.csv").open(encoding="utf-8", newline="") as file:
        return list(csv.reader(file))[1:]


CAPITALS: tuple[tuple[str, str, str], ...] = tuple(
    (country, capital, continent) for country, capital, continent in rows("capitals")
)
"""(country, capital, continent)"""

ELEMENTS: tuple[tuple[str, str, int, str], ...] = tuple(
    (name, symbol, int(number), family) for name, symbol, number, family in rows("elements")
)
"""(name, symbol, atomic number, family)"""

SPANISH: tuple[tuple[str, str, str], ...] = tuple(
    (english, spanish, pos) for english, spanish, pos in rows("spanish")
)
"""(English, Spanish, part of speech)"""

ORGANELLES: tuple[tuple[str, str], ...] = tuple(
    (organelle, function) for organelle, function in rows("organelles")
)
"""(organelle, function)"""

SOURCE_TITLE = "The periodic table: a short introduction"
SOURCE_TEXT = """\
The periodic table arranges the chemical elements in order of increasing atomic number, \
the number of protons in an atom's nucleus. Elements with similar chemical behaviour fall \
into the same vertical column, called a group, because they share the same arrangement of \
outer electrons.

The first column holds the alkali metals, such as lithium, sodium and potassium. They are \
soft, react violently with water and always form ions with a single positive charge. The \
second column holds the alkaline earth metals, which are harder and less reactive.

At the far right sit the noble gases: helium, neon, argon, krypton and xenon. Their outer \
electron shells are full, so they rarely react with anything. Next to them are the halogens, \
fluorine, chlorine, bromine and iodine, which need a single electron to complete their outer \
shell and are therefore highly reactive.

The wide block in the middle of the table contains the transition metals, including iron, \
copper, silver and gold. Many of them form coloured compounds and act as catalysts. Reading \
the table from left to right, atoms grow smaller and hold their electrons more tightly; \
reading down a group, atoms grow larger and their outer electrons are easier to remove.

Dmitri Mendeleev published the first widely recognised periodic table in 1869. He left gaps \
for elements that had not yet been discovered and predicted their properties, and when \
gallium and germanium were found their properties matched his predictions closely.
"""
