from __future__ import annotations

import pytest

from noema_graph.noema.chunking import chunk_spans
from noema_graph.noema.errors import RecordNotFound, ToolInputError
from noema_graph.noema.store import LearningStore


def test_link_concepts_creates_and_is_idempotent(store: LearningStore) -> None:
    first = store.call("link_concepts", source="Atoms", target="Molecules", kind="prerequisite_of")
    again = store.call("link_concepts", source="atoms", target="Molecules", kind="prerequisite_of")
    assert first.created and not again.created
    assert first.link == again.link
    assert (first.link.source, first.link.target) == ("Atoms", "Molecules")


def test_link_concepts_refuses_self_links_and_cycles(store: LearningStore) -> None:
    store.call("link_concepts", source="A", target="B", kind="prerequisite_of")
    store.call("link_concepts", source="B", target="C", kind="prerequisite_of")
    with pytest.raises(ToolInputError) as info:
        store.call("link_concepts", source="C", target="A", kind="prerequisite_of")
    assert info.value.field == "kind" and "cycle" in str(info.value)
    assert store.call("link_concepts", source="C", target="A", kind="related_to").created
    with pytest.raises(ToolInputError) as self_link:
        store.call("link_concepts", source="A", target=" a ", kind="related_to")
    assert self_link.value.field == "target"
    with pytest.raises(ToolInputError) as bad_kind:
        store.call("link_concepts", source="A", target="B", kind="causes")
    assert bad_kind.value.field == "kind"


def test_concept_graph_neighbourhood(store: LearningStore) -> None:
    for source, target in [("A", "B"), ("B", "C"), ("C", "D")]:
        store.call("link_concepts", source=source, target=target, kind="part_of")
    whole = store.call("get_concept_graph")
    assert [n.concept.name for n in whole.nodes] == ["A", "B", "C", "D"] and len(whole.links) == 3
    near = store.call("get_concept_graph", concept="B", depth=1)
    assert {n.concept.name for n in near.nodes} == {"A", "B", "C"}
    assert {(link.source, link.target) for link in near.links} == {("A", "B"), ("B", "C")}
    assert [
        n.concept.name for n in store.call("get_concept_graph", concept="B", depth=0).nodes
    ] == ["B"]
    with pytest.raises(RecordNotFound) as info:
        store.call("get_concept_graph", concept="Z")
    assert info.value.field == "concept"


def test_concept_graph_on_demo(demo_store: LearningStore) -> None:
    graph = demo_store.call("get_concept_graph", concept="Periodic table", depth=1)
    names = {n.concept.name for n in graph.nodes}
    assert {"Halogens", "Noble gases", "Atomic number"} <= names
    assert next(n for n in graph.nodes if n.concept.name == "Halogens").card_count > 0


TEXT = (
    "First paragraph, sentence one. Sentence two is here.\n\n"
    "Second paragraph is a good deal longer. It has three sentences. The last one ends it.\n\n"
    "Third."
)


def test_chunk_spans_respect_boundaries_size_and_overlap() -> None:
    spans = chunk_spans(TEXT, chunk_size=70, overlap=40)
    texts = [TEXT[s.start : s.end] for s in spans]
    assert all(s.size <= 70 for s in spans)
    assert all(t[0].isupper() and t.rstrip()[-1] in ".!?" for t in texts)
    assert texts[0] == "First paragraph, sentence one. Sentence two is here."
    # Overlap: a short trailing sentence is repeated at the start of the next chunk.
    assert texts[2].startswith("It has three sentences.")
    assert texts[1].endswith("It has three sentences.")
    assert spans[-1].end == len(TEXT)
    covered = {i for s in spans for i in range(s.start, s.end)}
    assert all(i in covered for i, ch in enumerate(TEXT) if not ch.isspace())


def test_chunk_spans_split_overlong_words_and_keep_small_text_whole() -> None:
    assert [(s.start, s.end) for s in chunk_spans("Tiny text.", 100, 10)] == [(0, 10)]
    spans = chunk_spans("x" * 250, 100, 10)
    assert [s.size for s in spans] == [100, 100, 50]


def test_ingest_text_and_get_chunks(store: LearningStore) -> None:
    result = store.call("ingest_text", title="Notes", text=TEXT, chunk_size=100, overlap=40)
    assert len(result.chunk_ids) >= 2
    got = store.call("get_chunks", source_id=result.source_id)
    assert [c.id for c in got.chunks] == result.chunk_ids
    assert got.source.title == "Notes" and got.source.char_count == len(TEXT)
    assert all(TEXT[c.start_char : c.end_char] == c.text for c in got.chunks)
    with pytest.raises(ToolInputError) as info:
        store.call("ingest_text", title="x", text="abc", chunk_size=100, overlap=100)
    assert info.value.field == "overlap"
    with pytest.raises(RecordNotFound) as missing:
        store.call("get_chunks", source_id=99)
    assert missing.value.field == "source_id"
