"""Link the records a request refers to against the learning store, or say why not.

Three ways a request names a record, in English, French and Spanish:

* by id after its noun (``card 5``, ``cartes 15 et 140``, ``mazo 2``): the id must exist,
  else ``There is no card 250.`` (not_found);
* by name (categories, decks, concepts), in any case, with or without accents, or nearly
  (:data:`FUZZY` similarity of the words), or quoted whole; a name counted or qualifying a
  card noun (``63 capital cards``, ``tarjetas de Capitales``) names no record when another
  of its kind is named. A capitalised name written beside the kind's noun that no name
  spells is scored by meaning (a :data:`NameMatcher`, the e5 embedder: ``la categoría
  Química`` is Chemistry) and linked when clearly the best (:data:`NAME_SIMILARITY`,
  :data:`NAME_LEAD`), else refused naming the candidates, the nearest last (``There is no
  category named 'Astronomy'; categories: ...; nearest: ...``);
* a card by its text (``the card that asks which element has atomic number 26``, ``the
  card whose answer is Canberra``): the store's FTS5 index ``cards_fts`` (front and back,
  a long word's stem too) finds candidates, and the share of a candidate's front words,
  or of its back's, that the request holds (a word spelt nearly alike counts) scores it;
  a clear best (:data:`CARD_TEXT` and ahead by :data:`CARD_LEAD`) is linked, a close second
  makes the reference ambiguous, and a card holding only part of what another holds
  (``Nairobi`` beside ``Nairobi, Kenya``) is no rival.

Each link carries its score. Works on SQLite and PostgreSQL stores alike.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from noema_graph.grounding.seen import NOUNS
from noema_graph.grounding.words import QUOTED, QUOTES
from noema_graph.noema.schema import CARD_SEARCH_TEXT
from noema_graph.state.models import Reference, Refusal
from noema_graph.storage.sql.connections import connect_sync
from noema_graph.storage.sql.dialect import dialect_of
from noema_graph.storage.sql.driver import Row, fetch_all, run_sync

TABLES = {"card": "cards", "deck": "decks", "category": "categories", "concept": "concepts"}
FUZZY = 0.8
"""Least similarity (difflib ratio of the folded words) of a name written nearly right."""
CARD_TEXT = 0.6
"""Least share of a card's front words the request must hold to name that card."""
CARD_LEAD = 0.15
"""Lead of the best card over the next below which a reference by text is ambiguous."""
NAME_SIMILARITY = 0.9
"""Least embedding similarity of a name written in another language (``Química``)."""
NAME_LEAD = 0.03
"""Lead of the most similar name over the next below which the written name is ambiguous."""
NameMatcher = Callable[[str, Mapping[int, str]], list[tuple[int, float]]]
"""Scores a written name against ``{id: name}``: ``(id, similarity)``, best first."""
CARD_CANDIDATES = 16
"""Cards the full-text index proposes for a reference by text (best ranked first)."""
_JOINERS = r"(?:\s*(?:,|&|\band\b|\bet\b|\by\b|\bor\b|\bou\b|\bo\b)\s*(?:#|n[o°º]\.?\s*)?)"
_STOP = frozenset(
    """
    the a an of to in on into for with and or is are be it this that my me what which who
    how does do should under card cards flashcard flashcard asks ask about sit directly le
    la les un une des du de dans sur pour avec et ou est qui que quel quelle carte fiche
    demande doit aller el los las una del en con por para y que cual tarjeta ficha pregunta
    debe ir
    """.split()  # noqa: SIM905 -- a word list reads best as words
)
_NOT_NAMES = frozenset(
    """
    the a an this that these those which what whose how many much every each all any some
    other another no my your our their its his her
    le la les l un une des ce cet cette ces quel quelle quels quelles chaque tout toute tous
    toutes mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs combien aucun
    aucune autre autres
    el los las unos unas este esta estos estas ese esa esos esas aquel aquella que cual
    cuales cuanto cuanta cuantos cuantas cada todo toda todos todas mi mis tu tus su sus
    nuestro nuestra otro otra otros otras ningun ninguna
    """.split()  # noqa: SIM905 -- a word list reads best as words
)
"""Determiners and question words (folded): capitalised at a sentence's start, never names."""


