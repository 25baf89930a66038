"""Words no tool gave: numbers, list entries, names and example copies in an answer's text.

A RAGAS-faithfulness-like check that needs no model. The evidence is every tool result of the
run (the full observations, subagents' included) and the request (with its learner line).
In each text field of the answer (strings at any depth; numbers and booleans are not text):

* a **number** is grounded when some number of the evidence, rounded to the answer's
  decimals, equals it, or equals it as a percentage (``86%`` or ``85.7 percent`` of
  ``0.857``); digits inside a word (``c1``) are not numbers;
* a **list entry** (a string in a list) is grounded when the evidence holds it as a phrase,
  or holds every word of it of four letters or more;
* a **name** (a capitalised word that does not open a sentence, outside list entries, which
  are judged whole) is grounded when the evidence holds the word;
* an **example copy** is a phrase of the agent's worked-example answers (a whole text value,
  or a sentence of it, of two words or more, or a capitalised word) that the answer holds and
  no tool result does, as a phrase or word for word (every word of four letters or more: an
  opening filled from the result, "You are well calibrated", is the result's).

Numbers and names are judged by :mod:`noema_graph.grounding.unseen`, the definition the
answer check uses at run time (it drops such a sentence of a free-text field before the answer
is returned); a masked secret (``M_____``) is no name. Not graded as words: a final message
the framework wrote (:func:`framework_written`: a refusal of the request reader, a forbidden
request, a domain error that stopped the run), and the marker of a cut text
(``... [truncated 570 chars]``).

What it cannot see: a false sentence built only of grounded words ("retention rose" when it
fell), a grounded number attached to the wrong thing (the lapses given as the retention),
a wrong inference in lower-case prose (``you study on weekends``), an invented
lower-case word, words the model wrote into a call and read back (an ingested paraphrase is
a tool result), and anything in fields that are not text. Short words (under four letters)
of a list entry are not looked up; a pronoun the evidence lacks ("your" for "my") makes an
entry ungrounded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

from pydantic import BaseModel, ConfigDict

from noema_graph.evals.scorers import parsed
from noema_graph.grounding.unseen import (
    SENTENCE_BREAK,
    Evidence,
    unseen_names,
    unseen_numbers,
    word_fold,
)
from noema_graph.nodes.common import TRUNCATED
from noema_graph.trajectory.schema import Trajectory

_CUT = re.compile(re.escape(TRUNCATED) + r" \d+ chars\]")
ENTRY_WORD = 4
"""List-entry words shorter than this are not looked up (articles, prepositions)."""
FRAMEWORK_STOPS = frozenset({"refused", "forbidden"})
"""Stop reasons whose final message the framework writes (the request reader's refusal)."""
DOMAIN_STOP = "loop_detected"
"""The stop whose message is a tool's domain error when ``metadata.error`` names another code."""


class Ungrounded(BaseModel):
    """One word or phrase of an answer that no tool result nor the request gave."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """number | entry | name | example"""
    field: str
    text: str


def text_fields(output: object, path: str = "") -> Iterator[tuple[str, str, bool]]:
    """Yield ``(path, text, in_list)`` for every string of ``output`` at any depth."""
    value = parsed(output)
    if isinstance(value, str):
        yield path, value, False
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from text_fields(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            for where, text, _ in text_fields(inner, f"{path}[{index}]"):
                yield where, text, isinstance(inner, str)


def tool_results(trajectory: Trajectory) -> list[str]:
    """Return the text of every tool result of the run, and the records a refusal read.

    A refusal's candidates (``metadata.store_candidates``: "no category named 'Astronomy';
    categories: Biology, ...") come from the learning store, read by the request reader
    rather than a tool: they are data too.
    """
    read = trajectory.metadata.get("store_candidates")
    candidates = [", ".join(str(c) for c in read)] if isinstance(read, list) and read else []
    return [
        *(s.observation for s in trajectory.steps if s.action is not None and s.observation),
        *candidates,
    ]


def framework_written(trajectory: Trajectory) -> bool:
    """Return whether the run's final message is the framework's, not the model's words.

    Read from the run's metadata, never from the wording: an unsuccessful run stopped by a
    refusal of the framework (:data:`FRAMEWORK_STOPS`), or by a tool's domain error (its
    ``error`` code is the domain's, not the loop guard's: "There is no card 250.").
    """
    meta = trajectory.metadata
    if meta.get("success") is not False:
        return False
    reason, code = meta.get("stop_reason"), meta.get("error")
    return reason in FRAMEWORK_STOPS or (reason == DOMAIN_STOP and code not in (None, reason))


def _entry_grounded(entry: str, evidence: Evidence) -> bool:
    if evidence.holds(entry):
        return True
    words = [w for w in word_fold(entry).split() if len(w) >= ENTRY_WORD and not w.isdigit()]
    return bool(words) and all(w in evidence.words for w in words)


def _copied(phrase: str, evidence: Evidence) -> bool:
    """Return whether an example phrase found in the answer came from the example.

    Not when a tool result holds the phrase, nor every word of it of four letters or more
    (an opening filled from the result, "You are well calibrated", is the result's).
    """
    if evidence.holds(phrase, results_only=True):
        return False
    words = [w for w in word_fold(phrase).split() if len(w) >= ENTRY_WORD and not w.isdigit()]
    return not words or any(w not in evidence.result_words for w in words)


def example_phrases(answers: Sequence[str]) -> list[str]:
    """Return the phrases of worked-example answers (JSON text) an answer must not copy."""
    phrases: set[str] = set()
    for answer in answers:
        for _, text, _ in text_fields(answer):
            for raw in [text, *SENTENCE_BREAK.split(text)]:
                piece = raw.strip(" .!?;:")
                words = piece.split()
                if len(words) >= 2 or (len(words) == 1 and piece[:1].isupper() and len(piece) > 3):
                    phrases.add(piece)
    return sorted(phrases)


def ungrounded_words(
    trajectory: Trajectory, *, examples: Sequence[str] = (), request: str | None = None
) -> list[Ungrounded]:
    """Return the numbers, list entries, names and example copies no evidence gave.

    Args:
        trajectory: The run; its tool results are the evidence.
        examples: The phrases of the agent's worked-example answers
            (see :func:`example_phrases`).
        request: The request; default the trajectory's input.
    """
    if framework_written(trajectory):
        return []
    evidence = Evidence(tool_results(trajectory), trajectory.input if request is None else request)
    found: list[Ungrounded] = []
    for field, raw, in_list in text_fields(trajectory.final_output):
        text = _CUT.sub(" ", raw)
        found += [
            Ungrounded(kind="number", field=field, text=n) for n in unseen_numbers(text, evidence)
        ]
        if in_list and not _entry_grounded(text, evidence):
            found.append(Ungrounded(kind="entry", field=field, text=text))
        if not in_list:  # a list entry is judged whole, its capitals included
            found += [
                Ungrounded(kind="name", field=field, text=w) for w in unseen_names(text, evidence)
            ]
        folded = word_fold(text)
        found += [
            Ungrounded(kind="example", field=field, text=phrase)
            for phrase in examples
            if word_fold(phrase) in folded and _copied(phrase, evidence)
        ]
    return _unique(found)


def _unique(found: list[Ungrounded]) -> list[Ungrounded]:
    seen: set[str] = set()
    kept: list[Ungrounded] = []
    for finding in found:
        key = json.dumps(finding.model_dump(), sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return kept
