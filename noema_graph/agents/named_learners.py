"""Requests that name a learner other than the run's own: such a run is refused (``forbidden``).

The run's learner comes from the run (see :mod:`noema_graph.agents.learner_context`); the
request's text can never change it. A request that names someone else (``[learner: ben,
user_id 2]``, ``user 2``, ``learner ben``, ``ben's retention``) is refused outright rather than
answered with the caller's own figures under another learner's name.

Two kinds of mention, for every agent (one that reads a learner's rows, and one that writes
shared data on a learner's behalf: "move card 12 for cleo", "add this to ada's library"):

* explicit: an identity word with an id or a learner's name (``user_id 2``, ``learner #3``,
  ``student: cleo``, ``"user_id": 2``);
* bare: a learner's name as a word of its own or in the possessive, unless a capitalised
  word follows it or precedes it within a sentence: that makes it part of another name (a
  card about "Ben Franklin" or "Big Ben" is no request for a learner's data).

An id counts unless it is the run's learner's own; a name counts unless it is the run's
learner's. A run with no learner has no own name or id: every mention counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from noema_graph.agents.learners import Learner

_NOUN = r"(?:learner|user|student|account|profile|uid)"
_IDS = re.compile(
    rf"\b{_NOUN}(?:[ _-]?ids?)?[\"']?\s*(?:#|no\.?|number)?\s*[:=]?\s*[\"']?#?\s*(\d{{1,12}})\b",
    re.IGNORECASE,
)


def _name_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Return the explicit and the bare pattern of a learner's ``name``."""
    word = rf"(?<![\w-]){re.escape(name)}(?![\w-])"
    explicit = re.compile(
        rf"\b{_NOUN}(?:[ _-]?name)?[\"']?\s*(?:named|called)?\s*[:=]?\s*[\"']?{word}",
        re.IGNORECASE,
    )
    bare = re.compile(rf"{word}(?:['\u2019]s\b|(?!\s+(?-i:[A-Z])))", re.IGNORECASE)
    return explicit, bare


def other_learner(request: str, own: Learner | None, learners: Sequence[Learner]) -> str | None:
    """Return the mention of a learner other than ``own`` in ``request``, or None.

    Args:
        request: The request's text.
        own: The run's learner (None: the run names nobody).
        learners: The store's learners (their names are what a mention may name).
    """
    for match in _IDS.finditer(request):
        if own is None or int(match.group(1)) != own.id:
            return match.group(0).strip()
    for learner in learners:
        if own is not None and learner.name.lower() == own.name.lower():
            continue
        explicit, bare = _name_patterns(learner.name)
        found = explicit.search(request) or next(
            (m for m in bare.finditer(request) if not _after_a_name(request[: m.start()])), None
        )
        if found is not None:
            return found.group(0).strip()
    return None


_WORD_BEFORE = re.compile(r"\b[A-Z][\w-]*\s+$")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s*)$")


def _after_a_name(before: str) -> bool:
    """Return whether ``before`` ends with a capitalised word that does not start a sentence."""
    word = _WORD_BEFORE.search(before)
    return word is not None and _SENTENCE_START.search(before[: word.start()].rstrip()) is None
