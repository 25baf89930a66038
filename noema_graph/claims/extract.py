"""Find the effects a text claims happened: action, objects, counts.

A sentence claims an effect when it holds a past or participle effect verb ("created",
"was flagged", "have been moved", "card 12 moved") that is not negated ("not", "no card",
"nothing"), not modal or future ("would have", "will be", "needs to be"), not conditional
("if"), not a question, not an instruction ("please check..."), not someone else's act
("you created", "the learner said card 5 was deleted"), not an adjective ("the flagged
cards") and not a dated fact from the data ("created on 2025-02-28"). The objects are read
from the clause around the verb: ids with their type ("cards 12 and 13", "deck #2"), file
paths, quoted names, and counts ("three new cards").
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from noema_graph.claims import lexicon as lx

_TOKEN = re.compile(
    r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+|[A-Za-z]+\d[A-Za-z0-9]*"
    r"|[A-Za-z_]+(?:[-'][A-Za-z]+)*|'[a-z]+|\d+(?:\.\d+)?|[^\sA-Za-z\d_]"
)
_CONTRACTIONS = (
    (re.compile(r"n['\u2019]t\b", re.IGNORECASE), " not"),
    (re.compile(r"['\u2019]ve\b", re.IGNORECASE), " have"),
    (re.compile(r"['\u2019]ll\b", re.IGNORECASE), " will"),
    (re.compile(r"['\u2019]re\b", re.IGNORECASE), " are"),
    (re.compile(r"['\u2019]m\b", re.IGNORECASE), " am"),
    (re.compile(r"['\u2019]d\b", re.IGNORECASE), " had"),
    (re.compile(r"\b(it|that|there|what)['\u2019]s\b", re.IGNORECASE), r"\1 's"),
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|(?<=\S)\s+(?=[-*•]\s)")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_ID_ONLY_PARENS = re.compile(r"\(([\s#\d,&]*(?:and|or)?[\s#\d,&]*)\)")
_PARENS = re.compile(r"\([^()]*\)")
_APPOSED_ID = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*\s*\(([A-Za-z0-9][\w-]*)\)")
"""A name with its id in parentheses, "Apple (AAPL)": the id names the object."""
_TYPES = "|".join(sorted(lx.OBJECT_TYPES, key=len, reverse=True))
_TYPED_IDS = re.compile(
    rf"\b(?P<type>{_TYPES})(?:_?ids?)?\b\s*(?:numbers?|no\.?|with\s+ids?|ids?)?\s*[#:]?\s*"
    r"(?P<nums>#?\d+(?:\s*(?:,|and|&|or|/)\s*#?\d+)*)\b",
    re.IGNORECASE,
)
_LEADING_IDS = re.compile(r"\s*#?(\d+(?:\s*(?:,|and|&|or)\s*#?\d+)*)\b(?!\s*(?:%|[a-z]))")
_BARE_HASH = re.compile(r"(?<![\w#])#(\d+)\b")
_PATH = re.compile(
    r"(?<![\w/.])((?:[\w-]+/)*[\w-]+\.(?:txt|md|json|csv|py|ya?ml|html|pdf|log|toml|ini|xml|db|xlsx?|docx?|pptx?|png|jpe?g|gif|zip|tar|gz|sql|sh|js|ts))\b"
)
_CODE = re.compile(
    r"(?<![\w@./-])([A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+|[A-Za-z]+\d[A-Za-z0-9]*)(?![\w@/-])"
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_DIR = re.compile(r"(?<![\w/.])((?:[\w-]+/)+[\w-]*)(?![\w/])")
_NAME = re.compile(r"\b([A-Z][a-zA-Z]+(?:\s+[A-Z][a-zA-Z]+)*)\b")
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th|m|s|h|k|x|am|pm)$", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“]([^\"”]{2,60})[\"”]|(?:^|(?<=[\s(]))'([^']{2,60})'(?=[\s.,;:!?)]|$)")
_COUNT = re.compile(
    r"\b(?P<n>\d+|" + "|".join(lx.NUMBER_WORDS) + r")\s+(?:new\s+|more\s+|additional\s+)?"
    rf"(?P<type>{_TYPES})\b(?!\s*(?:_?ids?\s*)?[#:]?\s*\d)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Claim:
    """One claimed effect: the action and what it applied to."""

    action: str
    text: str
    ids: tuple[tuple[str, str], ...] = ()
    paths: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()
    kinds: tuple[str, ...] = ()
    window: str = ""
    codes: tuple[str, ...] = ()
    soft: tuple[str, ...] = ()
    nouns: tuple[str, ...] = ()
    verb: str = ""


@dataclass
class _Token:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower()


@dataclass
class _Clause:
    left: list[_Token] = field(default_factory=list[_Token])
    boundary: str = ""
    chain: list[str] = field(default_factory=list[str])


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (and list items)."""
    out: list[str] = []
    for part in _SENTENCE_END.split(text):
        cleaned = _BULLET.sub("", part).strip()
        if cleaned:
            out.append(cleaned)
    return out


