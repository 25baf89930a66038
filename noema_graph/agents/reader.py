"""An agent's request reader: the language, the intent, the references, or a refusal.

:func:`request_reader` builds, for one agent and its tools, the
:data:`~noema_graph.grounding.reading.RequestReader` that ``plan`` calls once per run:

1. a request in none of the languages read (:func:`~noema_graph.agents.intent.language_known`)
   is refused (``invalid_input``), not guessed at;
2. the records it names are linked against the store (:mod:`~noema_graph.agents.references`);
   an id or a name the store lacks is refused (``not_found``), naming the candidates;
3. an agent that can write decides whether the request asks for one of its changes, asks a
   question, is unclear, or is another agent's job (:mod:`~noema_graph.agents.intent`); an
   unclear request keeps the change it most likely asks for (``intent="uncertain"`` with
   that write and its references), which never writes: the run asks the learner about it
   when questions are allowed, else runs it dry and says what it would change
   (:func:`~noema_graph.grounding.reading.may_preview`); so does a question to an agent
   with no tool that only reads (governance: "does card 203 look like a duplicate?" is
   answered by what its likeliest write would do, dry);
4. a change must have every reference its tool needs, at most one record of each kind it
   takes once (of several, the one written as the destination: ``from Chemistry into
   Biology``), any number of the record it repeats over (``cards 154 and 157``: two calls),
   and no value its schema does not allow (``kind: reacts_with``, ``de type 'cause'``,
   :mod:`~noema_graph.agents.values`): else it is refused, and nothing is written. Names
   in another language a change lacks (``Relie Gaz nobles à Halogens``) are scored by
   meaning first (:func:`~noema_graph.agents.references.similar_phrases`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from langchain_core.tools import BaseTool

from noema_graph.agents.intent import (
    OTHER,
    QUESTION,
    IntentClassifier,
    classifier_for,
    language_known,
)
from noema_graph.agents.references import (
    TABLES,
    Linked,
    NameMatcher,
    StoreNames,
    destination,
    fold,
    link,
    similar_phrases,
)
from noema_graph.agents.similar_names import EmbeddedNames
from noema_graph.agents.values import unallowed_value
from noema_graph.grounding.arguments import references
from noema_graph.grounding.reading import RequestReader, input_problem, writes
from noema_graph.memory.embedders import default_embedder
from noema_graph.models.grammar import tool_args_schema
from noema_graph.state.models import Reference, Refusal, RequestReading

LANGUAGES = "English, French or Spanish"


class AgentReader:
    """Reads requests for one agent (see the module docstring)."""

    def __init__(
        self,
        agent: str,
        description: str,
        tools: Sequence[BaseTool],
        store: StoreNames,
        classifier: IntentClassifier | None,
        matcher: NameMatcher | None = None,
    ) -> None:
        """Keep what reading needs; the store is read per request.

        ``matcher`` scores names written in another language (None: they are refused).
        """
        self.agent = agent
        self.description = description
        self.schemas = {t.name: tool_args_schema(t) for t in tools}
        self.writes = [t.name for t in tools if writes(t)]
        self.reads = any(not writes(t) for t in tools)
        self.kinds = sorted(
            {k for s in self.schemas.values() for k in references(s).values() if k in TABLES}
        )
        self.store = store
        self.classifier = classifier
        self.matcher = matcher

    def __call__(self, request: str) -> RequestReading:
        """Return the reading of ``request``."""
        text = request
        problem = input_problem(text)
        if problem is None and not language_known(text):
            message = f"I cannot read this request; write it in {LANGUAGES}."
            problem = Refusal(code="invalid_input", message=message)
        if problem is not None:
            return RequestReading(refusal=problem)
        linked = self._link(text, card_text=not self.writes)
        if linked.refusals:
            return RequestReading(refusal=linked.refusals[0], references=tuple(linked.references))
        if not self.writes or self.classifier is None:
            return RequestReading(intent="none", references=tuple(linked.references))
        return self._decided(text, linked)

    def _decided(self, text: str, linked: Linked) -> RequestReading:
        """Return the reading of a request to an agent that writes (see the module docstring)."""
        assert self.classifier is not None
        decision = self.classifier.decide(text)
        if decision.label == OTHER:
            message = f"This is not something the {self.agent} agent does: {self.description}"
            return RequestReading(refusal=Refusal(code="invalid_input", message=message))
        if decision.label not in self.writes:
            unchanged = self._unchanged(decision.label, decision.margin, linked)
            likeliest = _likeliest(decision.scores, self.writes)
            if likeliest is None or (decision.label == QUESTION and self.reads):
                return unchanged
            maybe = self._change(likeliest, text, linked, decision.margin)
            if maybe.refusal is not None:  # no change to show: the note says what is unclear
                return unchanged
            note = unchanged.note
            if decision.label == QUESTION:  # no tool that only reads: show the change, dry
                note = (
                    "Nothing was changed: the request asks a question, and the "
                    f"{self.agent} agent answers it with what {likeliest} would do."
                )
            return maybe.model_copy(update={"intent": "uncertain", "note": note})
        return self._change(decision.label, text, linked, decision.margin)

    def _change(self, tool: str, text: str, linked: Linked, margin: float) -> RequestReading:
        """Return the reading of a request for a change by ``tool``, or why it is refused."""
        kinds = set(references(self.schemas[tool]).values())
        if "card" in kinds and not _has(linked, "card"):
            linked = self._link(text, card_text=True)
            if linked.refusals:
                return RequestReading(refusal=linked.refusals[0])
        linked = self._completed(tool, text, self._destined(tool, text, linked))
        problem = self._change_problem(tool, text, linked)
        refs = tuple(r for r in linked.references if r.kind in kinds)
        return RequestReading(
            intent="change", writes=(tool,), score=margin, references=refs, refusal=problem
        )

    def _link(self, text: str, *, card_text: bool) -> Linked:
        return link(text, self.kinds, self.store, card_text=card_text, matcher=self.matcher)

    def _unchanged(self, label: str, margin: float, linked: Linked) -> RequestReading:
        intent = "question" if label == QUESTION else "uncertain"
        named = ", ".join(f"{r.kind} {r.label or r.value}" for r in linked.references)
        note = (
            "Nothing was changed: the request asks a question."
            if intent == "question"
            else f"Nothing was changed: it is not clear that the request asks for a change "
            f"({' or '.join(self.writes)}"
            + (f" on {named}" if named else "")
            + "); ask for it plainly to have it done."
        )
        return RequestReading(
            intent=intent, score=margin, references=tuple(linked.references), note=note
        )

    def _destined(self, tool: str, text: str, linked: Linked) -> Linked:
        """Return ``linked`` with one record of each kind the tool takes once, if it can tell.

        Of several categories named for a move, the one written as where the card goes
        (``from Chemistry into Biology``) is the one the change takes; the first kind (the
        record the call repeats over) keeps every record.
        """
        refs = list(references(self.schemas[tool]).values())
        for kind in refs[1:]:
            values = [r for r in linked.references if r.kind == kind]
            if refs.count(kind) != 1 or len({str(r.value) for r in values}) < 2:
                continue
            if (chosen := destination(text, values)) is not None:
                kept = [r for r in linked.references if r.kind != kind or r is chosen]
                linked = Linked(references=kept, refusals=list(linked.refusals))
        return linked

    def _completed(self, tool: str, text: str, linked: Linked) -> Linked:
        """Return ``linked`` with names in another language a change lacks (``Gaz nobles``).

        Only for a kind the tool needs more records of than the request spells; each
        record keeps its place in the request (a link's source before its target).
        """
        refs = list(references(self.schemas[tool]).values())
        for kind in dict.fromkeys(refs):
            have = [r for r in linked.references if r.kind == kind]
            if kind == "card" or self.matcher is None or len(have) >= refs.count(kind):
                continue
            taken = [r.text for r in linked.references]
            extra = similar_phrases(text, kind, self.store, self.matcher, taken)
            if not extra:
                continue
            folded = fold(text)
            placed = [(folded.find(fold(r.text)), r) for r in have] + extra
            ordered = [r for _, r in sorted(placed, key=lambda item: item[0])]
            others = [r for r in linked.references if r.kind != kind]
            linked = Linked(references=ordered + others, refusals=list(linked.refusals))
        return linked

    def _change_problem(self, tool: str, text: str, linked: Linked) -> Refusal | None:
        schema = self.schemas[tool]
        refs = references(schema)
        required: set[str] = set(schema.get("required") or ())
        first = next(iter(refs.values()), None)
        for name, kind in refs.items():
            values = [r for r in linked.references if r.kind == kind]
            wanted = sum(1 for k in refs.values() if k == kind)
            if name in required and len(values) < wanted:
                return self._missing(kind, len(values), wanted, tool)
            if wanted == 1 and kind != first and len({str(v.value) for v in values}) > 1:
                shown = ", ".join(str(v.label or v.value) for v in values)
                return Refusal(
                    code="invalid_input",
                    message=f"The request names several {kind} records ({shown}); say which one.",
                    candidates=tuple(str(v.label or v.value) for v in values),
                )
        names = [str(r.label or r.value) for r in linked.references]
        if bad := unallowed_value(text, schema, names, tools=set(self.schemas)):
            written, allowed = bad
            return Refusal(
                code="invalid_input",
                message=f"{written!r} is not an allowed value; allowed: {', '.join(allowed)}.",
                candidates=tuple(allowed),
            )
        return None

    def _missing(self, kind: str, found: int, wanted: int, tool: str) -> Refusal:
        names = sorted(self.store.names(kind).values()) if kind != "card" else []
        plural = "categories" if kind == "category" else f"{kind}s"
        listed = f" {plural}: {', '.join(names)}." if names else ""
        if wanted == 1:
            message = f"The request names no {kind} the store holds.{listed}"
        else:
            message = (
                f"{tool} needs {wanted} {plural}; the request names {found} the store holds."
                f"{listed}"
            )
        return Refusal(code="not_found", message=message.strip(), candidates=tuple(names))


def _likeliest(scores: Mapping[str, float], writes: Sequence[str]) -> str | None:
    """Return the write tool an uncertain decision scored highest, if it scored any."""
    scored = [(scores[w], w) for w in writes if w in scores]
    return max(scored)[1] if scored else None


def _has(linked: Linked, kind: str) -> bool:
    return any(r.kind == kind for r in linked.references)


def request_reader(
    agent: str, description: str, tools: Sequence[BaseTool], db: str | Path
) -> RequestReader:
    """Return the request reader of ``agent`` over its ``tools`` and the store at ``db``."""
    store = StoreNames(db)
    classifier = classifier_for(agent) if any(writes(t) for t in tools) else None
    return AgentReader(agent, description, tools, store, classifier, name_matcher())


@cache
def name_matcher() -> NameMatcher | None:
    """Return the shared matcher of names by meaning (None: no embedder installed)."""
    embedder = default_embedder()
    return EmbeddedNames(embedder) if embedder is not None else None


__all__ = ["AgentReader", "Reference", "request_reader"]
