"""Words of the claim detector: effect verbs, what tools do, object nouns, grammar words.

Only past tense and past participle forms are claims of an effect ("created", "has been
saved", "card 5 flagged"); base forms are intentions, offers or instructions ("I will
create", "create the cards"). Canonical actions: create, save, schedule, flag, send, delete,
move, record, update, link, ingest.
"""

from __future__ import annotations

import re


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FORMS: dict[str, tuple[str, ...]] = {
    "create": _words(
        "created added wrote written generated inserted produced authored drafted appended made"
    ),
    "save": _words("saved stored persisted committed exported"),
    "schedule": _words("scheduled rescheduled booked queued"),
    "flag": _words("flagged marked"),
    "send": _words("sent emailed mailed notified messaged posted forwarded texted"),
    "delete": _words("deleted removed erased purged discarded archived"),
    "move": _words(
        "moved recategorized recategorised reassigned relocated transferred refiled "
        "reclassified filed"
    ),
    "record": _words("recorded logged registered noted"),
    "update": _words(
        "updated changed edited modified fixed renamed corrected amended revised rewrote "
        "rewritten replaced lowered raised increased decreased reduced set tagged"
    ),
    "link": _words("linked connected associated"),
    "ingest": _words("ingested imported uploaded chunked indexed split"),
}
VERB_FORMS: dict[str, str] = {form: action for action, forms in _FORMS.items() for form in forms}
"""Past / participle form -> canonical action."""

WEAK_FORMS = _set(
    "marked filed posted queued committed lowered raised increased decreased reduced set split "
    "made noted"
)
"""Forms with everyday senses ("lapses increased"): a claim only with a domain object, and
in the active voice only with the agent as subject ("I set ...") or none ("Set ...")."""

BASE_ACTIONS: dict[str, str] = {
    "create": "create", "add": "create", "write": "create", "generate": "create",
    "insert": "create", "new": "create", "make": "create", "append": "create",
    "save": "save", "store": "save", "persist": "save", "put": "save", "upsert": "save",
    "schedule": "schedule", "reschedule": "schedule", "book": "schedule",
    "flag": "flag", "mark": "flag", "report": "flag",
    "send": "send", "email": "send", "mail": "send", "notify": "send", "post": "send",
    "message": "send", "forward": "send",
    "delete": "delete", "remove": "delete", "erase": "delete", "purge": "delete",
    "drop": "delete", "unlink": "delete", "archive": "delete", "export": "save",
    "move": "move", "recategorize": "move", "reassign": "move", "relocate": "move",
    "transfer": "move", "rename": "update",
    "record": "record", "log": "record", "register": "record", "submit": "record",
    "update": "update", "edit": "update", "modify": "update", "change": "update",
    "set": "update", "patch": "update", "fix": "update", "replace": "update",
    "link": "link", "connect": "link", "associate": "link", "relate": "link",
    "ingest": "ingest", "import": "ingest", "upload": "ingest", "index": "ingest",
}  # fmt: skip
"""Verb in a tool's name -> the action the tool performs (``send_email`` sends)."""

TOOL_ACTIONS: dict[str, frozenset[str]] = {
    "create_cards": frozenset({"create"}),
    "update_card": frozenset({"update"}),
    "flag_card": frozenset({"flag"}),
    "flag_quality_issues": frozenset({"flag"}),
    "move_card": frozenset({"move"}),
    "link_concepts": frozenset({"link"}),
    "ingest_text": frozenset({"ingest"}),
    "record_review": frozenset({"record", "schedule"}),
    "write_file": frozenset({"create", "update"}),
    "schedule_preview": frozenset(),
}
"""Known tools; any other tool is read from the verbs in its name."""

BACKED_BY: dict[str, frozenset[str]] = {
    "create": frozenset({"create", "ingest", "link"}),
    "save": frozenset({"create", "ingest", "link", "update", "move", "flag", "record"}),
    "update": frozenset({"create", "update", "move", "record", "schedule"}),
    "record": frozenset({"record", "flag", "create", "ingest"}),
    "schedule": frozenset({"schedule"}),
    "flag": frozenset({"flag"}),
    "send": frozenset({"send"}),
    "delete": frozenset({"delete"}),
    "move": frozenset({"move"}),
    "link": frozenset({"link"}),
    "ingest": frozenset({"ingest"}),
}
"""Claimed action -> tool actions that can back it ("saved" is backed by any write)."""

