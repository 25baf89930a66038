"""A request that introduces a document and gives no text: refused before anything is stored.

A write tool that stores a document takes it as a required text argument whose declared
length admits more than any name or reason (:data:`DOCUMENT_CHARS`: ``ingest_text``'s
``text``). The document must come from the
request: the words after the colon that introduces it ("... titled 'Glaciers': TEXT"), its
quotes removed. When that part is empty ("titled 'Glaciers':", ``with this text: "   "``),
the request is refused (``invalid_input``) whatever else it asks: there is nothing to store,
and a small model would make a text up. A request without such a colon is left to the
agent's reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from noema_graph.grounding.arguments import references
from noema_graph.grounding.reading import RequestReader, writes
from noema_graph.grounding.words import introduced_text
from noema_graph.models.grammar import tool_args_schema
from noema_graph.state.models import Refusal, RequestReading

DOCUMENT_CHARS = 10_000
"""A required text argument that admits more characters than this takes a document."""


def _takes_document(schema: Mapping[str, Any]) -> list[str]:
    """Return the required text arguments of ``schema`` long enough to hold a document."""
    refs = references(schema)
    found: list[str] = []
    for name in schema.get("required") or ():
        sub = (schema.get("properties") or {}).get(name)
        if not isinstance(sub, Mapping) or name in refs or sub.get("type") != "string":
            continue
        if int(sub.get("maxLength") or 0) > DOCUMENT_CHARS:
            found.append(str(name))
    return found


def document_tools(tools: Sequence[BaseTool]) -> list[str]:
    """Return the names of the write tools among ``tools`` that store a document."""
    return [t.name for t in tools if writes(t) and _takes_document(tool_args_schema(t))]


def empty_document(request: str, tools: Sequence[str]) -> Refusal | None:
    """Return the refusal of a request that introduces a document with no text, else None."""
    if introduced_text(request) != "":
        return None
    return Refusal(
        code="invalid_input",
        message="The note has no text: nothing was stored. Write its text after the colon "
        f"({' or '.join(tools)} stores only what the request gives).",
    )


def document_checked(reader: RequestReader, tools: Sequence[str]) -> RequestReader:
    """Return ``reader`` behind the empty-document check of the document ``tools``."""

    def read(request: str) -> RequestReading:
        refusal = empty_document(request, tools)
        return RequestReading(refusal=refusal) if refusal is not None else reader(request)

    return read
