"""How memory entries sit in a LangGraph ``BaseStore``: namespaces and stored values.

Namespaces: ``("memory", "working", thread_id)`` and
``("memory", "persistent", user_id, agent)``. A Store label may not contain ``.``, so labels are
percent-encoded (``alice@example.com`` becomes ``alice@example%2Ecom``).

A stored value is the entry's fields as JSON plus, when the manager embeds in Python,
``vector`` and ``vector_model`` (the embedder's name, so a vector from another model is
never compared with this one's).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import quote

from langgraph.store.base import Item

from noema_graph.errors import ConfigurationError
from noema_graph.memory.models import MemoryEntry, Tier

ROOT = "memory"


def encode_label(field: str, label: str) -> str:
    """Return ``label`` made safe for a Store namespace, or raise for an empty one."""
    if not label:
        raise ConfigurationError(field, "must not be empty", fix=f"pass a non-empty {field}")
    return quote(label, safe="@:+-_ ~").replace(".", "%2E")


def working_namespace(thread_id: str) -> tuple[str, ...]:
    """Return the namespace of the working memory of ``thread_id``."""
    return (ROOT, "working", encode_label("thread_id", thread_id))


def persistent_namespace(user_id: str, agent: str) -> tuple[str, ...]:
    """Return the namespace of the persistent memory of ``user_id`` with ``agent``."""
    return (ROOT, "persistent", encode_label("user_id", user_id), encode_label("agent", agent))


class Record(NamedTuple):
    """An entry read back from the Store, with its stored vector if any."""

    entry: MemoryEntry
    vector: Sequence[float] | None
    vector_model: str | None
    namespace: tuple[str, ...]
    score: float | None = None


def to_value(
    entry: MemoryEntry, vector: Sequence[float] | None = None, vector_model: str | None = None
) -> dict[str, Any]:
    """Return the JSON value stored for ``entry`` (the key is the Store item's key)."""
    value = entry.model_dump(mode="json", exclude={"key"})
    if vector is not None:
        value["vector"] = [float(x) for x in vector]
        value["vector_model"] = vector_model
    return value


def from_item(item: Item, tier: Tier) -> Record | None:
    """Return the record stored in ``item``, or None if it is not a memory entry."""
    value = item.value
    text = value.get("value")
    if not isinstance(text, str):
        return None
    entry = MemoryEntry(
        key=item.key,
        value=text,
        content_type=str(value.get("content_type") or "text"),
        tier=tier,
        created_at=value.get("created_at") or item.created_at,
        expires_at=value.get("expires_at"),
    )
    vector = value.get("vector")
    model = value.get("vector_model")
    return Record(
        entry=entry,
        vector=vector if isinstance(vector, list) else None,
        vector_model=model if isinstance(model, str) else None,
        namespace=tuple(item.namespace),
        score=getattr(item, "score", None),
    )


def live(records: Sequence[Record], at: datetime) -> list[Record]:
    """Return the records that have not expired at ``at``."""
    return [r for r in records if not r.entry.expired(at)]
