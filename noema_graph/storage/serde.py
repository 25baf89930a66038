"""The checkpoint serializer: LangGraph's msgpack format, a tool result stored once per entry.

A tool step of the trace holds the tool's result twice: ``action.output`` (the full result)
and ``observation`` (the text the model read, the same string unless it was cut short). The
output contract's ``reasoning.steps`` copy both again. :class:`CompactSerializer` writes
such a step with ``action.output`` left out and ``"output_from": "observation"`` in its
place; reading it back restores the same value:

* a :class:`~noema_graph.state.models.ReasoningStep` is revived by LangGraph's own decoder
  (``ReasoningStep(**fields)``), whose validator puts the observation back;
* the output contract (a plain dict) is wrapped in :class:`CompactOutput`, encoded as a
  call of :func:`expand_output` with its fields, which the decoder makes (the function is
  on the allow-list).

Everything else is encoded exactly as :class:`JsonPlusSerializer` encodes it. The stock
format (the default) stops there: a step is plain LangGraph msgpack, which LangGraph's own
serializer revives with noema importable (the model's validator restores the result). The
compact format (``compact=True``) also wraps output contracts, links the snapshots a pruned
checkpoint holds (:func:`_linked`) and, with ``compress=True`` (SQLite, unlike PostgreSQL's
TOAST, stores values as given), stores a value whose msgpack is at least
:data:`COMPRESS_MIN` bytes zlib-compressed as type :data:`COMPRESSED` when that saves at
least a tenth. Every value decodes on its own, and every serializer of this class reads
every format, whatever its settings.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeGuard, cast

import ormsgpack
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.serde.jsonplus import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_DELTA_SNAPSHOT,
    EXT_PYDANTIC_V2,
    JsonPlusSerializer,
)

# a delta channel's snapshot: LangGraph offers no public class (its own savers import this one)
from langgraph.checkpoint.serde.types import _DeltaSnapshot  # pyright: ignore[reportPrivateUsage] -- no public name yet

from noema_graph.errors import InvalidValue
from noema_graph.state.models import (
    OBSERVATION_FROM,
    OUTPUT_FROM,
    STATE_MODELS,
    ReasoningStep,
    restore_output,
)
from noema_graph.state.output import TraceStep

_OUTPUT_KEYS = frozenset({"success", "reasoning", "metadata"})
COMPRESSED = "msgpack+zlib"
"""Serialisation type of a zlib-compressed msgpack value."""
COMPRESS_MIN = 512
"""Smallest msgpack value (bytes) worth compressing: below it zlib saves too little."""
COMPRESS_LEVEL = 1
"""zlib level: 1 compresses checkpoints within 1% of level 6 in about 80% of the time."""
INFLATE_MAX = 1 << 30
"""Largest value a compressed blob may inflate to (a damaged or hostile file errs)."""
OPTIONS = (
    ormsgpack.OPT_NON_STR_KEYS
    | ormsgpack.OPT_PASSTHROUGH_DATACLASS
    | ormsgpack.OPT_PASSTHROUGH_DATETIME
    | ormsgpack.OPT_PASSTHROUGH_ENUM
    | ormsgpack.OPT_PASSTHROUGH_UUID
    | ormsgpack.OPT_REPLACE_SURROGATES
)
"""ormsgpack options of LangGraph's encoder (its private ``_option``): what it passes to
``default`` (dataclasses, datetimes, enums, UUIDs) is encoded as LangGraph encodes it."""
TRACE_REF = "$trace"
"""Key of a stored output step that is trace entry ``value`` (see :func:`_linked`)."""


class CompactOutput:
    """An output contract stored with each step's duplicate tool result left out."""

    __slots__ = ("value",)

    def __init__(self, value: Mapping[str, Any]) -> None:
        """Wrap the output contract ``value`` (a dict, as ``state["output"]`` holds it)."""
        self.value = value

    def compact(self) -> dict[str, object]:
        """Return the contract with duplicate results left out (see the module docstring)."""
        reasoning = self.value["reasoning"]
        steps = [_compact_step(s) for s in reasoning["steps"]]
        return {**self.value, "reasoning": {**reasoning, "steps": steps}}