def _prepare(sentence: str) -> str:
    text = sentence.replace("\u2019", "'")
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    for pattern, replacement in lx.PHRASES:
        text = pattern.sub(replacement, text)
    text = _APPOSED_ID.sub(lambda m: m.group(1), text)
    text = _ID_ONLY_PARENS.sub(lambda m: " " + m.group(1) + " ", text)
    return _PARENS.sub(" ", text)


def _continues_list(tokens: list[_Token], index: int, *, after_verb: bool = False) -> bool:
    """Return whether the comma / and at ``index`` continues a list of ids or objects.

    After a verb, "and card 34 was kept" starts a new clause rather than continuing; "and
    Alice", "and T-1043 too" (no verb up to the end of the sentence) continue it.
    """
    rest = [t.low for t in tokens[index + 1 :]]
    joiner = tokens[index].low in (",", "and", "&")
    if after_verb and joiner and rest and not any(w in CLAUSE_WORDS for w in rest):
        return True
    following = [t.low for t in tokens[index + 1 : index + 5]] + ["", "", "", ""]
    if following[0] in lx.OBJECT_TYPES:
        following = following[1:]
    number = following[0].isdigit() or (following[0] == "#" and following[1].isdigit())
    verb_next = following[1 if following[0].isdigit() else 2] in lx.CLAUSE_STARTERS
    return number and not (after_verb and verb_next)


CLAUSE_WORDS = lx.CLAUSE_STARTERS | lx.RIGHT_STOPS | {"i", "we", "you", ";", ":", "?"}
"""Words that start a clause of their own: a list that reaches none of them continues."""


def _is_boundary(tokens: list[_Token], index: int) -> bool:
    low = tokens[index].low
    if low in (",", "and", "or", "&"):
        return not _continues_list(tokens, index)
    return low in (";", ":", "-", "\u2013", "\u2014") or low in lx.BOUNDARY_WORDS


def _clause(tokens: list[_Token], verb: int, floor: int) -> _Clause:
    start = verb - 1
    while start >= floor and not _is_boundary(tokens, start):
        start -= 1
    boundary = tokens[start].low if start >= floor else ""
    left = tokens[start + 1 : verb]
    chain: list[str] = []
    for token in reversed(left):
        low = token.low
        if low not in lx.CHAIN_WORDS:
            break
        chain.append(low)
    return _Clause(left=left, boundary=boundary, chain=chain)


def _right(tokens: list[_Token], verb: int, ceiling: int) -> list[_Token]:
    end = verb + 1
    while end < ceiling:
        low = tokens[end].low
        if low == "as" and _continues_list(tokens, end, after_verb=True):
            end += 1
            continue
        if low in lx.RIGHT_STOPS or low in (";", "\u2013", "\u2014"):
            break
        if low == ":" and not _continues_list(tokens, end, after_verb=True):
            break
        if low in (",", "and", "or", "&") and not _continues_list(tokens, end, after_verb=True):
            break
        end += 1
    return tokens[verb + 1 : end]


def _subject(left: list[_Token], chain_length: int) -> str | None:
    for token in reversed(left[: len(left) - chain_length]):
        low = token.low
        if low in lx.AGENT_SUBJECTS or low in lx.THIRD_PARTIES:
            return low
        if low.isalpha() and low not in lx.DETERMINERS:
            return "noun"
    return None


def _reported(tokens: list[_Token], verb: int) -> bool:
    """Return whether the verb sits in someone else's reported words."""
    for i in range(verb):
        if tokens[i].low in lx.REPORTING:
            before = [t.low for t in tokens[max(0, i - 3) : i]]
            if any(b in lx.THIRD_PARTIES for b in before):
                return True
    return False


def _adjectival(tokens: list[_Token], verb: int, chain: list[str]) -> bool:
    if chain or verb + 1 >= len(tokens) or verb == 0:
        return False
    before, after = tokens[verb - 1].low, tokens[verb + 1].low
    number = before.isdigit() or before in lx.NUMBER_WORDS
    return (before in lx.DETERMINERS or number) and after.isalpha() and after not in lx.RIGHT_STOPS


