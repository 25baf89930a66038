"""LangGraph channels for the state schemas, with copies that cost no more than they must.

LangGraph copies every channel of the graph each time a conditional edge routes (the
router reads the state as the node's writes leave it), twice per agent iteration. Its
``BinaryOperatorAggregate`` builds each copy through its constructor, which makes an empty
value with ``typ()`` (a pydantic validation for ``Usage``, a raised and caught exception
for an optional type) only to overwrite it; its ``DeltaChannel`` copies the whole value
(the history) although noema's reducers never change the value they are given. These
subclasses copy the fields and share the value; they store, reduce and checkpoint exactly
as their bases do.
"""

from __future__ import annotations

from typing import Any, Self

from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.delta import DeltaChannel


class Folded(BinaryOperatorAggregate[Any]):
    """A reducer channel (``operator(current, write)``) whose copies skip the constructor."""

    __slots__ = ()

    def copy(self) -> Self:
        """Return a copy sharing the value (reducers return new values, never mutate)."""
        new = object.__new__(type(self))
        new.typ, new.key, new.operator, new.value = self.typ, self.key, self.operator, self.value
        return new


class Delta(DeltaChannel[Any]):
    """A delta channel whose copies share the value: noema's batch reducers never mutate it.

    Its ``reducer`` must return a new value for every batch (as :mod:`noema_graph.state.reducers`
    does), so a copy that shares the value cannot be changed through the original.
    """

    __slots__ = ()

    def copy(self) -> Self:
        """Return a copy sharing the value."""
        new = object.__new__(type(self))
        new.typ, new.key, new.reducer = self.typ, self.key, self.reducer
        new.snapshot_frequency, new.value = self.snapshot_frequency, self.value
        return new