OBJECT_TYPES: dict[str, str] = {
    "card": "card", "cards": "card", "flashcard": "card", "flashcards": "card",
    "deck": "deck", "decks": "deck",
    "category": "category", "categories": "category",
    "source": "source", "sources": "source", "document": "source", "documents": "source",
    "doc": "source", "docs": "source",
    "chunk": "chunk", "chunks": "chunk",
    "review": "review", "reviews": "review",
    "flag": "flag", "flags": "flag",
    "link": "link", "links": "link",
    "concept": "concept", "concepts": "concept",
    "id": "id", "ids": "id", "item": "id", "items": "id", "entry": "id", "entries": "id",
    "file": "file", "files": "file", "note": "file", "notes": "file",
}  # fmt: skip
"""Noun before an id ("card 12", "cards 3 and 4") -> object type; ``id`` matches any type."""

DOMAIN_NOUNS = _set(
    "card cards flashcard flashcards deck decks flag flags link links connection "
    "connections relation relations review reviews rating ratings file files document "
    "documents doc docs note notes source sources chunk chunks category categories "
    "taxonomy concept concepts email emails e-mail message messages mail reminder "
    "reminders session sessions appointment appointments meeting meetings event events "
    "issue issues problem problems duplicate duplicates entry entries record records "
    "item items setting settings preference preferences schedule data text progress "
    "limit limits goal goals queue profile calendar account "
    "tag tags front back cloze clozes answer answers change changes edit edits "
    "id ids"
)
"""Nouns an effect can apply to; "made progress on the plan" names none of them."""

ACTION_NOUNS = _set("flag flags link links connection connections review reviews")
NOUN_ACTIONS: dict[str, dict[str, str]] = {
    generic: {
        "flag": "flag", "flags": "flag", "link": "link", "links": "link",
        "connection": "link", "connections": "link", "review": "record", "reviews": "record",
    }
    for generic in ("create", "save", "record", "update")
}  # fmt: skip
"""A generic verb takes its action from its object: "added a flag" flags, "added a link" links."""

WEAK_NOUNS = DOMAIN_NOUNS - {"progress", "data", "text"}
"""The nouns a weak form needs: "made two cards" is a claim, "made progress" is not."""
HEAD_SKIP = _set("new more additional extra fresh single both your my our the a an and or")

PRONOUN_OBJECTS = _set("it them everything all both these those each")

AGENT_SUBJECTS = _set("i we i've we've")
THIRD_PARTIES = _set(
    "you he she they someone somebody user users learner learners student students "
    "teacher people others ada ben cleo author admin administrator"
)
REPORTING = _set(
    "said says say asked asks claimed claims mentioned wondered wonder want wanted "
    "requested request think thought believe believed told tell"
)
NEGATIONS = _set("not no never nothing none nobody neither nor without unable failed cannot")
MODALS = _set("will would should could might may must shall can ca wo 'll to need needs going")
BE_FORMS = _set("was were is are am 's been get got gets getting")
HAVE_FORMS = _set("have has had 've 'd having")
ADVERBS = _set(
    "also successfully just now then finally automatically correctly properly actually "
    "indeed recently previously earlier immediately newly quickly simply only all both "
    "each already again manually accidentally mistakenly even still yet"
)
DETERMINERS = _set(
    "the a an these those this that all any some each every my your his her its our "
    "their of other new no several many few"
)
CONDITIONALS = _set("if unless whether")
IMPERATIVES = _set("please check verify confirm ensure make let try remember")
BOUNDARY_WORDS = _set(
    "and or but so then because since while although though whereas which who that "
    "as after before when once if unless whether until where"
)
RIGHT_STOPS = _set(
    "because since which who while although though whereas but so if unless when "
    "after before until as not except instead rather than where without"
)
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
HISTORICAL = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|ago|yesterday|last (?:week|month|year)|in (?:19|20)\d\d|"
    rf"(?:on|in|since) {_MONTH}|(?:before|after|when|while) (?:you|they|he|she|the learner|"
    rf"the user))\b",
    re.IGNORECASE,
)
"""A date or past time: "created on 2025-02-28" describes the data, not the agent."""
NUMBER_WORDS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        _words(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
}
CHAIN_WORDS = ADVERBS | BE_FORMS | HAVE_FORMS | MODALS | NEGATIONS | {"be", "being"}
"""Words between a subject and its verb: "has not yet been", "should have", "will be"."""
CLAUSE_STARTERS = BE_FORMS | HAVE_FORMS | (MODALS - {"to"}) | frozenset(VERB_FORMS)
"""Words after "and card 34" that make it a new clause ("and card 34 was kept")."""
