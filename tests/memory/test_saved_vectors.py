"""Saved embeddings of fixed texts: computed once, read back, never used when stale or damaged."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from noema_graph.agents.intent import NearestExamples
from noema_graph.memory.saved_vectors import SUFFIX, saved_vectors


class CountingEmbed:
    """Embeds a text as [len, first letter code, 0.1]; counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, text: str) -> list[float]:
        self.calls.append(text)
        return [float(len(text)), float(ord(text[0])), 0.1]


TEXTS = ["how do I add a card", "what is my retention", "delete that deck"]


def test_vectors_are_computed_once_then_read_back(tmp_path: Path) -> None:
    first, second = CountingEmbed(), CountingEmbed()
    computed = saved_vectors(first, "e5", TEXTS, tmp_path)
    assert first.calls == TEXTS
    assert saved_vectors(second, "e5", TEXTS, tmp_path) == computed  # exact floats
    assert second.calls == []


@pytest.mark.parametrize(
    ("embedder", "texts"),
    [("another-model", TEXTS), ("e5", [*TEXTS, "one more"]), ("e5", TEXTS[::-1])],
)
def test_another_embedder_or_other_texts_never_read_the_file(
    tmp_path: Path, embedder: str, texts: list[str]
) -> None:
    saved_vectors(CountingEmbed(), "e5", TEXTS, tmp_path)
    again = CountingEmbed()
    assert saved_vectors(again, embedder, texts, tmp_path) == [CountingEmbed()(t) for t in texts]
    assert again.calls == texts


def _only_file(folder: Path) -> Path:
    (path,) = folder.glob(f"*{SUFFIX}")
    return path


def _truncated(data: bytes) -> bytes:
    return data[:-8]


def _flipped(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


def _no_header(data: bytes) -> bytes:
    return b"not json\n" + data


def _old_format(data: bytes) -> bytes:
    return data.replace(b'"format": 1', b'"format": 0')


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (_truncated, "truncated"),
        (_flipped, "damaged"),
        (_no_header, "header is unreadable"),
        (_old_format, "another format"),
    ],
)
def test_a_damaged_file_is_recomputed_with_one_warning_and_saved_again(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: Callable[[bytes], bytes],
    why: str,
) -> None:
    expected = saved_vectors(CountingEmbed(), "e5", TEXTS, tmp_path)
    path = _only_file(tmp_path)
    path.write_bytes(damage(path.read_bytes()))
    again = CountingEmbed()
    with caplog.at_level(logging.WARNING):
        assert saved_vectors(again, "e5", TEXTS, tmp_path) == expected
    assert again.calls == TEXTS
    assert [r.getMessage() for r in caplog.records if why in r.getMessage()]
    third = CountingEmbed()
    assert saved_vectors(third, "e5", TEXTS, tmp_path) == expected
    assert third.calls == []  # rebuilt


def test_a_read_only_folder_costs_a_warning_not_the_vectors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if os.geteuid() == 0:
        blocked = tmp_path / "file"
        blocked.write_text("a file where the folder should be")
        folder = blocked / "vectors"
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
    with caplog.at_level(logging.WARNING):
        assert saved_vectors(CountingEmbed(), "e5", TEXTS, folder) == [
            CountingEmbed()(t) for t in TEXTS
        ]
    assert any("not saved" in r.getMessage() for r in caplog.records)


def test_no_folder_computes_every_time(tmp_path: Path) -> None:
    embed = CountingEmbed()
    saved_vectors(embed, "e5", TEXTS, None)
    saved_vectors(embed, "e5", TEXTS, None)
    assert embed.calls == TEXTS * 2
    assert list(tmp_path.iterdir()) == []


class _Embeddings(Embeddings):
    """An embedder counting its queries."""

    name = "fake"

    def __init__(self) -> None:
        self.queries = 0

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return [float(len(text)), 1.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


def test_nearest_examples_score_the_same_from_saved_vectors(tmp_path: Path) -> None:
    labels = {"a": ["short one", "tiny"], "b": ["a much longer example request", "tiny"]}
    fresh, later = _Embeddings(), _Embeddings()
    first = NearestExamples(labels, fresh, folder=tmp_path).scores("some request here")
    second = NearestExamples(labels, later, folder=tmp_path).scores("some request here")
    assert first == second
    assert fresh.queries == 4  # three distinct examples and the request
    assert later.queries == 1  # only the request