def fold(text: str) -> str:
    """Return ``text`` lower-cased without accents."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _noun_pattern(kind: str) -> str:
    return "(?:" + "|".join(re.escape(n) for n in NOUNS[kind]) + r")(?:e?s)?"


@dataclass
class Linked:
    """What the request refers to, with the refusals of references that did not link."""

    references: list[Reference] = field(default_factory=list[Reference])
    refusals: list[Refusal] = field(default_factory=list[Refusal])


_CARDS_MATCHING = (
    "SELECT c.id AS id, c.front AS front, c.back AS back FROM cards_fts f"
    " JOIN cards c ON c.id = f.rowid WHERE cards_fts MATCH ? ORDER BY rank, c.id LIMIT ?"
)
_POSTGRES_CARDS_MATCHING = (  # any word (to_tsquery's |), best rank first
    f"SELECT c.id AS id, c.front AS front, c.back AS back"
    f" FROM cards c, to_tsquery('simple', ?) q"
    f" WHERE {CARD_SEARCH_TEXT} @@ q ORDER BY ts_rank({CARD_SEARCH_TEXT}, q) DESC, c.id LIMIT ?"
)


class StoreNames:
    """The names and ids of one learning store (SQLite or PostgreSQL), read when asked."""

    def __init__(self, location: str | Path) -> None:
        """Keep the store's location (a path or a database URL); nothing is read yet."""
        self.location = location

    def _rows(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        conn = connect_sync(self.location, pooled=True)
        try:
            return run_sync(conn, fetch_all(sql, tuple(args)), write=False)
        finally:
            conn.close()

    def names(self, kind: str) -> dict[int, str]:
        """Return ``{id: name}`` of every record of ``kind`` (categories, decks, concepts)."""
        rows = self._rows(f"SELECT id, name FROM {TABLES[kind]}")
        return {int(row["id"]): str(row["name"]) for row in rows}

    def existing(self, kind: str, ids: Iterable[int]) -> set[int]:
        """Return which of ``ids`` exist among the records of ``kind``."""
        wanted = list(ids)
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        rows = self._rows(f"SELECT id FROM {TABLES[kind]} WHERE id IN ({marks})", wanted)
        return {int(row["id"]) for row in rows}

    def cards_matching(
        self, words: Sequence[str], limit: int = CARD_CANDIDATES
    ) -> list[tuple[int, str, str]]:
        """Return ``(id, front, back)`` of the cards whose text holds any of ``words``, best first.

        SQLite: the FTS5 index; PostgreSQL: the cards' text search document. A word of five
        letters or more also matches as its start less two letters (``mongolie`` finds
        ``Mongolia``, ``symbole`` finds ``symbol``): a word of another language that shares
        its stem.
        """
        plain = [w for w in words if w.isalnum()]
        if not plain:
            return []
        if dialect_of(self.location) == "postgres":
            terms = [f"{_stem(w)}:*" if _stem(w) != w else w for w in plain]
            sql, query = _POSTGRES_CARDS_MATCHING, " | ".join(terms)
        else:
            terms = [f'"{_stem(w)}" *' if _stem(w) != w else f'"{w}"' for w in plain]
            sql, query = _CARDS_MATCHING, " OR ".join(terms)
        rows = self._rows(sql, (query, limit))
        return [(int(row["id"]), str(row["front"]), str(row["back"] or "")) for row in rows]


def _stem(word: str) -> str:
    """Return the start of ``word`` a word of another language may share (five letters up)."""
    return word[: max(4, len(word) - 2)] if len(word) >= 5 else word


def _like(word: str, other: str) -> bool:
    """Return whether two words are the same or spelt nearly alike (``mongolie``, ``mongolia``)."""
    if word == other:
        return True
    if min(len(word), len(other)) < 4 or word[:3] != other[:3]:
        return False
    return difflib.SequenceMatcher(None, word, other).ratio() >= FUZZY


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", fold(text))


def ids_named(request: str, kind: str) -> list[int]:
    """Return the ids written after the kind's noun (``cards 15 and 140``), in order."""
    text = fold(request)
    pattern = (
        rf"\b{_noun_pattern(kind)}\s*(?:#|n[o°º]\.?|number|numero|id)?\s*[:#]?\s*"
        rf"(\d{{1,9}}(?:{_JOINERS}\d{{1,9}}\b)*)"
    )
    found: list[int] = []
    for match in re.finditer(pattern, text):
        for number in re.findall(r"\d+", match.group(1)):
            if int(number) not in found:
                found.append(int(number))
    return found


def names_named(request: str, names: Mapping[int, str]) -> list[tuple[int, str, float, int]]:
    """Return ``(id, name, score, position)`` of the names the request mentions.

    Whole words, folded; a name inside a longer one does not count; near spellings score
    their similarity. Text in quotes (a card's front) is not read, unless it is a name whole.
    """
    text = fold(QUOTED.sub(lambda m: " " * len(m.group(0)), request))
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str, float, int]] = []
    by_fold = {fold(name): (ident, name) for ident, name in names.items()}
    for quote in QUOTED.finditer(request):  # a name quoted whole ('Halogens') is named
        if (hit := by_fold.get(fold(quote.group(0)[1:-1]).strip())) is not None:
            taken.append(quote.span())
            found.append((*hit, 1.0, quote.start() + 1))
    for ident, name in sorted(names.items(), key=lambda item: -len(item[1])):
        if any(i == ident for i, *_ in found):
            continue
        pattern = r"(?<![\w-])" + re.escape(fold(name)) + r"(?:e?s)?(?![\w-])"
        match = re.search(pattern, text)
        if match and not any(match.start() < e and s < match.end() for s, e in taken):
            taken.append(match.span())
            found.append((ident, name, 1.0, match.start()))
    words = [(m.group(0), m.start()) for m in re.finditer(r"[\w-]+", text)]
    for ident, name in names.items():
        if any(i == ident for i, *_ in found):
            continue
        size = len(fold(name).split())
        best = (0.0, -1)
        for k in range(len(words) - size + 1):
            start = words[k][1]
            if any(s <= start < e for s, e in taken):
                continue
            window = " ".join(w for w, _ in words[k : k + size])
            ratio = difflib.SequenceMatcher(None, window, fold(name)).ratio()
            best = max(best, (ratio, start))
        if best[0] >= FUZZY:
            found.append((ident, name, round(best[0], 3), best[1]))
    return sorted(found, key=lambda item: item[3])


