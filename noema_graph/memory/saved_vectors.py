"""Embeddings of fixed texts (labelled example requests) saved to disk, computed once.

The scope check and the intent decision compare a request with every agent's example
requests (:class:`~noema_graph.agents.intent.NearestExamples`). Embedding the 140-odd
examples one by one took 2-7 s of each new process, every time the same vectors; so the
vectors of a set of texts are saved in one file of the cache folder, keyed by the embedder's
name and the texts, and read back in a few milliseconds by the next process.

A file is a JSON header line (the key, the count, the dimensions and the SHA-256 of what
follows) then the vectors as float64 (the values the embedder returned, unrounded, so a
decision from saved vectors is the decision from fresh ones). A file whose header differs or
does not match its bytes (another embedder, other texts, truncated, damaged) is never used:
the vectors are computed again, with one warning line, and saved again where the folder
allows. A folder that cannot be written costs the warning, never a run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

logger = logging.getLogger(__name__)

FORMAT = 1
"""Version of the file's layout; a file of another version is recomputed."""
SUFFIX = ".vectors"

Embed = Callable[[str], list[float]]


def vectors_key(embedder: str, texts: Sequence[str]) -> dict[str, object]:
    """Return the fields a file of saved vectors is keyed by: embedder and texts, in order."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return {"format": FORMAT, "embedder": embedder, "texts_sha256": digest.hexdigest()}


def path_of(folder: Path, key: dict[str, object]) -> Path:
    """Return the file of ``key`` in ``folder``."""
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return folder / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}{SUFFIX}"


def saved_vectors(
    embed: Embed, embedder: str, texts: Sequence[str], folder: Path | None
) -> list[list[float]]:
    """Return ``embed(text)`` for each of ``texts``: read from ``folder``, else computed and saved.

    Args:
        embed: Embeds one text (what the caller would have called for each).
        embedder: The embedding model's name (part of the key).
        texts: The texts, in the order of the returned vectors.
        folder: Where the file is kept; None computes without saving.
    """
    if folder is None or not texts:
        return [embed(text) for text in texts]
    key = {**vectors_key(embedder, texts), "count": len(texts)}
    path = path_of(folder, key)
    vectors, problem = _read(path, key)
    if vectors is not None:
        return vectors
    if problem is not None:
        logger.warning("saved example vectors %s not used: %s; computing them again", path, problem)
    vectors = [embed(text) for text in texts]
    _write(path, key, vectors)
    return vectors


def _read(path: Path, key: dict[str, object]) -> tuple[list[list[float]] | None, str | None]:
    """Return (the vectors, None), or (None, why the file is not used; None when absent)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or type(exc).__name__})"
    head, _, body = data.partition(b"\n")
    fields = _header(head)
    problem = "its header is unreadable" if fields is None else _problem(fields, key, body)
    if fields is None or problem is not None:
        return None, problem
    dims = int(str(fields["dims"]))
    values = array("d")
    values.frombytes(body)
    flat = values.tolist()
    return [flat[i : i + dims] for i in range(0, len(flat), dims)], None


def _header(head: bytes) -> dict[str, object] | None:
    """Return the file's header fields, or None when they are not a JSON object."""
    try:
        header: object = json.loads(head)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(header, dict):
        return None
    fields = cast(dict[object, object], header)  # a parsed JSON object
    return {str(k): v for k, v in fields.items()}


def _problem(fields: dict[str, object], key: dict[str, object], body: bytes) -> str | None:
    """Return why the vectors after ``fields`` must not be used, or None when they may."""
    differing = sorted(k for k in key if fields.get(k) != key[k])
    if differing:
        return f"saved for another {', '.join(differing)}"
    dims, count = fields.get("dims"), fields.get("count")
    if not isinstance(dims, int) or not isinstance(count, int) or dims < 1:
        return "its header is unreadable"
    if len(body) != 8 * dims * count:
        return f"{len(body)} bytes of vectors where {8 * dims * count} were saved (truncated?)"
    if hashlib.sha256(body).hexdigest() != fields.get("sha256"):
        return "its bytes differ from those saved (damaged)"
    return None


def _write(path: Path, key: dict[str, object], vectors: list[list[float]]) -> None:
    dims = len(vectors[0])
    if any(len(v) != dims for v in vectors):
        return  # an embedder of varying width: nothing sound to save
    body = array("d", [x for vector in vectors for x in vector]).tobytes()
    header = {**key, "dims": dims, "sha256": hashlib.sha256(body).hexdigest()}
    partial = path.with_name(f"{path.stem}.{os.getpid()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(json.dumps(header).encode() + b"\n" + body)
        os.replace(partial, path)
    except OSError as exc:
        logger.warning(
            "example vectors not saved in %s (%s); the next run computes them again",
            path.parent,
            exc.strerror or type(exc).__name__,
        )
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
