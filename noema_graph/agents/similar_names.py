"""Names written in another language, matched by meaning with the shipped e5 embedder.

``Química``, ``Chimie`` and ``Chemistry`` share no spelling; the multilingual e5 model
(:func:`~noema_graph.memory.embedders.default_embedder`) puts them close. An
:class:`EmbeddedNames` scores a written name against the store's names of one kind by the
cosine of their embeddings, best first; :func:`~noema_graph.agents.references.link` links
the best only when it reaches :data:`~noema_graph.agents.references.NAME_SIMILARITY` and
leads the next by :data:`~noema_graph.agents.references.NAME_LEAD`, else it refuses and
names the nearest.
"""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.embeddings import Embeddings

from noema_graph.memory.embedders import cosine


class EmbeddedNames:
    """Scores written names against store names by embedding similarity (a NameMatcher)."""

    def __init__(self, embedder: Embeddings) -> None:
        """Keep the embedder; each text is embedded once and remembered."""
        self.embedder = embedder
        self._vectors: dict[str, list[float]] = {}

    def _vector(self, text: str) -> list[float]:
        if text not in self._vectors:
            self._vectors[text] = self.embedder.embed_query(text)
        return self._vectors[text]

    def __call__(self, written: str, names: Mapping[int, str]) -> list[tuple[int, float]]:
        """Return ``(id, similarity)`` of every name, most similar first."""
        query = self._vector(written)
        scored = [(ident, cosine(query, self._vector(name))) for ident, name in names.items()]
        return sorted(scored, key=lambda item: -item[1])