def slot_names(request: str, kind: str) -> list[str]:
    """Return the capitalised names written beside the kind's noun (``the X category``)."""
    noun = _noun_pattern(kind)
    name = r"([A-ZÀ-Ý][\w'-]*(?:\s+[A-ZÀ-Ý][\w'-]*){0,2})"
    plain = QUOTED.sub(lambda m: m.group(0).strip(QUOTES), request)
    folded = fold(plain)
    found: list[str] = []
    after = rf"\b{noun}\s+(?:named\s+|called\s+|nommee\s+|llamada\s+)?"
    for match in re.finditer(after, folded):
        rest = plain[match.end() :]
        if m := re.match(name, rest):
            found.append(m.group(1))
    for match in re.finditer(rf"{name}\s+(?i:{noun})\b", plain):
        found.append(match.group(1))
    named = (_without_determiners(f) for f in found)
    return [n for n in named if n]


def _without_determiners(written: str) -> str:
    """Return ``written`` less its leading determiners and question words (``Which``)."""
    words = written.split()
    while words and fold(words[0]).strip("'") in _NOT_NAMES:
        words.pop(0)
    return " ".join(words)


@dataclass(frozen=True)
class CardMatch:
    """A card the request may name by its text: the share of the best field's words it holds.

    ``held``: the words of the card's best field (its front or its back) the request holds.
    """

    id: int
    front: str
    score: float
    held: frozenset[str]


def _field_match(
    text: str, asked: set[str], quoted: set[tuple[str, ...]]
) -> tuple[float, frozenset[str]]:
    own = [w for w in _words(text) if w not in _STOP]
    if not own:
        return 0.0, frozenset()
    if tuple(_words(text)) in quoted:  # the request quotes this text whole
        return 1.0, frozenset(own)
    held = frozenset(w for w in own if w in asked or any(_like(w, a) for a in asked))
    return len([w for w in own if w in held]) / len(own), held