def expand_output(**stored: Any) -> dict[str, object]:
    """Return the output contract ``stored`` stands for (the decoder calls it by name)."""
    reasoning = stored.get("reasoning")
    if not isinstance(reasoning, dict) or not isinstance(reasoning.get("steps"), list):
        return stored
    steps = [restore_output(s) if isinstance(s, dict) else s for s in reasoning["steps"]]
    return {**stored, "reasoning": {**reasoning, "steps": steps}}


def _compact_step(step: object) -> object:
    """Return a step dict without ``action.output`` when it equals the observation."""
    if not isinstance(step, dict):
        return step
    action = step.get("action")
    observation = step.get("observation")
    if (
        not isinstance(action, dict)
        or not isinstance(observation, str)
        or action.get("output") != observation
    ):
        return step
    slim = {k: v for k, v in action.items() if k != "output"}
    return {**step, "action": slim, OUTPUT_FROM: "observation"}


def is_output_contract(value: object) -> TypeGuard[dict[str, Any]]:
    """Return whether ``value`` looks like ``state["output"]`` with its reasoning steps."""
    return (
        isinstance(value, dict)
        and _OUTPUT_KEYS.issubset(value)
        and isinstance(value["reasoning"], dict)
        and isinstance(value["reasoning"].get("steps"), list)
    )


def _default(obj: object) -> object:
    """Encode ``obj`` as LangGraph does, tool steps and output contracts compacted."""
    if isinstance(obj, ReasoningStep):
        fields = _compact_step(obj.model_dump())
        return ormsgpack.Ext(
            EXT_PYDANTIC_V2,
            _encode(
                (obj.__class__.__module__, obj.__class__.__name__, fields, "model_validate_json")
            ),
        )
    if isinstance(obj, CompactOutput):
        return ormsgpack.Ext(
            EXT_CONSTRUCTOR_KW_ARGS,
            _encode((expand_output.__module__, expand_output.__name__, obj.compact())),
        )
    if isinstance(obj, _DeltaSnapshot):
        return ormsgpack.Ext(EXT_DELTA_SNAPSHOT, _encode(obj.value))
    return langgraph_default(obj)


_FIXEXT = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
"""msgpack's fixext headers and their data lengths."""
_EXT = {0xC7: 1, 0xC8: 2, 0xC9: 4}
"""msgpack's ext 8/16/32 headers and the size of their length field."""
_STOCK = JsonPlusSerializer()


def langgraph_default(obj: object) -> object:
    """Return what LangGraph's encoder makes of ``obj``, through its public ``dumps_typed``.

    LangGraph's msgpack hook is private; encoding ``obj`` alone gives the same bytes: an
    extension value (returned as :class:`ormsgpack.Ext`, so this encoder embeds it) or a
    plain value (returned decoded).
    """
    data = _STOCK.dumps_typed(obj)[1]
    head = data[0]
    if head in _FIXEXT:
        return ormsgpack.Ext(int.from_bytes(data[1:2], signed=True), data[2:])
    if head in _EXT:
        start = 1 + _EXT[head]
        return ormsgpack.Ext(
            int.from_bytes(data[start : start + 1], signed=True), data[start + 1 :]
        )
    return ormsgpack.unpackb(data, option=ormsgpack.OPT_NON_STR_KEYS)


def _encode(value: object) -> bytes:
    return ormsgpack.packb(value, default=_default, option=OPTIONS)


def _wrap(obj: object) -> object:
    """Wrap an output contract, alone or in a checkpoint's channel values."""
    if is_output_contract(obj):
        return CompactOutput(obj)
    if isinstance(obj, dict) and isinstance(values := obj.get("channel_values"), dict):
        return {**obj, "channel_values": _linked(cast(dict[str, object], values))}
    return obj


def _linked(values: dict[str, object]) -> dict[str, object]:
    """Return channel values where snapshots refer to each other instead of repeating.

    A checkpoint that holds full snapshots of ``messages`` and ``trace`` (the oldest one
    ``prune`` keeps) stores a trace step's observation as a reference to its ToolMessage,
    and an output step equal to its trace entry as ``{"$trace": index}``.
    """
    trace = values.get("trace")
    steps = trace.value if isinstance(trace, _DeltaSnapshot) else None
    linked = dict(values)
    if steps and isinstance(messages := values.get("messages"), _DeltaSnapshot):
        answers = tool_answers(messages.value)
        linked["trace"] = _DeltaSnapshot([link_step(step, answers) for step in steps])
    output = values.get("output")
    contract = _unsnapped(output)
    if is_output_contract(contract):
        compact = CompactOutput(_link_output(contract, steps or []))
        linked["output"] = _DeltaSnapshot(compact) if contract is not output else compact
    return linked


