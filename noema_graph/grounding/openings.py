"""Answer openings: the first words of a text field, filled from tool results.

A field that needs language (an advice, a summary) often has to state figures and labels a
tool computed: a small model asked to write the whole sentence copies its example's words
instead (every learner "over-confident"). An agent's ``answer_openings`` map such fields to
a template whose placeholders name values in the run's successful tool results::

    "You are {compute_calibration:direction}: about {compute_calibration:mean_confidence:.0%}
    confidence against {compute_calibration:accuracy:.0%} recall"

A placeholder is ``{tool:path}`` or ``{tool:path:format}``: a one-option source of
:mod:`~noema_graph.grounding.sources` (no ``*``, ``|`` or ``{fields}``), then an optional
Python format spec (``.0%`` writes 0.917 as ``92%``). The filled opening is where the
field's text starts; the model writes the rest of the sentence. The answer schema says so as
a ``pattern`` (the opening, then the rest of one sentence ending in a full stop), which
llama.cpp's grammar enforces while decoding and remote structured output honours;
:func:`laid_open` makes the value start with it in any case. An opening with a
placeholder that has no value (no successful call yet) is left out.

Measured on the embedded 135M model (the demo's three learners): asked for the whole
advice it wrote "You are over-confident: rate lower unless you are sure." for all three;
with the opening and free text after it, it stopped at once or added "; about 82%"; with
one sentence that must end in a full stop, and the worked example nearest the run's
observation (:func:`noema_graph.prompts.nearest_example`), it wrote the right advice for
each ("..., so trust your answers more when you rate them."). An opening needs worked
examples of how its sentence goes on: on diagnostic's summary, whose one example does not
show it, the model went on inventing figures ("187 lapses, 187 streak days"), and with
digits refused, words with gaps; the catalog opens calibration's advice only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic.fields import FieldInfo

from noema_graph.errors import InvalidValue
from noema_graph.grounding.sources import MISSING, Source, parse_source, resolve
from noema_graph.state.models import ReasoningStep

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w-]*:[\w.#]+)(?::([^{}]*))?\}")
_REGEX_SPECIAL = frozenset("\\^$.|?*+()[]{}")
"""Characters a regex escapes; the others stay literal (llama.cpp's converter reads only these)."""
CONTINUATION = '[^"\\\\.;0-9\\x00-\\x1f]'
"""The characters the model may write after an opening: no quote, backslash or control
character, so the JSON string it sits in stays one line and needs no escapes; no full stop
or semicolon, so the sentence goes on to the one full stop that ends it; and no digit: the
figures are the opening's, from the tools, and the model's words add none."""
_UNPLAIN = re.compile(r'["\\\x00-\x1f]')
DEFAULT_ROOM = 200
"""Characters left for the model after an opening when the field sets no ``max_length``."""


@dataclass(frozen=True)
class Placeholder:
    """One ``{tool:path[:format]}`` of an opening."""

    source: Source
    spec: str


@dataclass(frozen=True)
class Opening:
    """A parsed opening: literal text and placeholders, in order."""

    text: str
    parts: tuple[str | Placeholder, ...]

    @property
    def sources(self) -> tuple[Source, ...]:
        """Return the sources the placeholders read, in order."""
        return tuple(p.source for p in self.parts if isinstance(p, Placeholder))


def parse_opening(text: str) -> Opening:
    """Parse ``text`` (see the module docstring).

    Raises:
        ValueError: a brace that opens no placeholder, or a placeholder that is not a
            one-option source; the message quotes the bad part.
    """
    parts: list[str | Placeholder] = []
    position = 0
    for match in _PLACEHOLDER.finditer(text):
        parts.append(text[position : match.start()])
        # the pattern admits neither "*" nor "{fields}": a placeholder reads one value
        parts.append(Placeholder(parse_source(match.group(1)), match.group(2) or ""))
        position = match.end()
    parts.append(text[position:])
    literal = "".join(p for p in parts if isinstance(p, str))
    if "{" in literal or "}" in literal:
        msg = f"{text!r} has a brace outside a placeholder like {{tool:path}} or {{tool:path:.0%}}"
        raise InvalidValue(msg)
    if not any(isinstance(p, Placeholder) for p in parts):
        msg = f"{text!r} has no placeholder: a fixed text belongs in the prompt, not the answer"
        raise InvalidValue(msg)
    return Opening(text, tuple(p for p in parts if p != ""))


def fill_opening(opening: Opening, trace: Sequence[ReasoningStep]) -> str | None:
    """Return the opening with its placeholders filled, or None if one has no value."""
    words: list[str] = []
    for part in opening.parts:
        if isinstance(part, str):
            words.append(part)
            continue
        value = resolve(part.source, trace)
        if value is MISSING or value is None:
            return None
        try:
            words.append(format(value, part.spec))
        except (TypeError, ValueError):  # a spec that does not fit the value's type
            return None
    return "".join(words)


def opened_fields(openings: Mapping[str, str], trace: Sequence[ReasoningStep]) -> dict[str, str]:
    """Return the filled opening of each field whose placeholders all have a value."""
    filled = {name: fill_opening(parse_opening(text), trace) for name, text in openings.items()}
    return {name: words for name, words in filled.items() if words is not None}


def opening_pattern(words: str, max_length: int | None) -> str | None:
    """Return a regex for one sentence that starts with ``words`` and fits ``max_length``.

    None when ``words`` hold a quote, backslash or control character (from a tool's text):
    JSON escapes those, and llama.cpp's pattern grammar would write them raw; or when they
    leave no room for the full stop. Such an opening is only laid over the answer
    (:func:`laid_open`).
    """
    room = (max_length if max_length is not None else len(words) + DEFAULT_ROOM) - len(words)
    if _UNPLAIN.search(words) or room < 1:  # no room left for the full stop: laid over only
        return None
    escaped = "".join(f"\\{c}" if c in _REGEX_SPECIAL else c for c in words)
    return f"^{escaped}{CONTINUATION}{{0,{room - 1}}}\\.$"


def laid_open(text: str, words: str, max_length: int | None) -> str:
    """Return ``text`` starting with ``words``: as it is if it does, else ``words`` first.

    The model's own text follows the opening after a colon; what would pass ``max_length``
    is cut at a word boundary.
    """
    if text.startswith(words):
        return text
    joined = f"{words}: {text.strip()}" if text.strip() else words
    if max_length is None or len(joined) <= max_length:
        return joined
    window = joined[: max_length + 1]
    return window.rsplit(" ", 1)[0] if " " in window else joined[:max_length]


def opening_problem(
    openings: Mapping[str, str], sources: Mapping[str, str], fields: Mapping[str, FieldInfo]
) -> str | None:
    """Return what is wrong with ``openings`` for an output schema's ``fields``, or None.

    An opened field must be a text field the model writes: not one ``sources`` fills.
    """
    for name in openings:
        if name in sources:
            return f"{name!r} is in answer_sources too: a field is filled or opened, not both"
        if name in fields and fields[name].annotation is not str:
            return f"{name!r} is not a text field: only text has an opening"
    return None
