"""Items by unique name: the base of the tool and agent registries."""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from noema_graph.errors import ConfigurationError

T = TypeVar("T")


class Registry(Generic[T]):
    """Items by unique name, in registration order.

    A taken name or an unknown one raises :class:`ConfigurationError` naming ``noun``
    (set by each subclass) and the fix.
    """

    noun: ClassVar[str] = "item"

    def __init__(self) -> None:
        """Create an empty registry."""
        self._items: dict[str, T] = {}

    def names(self) -> tuple[str, ...]:
        """Return the registered names in registration order."""
        return tuple(self._items)

    def _add(self, name: str, item: T) -> None:
        if name in self._items:
            raise ConfigurationError(
                f"{self.noun}s",
                f"a {self.noun} named {name!r} is already registered",
                fix="choose another name or unregister the old one first",
            )
        self._items[name] = item

    def _item(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise ConfigurationError(
                f"{self.noun}s",
                f"no {self.noun} named {name!r}",
                fix=f"use one of {sorted(self._items)}",
            ) from None

    def _pop(self, name: str) -> T:
        item = self._item(name)
        del self._items[name]
        return item

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)