def _unsnapped(value: object) -> object:
    """Return the value a snapshot holds (the output channel is a delta channel), or itself."""
    return value.value if isinstance(value, _DeltaSnapshot) else value


def tool_answers(messages: Iterable[object]) -> dict[str, str]:
    """Return the text of each ToolMessage in ``messages``, by tool call id."""
    return {
        m.tool_call_id: m.content
        for m in messages
        if isinstance(m, ToolMessage) and isinstance(m.content, str)
    }


def link_step(step: object, answers: Mapping[str, str]) -> object:
    """Return ``step`` as plain fields referring to its ToolMessage, or ``step`` itself.

    Only a tool step whose observation is exactly the text of the ToolMessage answering its
    call (in ``answers``, by call id) is linked.
    """
    if not isinstance(step, ReasoningStep) or step.call_id is None:
        return step
    if step.observation is None or answers.get(step.call_id) != step.observation:
        return step
    fields = cast(dict[str, object], _compact_step(step.model_dump()))  # a dict stays one
    del fields["observation"]
    return {**fields, OBSERVATION_FROM: "message"}


def _trace_step(step: ReasoningStep) -> dict[str, object]:
    """Return ``step`` as the output contract holds it (see ``nodes/output.py``)."""
    return TraceStep.model_validate(step, from_attributes=True).model_dump(mode="json")


def _link_output(output: dict[str, Any], trace: Sequence[object]) -> dict[str, object]:
    """Return ``output`` whose steps equal to their trace entry are ``{"$trace": i}``."""
    steps = output["reasoning"]["steps"]
    linked = [
        {TRACE_REF: i}
        if i < len(trace) and isinstance(t := trace[i], ReasoningStep) and _trace_step(t) == s
        else s
        for i, s in enumerate(steps)
    ]
    return {**output, "reasoning": {**output["reasoning"], "steps": linked}}


def is_linked(step: object) -> bool:
    """Return whether ``step`` is a trace step :func:`link_step` linked to its ToolMessage."""
    return isinstance(step, dict) and OBSERVATION_FROM in step


def _resolve(values: dict[str, object]) -> None:
    """Undo :func:`_linked` in decoded channel values, in place."""
    trace = values.get("trace")
    if isinstance(trace, _DeltaSnapshot) and any(
        isinstance(s, dict) and OBSERVATION_FROM in s for s in trace.value
    ):
        messages = values.get("messages")
        answers = tool_answers(messages.value if isinstance(messages, _DeltaSnapshot) else [])
        values["trace"] = _DeltaSnapshot([unlink_step(s, answers) for s in trace.value])
    output = values.get("output")
    contract = _unsnapped(output)
    if is_output_contract(contract) and any(
        isinstance(s, dict) and TRACE_REF in s for s in contract["reasoning"]["steps"]
    ):
        trace = values.get("trace")
        steps = trace.value if isinstance(trace, _DeltaSnapshot) else []
        rebuilt = [
            _trace_step(steps[s[TRACE_REF]]) if isinstance(s, dict) and TRACE_REF in s else s
            for s in contract["reasoning"]["steps"]
        ]
        whole = {**contract, "reasoning": {**contract["reasoning"], "steps": rebuilt}}
        values["output"] = _DeltaSnapshot(whole) if contract is not output else whole


def unlink_step(step: object, answers: Mapping[str, str]) -> object:
    """Return a step :func:`link_step` linked as a ReasoningStep, its observation put back."""
    if not isinstance(step, dict) or OBSERVATION_FROM not in step:
        return step
    fields = {k: v for k, v in step.items() if k != OBSERVATION_FROM}
    fields["observation"] = answers[fields["call_id"]]
    return ReasoningStep(**fields)


def deflate(data: bytes) -> tuple[str, bytes]:
    """Return ``("msgpack", data)``, or its compressed form when that is worth it."""
    if len(data) >= COMPRESS_MIN:
        packed = zlib.compress(data, COMPRESS_LEVEL)
        if len(packed) * 10 <= len(data) * 9:
            return COMPRESSED, packed
    return "msgpack", data


