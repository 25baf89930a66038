"""Static facts the demo decks are built from (public-domain general knowledge)."""

from __future__ import annotations

# (country, capital, continent)
CAPITALS: tuple[tuple[str, str, str], ...] = (
    ("France", "Paris", "Europe"), ("Germany", "Berlin", "Europe"), ("Italy", "Rome", "Europe"),
    ("Spain", "Madrid", "Europe"), ("Portugal", "Lisbon", "Europe"),
    ("Austria", "Vienna", "Europe"), ("Poland", "Warsaw", "Europe"),
    ("Hungary", "Budapest", "Europe"), ("Greece", "Athens", "Europe"),
    ("Sweden", "Stockholm", "Europe"), ("Norway", "Oslo", "Europe"),
    ("Finland", "Helsinki", "Europe"), ("Ireland", "Dublin", "Europe"),
    ("Czechia", "Prague", "Europe"), ("Romania", "Bucharest", "Europe"),
    ("Japan", "Tokyo", "Asia"), ("China", "Beijing", "Asia"), ("India", "New Delhi", "Asia"),
    ("Thailand", "Bangkok", "Asia"), ("Vietnam", "Hanoi", "Asia"),
    ("Indonesia", "Jakarta", "Asia"), ("Philippines", "Manila", "Asia"),
    ("Mongolia", "Ulaanbaatar", "Asia"), ("Nepal", "Kathmandu", "Asia"),
    ("Kazakhstan", "Astana", "Asia"), ("Egypt", "Cairo", "Africa"),
    ("Kenya", "Nairobi", "Africa"), ("Nigeria", "Abuja", "Africa"),
    ("Ghana", "Accra", "Africa"), ("Ethiopia", "Addis Ababa", "Africa"),
    ("Morocco", "Rabat", "Africa"), ("Senegal", "Dakar", "Africa"),
    ("Tanzania", "Dodoma", "Africa"), ("Canada", "Ottawa", "Americas"),
    ("Mexico", "Mexico City", "Americas"), ("Brazil", "Brasilia", "Americas"),
    ("Argentina", "Buenos Aires", "Americas"), ("Peru", "Lima", "Americas"),
    ("Chile", "Santiago", "Americas"), ("Colombia", "Bogota", "Americas"),
    ("Cuba", "Havana", "Americas"), ("Australia", "Canberra", "Oceania"),
    ("New Zealand", "Wellington", "Oceania"), ("Fiji", "Suva", "Oceania"),
    ("Samoa", "Apia", "Oceania"),
)  # fmt: skip

# (name, symbol, atomic number, family)
ELEMENTS: tuple[tuple[str, str, int, str], ...] = (
    ("Hydrogen", "H", 1, "Nonmetals"), ("Helium", "He", 2, "Noble gases"),
    ("Lithium", "Li", 3, "Alkali metals"), ("Beryllium", "Be", 4, "Alkaline earth metals"),
    ("Boron", "B", 5, "Metalloids"), ("Carbon", "C", 6, "Nonmetals"),
    ("Nitrogen", "N", 7, "Nonmetals"), ("Oxygen", "O", 8, "Nonmetals"),
    ("Fluorine", "F", 9, "Halogens"), ("Neon", "Ne", 10, "Noble gases"),
    ("Sodium", "Na", 11, "Alkali metals"), ("Magnesium", "Mg", 12, "Alkaline earth metals"),
    ("Aluminium", "Al", 13, "Post-transition metals"), ("Silicon", "Si", 14, "Metalloids"),
    ("Phosphorus", "P", 15, "Nonmetals"), ("Sulfur", "S", 16, "Nonmetals"),
    ("Chlorine", "Cl", 17, "Halogens"), ("Argon", "Ar", 18, "Noble gases"),
    ("Potassium", "K", 19, "Alkali metals"), ("Calcium", "Ca", 20, "Alkaline earth metals"),
    ("Titanium", "Ti", 22, "Transition metals"), ("Chromium", "Cr", 24, "Transition metals"),
    ("Manganese", "Mn", 25, "Transition metals"), ("Iron", "Fe", 26, "Transition metals"),
    ("Cobalt", "Co", 27, "Transition metals"), ("Nickel", "Ni", 28, "Transition metals"),
    ("Copper", "Cu", 29, "Transition metals"), ("Zinc", "Zn", 30, "Transition metals"),
    ("Bromine", "Br", 35, "Halogens"), ("Krypton", "Kr", 36, "Noble gases"),
    ("Silver", "Ag", 47, "Transition metals"), ("Tin", "Sn", 50, "Post-transition metals"),
    ("Iodine", "I", 53, "Halogens"), ("Xenon", "Xe", 54, "Noble gases"),
    ("Gold", "Au", 79, "Transition metals"), ("Lead", "Pb", 82, "Post-transition metals"),
)  # fmt: skip

# (English, Spanish, part of speech)
SPANISH: tuple[tuple[str, str, str], ...] = (
    ("dog", "el perro", "noun"), ("cat", "el gato", "noun"), ("house", "la casa", "noun"),
    ("book", "el libro", "noun"), ("water", "el agua", "noun"), ("bread", "el pan", "noun"),
    ("city", "la ciudad", "noun"), ("friend", "el amigo", "noun"),
    ("window", "la ventana", "noun"), ("tree", "el árbol", "noun"),
    ("school", "la escuela", "noun"), ("night", "la noche", "noun"),
    ("to eat", "comer", "verb"), ("to drink", "beber", "verb"), ("to live", "vivir", "verb"),
    ("to speak", "hablar", "verb"), ("to write", "escribir", "verb"),
    ("to read", "leer", "verb"), ("to run", "correr", "verb"), ("to sleep", "dormir", "verb"),
    ("to want", "querer", "verb"), ("to know (a fact)", "saber", "verb"),
    ("to be able to", "poder", "verb"), ("to open", "abrir", "verb"),
    ("big", "grande", "adjective"), ("small", "pequeño", "adjective"),
    ("happy", "feliz", "adjective"), ("sad", "triste", "adjective"),
    ("fast", "rápido", "adjective"), ("slow", "lento", "adjective"),
    ("new", "nuevo", "adjective"), ("old", "viejo", "adjective"),
    ("cheap", "barato", "adjective"), ("expensive", "caro", "adjective"),
    ("easy", "fácil", "adjective"), ("difficult", "difícil", "adjective"),
    ("hot", "caliente", "adjective"), ("cold", "frío", "adjective"),
    ("tired", "cansado", "adjective"), ("strong", "fuerte", "adjective"),
)  # fmt: skip

# (organelle, function)
ORGANELLES: tuple[tuple[str, str], ...] = (
    ("Nucleus", "Holds the cell's DNA and controls gene expression"),
    ("Mitochondrion", "Makes ATP by cellular respiration"),
    ("Ribosome", "Builds proteins from messenger RNA"),
    ("Rough endoplasmic reticulum", "Folds and modifies proteins made by its ribosomes"),
    ("Golgi apparatus", "Sorts, modifies and packages proteins for transport"),
    ("Lysosome", "Digests waste and worn-out organelles with enzymes"),
    ("Cell membrane", "Controls what enters and leaves the cell"),
    ("Chloroplast", "Captures light energy by photosynthesis"),
    ("Vacuole", "Stores water, nutrients and waste"),
    ("Cytoskeleton", "Gives the cell its shape and moves organelles"),
)

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
