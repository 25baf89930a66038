"""Named, pure reducers for graph state channels.

The list channels are stored as :class:`~langgraph.channels.delta.DeltaChannel`, so each
checkpoint holds only the new entries and the size of a thread grows linearly with its
iterations. DeltaChannel hands a reducer a *batch* of writes and requires that applying two
batches one after the other equals applying their concatenation; every batch reducer below
folds its writes one by one, which gives exactly that.

State that went through JSON (a LangGraph server's API, ``update_state`` from a client)
arrives as plain dicts; each reducer validates both its current value and its writes back
into the state models (:func:`coerce`), so a reducer never sees a dict where it expects a
model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import cache, partial
from operator import attrgetter
from typing import Any, TypeVar, cast, get_type_hints

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    BaseMessageChunk,
    RemoveMessage,
    convert_to_messages,
)
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite
from pydantic import BaseModel

from noema_graph.state.models import ReasoningStep, ToolTime, Usage

ModelT = TypeVar("ModelT", bound=BaseModel)
ItemT = TypeVar("ItemT")
T = TypeVar("T")
AccT = TypeVar("AccT")
StateT = TypeVar("StateT", bound=Mapping[str, object])


def coerce(model: type[ModelT], value: ModelT | Mapping[str, object]) -> ModelT:
    """Return ``value`` as a ``model``: itself if it is one, else validated from its dict.

    Raises:
        pydantic.ValidationError: The dict does not describe a ``model``.
    """
    return value if isinstance(value, model) else model.model_validate(value)


_ID = attrgetter("id")


def all_instances(values: Sequence[object], cls: type[object]) -> bool:
    """Return whether every item of ``values`` is a ``cls``.

    Checks each distinct type once (``isinstance`` on a pydantic model goes through
    ``ABCMeta`` for every item): reducers may read a whole history several times per step.
    """
    return all(issubclass(kind, cls) for kind in set(map(type, values)))


def _with_stable_ids(position: int, write: Any) -> list[BaseMessage]:
    """Convert a write to messages and give id-less ones an id derived from their content.

    ``add_messages`` would assign a random id, and a delta channel re-applies writes every
    time a checkpoint is loaded: random ids would change from one load to the next.
    """
    items = write if isinstance(write, list | tuple) and not _is_tuple_message(write) else [write]
    messages = convert_to_messages(items)
    stable: list[BaseMessage] = []
    for offset, message in enumerate(messages):
        if message.id is None:
            digest = hashlib.sha256(
                f"{position + offset}:{message.type}:{message.content!r}".encode()
            ).hexdigest()[:16]
            stable.append(message.model_copy(update={"id": f"m-{digest}"}))
        else:
            stable.append(message)
    return stable


def _is_tuple_message(write: object) -> bool:
    return isinstance(write, tuple) and len(write) == 2 and isinstance(write[0], str)


class History(list[Any]):
    """A list a reducer returned: its items were checked, and for messages their ids are known.

    The next fold into it trusts both instead of re-reading the whole history (reducers run
    several times per step: LangGraph re-applies a node's writes to a copy of each channel
    whenever it routes). ``size`` is the length the check covered, so a list grown or shrunk
    in place since is checked again from scratch. ``copy.copy`` (how LangGraph copies a
    channel) keeps what is known.
    """

    __slots__ = ("folds", "ids", "size")

    def __init__(
        self,
        items: Iterable[object] = (),
        ids: set[str | None] | None = None,
        folds: dict[Hashable, list[Fold]] | None = None,
    ) -> None:
        """Hold ``items``; ``ids`` are their message ids (None: not message ids).

        ``folds``: snapshots of running folds over the items (:func:`fold_items`), shared
        with the history this one grew from.
        """
        super().__init__(items)
        self.folds: dict[Hashable, list[Fold]] = {} if folds is None else folds
        self.seal(ids)

    def __copy__(self) -> History:
        return History(self, self.ids, self.folds)

    def __reduce__(self) -> tuple[type[History], tuple[list[object], set[str | None] | None]]:
        """Pickle (any protocol) and deep-copy as the items and their ids."""
        return History, (list(self), self.ids)

    def checked(self) -> bool:
        """Whether the items are still those the reducer checked (none added or removed)."""
        return self.size == len(self)

    def seal(self, ids: set[str | None] | None = None) -> History:
        """Record the items as checked (and their message ``ids``); return this history."""
        self.ids, self.size = ids, len(self)
        return self


Fold = tuple[int, object, object]
"""A snapshot of a running fold: (items folded, the last of them, the accumulated value)."""
FOLD_SNAPSHOTS = 4
"""Snapshots kept per fold: LangGraph folds a node's writes into copies of a channel, so a
few histories grown from the same one are read side by side."""


def fold_items(
    items: Sequence[ItemT],
    key: Hashable,
    start: Callable[[], AccT],
    add: Callable[[AccT, ItemT], None],
    copy: Callable[[AccT], AccT],
) -> AccT:
    """Return ``start()`` with ``add`` applied to each item, resuming where it last stopped.

    Routers read facts of the whole trace at every group of tool calls (the ids seen, the
    calls that failed); recomputing them from every earlier tool result made a run's
    framework cost quadratic in its iterations. On a :class:`History` the fold resumes from
    the longest snapshot of a prefix of ``items`` (same length, the same or an equal last
    item: :func:`_same`), so each item is added once however often it is read: linear.
    ``add`` updates the accumulator in place; a snapshot's accumulator is never changed (it
    is ``copy``-ed before it grows), so the value returned must be treated as read-only. On
    any other sequence it is a plain fold.
    """
    memo = items.folds if isinstance(items, History) else None
    done, base = 0, None
    for count, last, value in memo.get(key, ()) if memo is not None else ():
        if done < count <= len(items) and _same(items[count - 1], last):
            done, base = count, cast(AccT, value)  # the fold's key names its accumulator
    if base is not None and done == len(items):
        return base
    value = copy(base) if base is not None else start()
    for index in range(done, len(items)):
        add(value, items[index])
    if memo is not None and items:
        kept = memo.get(key, [])[-(FOLD_SNAPSHOTS - 1) :]
        memo[key] = [*kept, (len(items), items[-1], value)]
    return value


def _same(item: object, last: object) -> bool:
    """Whether ``item`` is the item a snapshot ended with: the same object, or an equal one.

    LangGraph applies a node's writes to the channel and again to each copy it routes on;
    the trace reducer numbers each application's steps into new (equal) objects, so a
    snapshot taken on a copy ends with an equal step, not the same one.
    """
    return item is last or (type(item) is type(last) and item == last)


def _checked(values: Sequence[object] | None) -> History | None:
    return values if isinstance(values, History) and values.checked() else None


def merge_messages(
    current: Sequence[AnyMessage | dict[str, object]] | None, writes: Sequence[object]
) -> History:
    """Fold each write into the history with ``add_messages`` (append, or replace by id).

    Folding one write at a time keeps the reducer batching-invariant, as DeltaChannel needs;
    id-less messages get content-derived ids so that replaying the writes is deterministic.
    Messages given as dicts (``{"type": "human", ...}`` or ``{"role": "user", ...}``) are
    converted, in the history as in the writes. A write of new messages only (the common
    case: nothing replaced or removed) is appended without ``add_messages``' copy of the
    whole history; the result is the same. A history this reducer returned (a
    :class:`History`) is not checked again.
    """
    trusted = _checked(current)
    # while writes only append, the history keeps the fold snapshots of the one it grew from
    merged = (
        History(trusted, folds=trusted.folds) if trusted is not None else History(current or [])
    )
    known: set[str | None] | None = None  # ids in merged, kept while writes only append
    if trusted is not None and trusted.ids is not None:
        known = set(trusted.ids)
    elif not all_instances(merged, BaseMessage):
        merged = History(convert_to_messages(merged))
    for write in writes:
        new = _with_stable_ids(len(merged), write)
        if known is None:
            known = set(map(_ID, merged))
        if _appends_only(known, new):
            merged.extend(new)
            known.update(m.id for m in new)
        else:
            merged = History(add_messages(merged, new))  # pyright: ignore[reportArgumentType]  # any messages work
            known = None
    return merged.seal(known if known is not None else set(map(_ID, merged)))


def _appends_only(known: set[str | None], new: Sequence[BaseMessage]) -> bool:
    """Whether ``add_messages`` would just append ``new`` to a history of ``known`` ids.

    The ids are kept across the writes of one fold: replaying a thread's writes stays linear
    in their number instead of re-reading the history at each write.
    """
    ids = [m.id for m in new]
    if len(set(ids)) != len(ids):
        return False  # a later message of the write replaces an earlier one
    if any(isinstance(m, RemoveMessage | BaseMessageChunk) for m in new):
        return False  # removals and chunks (converted by add_messages) take the long way
    return known.isdisjoint(ids)


def append_steps(
    current: Sequence[ReasoningStep | Mapping[str, object]] | None,
    writes: Sequence[Sequence[ReasoningStep | Mapping[str, object]]],
) -> History:
    """Append trace entries and number them by their position in the trace.

    Parallel tool tasks write their steps in the same superstep without knowing each other,
    so the step number is assigned here, where the order is final. Entries that arrive as
    plain dicts (state that went through JSON, e.g. a LangGraph server) are validated back,
    in the trace so far as in the writes. The new trace shares the snapshots of
    :func:`fold_items` with the trace it grew from, so a fold over it resumes.
    """
    trusted = _checked(current)
    merged = (
        History(trusted, folds=trusted.folds)
        if trusted is not None
        else History(coerce_all(ReasoningStep, current or []))
    )
    for write in writes:
        for entry in write:
            step = coerce(ReasoningStep, entry)
            merged.append(step.model_copy(update={"step": len(merged) + 1}))
    return merged.seal()


def coerce_all(
    model: type[ModelT], values: Sequence[ModelT | Mapping[str, object]]
) -> list[ModelT]:
    """Return a new list of ``values`` as ``model`` instances (one pass when they all are)."""
    if all_instances(values, model):
        return cast(list[ModelT], list(values))  # checked just above
    return [coerce(model, value) for value in values]


def add_usage(
    current: Usage | Mapping[str, object] | None, update: Usage | Mapping[str, object] | None
) -> Usage:
    """Sum token usage and cost; an unknown cost (None) stays unknown for the whole run.

    Either side may be a dict (state that went through JSON).
    """
    base = coerce(Usage, current) if current is not None else Usage()
    return base if update is None else base + coerce(Usage, update)


def add_seconds(current: float | None, update: float | None) -> float:
    """Sum elapsed seconds reported by nodes."""
    return (current or 0.0) + (update or 0.0)


def last_write(current: T, writes: Sequence[T]) -> T:
    """Batch reducer of a value channel: the newest write wins (batching-invariant)."""
    return writes[-1] if writes else current


def latest(current: T | None, update: T | None) -> T | None:
    """Keep the newest write.

    Unlike a plain channel, several writes in one superstep are allowed (the concurrent
    ``tool_node`` tasks each report an outcome): the last one applied wins.
    """
    return update if update is not None else current


def add_tool_time(
    current: ToolTime | Mapping[str, object] | None,
    update: ToolTime | Mapping[str, object] | None,
) -> ToolTime:
    """Add a tool call's time; calls of one concurrent group count their slowest call once.

    The writes of one group may arrive in any order: the total grows by the new call's time
    only where it exceeds the slowest call of the group seen so far, so any order gives
    ``sum over groups of max(call time)``. Either side may be a dict (state through JSON).
    """
    base = coerce(ToolTime, current) if current is not None else ToolTime()
    if update is None:
        return base
    update = coerce(ToolTime, update)
    if update.group == base.group and base.group:
        longer = max(update.group_max - base.group_max, 0.0)
        return ToolTime(
            group=base.group,
            group_max=max(base.group_max, update.group_max),
            total=base.total + longer,
        )
    return ToolTime(
        group=update.group, group_max=update.group_max, total=base.total + update.group_max
    )


Reducer = Callable[[object, object], object]


@cache
def reducers_of(schema: type[object]) -> dict[str, Reducer]:
    """Return each reduced channel of a state ``schema`` with a one-write reducer.

    Read from the schema's ``Annotated`` metadata, as LangGraph reads it: a
    :class:`DeltaChannel` folds a batch of writes, a plain callable merges one write.
    """
    reducers: dict[str, Reducer] = {}
    for key, hint in get_type_hints(schema, include_extras=True).items():
        for meta in getattr(hint, "__metadata__", ()):
            if isinstance(meta, DeltaChannel):
                reducers[key] = partial(_fold, meta.reducer)
            elif isinstance(meta, BinaryOperatorAggregate):
                reducers[key] = meta.operator
            elif callable(meta) and not isinstance(meta, type):
                reducers[key] = meta
    return reducers


def _fold(
    reducer: Callable[[list[object], list[object]], object], current: object, write: object
) -> object:
    items = cast(Iterable[object], current or [])  # a delta channel holds a list
    return reducer(list(items), [write])


def apply_update(schema: type[StateT], state: StateT, update: Mapping[str, object]) -> StateT:
    """Return ``state`` after ``update``, each channel merged by its own reducer.

    Lets a node see the state its update will produce (finalize builds the output contract
    from it) without re-implementing any reducer.
    """
    reducers = reducers_of(schema)
    merged: dict[str, object] = dict(state)
    for key, value in update.items():
        if isinstance(value, Overwrite):
            merged[key] = value.value
        elif key in reducers:
            merged[key] = reducers[key](merged.get(key), value)
        else:
            merged[key] = value
    return cast(StateT, merged)  # each channel holds what its reducer (or a write) makes
