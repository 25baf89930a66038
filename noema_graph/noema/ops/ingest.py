"""Ingestion: store a document and its chunks; read chunks back."""

from __future__ import annotations

import hashlib

from pydantic import Field

from noema_graph.noema.chunking import chunk_spans
from noema_graph.noema.clock import as_utc, to_db, utc_now
from noema_graph.noema.errors import RecordNotFound, ToolInputError
from noema_graph.noema.models import Chunk, Source
from noema_graph.noema.ops.common import OpInput, OpResult, OptionalTime
from noema_graph.noema.sql import INSERT_CHUNK, INSERT_SOURCE
from noema_graph.storage.sql.driver import Op, execute_many, fetch_all, insert


class IngestTextInput(OpInput):
    """Arguments of :func:`ingest_text`."""

    title: str = Field(min_length=1, max_length=300, description="Name of the document.")
    text: str = Field(min_length=1, max_length=2_000_000, description="The document text.")
    chunk_size: int = Field(default=1200, ge=100, le=20_000, description="Max chars per chunk.")
    overlap: int = Field(default=150, ge=0, description="Chars repeated between chunks.")
    now: OptionalTime = Field(default=None, description="Defaults to now.")


class IngestResult(OpResult):
    """The stored source and its chunk ids, in order."""

    source_id: int
    chunk_ids: list[int]


def ingest_text(params: IngestTextInput) -> Op[IngestResult]:
    """Store ``text`` as a source split into overlapping chunks on natural boundaries."""
    if not params.text.strip():
        raise ToolInputError("text", "is blank", fix="pass the document's text")
    if params.overlap >= params.chunk_size:
        raise ToolInputError(
            "overlap",
            f"{params.overlap} is not smaller than chunk_size {params.chunk_size}",
            fix="use an overlap of about 10-20% of chunk_size",
        )
    spans = chunk_spans(params.text, params.chunk_size, params.overlap)
    digest = hashlib.sha256(params.text.encode()).hexdigest()
    stamp = to_db(as_utc(params.now) if params.now else utc_now())
    source_id = yield from insert(
        INSERT_SOURCE,
        (params.title.strip(), digest, len(params.text), params.chunk_size, params.overlap, stamp),
    )
    yield from execute_many(
        INSERT_CHUNK,
        [(source_id, i, s.start, s.end, params.text[s.start : s.end]) for i, s in enumerate(spans)],
    )
    rows = yield from fetch_all(
        "SELECT id FROM chunks WHERE source_id = ? ORDER BY position", (source_id,)
    )
    return IngestResult(source_id=source_id, chunk_ids=[int(r["id"]) for r in rows])


class GetChunksInput(OpInput):
    """Arguments of :func:`get_chunks`."""

    source_id: int = Field(description="Id returned by ingest_text.")


class SourceChunks(OpResult):
    """A source and its chunks in order."""

    source: Source
    chunks: list[Chunk]


def get_chunks(params: GetChunksInput) -> Op[SourceChunks]:
    """Return a source and all its chunks."""
    rows = yield from fetch_all("SELECT * FROM sources WHERE id = ?", (params.source_id,))
    if not rows:
        raise RecordNotFound(
            "source_id", f"no source with id {params.source_id}", fix="use an ingest_text id"
        )
    chunks = yield from fetch_all(
        "SELECT * FROM chunks WHERE source_id = ? ORDER BY position", (params.source_id,)
    )
    return SourceChunks(
        source=Source.model_validate(dict(rows[0])),
        chunks=[Chunk.model_validate(dict(r)) for r in chunks],
    )
