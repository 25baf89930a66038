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
from noema_graph.trajectory.schema import Trajectory

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(\s*%|\s+percent)?(?![\w])")
_WORD = re.compile(r"(?<!\w)[^\W\d_][\w'-]*")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_OPENERS = re.compile(r"(?:^|[.!?:;\"(\[]\s*|\n\s*)$")
ENTRY_WORD = 4
"""List-entry words shorter than this are not looked up (articles, prepositions)."""


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


def fold(text: str) -> str:
    """Return ``text`` case-folded with runs of non-word characters made one space."""
    return " " + " ".join(re.sub(r"[^\w%]+", " ", text.casefold()).split()) + " "


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


class Evidence:
    """The words and numbers of the tool results and the request, indexed for lookups."""

    def __init__(self, results: Sequence[str], request: str) -> None:
        """Index ``results`` and ``request``."""
        self.results = fold(" ".join(results))
        self.text = self.results + fold(request)
        self.words = set(self.text.split())
        self.result_words = set(self.results.split())
        raw = " ".join([*results, request])
        # unsigned, as the answer's numbers are read: "2026-11-27" holds 11, not -11
        self.numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", raw)]

    def holds(self, phrase: str, *, results_only: bool = False) -> bool:
        """Return whether the evidence holds ``phrase`` as whole words."""
        folded = fold(phrase)
        return folded.strip() != "" and folded in (self.results if results_only else self.text)

    def has_number(self, text: str, decimals: int, percent: bool) -> bool:
        """Return whether a number of the evidence gives ``text`` (see the module)."""
        value = float(text)
        for known in self.numbers:
            if round(known, decimals) == value:
                return True
            scaled = known * 100
            if (percent or abs(known) <= 1) and round(scaled, decimals) == value:
                return True
        return False


def _numbers(text: str, evidence: Evidence) -> Iterator[str]:
    for match in _NUMBER.finditer(text):
        number, percent = match.group(1), bool(match.group(2))
        decimals = len(number.split(".")[1]) if "." in number else 0
        if not evidence.has_number(number, decimals, percent):
            yield match.group(0).strip()


def _names(text: str, evidence: Evidence) -> Iterator[str]:
    for match in _WORD.finditer(text):
        word = match.group(0)
        if not word[0].isupper() or len(word) < 2 or _OPENERS.search(text[: match.start()]):
            continue
        if not all(token in evidence.words for token in fold(word).split()):
            yield word


def _entry_grounded(entry: str, evidence: Evidence) -> bool:
    if evidence.holds(entry):
        return True
    words = [w for w in fold(entry).split() if len(w) >= ENTRY_WORD and not w.isdigit()]
    return bool(words) and all(w in evidence.words for w in words)


def _copied(phrase: str, evidence: Evidence) -> bool:
    """Return whether an example phrase found in the answer came from the example.

    Not when a tool result holds the phrase, nor every word of it of four letters or more
    (an opening filled from the result, "You are well calibrated", is the result's).
    """
    if evidence.holds(phrase, results_only=True):
        return False
    words = [w for w in fold(phrase).split() if len(w) >= ENTRY_WORD and not w.isdigit()]
    return not words or any(w not in evidence.result_words for w in words)


def example_phrases(answers: Sequence[str]) -> list[str]:
    """Return the phrases of worked-example answers (JSON text) an answer must not copy."""
    phrases: set[str] = set()
    for answer in answers:
        for _, text, _ in text_fields(answer):
            for raw in [text, *_SENTENCE.split(text)]:
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
    evidence = Evidence(tool_results(trajectory), trajectory.input if request is None else request)
    found: list[Ungrounded] = []
    for field, text, in_list in text_fields(trajectory.final_output):
        found += [Ungrounded(kind="number", field=field, text=n) for n in _numbers(text, evidence)]
        if in_list and not _entry_grounded(text, evidence):
            found.append(Ungrounded(kind="entry", field=field, text=text))
        if not in_list:  # a list entry is judged whole, its capitals included
            found += [Ungrounded(kind="name", field=field, text=w) for w in _names(text, evidence)]
        folded = fold(text)
        found += [
            Ungrounded(kind="example", field=field, text=phrase)
            for phrase in examples
            if fold(phrase) in folded and _copied(phrase, evidence)
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
