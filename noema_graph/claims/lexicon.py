"""Words of the claim detector: effect verbs, what tools do, object nouns, grammar words.

Only past tense and past participle forms are claims of an effect ("created", "has been
saved", "card 5 flagged"); base forms are intentions, offers or instructions ("I will
create", "create the cards"). Canonical actions: create, save, schedule, flag, send, delete,
move, record, update, link, ingest; and, for tools of any domain, copy, order, place, cancel,
refund, return, close, assign, share, rename and ``any`` (an unspecified effect: "all set").
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
    "schedule": _words("scheduled rescheduled booked queued reserved"),
    "flag": _words("flagged marked"),
    "send": _words(
        "sent emailed mailed notified messaged posted forwarded texted replied tweeted "
        "published delivered dispatched"
    ),
    "delete": _words("deleted removed erased purged discarded"),
    "archive": _words("archived"),
    "move": _words("moved recategorized recategorised relocated transferred refiled reclassified"),
    "record": _words("recorded logged registered noted"),
    "update": _words(
        "updated changed edited modified fixed corrected amended revised rewrote "
        "rewritten replaced lowered raised increased decreased reduced set tagged applied "
        "escalated bumped upgraded downgraded adjusted enabled disabled activated "
        "deactivated switched"
    ),
    "link": _words("linked connected associated"),
    "ingest": _words("ingested imported uploaded chunked indexed split"),
    "copy": _words("copied duplicated cloned backedup"),
    "order": _words("ordered bought purchased sold"),
    "place": _words("placed put filed"),
    "cancel": _words("cancelled canceled calledoff revoked"),
    "refund": _words("refunded reimbursed"),
    "return": _words("returned"),
    "close": _words("closed resolved"),
    "assign": _words("assigned reassigned"),
    "share": _words("shared invited"),
    "push": _words("pushed deployed released merged"),
    "pay": _words("paid"),
    "rename": _words("renamed"),
    "any": _words("allset"),
}
VERB_FORMS: dict[str, str] = {form: action for action, forms in _FORMS.items() for form in forms}
"""Past / participle form -> canonical action."""

WEAK_FORMS = _set(
    "marked filed posted queued committed lowered raised increased decreased reduced set split "
    "made noted put returned applied delivered bumped adjusted pushed released switched"
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
    "move": "move", "recategorize": "move", "reassign": "assign", "relocate": "move",
    "transfer": "move",
    "record": "record", "log": "record", "register": "record", "submit": "record",
    "update": "update", "edit": "update", "modify": "update", "change": "update",
    "set": "update", "patch": "update", "fix": "update", "replace": "update",
    "link": "link", "connect": "link", "associate": "link", "relate": "link",
    "ingest": "ingest", "import": "ingest", "upload": "ingest", "index": "ingest",
    "mv": "move", "cp": "copy", "copy": "copy", "duplicate": "copy", "clone": "copy",
    "rm": "delete", "rmdir": "delete", "del": "delete", "unset": "delete",
    "mkdir": "create", "touch": "create",
    "reserve": "schedule", "order": "order", "buy": "order", "sell": "order",
    "purchase": "order", "place": "order", "checkout": "order", "trade": "order",
    "cancel": "cancel", "revoke": "cancel", "refund": "refund", "reimburse": "refund",
    "return": "return", "close": "close", "resolve": "close", "assign": "assign",
    "share": "share", "grant": "share", "invite": "share",
    "tweet": "send", "reply": "send", "publish": "send", "text": "send", "dm": "send",
    "comment": "create", "escalate": "update", "apply": "update", "rename": "rename",
    "turn": "update", "switch": "update", "toggle": "update", "activate": "update",
    "deactivate": "update", "commit": "save", "push": "push", "deploy": "push",
    "release": "push", "merge": "push", "pay": "pay",
    "watch": "create", "subscribe": "create", "enable": "update", "disable": "update",
}  # fmt: skip
"""Verb in a tool's name or description -> the action the tool performs (``send_email``
sends, ``mv`` moves)."""

READ_VERBS = _set(
    "get list search find fetch read show view cat ls lookup look query describe check "
    "count preview browse inspect retrieve load peek head tail stat ping validate estimate "
    "quote print compute calculate explain summarize recommend suggest plan"
)
"""A tool whose name starts with one of these reads: it performs no effect."""

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
    "create": frozenset({"create", "ingest", "link", "copy"}),
    "save": frozenset({"create", "ingest", "link", "update", "move", "flag", "record"}),
    "update": frozenset({"create", "update", "move", "record", "schedule", "rename"}),
    "record": frozenset({"record", "flag", "create", "ingest"}),
    "schedule": frozenset({"schedule", "order"}),
    "flag": frozenset({"flag"}),
    "send": frozenset({"send"}),
    "delete": frozenset({"delete"}),
    "move": frozenset({"move"}),
    "link": frozenset({"link"}),
    "ingest": frozenset({"ingest"}),
    "copy": frozenset({"copy"}),
    "order": frozenset({"order"}),
    "place": frozenset({"order", "move", "create", "save", "update", "schedule"}),
    "cancel": frozenset({"cancel", "delete"}),
    "refund": frozenset({"refund"}),
    "return": frozenset({"return", "refund"}),
    "close": frozenset({"close"}),
    "assign": frozenset({"assign", "move", "update"}),
    "share": frozenset({"share", "send"}),
    "rename": frozenset({"rename", "move", "update"}),
    "archive": frozenset({"delete", "move", "update"}),
    "push": frozenset({"push", "send"}),
    "pay": frozenset({"pay", "order", "move"}),
}
"""Claimed action -> tool actions that can back it ("saved" is backed by any write)."""

EFFECTS = frozenset(VERB_FORMS.values()) - {"any"}
"""Every action a tool can perform: ``any`` (an unspecified effect) is backed by each."""

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
    "id ids order orders ticket tickets booking bookings reservation reservations flight "
    "flights hotel room seat alert alerts folder folders directory directories cart "
    "watchlist refund return comment comments tweet post update updates channel share "
    "shares stock position item product products package invoice payment coupon coupons "
    "discount discounts priority status assignee team teams attendee attendees guest guests "
    "invite invites invitation invitations member members bill bills light lights device "
    "devices thermostat branch commit commits contact contacts event account accounts "
    "transfer transfers"
)
"""Nouns an effect can apply to; "made progress on the plan" names none of them."""

ACTION_NOUNS = _set("flag flags link links connection connections review reviews order orders")
NOUN_ACTIONS: dict[str, dict[str, str]] = {
    generic: {
        "flag": "flag", "flags": "flag", "link": "link", "links": "link",
        "connection": "link", "connections": "link", "review": "record", "reviews": "record",
    }
    for generic in ("create", "save", "record", "update")
} | {"place": {"order": "order", "orders": "order"}}  # fmt: skip
"""A generic verb takes its action from its object: "added a flag" flags, "added a link" links,
"placed the order" orders."""

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

PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"\b(?:gone|went) out\b", "sent"),
        (r"\bbacked up\b", "backedup"),
        (r"\bcalled off\b", "calledoff"),
        (r"\b(?:you|we) (?:are|'re) all set\b", "allset"),
        (r"\ball set\b", "allset"),
        (r"\b(is|are|'s)\s+now\s+(in|on|inside|under)\b", r"\1 now put \2"),
        (r"\b(is|are|'s)\s+(in|on|inside|under)\s+([^,;:.!?]{1,60}?)\s+now\b", r"\1 put \2 \3 now"),
        (r"\bnow\s+lives?\s+in\b", "is now put in"),
        (r"\bnow\s+ha(?:ve|s)\s+access\s+to\b", "have now been shared"),
        (r"\b(is|are|'s)\s+(?:now\s+)?live\b", r"\1 posted"),
        (r"\b(is|are|'s)\s+(?:now\s+)?gone\b", r"\1 removed"),
        (r"\b(?:turned|switched)\s+(on|off)\b", "switched"),
        (r"\b(?:turned|switched)\s+(\S+(?:\s+\S+)?)\s+(?:on|off)\b", r"switched \1"),
    )
)
"""Phrases that claim an effect, rewritten to a verb form: "has gone out" sends, "is now
in the Archive deck" puts, "all set" claims an unspecified effect."""

MONTHS_AND_DAYS = _set(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday "
    "friday saturday sunday today tomorrow yesterday"
)
NOT_NAMES = _set(
    "i i'm i've we you your my our the a an this that these those it its all done here "
    "there ok okay yes no usd eur gbp am pm utc id ids url api pdf csv json faq"
)
"""Capitalised words that do not name an object."""

CONTRARY: dict[str, str] = {"sold": "buy", "bought": "sell", "purchased": "sell"}
"""A claimed form and the argument value of the opposite act: "sold" after ``side="buy"``."""