def card_matches(request: str, store: StoreNames, skip: Iterable[str]) -> list[CardMatch]:
    """Return the cards the request may name by their question or answer text, best first.

    A card scores the share of its front's words, or of its back's, that the request
    holds (the better of the two; a word spelt nearly alike counts); a field the request
    quotes whole scores 1. A card whose words the request holds are a part of another
    card's best field (``Nairobi`` of ``Nairobi, Kenya``; ``Cobalt`` of ``chemical symbol
    for Cobalt``) is left out. Words of ``skip`` (names linked already) and function words
    do not count.
    """
    skipped = {w for s in skip for w in _words(s)}
    words = [w for w in _words(request) if w not in _STOP and w not in skipped and len(w) > 1]
    if not words:
        return []
    asked = set(words)
    quoted = {tuple(_words(m.group(0))) for m in QUOTED.finditer(request)}
    found: list[CardMatch] = []
    for ident, front, back in store.cards_matching(words):
        score, held = max(
            (_field_match(text, asked, quoted) for text in (front, back)),
            key=lambda match: (match[0], len(match[1])),
        )
        if held:
            found.append(CardMatch(ident, front, score, held))
    named = [  # a card holding only some of the words another card holds is named less
        m for m in found if not any(m.held < o.held and o.score >= CARD_TEXT for o in found)
    ]
    return sorted(named, key=lambda m: (-m.score, -len(m.held)))


def cards_by_text(
    request: str, store: StoreNames, skip: Iterable[str]
) -> list[tuple[int, str, float]]:
    """Return ``(id, front, score)`` of the cards the request names by their text, best first."""
    return [(m.id, m.front, m.score) for m in card_matches(request, store, skip)]


def link(
    request: str,
    kinds: Sequence[str],
    store: StoreNames,
    *,
    card_text: bool,
    matcher: NameMatcher | None = None,
) -> Linked:
    """Link the request's references of ``kinds`` against ``store`` (see the module docstring).

    ``card_text``: look for a card named by its text when the request names no card id.
    ``matcher``: scores a name written beside its noun that no name spells (``la categoría
    Química``) by meaning; None: such a name is refused.
    """
    linked = Linked()
    names_seen: list[str] = []
    for kind in kinds:
        if kind == "card":
            continue
        unknown = _link_names(request, kind, store, linked, names_seen)
        _link_unknown(request, kind, store, linked, (unknown, matcher))
    for kind in ("card", "deck", "category"):
        if kind in kinds:
            _link_ids(request, kind, store, linked)
    if "card" in kinds and card_text and not any(r.kind == "card" for r in linked.references):
        _link_card_text(request, store, linked, names_seen)
    return linked


def _link_ids(request: str, kind: str, store: StoreNames, linked: Linked) -> None:
    ids = ids_named(request, kind)
    existing = store.existing(kind, ids)
    for ident in ids:
        if ident in existing:
            linked.references.append(Reference(kind=kind, value=ident, text=f"{kind} {ident}"))
        else:
            linked.refusals.append(
                Refusal(code="not_found", message=f"There is no {kind} {ident}.")
            )


def _link_names(
    request: str, kind: str, store: StoreNames, linked: Linked, names_seen: list[str]
) -> list[str]:
    """Link the names of ``kind`` the request spells; return those beside its noun it lacks."""
    if kind not in TABLES or kind == "card":
        return []
    names = store.names(kind)
    found = names_named(request, names)
    qualifying = [f for f in found if _qualifies(request, f[1], f[3])]
    if len(qualifying) < len(found):  # "63 Capitals cards ... into Biology": Biology is named
        found = [f for f in found if f not in qualifying]
    for ident, name, score, position in found:
        value: object = name if kind == "concept" else ident
        written = _written(request, position, name)
        linked.references.append(
            Reference(kind=kind, value=value, label=name, text=written, score=score)
        )
        names_seen.append(name)
    known = {fold(n) for n in names.values()}
    return [
        written
        for written in slot_names(request, kind)
        if not any(near(written, k) for k in known)
        and not any(fold(n) in fold(written) for n in names_seen)
    ]


def _no_such_name(
    kind: str, written: str, names: Mapping[int, str], nearest: Sequence[str] = ()
) -> Refusal:
    listed = sorted(names.values())
    plural = "categories" if kind == "category" else f"{kind}s"
    closest = f"; nearest: {', '.join(nearest)}" if nearest else ""
    return Refusal(
        code="not_found",
        message=f"There is no {kind} named {written!r}; {plural}: {', '.join(listed)}{closest}.",
        candidates=(*nearest, *(n for n in listed if n not in nearest)),
    )