def _text(sentence: str, tokens: list[_Token]) -> str:
    return sentence[tokens[0].start : tokens[-1].end] if tokens else ""


def _objects(window: str, action: str, text: str, before: str = "") -> Claim:
    ids: list[tuple[str, str]] = []
    if bare := _LEADING_IDS.match(window):  # "flagged card 12, deleted 13": card 13
        mentioned = [lx.OBJECT_TYPES[w.lower()] for w in re.findall(_TYPES, before, re.I)]
        ids += [(mentioned[-1] if mentioned else "id", n) for n in re.findall(r"\d+", bare[1])]
    for match in _TYPED_IDS.finditer(window):
        kind = lx.OBJECT_TYPES[match["type"].lower()]
        ids += [(kind, n) for n in re.findall(r"\d+", match["nums"])]
    typed = {n for _, n in ids}
    ids += [("id", n) for n in _BARE_HASH.findall(window) if n not in typed]
    counts = [
        (lx.OBJECT_TYPES[m["type"].lower()], int(lx.NUMBER_WORDS.get(m["n"].lower(), m["n"])))
        for m in _COUNT.finditer(window)
    ]
    names = [a or b for a, b in _QUOTED.findall(window)]
    codes, soft = _codes(window, start=not before.strip())
    ordered = [w.lower() for w in re.findall(r"[A-Za-z]+|\d+", window)]
    words = set(ordered)
    skipped = lx.HEAD_SKIP | lx.NUMBER_WORDS.keys()
    head = next((w for w in ordered if w not in skipped and not w.isdigit()), "")
    kinds = (lx.OBJECT_TYPES[head],) if head in lx.OBJECT_TYPES else ()
    return Claim(
        action=lx.NOUN_ACTIONS.get(action, {}).get(next(iter(words & lx.ACTION_NOUNS), ""), action),
        kinds=kinds,
        text=text,
        ids=tuple(dict.fromkeys(ids)),
        paths=tuple(_PATH.findall(window)),
        names=tuple(names),
        counts=tuple(counts),
        window=window,
        codes=tuple(dict.fromkeys(codes)),
        soft=tuple(soft),
        nouns=tuple(w for w in ordered if w in lx.DOMAIN_NOUNS),
    )


def _codes(window: str, *, start: bool) -> tuple[list[str], list[str]]:
    """Return what names objects in ``window``: ids, emails, directories and proper names.

    Ids are "T-1042", "DL88", "old_builds"; proper names "Alice", "Harbor Inn", "NVDA". A
    capitalised word right before a noun describes it ("the VPN ticket") and is left out.
    A capitalised word opening the sentence may be any word: it is returned apart (soft),
    to be checked only when the run knows it as a value.
    """
    found = [m for m in _CODE.findall(window) if not _ORDINAL.match(m)]
    found += _EMAIL.findall(window) + [d for d in _DIR.findall(window) if len(d) > 2]
    soft: list[str] = []
    for match in _NAME.finditer(window):
        name = match.group(1)
        first = name.lower().split()[0]
        after = window[match.end() :].split()[:1]
        if first in _NOT_NAMES or (after and after[0].lower().strip(".,;:!?") in NOUN_FORMS):
            continue
        (soft if start and match.start() == 0 else found).append(name)
    return found, soft


NOUN_FORMS = lx.DOMAIN_NOUNS | frozenset(w + "s" for w in lx.DOMAIN_NOUNS)
"""Nouns an object name may precede (plural forms included)."""
_NOT_NAMES = (
    lx.NOT_NAMES | lx.MONTHS_AND_DAYS | lx.NUMBER_WORDS.keys() | lx.VERB_FORMS.keys() | NOUN_FORMS
)


def _has_object(
    claim: Claim, words: set[str], weak: bool, subject: str | None, named: bool
) -> bool:
    if weak and subject not in (None, *lx.AGENT_SUBJECTS):
        return False
    if claim.action == "any" or (claim.codes and not weak):
        return True
    if claim.action == "send" and not weak:
        return True  # sending anything is an effect: "the report was emailed"
    nouns = lx.WEAK_NOUNS if weak else lx.DOMAIN_NOUNS
    singular = {w[:-1] for w in words if w.endswith("s")}
    named = named or bool(claim.codes)
    if claim.ids or claim.paths or claim.names or named or (words | singular) & nouns:
        return True
    return not weak and bool(words & lx.PRONOUN_OBJECTS)


