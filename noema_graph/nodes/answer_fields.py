"""The fields of a tool result the answer prompt shows: an agent's ``answer_fields``.

The answer prompt's observations are what a run processes after its saved prompt prefix,
and on the embedded model its time is prompt processing. So an agent declares, per tool,
the fields of that tool's result its answer step reads (``answer_fields`` in the catalog,
dotted paths into the result's data, lists walked as for ``secret_fields``:
``{"get_review_history": ["reviews.rating"]}``); every other field stays out of the
prompt. A tool declared with no fields is left out of the answer's observations; a tool
not declared shows its whole result. ``answer_rows`` caps, per tool, the entries of each
list the prompt shows (``{"get_review_history": 5}``: the first five reviews). Grounding
(sources, choices, secrets) reads the run's full results, never this view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def field_problem(path: str) -> str | None:
    """Return why ``path`` is not a dotted field path (None when it is one)."""
    parts = path.split(".")
    if not all(part.strip() and part == part.strip() for part in parts):
        return f"{path!r} is not a dotted field path like 'reviews.rating'"
    return None


def _shown(value: Any, paths: Sequence[Sequence[str]] | None, rows: int | None) -> Any:
    """Return ``value`` keeping only ``paths`` (each a list of keys; lists walked).

    ``paths`` None keeps every field; ``rows`` keeps that many entries of each list.
    """
    if isinstance(value, list):
        return [_shown(item, paths, rows) for item in value[:rows]]
    if not isinstance(value, Mapping):
        return value
    kept: dict[str, Any] = {}
    for key, item in value.items():
        below = None if paths is None else [path[1:] for path in paths if path[0] == key]
        if below is not None and not below:
            continue
        whole = below is None or any(not path for path in below)
        kept[str(key)] = _shown(item, None if whole else below, rows)
    return kept


def shown_fields(data: Any, fields: Sequence[str] | None, rows: int | None = None) -> Any:
    """Return the part of a tool result's ``data`` that ``fields`` name, in its own order.

    ``shown_fields({"reviews": [{"id": 7, "rating": 3}]}, ["reviews.rating"])`` is
    ``{"reviews": [{"rating": 3}]}``; a named field the data lacks is skipped. ``fields``
    None keeps every field; ``rows`` keeps only the first ``rows`` entries of each list.
    """
    paths = None if fields is None else [field.split(".") for field in fields]
    return _shown(data, paths, rows)