def _link_unknown(
    request: str,
    kind: str,
    store: StoreNames,
    linked: Linked,
    unknown: tuple[Sequence[str], NameMatcher | None],
) -> None:
    """Link, or refuse naming the nearest, the names of ``kind`` no name spells.

    A name written beside its noun (``la categoría Química``) is scored by the matcher;
    the most similar name is linked when it reaches :data:`NAME_SIMILARITY` and leads the
    next by :data:`NAME_LEAD`, else the request is refused naming the nearest names. A
    lower-case word after the noun (``la catégorie chimie``) is only tried when the request
    names no record of the kind: no link, no refusal of its own.
    """
    written, matcher = unknown
    if matcher is None:
        names = store.names(kind) if written else {}
        linked.refusals.extend(_no_such_name(kind, w, names) for w in written)
        return
    named = any(r.kind == kind for r in linked.references)
    loose = [] if named or written else loose_slots(request, kind)
    if not written and not loose:
        return
    names = store.names(kind)
    for name in written:
        ranked = matcher(name, names)
        if (ref := _clear(kind, name, names, ranked)) is not None:
            linked.references.append(ref)
            continue
        close = [names[i] for i, s in ranked[:3] if ranked[0][1] - s < NAME_LEAD]
        linked.refusals.append(_no_such_name(kind, name, names, close))
    for name in loose:
        if (ref := _clear(kind, name, names, matcher(name, names))) is not None:
            linked.references.append(ref)
            return


def similar_phrases(
    request: str, kind: str, store: StoreNames, matcher: NameMatcher, taken: Sequence[str]
) -> list[tuple[int, Reference]]:
    """Return ``(position, reference)`` of names written in another language, no noun near.

    ``Relie Gaz nobles à Halogens``: a capitalised word and up to two words after it (up to
    a function word) that no name spells, scored by ``matcher``; a clear best (see
    :func:`_link_unknown`) is linked. ``taken``: the words of the references linked already.
    """
    names = store.names(kind)
    spans = [m.span() for t in taken if t for m in re.finditer(re.escape(fold(t)), fold(request))]
    found: list[tuple[int, Reference]] = []
    for start, phrases in _phrases(request):
        if any(s <= start < e for s, e in spans):
            continue
        refs = [r for p in phrases if (r := _clear(kind, p, names, matcher(p, names)))]
        if refs:
            best = max(refs, key=lambda r: r.score)
            if all(best.value != r.value for _, r in found):
                found.append((start, best))
    return found


def _phrases(request: str) -> list[tuple[int, list[str]]]:
    """Return each capitalised word's position and its phrases of one to three words."""
    found: list[tuple[int, list[str]]] = []
    for match in re.finditer(r"(?<![\w'-])[A-ZÀ-Ý][\w'-]*", request):
        if fold(match.group(0)) in _NOT_NAMES | _STOP:
            continue
        words = [match.group(0)]
        after = re.match(r"(?:[ ]+[\w'-]+){0,2}", request[match.end() :])
        for word in after.group(0).split() if after else ():
            if fold(word) in _NOT_NAMES | _STOP or word.isdigit():
                break
            words.append(word)
        found.append((match.start(), [" ".join(words[:k]) for k in range(1, len(words) + 1)]))
    return found


def _clear(
    kind: str, written: str, names: Mapping[int, str], ranked: Sequence[tuple[int, float]]
) -> Reference | None:
    if not ranked or ranked[0][1] < NAME_SIMILARITY:
        return None
    if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < NAME_LEAD:
        return None
    ident, score = ranked[0]
    value: object = names[ident] if kind == "concept" else ident
    return Reference(
        kind=kind, value=value, label=names[ident], text=written, score=round(score, 3)
    )


def loose_slots(request: str, kind: str) -> list[str]:
    """Return the lower-case words written right after the kind's noun (``catégorie chimie``)."""
    text = fold(QUOTED.sub(" ", request))
    after = rf"\b{_noun_pattern(kind)}\s+(?:named\s+|called\s+|nommee\s+|llamada\s+)?([a-z][\w-]+)"
    return [
        w for w in re.findall(after, text) if w not in _NOT_NAMES and w not in _STOP and len(w) > 2
    ]


_COUNTS = frozenset(
    """
    one two three four five six seven eight nine ten eleven twelve dozen hundred many
    un une deux trois quatre cinq six sept huit neuf dix onze douze cent
    uno una dos tres cuatro cinco seis siete ocho nueve diez once doce cien
    """.split()  # noqa: SIM905 -- a word list reads best as words
)
"""Counts (folded) besides digits: a name counted (``63 capital cards``) qualifies a noun."""


