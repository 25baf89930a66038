"""Names and numbers no tool gave: one definition for the answer check and the evaluation.

The evidence (:class:`Evidence`) is the text of every tool result of the run (errors and
subagents' results included) and the request. In a text:

* a **number** is seen when some number of the evidence, rounded to the text's decimals,
  equals it, or equals it as a percentage (``86%`` or ``85.7 percent`` of ``0.857``);
  digits inside a word (``c1``) are not numbers;
* a **name** is a capitalised word that does not open a sentence; it is seen when the
  evidence holds the word. A secret masked by :func:`~noema_graph.grounding.secrets.mask`
  (``M_____``) is a mask, not a name.

:func:`unseen_words` lists what a text holds that the evidence lacks; the evaluation
(``evals/words.py``) counts it, and :func:`without_unseen_sentences` drops each sentence
of an answer's free-text field that holds one, before the answer is returned
(``grounding/checks.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

from noema_graph.grounding.secrets import mask
from noema_graph.state.models import ReasoningStep

UnseenKind = Literal["number", "name"]

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(\s*%|\s+percent)?(?![\w])")
_EVIDENCE_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"(?<!\w)[^\W\d_][\w'-]*")
SENTENCE_BREAK = re.compile(r"(?<=[.!?;:])\s+|\n+")
"""Where one sentence of a text ends and the next begins."""
_OPENERS = re.compile(r"(?:^|[.!?:;\"(\[]\s*|\n\s*)$")
_ACTION_KINDS = ("tool", "hallucinated_action")


def word_fold(text: str) -> str:
    """Return ``text`` case-folded with runs of non-word characters made one space, padded.

    Padded so that ``word_fold(phrase) in word_fold(text)`` matches whole words only; not
    :func:`noema_graph.grounding.words.fold`, which keeps punctuation and drops accents.
    """
    return " " + " ".join(re.sub(r"[^\w%]+", " ", text.casefold()).split()) + " "


class Evidence:
    """The words and numbers of the tool results and the request, indexed for lookups."""

    def __init__(self, results: Sequence[str], request: str) -> None:
        """Index ``results`` and ``request``."""
        self.results = word_fold(" ".join(results))
        self.text = self.results + word_fold(request)
        self.words = set(self.text.split())
        self.result_words = set(self.results.split())
        raw = " ".join([*results, request])
        # unsigned, as the answer's numbers are read: "2026-11-27" holds 11, not -11
        self.numbers = [float(n) for n in _EVIDENCE_NUMBER.findall(raw)]

    def holds(self, phrase: str, *, results_only: bool = False) -> bool:
        """Return whether the evidence holds ``phrase`` as whole words."""
        folded = word_fold(phrase)
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


def trace_results(trace: Sequence[ReasoningStep]) -> list[str]:
    """Return the text of every tool result of ``trace``, failed calls' included.

    A structured result is its JSON; the same text the run's trajectory records.
    """
    found: list[str] = []
    for step in trace:
        if step.kind not in _ACTION_KINDS or step.action is None:
            continue
        output = step.action.output
        if output is None or isinstance(output, str):
            text = output if output is not None else step.observation
        else:
            text = json.dumps(output, default=str, ensure_ascii=False)
        if text:
            found.append(text)
    return found


def is_mask(word: str) -> bool:
    """Return whether ``word`` is a secret masked by ``grounding.secrets.mask`` (``M_____``)."""
    secret = word[:1] + "".join("x" if c == "_" else c for c in word[1:])  # one it could mask
    return secret != word and mask(secret) == word


def unseen_numbers(text: str, evidence: Evidence) -> Iterator[str]:
    """Yield each number of ``text`` that no number of the evidence gives."""
    for match in _NUMBER.finditer(text):
        number, percent = match.group(1), bool(match.group(2))
        decimals = len(number.split(".")[1]) if "." in number else 0
        if not evidence.has_number(number, decimals, percent):
            yield match.group(0).strip()


def unseen_names(text: str, evidence: Evidence) -> Iterator[str]:
    """Yield each name of ``text`` (a capitalised word not opening a sentence) not in evidence."""
    for match in _WORD.finditer(text):
        word = match.group(0)
        if not word[0].isupper() or len(word) < 2 or _OPENERS.search(text[: match.start()]):
            continue
        if is_mask(word):
            continue
        if not all(token in evidence.words for token in word_fold(word).split()):
            yield word


def unseen_words(text: str, evidence: Evidence) -> list[tuple[UnseenKind, str]]:
    """Return the numbers, then the names, of ``text`` that the evidence lacks, in order."""
    numbers: list[tuple[UnseenKind, str]] = [("number", n) for n in unseen_numbers(text, evidence)]
    return numbers + [("name", w) for w in unseen_names(text, evidence)]


def sentences(text: str) -> list[tuple[str, str]]:
    """Return ``text`` as ``(sentence, break after it)`` pairs; joined, they give ``text``."""
    parts = SENTENCE_BREAK.split(text)
    breaks = [m.group(0) for m in SENTENCE_BREAK.finditer(text)]
    return [(part, breaks[i] if i < len(breaks) else "") for i, part in enumerate(parts)]


def seen_sentences(text: str, evidence: Evidence) -> tuple[str, list[str]]:
    """Return ``text`` without its sentences that hold an unseen word, and those words.

    A sentence goes with the break after it, so a kept sentence that opened one still
    opens one (its first word stays no name).
    """
    kept: list[str] = []
    dropped: list[str] = []
    for sentence, after in sentences(text):
        words = unseen_words(sentence, evidence)
        if words:
            dropped += [word for _, word in words]
        else:
            kept.append(sentence + after)
    return "".join(kept).strip(), dropped


def without_unseen_sentences(
    answer: Mapping[str, object], fields: Sequence[str], evidence: Evidence
) -> tuple[dict[str, object], list[str], list[str]]:
    """Return ``answer`` with the sentences of ``fields`` that hold unseen words dropped.

    Returns:
        The answer, a note per changed field (naming the words), and the fields that
        are left without a sentence.
    """
    kept = dict(answer)
    notes: list[str] = []
    emptied: list[str] = []
    for name in fields:
        text = kept.get(name)
        if not isinstance(text, str):
            continue
        clean, dropped = seen_sentences(text, evidence)
        if not dropped:
            continue
        kept[name] = clean
        notes.append(f"{name}: dropped the sentences holding {dropped!r}, which no tool gave")
        if not clean:
            emptied.append(name)
    return kept, notes, emptied