def _is_claim(sentence: str, tokens: list[_Token], verb: int, clause: _Clause, first: bool) -> bool:
    words = {t.low for t in clause.left}
    chain = clause.chain
    if words & lx.NEGATIONS or set(chain) & lx.MODALS or {"be", "being"} & set(chain):
        return False
    if clause.boundary in lx.CONDITIONALS or words & lx.CONDITIONALS:
        return False
    passive = bool(set(chain) & lx.BE_FORMS)
    subject = _subject(clause.left, len(chain))
    if (not passive and subject in lx.THIRD_PARTIES) or (passive and "already" in chain):
        return False
    if _adjectival(tokens, verb, chain) or _reported(tokens, verb):
        return False
    # after an earlier verb, the words before this one belong to that verb's clause
    # ("the file you uploaded yesterday is now in ...")
    dated = lx.HISTORICAL.search(_text(sentence, [*(clause.left if first else []), *tokens[verb:]]))
    return not (dated and subject not in lx.AGENT_SUBJECTS)


def claims_in(text: str) -> list[Claim]:
    """Return every effect claimed in ``text`` (see the module docstring)."""
    found: list[Claim] = []
    for sentence in sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        prepared = _prepare(sentence)
        tokens = [_Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(prepared)]
        if not tokens or tokens[0].low in lx.IMPERATIVES:
            continue
        found += _sentence_claims(prepared, tokens)
    return found


def _sentence_claims(sentence: str, tokens: list[_Token]) -> list[Claim]:
    hits = [
        i
        for i, t in enumerate(tokens)
        if t.low in lx.VERB_FORMS and not _adjectival(tokens, i, _clause(tokens, i, 0).chain)
    ]
    claims: list[Claim] = []
    previous: tuple[int, _Clause] | None = None
    for k, verb in enumerate(hits):
        # a relative clause before the verb belongs to its subject: "the cards you flagged
        # were deleted" reads back to "the cards"
        earlier = [h for h in hits[:k] if not _relative(tokens, h)]
        floor = earlier[-1] + 1 if earlier else 0
        clause = _clause(tokens, verb, floor)
        if previous is not None and _coordinated(tokens, previous[0], verb, clause):
            clause = _Clause(previous[1].left, previous[1].boundary, previous[1].chain)
        following = [h for h in hits[k + 1 :] if not _relative(tokens, h)]
        ceiling = _clause_start(tokens, following[0], verb + 1) if following else len(tokens)
        right = _right(tokens, verb, ceiling)
        previous = (verb, clause)
        if not _is_claim(sentence, tokens, verb, clause, k == 0):
            continue
        passive = bool(set(clause.chain) & lx.BE_FORMS)
        subject = _subject(clause.left, len(clause.chain))
        scope = right if subject in lx.AGENT_SUBJECTS and not passive else [*clause.left, *right]
        action = lx.VERB_FORMS[tokens[verb].low]
        claim = _objects(_text(sentence, scope), action, sentence, sentence[: tokens[verb].start])
        claim = dataclasses.replace(claim, verb=tokens[verb].low)
        words = {t.low for t in scope}
        weak = tokens[verb].low in lx.WEAK_FORMS
        named = any(t.text[:1].isupper() and t.low != "i" and t is not tokens[0] for t in scope)
        if _has_object(claim, words, weak, None if passive else subject, named):
            claims.append(claim)
    return claims


def _relative(tokens: list[_Token], verb: int) -> bool:
    """Return whether ``verb`` opens a relative clause without "that": "the cards you created".

    The clause belongs to the object before it; the claim around it reads on past it.
    """
    j = verb - 1
    while j >= 0 and tokens[j].low in lx.ADVERBS:
        j -= 1
    if j < 1 or tokens[j].low not in lx.THIRD_PARTIES:
        return False
    head = tokens[j - 1].low
    return head.isalpha() and head not in lx.BOUNDARY_WORDS | lx.REPORTING | lx.CHAIN_WORDS


def _clause_start(tokens: list[_Token], verb: int, floor: int) -> int:
    start = verb - 1
    while start >= floor and not _is_boundary(tokens, start):
        start -= 1
    return max(start, floor)


def _coordinated(tokens: list[_Token], previous: int, verb: int, clause: _Clause) -> bool:
    """Return whether ``verb`` shares the subject of the previous verb ("created and saved")."""
    between = [t.low for t in tokens[previous + 1 : verb]]
    joiners = {"and", "or", "nor", ",", "then"} | lx.ADVERBS
    return bool(between) and all(b in joiners for b in between) and not clause.chain