def _qualifies(request: str, name: str, position: int) -> bool:
    """Return whether the name at ``position`` only qualifies other records, naming none.

    Counted (``63 capital cards``, ``deux cartes Chemistry``) or written just before a card
    noun (``the Chemistry cards``), it says which cards, not a record the request acts on.
    """
    text = fold(QUOTED.sub(lambda m: " " * len(m.group(0)), request))
    before = text[:position].split()
    card = _noun_pattern("card")
    if (
        len(before) > 1
        and before[-1] in ("of", "de", "del", "des", "du", "d'")
        and re.fullmatch(card, before[-2])
    ):
        return True  # "12 tarjetas de Capitales": cards of that category
    if before and (before[-1].isdigit() or before[-1] in _COUNTS):
        noun = before[-2] if len(before) > 1 else ""
        if not re.fullmatch(card + "|" + _noun_pattern("deck"), noun):
            return True  # a count, not the id of a card or deck named before it
    after = text[position:].split()[len(fold(name).split()) :]
    return bool(after) and re.fullmatch(card, after[0].strip(".,;:!?")) is not None


def _written(request: str, position: int, name: str) -> str:
    """Return the words of ``request`` at ``position`` that wrote ``name`` (as many words)."""
    words = request[position:].split()[: len(name.split())]
    return " ".join(words).strip(".,;:!?()'\"«»¿¡") or name


_DESTINATION = frozenset(
    "to into onto under in a dans vers sous en al hacia bajo".split()  # noqa: SIM905
)
"""Prepositions (folded) that introduce where something goes (``into Biology``)."""
_OR = frozenset("or ou o and et y".split())  # noqa: SIM905
"""Conjunctions: records joined by one (``to Chemistry or Biology``) are alternatives."""
_ARTICLES = frozenset("the la le l les el los las".split())  # noqa: SIM905


def destination(request: str, refs: Sequence[Reference]) -> Reference | None:
    """Return the one reference of ``refs`` written as where something goes, else None.

    ``move card 5 from Chemistry into Biology``: Biology (a destination preposition before
    it, articles and the kind's noun skipped).
    """
    text = fold(request)
    chosen: list[Reference] = []
    joined = False
    for ref in refs:
        at = text.find(fold(ref.text))
        if at < 0:
            continue
        before = [w.strip("'") for w in re.findall(r"[\w']+", text[:at])]
        noun = _noun_pattern(ref.kind) if ref.kind in NOUNS else "$^"
        while before and (before[-1] in _ARTICLES or re.fullmatch(noun, before[-1])):
            before.pop()
        if before and before[-1] in _DESTINATION:
            chosen.append(ref)
        joined = joined or bool(before and before[-1] in _OR)
    return chosen[0] if len(chosen) == 1 and not joined else None


def near(written: str, name: str) -> bool:
    """Return whether the words ``written`` begin ``name`` or begin with it (folded), or nearly.

    A slot reads capitalised words only, so it may hold just the start of a name
    (``the concept Capital cities``: ``Capital``).
    """
    words = fold(written).split()
    if name.startswith(" ".join(words)) or " ".join(words).startswith(name):
        return True
    return any(
        difflib.SequenceMatcher(None, " ".join(words[:k]), name).ratio() >= FUZZY
        for k in range(1, len(words) + 1)
    )


def _link_card_text(request: str, store: StoreNames, linked: Linked, names_seen: list[str]) -> None:
    if not re.search(rf"\b{_noun_pattern('card')}\b", fold(request)):
        return
    scored = card_matches(request, store, names_seen)
    if not scored or scored[0].score < CARD_TEXT:
        return
    best = scored[0]
    close = [m for m in scored[1:] if best.score - m.score < CARD_LEAD]
    if close:
        shown = [f"card {m.id} ({m.front!r})" for m in [best, *close][:4]]
        linked.refusals.append(
            Refusal(
                code="invalid_input",
                message="The request could mean several cards: "
                + "; ".join(shown)
                + ". Name it by its number.",
                candidates=tuple(shown),
            )
        )
        return
    front = set(_words(best.front))
    linked.references[:] = [  # a name read inside the card's own text names nothing else
        r for r in linked.references if r.score >= 1.0 or not set(_words(r.text)) <= _stems(front)
    ]
    linked.references.append(
        Reference(
            kind="card",
            value=best.id,
            label=best.front,
            text=best.front,
            score=round(best.score, 3),
        )
    )


def _stems(words: set[str]) -> set[str]:
    return words | {w + "s" for w in words} | {w + "es" for w in words}
