"""The checks an answer passes before it is returned: words from the data, no secret.

:func:`checked_answer` applies, in order, to a structured answer (a dict):

1. :func:`~noema_graph.grounding.choices.kept_choices`: a chosen field keeps only entries
   the run's data holds (for a model that ignored the schema's ``enum``);
2. :func:`~noema_graph.grounding.examples.without_example_words`: a free-text field the
   model wrote that holds a word or figure only a worked example states is replaced by
   :func:`data_sentence` (the figures the tools gave), or left empty, and so is one that
   only repeats the field's description (a small model copies the schema's words);
3. :func:`~noema_graph.grounding.unseen.without_unseen_sentences`: a sentence of such a
   field that holds a name or number no tool result nor the request gave is dropped (the
   definition the evaluation's words check uses); a field left without a sentence gets
   :func:`data_sentence`, or is left empty;
4. :func:`~noema_graph.grounding.secrets.unleaked`: every text, a plain-text answer too,
   has the declared secrets masked.

Each change is returned as a note, which ``finalize`` keeps in the trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from noema_graph.grounding.answers import max_length
from noema_graph.grounding.choices import kept_choices
from noema_graph.grounding.examples import example_words, without_example_words
from noema_graph.grounding.secrets import masked, unleaked
from noema_graph.grounding.unseen import (
    Evidence,
    trace_results,
    unseen_words,
    without_unseen_sentences,
)
from noema_graph.grounding.words import fold
from noema_graph.state.models import ReasoningStep

_PUNCTUATION = re.compile(r"[^\w\s]+")


@dataclass(frozen=True)
class AnswerData:
    """What an answer is checked against.

    Attributes:
        schema: The output schema (None: a plain-text answer).
        filled: The fields filled from the tools (``answer_sources``).
        opened: The fields with an opening (their words follow the example by design).
        choices: The candidates of each chosen field.
        secrets: The secret texts the run read.
        examples: The worked examples' text (the instructions from their heading on).
        allowed: Texts whose words an answer may use: the request, the instructions
            outside the examples; the tool results are added from the trace.
        request: The request; with the tool results, the evidence a name or number of a
            free-text field needs (:mod:`~noema_graph.grounding.unseen`).
    """

    schema: type[BaseModel] | None
    filled: Mapping[str, Any]
    opened: Sequence[str]
    choices: Mapping[str, tuple[str, ...]]
    secrets: Sequence[str]
    examples: str
    allowed: Sequence[str]
    request: str = ""


def _free_text(data: AnswerData) -> list[str]:
    """Return the text fields the model writes freely (not filled, opened or chosen)."""
    if data.schema is None:
        return []
    return [
        name
        for name, field in data.schema.model_fields.items()
        if field.annotation is str
        and name not in data.filled
        and name not in data.opened
        and name not in data.choices
    ]


def data_sentence(filled: Mapping[str, Any], limit: int | None) -> str:
    """Return the scalar figures of ``filled`` as one sentence (``retention 0.857, lapses 187.``).

    Empty when no figure is filled.
    """
    parts = [
        f"{name.replace('_', ' ')} {round(value, 3) if isinstance(value, float) else value}"
        for name, value in filled.items()
        if isinstance(value, int | float | str) and not isinstance(value, bool)
    ]
    text = f"{', '.join(parts)}." if parts else ""
    return text if limit is None or len(text) <= limit else ""


def _described(
    answer: Mapping[str, Any], schema: type[BaseModel] | None, fields: Sequence[str]
) -> list[str]:
    """Return a note for each text of ``fields`` that only repeats the field's description."""
    if schema is None:
        return []
    notes: list[str] = []
    for name in fields:
        text, description = answer.get(name), schema.model_fields[name].description
        if isinstance(text, str) and description and _bare(text) == _bare(description):
            notes.append(f"{name}: it only repeated the field's description")
    return notes


def _bare(text: str) -> str:
    return fold(_PUNCTUATION.sub(" ", text))


def tool_texts(trace: Sequence[ReasoningStep]) -> list[str]:
    """Return the run's successful tool calls, arguments and results, as JSON texts."""
    return [
        json.dumps([s.action.input, s.action.output], default=str, ensure_ascii=False)
        for s in trace
        if s.kind == "tool" and s.status == "ok" and s.action is not None
    ]


def checked_answer(
    answer: Any, data: AnswerData, trace: Sequence[ReasoningStep]
) -> tuple[Any, list[str]]:
    """Return ``answer`` after the checks of the module docstring, and what they changed."""
    notes: list[str] = []
    if isinstance(answer, Mapping):
        answer, notes = kept_choices(answer, data.choices)
        fields = _free_text(data)
        cleared: list[str] = []
        if fields and data.examples:
            words = example_words(data.examples, [*data.allowed, *tool_texts(trace)])
            answer, cleared = without_example_words(answer, fields, words)
        cleared += _described(answer, data.schema, fields)
        empty = [note.split(":", 1)[0] for note in cleared]
        answer.update(dict.fromkeys(empty, ""))
        evidence = Evidence(trace_results(trace), data.request)
        answer, dropped, emptied = without_unseen_sentences(answer, fields, evidence)
        if fallback := list(dict.fromkeys([*empty, *emptied])):
            # the fallback names only figures the evidence holds: a field filled from a
            # call's arguments or left at its empty value (a write that did not run) is none
            seen = {k: v for k, v in data.filled.items() if not unseen_words(f"{v}", evidence)}
            for name in fallback:
                field = data.schema.model_fields[name] if data.schema else None
                answer[name] = data_sentence(seen, max_length(field) if field else None)
        notes += cleared + dropped
    answer, found = unleaked(answer, data.secrets)
    notes += [f"{where}: masked a secret of a tool result (secret_fields)" for where in found]
    return answer, [masked(note, data.secrets) for note in notes]  # the trace is shown too
