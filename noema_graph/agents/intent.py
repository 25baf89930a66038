"""Does a request ask an agent to change something, or ask a question? Nearest examples decide.

Each agent that can write keeps labelled example requests in ``intents.toml``: per write
tool, requests that ask for that change; ``question``, requests that ask and want nothing
changed (plus the shared ones); every other agent's change examples count as ``other``.
:class:`IntentClassifier` embeds the request with the shipped multilingual e5 model and
scores each label by the mean similarity of its :data:`NEAREST` closest examples; the best
label wins when it leads the next one by :data:`MARGIN`, else the decision is ``uncertain``
(and an uncertain decision never writes). A request in none of the languages the examples
cover (English, French, Spanish: :func:`language_known`) is not classified either.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from langchain_core.embeddings import Embeddings

from noema_graph.errors import ConfigurationError
from noema_graph.grounding.words import QUOTED
from noema_graph.memory.embedders import cosine, default_embedder, embedder_identity
from noema_graph.memory.saved_vectors import saved_vectors
from noema_graph.models.local import prompt_cache_folder

EXAMPLES = Path(__file__).with_name("intents.toml")
QUESTION = "question"
OTHER = "other"
SHARED = "shared"
NEAREST = 3
"""Examples per label whose similarities are averaged."""
MARGIN = 0.01
"""Lead of the best label over the next one below which the decision is uncertain."""
OTHER_MARGIN = 0.03
"""Lead ``other`` (another agent's job) needs; below it, the agent's own labels decide."""
QUESTION_MARK = 0.01
"""Added to the ``question`` score of a request that ends with a question mark."""
POLITE_REQUEST = 0.02
"""Added to each change's score of a request a sentence of which asks politely for an action
(:func:`polite_request`); its question mark then adds nothing to ``question``."""

_TELLING = (
    r"(?:tell|explain|show|check|say|confirm|let\s+me\s+know|telling|explaining|showing|"
    r"checking|me\s+dire|m['\u2019]expliquer|me\s+montrer|dire|expliquer|montrer|v[ée]rifier|"
    r"decirme|explicarme|mostrarme|decir|explicar|mostrar|comprobar|confirmar)\b"
)
_POLITE = re.compile(
    r"(?:^|[.!;:?]\s+|¿\s*)(?:please\s+)?"
    r"(?:(?:could|can|would|will)\s+you\s+(?!mind\b)(?:please\s+|kindly\s+)?(?:also\s+)?"
    r"|would\s+you\s+mind\s+"
    r"|(?:pourriez|pouvez)[- ]vous\s+|(?:pourrais|peux)[- ]tu\s+"
    r"|(?:podr[ií]as|podr[ií]a|puedes|puede|te\s+importar[ií]a|le\s+importar[ií]a)\s+)"
    rf"(?!{_TELLING})\w",
    re.IGNORECASE,
)
"""A sentence that opens by asking someone to act (``Could you add ...``, ``Pourriez-vous
ranger ...``, ``¿Podrías crear ...``), not to tell (``Could you tell me ...``)."""


def polite_request(request: str) -> bool:
    """Return whether a sentence of ``request`` asks politely for an action (not an answer).

    ``Could you move it?`` asks for the move although it ends with a question mark; ``Could
    you tell me where it is?`` asks a question. English, French and Spanish openers.
    """
    return _POLITE.search(asking_part(request).strip()) is not None


_FUNCTION_WORDS = frozenset(
    """
    the a an of to in on into for with and or is are be it this that my me i you please what
    which how do does not from by at as card cards le la les un une des du de dans sur pour
    avec et ou est sont ce cette mon ma mes je tu vous quel quelle quels ne pas carte cartes
    fiche au aux qui que el los las uno una del en con por para y o es son este esta mi mis
    yo tu que cual como no tarjeta tarjetas al se lo
    """.split()  # noqa: SIM905 -- a word list reads best as words
)


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return re.findall(r"[a-z]+", plain)


def language_known(request: str) -> bool:
    """Return whether ``request`` reads as English, French or Spanish (their function words).

    A request of fewer than four words is given the benefit of the doubt; a longer one
    needs at least one common function word of the three languages among its words.
    """
    words = _words(request)
    letters = sum(c.isalpha() for c in request)
    latin = sum(c.isalpha() and ord(c) < 0x250 for c in request)
    if letters and latin / letters < 0.5:
        return False
    return len(words) < 4 or any(w in _FUNCTION_WORDS for w in words)


@dataclass(frozen=True)
class IntentDecision:
    """The label chosen (``uncertain`` below the margin), its lead and every label's score."""

    label: str
    margin: float
    scores: Mapping[str, float]


def read_examples(path: Path = EXAMPLES) -> dict[str, dict[str, list[str]]]:
    """Return ``{agent: {label: [example, ...]}}`` from the examples file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(str(path), f"cannot read intent examples: {exc}") from None
    return {
        str(agent): {str(label): [str(e) for e in examples] for label, examples in table.items()}
        for agent, table in data.items()
    }


def labelled(
    agent: str, examples: Mapping[str, Mapping[str, Sequence[str]]]
) -> dict[str, list[str]]:
    """Return the labelled examples ``agent`` is judged on (see the module docstring)."""
    own = examples.get(agent, {})
    labels: dict[str, list[str]] = {k: list(v) for k, v in own.items()}
    labels.setdefault(QUESTION, []).extend(examples.get(SHARED, {}).get(QUESTION, []))
    others = [
        example
        for name, table in examples.items()
        if name not in (agent, SHARED)
        for label, items in table.items()
        if label != QUESTION
        for example in items
    ]
    if others:
        labels[OTHER] = others
    return labels


class NearestExamples:
    """Labelled example requests, embedded on first use.

    A request scores each label by the mean cosine of its :data:`NEAREST` nearest examples,
    its quoted text left out (:func:`asking_part`).
    """

    def __init__(
        self,
        labels: Mapping[str, Sequence[str]],
        embedder: Embeddings,
        *,
        folder: Path | None = None,
    ) -> None:
        """Keep the labelled examples; they are embedded on the first decision.

        ``folder`` keeps their vectors from one process to the next
        (:mod:`noema_graph.memory.saved_vectors`); None embeds them in every process.
        """
        self.labels = {k: list(v) for k, v in labels.items() if v}
        self.embedder = embedder
        self.folder = folder
        self._vectors: dict[str, list[list[float]]] | None = None

    def _examples(self) -> dict[str, list[list[float]]]:
        if self._vectors is None:
            texts = list(dict.fromkeys(e for items in self.labels.values() for e in items))
            embedded = saved_vectors(
                lambda text: _embedded(self.embedder, text),
                embedder_identity(self.embedder),
                texts,
                self.folder,
            )
            vector_of = dict(zip(texts, embedded, strict=True))
            self._vectors = {
                label: [vector_of[e] for e in items] for label, items in self.labels.items()
            }
        return self._vectors

    def scores(self, request: str) -> dict[str, float]:
        """Return each label's score for the asking part of ``request``."""
        query = _embedded(self.embedder, asking_part(request))
        scores: dict[str, float] = {}
        for label, vectors in self._examples().items():
            nearest = sorted((cosine(query, v) for v in vectors), reverse=True)[:NEAREST]
            scores[label] = sum(nearest) / len(nearest)
        return scores


class IntentClassifier(NearestExamples):
    """Nearest-example intent decision over one agent's labelled examples."""

    def decide(self, request: str) -> IntentDecision:
        """Return the label of ``request``, or ``uncertain`` when no label leads by MARGIN.

        Quoted and bracketed text (a card's front, a note's title) is left out: it names
        things, it does not ask. A request that ends with a question mark gives the
        ``question`` label :data:`QUESTION_MARK` more, unless a sentence of it asks politely
        for an action (:func:`polite_request`): then each change gets :data:`POLITE_REQUEST`.
        """
        scores = self.scores(request)
        if polite_request(request):
            for label in scores.keys() - {QUESTION, OTHER}:
                scores[label] += POLITE_REQUEST
        elif QUESTION in scores and any(mark in asking_part(request) for mark in "?¿"):
            scores[QUESTION] += QUESTION_MARK
        label, lead = _leader(scores, OTHER_MARGIN)
        if label != OTHER:
            own = {k: v for k, v in scores.items() if k != OTHER}
            label, lead = _leader(own, MARGIN)
        return IntentDecision(label, round(lead, 4), scores)


def _leader(scores: Mapping[str, float], margin: float) -> tuple[str, float]:
    """Return the best label and its lead, or ``uncertain`` when it leads by less than margin."""
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
    if not ranked:
        return "uncertain", 0.0
    lead = ranked[0][1] - (ranked[1][1] if len(ranked) > 1 else 0.0)
    return (ranked[0][0] if lead >= margin else "uncertain"), lead


def asking_part(request: str) -> str:
    """Return ``request`` without quoted or bracketed text (unless nothing else is left)."""
    rest = " ".join(QUOTED.sub(" ", request).split())
    return rest if len(rest) >= 8 else request


_CACHE: dict[tuple[int, str], list[float]] = {}


def _embedded(embedder: Embeddings, text: str) -> list[float]:
    key = (id(embedder), text)
    if key not in _CACHE:
        _CACHE[key] = embedder.embed_query(text)
    return _CACHE[key]


@cache
def classifier_for(agent: str) -> IntentClassifier | None:
    """Return the shared classifier of ``agent`` (None: no examples, or no embedder)."""
    embedder = default_embedder()
    examples = read_examples()
    if embedder is None or agent not in examples:
        return None
    return IntentClassifier(labelled(agent, examples), embedder, folder=prompt_cache_folder())