def inflate(blob: bytes) -> bytes:
    """Return the msgpack bytes of a :data:`COMPRESSED` blob.

    Raises:
        ValueError: the blob inflates past :data:`INFLATE_MAX` or is cut short.
        zlib.error: the blob is not zlib data.
    """
    inflater = zlib.decompressobj()
    data = inflater.decompress(blob, INFLATE_MAX)
    if inflater.unconsumed_tail or not inflater.eof:
        raise InvalidValue(f"compressed checkpoint value is cut short or over {INFLATE_MAX} B")
    return data


class CompactSerializer(JsonPlusSerializer):
    """A :class:`JsonPlusSerializer` that reads every format noema wrote, stock or compact.

    It writes LangGraph's plain msgpack (what a stock saver reads) unless ``compact``: then a
    tool result is stored once per trace entry and, with ``compress``, large values are
    zlib-compressed (see the module docstring). Compact values are self-describing: every
    serializer of this class reads them, whatever its settings.
    """

    def __init__(self, *, compact: bool = False, compress: bool = False, **kwargs: Any) -> None:
        """Take JsonPlusSerializer's keywords; ``compact`` and ``compress`` as above."""
        super().__init__(**kwargs)
        self.compact = compact or compress
        self.compress = compress

    def dumps_typed(self, obj: object) -> tuple[str, bytes]:
        """Encode ``obj`` (msgpack, as LangGraph; see the class docstring)."""
        if obj is None or isinstance(obj, bytes | bytearray):
            return super().dumps_typed(obj)
        try:
            data = _encode(_wrap(obj) if self.compact else obj)
        except ormsgpack.MsgpackEncodeError:
            return super().dumps_typed(obj)  # its fallback (pickle if enabled) or its error
        return deflate(data) if self.compress else ("msgpack", data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Decode ``data``; a checkpoint's linked snapshots are resolved (see :func:`_linked`)."""
        if data[0] == COMPRESSED:
            data = ("msgpack", inflate(data[1]))
        value = super().loads_typed(data)
        if isinstance(value, dict) and isinstance(values := value.get("channel_values"), dict):
            _resolve(cast(dict[str, object], values))
        return value


# LangChain message classes a checkpoint may hold (besides LangGraph's built-in safe types).
MESSAGE_TYPES: tuple[tuple[str, ...], ...] = tuple(
    ("langchain_core.messages." + module, name)
    for module, name in (
        ("human", "HumanMessage"),
        ("ai", "AIMessage"),
        ("ai", "AIMessageChunk"),
        ("system", "SystemMessage"),
        ("tool", "ToolMessage"),
        ("tool", "ToolMessageChunk"),
    )
)


STORED_ALIASES: tuple[tuple[str, str], ...] = (("noema_graph.compact_serde", "expand_output"),)
"""Other module paths under which stored files name allow-listed functions
(``noema_graph.compact_serde.expand_output``); each stays importable."""


def allowed_types() -> list[tuple[str, ...]]:
    """Return the classes a noema checkpoint may revive, as LangGraph's allow-list takes them.

    Pass them to a stock saver's serializer under ``LANGGRAPH_STRICT_MSGPACK=true``:
    ``SqliteSaver(conn, serde=JsonPlusSerializer(allowed_msgpack_modules=allowed_types()))``
    (a compiled graph also derives most of them from its state schema).
    """
    return [
        *MESSAGE_TYPES,
        ("langgraph.checkpoint.serde.types", "_DeltaSnapshot"),
        (expand_output.__module__, expand_output.__name__),
        *STORED_ALIASES,
        *((m.__module__, m.__name__) for m in STATE_MODELS),
    ]


def serializer(*, compact: bool = False, compress: bool = False) -> JsonPlusSerializer:
    """Return a serializer that revives only allow-listed classes (no pickle).

    It reads every file noema wrote, stock or compact, and writes LangGraph's plain msgpack
    unless ``compact`` (a tool result stored once per trace entry) or ``compress`` (compact,
    and large values zlib-compressed): see :class:`CompactSerializer`. Give it to LangGraph's
    own saver to read a compact file: ``SqliteSaver(conn, serde=serializer())``.
    """
    return CompactSerializer(
        compact=compact,
        compress=compress,
        pickle_fallback=False,
        allowed_msgpack_modules=allowed_types(),
    )
