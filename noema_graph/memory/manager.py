"""``MemoryManager``: working and persistent memory over a LangGraph ``BaseStore``.

Recall is semantic when the manager has an embedder (or the Store has its own vector index)
and keyword-based (BM25, see :mod:`noema_graph.memory.keyword`) otherwise. Every read passes
``refresh_ttl=False``, so recall writes nothing, not even an access time.

With a Store that has its own vector index (``index=`` given; ``SqliteStore`` needs a Python
whose ``sqlite3`` can load the sqlite-vec extension), the Store embeds on ``put`` and ranks on
``search``. Otherwise the manager embeds in Python, keeps the vector inside the stored value and
ranks by cosine itself.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Item, PutOp, SearchItem

from noema_graph.effects import Effect, Steps, awaiting, blocking, io
from noema_graph.errors import ConfigurationError
from noema_graph.memory import ranking
from noema_graph.memory.models import TIERS, MemoryEntry, MemoryHit, Scope, Tier, now_utc
from noema_graph.memory.records import (
    ROOT,
    Record,
    from_item,
    live,
    persistent_namespace,
    to_value,
    working_namespace,
)

logger = logging.getLogger(__name__)

PAGE_SIZE = 500
# An embedder that cannot load or run degrades recall to keywords instead of failing it.
EMBEDDER_ERRORS: tuple[type[Exception], ...] = (ImportError, OSError, RuntimeError)


class MemoryManager:
    """Store, recall, forget and prune the memories of one user, agent and thread.

    Args:
        store: Any LangGraph ``BaseStore`` (``SqliteStore`` on the checkpoint file, say).
        user_id: Whose persistent memory this is.
        agent: Which agent's persistent memory this is.
        thread_id: The conversation whose working memory this is; None disables that tier.
        embedder: LangChain ``Embeddings`` for semantic recall; None recalls by keyword
            (unless the Store has its own vector index).
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        user_id: str,
        agent: str,
        thread_id: str | None = None,
        embedder: Embeddings | None = None,
    ) -> None:
        self.store_backend, self.embedder = store, embedder
        self.user_id, self.agent, self.thread_id = user_id, agent, thread_id
        self._persistent = persistent_namespace(user_id, agent)
        self._working = working_namespace(thread_id) if thread_id is not None else None

    # -- namespaces and values ------------------------------------------------------------

    @property
    def native_index(self) -> bool:
        """Whether the Store embeds and ranks by itself (it was built with ``index=``)."""
        return bool(getattr(self.store_backend, "index_config", None))

    @property
    def embedder_name(self) -> str | None:
        """The name stored beside each vector, so vectors of different models never mix."""
        if self.embedder is None:
            return None
        return str(getattr(self.embedder, "name", type(self.embedder).__name__))

    def namespace(self, tier: Tier) -> tuple[str, ...]:
        """Return the Store namespace of ``tier`` for this user, agent and thread."""
        if tier == "persistent":
            return self._persistent
        if tier == "working" and self._working is not None:
            return self._working
        if tier == "working":
            raise ConfigurationError(
                "thread_id", "working memory needs a thread", fix="pass thread_id= to MemoryManager"
            )
        raise ConfigurationError("tier", f"unknown tier {tier!r}", fix=f"use one of {TIERS}")

    def _targets(self, scope: Scope) -> builtins.list[tuple[Tier, tuple[str, ...]]]:
        if scope not in ("all", *TIERS):
            raise ConfigurationError(
                "scope", f"unknown scope {scope!r}", fix="use 'all', 'working' or 'persistent'"
            )
        tiers: tuple[Tier, ...] = TIERS if scope == "all" else (scope,)
        return [(t, self.namespace(t)) for t in tiers if t == "persistent" or self._working]

    def _resolve(self, where: Tier | tuple[str, ...]) -> tuple[Tier, tuple[str, ...]]:
        if isinstance(where, str):
            return where, self.namespace(where)
        if len(where) < 3 or where[0] != ROOT or where[1] not in TIERS:
            raise ConfigurationError(
                "namespace",
                f"{where!r} is not a memory namespace",
                fix="pass 'working', 'persistent' or manager.namespace(tier)",
            )
        tier: Tier = "working" if where[1] == "working" else "persistent"
        return tier, tuple(where)

    @staticmethod
    def _entry(
        key: str, value: str, content_type: str, tier: Tier, ttl_s: float | None
    ) -> MemoryEntry:
        if ttl_s is not None and ttl_s <= 0:
            raise ConfigurationError(
                "ttl_s", f"{ttl_s!r} is not positive", fix="pass a number of seconds > 0, or None"
            )
        entry = MemoryEntry(key=key, value=value, content_type=content_type, tier=tier)
        if ttl_s is None:
            return entry
        return entry.model_copy(update={"expires_at": entry.created_at + timedelta(seconds=ttl_s)})

    def _put_op(self, entry: MemoryEntry, vector: Sequence[float] | None) -> PutOp:
        ttl_min = None
        if entry.expires_at is not None and self.store_backend.supports_ttl:
            ttl_min = (entry.expires_at - entry.created_at).total_seconds() / 60
        return PutOp(
            self.namespace(entry.tier),
            entry.key,
            to_value(entry, vector, self.embedder_name),
            index=["value"] if self.native_index else False,
            ttl=ttl_min,
        )

    def _needs_vectors(self) -> bool:
        return self.embedder is not None and not self.native_index

    @staticmethod
    def _records(items: Sequence[Item], tier: Tier, ns: tuple[str, ...]) -> list[Record]:
        found = (from_item(item, tier) for item in items)
        return [r for r in found if r is not None and r.namespace == ns]

    @staticmethod
    def _doomed(
        records: Sequence[Record], at: datetime, older_than_s: float | None, keep_last: int | None
    ) -> builtins.list[Record]:
        cutoff = at - timedelta(seconds=older_than_s) if older_than_s is not None else None
        newest = sorted(records, key=lambda r: r.entry.created_at, reverse=True)
        doomed: builtins.list[Record] = []
        for rank, record in enumerate(newest):
            entry = record.entry
            if (
                entry.expired(at)
                or (cutoff is not None and entry.created_at < cutoff)
                or (keep_last is not None and rank >= keep_last)
            ):
                doomed.append(record)
        return doomed

    def _missing(self, records: Sequence[Record]) -> builtins.list[int]:
        return [
            i
            for i, r in enumerate(records)
            if r.vector is None or r.vector_model != self.embedder_name
        ]

    @staticmethod
    def _merge(
        records: Sequence[Record], missing: Sequence[int], fresh: Sequence[Sequence[float]]
    ) -> builtins.list[Sequence[float]]:
        vectors: builtins.list[Sequence[float]] = [r.vector or [] for r in records]
        for i, vector in zip(missing, fresh, strict=True):
            vectors[i] = vector
        return vectors

    # -- I/O, each written once: ``name = blocking(_name)``, ``aname = awaiting(_name)`` --

    def _embed(self, texts: Sequence[str]) -> Effect[builtins.list[builtins.list[float]]]:
        embedder = self.embedder
        assert embedder is not None  # callers check
        return io(lambda: embedder.embed_documents(list(texts)),
                  lambda: embedder.aembed_documents(list(texts)))  # fmt: skip

    def _batch(self, ops: Sequence[PutOp]) -> Effect[object]:
        backend = self.store_backend
        return io(lambda: backend.batch(ops), lambda: backend.abatch(ops))

    def _search(self, ns: tuple[str, ...], **options: Any) -> Effect[builtins.list[SearchItem]]:
        backend = self.store_backend
        options["refresh_ttl"] = False  # recall writes nothing, not even an access time
        return io(lambda: backend.search(ns, **options), lambda: backend.asearch(ns, **options))

    def _store(
        self,
        key: str,
        value: str,
        content_type: str = "text",
        tier: Tier = "working",
        *,
        ttl_s: float | None = None,
    ) -> Steps[MemoryEntry]:
        """Store (or replace) ``key`` in ``tier``; it stops being recalled after ``ttl_s``."""
        entry = self._entry(key, value, content_type, tier, ttl_s)
        yield from self._store_entries([entry])
        return entry

    def _store_entries(self, entries: Sequence[MemoryEntry]) -> Steps[None]:
        """Store several entries in one Store batch (one transaction on SqliteStore)."""
        vectors: Sequence[Sequence[float] | None] = [None] * len(entries)
        if self._needs_vectors() and entries:
            vectors = yield self._embed([e.value for e in entries])
        yield self._batch([self._put_op(e, v) for e, v in zip(entries, vectors, strict=True)])

    def _read(self, tier: Tier, ns: tuple[str, ...]) -> Steps[builtins.list[Record]]:
        records: builtins.list[Record] = []
        while True:
            items = yield self._search(ns, limit=PAGE_SIZE, offset=len(records))
            records.extend(self._records(items, tier, ns))
            if len(items) < PAGE_SIZE:
                return records

    def _recall(
        self, query: str, scope: Scope = "all", limit: int = 5
    ) -> Steps[builtins.list[MemoryHit]]:
        """Return up to ``limit`` live entries relevant to ``query``, best first. Read-only."""
        targets = self._targets(scope)
        now = now_utc()
        if self.native_index and query.strip():
            scored: builtins.list[Record] = []
            for tier, ns in targets:
                found = yield self._search(ns, query=query, limit=limit * 3)
                scored += self._records(found, tier, ns)
            return ranking.rank_scored(live(scored, now), limit)
        records: builtins.list[Record] = []
        for tier, ns in targets:
            records += yield from self._read(tier, ns)
        records = live(records, now)
        if self.embedder is not None and records:
            try:
                missing = self._missing(records)
                fresh = yield self._embed([records[i].entry.value for i in missing])
                embedder = self.embedder
                query_vector = yield io(lambda: embedder.embed_query(query),
                                        lambda: embedder.aembed_query(query))  # fmt: skip
                return ranking.rank_semantic(
                    query_vector, records, self._merge(records, missing, fresh), limit
                )
            except EMBEDDER_ERRORS as exc:
                logger.warning(
                    "embedder %s failed (%s); recalling by keyword", self.embedder_name, exc
                )
        return ranking.rank_keyword(query, records, limit)

    def _forget(self, key: str, tier: Tier) -> Steps[bool]:
        """Delete ``key`` from ``tier``; return whether it was there."""
        ns = self.namespace(tier)
        backend = self.store_backend
        found = yield io(lambda: backend.get(ns, key, refresh_ttl=False),
                         lambda: backend.aget(ns, key, refresh_ttl=False))  # fmt: skip
        if found is None:
            return False
        yield self._batch([PutOp(ns, key, None)])
        return True

    def _prune(
        self,
        *,
        older_than_s: float | None = None,
        keep_last: int | None = None,
        tier: Tier | None = None,
    ) -> Steps[int]:
        """Apply retention to this thread's working tier and the persistent tier (or ``tier``).

        Deletes expired entries, entries older than ``older_than_s`` and, per tier, all but
        the newest ``keep_last``.

        Returns:
            How many entries were deleted.
        """
        now = now_utc()
        doomed: builtins.list[Record] = []
        for t, ns in self._targets(tier or "all"):
            doomed += self._doomed((yield from self._read(t, ns)), now, older_than_s, keep_last)
        if doomed:
            yield self._batch([PutOp(r.namespace, r.entry.key, None) for r in doomed])
        return len(doomed)

    def _list(
        self, where: Tier | tuple[str, ...] = "persistent", *, include_expired: bool = False
    ) -> Steps[builtins.list[MemoryEntry]]:
        """Return the entries of a tier or memory namespace, newest first."""
        tier, ns = self._resolve(where)
        records = yield from self._read(tier, ns)
        if not include_expired:
            records = live(records, now_utc())
        return sorted((r.entry for r in records), key=lambda e: e.created_at, reverse=True)

    store = blocking(_store)
    astore = awaiting(_store)
    store_entries = blocking(_store_entries)
    astore_entries = awaiting(_store_entries)
    recall = blocking(_recall)
    arecall = awaiting(_recall)
    forget = blocking(_forget)
    aforget = awaiting(_forget)
    prune = blocking(_prune)
    aprune = awaiting(_prune)
    list = blocking(_list)  # after this line, the class body's `list` is the method
    alist = awaiting(_list)
