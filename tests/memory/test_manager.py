"""MemoryManager over real SQLite Store files: tiers, recall, forget, list, TTL and retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from noema_graph.clock import ManualClock
from noema_graph.errors import ConfigurationError
from noema_graph.memory import MemoryEntry, MemoryManager
from noema_graph.memory.models import now_utc
from tests.memory.conftest import HashEmbeddings


def manager(store: SqliteStore | AsyncSqliteStore | InMemoryStore, **kw: object) -> MemoryManager:
    args: dict[str, object] = {
        "user_id": "alice@example.com",
        "agent": "helper",
        "thread_id": "t-1",
    }
    return MemoryManager(store, **(args | kw))  # type: ignore[arg-type]


def test_store_and_recall_by_keyword_across_tiers(store: SqliteStore) -> None:
    m = manager(store)
    m.store("diet", "Alice is vegetarian", "fact", "persistent")
    m.store("obs", "The build failed on the vegetarian recipe page", "observation", "working")
    m.store("other", "Deploys happen on Tuesday", "fact", "persistent")

    hits = m.recall("vegetarian food", limit=5)
    assert {h.entry.key for h in hits} == {"diet", "obs"}
    assert hits[0].score >= hits[1].score > 0
    assert [h.entry.key for h in m.recall("vegetarian", scope="persistent")] == ["diet"]
    assert [h.entry.key for h in m.recall("vegetarian", scope="working")] == ["obs"]
    assert m.recall("vegetarian", limit=1)[0].entry.tier in ("working", "persistent")


def test_namespaces_isolate_threads_users_and_agents(store: SqliteStore) -> None:
    manager(store).store("k", "shared secret word", "fact", "persistent")
    manager(store).store("w", "thread word", "fact", "working")
    assert manager(store, thread_id="t-2").recall("word", scope="working") == []
    assert [h.entry.key for h in manager(store, thread_id="t-2").recall("word")] == ["k"]
    assert manager(store, user_id="bob").recall("word", scope="persistent") == []
    assert manager(store, agent="other").recall("word", scope="persistent") == []
    assert manager(store).namespace("persistent") == (
        "memory",
        "persistent",
        "alice@example%2Ecom",
        "helper",
    )


def test_working_tier_needs_a_thread(store: SqliteStore) -> None:
    m = manager(store, thread_id=None)
    with pytest.raises(ConfigurationError, match="thread_id"):
        m.store("k", "v", "fact", "working")
    m.store("k", "a persistent value", "fact", "persistent")
    assert [h.entry.key for h in m.recall("persistent value")] == ["k"]


def test_forget_and_list(store: SqliteStore) -> None:
    m = manager(store)
    m.store("a", "first", "fact", "persistent")
    m.store("b", "second", "fact", "persistent")
    assert [e.key for e in m.list("persistent")] == ["b", "a"]
    assert m.list(m.namespace("persistent")) == m.list("persistent")
    assert m.forget("a", "persistent") is True
    assert m.forget("a", "persistent") is False
    assert [e.key for e in m.list("persistent")] == ["b"]
    assert m.recall("first") == []
    with pytest.raises(ConfigurationError, match="not a memory namespace"):
        m.list(("other", "ns"))


def test_ttl_hides_then_prune_deletes(store: SqliteStore, manual_clock: ManualClock) -> None:
    m = manager(store)
    entry = m.store("tmp", "short lived note", "fact", "working", ttl_s=60)
    m.store("keep", "long lived note", "fact", "working")
    assert entry.expires_at == manual_clock.now() + timedelta(seconds=60)
    manual_clock.advance(59)
    assert {h.entry.key for h in m.recall("note")} == {"tmp", "keep"}
    assert m.prune() == 0
    manual_clock.advance(1)  # expiry is inclusive: at expires_at the entry is gone
    assert [h.entry.key for h in m.recall("note")] == ["keep"]
    assert [e.key for e in m.list("working")] == ["keep"]
    assert len(m.list("working", include_expired=True)) == 2
    assert m.prune() == 1
    assert [e.key for e in m.list("working", include_expired=True)] == ["keep"]
    with pytest.raises(ConfigurationError, match="ttl_s"):
        m.store("bad", "x", tier="working", ttl_s=0)


def test_prune_older_than_and_keep_last(store: SqliteStore) -> None:
    m = manager(store)
    now = now_utc()
    m.store_entries(
        [
            MemoryEntry(
                key=f"k{i}",
                value=f"note {i}",
                tier="persistent",
                created_at=now - timedelta(days=i),
            )
            for i in range(6)
        ]
    )
    assert m.prune(older_than_s=3.5 * 86400, tier="persistent") == 2  # k4, k5
    assert m.prune(keep_last=2) == 2  # k2, k3
    assert [e.key for e in m.list("persistent")] == ["k0", "k1"]


def test_semantic_recall_with_python_vectors(store: SqliteStore) -> None:
    embedder = HashEmbeddings()
    m = manager(store, embedder=embedder)
    m.store("diet", "Alice is vegetarian", "fact", "persistent")
    m.store("deploy", "Deploys happen on Tuesday", "fact", "persistent")
    item = store.get(m.namespace("persistent"), "diet")
    assert item is not None
    assert item.value["vector_model"] == "test/hash-bow"
    assert len(item.value["vector"]) == 64

    calls = embedder.calls
    hits = m.recall("vegetarian", limit=2)
    assert [h.entry.key for h in hits] == ["diet", "deploy"]
    assert hits[0].score > hits[1].score
    assert embedder.calls == calls + 1  # only the query: stored vectors are reused


def test_vectors_of_another_model_are_recomputed(store: SqliteStore) -> None:
    manager(store).store("diet", "Alice is vegetarian", "fact", "persistent")  # no vector
    embedder = HashEmbeddings()
    hits = manager(store, embedder=embedder).recall("vegetarian")
    assert hits[0].entry.key == "diet"
    assert embedder.calls == 2  # the entry (on the fly, not written back) and the query


def test_store_native_vector_index_is_used() -> None:
    embedder = HashEmbeddings(dims=32)
    store = InMemoryStore(index={"dims": 32, "embed": embedder, "fields": ["value"]})
    m = manager(store)
    assert m.native_index
    m.store("diet", "Alice is vegetarian", "fact", "persistent")
    m.store("deploy", "Deploys happen on Tuesday", "fact", "working")
    assert "vector" not in (store.get(m.namespace("persistent"), "diet") or {}).value  # type: ignore[union-attr]
    hits = m.recall("tuesday deploys", limit=1)
    assert [h.entry.key for h in hits] == ["deploy"]
    assert hits[0].score > 0.5


async def test_async_twins(astore: AsyncSqliteStore) -> None:
    m = manager(astore, embedder=HashEmbeddings())
    await m.astore("diet", "Alice is vegetarian", "fact", "persistent")
    await m.astore("tmp", "vegetarian soup tonight", "fact", "working", ttl_s=3600)
    hits = await m.arecall("vegetarian", limit=5)
    assert {h.entry.key for h in hits} == {"diet", "tmp"}
    assert [e.key for e in await m.alist("working")] == ["tmp"]
    assert await m.aforget("tmp", "working") is True
    assert await m.aforget("tmp", "working") is False
    assert await m.aprune(keep_last=0, tier="persistent") == 1
    assert await m.arecall("vegetarian") == []
