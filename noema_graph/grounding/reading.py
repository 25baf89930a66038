"""What a request asks, read before any tool that writes may run.

An agent whose config has a ``request_reader`` reads its request once, in ``plan``, into a
:class:`~noema_graph.state.models.RequestReading`: the change it asks for (or a question,
or unclear), the records it refers to, each linked with a score, or why it is refused. The
nodes then hold every model to it:

* :func:`offered` drops the tools that write unless the request asks for that change, so
  a question is answered with the read tools only; an unclear request keeps the one change
  it most likely asks for, which runs dry or after the learner's yes (:func:`may_preview`);
* :func:`write_refusal` refuses, before it runs, a write call the reading does not back:
  any write of a request that asks nothing to change, or a reference argument (``card_id``,
  a concept's name) to a record the request did not refer to;
* :func:`with_references` adds the linked records to what the run has seen, so a read
  tool's reference takes a card named by its text as it takes ``card 31``;
* :func:`bound_calls` gives a write step's calls from the reading: one call per record the
  request names (``cards 154 and 157`` -> two calls), whatever the model would have made.

Depends on :mod:`noema_graph.state`, :mod:`~noema_graph.grounding.arguments` and
:mod:`~noema_graph.grounding.seen` only.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from noema_graph.grounding.arguments import references
from noema_graph.grounding.seen import Seen
from noema_graph.state.models import Refusal, RequestReading

RequestReader = Callable[[str], RequestReading]
"""Reads one request (the latest human message's text) into a RequestReading."""

MAX_REQUEST_CHARS = 20_000
"""Longest request read; a longer one is refused (a document belongs in a file, not a turn)."""
WRITE_PERMISSIONS = frozenset({"fs:write", "shell:execute"})


def writes(tool: BaseTool) -> bool:
    """Return whether ``tool`` changes data (its permission writes, or it is not idempotent)."""
    meta = tool.metadata or {}
    return meta.get("permission") in WRITE_PERMISSIONS or meta.get("idempotency") in (
        "idempotent",
        "non_idempotent",
    )


def may_write(reading: RequestReading | None, tool: str) -> bool:
    """Return whether the reading lets a call of the write tool ``tool`` run."""
    if reading is None:
        return True
    if reading.refusal is not None or reading.intent not in ("change", "none"):
        return False
    return not reading.writes or tool in reading.writes


def may_preview(reading: RequestReading | None, tool: str) -> bool:
    """Return whether the write ``tool`` may run dry only (an unclear request's likeliest change).

    The reading is ``intent="uncertain"`` and names ``tool`` in ``writes``. Such a call never
    writes: ``tool_node`` asks the learner first when the run allows questions (``clarify``),
    else runs it dry, and the answer says what it would change.
    """
    return (
        reading is not None
        and reading.refusal is None
        and reading.intent == "uncertain"
        and tool in reading.writes
    )


def offered(tools: Sequence[BaseTool], reading: RequestReading | None) -> list[BaseTool]:
    """Return ``tools`` less the write tools the reading does not ask for (nor may preview)."""
    return [
        t
        for t in tools
        if not writes(t) or may_write(reading, t.name) or may_preview(reading, t.name)
    ]


def _folded(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    text = unicodedata.normalize("NFKD", value.strip().casefold())
    return "".join(c for c in text if not unicodedata.combining(c))


def write_refusal(
    tool: BaseTool,
    args: Mapping[str, Any],
    reading: RequestReading | None,
    schema: Mapping[str, Any],
) -> str | None:
    """Return why a call of the write ``tool`` must not run, or None when the reading backs it."""
    if reading is None or not writes(tool):
        return None
    if not may_write(reading, tool.name) and not may_preview(reading, tool.name):
        asked = "a question" if reading.intent == "question" else "no clear change"
        return (
            f"Not executed: {tool.name} changes data and the request asks {asked}. "
            "Answer it from what the read tools show."
        )
    for name, kind in references(schema).items():
        value = args.get(name)
        known = reading.values(kind)
        if value is None or not reading.references:
            continue
        if _folded(value) not in {_folded(v) for v in known}:
            shown = ", ".join(map(str, known)) or "none"
            return (
                f"Not executed: the request does not refer to {kind} {value!r} "
                f"(it refers to {kind}: {shown})."
            )
    return None


def with_references(seen: Seen, reading: RequestReading | None) -> Seen:
    """Return ``seen`` (changed in place) holding the records the reading linked.

    A card named by its text (``the card that asks for the capital of Mongolia``) is then
    an id the request gives, as ``card 31`` would be: a read tool's reference takes it, and
    nothing else, instead of a number the model makes up.
    """
    for ref in reading.references if reading is not None else ():
        if isinstance(ref.value, int) and not isinstance(ref.value, bool):
            seen.add_id(ref.kind, ref.value, ref.label or None)
        elif isinstance(ref.value, str):
            seen.add_name(ref.kind, ref.value)
    return seen


def bound_calls(schema: Mapping[str, Any], reading: RequestReading | None) -> list[dict[str, Any]]:
    """Return the reference arguments of a write step's calls, one dict per call.

    Each kind the tool takes gets the request's references of that kind: as many arguments
    as references fill them in order (``source``, ``target``), twice as many make two calls
    (:func:`_groups`); one argument and several references make one call per reference
    (the product over kinds). Empty: the reading
    binds nothing (no reading, or a kind without references).
    """
    if reading is None or not reading.references:
        return []
    by_kind: dict[str, list[str]] = {}
    for name, kind in references(schema).items():
        by_kind.setdefault(kind, []).append(name)
    options: list[list[dict[str, Any]]] = []
    for kind, names in by_kind.items():
        values = reading.values(kind)
        if not values:
            if set(names) & set(schema.get("required") or ()):
                return []
            continue
        if len(names) > 1:
            options.append(_groups(names, values))
        else:
            options.append([{names[0]: v} for v in values])
    if not options or any(not o for o in options):
        return []
    return [
        dict(itertools.chain.from_iterable(d.items() for d in combo))
        for combo in itertools.product(*options)
    ]


def _groups(names: Sequence[str], values: Sequence[Any]) -> list[dict[str, Any]]:
    """Return the calls' arguments of several arguments of one kind, filled in order.

    As many values as arguments fill one call; a whole multiple of them (``Africa to Asia
    and Americas to Europe``) fills one call per group; else the first values fill one.
    """
    size = len(names)
    if len(values) < size:
        return []
    if len(values) % size:
        return [dict(zip(names, values, strict=False))]
    return [
        dict(zip(names, values[at : at + size], strict=True)) for at in range(0, len(values), size)
    ]


def input_problem(request: str) -> Refusal | None:
    """Return the refusal of a request no reader should read: empty, too long, control bytes."""
    if not request.strip():
        return Refusal(
            code="invalid_input", message="The request is empty: write what you want done."
        )
    if len(request) > MAX_REQUEST_CHARS:
        return Refusal(
            code="invalid_input",
            message=(
                f"The request is {len(request):,} characters long; the most is "
                f"{MAX_REQUEST_CHARS:,}. Shorten it, or ingest long text in parts."
            ),
        )
    bad = sorted({c for c in request if unicodedata.category(c) == "Cc" and c not in "\n\r\t"})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad[:5])
        return Refusal(
            code="invalid_input",
            message=f"The request holds control characters ({shown}); remove them and send "
            "it again.",
        )
    return None
